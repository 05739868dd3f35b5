"""Interactive first, fairly (issue 46): which requests are background work, how they take turns in
the front end (one share per viewer), how the nodes run them beside interactive work, and queries
estimated heavy said up front — run as background work, or refused with their estimate before any
node counts them."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from cowbird.core.errors import QueryTimeout
from cowbird.engines import Deadline
from cowbird.frontend.priority import DEEP_SORT, Lanes
from cowbird.node import NodeSettings
from cowbird.node import create_app as create_node
from cowbird.node import scheduler as scheduler_module
from cowbird.node.scheduler import Asker, Scheduler
from cowbird.query import parse_cqp
from cowbird.query.cqp_ast import may_be_slow
from tests.clock import never, until
from tests.frontend.conftest import NODE_TOKEN, Partitioned, engine, front_client, front_settings
from tests.support import assert_problem

BACKGROUND = Asker(background=True)

pytestmark = pytest.mark.anyio
P1 = {"corpus": "big", "q": '[pos="P1"]', "syntax": "cqp"}
WIDE = {"corpus": "big", "q": '[pos="P1"] []{0,40} [pos="P2"]', "syntax": "cqp"}


# -- turns in the front end -------------------------------------------------------------------------

async def test_a_free_slot_goes_to_the_viewer_whose_background_work_cost_least() -> None:
    """One slot. A viewer's heavy query (estimated at 30 node seconds) is at work and three more wait;
    a viewer with one cheap request comes last and is served next; each turn is charged what it
    really cost when it ends, and nothing is kept of a viewer who has nothing left."""
    lanes = Lanes(slots=1)
    first = await lanes.turn("heavy", 30.0)
    order: list[str] = []

    async def work(key: str, name: str, cost: float) -> None:
        turn = await lanes.turn(key, cost)
        order.append(name)
        turn.release(cost * 2)  # it cost twice its estimate

    tasks = [asyncio.create_task(work("heavy", f"h{k}", 30.0)) for k in range(3)]
    await until(lambda: lanes.queued() == 3)
    tasks.append(asyncio.create_task(work("light", "l1", 0.1)))
    await until(lambda: lanes.queued() == 4)
    assert lanes.share("light") == lanes.share("heavy") == 30.0  # it starts at the least charge, not at 0
    first.release(45.0)
    await asyncio.gather(*tasks)
    assert order == ["l1", "h0", "h1", "h2"]
    assert lanes.used == {} and lanes.running == {}


async def test_short_background_work_never_waits_behind_long_work() -> None:
    """Two slots, one of them at most for long work (estimated at 2 node seconds or more). Alice's
    heavy query holds the long slot; Bob's heavy query waits for it, and Carol's 0.2-s analysis,
    which came after Bob's, takes the free slot at once; Bob's runs when Alice's ends."""
    lanes = Lanes(slots=2, long_slots=1)
    order: list[str] = []
    gates: dict[str, asyncio.Event] = {}

    async def work(key: str, cost: float) -> None:
        turn = await lanes.turn(key, cost)
        order.append(key)
        gates[key] = asyncio.Event()
        await gates[key].wait()
        turn.release(cost)

    tasks = [asyncio.create_task(work("alice", 30.0))]
    await until(lambda: order == ["alice"])
    tasks.append(asyncio.create_task(work("bob", 10.0)))
    await until(lambda: lanes.queued() == 1)
    tasks.append(asyncio.create_task(work("carol", 0.2)))
    await until(lambda: order == ["alice", "carol"])
    assert lanes.queued() == 1 and lanes.long_running == 1  # bob waits though a slot is free
    gates["carol"].set()
    await until(lambda: lanes.busy == 1)
    assert order == ["alice", "carol"]
    gates["alice"].set()
    await until(lambda: order == ["alice", "carol", "bob"])
    gates["bob"].set()
    await asyncio.gather(*tasks)
    assert lanes.busy == 0 and lanes.long_running == 0 and not lanes.waiting


async def test_a_viewers_many_requests_take_one_share_and_viewers_take_turns() -> None:
    """Two slots. Alice sends three requests while nobody else waits: two run (the slots are idle).
    Bob and Carol come: each free slot goes to whoever has fewest at work — Bob, then Carol — before
    Alice's third, however long it has waited."""
    lanes = Lanes(slots=2)
    order: list[str] = []
    gates: dict[str, asyncio.Event] = {}

    async def work(key: str, name: str) -> None:
        turn = await lanes.turn(key)
        order.append(name)
        gates[name] = asyncio.Event()
        await gates[name].wait()
        turn.release()

    tasks = [asyncio.create_task(work("alice", name)) for name in ("a1", "a2", "a3")]
    await until(lambda: len(order) == 2 and lanes.queued() == 1)
    assert order == ["a1", "a2"]
    tasks += [asyncio.create_task(work(key, name)) for key, name in [("bob", "b1"), ("carol", "c1")]]
    await until(lambda: lanes.queued() == 3)
    gates["a1"].set()
    await until(lambda: len(order) == 3)
    assert order == ["a1", "a2", "b1"]  # bob (none at work) before alice's third, which came first
    gates["a2"].set()
    await until(lambda: len(order) == 4)
    assert order == ["a1", "a2", "b1", "c1"]
    gates["b1"].set()
    await until(lambda: len(order) == 5)
    assert order == ["a1", "a2", "b1", "c1", "a3"]
    gates["c1"].set()
    gates["a3"].set()
    await asyncio.gather(*tasks)
    assert lanes.busy == 0 and not lanes.waiting and not lanes.running


async def test_a_request_cancelled_in_line_leaves_it() -> None:
    lanes = Lanes(slots=1)
    first = await lanes.turn("alice")
    waiting = asyncio.create_task(lanes.turn("bob"))
    await until(lambda: lanes.queued() == 1)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    assert lanes.queued() == 0
    first.release()
    first.release()  # a second release changes nothing
    assert lanes.busy == 0
    assert (await asyncio.wait_for(lanes.turn("carol"), 1)).key == "carol"


# -- the nodes' scheduler ----------------------------------------------------------------------------

async def test_background_work_never_takes_an_interactive_place() -> None:
    """One interactive place, taken by nothing; one background place: two background evaluations run
    one after the other, and an interactive one runs at once beside them."""
    scheduler = Scheduler(concurrent=1, queued=8, queue_seconds=5, heavy=1, heavy_after=10, background=1)
    running: list[str] = []
    release = threading.Event()

    def slow(deadline: Deadline) -> str:
        running.append("background")
        release.wait(5)
        return "background"

    async def nothing(deadline: Deadline) -> None:
        await never()

    async def as_background() -> str:
        return await scheduler.run(slow, 10, nothing, BACKGROUND)

    first, second = asyncio.create_task(as_background()), asyncio.create_task(as_background())
    await until(lambda: running == ["background"] and scheduler.background_waiting == 1)
    assert running == ["background"]  # the second waits for the one background place
    assert await asyncio.wait_for(scheduler.run(lambda d: "interactive", 10, nothing), 2) == "interactive"
    release.set()
    assert list(await asyncio.gather(first, second)) == ["background", "background"]


async def test_background_work_steps_aside_at_its_checks_while_interactive_work_takes_every_core() -> None:
    """Work-conserving: background work pauses at its checks only while this node's interactive
    evaluations are at work on every core (those paused for a heavy place use none); with a core
    left free it goes on at once, at the lowest priority."""
    scheduler = Scheduler(concurrent=2, queued=8, queue_seconds=5, heavy=1, heavy_after=10, background=1)
    scheduler.cores = 2
    paused: list[float] = []

    def checking(deadline: Deadline) -> None:
        for _ in range(3):
            started = time.perf_counter()
            deadline.check()
            paused.append(time.perf_counter() - started)

    async def nothing(deadline: Deadline) -> None:
        await never()

    async def as_background() -> None:
        await scheduler.run(checking, 10, nothing, BACKGROUND)

    await as_background()
    alone = max(paused)
    paused.clear()
    scheduler.interactive_now = 1  # an interactive evaluation is running: a core is left
    await as_background()
    assert alone < 0.01 and max(paused) < 0.01
    paused.clear()
    scheduler.interactive_now = 2  # on both cores
    await as_background()
    assert min(paused) >= 0.04  # each check gave way (up to 50 ms), then moved on
    paused.clear()
    scheduler.interactive_paused = 1  # one of them waits for the heavy place
    await as_background()
    assert max(paused) < 0.01


async def test_background_work_runs_niced_and_heavy_work_nicer_still() -> None:
    """Background work's threads run at niceness 10 (``BACKGROUND_PRIORITY``), below interactive
    work; heavy evaluations at 19, below short background work."""
    import os

    from cowbird.node.scheduler import BACKGROUND_PRIORITY, LOWEST_PRIORITY

    scheduler = Scheduler(concurrent=2, queued=8, queue_seconds=5, heavy=1, heavy_after=0.05, background=1)
    base = os.getpriority(os.PRIO_PROCESS, 0)

    def niceness(deadline: Deadline) -> int:
        deadline.check()
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    def heavy(deadline: Deadline) -> int:
        until = time.thread_time() + 0.2
        while time.thread_time() < until:
            deadline.check()
        return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    async def nothing(deadline: Deadline) -> None:
        await never()

    assert await scheduler.run(niceness, 10, nothing, BACKGROUND) == max(base, BACKGROUND_PRIORITY)
    assert await scheduler.run(niceness, 10, nothing) == base
    assert await scheduler.run(heavy, 10, nothing) == LOWEST_PRIORITY


async def test_background_work_is_stopped_by_its_cpu_time_not_by_its_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    """A node's deadline for background work is in CPU seconds: paused behind interactive work for
    longer than its deadline it goes on; spinning past it, it is stopped."""
    # its threads keep their priority here: at the lowest, any other busy process on the machine (the
    # other pytest-xdist worker) starves them, and the wall-clock cap (5 times the CPU seconds) ends
    # the work before its CPU seconds are spent
    monkeypatch.setattr(scheduler_module, "lower_priority", lambda thread, *niceness: None)
    scheduler = Scheduler(concurrent=2, queued=8, queue_seconds=5, heavy=1, heavy_after=10, background=1)
    scheduler.cores = 1

    async def nothing(deadline: Deadline) -> None:
        await never()

    def paused(deadline: Deadline) -> str:
        for _ in range(10):  # 10 checks of 50 ms each stepping aside: 0.5 s on the clock, no CPU
            deadline.check()
        return "done"

    def spinning(deadline: Deadline) -> None:
        until = time.monotonic() + 5
        while time.monotonic() < until:
            sum(range(10_000))
            deadline.check()

    async def as_background(work: Any) -> Any:
        return await scheduler.run(work, 0.3, nothing, BACKGROUND)

    scheduler.interactive_now = 1
    assert await as_background(paused) == "done"
    scheduler.interactive_now = 0
    # left alone, spinning returns after 5 s; stopped at its 0.3 s of CPU it raises
    with pytest.raises(QueryTimeout, match="of the node's CPU"):
        await as_background(spinning)


# -- which requests are background work, over HTTP -----------------------------------------------------

class Recorder:
    """A node app that records each request's path and priority header."""

    def __init__(self, app: FastAPI, estimate_seconds: float | None = None) -> None:
        self.app = app
        self.calls: list[tuple[str, str | None]] = []
        self.estimate_seconds = estimate_seconds  # what the node says of every estimate, if set
        self.estimates_fail = False  # every estimate answered 503, as a node too busy to say

    async def handle(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        self.calls.append((request.url.path, request.headers.get("x-cowbird-priority")))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://node") as inner:
            real = await inner.request(request.method, request.url.path, params=request.url.params,
                                       content=body or None, headers=dict(request.headers))
        if request.url.path == "/v1/estimate" and self.estimates_fail:
            return httpx.Response(503, json={"type": "about:blank", "title": "Busy", "status": 503, "code": "busy",
                                             "detail": "the node is busy"})
        if request.url.path == "/v1/estimate" and self.estimate_seconds is not None and real.status_code == 200:
            return httpx.Response(200, json={**real.json(), "seconds": self.estimate_seconds})
        return httpx.Response(real.status_code, content=real.content, headers=real.headers)

    def priorities(self, path: str) -> set[str | None]:
        return {priority for p, priority in self.calls if p == path}


def recording(big: Partitioned, sample: Partitioned, tmp_path: Path, estimate_seconds: float | None = None,
              **limits: Any) -> tuple[Recorder, Any]:
    engines = {pid: engine(big.registry, pid) for pid in big.ids}
    node = Recorder(create_node(NodeSettings(registry=big.registry, token=NODE_TOKEN, max_concurrent_queries=16),
                                engines=dict(engines)), estimate_seconds)
    settings = front_settings(sample, big, tmp_path, **limits)
    for pid in big.ids:
        settings.corpora[1].nodes[pid] = ["http://recorded"]
    return node, front_client(settings, {"node-a": node.app}, {"recorded": httpx.MockTransport(node.handle)})


async def asked_wide(big: Partitioned, sample: Partitioned, tmp_path: Path,
                     estimate_seconds: float) -> AsyncIterator[tuple[Recorder, httpx.AsyncClient, httpx.Response]]:
    """``recording``'s node (estimating each query at ``estimate_seconds`` a partition), a client of its
    front end and the front end's answer to WIDE (once)."""
    node, front = recording(big, sample, tmp_path, estimate_seconds=estimate_seconds)
    async for client in front:
        yield node, client, await client.get("/api/v1/query", params=WIDE)


async def test_cheap_analyses_exports_and_deep_sorted_pages_are_interactive_work(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    """Cost, not kind, classes a request: estimated within the interactive budget, a frequency list, an
    export and a sorted page deep in the hits run at once, their node calls interactive, and say so."""
    node, front = recording(big_parts, sample_parts, tmp_path)
    async for client in front:
        preview = await client.get("/api/v1/query", params=P1)
        assert preview.status_code == 200 and "x-cowbird-priority" not in preview.headers
        assert preview.headers["x-cowbird-class"] == "interactive"
        assert "x-cowbird-estimated-seconds" not in preview.headers  # a query that cannot be slow: not estimated
        assert node.priorities("/v1/count") == {None}
        deep = await client.get("/api/v1/query", params={**P1, "sort": "left1.word", "offset": DEEP_SORT})
        assert deep.status_code == 200 and deep.headers["x-cowbird-class"] == "interactive", deep.headers
        assert "within the interactive 0.1 s" in deep.headers["x-cowbird-class-reason"]
        assert deep.json()["offset"] == DEEP_SORT and len(deep.json()["hits"]) == 100
        frequency = await client.get("/api/v1/frequency", params={**P1, "by": "word"})
        assert frequency.status_code == 200 and frequency.headers["x-cowbird-class"] == "interactive"
        assert float(frequency.headers["x-cowbird-estimated-seconds"]) < 0.1
        assert int(frequency.headers["x-cowbird-wait-ms"]) >= 0
        export = await client.get("/api/v1/export", params={**P1, "limit": 50})
        assert export.status_code == 200 and len(export.text.splitlines()) == 51
        assert export.headers["x-cowbird-class"] == "interactive"
        for path in ("/v1/sortkeys", "/v1/frequency", "/v1/export", "/v1/estimate"):
            assert node.priorities(path) == {None}, path


async def test_analyses_exports_and_deep_sorted_pages_estimated_heavy_are_background_work(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    """The nodes estimate every query at 5 s a partition, beyond the interactive 0.1 s: the same requests
    wait for their turn and run as background work, and say why."""
    node, front = recording(big_parts, sample_parts, tmp_path, estimate_seconds=5.0)
    async for client in front:
        first_sorted = await client.get("/api/v1/query", params={**P1, "sort": "left1.word"})
        assert first_sorted.status_code == 200 and node.priorities("/v1/sortkeys") == {None}  # the first pages
        deep = await client.get("/api/v1/query", params={**P1, "sort": "left1.word", "offset": DEEP_SORT})
        assert deep.status_code == 200 and deep.headers["x-cowbird-priority"] == "background"
        assert deep.headers["x-cowbird-class"] == "background"
        assert "beyond the interactive 0.1 s" in deep.headers["x-cowbird-class-reason"]
        assert node.priorities("/v1/sortkeys") == {None, "background"}
        frequency = await client.get("/api/v1/frequency", params={**P1, "by": "word"})
        assert frequency.status_code == 200 and frequency.headers["x-cowbird-class"] == "background"
        assert float(frequency.headers["x-cowbird-estimated-seconds"]) >= 5
        assert node.priorities("/v1/frequency") == {"background"}
        export = await client.get("/api/v1/export", params={**P1, "limit": 50})
        assert export.status_code == 200 and len(export.text.splitlines()) == 51
        assert node.priorities("/v1/export") == {"background"}


async def test_a_query_estimated_beyond_the_deadline_is_refused_with_its_estimate_before_it_runs(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    """The nodes estimate the query at 500 s a partition; a query may take 120 s, a node call 60 s."""
    async for node, _, answer in asked_wide(big_parts, sample_parts, tmp_path, estimate_seconds=500.0):
        body = assert_problem(answer, 400, "limit_exceeded")
        assert "estimated to take 500 s" in body["detail"] and "more than the 60 s" in body["detail"]
        assert "it was not run" in body["detail"]
        assert node.priorities("/v1/estimate") == {None}
        assert not node.priorities("/v1/count")  # no node counted it


async def test_a_query_estimated_beyond_the_interactive_budget_runs_in_the_background_and_says_so(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    """The nodes estimate the query at 5 s a partition, beyond the interactive 0.1 s."""
    async for node, client, plain in asked_wide(big_parts, sample_parts, tmp_path, estimate_seconds=5.0):
        assert plain.status_code == 200 and plain.headers["x-cowbird-priority"] == "background"
        assert node.priorities("/v1/count") == {"background"}
        streamed = await client.get("/api/v1/query", params={**WIDE, "stream": 1})
        events = [json.loads(line) for line in streamed.text.splitlines()]
        assert events[0]["event"] == "started" and events[0]["background"] is True
        assert events[1]["event"] == "background" and events[1]["estimated_seconds"] == 5.0
        assert "in the background" in events[1]["message"]
        assert events[-1]["event"] == "result" and events[-1]["total"] == plain.json()["total"]
        cheap = await client.get("/api/v1/query", params=P1)  # tokens only: not even estimated
        assert cheap.status_code == 200 and "x-cowbird-priority" not in cheap.headers


async def test_a_query_that_may_be_slow_and_cannot_be_estimated_is_refused_not_run(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    """The nodes cannot estimate it (too busy to answer): its cost has no bound, so it is not run to find
    out (a query relating three labels once ran anyway and took a node to 10 GB) — refused with the
    reason, no node asked to count it; once the nodes can estimate it, it runs. A busy node is asked
    again while the estimate's time lasts (a tenth of the 10 s deadline), as any call is."""
    node, front = recording(big_parts, sample_parts, tmp_path, deadline=10.0)
    node.estimates_fail = True
    async for client in front:
        refused = await client.get("/api/v1/query", params=WIDE)
        assert_problem(refused, 503, "nodes_unavailable")
        assert "the node is busy" in refused.json()["detail"]
        assert node.priorities("/v1/estimate") == {None} and node.priorities("/v1/count") == set()
        assert [path for path, _ in node.calls].count("/v1/estimate") > 3  # three partitions, asked again
        node.estimates_fail = False
        answered = await client.get("/api/v1/query", params=WIDE)
        assert answered.status_code == 200 and answered.json()["complete"], answered.text
        cheap = await client.get("/api/v1/query", params=P1)
        assert cheap.status_code == 200 and "x-cowbird-priority" not in cheap.headers


def test_which_queries_are_estimated_before_they_run() -> None:
    slow = ['[pos="P1"] []* [pos="P2"]', '[pos="P1"] []{0,40} [pos="P2"]', 'a:[] [] b:[] :: a.word = b.word',
            'MU(meet [word="a"] [word="b"] s)', '([pos="P1"]+ [pos="P2"])', 'a:[] b:[] :: distabs(a, b) > 0']
    quick = ['[pos="P1"]', '[word="the"] []{0,1} [word="house"]', '[word="a"] ([word="b"] | [word="c"]){1,3}',
             '[word="house"] :: match.text_genre = "blog" & !(match.text_id = "t1")']
    assert all(may_be_slow(parse_cqp(q)) for q in slow)
    assert not any(may_be_slow(parse_cqp(q)) for q in quick)
