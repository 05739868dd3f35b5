"""A node bounds every analysis before and while it runs: a frequency breakdown whose values would
take more than ``max_analysis_bytes`` is refused before it starts (it used to build a 336-MB
answer); analyses run under the scheduler with the query's deadline, so one stops at
``query_timeout`` and when its client goes away; a query refused for its size is refused again at
once."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from cowbird.core.errors import LimitExceeded, OutOfMemory
from cowbird.engines import Deadline
from cowbird.engines.analyses import distribution, spans
from cowbird.engines.analyses.frequency import frequency
from tests.clock import never, wait_until
from tests.node.conftest import client_for, make_app

pytestmark = pytest.mark.anyio


async def test_a_frequency_whose_values_would_be_too_large_is_refused_before_it_runs(
    sample_registry: Path, big_registry: Path
) -> None:
    app = make_app(sample_registry, big_registry, max_analysis_bytes=1024 * 1024)
    async for node in client_for(app):
        wide = await node.post("/v1/frequency", json={"partition": "big", "query": '[pos="P1"]', "attribute": "word",
                                                      "on": "match[-1000]..match[1000]"})
        assert wide.status_code == 400 and wide.json()["code"] == "limit_exceeded", wide.text
        assert "would take about" in wide.json()["detail"]  # refused on its estimate, not after running
        narrow = await node.post("/v1/frequency", json={"partition": "big", "query": '[pos="P1"]', "attribute": "word",
                                                        "on": "match[-1]..match[1]"})
        assert narrow.status_code == 200 and sum(narrow.json()["counts"]) == 12_000


def test_the_spans_of_a_breakdown_hold_at_most_as_many_tokens_as_a_sort(sample_registry: Path, big_registry: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from cowbird.core.analysis_spec import parse_span
    from cowbird.engines.native import NativeEngine

    engine = NativeEngine.open(big_registry, "big")
    result = engine.run('[pos="P1"]', "standard", 500, Deadline())
    matches = result.matches  # type: ignore[attr-defined]
    monkeypatch.setattr(spans, "MAX_SORT_CELLS", 100_000)
    with pytest.raises(LimitExceeded, match="more than a node counts at once"):
        frequency(spans.NO_DEADLINE, engine.store, matches, "word", parse_span("match..match[10]"), "", 10**6)


@pytest.mark.slow  # 1.1 s here (make quick leaves it out)
async def test_an_analysis_stops_at_the_query_timeout(sample_registry: Path, big_registry: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """An analysis is work like a query's: under the node's deadline, not a thread left running."""
    stopped: list[float] = []

    def endless(deadline: Deadline, *args: object, **kwargs: object) -> object:
        started = time.monotonic()
        try:
            while True:
                deadline.check()
                time.sleep(0.01)
        finally:
            stopped.append(time.monotonic() - started)

    monkeypatch.setattr(distribution, "distribution", endless)
    app = make_app(sample_registry, big_registry, query_timeout=1.0)
    async for node in client_for(app):
        answer = await node.post("/v1/distribution", json={"partition": "big", "query": '[pos="P1"]',
                                                           "attribute": "text_genre"})
        assert answer.status_code == 504 and answer.json()["code"] == "timeout", answer.text
    assert stopped and stopped[0] < 3


async def test_a_query_refused_for_its_size_is_refused_again_at_once(sample_registry: Path, big_registry: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app(sample_registry, big_registry, query_timeout=0.5)
    async for node in client_for(app):
        service = app.state.node.service
        engine = service.engine("big")
        calls: list[str] = []

        def counted(*args: object, run: Any = engine.run, seen: list[str] = calls, **kwargs: object) -> object:
            seen.append(str(args[0]))
            return run(*args, **kwargs)

        monkeypatch.setattr(engine, "run", counted)
        for _ in range(3):
            answer = await node.post("/v1/count", json={"partition": "big", "query": "[]{3,} []{500}"})
            assert answer.status_code == 400 and answer.json()["code"] == "limit_exceeded", answer.text
        assert len(calls) == 1  # planned once; then remembered


async def test_a_query_stopped_for_the_memory_others_held_runs_when_asked_again(
    sample_registry: Path, big_registry: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A query stopped by the node's memory budget was stopped for what the node held then, not for
    what it is: asked again, it runs. What is remembered of a refusal is its reason, not the
    exception (whose traceback would keep the refused evaluation's arrays alive)."""
    app = make_app(sample_registry, big_registry, query_timeout=0.5)
    async for node in client_for(app):
        service = app.state.node.service
        engine = service.engine("big")
        stops = [1]

        def stopped_once(*args: object, run: Any = engine.run, stops: list[int] = stops, **kwargs: object) -> object:
            if stops:
                stops.pop()
                raise OutOfMemory("the query was stopped: the queries running on the node held too much")
            return run(*args, **kwargs)

        monkeypatch.setattr(engine, "run", stopped_once)
        first = await node.post("/v1/count", json={"partition": "big", "query": "[]"})
        assert first.status_code == 400 and "the query was stopped" in first.json()["detail"]
        again = await node.post("/v1/count", json={"partition": "big", "query": "[]"})
        assert again.status_code == 200 and again.json()["total"] > 0, again.text
        refused = await node.post("/v1/count", json={"partition": "big", "query": "[]{3,} []{500}"})
        assert refused.status_code == 400 and refused.json()["code"] == "limit_exceeded"
        assert list(service.refused.values()) == [refused.json()["detail"]]


async def test_the_health_check_says_how_long_the_node_worked_on_a_call(sample_registry: Path,
                                                                       big_registry: Path) -> None:
    """After a timeout the front end asks whether the node got the call and worked on it (a slow
    query: spare the replica) or never got it (held up on the way: ask the replica)."""
    app = make_app(sample_registry, big_registry)
    async for node in client_for(app):
        call = "0123456789abcdef"
        answer = await node.post("/v1/count", json={"partition": "big", "query": '[pos="P1"]'},
                                 headers={"X-Cowbird-Call": call})
        assert answer.status_code == 200
        worked = (await node.get("/health", params={"call": call})).json()["call_seconds"]
        assert isinstance(worked, float) and 0 <= worked < 5
        assert (await node.get("/health", params={"call": "fedcba9876543210"})).json()["call_seconds"] is None
        assert (await node.get("/health")).json()["call_seconds"] is None
        app.state.node.calls.start("00000000aaaaaaaa")
        app.state.node.calls.running["00000000aaaaaaaa"] -= 0.5  # at work for half a second now
        running = (await node.get("/health", params={"call": "00000000aaaaaaaa"})).json()["call_seconds"]
        assert running >= 0.5


def test_time_the_node_stood_still_is_not_work_on_a_call(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    from cowbird.node import guard

    now = 1000.0  # the guard's clock, set by hand: a loaded machine cannot move it
    monkeypatch.setattr(guard, "time", SimpleNamespace(monotonic=lambda: now))
    calls = guard.Calls()
    calls.running["aaaaaaaa"] = now - 6.0  # got the call 6 s ago
    calls.last_tick = now - 6.0
    calls._note_freeze(now - 5.9)  # ticking
    calls._note_freeze(now - 0.5)  # then stopped (SIGSTOP) for 5.4 s, ticking again since
    # 6 s since the call, less the 5.4 s less one tick (0.25 s) the node stood still
    assert calls.seconds("aaaaaaaa") == pytest.approx(0.85)
    calls.end("aaaaaaaa")
    assert calls.seconds("aaaaaaaa") == pytest.approx(0.85)  # ended: its span is kept
    calls.last_tick = now - 3.0  # asked right after standing still, before the tick
    calls.running["bbbbbbbb"] = now - 3.5
    assert calls.seconds("bbbbbbbb") == 0.0  # got during the standstill, asked before the node ticked again


async def test_a_query_is_heavy_by_the_work_it_did_not_by_the_clock() -> None:
    """On a busy machine a short query takes longer on the clock without being heavier: only CPU
    time makes it heavy (a short query made heavy waited for the heavy place behind a 36-s one)."""
    from cowbird.node.scheduler import Scheduler

    scheduler = Scheduler(concurrent=1, queued=4, queue_seconds=5, heavy=1, heavy_after=0.2)

    def waits(deadline: Deadline) -> bool:  # on the clock for 0.6 s, little CPU: it keeps its place
        for _ in range(12):
            deadline.check()
            time.sleep(0.05)  # real time passing without work is what this shows: not a wait for something
        return scheduler.slots.locked()

    def works(deadline: Deadline) -> bool:  # 0.3 s of CPU: heavy, its place given back (on the event loop)
        until = time.thread_time() + 0.3
        while time.thread_time() < until:
            deadline.check()
        wait_until(lambda: not scheduler.slots.locked(), timeout=10, every=0.01, what="the place given back")
        return scheduler.slots.locked()

    async def watch(deadline: Deadline) -> None:
        await never()

    assert await scheduler.run(waits, 10, watch) is True
    assert await scheduler.run(works, 10, watch) is False


async def test_an_estimate_past_heavy_after_gives_its_place_back_but_waits_for_no_heavy_place() -> None:
    """An estimate (a probe) is bounded by its own CPU time: one that runs past ``heavy_after`` hands
    its place to short queries, but does not wait for the heavy place behind a heavy query (under load
    estimates waited there until the front end gave up on them and refused the request)."""
    from cowbird.node.scheduler import Scheduler

    scheduler = Scheduler(concurrent=1, queued=4, queue_seconds=5, heavy=1, heavy_after=0.2)
    assert scheduler.heavy.acquire(blocking=False)  # a heavy query holds the one heavy place

    def works(deadline: Deadline) -> tuple[bool, int]:  # 0.3 s of CPU
        until = time.thread_time() + 0.3
        while time.thread_time() < until:
            deadline.check()
        wait_until(lambda: not scheduler.slots.locked(), timeout=10, every=0.01, what="the place given back")
        return scheduler.slots.locked(), scheduler.heavy_running()

    async def watch(deadline: Deadline) -> None:
        await never()

    assert await asyncio.wait_for(scheduler.run(works, 10, watch, probe=True), 10) == (False, 0)
    assert scheduler.heavy_running() == 0 and not scheduler.slots.locked()
    scheduler.heavy.release()  # the heavy place was never taken twice (a bounded semaphore would say so)


async def test_background_work_of_a_few_tenths_of_a_second_never_waits_for_the_heavy_place(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    """Background work becomes heavy after ``LONG_AFTER`` CPU seconds, not ``heavy_after``: an analysis
    of 0.4 s runs to its end while a heavy query holds the one heavy place (it waited there for the
    heavy query's minutes, and analyses took 7 s under load)."""
    from cowbird.node import scheduler as scheduler_module
    from cowbird.node.scheduler import LONG_AFTER, Asker, Scheduler

    # not starved by the other tests at the lowest priority
    monkeypatch.setattr(scheduler_module, "lower_priority", lambda thread, *niceness: None)
    scheduler = Scheduler(concurrent=1, queued=4, queue_seconds=5, heavy=1, heavy_after=0.2, background=1)
    assert scheduler.heavy.acquire(blocking=False)  # a heavy query holds the one heavy place
    assert LONG_AFTER > 0.4

    def works(deadline: Deadline) -> int:
        until = time.thread_time() + 0.4
        while time.thread_time() < until:
            deadline.check()
        return scheduler.heavy_running()

    async def watch(deadline: Deadline) -> None:
        await never()

    assert await asyncio.wait_for(scheduler.run(works, 10, watch, Asker(background=True)), 10) == 0
    scheduler.heavy.release()
