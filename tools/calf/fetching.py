"""Fetching pages politely: timeouts, retries with backoff, one host at a time at a set pace,
robots.txt respected, an honest User-Agent, a size cap, any text encoding, a cache on disk, and
(for the platform) only public addresses.
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

import httpx
from trafilatura.utils import decode_file

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


class Blocked(FetchError):
    """An address the fetcher may not reach (loopback, private, link-local, metadata)."""


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
                raise FetchError("robots.txt disallows it")
            response = await self._request(current)
            if response.is_redirect and "location" in response.headers:
                current = urljoin(current, response.headers["location"])
                continue
            if response.status_code >= 400:
                raise FetchError(f"HTTP {response.status_code}")
            kind = response.headers.get("content-type", "text/html").split(";")[0].strip().lower()
            if kind not in TEXT_TYPES:
                raise FetchError(f"not a text page ({kind})")
            return Page(current, decode_file(response.content), kind)
        raise FetchError("too many redirects")

    async def _request(self, url: str) -> httpx.Response:
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
                    failure = "timeout"
                except httpx.TransportError as exc:
                    failure = f"connection failed ({exc.__class__.__name__})"
                else:
                    if response.status_code < 500 and response.status_code != 429:
                        return response
                    failure = f"HTTP {response.status_code}"
                finally:
                    self._last[host] = time.monotonic()
            if attempt < self.retries:
                await asyncio.sleep(min(8.0, 0.5 * 2**attempt))
        raise FetchError(failure)

    async def _read(self, url: str) -> httpx.Response:
        assert self._client is not None
        async with self._client.stream("GET", url) as response:
            declared = int(response.headers.get("content-length") or 0)
            if declared > self.max_bytes:
                raise FetchError(f"too large ({declared:,} bytes)")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > self.max_bytes:
                    raise FetchError(f"too large (over {self.max_bytes:,} bytes)")
            return httpx.Response(response.status_code, headers=response.headers, content=bytes(body),
                                  request=response.request)

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
