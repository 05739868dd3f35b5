"""A node that stops answering (SIGSTOP: its connections open, nothing answered) is left for its
replica within about a second, by interactive work too, and costs later requests nothing — no
wait, no health check of their own — until its one prober sees it answer again.

Real processes over HTTP: a front end and two nodes, the first partition on both (node 0 first in
line), the others on node 1 only. Node 0 is reached through a TCP proxy in this process
(:class:`CountingProxy`), which counts what it is asked while it stands still.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cluster import Cluster
from tests.frontend.conftest import Partitioned
from tests.support import JsonObject, free_ports

pytestmark = [pytest.mark.e2e, pytest.mark.load, pytest.mark.loopback]  # stops a node under load: only loopback exists

QUERIES = ['[pos="P1"]', '[word="w7"] [pos="P3"]', '[word="w1.*"] []? [pos="P0"]']
WORKERS = 4
"""Previews at once while the node stands still."""
HUNG_SECONDS = 10.0
"""How long previews are started after the node is stopped."""
BOUND = 5.0
"""Seconds each of those previews may take (the old wait was ``[nodes] timeout``: 30 s here)."""
REQUEST = re.compile(rb"(?:^|\r\n)(?:GET|POST|PUT|DELETE|HEAD) (/[^ ?\r\n]*)[^ \r\n]* HTTP/1\.[01]\r\n")


class CountingProxy:
    """A TCP proxy to ``127.0.0.1:target`` on a thread of its own: bytes go both ways untouched, and
    every HTTP request line the front end sends is noted (when, path) the moment it arrives — also
    while the node behind stands still."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.port = free_ports(1)[0]
        self.requests: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> CountingProxy:
        self._thread.start()
        assert self._ready.wait(10), "the proxy did not start"
        return self

    def since(self, moment: float, until: float = float("inf")) -> list[str]:
        """Paths asked for between two moments (``time.monotonic``)."""
        with self._lock:
            return [path for at, path in self.requests if moment <= at < until]

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        server = self._loop.run_until_complete(asyncio.start_server(self._handle, "127.0.0.1", self.port))
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pipe(reader, up_writer, note=True), self._pipe(up_reader, writer, note=False),
                             return_exceptions=True)

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter, note: bool) -> None:
        tail = b""
        try:
            while data := await source.read(65536):
                if note:
                    scan = tail + data
                    found = [m.group(1).decode() for m in REQUEST.finditer(scan) if m.end() > len(tail)]
                    with self._lock:
                        self.requests += [(time.monotonic(), path) for path in found]
                    tail = scan[-512:]
                sink.write(data)
                await sink.drain()
        finally:
            sink.close()

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


class ProxiedCluster(Cluster):
    """A cluster whose front end reaches node 0 through ``proxy`` (node 0 listens on the proxy's target)."""

    def __init__(self, proxy: CountingProxy, *args: Any, **front: Any) -> None:
        super().__init__(*args, **front)
        self.proxy = proxy
        self.node_ports[0] = proxy.target

    def node_url(self, index: int) -> str:
        return self.proxy.url if index == 0 else super().node_url(index)


@pytest.fixture
def cluster(big_parts: Partitioned, tmp_path: Path) -> Iterator[ProxiedCluster]:
    p1, p2, p3 = big_parts.ids
    proxy = CountingProxy(free_ports(1)[0]).start()
    # [nodes] timeout 30 s: what a preview waited on the stopped node before (and the hedge defaults)
    cluster = ProxiedCluster(proxy, tmp_path, big_parts.registry, big_parts.manifest, "big", [[p1], [p1, p2, p3]],
                             node_timeout=30.0, deadline=60.0)
    try:
        cluster.start()
        yield cluster
    finally:
        cluster.close()
        proxy.close()


async def preview(client: httpx.AsyncClient, k: int) -> tuple[str, int, JsonObject, float]:
    query, offset = QUERIES[k % len(QUERIES)], (k * 37) % 200
    started = time.monotonic()
    response = await client.get("/api/v1/query", params={"corpus": "big", "q": query, "syntax": "cqp",
                                                         "offset": offset})
    assert response.status_code == 200, response.text
    return query, offset, response.json(), time.monotonic() - started


def exact(body: JsonObject) -> tuple[int, list[int]]:
    """What must not change when a node stops: the total and the page's positions."""
    assert body["complete"] is True and body["failed"] == [], body
    return body["total"], [hit["position"] for hit in body["hits"]]


@pytest.mark.timeout(240)
def test_previews_leave_a_stopped_node_for_its_replica_within_seconds(cluster: ProxiedCluster) -> None:
    proxy = cluster.proxy

    async def scenario() -> None:
        async with httpx.AsyncClient(base_url=cluster.url, timeout=120) as client:
            reference = {}
            for k in range(3 * len(QUERIES)):  # every query at the offsets used below, all nodes well
                query, offset, body, _ = await preview(client, k)
                reference[query, offset] = exact(body)
            assert any(path.startswith("/v1/") for path in proxy.since(0)), "node 0 was not used"

            cluster.pause(0)  # SIGSTOP: node 0's connections stay open, nothing is answered
            stopped = time.monotonic()
            taken: list[float] = []

            async def worker(first: int) -> None:
                k = first
                while time.monotonic() < stopped + HUNG_SECONDS:
                    query, offset, body, seconds = await preview(client, k % (3 * len(QUERIES)))
                    assert exact(body) == reference[query, offset], (query, offset)  # no partition partial
                    taken.append(seconds)
                    k += WORKERS

            await asyncio.gather(*(worker(w) for w in range(WORKERS)))
            hung = proxy.since(stopped)
            assert max(taken) < BOUND, sorted(taken)[-5:]  # not [nodes] timeout (30 s)
            assert len(taken) >= 20, taken
            # what the stopped node was asked: the calls waiting when it stopped, the health checks
            # that found it silent, and its prober's (after 1, 2, 4, 5, 5 ... s) — none per preview
            calls, checks = [p for p in hung if p.startswith("/v1/")], [p for p in hung if p == "/health"]
            assert len(calls) <= 2 * WORKERS and len(checks) <= 8, (len(taken), hung)

            cluster.resume(0)  # SIGCONT: its prober finds it again, and previews use it
            resumed = time.monotonic()
            k = 0
            while not any(path.startswith("/v1/") for path in proxy.since(resumed)):
                assert time.monotonic() < resumed + 30, f"node 0 not used again: {proxy.since(resumed)}"
                query, offset, body, _ = await preview(client, k % (3 * len(QUERIES)))
                assert exact(body) == reference[query, offset]
                k += 1
                await asyncio.sleep(0.1)
            for k in range(3 * len(QUERIES)):
                query, offset, body, _ = await preview(client, k)
                assert exact(body) == reference[query, offset]

    asyncio.run(scenario())
