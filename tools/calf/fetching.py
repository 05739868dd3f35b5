"""Fetching pages politely: timeouts, retries with backoff, one host at a time at a set pace,
robots.txt respected, an honest User-Agent, a size cap, a cache on disk, and (for the platform)
only public addresses.

Bodies come decompressed (gzip, deflate, brotli: httpx undoes the Content-Encoding) and are decoded
as the browser would (w3lib, after the HTML standard): a byte order mark first, then the charset of
the Content-Type header, then the page's own ``<meta>``; a page that declares nothing is UTF-8 when
its bytes are, else what charset-normalizer makes of them. ISO-8859-1 means windows-1252, as on the
web. Every failure is a ``FetchError`` whose message says why: ``HTTP 404``, ``cannot resolve
host``, ``refused by robots.txt``, ``timeout``, ``too large``, ``not a text page``.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import socket
import time
import urllib.robotparser
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urljoin, urlsplit

import charset_normalizer
import httpx
from w3lib.encoding import html_to_unicode

from cowbird import __version__

USER_AGENT = f"cowbird-calf/{__version__} (+https://github.com/cowbird-corpus/cowbird; finds corpus sentences)"
MAX_BYTES = 5 * 1024 * 1024
RECENT = 512
"""Pages (or their errors) kept in memory during a run."""
TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "application/xml", "text/xml")


class FetchError(Exception):
    """A page that could not be had: why, in a few words (``404``, ``timeout``, ``robots.txt``)."""


@dataclass(frozen=True)
class Page:
    url: str  # the final URL, after redirects
    html: str
    content_type: str
    encoding: str = "utf-8"  # what the bytes were decoded from


@dataclass(frozen=True)
class Fetched:
    """One answer as it came: status, headers, the body decompressed (never decoded twice)."""

    status_code: int
    headers: httpx.Headers
    content: bytes

    @property
    def is_redirect(self) -> bool:
        return self.status_code in (301, 302, 303, 307, 308) and "location" in self.headers

    @property
    def text(self) -> str:
        return decode(self.content, self.headers.get("content-type"))[1]


_LATIN = frozenset({"ascii", "latin_1", "iso8859_15", "cp1252", "cp850", "cp437", "cp858", "mac_roman", "cp1250",
                    "iso8859_2", "cp500", "cp1140", "hp_roman8", "mac_latin2", "cp865", "cp863", "cp860", "cp861"})
"""charset-normalizer's names for the Western single-byte encodings it may take windows-1252 text for."""


def _guess(body: bytes) -> str | None:
    """The encoding of a page that declares none: UTF-8 if its bytes are; else what charset-normalizer
    makes of them — but a Western single-byte guess (it takes German windows-1252 for cp850, "ü" for
    "³") is windows-1252, the web's default for pages that declare nothing."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8"
    best = charset_normalizer.from_bytes(body[:65536]).best()
    if best is None or best.encoding in _LATIN:
        return "cp1252"
    return str(best.encoding)


def decode(body: bytes, content_type: str | None) -> tuple[str, str]:
    """(encoding, text) of a page: BOM, then the header's charset, then ``<meta>``, then a guess."""
    encoding, text = html_to_unicode(content_type, body, default_encoding="utf-8", auto_detect_fun=_guess)
    return encoding, text


class Blocked(FetchError):
    """An address the fetcher may not reach (loopback, private, link-local, metadata)."""


def _connect_failure(error: httpx.ConnectError, url: str) -> str:
    """Why a connection failed, in the words a user looks for: the host unknown, or nobody listening."""
    text = str(error)
    parts = urlsplit(url)
    host = parts.hostname or url
    cause: BaseException | None = error
    for _ in range(8):  # the chain of causes, not followed forever
        if cause is None:
            break
        if isinstance(cause, socket.gaierror):
            return f"cannot resolve {host} (no such host)"
        cause = cause.__cause__ or cause.__context__
    if "Name or service not known" in text or "nodename nor servname" in text or "No address associated" in text \
            or "Temporary failure in name resolution" in text:
        return f"cannot resolve {host} (no such host)"
    if "refused" in text.lower() or "All connection attempts failed" in text:  # anyio hides the errno
        return f"connection refused by {parts.netloc} (nothing answers there)"
    return f"cannot connect to {parts.netloc} ({text or error.__class__.__name__})"


def check_public(url: str, allowed_hosts: Iterable[str]) -> None:
    """Refuse a URL whose host is not a public address, unless it is allowed by name."""
    host = urlsplit(url).hostname or ""
    if host in set(allowed_hosts):
        return
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise FetchError(f"cannot resolve {host}") from exc
    for info in infos:
        address = ipaddress.ip_address(info[4][0])
        if not address.is_global or address.is_multicast:
            raise Blocked(f"{host} resolves to a non-public address ({address})")


@dataclass
class Fetcher:
    """Fetches pages with ``concurrency`` overall and one request per host at a time, ``delay``
    seconds apart."""

    timeout: float = 15.0
    retries: int = 2
    delay: float = 0.5
    max_bytes: int = MAX_BYTES
    cache_dir: Path | None = None
    cache_seconds: float = 7 * 86400.0
    public_only: bool = False
    allowed_hosts: tuple[str, ...] = ()
    respect_robots: bool = True
    transport: httpx.AsyncBaseTransport | None = None
    _client: httpx.AsyncClient | None = None
    _hosts: dict[str, asyncio.Lock] = field(default_factory=dict)
    _last: dict[str, float] = field(default_factory=dict)
    _robots: dict[str, urllib.robotparser.RobotFileParser | None] = field(default_factory=dict)
    _recent: OrderedDict[str, Page | FetchError] = field(default_factory=OrderedDict)
    _inflight: dict[str, asyncio.Future[Page]] = field(default_factory=dict)

    async def __aenter__(self) -> Fetcher:
        self._client = httpx.AsyncClient(
            timeout=self.timeout, follow_redirects=False, headers={"User-Agent": USER_AGENT},
            transport=self.transport, limits=httpx.Limits(max_connections=64, max_keepalive_connections=16),
        )  # fmt: skip
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._client is not None:
            await self._client.aclose()

    # ------------------------------------------------------------------ the cache

    def _cache_path(self, url: str) -> Path | None:
        if self.cache_dir is None:
            return None
        return self.cache_dir / f"{hashlib.sha256(url.encode('utf-8')).hexdigest()}.json"

    def _cached(self, url: str) -> Page | FetchError | None:
        path = self._cache_path(url)
        if path is None or not path.exists() or time.time() - path.stat().st_mtime > self.cache_seconds:
            return None
        entry = json.loads(path.read_text(encoding="utf-8"))
        if "error" in entry:
            return FetchError(entry["error"])
        return Page(entry["url"], entry["html"], entry["content_type"])

    def _store(self, url: str, answer: Page | FetchError) -> None:
        path = self._cache_path(url)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = ({"error": str(answer)} if isinstance(answer, FetchError)
                 else {"url": answer.url, "html": answer.html, "content_type": answer.content_type})
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(entry), encoding="utf-8")
        temporary.replace(path)

    # ------------------------------------------------------------------ fetching

    async def get(self, url: str) -> Page:
        """The page at ``url`` (redirects followed, each checked); ``FetchError`` saying why not.
        Lines of one page share one fetch: the last ``RECENT`` answers are kept in memory, and a
        page being fetched is waited for, not fetched again."""
        if url in self._recent:
            self._recent.move_to_end(url)
            answer = self._recent[url]
            if isinstance(answer, FetchError):
                raise answer
            return answer
        if url in self._inflight:
            return await asyncio.shield(self._inflight[url])
        future: asyncio.Future[Page] = asyncio.get_running_loop().create_future()
        self._inflight[url] = future
        try:
            page = await self._get_cached(url)
        except FetchError as error:
            self._remember(url, error)
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" warning when nobody else waited
            raise
        finally:
            del self._inflight[url]
        self._remember(url, page)
        future.set_result(page)
        return page

    def _remember(self, url: str, answer: Page | FetchError) -> None:
        self._recent[url] = answer
        while len(self._recent) > RECENT:
            self._recent.popitem(last=False)

    async def _get_cached(self, url: str) -> Page:
        cached = self._cached(url)
        if isinstance(cached, FetchError):
            raise cached
        if cached is not None:
            return cached
        try:
            page = await self._get(url)
        except FetchError as error:
            if not isinstance(error, Blocked) and "timeout" not in str(error):
                self._store(url, error)  # a 404 stays a 404 for the cache's lifetime
            raise
        self._store(url, page)
        return page

    async def _get(self, url: str) -> Page:
        current = url
        for _ in range(6):  # redirects
            parts = urlsplit(current)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise FetchError(f"not a web address: {current}")
            if self.public_only:
                await asyncio.to_thread(check_public, current, self.allowed_hosts)
            if self.respect_robots and not await self._allowed(current):
                raise FetchError(f"refused by robots.txt of {parts.netloc}")
            response = await self._request(current)
            if response.is_redirect:
                current = urljoin(current, response.headers["location"])
                continue
            if response.status_code >= 400:
                raise FetchError(f"HTTP {response.status_code}")
            header = response.headers.get("content-type", "text/html")
            kind = header.split(";")[0].strip().lower()
            if kind not in TEXT_TYPES:
                raise FetchError(f"not a text page ({kind})")
            try:
                encoding, text = decode(response.content, header)
            except (LookupError, ValueError) as exc:  # a charset Python does not know
                raise FetchError(f"cannot decode the page ({exc})") from exc
            return Page(current, text, kind, encoding)
        raise FetchError("too many redirects (more than 5)")

    async def _request(self, url: str) -> Fetched:
        assert self._client is not None, "use the fetcher in `async with`"
        host = urlsplit(url).netloc
        lock = self._hosts.setdefault(host, asyncio.Lock())
        failure = "no answer"
        for attempt in range(self.retries + 1):
            async with lock:  # one request per host at a time, `delay` apart
                wait = self._last.get(host, 0.0) + self.delay - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                try:
                    response = await self._read(url)
                except httpx.TimeoutException:
                    failure = f"timeout (no answer within {self.timeout:g} s)"
                except httpx.DecodingError as exc:
                    raise FetchError(f"the page's compressed body is broken ({exc})") from exc
                except httpx.ConnectError as exc:
                    failure = _connect_failure(exc, url)
                except httpx.TransportError as exc:
                    failure = f"connection failed ({exc.__class__.__name__}: {exc})"
                else:
                    if response.status_code < 500 and response.status_code != 429:
                        return response
                    failure = f"HTTP {response.status_code}"
                finally:
                    self._last[host] = time.monotonic()
            if attempt < self.retries:
                await asyncio.sleep(min(8.0, 0.5 * 2**attempt))
        raise FetchError(failure)

    async def _read(self, url: str) -> Fetched:
        """The answer with its body decompressed (capped at ``max_bytes`` after decompression)."""
        assert self._client is not None
        async with self._client.stream("GET", url) as response:
            if response.is_redirect or response.status_code >= 400:
                return Fetched(response.status_code, response.headers, b"")  # the body is not needed
            declared = int(response.headers.get("content-length") or 0)  # compressed, if compressed
            if declared > self.max_bytes:
                raise FetchError(f"too large ({declared:,} bytes; at most {self.max_bytes:,})")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > self.max_bytes:
                    raise FetchError(f"too large (over {self.max_bytes:,} bytes)")
            return Fetched(response.status_code, response.headers, bytes(body))

    async def _allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        root = f"{parts.scheme}://{parts.netloc}"
        if root not in self._robots:
            parser: urllib.robotparser.RobotFileParser | None = urllib.robotparser.RobotFileParser()
            try:
                response = await self._request(f"{root}/robots.txt")
            except FetchError:
                parser = None  # no robots.txt to be had: nothing is disallowed
            else:
                assert parser is not None
                if response.status_code >= 400:
                    parser = None
                else:
                    parser.parse(response.text.splitlines())
            self._robots[root] = parser
        parser = self._robots[root]
        return parser is None or parser.can_fetch(USER_AGENT, url)
