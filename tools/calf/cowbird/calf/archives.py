"""Pages as they were: captures of a URL in web archives, nearest the text's crawl date first.

Each archive (``cowbird.core.archives.ArchiveSettings``) is asked in its own protocol:

- **CDX** (Wayback-style: the Internet Archive, pywb, OpenWayback): ``cdx?url=…&output=json&from=…&to=…``
  lists captures (the Internet Archive's JSON table, or pywb's and OpenWayback's JSON lines, or the
  plain space-separated CDX lines), read row by row: a row that cannot be read (a line cut off, a
  broken table row) is skipped and counted, the others kept, and an answer with one is not cached
  (asked again next time); ``replay<timestamp>id_/<url>`` returns a capture's original
  bytes — never the rewritten page with the archive's toolbar, which is never asked for.
- **Memento** (RFC 7089): a TimeMap (link format) lists mementos with their datetimes (a paged
  one links to its other pages, ``rel="timemap"`` with ``from``/``until``: those reaching into the
  window around the crawl date are read too, ``TIMEMAP_PAGES`` at most); a TimeGate
  answers ``Accept-Datetime`` with the memento nearest it. A memento's original bytes are asked
  with ``raw`` (``id_``) after its timestamp, as Wayback-style archives serve them.
- **Common Crawl**: ``collinfo.json`` lists the crawls (each with its CDX API and dates); a crawl's
  index gives each capture's WARC file, offset and length; one range request returns that record
  (a gzip member), read with warcio (its HTTP payload de-chunked and decompressed).

No new way in: requests go only to the archive's own places (``scopes``): each endpoint's scheme,
host and port, under its path prefix (the CDX API: its path), and ``hosts``. Every URL an answer
leads to (a redirect, a memento, a crawl's API, a WARC file name, a replay URL built from a CDX
row's ``original``) is compared with them, ``..`` and ``%2e%2e`` resolved, and one outside is
refused (counted in ``refused``, reported as the archive's failure), never asked. The page URL from
the export is only ever a lookup key there. A capture's redirect is followed when
it stays in the archive (a Wayback-style archive redirects to its nearest timestamp, or a captured
3xx to the capture of its target); in Common Crawl, a captured redirect's target is looked up in
the same crawl. Politeness: per archive at most ``rate`` requests a second and ``concurrency`` at
once; on 429 and 503 its ``Retry-After`` holds back every request to that archive. Look-ups (and
captures' pages) are cached on disk, so a resumed run never asks an archive twice for one URL.

Captures are tried after the text's date first (nearest first: a page's text is there from its
last modification on, and a capture before that date is the page before it), then those before it;
a capture whose digest one already tried has is the same bytes, and not tried again. ``captures``
of them first, and ``FURTHER_CAPTURES`` more when those do not hold the line, at the archive's rate.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import hashlib
import io
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote, urljoin, urlsplit

import httpx
from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from cowbird.calf.fetching import MAX_BYTES, TEXT_TYPES, USER_AGENT, Again, FetchError, Page, decode, with_retries
from cowbird.core.archives import ArchiveSettings, parse_date

T = TypeVar("T")
REDIRECTS = 5
"""Redirects followed inside an archive for one capture."""
PACE_MARGIN = 0.05
"""Seconds added between two requests to one archive beyond 1 / rate (the transport's jitter)."""
TIMEMAP_PAGES = 10
"""Pages of a paged TimeMap read for one look-up at most."""
FURTHER_CAPTURES = 8
"""Captures of a URL tried beyond an archive's ``captures`` when those do not hold the line (the look-up
lists them anyway; each costs one request, paced at the archive's ``rate``)."""


class ArchiveError(FetchError):
    """An archive that could not answer (or may not be asked): why, in a few words."""


@dataclass(frozen=True)
class Capture:
    """One capture of a page: when, the URL that returns its original bytes (for Common Crawl: the
    WARC file, with the record's byte range as ``#bytes=FIRST-LAST``), and what was archived."""

    archive: str
    when: dt.datetime | None
    url: str
    original: str
    warc: tuple[str, int, int] | None = None  # Common Crawl: file URL, offset, length
    digest: str = ""  # the CDX row's digest of the captured bytes ("": not given)

    @property
    def date(self) -> str:
        """The capture's date and time, ISO 8601 (UTC)."""
        return "" if self.when is None else self.when.strftime("%Y-%m-%dT%H:%M:%SZ")

    def as_json(self) -> dict[str, Any]:
        return {"when": self.date, "url": self.url, "original": self.original,
                "warc": list(self.warc) if self.warc else None, "digest": self.digest}

    @classmethod
    def of_json(cls, archive: str, data: dict[str, Any]) -> Capture:
        warc = data.get("warc")
        return cls(archive, parse_date(data["when"]) if data.get("when") else None, data["url"], data["original"],
                   (str(warc[0]), int(warc[1]), int(warc[2])) if warc else None, str(data.get("digest") or ""))


def timestamp14(when: dt.datetime) -> str:
    return when.astimezone(dt.UTC).strftime("%Y%m%d%H%M%S")


def nearest_first(captures: list[Capture], when: dt.datetime | None, window: dt.timedelta,
                  limit: int) -> list[Capture]:
    """The captures within ``window`` of ``when`` in the order to try them, at most ``limit``: those at
    or after ``when`` nearest first — the text is on its page from its date (its last modification,
    its crawl) on, and a capture before it is the page as it was before —, then those before it,
    nearest first; without a date, the oldest first (closest to the time the corpus's pages were
    crawled, as far as is known). A capture whose digest an earlier one has (the same bytes) is left
    out."""
    distinct = list({c.url: c for c in reversed(captures)}.values())[::-1]  # the first of each URL
    dated = [(c.when, c) for c in distinct if c.when is not None]
    undated = [c for c in distinct if c.when is None]
    if when is None:
        ordered = [c for _, c in sorted(dated, key=lambda pair: pair[0])]
    else:
        after = sorted(((moment, c) for moment, c in dated if when <= moment <= when + window), key=lambda p: p[0])
        before = sorted(((moment, c) for moment, c in dated if when - window <= moment < when),
                        key=lambda p: p[0], reverse=True)
        ordered = [c for _, c in after + before]
    seen: set[str] = set()
    kept: list[Capture] = []
    for capture in ordered + undated:
        if capture.digest and capture.digest in seen:
            continue
        seen.add(capture.digest)
        kept.append(capture)
    return kept[:limit]


# ---------------------------------------------------------------------------------------- parsing


def parse_cdx(text: str) -> list[dict[str, str]]:
    """A CDX answer's rows as dicts (``read_cdx``'s, its unreadable rows left out)."""
    return read_cdx(text)[0]


_PLAIN_CDX = ("urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length")
_DECODER = json.JSONDecoder()


def read_cdx(text: str) -> tuple[list[dict[str, str]], int]:
    """A CDX answer's rows as dicts, and how many of its rows could not be read (skipped): the
    Internet Archive's JSON table (a header row, then rows — read row by row, so a table cut off or
    with a broken row keeps the rows before and after it), JSON lines (pywb, OpenWayback, Common
    Crawl), or plain CDX lines (``urlkey timestamp original mimetype statuscode digest length``),
    each line on its own."""
    body = text.strip()
    if not body:
        return [], 0
    if body.startswith("["):
        return _cdx_table(body)
    rows: list[dict[str, str]] = []
    bad = 0
    for line in body.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                bad += 1
                continue
            if isinstance(value, dict):
                rows.append({str(k): str(v) for k, v in value.items()})
            else:
                bad += 1
        elif line:
            parts = line.split()
            if len(parts) >= 5 and parts[1].isdigit():
                rows.append(dict(zip(_PLAIN_CDX, parts, strict=False)))
            else:
                bad += 1
    return rows, bad


def _cdx_table(body: str) -> tuple[list[dict[str, str]], int]:
    """The rows of a JSON table (``[["urlkey", "timestamp", …], [...], …]``), one array after another:
    an array that cannot be read is skipped (counted) up to the next one, the rest kept."""
    at, rows, bad = 1, [], 0
    header: list[str] | None = None
    while at < len(body):
        while at < len(body) and body[at] in " \t\r\n,":
            at += 1
        if at >= len(body) or body[at] == "]":
            break
        try:
            value, end = _DECODER.raw_decode(body, at)
        except ValueError:
            bad += 1
            following = body.find("[", at + 1)
            if following < 0:
                break
            at = following
            continue
        at = end
        if not isinstance(value, list):
            bad += 1
        elif header is None:
            header = [str(h) for h in value]
        else:
            rows.append({k: str(v) for k, v in zip(header, value, strict=False)})
    return rows, bad


def _status(row: dict[str, str]) -> str:
    return row.get("statuscode") or row.get("status") or "-"


def _useful(row: dict[str, str]) -> bool:
    """A capture that may hold the page: 2xx, 3xx (followed inside the archive), or a revisit (``-``)."""
    status = _status(row)
    return status == "-" or status[:1] in ("2", "3")


_LINK = re.compile(r'<([^>]*)>((?:\s*;\s*[A-Za-z-]+\s*=\s*(?:"[^"]*"|[^;,\s]*))*)')
_PARAM = re.compile(r'([A-Za-z-]+)\s*=\s*(?:"([^"]*)"|([^;,\s]*))')


def _links(text: str) -> Iterator[tuple[str, dict[str, str]]]:
    """A link-format document's links: (URI, parameters by lower-case name)."""
    for link in _LINK.finditer(text):
        yield link.group(1).strip(), {m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3)
                                      for m in _PARAM.finditer(link.group(2))}


def parse_timemap(text: str) -> list[tuple[str, dt.datetime | None]]:
    """A link-format TimeMap's mementos: (URI-M, datetime)."""
    return [(uri, parse_date(params["datetime"]) if params.get("datetime") else None)
            for uri, params in _links(text) if "memento" in (params.get("rel") or "").split()]


def timemap_pages(text: str) -> list[tuple[str, dt.datetime | None, dt.datetime | None]]:
    """The other pages a paged TimeMap links to (RFC 7089, 4.3: ``rel="timemap"``, their mementos
    ``from`` … ``until``): (URI-T, from, until), a bound None where the link gives none."""
    pages = []
    for uri, params in _links(text):
        rels = (params.get("rel") or "").split()
        if "timemap" in rels and "self" not in rels:
            pages.append((uri, parse_date(params["from"]) if params.get("from") else None,
                          parse_date(params["until"]) if params.get("until") else None))
    return pages


_WAYBACK_STAMP = re.compile(r"/(\d{14})(?:[a-z]{2}_)?/")


def raw_memento(uri_m: str, flag: str) -> str:
    """A Wayback-style memento URL asking for the capture's original bytes (``/20130517104233id_/``);
    a memento URL without a timestamp in its path is asked as it is."""
    if not flag:
        return uri_m
    return _WAYBACK_STAMP.sub(lambda m: f"/{m.group(1)}{flag}/", uri_m, count=1)


def stamp_in(url: str) -> dt.datetime | None:
    found = _WAYBACK_STAMP.search(url)
    return parse_date(found.group(1)) if found else None


def _retry_after(value: str | None) -> float | None:
    """Seconds a ``Retry-After`` asks for (a number or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


def _crawl_period(entry: dict[str, Any]) -> tuple[dt.datetime, dt.datetime] | None:
    """A Common Crawl crawl's dates: its ``from`` and ``to``, else its id's year and week
    (``CC-MAIN-2013-20``: week 20 of 2013)."""
    start, end = parse_date(str(entry.get("from") or "")), parse_date(str(entry.get("to") or ""))
    if start and end:
        return start, end
    found = re.search(r"(\d{4})-(\d{2})$", str(entry.get("id", "")))
    if not found:
        return None
    year, week = int(found.group(1)), int(found.group(2))
    try:
        monday = dt.datetime.fromisocalendar(year, max(1, min(week, 52)), 1).replace(tzinfo=dt.UTC)
    except ValueError:
        return None
    return monday, monday + dt.timedelta(days=14)


# ---------------------------------------------------------------------------------------- where an archive is


@dataclass(frozen=True)
class Scope:
    """One place an archive's requests may go: a scheme, host and port, and a path prefix (ending in
    ``/``), or one exact path (a CDX API: ``/cdx/search/cdx``, its query free)."""

    scheme: str
    host: str
    port: int
    path: str
    exact: bool = False

    def holds(self, scheme: str, host: str, port: int, paths: list[str]) -> bool:
        if (scheme, host, port) != (self.scheme, self.host, self.port):
            return False
        if self.exact:
            return all(path == self.path for path in paths)
        return all(path.startswith(self.path) for path in paths)

    def __str__(self) -> str:
        return f"{self.scheme}://{self.host}:{self.port}{self.path}"


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _remove_dots(path: str) -> str:
    """A path's dot segments resolved (RFC 3986, 5.2.4), as a server or httpx does: ``/a/b/../c`` is ``/a/c``."""
    segments = path.split("/")[1:] if path.startswith("/") else path.split("/")
    kept: list[str] = []
    for segment in segments:
        if segment == "..":
            if kept:
                kept.pop()
        elif segment != ".":
            kept.append(segment)
    if segments and segments[-1] in (".", ".."):
        kept.append("")  # "/a/b/.." is the folder "/a/"
    return "/" + "/".join(kept)


def readings(path: str) -> list[str]:
    """Every path a server may take ``path`` for, dot segments resolved: as written; percent-decoded
    (``%2e%2e``, ``%2f``, decoded twice over too); with backslashes as slashes; and with runs of
    slashes merged (as nginx does) — a URL is inside an archive only when it is in every reading."""
    decoded = path
    for _ in range(3):
        again = unquote(decoded)
        if again == decoded:
            break
        decoded = again
    variants = {path, decoded, path.replace("\\", "/"), decoded.replace("\\", "/")}
    variants |= {re.sub(r"/{2,}", "/", variant) for variant in list(variants)}
    return sorted({_remove_dots(variant or "/") for variant in variants})


def _origin(url: str) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an http(s) URL, the port its default if unwritten; None if it has none."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port if port is not None else _DEFAULT_PORTS[scheme]


def _scope(url: str, exact: bool = False) -> Scope:
    origin = _origin(url)
    assert origin is not None, url  # the settings checked it is an http(s) address
    path = _remove_dots(urlsplit(url).path or "/")
    if not exact and not path.endswith("/"):
        path += "/"
    return Scope(*origin, path, exact)


def _mementos(settings: ArchiveSettings) -> str:
    """Where a Memento archive's own mementos are: ``replay`` if given; else its TimeGate (a Wayback
    TimeGate answers under the mementos' own prefix); else what comes before the TimeMap's ``timemap``
    segment (``https://web.archive.org/web/timemap/link/``: ``…/web/``), else the TimeMap's folder."""
    if settings.replay:
        return settings.replay
    if settings.timegate:
        return settings.timegate
    parts = urlsplit(settings.timemap)
    segments = parts.path.split("/")
    cut = segments.index("timemap") if "timemap" in segments else len(segments) - 2
    return parts._replace(path="/".join(segments[:max(cut, 1)]) + "/", query="", fragment="").geturl()


def scopes(settings: ArchiveSettings) -> tuple[Scope, ...]:
    """Where an archive's requests may go: each endpoint's scheme, host and port, under its path (the
    CDX API: that path itself); a Memento archive's mementos (``_mementos``); and ``hosts``: a URL
    prefix (``https://web.archive.org/web/``) as it is, a bare host name on its default ports."""
    found = [_scope(url) for url in (settings.replay, settings.timemap, settings.timegate, settings.index,
                                     settings.data) if url]
    if settings.cdx:
        found.append(_scope(settings.cdx, exact=True))
    if settings.kind == "memento":
        found.append(_scope(_mementos(settings)))
    for host in settings.hosts:
        if "://" in host:
            if _origin(host) is None:
                raise ArchiveError(f"{settings.name}: hosts entry {host!r} is not an http(s) address")
            found.append(_scope(host))
        else:
            name = host.strip().lower().strip("[]")
            found += [Scope("http", name, 80, "/"), Scope("https", name, 443, "/")]
    return tuple(dict.fromkeys(found))


def outside(url: str, within: tuple[Scope, ...]) -> str | None:
    """Why ``url`` is not one of an archive's places (another scheme, host or port; a path outside its
    prefixes, ``..`` and ``%2e%2e`` resolved); None when it is."""
    origin = _origin(url)
    if origin is None:
        return "not an http(s) address"
    paths = readings(urlsplit(url).path or "/")
    if any(scope.holds(*origin, paths) for scope in within):
        return None
    if not any(origin == (scope.scheme, scope.host, scope.port) for scope in within):
        return f"{origin[0]}://{origin[1]}:{origin[2]} is not one of its addresses"
    return f"the path {paths[-1] if len(paths) == 1 else ' or '.join(paths)} is outside its prefixes"


# ---------------------------------------------------------------------------------------- the cache


@dataclass
class ArchiveCache:
    """Look-ups (a URL's captures) and captures' pages, on disk: JSON files named by the key's hash,
    kept for ``max_age`` seconds (None: for good — a capture does not change)."""

    folder: Path
    max_age: float | None = None

    def _path(self, kind: str, key: str) -> Path:
        return self.folder / kind / f"{hashlib.sha256(key.encode('utf-8')).hexdigest()}.json"

    def get(self, kind: str, key: str) -> Any:
        path = self._path(kind, key)
        try:
            if self.max_age is not None and time.time() - path.stat().st_mtime > self.max_age:
                return None
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def put(self, kind: str, key: str, value: Any) -> None:
        path = self._path(kind, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{id(value)}.tmp")
        temporary.write_text(json.dumps(value), encoding="utf-8")
        temporary.replace(path)


# ---------------------------------------------------------------------------------------- an archive


@dataclass
class Archive:
    """One configured archive, asked politely, its answers cached."""

    settings: ArchiveSettings
    client: httpx.AsyncClient
    cache: ArchiveCache | None = None
    asked: int = 0  # requests sent to the archive
    refused: int = 0  # URLs its answers led to outside it (``scopes``), not asked
    unreadable: int = 0  # CDX rows its answers had that could not be read (skipped), in the whole run
    unreadable_in: dict[str, int] = field(default_factory=dict)  # and per URL looked up (its latest look-up)
    _gate: asyncio.Semaphore = field(init=False)
    _pace: asyncio.Lock = field(default_factory=asyncio.Lock)
    _next: float = 0.0
    _inflight: dict[str, asyncio.Future[Any]] = field(default_factory=dict)
    _collections: list[tuple[str, tuple[dt.datetime, dt.datetime] | None]] | None = None

    def __post_init__(self) -> None:
        self._gate = asyncio.Semaphore(self.settings.concurrency)
        self.scopes = scopes(self.settings)

    @property
    def name(self) -> str:
        return self.settings.name

    # -- requests

    def _check(self, url: str) -> None:
        """Refuse (and count) a URL outside the archive's scheme, host, port and path prefixes."""
        why = outside(url, self.scopes)
        if why is not None:
            self.refused += 1
            raise ArchiveError(f"{self.name}: refused {url}, outside the archive ({why}; it is "
                               f"{', '.join(str(scope) for scope in self.scopes)})")

    async def _turn(self) -> None:
        """Wait for this archive's next request slot: ``rate`` a second at most, as the archive sees
        them arrive (the slots are ``PACE_MARGIN`` s further apart: a request whose connection takes a
        moment longer must not arrive closer to the next than 1 / rate)."""
        async with self._pace:
            while (now := time.monotonic()) < self._next:  # again after each sleep: a Retry-After may have
                await asyncio.sleep(self._next - now)  # pushed the next slot back meanwhile
            self._next = now + 1.0 / self.settings.rate + PACE_MARGIN

    async def request(self, url: str, headers: dict[str, str] | None = None) -> tuple[int, httpx.Headers, bytes]:
        """One answer (status, headers, body up to ``MAX_BYTES``) from the archive; retried on timeouts,
        failed connections, 5xx and 429, after the ``Retry-After`` the archive asks for."""
        self._check(url)

        async def attempt() -> tuple[int, httpx.Headers, bytes]:
            async with self._gate:
                await self._turn()
                self.asked += 1
                try:
                    async with self.client.stream("GET", url, headers={"User-Agent": USER_AGENT, **(headers or {})},
                                                  timeout=self.settings.timeout) as response:
                        body = bytearray()
                        if response.status_code < 300:  # a redirect's or an error's body is not needed
                            async for chunk in response.aiter_bytes():
                                body += chunk
                                if len(body) > MAX_BYTES:
                                    raise ArchiveError(f"{self.name}: the answer is too large (over {MAX_BYTES:,} "
                                                       "bytes)")
                        status, answered = response.status_code, response.headers
                except httpx.TimeoutException:
                    raise Again(f"{self.name}: timeout (no answer within {self.settings.timeout:g} s)") from None
                except httpx.DecodingError as error:
                    raise ArchiveError(f"{self.name}: a broken compressed answer ({error})") from error
                except httpx.TransportError as error:
                    raise Again(f"{self.name}: cannot connect ({error.__class__.__name__}: {error})") from None
            if status not in (429, 500, 502, 503, 504):
                return status, answered, bytes(body)
            failure = f"{self.name}: HTTP {status}"
            asked = _retry_after(answered.get("retry-after")) if status in (429, 503) else None
            if asked is not None:
                if asked > self.settings.max_wait:
                    raise ArchiveError(f"{failure}, asked to wait {asked:,.0f} s (more than "
                                       f"{self.settings.max_wait:g})")
                # every request to this archive waits, not only this one (even one already waiting for its slot)
                self._next = max(self._next, time.monotonic() + asked)
            raise Again(failure, asked)

        return await with_retries(self.settings.retries, attempt, ArchiveError)

    async def _once(self, key: str, work: Callable[[], Awaitable[T]]) -> T:
        """``work`` once for ``key`` at a time: lines of one page wait for the same look-up."""
        if key in self._inflight:
            return await asyncio.shield(self._inflight[key])
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            value = await work()
        except BaseException as error:
            future.set_exception(error if isinstance(error, Exception) else ArchiveError("the look-up was stopped"))
            future.exception()
            raise
        finally:
            del self._inflight[key]
        future.set_result(value)
        return value

    # -- captures

    async def captures(self, url: str, when: dt.datetime | None, window: dt.timedelta) -> list[Capture]:
        """The captures of ``url`` worth trying, in order (``nearest_first``): within ``window`` of
        ``when``, ``captures`` of them and ``FURTHER_CAPTURES`` more (their look-up cached on disk and
        shared by the lines of one page; an answer with unreadable rows is used, not cached)."""
        key = "\n".join([self.settings.kind, *self.settings.endpoints(), url, _day(when), str(window.days)])

        async def look_up() -> list[Capture]:
            if self.cache is not None:
                kept = await asyncio.to_thread(self.cache.get, "lookups", key)
                if kept is not None:
                    if "error" in kept:
                        raise ArchiveError(kept["error"])
                    return [Capture.of_json(self.name, c) for c in kept["captures"]]
            self.unreadable_in[url] = 0
            try:
                found = await self._captures(url, when, window)
            except ArchiveError as error:
                if self.cache is not None and _lasting(error):
                    await asyncio.to_thread(self.cache.put, "lookups", key, {"error": str(error)})
                raise
            chosen = nearest_first(found, when, window, self.settings.captures + FURTHER_CAPTURES)
            if self.cache is not None and not self.unreadable_in[url]:  # a cut-off answer: asked again next time
                await asyncio.to_thread(self.cache.put, "lookups", key, {"captures": [c.as_json() for c in chosen]})
            return chosen

        return await self._once(f"lookup\n{key}", look_up)

    async def _captures(self, url: str, when: dt.datetime | None, window: dt.timedelta) -> list[Capture]:
        if self.settings.kind == "cdx":
            return await self._cdx_captures(url, when, window)
        if self.settings.kind == "memento":
            return await self._memento_captures(url, when, window)
        return await self._commoncrawl_captures(url, when, window)

    async def _cdx_rows(self, url: str, what: str, looked_up: str) -> list[dict[str, str]]:
        """A CDX answer's rows (none for 404: "No Captures found"); an error naming ``what`` answered.
        Rows that cannot be read are skipped and counted for ``looked_up``, the page's URL; an answer
        of which no row can be read is an error that is not cached (a cut-off answer passes)."""
        status, _, body = await self.request(url)
        if status == 404:
            return []
        if status >= 400:
            raise ArchiveError(f"{self.name}: {what} answered HTTP {status}")
        rows, bad = read_cdx(body.decode("utf-8", "replace"))
        if bad:
            self.unreadable += bad
            self.unreadable_in[looked_up] = self.unreadable_in.get(looked_up, 0) + bad
            if not rows:
                raise ArchiveError(f"{self.name}: {what}'s answer is not CDX ({bad} unreadable "
                                   f"row{'s' if bad != 1 else ''}, {PASSING_NOT_CDX})")
        return rows

    async def _cdx_captures(self, url: str, when: dt.datetime | None, window: dt.timedelta) -> list[Capture]:
        params: dict[str, str] = {"url": url, "output": "json", "limit": "2000"}
        if when is not None:
            params["from"] = timestamp14(when - window)
            params["to"] = timestamp14(when + window)
        rows = await self._cdx_rows(str(httpx.URL(self.settings.cdx, params=params)), "the CDX server", url)
        found = []
        for row in rows:
            stamp = row.get("timestamp", "")
            original = row.get("original") or row.get("url") or url
            if not re.fullmatch(r"\d{4,14}", stamp) or not _useful(row):
                continue
            found.append(Capture(self.name, parse_date(stamp), f"{self.settings.replay}{stamp}id_/{original}",
                                 original, digest=_digest(row)))
        return found

    async def _memento_captures(self, url: str, when: dt.datetime | None, window: dt.timedelta) -> list[Capture]:
        if self.settings.timemap:
            listed = await self._timemap(f"{self.settings.timemap}{url}", when, window)
            kept = [Capture(self.name, moment or stamp_in(uri_m), raw_memento(uri_m, self.settings.raw), url)
                    for uri_m, moment in listed if self._allowed(raw_memento(uri_m, self.settings.raw))]
            if listed and not kept:
                first = raw_memento(listed[0][0], self.settings.raw)
                raise ArchiveError(f"{self.name}: every memento the TimeMap lists ({len(listed)}) is outside the "
                                   f"archive (such as {first}: {outside(first, self.scopes)})")
            return kept
        moment = when or dt.datetime.now(dt.UTC)
        status, headers, _ = await self.request(f"{self.settings.timegate}{url}",
                                                {"Accept-Datetime": email.utils.format_datetime(moment, usegmt=True)})
        if status == 404:
            return []
        location = headers.get("location") or headers.get("content-location")
        if status >= 400 or not location:
            raise ArchiveError(f"{self.name}: the TimeGate answered HTTP {status} without a memento")
        uri_m = urljoin(f"{self.settings.timegate}{url}", location)
        if not self._allowed(raw_memento(uri_m, self.settings.raw)):
            raise ArchiveError(f"{self.name}: the TimeGate's memento {uri_m} is outside the archive "
                               f"({outside(raw_memento(uri_m, self.settings.raw), self.scopes)})")
        memento = parse_date(headers.get("memento-datetime") or "") or stamp_in(uri_m)
        return [Capture(self.name, memento, raw_memento(uri_m, self.settings.raw), url)]

    async def _timemap(self, first: str, when: dt.datetime | None,
                       window: dt.timedelta) -> list[tuple[str, dt.datetime | None]]:
        """The mementos of a TimeMap, its pages followed (at most ``TIMEMAP_PAGES``; with a date only
        those whose ``from`` … ``until`` reaches into the window around it)."""
        mementos: list[tuple[str, dt.datetime | None]] = []
        todo, seen = [first], {first}
        while todo and len(seen) - len(todo) < TIMEMAP_PAGES:
            page = todo.pop(0)
            status, _, body = await self.request(page)
            if status == 404 and page == first:
                return []
            if status == 404:  # a page gone since the first was made: the others still count
                continue
            if status >= 400:
                raise ArchiveError(f"{self.name}: the TimeMap {'' if page == first else f'page {page} '}answered "
                                   f"HTTP {status}")
            text = body.decode("utf-8", "replace")
            mementos += parse_timemap(text)
            for uri, begins, ends in timemap_pages(text):
                uri = urljoin(page, uri)
                wanted = when is None or ((begins is None or begins <= when + window)
                                          and (ends is None or ends >= when - window))
                if wanted and uri not in seen and self._allowed(uri):
                    seen.add(uri)
                    todo.append(uri)
        return mementos

    def _allowed(self, url: str) -> bool:
        """A URL an answer links to that is inside the archive; one outside is counted, never asked."""
        if outside(url, self.scopes) is None:
            return True
        self.refused += 1
        return False

    async def _crawls(self, when: dt.datetime | None,
                      window: dt.timedelta) -> list[tuple[str, tuple[dt.datetime, dt.datetime] | None]]:
        """The crawls to ask (their CDX APIs), nearest the date first."""
        if self._collections is None:
            if self.settings.collections:
                self._collections = [(f"{self.settings.index.rstrip('/')}/{name}-index",
                                      _crawl_period({"id": name})) for name in self.settings.collections]
            else:
                status, _, body = await self.request(urljoin(self.settings.index, "collinfo.json"))
                if status >= 400:
                    raise ArchiveError(f"{self.name}: collinfo.json answered HTTP {status}")
                try:
                    entries = json.loads(body)
                except ValueError as error:
                    raise ArchiveError(f"{self.name}: collinfo.json is not JSON ({error})") from error
                listed = [(str(e["cdx-api"]), _crawl_period(e)) for e in entries
                          if isinstance(e, dict) and e.get("cdx-api")]
                self._collections = [crawl for crawl in listed if self._allowed(crawl[0])]  # others: counted
                if listed and not self._collections:
                    raise ArchiveError(f"{self.name}: every crawl collinfo.json lists ({len(listed)}) is outside the "
                                       f"archive (such as {listed[0][0]}: {outside(listed[0][0], self.scopes)})")
        crawls = self._collections
        if when is not None:
            def distance(period: tuple[dt.datetime, dt.datetime] | None) -> dt.timedelta:
                if period is None:
                    return dt.timedelta.max
                start, end = period
                return dt.timedelta(0) if start <= when <= end else min(abs(start - when), abs(end - when))
            crawls = sorted((c for c in crawls if distance(c[1]) <= window), key=lambda c: distance(c[1]))
        return crawls[: self.settings.max_collections]

    async def _commoncrawl_captures(self, url: str, when: dt.datetime | None,
                                    window: dt.timedelta) -> list[Capture]:
        found: list[Capture] = []
        for api, _ in await self._crawls(when, window):
            found += await self._crawl_captures(api, url)
        return found

    async def _crawl_captures(self, api: str, url: str, looked_up: str | None = None) -> list[Capture]:
        rows = await self._cdx_rows(str(httpx.URL(api, params={"url": url, "output": "json"})), "the crawl index",
                                    looked_up or url)
        found = []
        for row in rows:
            try:
                offset, length = int(row["offset"]), int(row["length"])
                filename = row["filename"]
            except (KeyError, ValueError):
                continue
            if not _useful(row):
                continue
            warc = urljoin(self.settings.data, filename)
            found.append(Capture(self.name, parse_date(row.get("timestamp", "")),
                                 f"{warc}#bytes={offset}-{offset + length - 1}", row.get("url") or url,
                                 (warc, offset, length), _digest(row)))
        return found

    # -- a capture's page

    async def page(self, capture: Capture) -> tuple[Page, Capture]:
        """The capture's page, decoded as a live page is (its headers' charset, its ``<meta>``, a
        guess), redirects followed inside the archive; and the capture it came from in the end (a
        redirect's target's: its own URL and date). Cached on disk."""

        async def get() -> tuple[Page, Capture]:
            if self.cache is not None:
                kept = await asyncio.to_thread(self.cache.get, "pages", capture.url)  # (a page: up to 5 MB)
                if kept is not None:
                    if "error" in kept:
                        raise ArchiveError(kept["error"])
                    return (Page(kept["url"], kept["html"], kept["content_type"], kept.get("encoding", "utf-8")),
                            Capture.of_json(self.name, kept["capture"]))
            try:
                page, final = await (self._warc_page(capture) if capture.warc else self._replayed(capture))
            except ArchiveError as error:
                if self.cache is not None and _lasting(error):
                    await asyncio.to_thread(self.cache.put, "pages", capture.url, {"error": str(error)})
                raise
            if self.cache is not None:
                await asyncio.to_thread(self.cache.put, "pages", capture.url, {
                    "url": page.url, "html": page.html, "capture": final.as_json(), "content_type": page.content_type,
                    "encoding": page.encoding})
            return page, final

        return await self._once(f"page\n{capture.url}", get)

    async def _replayed(self, capture: Capture) -> tuple[Page, Capture]:
        current = capture.url
        for _ in range(REDIRECTS + 1):
            status, headers, body = await self.request(current)
            if status in (301, 302, 303, 307, 308) and "location" in headers:
                target = urljoin(current, headers["location"])
                if not self._allowed(target):
                    raise ArchiveError(f"{self.name}: the capture redirects out of the archive (to {target})")
                current = target
                continue
            if status >= 400:
                raise ArchiveError(f"{self.name}: the capture answered HTTP {status}")
            # the memento's own Memento-Datetime says when it was made (a TimeGate's answer may not)
            when = parse_date(headers.get("memento-datetime") or "") or stamp_in(current) or capture.when
            final = capture if (current, when) == (capture.url, capture.when) else Capture(
                self.name, when, current, capture.original)
            return _page(current, headers.get("content-type", "text/html"), body, self.name), final
        raise ArchiveError(f"{self.name}: the capture redirects more than {REDIRECTS} times")

    async def _warc_page(self, capture: Capture, hops: int = 0) -> tuple[Page, Capture]:
        assert capture.warc is not None
        warc, offset, length = capture.warc
        if length > MAX_BYTES:
            raise ArchiveError(f"{self.name}: the WARC record is too large ({length:,} bytes)")
        status, _, body = await self.request(warc, {"Range": f"bytes={offset}-{offset + length - 1}"})
        if status == 200 and len(body) != length:
            raise ArchiveError(f"{self.name}: the data host ignored the range request (HTTP 200)")
        if status not in (200, 206):
            raise ArchiveError(f"{self.name}: the WARC record answered HTTP {status}")
        record_status, content_type, location, payload = _warc_response(body, self.name)
        if record_status in (301, 302, 303, 307, 308) and location and hops < REDIRECTS:
            target = urljoin(capture.original, location)  # looked up in the same crawl, never fetched live
            api = _crawl_api(self, capture)
            nearer = nearest_first(await self._crawl_captures(api, target, capture.original), capture.when,
                                   dt.timedelta(days=36_500), 1) if api else []
            if not nearer:
                raise ArchiveError(f"{self.name}: the capture redirects to {target}, which this crawl does not hold")
            return await self._warc_page(nearer[0], hops + 1)
        if record_status >= 400:
            raise ArchiveError(f"{self.name}: the captured page was HTTP {record_status}")
        return _page(capture.url, content_type, payload, self.name), capture  # (its URL names the record)


PASSING_NOT_CDX = "perhaps cut off"
"""Said of a CDX answer none of whose rows can be read: a passing failure (not cached), asked again."""


def _lasting(error: ArchiveError) -> bool:
    """An answer worth keeping: not a timeout, a 5xx or 429, a failed connection or a CDX answer cut off
    (asked again later)."""
    text = str(error)
    return not any(passing in text for passing in ("timeout", "HTTP 5", "HTTP 429", "cannot connect",
                                                   PASSING_NOT_CDX))


def _digest(row: dict[str, str]) -> str:
    """A CDX row's digest of the captured bytes ("" where it gives none, or "-"; and for a capture that is
    not 2xx: redirects to different places have the same empty body)."""
    digest = row.get("digest", "")
    return "" if digest in ("", "-") or not _status(row).startswith("2") else digest


def _crawl_api(archive: Archive, capture: Capture) -> str | None:
    """The CDX API of the crawl a Common Crawl capture comes from (its WARC path names the crawl)."""
    assert capture.warc is not None
    found = re.search(r"(CC-MAIN-\d{4}-\d{2})", capture.warc[0])
    if not found:
        return None
    for api, _ in archive._collections or []:  # noqa: SLF001 - the archive's own list, read beside it
        if found.group(1) in api:
            return api
    return f"{archive.settings.index.rstrip('/')}/{found.group(1)}-index"


def _warc_response(record: bytes, archive: str) -> tuple[int, str, str, bytes]:
    """(HTTP status, Content-Type, Location, payload) of the WARC response record in ``record`` (its
    payload de-chunked and decompressed, as warcio's content stream gives it)."""
    try:
        for entry in ArchiveIterator(io.BytesIO(record)):
            if entry.rec_type != "response" or entry.http_headers is None:
                continue
            headers = entry.http_headers
            status = int(headers.get_statuscode() or 0)
            payload = entry.content_stream().read(MAX_BYTES + 1)
            if len(payload) > MAX_BYTES:
                raise ArchiveError(f"{archive}: the captured page is too large (over {MAX_BYTES:,} bytes)")
            return (status, headers.get_header("Content-Type") or "text/html",
                    headers.get_header("Location") or "", payload)
    except (ArchiveLoadFailed, OSError, ValueError, EOFError) as error:
        raise ArchiveError(f"{archive}: the WARC record cannot be read ({error})") from error
    raise ArchiveError(f"{archive}: the WARC record holds no HTTP response")


def _page(url: str, content_type: str, body: bytes, archive: str) -> Page:
    kind = content_type.split(";")[0].strip().lower() or "text/html"
    if kind not in TEXT_TYPES:
        raise ArchiveError(f"{archive}: the capture is not a text page ({kind})")
    try:
        encoding, text = decode(body, content_type)
    except (LookupError, ValueError) as error:
        raise ArchiveError(f"{archive}: cannot decode the capture ({error})") from error
    return Page(url, text, kind, encoding)


def _day(when: dt.datetime | None) -> str:
    return "" if when is None else when.strftime("%Y-%m-%d")

