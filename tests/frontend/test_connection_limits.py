"""Connections bounded per client address, against the demo's real processes (issue 63, finding 3).

One address (127.0.0.2: every address of 127.0.0.0/8 is on loopback) opens 2,300 connections, each
with a request it never finishes — more than a process's 2,048 — to the front end, then to a node:
its first ``max_connections_per_client`` are held (until their headers' time runs out: 408), the
rest are answered 429 with Retry-After as they open, and the previews of other addresses all
succeed meanwhile. A node with ``allowed_clients`` answers a connection from any other address 403
before reading it; behind a trusted proxy, the client its X-Forwarded-For names is counted.
Before the limits, the 2,300 connections took the process's every place (uvicorn's
``limit_concurrency``): every preview was answered 503, or lost the node's partitions. And 40
anonymous addresses flooding ``/api/v1/estimate`` are told to come back (429, Retry-After) past
their lane, while another address's previews all succeed (finding 6; before, every estimate ran).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import os
import selectors
import socket
import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from cowbird.commands.demo import DemoStack
from cowbird.serving import server as serving
from tests.clock import wait_until
from tests.support import free_ports, running_demo, served_in_thread

pytestmark = [pytest.mark.e2e, pytest.mark.load, pytest.mark.loopback]

FLOOD = 2_300
"""Connections the flooding address opens: more than a process's 2,048, as in the attack."""
FRONT_PER_CLIENT = 64
NODE_PER_CLIENT = 512
ALLOWED = ["127.0.0.1", "127.0.0.2", "127.0.0.3"]
ASKED = itertools.count()
"""Each preview asks a query of its own: no answer comes from a cache, every one reaches the nodes."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    """The demo's two nodes (accepting 127.0.0.1-3 only) and one front-end process, defaults otherwise."""
    before = os.environ.get("COWBIRD_NODE_ALLOWED_CLIENTS")
    os.environ["COWBIRD_NODE_ALLOWED_CLIENTS"] = str(ALLOWED).replace("'", '"')
    try:
        with running_demo(tmp_path_factory.mktemp("connections"), workers=1) as stack:
            yield stack
    finally:
        if before is None:
            os.environ.pop("COWBIRD_NODE_ALLOWED_CLIENTS", None)
        else:
            os.environ["COWBIRD_NODE_ALLOWED_CLIENTS"] = before


def half_sent(source: str, port: int, count: int) -> list[socket.socket]:
    """``count`` connections from ``source`` to 127.0.0.1:``port``, each with a request whose headers
    never end."""
    opened = []
    try:
        for _ in range(count):
            sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            opened.append(sock)
            sock.bind((source, 0))
            sock.settimeout(10)
            sock.connect(("127.0.0.1", port))
            sock.sendall(b"GET /api/v1/corpora HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
            sock.setblocking(False)
    except BaseException:
        closed(opened)
        raise
    return opened


def closed(sockets: list[socket.socket]) -> None:
    for sock in sockets:
        sock.close()


def answers(sockets: list[socket.socket], seconds: float, wanted: int) -> dict[socket.socket, bytes]:
    """What each socket has been sent (until the server closed it, or ``seconds`` passed), once
    ``wanted`` of them were closed by the server."""
    got = {sock: b"" for sock in sockets}
    done: set[socket.socket] = set()
    with selectors.DefaultSelector() as selector:
        for sock in sockets:
            selector.register(sock, selectors.EVENT_READ)
        end = time.monotonic() + seconds
        while len(done) < wanted and time.monotonic() < end:
            for key, _ in selector.select(timeout=0.2):
                ready = key.fileobj
                assert isinstance(ready, socket.socket)
                try:
                    chunk = ready.recv(65536)
                except (ConnectionResetError, BlockingIOError):
                    chunk = b""
                if chunk:
                    got[ready] += chunk
                else:
                    selector.unregister(ready)
                    done.add(ready)
    return got


def previews(url: str, source: str, count: int = 10) -> list[tuple[int, bool]]:
    """``count`` previews from ``source``, one after the other: each one's status and completeness."""
    found = []
    with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=30) as client:
        for _ in range(count):
            query = f'[pos="NN.*"] [word!="never-{next(ASKED)}"]'
            answer = client.get(f"{url}/api/v1/query", params={"corpus": "sample", "q": query, "syntax": "cqp"})
            found.append((answer.status_code, answer.status_code == 200 and answer.json().get("complete") is True))
    return found


def refused(got: dict[socket.socket, bytes], status: bytes) -> list[bytes]:
    return [answer for answer in got.values() if answer.startswith(b"HTTP/1.1 " + status + b" ")]


@pytest.mark.timeout(180)
def test_one_address_holding_2300_half_sent_requests_leaves_the_front_end_to_everyone(demo: DemoStack) -> None:
    flood = half_sent("127.0.0.2", demo.port, FLOOD)
    try:
        during = previews(demo.url, "127.0.0.1") + previews(demo.url, "127.0.0.3", 5)
        assert during == [(200, True)] * 15, during
        got = answers(flood, 10.0, FLOOD - FRONT_PER_CLIENT)
        turned_away = refused(got, b"429")
        assert len(turned_away) == FLOOD - FRONT_PER_CLIENT, (len(turned_away), {g[:40] for g in got.values()})
        assert all(b"\r\nretry-after: 2\r\n" in answer.lower() for answer in turned_away)
        assert b"too many connections from 127.0.0.2 at once (at most 64)" in turned_away[0]
        held = [sock for sock, answer in got.items() if not answer]
        assert len(held) == FRONT_PER_CLIENT
        # a half-sent request holds its place for its headers' time, not for ever
        late = answers(held, serving.HEADER_SECONDS + 10, len(held))
        assert len(refused(late, b"408")) == FRONT_PER_CLIENT
    finally:
        closed(flood)
    again = previews(demo.url, "127.0.0.2", 2)  # the address itself is served again
    assert again == [(200, True)] * 2


@pytest.mark.timeout(180)
def test_one_address_holding_2300_half_sent_requests_to_a_node_leaves_it_to_the_front_end(demo: DemoStack) -> None:
    node = demo.node_ports[1]  # the second node serves partitions of its own (the first's are replicated on it)
    assert set(demo.served[1]) - set(demo.served[0])
    flood = half_sent("127.0.0.2", node, FLOOD)
    try:
        during = previews(demo.url, "127.0.0.3")
        assert during == [(200, True)] * 10, during
        got = answers(flood, 10.0, FLOOD - NODE_PER_CLIENT)
        turned_away = refused(got, b"429")
        assert len(turned_away) == FLOOD - NODE_PER_CLIENT, (len(turned_away), {g[:40] for g in got.values()})
        assert all(b"\r\nretry-after: 2\r\n" in answer.lower() for answer in turned_away)
    finally:
        closed(flood)


def test_a_node_refuses_a_client_not_in_allowed_clients(demo: DemoStack) -> None:
    node = f"http://127.0.0.1:{demo.node_ports[0]}"
    with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.4"), timeout=10) as stranger:
        answer = stranger.get(f"{node}/health")
    assert answer.status_code == 403
    assert "connections from 127.0.0.4 are not accepted here (the server's allowed_clients)" in answer.text
    sock = half_sent("127.0.0.4", demo.node_ports[0], 1)  # refused before its request is read
    try:
        got = answers(sock, 5.0, 1)
        assert refused(got, b"403"), got
    finally:
        closed(sock)
    with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.3"), timeout=10) as allowed:
        assert allowed.get(f"{node}/health").status_code == 200


FLOODERS = 40
"""Anonymous addresses (127.0.1.1 ...) sending estimates, two at a time each (their fair use), as in the attack."""


def estimating(url: str, address: str, stop: threading.Event, answered: list[httpx.Response]) -> None:
    with httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=60) as client:
        while not stop.is_set():
            answered.append(client.get(f"{url}/api/v1/estimate", params={
                "corpus": "sample", "q": '[word=".*e.*"] []{0,3} [pos="NN.*"]', "syntax": "cqp"}))


@pytest.mark.timeout(180)
def test_forty_addresses_flooding_estimates_leave_another_addresss_previews_alone(demo: DemoStack) -> None:
    stop = threading.Event()
    answered: list[httpx.Response] = []
    flood = [threading.Thread(target=estimating, args=(demo.url, f"127.0.1.{k // 2 + 1}", stop, answered))
             for k in range(2 * FLOODERS)]
    for thread in flood:
        thread.start()
    try:
        wait_until(lambda: len(answered) >= 2 * FLOODERS, 60, "the flood is on")
        timed = []
        for _ in range(10):
            started = time.monotonic()
            timed.append((previews(demo.url, "127.0.0.3", 1)[0], time.monotonic() - started))
    finally:
        stop.set()
        for thread in flood:
            thread.join(60)
    assert [found for found, _ in timed] == [(200, True)] * 10
    refused = [a for a in answered if a.status_code == 429]
    assert refused and all(a.headers["Retry-After"] == "1" for a in refused)
    assert all(a.status_code in (200, 429) for a in answered)


@pytest.fixture
def behind_a_proxy() -> Iterator[tuple[int, list[str]]]:
    """A small app behind cowbird's guarded protocol, 2 connections per client, 127.0.0.5 a trusted
    proxy: ``/hold`` answers once ``/release`` was asked; the clients holding, as the app saw them."""
    holding: list[str] = []
    released: list[asyncio.Event] = []

    async def hold(request: Request) -> PlainTextResponse:
        if not released:
            released.append(asyncio.Event())
        holding.append(request.headers.get("x-forwarded-for", ""))
        await released[0].wait()
        return PlainTextResponse("held")

    async def release(request: Request) -> PlainTextResponse:
        released[0].set()
        return PlainTextResponse("released")

    app = Starlette(routes=[Route("/hold", hold), Route("/release", release)])
    port = free_ports(1)[0]
    config = uvicorn.Config(app, host="127.0.0.1", port=port, http=serving.GuardedHttp, log_level="warning")
    setattr(config, serving.LIMITS, serving.ConnectionLimits(
        per_client=2, trusted_proxies=serving.networks(["127.0.0.5"], "trusted_proxies")))
    with served_in_thread(config):
        yield port, holding


def test_a_trusted_proxys_requests_count_for_the_client_it_names(behind_a_proxy: tuple[int, list[str]]) -> None:
    """From the proxy, two requests of 203.0.113.9 at work: its third is 429, also when the client put
    another address first in X-Forwarded-For (only the proxy's own entry is believed); another client
    through the same proxy is served. From an address that is no proxy, X-Forwarded-For counts for
    nothing: its own connections are counted."""
    port, holding = behind_a_proxy
    url = f"http://127.0.0.1:{port}"

    def ask(source: str, forwarded: str, path: str = "/hold") -> httpx.Response:
        with httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=10) as client:
            return client.get(url + path, headers={"X-Forwarded-For": forwarded})

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        held = [pool.submit(ask, "127.0.0.5", "203.0.113.9") for _ in range(2)]
        held += [pool.submit(ask, "127.0.0.6", "203.0.113.7") for _ in range(2)]
        wait_until(lambda: len(holding) == 4, 10, "four requests at work")
        for forwarded in ("203.0.113.9", "198.51.100.1, 203.0.113.9"):
            refused = ask("127.0.0.5", forwarded)
            assert refused.status_code == 429 and refused.headers["Retry-After"] == "2", refused
            assert "too many connections from 203.0.113.9 at once (at most 2)" in refused.text
        refused = ask("127.0.0.6", "192.0.2.1")  # the X-Forwarded-For of a client: no other address
        assert refused.status_code == 429 and "from 127.0.0.6 at once" in refused.text
        other = pool.submit(ask, "127.0.0.5", "203.0.113.10")
        wait_until(lambda: len(holding) == 5, 10, "another client of the proxy at work")
        assert ask("127.0.0.7", "", "/release").text == "released"
        assert [f.result().status_code for f in [*held, other]] == [200] * 5
