"""A search whose last partition counts slowly, in real Chromium against real processes: the page of
hits shows at once, with a total said not to be final ("≥ … · 2 of 3 partitions counted") that
becomes exact when that partition has counted; Cancel, or a new search, stops the search, and the
front end drops its request to the node.

The stack is ``cowbird.commands.demo.DemoStack``'s (two nodes and the front end as processes) serving the
sample text 45 times over, in three partitions of 15 copies each, so that the first page of ``the``
(the 100 hits the search page asks for) lies in the first partition. The front end reaches the last
partition through a TCP proxy of this test that, while held, holds its count requests
(``POST /v1/count``) until released."""

from __future__ import annotations

import asyncio
import contextlib
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import TypeVar

import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.pages import api, expect_url_with, search
from tests.support import SAMPLE_VRT, free_ports, sample_options

pytestmark = pytest.mark.e2e

COPIES, PARTITION_TOKENS = 45, 1400  # the sample text has 93 tokens, 9 of them "the": 3 partitions, 135 "the" each
QUERY, PAGE = "the", 100
WAIT_S = 20  # the longest any step may take (a busy 2-core machine)
REQUEST_LINE = re.compile(rb"[A-Z]+ \S+ HTTP/1\.[01]\r\n")
EXACT = re.compile(r"^1–100 of [\d,]+ hits · [\d,.]+ per million tokens · \d+ ms$")
PARTIAL = re.compile(r"^1–100 of ≥ ([\d,]+) hits · 2 of 3 partitions counted$")


class HoldingProxy:
    """A TCP proxy on loopback in front of one node, running its own event loop in a thread.

    While held, a request that opens with ``POST /v1/count`` is not forwarded until released (its
    body, in later chunks, waits behind it); every other request goes through at once. A chunk that
    opens with a request line starts the next request (HTTP/1.1 keep-alive, which httpx does not
    pipeline), and each request goes to the node on a connection of its own, so that the node's
    keep-alive timeout cannot close a connection whose request is held. ``held`` is set when a
    count is held; ``dropped`` when the front end closes a connection whose count is held."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.port = 0
        self.held = threading.Event()
        self.dropped = threading.Event()
        self._holding = False
        self._release = asyncio.Event()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._stopping: asyncio.Event | None = None
        self._tasks: set[asyncio.Task[object]] = set()
        self._thread = threading.Thread(target=self._run, name="holding-proxy", daemon=True)

    def start(self) -> None:
        self._thread.start()
        if not self._ready.wait(WAIT_S):
            raise RuntimeError("the proxy did not start")

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._stop_serving)
        self._thread.join(WAIT_S)

    def hold(self) -> None:
        """From now on, count requests wait for `release`."""
        self.held.clear()
        self.dropped.clear()
        self._release = asyncio.Event()
        self._holding = True

    def release(self) -> None:
        """The counts held go on, and the next ones go through."""
        self._holding = False
        self._loop.call_soon_threadsafe(self._release.set)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        finally:
            self._loop.close()

    def _stop_serving(self) -> None:
        if self._stopping is not None:
            self._stopping.set()

    async def _serve(self) -> None:
        self._stopping = asyncio.Event()
        server = await asyncio.start_server(self._connection, "127.0.0.1", 0)
        self.port = int(server.sockets[0].getsockname()[1])
        self._ready.set()
        await self._stopping.wait()
        server.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        chunks: asyncio.Queue[bytes] = asyncio.Queue()
        closed = asyncio.Event()  # the front end closed its side
        reading = asyncio.ensure_future(self._read(reader, chunks, closed))
        upstream: tuple[asyncio.StreamWriter, asyncio.Future[None]] | None = None
        try:
            while data := await chunks.get():
                if REQUEST_LINE.match(data):
                    if self._holding and data.startswith(b"POST /v1/count "):
                        self.held.set()
                        if not await self._released_before(closed):
                            self.dropped.set()
                            return
                    if upstream is not None:  # its response has been forwarded: the front end asks again
                        _close(upstream)
                    node_reader, node_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
                    upstream = node_writer, asyncio.ensure_future(_pipe(node_reader, writer))
                if upstream is not None:
                    upstream[0].write(data)
                    await upstream[0].drain()
        except OSError:
            pass
        finally:
            reading.cancel()
            if upstream is not None:
                _close(upstream)
            writer.close()
            if task is not None:
                self._tasks.discard(task)

    async def _released_before(self, closed: asyncio.Event) -> bool:
        """Waits for the release, or for the front end to close the connection (False)."""
        released = asyncio.ensure_future(self._release.wait())
        gone = asyncio.ensure_future(closed.wait())
        done, pending = await asyncio.wait({released, gone}, return_when=asyncio.FIRST_COMPLETED)
        for waiting in pending:
            waiting.cancel()
        return released in done

    @staticmethod
    async def _read(reader: asyncio.StreamReader, chunks: asyncio.Queue[bytes], closed: asyncio.Event) -> None:
        try:
            while data := await reader.read(65536):
                chunks.put_nowait(data)
        except OSError:
            pass
        finally:
            closed.set()
            chunks.put_nowait(b"")


async def _pipe(source: asyncio.StreamReader, target: asyncio.StreamWriter) -> None:
    try:
        while data := await source.read(65536):
            target.write(data)
            await target.drain()
    except OSError:
        pass


def _close(upstream: tuple[asyncio.StreamWriter, asyncio.Future[None]]) -> None:
    writer, piping = upstream
    piping.cancel()
    writer.close()


def write_copies(path: Path) -> None:
    """The sample text ``COPIES`` times over, its text and sentence ids numbered on."""
    head, body = SAMPLE_VRT.read_text(encoding="utf-8").split("\n", 1)

    def copy(k: int) -> str:
        return re.sub(r'id="([ts])(\d+)"', lambda m: f'id="{m[1]}{int(m[2]) + 100 * k}"', body)

    path.write_text(head + "\n" + "".join(copy(k) for k in range(COPIES)), encoding="utf-8")


P = TypeVar("P", bound="HoldingProxy")


@contextlib.contextmanager
def held_stack(base: Path, make_proxy: Callable[[int], P]) -> Iterator[tuple[DemoStack, P]]:
    """A stack over the sample text several times over in three partitions, the last reached
    through ``make_proxy(its node's port)`` (started, not holding)."""
    vrt = base / "sample.vrt"
    write_copies(vrt)
    encoding = replace(sample_options(base / "data" / "sample", base / "registry" / "sample",
                                      partition_tokens=PARTITION_TOKENS), input=vrt)
    front, node1, node2 = free_ports(3)
    stack = DemoStack(base, front, (node1, node2), encoding=encoding, log_level="warning", replica=False)
    stack.prepare()
    assert len(stack.partitions) == 3, stack.partitions
    last = stack.partitions[-1]
    node = next(port for port, served in zip(stack.node_ports, stack.served, strict=True) if last in served)
    proxy = make_proxy(node)
    proxy.start()
    config = base / "cowbird.toml"
    text = config.read_text(encoding="utf-8")
    direct = f'{last} = ["http://127.0.0.1:{node}"]\n'
    assert direct in text, text
    config.write_text(text.replace(direct, f'{last} = ["http://127.0.0.1:{proxy.port}"]\n'), encoding="utf-8")
    try:
        stack.start()
        yield stack, proxy
    finally:
        proxy.release()
        stack.stop()
        proxy.stop()


def held_stack_fixture(name: str, folder: str, make_proxy: Callable[[int], P]) -> object:
    """A module-scoped fixture ``name``: ``held_stack`` in a fresh temporary ``folder``, its last
    partition reached through ``make_proxy``'s proxy (not held); ``(stack, proxy)``."""

    @pytest.fixture(scope="module", name=name)
    def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DemoStack, P]]:
        with held_stack(tmp_path_factory.mktemp(folder).resolve(), make_proxy) as held:
            yield held

    return stack


slow = held_stack_fixture("slow", "progressive", HoldingProxy)


def start_search(page: Page, query: str) -> None:
    """Submits the form, without waiting for the search to end."""
    page.fill("#q", query)
    page.press("#q", "Enter")


def refs_shown(page: Page) -> list[str]:
    refs: list[str] = page.locator("#kwic tbody a.ref").evaluate_all("ls => ls.map((a) => a.getAttribute('href'))")
    return refs


def wait_for_early_hits(page: Page, proxy: HoldingProxy) -> int:
    """The page of hits is shown while the last partition's count is held, the total said not to be
    final; the hits counted so far."""
    expect(page.locator("#kwic tbody tr")).to_have_count(PAGE, timeout=WAIT_S * 1000)
    summary = page.locator("#summary")
    expect(summary).to_have_text(PARTIAL, timeout=WAIT_S * 1000)
    assert proxy.held.wait(WAIT_S)  # the count the hits came without
    expect(page.locator("#cancel")).to_be_visible()
    found = PARTIAL.match(summary.inner_text())
    assert found is not None
    return int(found[1].replace(",", ""))


@contextlib.contextmanager
def early_hits(page: Page, proxy: HoldingProxy) -> Iterator[int]:
    """QUERY searched while the last partition's count is held: inside, its first hits are shown
    (``wait_for_early_hits``, the hits counted so far given); the count is released on leaving."""
    proxy.hold()
    try:
        start_search(page, QUERY)
        yield wait_for_early_hits(page, proxy)
    finally:
        proxy.release()


def test_the_hits_come_first_and_the_total_becomes_exact(slow: tuple[DemoStack, HoldingProxy], page: Page) -> None:
    site, proxy = slow
    page.goto(site.url)
    with early_hits(page, proxy) as at_least:
        early = refs_shown(page)
        expect(page.locator("#progress")).to_be_visible()
    summary = page.locator("#summary")
    expect(summary).to_have_text(EXACT, timeout=WAIT_S * 1000)
    expect(page.locator("#progress")).to_be_hidden()
    expect(page.locator("#cancel")).to_be_hidden()
    plain = api(site, "/api/v1/query", corpus="sample", q=QUERY, limit=PAGE)
    total = int(plain["total"])
    assert total == 3 * at_least // 2 and total > at_least  # each partition has as many
    expect(summary).to_contain_text(f"1–100 of {total:,} hits")
    assert "≥" not in summary.inner_text()
    assert early == refs_shown(page) == [hit["ref"] for hit in plain["hits"]]
    expect_url_with(page, "q=the")  # a search that succeeded is in the URL


def test_cancel_stops_the_search_and_its_work_on_the_node(slow: tuple[DemoStack, HoldingProxy], page: Page) -> None:
    site, proxy = slow
    page.goto(site.url)
    search(page, "house")  # a search that ended: the URL's
    before, length = page.url, page.evaluate("history.length")
    with early_hits(page, proxy):
        assert not proxy.dropped.is_set()
        page.click("#cancel")
        summary = page.locator("#summary")
        expect(summary).to_contain_text("Search cancelled", timeout=WAIT_S * 1000)
        expect(page.locator("#progress")).to_be_hidden()
        assert "≥" in summary.inner_text() and "of 3 partitions counted" in summary.inner_text()  # not final
        assert proxy.dropped.wait(WAIT_S), "the front end did not drop its request to the node"
        expect(page.locator("#kwic tbody tr")).to_have_count(PAGE)  # the hits shown stay
        assert page.url == before and page.evaluate("history.length") == length  # not a search of the history
        for button in ("#next", "#random", "#open-download"):  # not the hits of the search in the URL
            expect(page.locator(button)).to_be_disabled()
    search(page, QUERY)  # the same search, whole this time
    expect(page.locator("#summary")).to_have_text(EXACT)
    total = int(api(site, "/api/v1/query", corpus="sample", q=QUERY, limit=0)["total"])
    expect(page.locator("#summary")).to_contain_text(f"1–100 of {total:,} hits")


def test_a_new_search_stops_the_one_running(slow: tuple[DemoStack, HoldingProxy], page: Page) -> None:
    site, proxy = slow
    page.goto(site.url)
    with early_hits(page, proxy):
        start_search(page, "house")  # the form searches again while a search runs
        assert proxy.dropped.wait(WAIT_S), "the front end did not drop the first search's request to the node"
    expected = api(site, "/api/v1/query", corpus="sample", q="house")
    total = int(expected["total"])
    summary = page.locator("#summary")
    exact = rf"^1–{min(total, PAGE)} of {total:,} hits · [\d,.]+ per million tokens · \d+ ms$"
    expect(summary).to_have_text(re.compile(exact),
                                 timeout=WAIT_S * 1000)
    expect(page.locator("#progress")).to_be_hidden()
    assert refs_shown(page) == [hit["ref"] for hit in expected["hits"]]
    expect_url_with(page, "q=house")
