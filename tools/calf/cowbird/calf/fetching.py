"""Fetching pages politely: timeouts, retries with backoff (tenacity, ``with_retries``, which the
archives' requests use too), one host at a time at a set pace, robots.txt respected, an honest
User-Agent, a size cap, a deadline for the whole fetch, a cache on disk, and (for the platform, and
``calf --public-only``) only public addresses — the address checked is the address connected to, so
a name that resolves to a public address for the check and to 127.0.0.1 a moment later (DNS
rebinding) reaches nothing inside.

Bodies come decompressed (gzip, deflate, brotli: httpx undoes the Content-Encoding) and are decoded
as the browser would (w3lib, after the HTML standard): a byte order mark first, then the charset of
the Content-Type header, then the page's own ``<meta>``; a page that declares nothing is UTF-8 when
its bytes are, else what charset-normalizer makes of them — windows-1252 over a legacy Mac or DOS
code page for Western European text, as a browser reads it. ISO-8859-1 means windows-1252, as on the
web. Every failure is a ``FetchError`` whose message says why: ``HTTP 404``, ``cannot resolve
host``, ``refused by robots.txt``, ``timeout``, ``the page did not arrive within 60 s``, ``too large``,
``not a text page``.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import socket
import time
import urllib.robotparser
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

import httpx
import tenacity
from w3lib.encoding import html_to_unicode

from cowbird.core.html import guessed_encoding
from cowbird.core.lru import Lru
from cowbird.core.version import __version__

T = TypeVar("T")
USER_AGENT = f"cowbird-calf/{__version__} (+https://github.com/cowbird-corpus/cowbird; finds corpus sentences)"
MAX_BYTES = 5 * 1024 * 1024
RECENT = 512
"""Pages (or their errors) kept in memory during a run."""
TEXT_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "application/xml", "text/xml")
DEADLINE_TIMEOUTS = 4
"""A page fetch (robots.txt, redirects, retries, the body) ends after this many ``timeout`` s unless
the fetcher has its own ``deadline``: a page trickling a byte at a time never times out a read."""


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


_WEB = ("utf_8", "utf_16", "cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258",
        "cp874", "iso8859_2", "iso8859_3", "iso8859_4", "iso8859_5", "iso8859_6", "iso8859_7", "iso8859_8",
        "iso8859_10", "iso8859_13", "iso8859_14", "iso8859_15", "iso8859_16", "koi8_r", "koi8_u", "mac_roman",
        "mac_cyrillic", "cp866", "shift_jis", "euc_jp", "iso2022_jp", "gb18030", "big5", "euc_kr")
"""The encodings a browser decodes web pages in (the WHATWG Encoding Standard's), as charset-normalizer
names them: an undeclared page is guessed among these only — never as a DOS code page like cp775,
which took windows-1252's typographic quotes “…” for "ō…ö"."""


LEGACY = ("mac_roman", "mac_cyrillic", "cp866")
"""Legacy Mac and DOS code pages: a browser reads a page in one only when it says so. An undeclared
page that charset-normalizer takes for one (German windows-1252 with long words such as
"beschäftigungsintensiven" ranks as mac_roman) is windows-1252 when that reads it as Western
European text (``_western``), as a browser with a Western European locale does (the WHATWG
Encoding Standard's default; Firefox's detector never guesses a Mac encoding)."""
WESTERN_SHARE = 0.9
"""Share of a text's non-ASCII letters that must sit beside an ASCII letter ("für", "Straße") or be a
word alone ("à") for it to be Western European text: Cyrillic or Greek read as windows-1252 is words
of non-ASCII letters alone."""
_WESTERN_MARKS = frozenset("€‚„…†‡ˆ‰‹‘’“”•–—˜™›\u00a0¡¢£¥§©«®°±²³´µ¶·¸¹º»¼½¾¿")


def _western(body: bytes) -> bool:
    """Whether ``body`` reads as Western European text in windows-1252: every byte defined there, its
    non-ASCII characters letters or the typography such text has (quotes, dashes, "€", "§"), and
    nearly all of its non-ASCII letters inside words of ASCII letters."""
    try:
        text = body.decode("cp1252")
    except UnicodeDecodeError:
        return False
    letters = inside = 0
    for k, char in enumerate(text):
        if char.isascii():
            continue
        if not char.isalpha():
            if char not in _WESTERN_MARKS:
                return False
            continue
        letters += 1
        before, after = text[k - 1:k], text[k + 1:k + 2]
        beside = any(c.isascii() and c.isalpha() for c in before + after)  # in a word with ASCII letters
        alone = not before.isalpha() and not after.isalpha()  # "à"
        inside += beside or alone
    return letters == 0 or inside >= WESTERN_SHARE * letters


def _guess(body: bytes) -> str | None:
    """The encoding of a page that declares none: UTF-8 if its bytes are; else what charset-normalizer
    makes of them among the web's encodings — windows-1252, the web's default for pages that declare
    nothing, whenever it reads the bytes as cleanly as the best guess (German windows-1252 is also
    valid windows-1250, French also ISO-8859-14), or the best guess is a legacy Mac or DOS code page
    (``LEGACY``) and windows-1252 reads Western European text, so that only text that is not Western
    (Polish, Czech, Russian, Japanese ...) is read in another encoding."""
    try:
        body.decode("utf-8")
    except UnicodeDecodeError:
        pass
    else:
        return "utf-8"
    guessed = guessed_encoding(body[:65536], _WEB)
    return "cp1252" if guessed in LEGACY and _western(body[:65536]) else guessed


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


_NAT64 = ipaddress.ip_network("64:ff9b::/96")  # well-known NAT64 prefix: the IPv4 address in the last 32 bits
_LOCAL_NAT64 = ipaddress.ip_network("64:ff9b:1::/48")  # local-use NAT64 (RFC 8215): a network's own
_COMPATIBLE = ipaddress.ip_network("::/96")  # IPv4-compatible (deprecated): ::127.0.0.1
_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")  # IPv4-translated (SIIT, RFC 2765): ::ffff:0:10.0.0.1
_CGNAT = ipaddress.ip_network("100.64.0.0/10")  # shared address space (RFC 6598): a carrier's own network
_RESERVED = tuple(ipaddress.ip_network(net) for net in (
    "192.0.0.0/24",  # IETF protocol assignments (192.0.0.9 and .10 are anycast services: none a web page's)
    "192.88.99.0/24",  # the 6to4 relays' anycast (deprecated)
    "240.0.0.0/4",  # reserved for future use, and the broadcast address
))


def _embedded(address: ipaddress.IPv6Address) -> tuple[str, ipaddress.IPv4Address] | None:
    """The IPv4 address an IPv6 address carries, and the form that carries it: IPv4-mapped
    (::ffff:0:0/96), IPv4-translated (SIIT, ::ffff:0:0:0/96), NAT64 (64:ff9b::/96), 6to4
    (2002::/16) or IPv4-compatible (::/96)."""
    if address.ipv4_mapped is not None:
        return "IPv4-mapped", address.ipv4_mapped
    if address in _TRANSLATED:
        return "IPv4-translated (SIIT)", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address.sixtofour is not None:
        return "6to4", address.sixtofour
    if address in _NAT64:
        return "NAT64", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if address in _COMPATIBLE and int(address) > 1:  # (not :: and ::1, which are themselves)
        return "IPv4-compatible", ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


def not_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str | None:
    """Why an address is not a public one — ``loopback``, ``private``, ``link-local``, ``shared
    (CGNAT)``, ``multicast``, ``reserved``, ``unspecified``, ``Teredo``, ``local-use NAT64``, or an
    IPv6 form of an IPv4 address that is one of these (``IPv4-translated (SIIT) of 10.0.0.1:
    private``) —; None for a global unicast address. The one check of Calf's ``--public-only`` and
    of the front end's "find on the web"."""
    if isinstance(address, ipaddress.IPv6Address):
        if address.teredo is not None:
            return "Teredo"  # a tunnel's address: where it leads is the relay's business
        if address in _LOCAL_NAT64:
            return "local-use NAT64"
        inner = _embedded(address)
        if inner is not None:  # judged by the IPv4 address it carries (checked before is_global,
            form, carried = inner  # which takes ::ffff:0:10.0.0.1 for a global address)
            why = not_public(carried)
            return None if why is None else f"{form} of {carried}: {why}"
    for why, test in (("unspecified", address.is_unspecified), ("loopback", address.is_loopback),
                      ("link-local", address.is_link_local), ("multicast", address.is_multicast),
                      ("shared (CGNAT)", isinstance(address, ipaddress.IPv4Address) and address in _CGNAT),
                      ("site-local", isinstance(address, ipaddress.IPv6Address) and address.is_site_local),
                      ("reserved", isinstance(address, ipaddress.IPv4Address) and (
                          address.is_reserved or any(address in net for net in _RESERVED))),
                      ("private", address.is_private),
                      ("not globally routed", not address.is_global)):
        if test:
            return why
    return None


def is_public(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """A global unicast address, and so is the IPv4 address an IPv6 one carries (64:ff9b::7f00:1,
    2002:7f00:1::, ::ffff:127.0.0.1, ::ffff:0:a00:1 are loopback or private in disguise)."""
    return not_public(address) is None


def check_public(url: str, allowed_hosts: Iterable[str]) -> str | None:
    """Resolve the URL's host once and refuse it unless every address it has is public (or the host
    is allowed by name): the address to connect to, one of those checked (IPv4 first), or None for
    an allowed host, which is fetched as any other. Nothing is sent to a refused address."""
    host = httpx.URL(url).host
    if host in set(allowed_hosts):
        return None
    name = httpx.URL(url).raw_host.decode("ascii")  # as it is sent: IDNA, no brackets
    try:
        infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchError(f"cannot resolve {host}") from exc
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%")[0]) for info in infos]
    if not addresses:
        raise FetchError(f"cannot resolve {host}")
    for address in addresses:
        why = not_public(address)
        if why is not None:
            literal = host.strip("[]") == str(address) or _same(host, address)
            raise Blocked(f"refused: {host} is a non-public address ({why})" if literal else
                          f"refused: {host} resolves to a non-public address ({address}: {why})")
    return str(next((a for a in addresses if a.version == 4), addresses[0]))


def _same(host: str, address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether the URL's host is that address itself, written some way (``[::ffff:0:a00:1]``)."""
    try:
        return ipaddress.ip_address(host.strip("[]")) == address
    except ValueError:
        return False


def _pinned(url: str, address: str | None) -> tuple[httpx.URL, dict[str, str], dict[str, Any]]:
    """The URL to ask, its headers and extensions: with ``address``, the checked address itself,
    the host's name in the Host header and, over TLS, in SNI and the certificate check. A TLS
    connection to an address is not kept for the next request: it was verified for one name."""
    target = httpx.URL(url)
    if address is None:
        return target, {}, {}
    headers = {"Host": target.netloc.decode("ascii")}
    extensions: dict[str, Any] = {}
    if target.scheme == "https":
        extensions["sni_hostname"] = target.raw_host.decode("ascii")
        headers["Connection"] = "close"
    return target.copy_with(host=address), headers, extensions


class Late(FetchError):
    """The page did not arrive within the fetcher's deadline."""


class Again(Exception):
    """An attempt worth making again (a timeout, a failed connection, a 5xx, a 429): ``why``, the
    words of the failure should it be the last, and ``after``, the seconds the other side asked to
    wait (its ``Retry-After``), if any."""

    def __init__(self, why: str, after: float | None = None) -> None:
        super().__init__(why)
        self.why = why
        self.after = after


BACKOFF = tenacity.wait_exponential(multiplier=0.5, max=8.0)
"""The wait before the next attempt: 0.5 s, doubled after each, at most 8 s."""


def _wait(state: tenacity.RetryCallState) -> float:
    """What the failed attempt was asked to wait (``Again.after``), else ``BACKOFF``."""
    failure = state.outcome.exception() if state.outcome is not None else None
    if isinstance(failure, Again) and failure.after is not None:
        return failure.after
    return float(BACKOFF(state))


async def with_retries(retries: int, attempt: Callable[[], Awaitable[T]], failed: Callable[[str], FetchError]) -> T:
    """``attempt()``'s answer, asked again up to ``retries`` times while it raises ``Again`` (tenacity:
    ``BACKOFF`` between attempts, or the ``Retry-After`` asked for), then ``failed(why)`` of the last
    failure; any other error ends it at once."""
    try:
        async for trying in tenacity.AsyncRetrying(stop=tenacity.stop_after_attempt(retries + 1), wait=_wait,
                                                   retry=tenacity.retry_if_exception_type(Again), reraise=True):
            with trying:
                return await attempt()
    except Again as last:
        raise failed(last.why) from None
    raise failed("no answer")  # (never: the last attempt returns or raises)


class _Stopped(Exception):
    """The fetch others waited for was cancelled (its caller went away): they fetch the page themselves."""


@dataclass
class Fetcher:
    """Fetches pages; requests to one host start one at a time, ``delay`` seconds apart (a page's
    body is read outside that turn, so a page that trickles does not hold up its host's others).
    ``timeout``: seconds for each connect and read; ``deadline``: seconds for a whole page fetch
    (robots.txt, redirects, retries, waiting for the host's turn, the body), by default
    ``DEADLINE_TIMEOUTS`` × ``timeout``."""

    timeout: float = 15.0
    deadline: float | None = None
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
    _recent: Lru[str, Page | FetchError] = field(default_factory=lambda: Lru(RECENT))  # answers, by URL
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
        if self.public_only and not entry.get("public_only"):
            return None  # kept by a fetcher that reached any address: fetched anew, checked
        if "error" in entry:
            return FetchError(entry["error"])
        return Page(entry["url"], entry["html"], entry["content_type"])

    def _store(self, url: str, answer: Page | FetchError) -> None:
        path = self._cache_path(url)
        if path is None:
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        entry: dict[str, str | bool] = ({"error": str(answer)} if isinstance(answer, FetchError) else
                                        {"url": answer.url, "html": answer.html, "content_type": answer.content_type})
        entry["public_only"] = self.public_only
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(entry), encoding="utf-8")
        temporary.replace(path)

    # ------------------------------------------------------------------ fetching

    async def get(self, url: str) -> Page:
        """The page at ``url`` (redirects followed, each checked); ``FetchError`` saying why not.
        Lines of one page share one fetch: the last ``RECENT`` answers are kept in memory, and a
        page being fetched is waited for, not fetched again."""
        answer = self._recent.get(url)
        if isinstance(answer, FetchError):
            raise answer
        if answer is not None:
            return answer
        while url in self._inflight:
            try:
                return await asyncio.shield(self._inflight[url])
            except _Stopped:
                pass  # its fetch was cancelled: fetched here (after the one who stopped let go of it)
        future: asyncio.Future[Page] = asyncio.get_running_loop().create_future()
        self._inflight[url] = future
        try:
            page = await self._get_cached(url)
        except FetchError as error:
            if not isinstance(error, Late) and not str(error).startswith("timeout"):
                self._remember(url, error)  # a slow answer is not remembered: it may come in time next
            future.set_exception(error)
            future.exception()  # retrieved: no "never retrieved" warning when nobody else waited
            raise
        except BaseException:  # cancelled (its caller went away): whoever waits fetches it anew
            future.set_exception(_Stopped())
            future.exception()
            raise
        finally:
            del self._inflight[url]
        self._remember(url, page)
        future.set_result(page)
        return page

    def _remember(self, url: str, answer: Page | FetchError) -> None:
        self._recent.put(url, answer)

    async def _get_cached(self, url: str) -> Page:
        cached = self._cached(url)
        if isinstance(cached, FetchError):
            raise cached
        if cached is not None:
            return cached
        try:
            page = await self._get_in_time(url)
        except FetchError as error:
            if not isinstance(error, Blocked | Late) and "timeout" not in str(error):
                self._store(url, error)  # a 404 stays a 404 for the cache's lifetime
            raise
        self._store(url, page)
        return page

    @property
    def time_allowed(self) -> float:
        """Seconds a whole page fetch may take."""
        return self.deadline if self.deadline is not None else DEADLINE_TIMEOUTS * self.timeout

    async def _get_in_time(self, url: str) -> Page:
        limit = self.time_allowed
        scope = asyncio.timeout(limit)
        try:
            async with scope:
                return await self._get(url)
        except TimeoutError as exc:
            if not scope.expired():
                raise
            raise Late(f"the page did not arrive within {limit:g} s") from exc

    async def _get(self, url: str) -> Page:
        current = url
        for _ in range(6):  # redirects
            parts = urlsplit(current)
            if parts.scheme not in ("http", "https") or not parts.hostname:
                raise FetchError(f"not a web address: {current}")
            try:
                httpx.URL(current)
            except httpx.InvalidURL as exc:
                raise FetchError(f"not a web address: {current} ({exc})") from exc
            address = None  # checked at every hop, and connected to: not resolved a second time
            if self.public_only:
                address = await asyncio.to_thread(check_public, current, self.allowed_hosts)
            if self.respect_robots and not await self._allowed(current, address):
                raise FetchError(f"refused by robots.txt of {parts.netloc}")
            response = await self._request(current, address)
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

    async def _request(self, url: str, address: str | None = None) -> Fetched:
        """One answer, retried on timeouts, failed connections and 5xx/429 (``with_retries``); with
        ``address``, asked of that address (the one checked) under the URL's host name."""
        assert self._client is not None, "use the fetcher in `async with`"
        client = self._client
        host = urlsplit(url).netloc
        lock = self._hosts.setdefault(host, asyncio.Lock())
        target, headers, extensions = _pinned(url, address)

        async def attempt() -> Fetched:
            try:
                async with lock:  # the host's turn: requests start one at a time, `delay` apart
                    wait = self._last.get(host, 0.0) + self.delay - time.monotonic()
                    if wait > 0:
                        await asyncio.sleep(wait)
                    try:
                        request = client.build_request("GET", target, headers=headers, extensions=extensions)
                        response = await client.send(request, stream=True)
                    finally:
                        self._last[host] = time.monotonic()
                try:  # the body outside the host's turn: a trickling page holds up no other
                    fetched = await self._read(response)
                finally:
                    await response.aclose()
            except httpx.TimeoutException:
                raise Again(f"timeout (no answer within {self.timeout:g} s)") from None
            except httpx.DecodingError as exc:
                raise FetchError(f"the page's compressed body is broken ({exc})") from exc
            except httpx.ConnectError as exc:
                raise Again(_connect_failure(exc, url)) from None
            except httpx.TransportError as exc:
                raise Again(f"connection failed ({exc.__class__.__name__}: {exc})") from None
            if fetched.status_code >= 500 or fetched.status_code == 429:
                raise Again(f"HTTP {fetched.status_code}")
            return fetched

        return await with_retries(self.retries, attempt, FetchError)

    async def _read(self, response: httpx.Response) -> Fetched:
        """The answer with its body decompressed (capped at ``max_bytes`` after decompression)."""
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

    async def _allowed(self, url: str, address: str | None = None) -> bool:
        parts = urlsplit(url)
        root = f"{parts.scheme}://{parts.netloc}"
        if root not in self._robots:
            parser: urllib.robotparser.RobotFileParser | None = urllib.robotparser.RobotFileParser()
            try:
                response = await self._request(f"{root}/robots.txt", address)
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
