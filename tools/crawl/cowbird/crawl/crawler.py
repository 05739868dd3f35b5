"""The crawl: seed URLs to WARC files, polite, focused, resumable and bounded (docs/crawling.md).

One asyncio loop hands URLs from the SQLite frontier (`frontier.py`) to at most `concurrency` fetches;
httpcore (httpx's transport) fetches them through a network backend that connects only to addresses on
the allow-list, so no redirect or DNS answer can take a crawl elsewhere. Before a host's first page its
robots.txt is fetched (and cached in the frontier); a host and its IP are each asked again only their
delay after the end of their last request. Each page goes to the WARC files as it came over the wire
(`warc.py`); an HTML page is then scored in a worker process by `cowbird build`'s own stages (`score.py`),
and its links are queued with a priority from that score and from what their host has given so far
(focused), or by depth (breadth). The crawl stops at a budget (pages, bytes, time), at SIGTERM/SIGINT
(the requests under way finish), or when the frontier is empty; then it writes report.json and report.md.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ipaddress
import json
import multiprocessing
import os
import signal
import socket
import sys
import time
from collections import Counter
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

import httpcore

from cowbird.build.language import BADNESS_LIMIT
from cowbird.core.version import __version__
from cowbird.crawl import report
from cowbird.crawl.frontier import Entry, Frontier
from cowbird.crawl.robots import Rules
from cowbird.crawl.score import Verdict, analyse, decoded
from cowbird.crawl.urls import host_of, normalise, trap
from cowbird.crawl.warc import WarcFiles

AGENT_TOKEN = "cowbird-crawler"
"""The product token robots.txt groups are matched against (``User-agent: cowbird-crawler``)."""
DEFAULT_MIME = ("text/html", "application/xhtml+xml")
ROBOTS_BYTES = 512 * 1024  # Google reads the first 500 KiB of a robots.txt
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


class CrawlError(Exception):
    """A crawl that cannot start (bad seeds, an OUT that is not a crawl): one line for the user."""


@dataclass(frozen=True)
class CrawlOptions:
    out: Path
    seeds: tuple[str, ...] = ()
    language: str = "de"
    strategy: str = "focused"  # or "breadth"
    pages: int | None = None
    bytes: int | None = None
    seconds: float | None = None
    host_good_limit: int = 100
    delay: float = 1.0
    ip_delay: float | None = None
    allow: tuple[Network, ...] | None = None  # None: public (globally routable) addresses only
    max_depth: int = 10
    max_url_length: int = 512
    page_bytes: int = 5 * 1024 * 1024
    page_seconds: float = 30.0
    mime: tuple[str, ...] = DEFAULT_MIME
    retries: int = 2
    max_redirects: int = 5
    concurrency: int = 16
    max_badness: float = BADNESS_LIMIT
    agent: str = field(default_factory=lambda: f"{AGENT_TOKEN}/{__version__} (cowbird corpus crawler)")

    def settings(self) -> dict[str, Any]:
        return {"language": self.language, "strategy": self.strategy, "pages": self.pages, "bytes": self.bytes,
                "seconds": self.seconds, "host_good_limit": self.host_good_limit, "delay": self.delay,
                "ip_delay": self.ip_delay, "allow": None if self.allow is None else [str(n) for n in self.allow],
                "max_depth": self.max_depth, "max_url_length": self.max_url_length, "page_bytes": self.page_bytes,
                "page_seconds": self.page_seconds, "mime": list(self.mime), "retries": self.retries,
                "max_redirects": self.max_redirects, "concurrency": self.concurrency}


def parse_allow(values: tuple[str, ...] | list[str]) -> tuple[Network, ...] | None:
    """--allow CIDR...: the address ranges a crawl may connect to; none given (or `public`): public only."""
    networks: list[Network] = []
    for value in values:
        for part in value.split(","):
            part = part.strip()
            if not part or part == "public":
                continue
            try:
                networks.append(ipaddress.ip_network(part, strict=False))
            except ValueError as error:
                raise CrawlError(f"--allow {part!r}: not an address range such as 127.0.0.0/8 ({error})") from None
    return tuple(networks) or None


def allowed(address: str, allow: tuple[Network, ...] | None) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if allow is None:
        return ip.is_global
    return any(ip in network for network in allow)


class OutsideAllowList(httpcore.ConnectError):
    """A connection to an address the crawl may not reach."""


class Resolver:
    """Host names to one checked address each, cached: the address the pacing uses is the one connected to."""

    def __init__(self, allow: tuple[Network, ...] | None) -> None:
        self.allow = allow
        self.cache: dict[str, str] = {}

    async def resolve(self, name: str, port: int) -> str:
        """The address to connect to for `name`; OSError when it has none, OutsideAllowList when it may not
        be reached."""
        if name in self.cache:
            return self.cache[name]
        try:
            address = str(ipaddress.ip_address(name.strip("[]")))
        except ValueError:
            infos = await asyncio.get_running_loop().getaddrinfo(name, port, type=socket.SOCK_STREAM)
            if not infos:
                raise OSError(f"no address for {name}") from None
            address = str(infos[0][4][0])
        if not allowed(address, self.allow):
            raise OutsideAllowList(f"{name} is {address}, outside the allowed address ranges (--allow)")
        self.cache[name] = address
        return address


class AllowListBackend(httpcore.AsyncNetworkBackend):
    """httpcore's own backend, connecting only to addresses the resolver checked (redirects included)."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self.inner = httpcore.AnyIOBackend()

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                          socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        address = await self.resolver.resolve(host, port)
        return await self.inner.connect_tcp(address, port, timeout, local_address, socket_options)

    async def connect_unix_socket(self, path: str, timeout: float | None = None,
                                  socket_options: Any = None) -> httpcore.AsyncNetworkStream:
        raise OutsideAllowList("a crawl connects to no Unix socket")

    async def sleep(self, seconds: float) -> None:
        await self.inner.sleep(seconds)


@dataclass
class Fetched:
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    truncated: str | None  # "length", "time" or None


def read_seeds(source: str) -> list[str]:
    """Seed URLs from a file (one a line, # comments), an earlier crawl's OUT folder (its frontier's queued
    URLs, best first), or one URL."""
    path = Path(source)
    if path.is_dir():
        database = path / "crawl.sqlite3"
        if not database.is_file():
            raise CrawlError(f"{source}: a folder without crawl.sqlite3 is not the output of a crawl")
        earlier = Frontier(database)
        try:
            rows = earlier.db.execute("SELECT url FROM urls WHERE state = 'queued' ORDER BY priority DESC, seq")
            return [str(row[0]) for row in rows]
        finally:
            earlier.close()
    if path.is_file():
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if source.startswith(("http://", "https://")):
        return [source]
    raise CrawlError(f"{source}: no such file or folder, and not an http(s) URL")


def _pool_context() -> multiprocessing.context.BaseContext:
    return multiprocessing.get_context("forkserver" if sys.platform.startswith("linux") else "spawn")


def _worker_ignores_signals() -> None:
    """A scoring worker leaves SIGINT and SIGTERM to the crawler (Ctrl-C reaches the whole process group):
    the crawler stops cleanly and ends its workers itself."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


class Crawler:
    """One run of a crawl into `options.out` (a new crawl, or the resumption of the one there)."""

    def __init__(self, options: CrawlOptions, quiet: bool = False) -> None:
        self.options = options
        self.quiet = quiet
        out = options.out
        out.mkdir(parents=True, exist_ok=True)
        self.frontier = Frontier(out / "crawl.sqlite3", delay=options.delay, ip_delay=options.ip_delay,
                                 host_yield=options.strategy == "focused")
        self.warc = WarcFiles(out / "warc")
        self.interrupted = self.frontier.recover(self.warc.fetched)
        self.resumed = self.frontier.get_meta("started") is not None
        if not self.resumed:
            self.frontier.set_meta("started", str(time.time()))
        self.frontier.set_meta("settings", json.dumps(options.settings()))
        self.counters: Counter[str] = Counter(json.loads(self.frontier.get_meta("counters") or "{}"))
        self.rules: dict[str, Rules] = {}
        self.resolver = Resolver(options.allow)
        self.stop_reason: str | None = None
        self.inflight: set[asyncio.Task[None]] = set()
        self.started = time.monotonic()
        self.last_progress = 0.0
        self.last_line = 0.0
        self.pool: concurrent.futures.ProcessPoolExecutor | None = None

    # seeds -------------------------------------------------------------------------------------------
    def add_seeds(self, seeds: list[str]) -> int:
        rows = []
        for seed in seeds:
            url = normalise(seed)
            if url is None:
                self.counters["seed not an http(s) URL"] += 1
                continue
            rows.append((url, host_of(url), 0, 10.0, None))
        return self.frontier.add_many(rows)

    # the loop ----------------------------------------------------------------------------------------
    def budget_left(self) -> bool:
        pages, size, _ = self.frontier.totals()
        o = self.options
        if o.pages is not None and pages >= o.pages:
            self.stop_reason = self.stop_reason or f"page budget reached ({o.pages:,} pages)"
        elif o.bytes is not None and size >= o.bytes:
            self.stop_reason = self.stop_reason or f"byte budget reached ({o.bytes:,} bytes)"
        elif o.seconds is not None and time.monotonic() - self.started >= o.seconds:
            self.stop_reason = self.stop_reason or f"time budget reached ({o.seconds:g} s)"
        return self.stop_reason is None

    def free_slots(self) -> int:
        free = self.options.concurrency - len(self.inflight)
        if self.options.pages is not None:
            free = min(free, self.options.pages - self.frontier.totals()[0] - len(self.inflight))
        return max(0, free)

    async def run(self) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._signalled, sig)
        self.pool = self.new_pool()
        backend = AllowListBackend(self.resolver)
        self.http = httpcore.AsyncConnectionPool(
            max_connections=self.options.concurrency * 2, max_keepalive_connections=self.options.concurrency,
            keepalive_expiry=5.0, network_backend=backend, retries=0)
        self.write_progress("running", force=True)
        try:
            async with self.http:
                while self.budget_left():
                    await self.resolve_hosts()
                    free = self.free_slots()
                    entries = self.frontier.take(free) if free else []
                    for entry in entries:
                        task = asyncio.create_task(self.fetch(entry))
                        self.inflight.add(task)
                        task.add_done_callback(self.inflight.discard)
                    if not entries and not self.inflight:
                        wait = self.frontier.waiting()
                        if wait is None and not self.frontier.unresolved(1):
                            self.stop_reason = "the frontier is empty"
                            break
                    self.write_progress("running")
                    if self.inflight:
                        await asyncio.wait(self.inflight, timeout=0.05, return_when=asyncio.FIRST_COMPLETED)
                    else:
                        await asyncio.sleep(0.02)
                self.write_progress("stopping", force=True)
                if self.inflight:  # the requests under way finish (each is bounded by --page-seconds)
                    await asyncio.wait(self.inflight, timeout=self.options.page_seconds + 5)
                for task in list(self.inflight):
                    task.cancel()
        finally:
            self.pool.shutdown(wait=True, cancel_futures=True)
            self.warc.close()
        result = self.finish()
        return result

    def new_pool(self) -> concurrent.futures.ProcessPoolExecutor:
        return concurrent.futures.ProcessPoolExecutor(max_workers=max(1, (os.cpu_count() or 2) - 1),
                                                      mp_context=_pool_context(), initializer=_worker_ignores_signals)

    async def score(self, entry: Entry, fetched: Fetched, content_type: str | None) -> Verdict | None:
        """The page scored in a worker; None when the worker ended under it (killed): a new one is started
        and the page is kept unscored (its response is in the WARC: it is never fetched again)."""
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self.pool, analyse, entry.url, fetched.body, content_type, header(fetched.headers, "content-encoding"),
                self.options.language, self.options.max_badness)
        except BrokenProcessPool:
            self.counters["not scored: the scoring process ended"] += 1
            if self.pool is not None:
                self.pool.shutdown(wait=False, cancel_futures=True)
            self.pool = self.new_pool()
            return None

    def _signalled(self, sig: int) -> None:
        self.stop_reason = self.stop_reason or f"stopped by {signal.Signals(sig).name}"

    # hosts' addresses --------------------------------------------------------------------------------
    async def resolve_hosts(self) -> None:
        hosts = self.frontier.unresolved(64)
        if not hosts:
            return

        async def one(host: str) -> None:
            name, _, port = host.rpartition(":") if host.rsplit(":", 1)[-1].isdigit() else (host, "", "")
            try:
                address = await self.resolver.resolve(name or host, int(port or 80))
            except OutsideAllowList as error:
                self.counters["host outside the allowed addresses"] += 1
                self.frontier.drop_host(host, str(error))
                return
            except (OSError, UnicodeError) as error:
                self.counters["host without an address (DNS)"] += 1
                self.frontier.drop_host(host, f"DNS lookup failed: {error}")
                return
            self.frontier.set_ip(host, address)

        await asyncio.gather(*(one(host) for host in hosts))

    # one URL -----------------------------------------------------------------------------------------
    def rules_for(self, host: str) -> Rules | None:
        if host not in self.rules:
            cached = self.frontier.robots(host)
            if cached is None:
                return None
            self.rules[host] = Rules(cached[0], cached[1], AGENT_TOKEN)
        return self.rules[host]

    def host_delay(self, host: str) -> float | None:
        rules = self.rules.get(host)
        return None if rules is None else rules.delay()

    async def fetch(self, entry: Entry) -> None:
        try:
            await self._fetch(entry)
        except Exception as error:  # noqa: BLE001 - one URL's failure is that URL's, never the crawl's end
            self.counters["crawler error"] += 1
            self.frontier.drop(entry.url, f"crawler error: {type(error).__name__}: {error}"[:300])
            self.frontier.release(entry, time.time(), self.host_delay(entry.host))

    async def _fetch(self, entry: Entry) -> None:
        rules = self.rules_for(entry.host)
        if rules is None:
            await self.fetch_robots(entry)
            return
        if not rules.allowed(entry.url):
            self.counters["disallowed by robots.txt"] += 1
            self.frontier.drop(entry.url, "disallowed by robots.txt")
            self.frontier.release(entry, None)
            return
        fetched, error = await self.request(entry.url, self.options.page_bytes)
        ended = time.time()
        self.frontier.release(entry, ended, self.host_delay(entry.host))
        if isinstance(error, OutsideAllowList):
            self.counters["host outside the allowed addresses"] += 1
            self.frontier.drop_host(entry.host, str(error))
            self.frontier.drop(entry.url, str(error))
            return
        content_type = None if fetched is None else header(fetched.headers, "content-type")
        media = (content_type or "").split(";", 1)[0].strip().lower()
        if fetched is not None and fetched.status == 200 and media not in self.options.mime:
            self.counters[f"not fetched: MIME type {media or 'none'}"] += 1  # its body was never read
            self.frontier.drop(entry.url, f"MIME type {media or 'none'} (--mime)")
            return
        retry_after = None if fetched is None else self.retry_after(fetched)
        if fetched is None or fetched.status == 429 or fetched.status >= 500:
            reason = f"HTTP {fetched.status}" if fetched is not None else f"{type(error).__name__}: {error}"[:200]
            backoff = max(retry_after or 0.0, self.options.delay * 2 ** entry.tries, 1.0)
            if self.frontier.retry(entry.url, ended + backoff, self.options.retries + 1, reason):
                self.counters["retried"] += 1
                return
            self.counters["failed after retries"] += 1
            if fetched is None:
                return
        assert fetched is not None
        self.warc.write(entry.url, entry.ip, self.request_headers(), "GET", f"{fetched.status} {fetched.reason}",
                        fetched.headers, fetched.body, truncated=fetched.truncated)
        if fetched.truncated:
            self.counters[f"truncated ({fetched.truncated})"] += 1
        verdict: Verdict | None = None
        if 300 <= fetched.status < 400:
            self.follow_redirect(entry, header(fetched.headers, "location"))
            outcome = "redirect"
        elif fetched.status != 200:
            outcome = f"HTTP {fetched.status}"
        elif media in DEFAULT_MIME:
            verdict = await self.score(entry, fetched, content_type)
            outcome = verdict.outcome if verdict is not None else "not scored: the scoring process ended"
        else:
            outcome = "not scored"
        good = verdict is not None and verdict.good
        self.frontier.record_page(entry.url, entry.host, fetched.status, len(fetched.body), good,
                                  verdict.language if verdict else None, outcome, ended)
        if verdict is not None:
            self.queue_links(entry, verdict)
        if good:
            _, host_good = self.frontier.host_good(entry.host)
            if host_good >= self.options.host_good_limit:
                dropped = self.frontier.drop_host(
                    entry.host, f"host at its good-document limit ({self.options.host_good_limit}, --host-good-limit)")
                self.counters["hosts at their good-document limit"] += 1
                self.counters["URLs of hosts at their limit"] += dropped

    async def fetch_robots(self, entry: Entry) -> None:
        """The host's robots.txt, before any page of it; the URL goes back to the queue."""
        scheme = entry.url.split("://", 1)[0]
        url = f"{scheme}://{entry.host}/robots.txt"
        fetched, error = await self.request(url, ROBOTS_BYTES)
        ended = time.time()
        if isinstance(error, OutsideAllowList):
            self.frontier.drop_host(entry.host, str(error))
            self.frontier.release(entry, ended)
            return
        if fetched is None:
            status, body = 599, b""  # no answer: the host is left out, as for a 5xx
            self.counters["robots.txt not answered"] += 1
        else:
            status, body = fetched.status, fetched.body
            if 300 <= status < 400:
                status = 404  # a redirected robots.txt: no rules (a redirect is not followed here)
            self.warc.write(url, entry.ip, self.request_headers(), "GET", f"{fetched.status} {fetched.reason}",
                            fetched.headers, fetched.body, truncated=fetched.truncated)
        if fetched is not None and status < 300:  # the rules as text: its content encoding undone
            body = decoded(fetched.body, header(fetched.headers, "content-encoding"))
        self.frontier.set_robots(entry.host, status, body)
        self.counters["robots.txt fetched"] += 1
        rules = Rules(status, body, AGENT_TOKEN)
        self.rules[entry.host] = rules
        self.frontier.release(entry, ended, rules.delay())
        if status >= 500:
            self.frontier.drop_host(entry.host, f"robots.txt answered {status}: the host is not crawled")
            self.frontier.drop(entry.url, f"robots.txt answered {status}")
            self.counters["hosts left out (robots.txt failing)"] += 1
        else:
            self.frontier.requeue(entry)

    def request_headers(self) -> list[tuple[str, str]]:
        return [("User-Agent", self.options.agent),
                ("Accept", "text/html,application/xhtml+xml;q=0.9,*/*;q=0.1"),
                ("Accept-Language", f"{self.options.language},*;q=0.5"),
                ("Accept-Encoding", "gzip, deflate")]

    async def request(self, url: str, limit: int) -> tuple[Fetched | None, BaseException | None]:
        """GET `url`: the response with at most `limit` bytes of its body (as sent, content encoding kept)
        within --page-seconds, or the error that stopped it before any answer."""
        seconds = self.options.page_seconds
        timeout = {"connect": min(10.0, seconds), "read": seconds, "write": seconds, "pool": seconds}
        fetched: Fetched | None = None
        chunks: list[bytes] = []
        size = 0
        try:
            async with asyncio.timeout(seconds):
                async with self.http.stream("GET", url, headers=self.request_headers(),
                                            extensions={"timeout": timeout}) as response:
                    headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in response.headers]
                    reason = response.extensions.get("reason_phrase", b"").decode("latin-1", "replace")
                    fetched = Fetched(response.status, reason or "-", headers, b"", None)
                    media = (header(headers, "content-type") or "").split(";", 1)[0].strip().lower()
                    if response.status == 200 and limit != ROBOTS_BYTES and media not in self.options.mime:
                        return fetched, None  # not read: only the MIME types asked for
                    async for chunk in response.aiter_stream():
                        chunks.append(chunk)
                        size += len(chunk)
                        if size >= limit:
                            fetched.truncated = "length"
                            break
        except TimeoutError as error:
            if fetched is None:
                return None, error
            fetched.truncated = "time"
        except (httpcore.NetworkError, httpcore.ProtocolError, httpcore.TimeoutException, OSError) as error:
            if fetched is None or not chunks:
                return None, error
            fetched.truncated = "disconnect"
        assert fetched is not None
        fetched.body = b"".join(chunks)[:limit]
        return fetched, None

    @staticmethod
    def retry_after(fetched: Fetched) -> float | None:
        value = header(fetched.headers, "retry-after")
        if not value:
            return None
        try:
            return min(3600.0, max(0.0, float(value)))
        except ValueError:
            pass
        try:
            return min(3600.0, max(0.0, parsedate_to_datetime(value).timestamp() - time.time()))
        except (TypeError, ValueError):
            return None

    # links -------------------------------------------------------------------------------------------
    def follow_redirect(self, entry: Entry, location: str | None) -> None:
        target = normalise(location, base=entry.url) if location else None
        if target is None:
            self.counters["redirect without a usable Location"] += 1
            return
        if entry.hops + 1 > self.options.max_redirects:
            self.counters[f"more than {self.options.max_redirects} redirects (--max-redirects)"] += 1
            return
        why = trap(target, entry.depth, self.options.max_depth, self.options.max_url_length)
        if why is not None:
            self.counters[f"link left out: {why.split(' --')[0]}"] += 1
            return
        self.frontier.add(target, host_of(target), entry.depth, entry.priority + 0.001, hops=entry.hops + 1)

    def queue_links(self, entry: Entry, verdict: Verdict) -> None:
        depth = entry.depth + 1
        rows: dict[str, tuple[str, str, int, float, float | None]] = {}
        for href in verdict.links:
            url = normalise(href, base=entry.url)
            if url is None or url in rows:
                continue
            why = trap(url, depth, self.options.max_depth, self.options.max_url_length)
            if why is not None:
                self.counters[f"link left out: {why.split(' --')[0]}"] += 1
                continue
            # focused: the linking page's score; the frontier adds its host's yield when it hands the URL out
            priority = -float(depth) if self.options.strategy == "breadth" else verdict.score
            rows[url] = (url, host_of(url), depth, priority, verdict.score)
        if rows:
            self.frontier.add_many(rows.values())

    # progress and the end ----------------------------------------------------------------------------
    def write_progress(self, state: str, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last_progress < 1.0:
            return
        self.last_progress = now
        pages, size, good = self.frontier.totals()
        counts = self.frontier.counts()
        value = {
            "state": state, "pid": os.getpid(), "updated": time.time(), "elapsed": round(now - self.started, 1),
            "pages": pages, "bytes": size, "good": good, "good_share": round(good / pages, 4) if pages else None,
            "queued": counts["queued"], "inflight": len(self.inflight), "hosts": self.frontier.hosts(),
            "urls": counts, "stop_reason": self.stop_reason,
            "budget": {"pages": self.options.pages, "bytes": self.options.bytes, "seconds": self.options.seconds},
        }
        report.write_json(self.options.out / "progress.json", value)
        self.frontier.set_meta("counters", json.dumps(self.counters))
        if not self.quiet and (force or now - self.last_line >= 5.0):
            self.last_line = now
            share = f"{100 * good / pages:.1f} %" if pages else "-"
            print(f"crawl: {pages:,} pages ({good:,} good, {share}), {size / 1e6:,.1f} MB, {counts['queued']:,} "
                  f"queued, {self.frontier.hosts():,} hosts, {now - self.started:,.0f} s", file=sys.stderr, flush=True)

    def finish(self) -> dict[str, Any]:
        self.frontier.set_meta("counters", json.dumps(self.counters))
        result = report.build_report(self.frontier, self.options, self.counters, self.stop_reason or "stopped",
                                     self.interrupted, time.monotonic() - self.started)
        report.write_json(self.options.out / "report.json", result)
        (self.options.out / "report.md").write_text(report.markdown(result), encoding="utf-8")
        done = "finished" if self.stop_reason == "the frontier is empty" else "stopped"
        self.write_progress(done, force=True)
        self.frontier.close()
        return result


def header(headers: list[tuple[str, str]], name: str) -> str | None:
    for key, value in headers:
        if key.lower() == name:
            return value
    return None


def crawl(options: CrawlOptions, seeds: list[str], quiet: bool = False) -> dict[str, Any]:
    """Run (or resume) the crawl in options.out; returns its report."""
    crawler = Crawler(options, quiet=quiet)
    new = crawler.add_seeds(seeds)
    if not crawler.resumed and new == 0:
        crawler.frontier.close()
        crawler.warc.close()
        raise CrawlError("no seed URL to start from (give http(s) URLs, one a line)")
    return asyncio.run(crawler.run())
