"""The node's scheduler: queries in threads of their own, waiting in line for a place at most
``queue_seconds`` (background work: its deadline) — on a fake clock here, passed when the test says."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from cowbird.core.errors import Busy
from cowbird.engines import Deadline
from cowbird.node.scheduler import Asker, FairPlaces, Scheduler, _in_thread
from tests.clock import FakeClock, never, until

BACKGROUND = Asker(background=True)

pytestmark = pytest.mark.anyio


async def _watch(deadline: Deadline) -> None:
    await never()  # the client stays: cancelled when the evaluation ends


def _scheduler(clock: FakeClock) -> Scheduler:
    return Scheduler(concurrent=1, queued=2, queue_seconds=5, heavy=1, heavy_after=10, background=1, clock=clock)


async def test_a_query_waits_in_line_for_queue_seconds_then_is_busy() -> None:
    clock = FakeClock()
    scheduler = _scheduler(clock)
    await scheduler.slots.acquire()  # the one place is taken
    waiting = asyncio.ensure_future(scheduler.run(lambda deadline: "ran", 10, _watch))
    await clock.when_pending(1, lambda: scheduler.waiting == 1)
    clock.advance(4.9)
    await clock.when_pending(1)
    assert not waiting.done() and scheduler.waiting == 1  # still in line before queue_seconds ...
    clock.advance(0.1)
    with pytest.raises(Busy, match="no place to run the query within 5 s") as busy:
        await waiting  # ... then busy
    assert busy.value.headers == {"Retry-After": "2"} and scheduler.waiting == 0


async def test_a_place_given_back_within_the_wait_is_taken() -> None:
    clock = FakeClock()
    scheduler = _scheduler(clock)
    await scheduler.slots.acquire()
    waiting = asyncio.ensure_future(scheduler.run(lambda deadline: "ran", 10, _watch))
    await clock.advance_when(1, 4.9, lambda: scheduler.waiting == 1)
    scheduler.slots.release()  # the running query ends
    assert await waiting == "ran"
    assert clock.pending == 0 and scheduler.waiting == 0 and not scheduler.slots.locked()


async def test_a_full_line_is_busy_at_once() -> None:
    clock = FakeClock()
    scheduler = _scheduler(clock)
    await scheduler.slots.acquire()
    line = [asyncio.ensure_future(scheduler.run(lambda deadline: "ran", 10, _watch)) for _ in range(2)]
    await clock.when_pending(2, lambda: scheduler.waiting == 2)  # max_queued_queries wait
    with pytest.raises(Busy, match=r"running and queueing as many queries as it may \(2 waiting\)"):
        await scheduler.run(lambda deadline: "ran", 10, _watch)  # no wait: the clock has not moved
    scheduler.slots.release()
    assert await asyncio.gather(*line) == ["ran", "ran"]


async def test_background_work_waits_in_line_up_to_its_deadline_not_queue_seconds() -> None:
    clock = FakeClock()
    scheduler = _scheduler(clock)
    await scheduler.background_slots.acquire()  # the one background place is taken

    async def as_background() -> str:
        return await scheduler.run(lambda deadline: "ran", 30, _watch, BACKGROUND)

    waiting = asyncio.ensure_future(as_background())
    await clock.advance_when(1, 5.0, lambda: scheduler.background_waiting == 1)  # queue_seconds: nothing
    await clock.when_pending(1)
    assert not waiting.done() and scheduler.waiting == 0
    assert await scheduler.run(lambda deadline: "interactive", 10, _watch) == "interactive"  # its own place
    clock.advance(25.0)  # its deadline
    with pytest.raises(Busy, match="no place to run the background work within 30 s") as busy:
        await waiting
    assert busy.value.headers == {"Retry-After": "5"}


def test_a_query_thread_that_ends_after_its_loop_has_closed_is_quiet() -> None:
    """A query's worker thread can outlive the service's event loop (stopped while a query ran): its
    answer is dropped, with no exception in the thread."""
    release, running, failures = threading.Event(), threading.Event(), list[Any]()
    hook, threading.excepthook = threading.excepthook, lambda args: failures.append(args.exc_value)

    def work() -> bool:
        running.set()
        return release.wait(10)

    try:
        loop = asyncio.new_event_loop()
        task = loop.create_task(_in_thread(work))
        loop.run_until_complete(until(running.is_set, timeout=10, what="the query's thread runs"))
        task.cancel()
        loop.run_until_complete(asyncio.gather(task, return_exceptions=True))
        loop.close()
        release.set()
        for thread in threading.enumerate():
            if thread.name == "cowbird-query":
                thread.join(5)
    finally:
        threading.excepthook = hook
    assert failures == []


def test_the_asker_is_read_from_the_front_ends_headers() -> None:
    asker = Asker.of({"x-cowbird-priority": "background", "x-cowbird-began": "1790000000.5"})
    assert asker == Asker(background=True, began=1790000000.5)
    assert Asker.of({}) == Asker(background=False, began=None)
    for malformed in ("soon", "nan", "inf", ""):  # left out: the evaluation's own start counts
        assert Asker.of({"x-cowbird-began": malformed}).began is None
    assert not Asker.of({"x-cowbird-priority": "interactive"}).background
    assert Asker.of({"x-cowbird-viewer": "3f2a9c"}).viewer == "3f2a9c"
    assert Asker.of({"x-cowbird-viewer": "x" * 500}).viewer == "x" * 64  # bounded


async def test_a_background_place_goes_to_the_viewer_whose_work_used_least_cpu_here() -> None:
    """One place. A viewer whose evaluation used 5 CPU seconds has two more waiting; a viewer with one
    cheap evaluation comes after them, and is served first; then the heavy viewer's, in their order."""
    places = FairPlaces(1)
    await places.acquire("heavy")
    order: list[str] = []

    async def evaluation(viewer: str, name: str) -> None:
        await places.acquire(viewer)
        order.append(name)

    waiting = [asyncio.ensure_future(evaluation("heavy", name)) for name in ("h2", "h3")]
    await until(lambda: len(places.waiting.get("heavy", ())) == 2)
    waiting.append(asyncio.ensure_future(evaluation("light", "l1")))
    await until(lambda: "light" in places.waiting)
    places.charge("heavy", 5.0)
    places.leave("heavy")  # the first ends
    places.release()
    await until(lambda: order == ["l1"])
    places.charge("light", 0.01)
    places.leave("light")
    places.release()
    await until(lambda: order == ["l1", "h2"])
    places.leave("heavy")
    places.release()
    await asyncio.gather(*waiting)
    assert order == ["l1", "h2", "h3"]
    places.leave("heavy")
    places.release()
    assert places.free == 1 and places.used == {} and places.active == {}  # nothing kept of viewers gone


async def test_a_viewer_who_comes_back_saves_no_credit_for_the_time_away() -> None:
    places = FairPlaces(1)
    await places.acquire("busy")
    places.charge("busy", 100.0)
    waiting = asyncio.ensure_future(places.acquire("newcomer"))
    await until(lambda: "newcomer" in places.waiting)
    assert places.used["newcomer"] == 100.0  # the least use among those here, not 0
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    assert "newcomer" not in places.used and not places.waiting


async def test_a_cancelled_wait_for_a_background_place_leaves_the_line() -> None:
    places = FairPlaces(1)
    await places.acquire("a")
    gone = asyncio.ensure_future(places.acquire("b"))
    await until(lambda: "b" in places.waiting)
    gone.cancel()
    await asyncio.gather(gone, return_exceptions=True)
    places.leave("a")
    places.release()
    assert places.free == 1 and not places.waiting and places.active == {}
