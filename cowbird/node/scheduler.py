"""Who runs when on a node: short queries are never held up by long ones.

Every evaluation runs in a thread of its own. At most ``max_concurrent_queries`` evaluations run
at once; more wait in line (up to ``max_queued_queries``, for at most ``queue_seconds``) and only
then get ``503 busy``. An evaluation that has worked for ``heavy_after_seconds`` — CPU time of
its own threads, not time on the clock: on a busy machine a short query takes longer on the clock
without being any heavier — becomes *heavy*: it gives its place back to short queries, its threads
run at the lowest CPU priority, and at most ``max_heavy_queries`` heavy ones step on at once — the
others pause at their next check until one finishes. So three users' ``[]{200}`` queries cannot
make a ``[word="dog"]`` wait, however busy the machine.

Work the front end marks as *background* (``X-Cowbird-Priority: background``: analyses, exports,
deep sorted pages, queries estimated heavy; :data:`BACKGROUND`, set by ``guard.NodeGuard``) never
takes an interactive place: at most ``max_background_queries`` run at once, in line for up to their
deadline, their threads at the lowest CPU priority from the start, and at each deadline check they
step aside (a few milliseconds, out of the GIL) while interactive evaluations are running.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from cowbird.core.errors import Busy
from cowbird.engines import Deadline

T = TypeVar("T")
LOWEST_PRIORITY = 19
BACKGROUND: contextvars.ContextVar[bool] = contextvars.ContextVar("cowbird_background", default=False)
"""Whether the request being served is background work (the front end's ``X-Cowbird-Priority``)."""
PRIORITY_HEADER = b"x-cowbird-priority"
STEP_ASIDE_SECONDS = 0.002
"""How long background work pauses at a deadline check while interactive work runs..."""
STEP_ASIDE_MOST = 0.05
"""... and at most this long at one check, so that it still moves on under a stream of previews."""


class Scheduler:
    def __init__(self, concurrent: int, queued: int, queue_seconds: float, heavy: int, heavy_after: float,
                 background: int = 2) -> None:
        self.slots = asyncio.Semaphore(concurrent)
        self.background_slots = asyncio.Semaphore(background)
        self.interactive_now = 0  # interactive evaluations running (background work steps aside for them)
        self.background_waiting = 0
        self.queued = queued
        self.queue_seconds = queue_seconds
        self.heavy = threading.BoundedSemaphore(heavy)
        self.heavy_after = heavy_after
        self.waiting = 0
        self._heavy_now = 0  # evaluations that became heavy and have not ended
        self._count_lock = threading.Lock()

    def heavy_running(self) -> int:
        """Evaluations that have become heavy (given their place back) and not ended yet."""
        return self._heavy_now

    def _heavy_changed(self, by: int) -> None:
        with self._count_lock:
            self._heavy_now += by

    async def run(
        self, work: Callable[[Deadline], T], seconds: float, watch: Callable[[Deadline], Coroutine[Any, Any, None]]
    ) -> T:
        """``work(deadline)`` in a thread of its own once a place is free; ``watch(deadline)`` is
        started next to it (it cancels the deadline when the client goes away)."""
        if BACKGROUND.get():
            return await self._background(work, seconds, watch)
        if self.slots.locked() and self.waiting >= self.queued:
            raise Busy(f"the node is running and queueing as many queries as it may ({self.queued} waiting)",
                       headers={"Retry-After": "1"})
        self.waiting += 1
        try:
            await asyncio.wait_for(self.slots.acquire(), self.queue_seconds)
        except TimeoutError:
            raise Busy(f"no place to run the query within {self.queue_seconds:g} s; try again shortly",
                       headers={"Retry-After": "2"}) from None
        finally:
            self.waiting -= 1
        loop = asyncio.get_running_loop()
        pace = _Pace(self, lambda: loop.call_soon_threadsafe(self.slots.release))
        deadline = Deadline(seconds, pace)
        pace.deadline = deadline
        watcher = asyncio.ensure_future(watch(deadline))
        self.interactive_now += 1
        try:
            return await _in_thread(lambda: pace.finish_after(lambda: work(deadline)))
        except asyncio.CancelledError:  # the request was dropped: stop the evaluation at its next check
            deadline.cancel()
            raise
        finally:
            self.interactive_now -= 1
            watcher.cancel()
            if not pace.gave_back:
                self.slots.release()

    async def _background(
        self, work: Callable[[Deadline], T], seconds: float, watch: Callable[[Deadline], Coroutine[Any, Any, None]]
    ) -> T:
        """Background work: a background place (waited for up to the deadline), lowest priority from
        the start, stepping aside for interactive work at each check."""
        if self.background_slots.locked() and self.background_waiting >= self.queued:
            raise Busy(f"the node is running and queueing as much background work as it may ({self.queued} waiting)",
                       headers={"Retry-After": "2"})
        self.background_waiting += 1
        try:
            await asyncio.wait_for(self.background_slots.acquire(), seconds)
        except TimeoutError:
            raise Busy(f"no place for background work within {seconds:g} s; try again later",
                       headers={"Retry-After": "5"}) from None
        finally:
            self.background_waiting -= 1
        pace = _Background(self)
        deadline = Deadline(seconds, pace)
        watcher = asyncio.ensure_future(watch(deadline))
        try:
            return await _in_thread(lambda: work(deadline))
        except asyncio.CancelledError:
            deadline.cancel()
            raise
        finally:
            watcher.cancel()
            self.background_slots.release()


class _Background:
    """Called at every deadline check of background work: its thread at the lowest priority, and a
    pause while interactive evaluations run."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.scheduler = scheduler
        self.lowered: set[int] = set()

    def __call__(self) -> None:
        thread = threading.get_native_id()
        if thread not in self.lowered:
            _lower_priority(thread)
            self.lowered.add(thread)
        waited = 0.0
        while self.scheduler.interactive_now > 0 and waited < STEP_ASIDE_MOST:
            time.sleep(STEP_ASIDE_SECONDS)
            waited += STEP_ASIDE_SECONDS


class _Pace:
    """Called at every check of one evaluation's deadline, in whichever thread does the work."""

    def __init__(self, scheduler: Scheduler, give_back: Callable[[], object]) -> None:
        self.scheduler = scheduler
        self.give_back = give_back
        self.worked: dict[int, float] = {}  # CPU seconds of each thread of the evaluation
        self.gave_back = False
        self.holds_heavy = False
        self.lowered: set[int] = set()
        self.deadline: Deadline | None = None
        self.lock = threading.Lock()  # the engine may check from two threads of one evaluation

    def __call__(self) -> None:
        # every thread of an evaluation is new (its own, or the engine's pool for it): its CPU clock
        # counts this evaluation's work only
        self.worked[threading.get_ident()] = time.thread_time()
        if not self.gave_back and sum(self.worked.values()) < self.scheduler.heavy_after:
            return
        with self.lock:
            if not self.gave_back:  # this evaluation is heavy from now on
                self.gave_back = True
                self.scheduler._heavy_changed(1)
                self.give_back()
            thread = threading.get_native_id()
            if thread not in self.lowered:
                _lower_priority(thread)
                self.lowered.add(thread)
            while not self.holds_heavy:  # wait for a heavy place, still stoppable meanwhile
                self.holds_heavy = self.scheduler.heavy.acquire(timeout=0.1)
                if not self.holds_heavy and self.deadline is not None:
                    self.deadline.check_time()

    def finish_after(self, work: Callable[[], T]) -> T:
        try:
            return work()
        finally:
            if self.holds_heavy:
                self.scheduler.heavy.release()
            if self.gave_back:
                self.scheduler._heavy_changed(-1)


def _lower_priority(thread: int) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, thread, LOWEST_PRIORITY)  # Linux: one thread's niceness
    except (OSError, AttributeError):
        pass


async def _in_thread(function: Callable[[], T]) -> T:
    """Run ``function`` in a new thread (its priority may be lowered: a pooled thread would keep it)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def target() -> None:
        try:
            result, error = function(), None
        except BaseException as exc:  # handed to the awaiting coroutine
            result, error = None, exc
        try:
            loop.call_soon_threadsafe(_settle, future, result, error)
        except RuntimeError:  # the loop has closed (the service stopped): nobody waits for the answer
            pass

    threading.Thread(target=target, name="cowbird-query", daemon=True).start()
    return await future


def _settle(future: asyncio.Future[T], result: T | None, error: BaseException | None) -> None:
    if future.cancelled():
        return
    if error is not None:
        future.set_exception(error)
    else:
        future.set_result(result)  # type: ignore[arg-type]
