"""URL normalisation and the crawler's trap rules.

courlan normalises (lower-case scheme and host, default ports removed, query parameters sorted, fragment
dropped, tracking parameters removed); its `check_url` refuses IP-literal hosts, which the loopback test
web and many real sites use, so the checks below are ours: http/https only, a host, a bounded length and
depth, no path segment repeated three times or more, no calendar-like paging, no session ids.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

from courlan import normalize_url

SESSION_PARAMETERS = frozenset({"jsessionid", "phpsessid", "sid", "sessionid", "session_id", "aspsessionid",
                                "cfid", "cftoken", "zenid", "oscsid"})
CALENDAR_PATH = re.compile(r"(?:^|/)(?:19|20)\d\d/(?:0?[1-9]|1[0-2])(?:/(?:0?[1-9]|[12]\d|3[01]))?(?:/|$)")
CALENDAR_QUERY = re.compile(r"^(?:year|month|day|date|cal|calendar)$", re.IGNORECASE)


def normalise(url: str, base: str | None = None) -> str | None:
    """The canonical form of `url` (resolved against `base`), or None when it is not an http(s) URL."""
    try:
        absolute = urljoin(base, url.strip()) if base else url.strip()
        parts = urlsplit(absolute)
    except ValueError:
        return None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        return None
    path = parts.path.split(";", 1)[0] or "/"  # ;jsessionid=... path parameters
    query = urlencode([(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
                       if k.lower() not in SESSION_PARAMETERS])
    try:
        return normalize_url(urlunsplit((parts.scheme, parts.netloc, path, query, "")))
    except ValueError:
        return None


def host_of(url: str) -> str:
    """The host as the crawler paces it: the netloc with its port (lower case)."""
    return urlsplit(url).netloc.lower()


def trap(url: str, depth: int, max_depth: int, max_length: int) -> str | None:
    """Why `url` is not to be crawled (a one-line reason), or None when it may be."""
    if len(url) > max_length:
        return f"URL longer than --max-url-length {max_length}"
    if depth > max_depth:
        return f"deeper than --max-depth {max_depth}"
    parts = urlsplit(url)
    segments = [segment for segment in parts.path.split("/") if segment]
    for segment in set(segments):
        if segments.count(segment) >= 3:
            return f"path segment {segment!r} repeated {segments.count(segment)} times"
    if CALENDAR_PATH.search(parts.path):
        return "calendar-like path"
    if any(CALENDAR_QUERY.match(key) for key, _ in parse_qsl(parts.query)):
        return "calendar-like query"
    return None
