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
deep sorted pages, queries estimated heavy; :attr:`Asker.background`, read by the routes) never
takes an interactive place: at most ``max_background_queries`` run at once, in line for up to their
deadline, their threads at a low CPU priority from the start (``BACKGROUND_PRIORITY``; the lowest once
heavy), and at each deadline check they
step aside (a few milliseconds, out of the GIL) while interactive evaluations are at work on every
core — with a core left free they go on (work-conserving: no core idles while work waits).
Background work that becomes heavy — after ``LONG_AFTER`` CPU seconds, not ``heavy_after_seconds``,
so that analyses and exports of a few tenths of a second never do — gives its background place back
and takes its turn among the heavy ones like any other, so that one long query cannot hold the
places analyses and exports need. An estimate (a *probe*, bounded by its own CPU time) past
``heavy_after_seconds`` gives its place back but never waits for a heavy place.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from cowbird.core.errors import Busy, OutOfMemory, QueryTimeout
from cowbird.engines import Deadline
from cowbird.node.memory import LOOK_SECONDS as MEMORY_LOOK_SECONDS
from cowbird.node.memory import MemoryBudget
from cowbird.serving.clock import Clock, MonotonicClock, within

T = TypeVar("T")
LOWEST_PRIORITY = 19
BACKGROUND_PRIORITY = 10
"""Background work's niceness until it becomes heavy (then ``LOWEST_PRIORITY``): an analysis of a few
tenths of a second gets the cores before a heavy query's minutes, and interactive work before both."""
PRIORITY_HEADER = "x-cowbird-priority"
BEGAN_HEADER = "x-cowbird-began"
VIEWER_HEADER = "x-cowbird-viewer"
"""Who the front end's request is for, as an opaque key (a hash of its fair-use key): background
places go to the viewer whose work has used the least CPU here (``FairPlaces``)."""
BACKGROUND_WALL = 5.0
"""Background work's deadline is in CPU seconds (``query_timeout`` of them): niced and stepping aside, its
time on the clock says little of its cost; this many times ``query_timeout`` on the clock at most."""
LOOK_SECONDS = 0.005
"""How often (monotonic time) an evaluation's CPU time is read at its deadline checks while it is short."""
STEP_ASIDE_SECONDS = 0.002
"""How long background work pauses at a deadline check while interactive work takes every core..."""
STEP_ASIDE_MOST = 0.05
"""... and at most this long at one check, so that it still moves on under a stream of previews."""


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity), at least one."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)
LONG_AFTER = 2.0
"""Background work becomes heavy (gives its background place to other background work and waits for
a heavy place) after this many CPU seconds, not ``heavy_after``: an analysis of a common word (0.3 s)
never waits behind a heavy query's minutes for the one heavy place."""
HEAVY_LOOK_SECONDS = 0.05
"""How often an evaluation waiting for a heavy place looks whether it must stop (its deadline, its client,
the memory budget telling it to give way)."""


@dataclass(frozen=True)
class Asker:
    """Who asks the node for work, as the front end's headers say: handed from the route to the
    service and on to the scheduler (``NodeApi(service, asker)``)."""

    background: bool = False
    """Background work (``X-Cowbird-Priority: background``): its own places, niced, stepping aside."""
    began: float | None = None
    """When the front end's request began (``X-Cowbird-Began``, seconds since the epoch), the same on
    every node it asks: over a memory budget the youngest request's evaluations give way on every node
    alike. None: when the evaluation began."""
    disconnected: Callable[[], Awaitable[bool]] | None = None
    """Tells whether the client has gone (the work is then stopped); None: nobody can go."""
    viewer: str = ""
    """Who the work is for (``X-Cowbird-Viewer``; empty: nobody in particular)."""

    @classmethod
    def of(cls, headers: Mapping[str, str], disconnected: Callable[[], Awaitable[bool]] | None = None) -> Asker:
        """The asker a request's headers describe (a malformed ``X-Cowbird-Began`` is left out)."""
        try:
            began: float | None = float(headers.get(BEGAN_HEADER, ""))
        except ValueError:
            began = None
        return cls(headers.get(PRIORITY_HEADER, "") == "background",
                   began if began is not None and math.isfinite(began) else None, disconnected,
                   headers.get(VIEWER_HEADER, "")[:64])


NOBODY = Asker()
"""Work asked in-process (``LocalPartitions``, the command line): interactive, nobody to go away."""


class FairPlaces:
    """``slots`` places for background work, shared per viewer by CPU time: a place that comes free
    goes to the waiting viewer whose work here has used the least CPU so far (weighted fair queuing
    on CPU seconds; among equals the one with the fewest evaluations here), first come first served
    within one viewer. A viewer's use counts while they have
    work here, at work or waiting; one who comes (back) starts at the least use among those, so that
    time away is not saved up. Like ``asyncio.Semaphore``: ``locked``, ``acquire``, ``release``."""

    def __init__(self, slots: int) -> None:
        self.free = slots
        self.waiting: dict[str, deque[asyncio.Future[None]]] = {}
        self.used: dict[str, float] = {}
        self.active: dict[str, int] = {}  # evaluations of each viewer at work or waiting

    def locked(self) -> bool:
        return self.free <= 0

    async def acquire(self, viewer: str = "") -> None:
        self._arrive(viewer)
        if self.free > 0 and not self.waiting:
            self.free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(viewer, deque()).append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # the place came as the wait was given up
                self.release()
            else:
                line = self.waiting.get(viewer)
                if line is not None and future in line:
                    line.remove(future)
                    if not line:
                        del self.waiting[viewer]
            self.leave(viewer)
            raise

    def release(self) -> None:
        while self.waiting:
            viewer = min(self.waiting, key=lambda key: (self.used.get(key, 0.0), self.active.get(key, 0)))
            line = self.waiting[viewer]
            future = line.popleft()
            if not line:
                del self.waiting[viewer]
            if not future.cancelled():
                future.set_result(None)  # the place passes on: ``free`` stays
                return
        self.free += 1

    def charge(self, viewer: str, seconds: float) -> None:
        """The viewer's work used ``seconds`` of CPU here."""
        if viewer in self.used:
            self.used[viewer] += seconds

    def leave(self, viewer: str) -> None:
        """One evaluation of the viewer ended (or gave up waiting)."""
        self.active[viewer] -= 1
        if not self.active[viewer]:
            del self.active[viewer]
            self.used.pop(viewer, None)

    def _arrive(self, viewer: str) -> None:
        if viewer not in self.active:
            self.used[viewer] = min(self.used.values(), default=0.0)
        self.active[viewer] = self.active.get(viewer, 0) + 1


class Scheduler:
    def __init__(self, concurrent: int, queued: int, queue_seconds: float, heavy: int, heavy_after: float,
                 background: int = 2, memory: MemoryBudget | None = None, clock: Clock | None = None) -> None:
        self.memory = memory  # the node's own memory, under its budget (``memory.MemoryBudget``)
        self.clock: Clock = clock if clock is not None else MonotonicClock()  # what waits in line are timed on
        self.slots = asyncio.Semaphore(concurrent)
        self.background_slots = FairPlaces(background)
        self.interactive_now = 0  # interactive evaluations running (background work steps aside for them)
        self.interactive_paused = 0  # of which heavy ones waiting for a heavy place: they use no core
        self.cores = usable_cores()  # interactive evaluations at work on as many: background work pauses
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

    def _paused_changed(self, by: int) -> None:
        with self._count_lock:
            self.interactive_paused += by

    def interactive_working(self) -> int:
        """Interactive evaluations at work now (not those paused for a heavy place)."""
        return self.interactive_now - self.interactive_paused

    async def run(
        self, work: Callable[[Deadline], T], seconds: float, watch: Callable[[Deadline], Coroutine[Any, Any, None]],
        asker: Asker = NOBODY, probe: bool = False,
    ) -> T:
        """``work(deadline)`` in a thread of its own once a place is free (an interactive one, or a
        background one for the asker's background work); ``watch(deadline)`` is started next to it (it
        cancels the deadline when the client goes away). A ``probe`` (an estimate: bounded by its own
        CPU time) never becomes heavy: past ``heavy_after`` it gives its place back to short queries,
        but it neither waits for a heavy place (behind heavy queries, whose cost the front end is
        waiting for it to tell) nor runs at the lowest priority."""
        background = asker.background
        slots = self.background_slots if background else self.slots
        await self._place(background, seconds, asker.viewer)
        if self.memory is not None:
            try:
                await self.memory.admit(seconds if background else self.queue_seconds)
            except BaseException:
                slots.release()
                if background:
                    self.background_slots.leave(asker.viewer)
                raise
        loop = asyncio.get_running_loop()
        pace = _Pace(self, lambda: loop.call_soon_threadsafe(slots.release), background,
                     cpu_budget=seconds if background else None, began=asker.began, probe=probe)
        deadline = Deadline(seconds * BACKGROUND_WALL if background else seconds, pace)
        pace.deadline = deadline
        watcher = asyncio.ensure_future(watch(deadline))
        if not background:
            self.interactive_now += 1
        try:
            return await _in_thread(lambda: pace.finish_after(lambda: work(deadline)))
        except asyncio.CancelledError:  # the request was dropped: stop the evaluation at its next check
            deadline.cancel()
            raise
        except MemoryError:  # an allocation past the node's memory_limit (an OS limit): the node goes on
            if self.memory is None:
                raise OutOfMemory("the query was stopped: the node could not allocate the memory it asked for. "
                                  "Narrow it — a rarer word first, shorter repetitions, within s") from None
            raise self.memory.out_of_memory() from None
        finally:
            if not background:
                self.interactive_now -= 1
            watcher.cancel()
            if not pace.gave_back:
                slots.release()
            if background:  # the CPU its threads used so far (a thread still stopping adds no more)
                self.background_slots.charge(asker.viewer, sum(pace.worked.values()))
                self.background_slots.leave(asker.viewer)

    async def _place(self, background: bool, seconds: float, viewer: str) -> None:
        """A place: a background one for background work (``FairPlaces``: the viewer who used least
        first), up to its deadline; an interactive one, ``queue_seconds``; ``busy`` when too many wait
        already, or the wait is over."""
        slots: asyncio.Semaphore | FairPlaces = self.background_slots if background else self.slots
        waiting = self.background_waiting if background else self.waiting
        what = "background work" if background else "queries"
        if slots.locked() and waiting >= self.queued:
            raise Busy(f"the node is running and queueing as many {what} as it may ({self.queued} waiting)",
                       headers={"Retry-After": "2" if background else "1"})
        wait = seconds if background else self.queue_seconds
        self._waiting(background, 1)
        try:
            await within(self.clock, wait, self.background_slots.acquire(viewer) if background else slots.acquire())
        except TimeoutError:
            raise Busy(f"no place to run the {'background work' if background else 'query'} within {wait:g} s; "
                       "try again shortly", headers={"Retry-After": "5" if background else "2"}) from None
        finally:
            self._waiting(background, -1)

    def _waiting(self, background: bool, by: int) -> None:
        if background:
            self.background_waiting += by
        else:
            self.waiting += by


class _Pace:
    """Called at every check of one evaluation's deadline, in whichever thread does the work."""

    def __init__(self, scheduler: Scheduler, give_back: Callable[[], object], background: bool = False,
                 cpu_budget: float | None = None, began: float | None = None, probe: bool = False) -> None:
        self.probe = probe  # an estimate: never heavy (``Scheduler.run``)
        self.cpu_budget = cpu_budget  # background work: its deadline in CPU seconds of its threads
        # over the memory budget the youngest paused evaluation gives way: by its front-end request's
        # start where the front end said it (the same on every node), else by its own
        self.began = began if began is not None else time.time()
        self.scheduler = scheduler
        self.give_back = give_back
        self.background = background  # lowest priority from the start, stepping aside for interactive work
        self.worked: dict[int, float] = {}  # CPU seconds of each thread of the evaluation
        self.gave_back = False
        self.holds_heavy = False
        self.lowered: set[int] = set()
        self.deadline: Deadline | None = None
        self.lock = threading.Lock()  # the engine may check from two threads of one evaluation
        self.next_look = 0.0  # when to read the threads' CPU clocks next
        self.next_memory_look = 0.0  # when to read the node's memory next
        self.lowered_threads: set[int] = set()  # of background work (threading.get_ident)

    def __call__(self) -> None:
        memory = self.scheduler.memory
        if memory is not None:
            now = time.monotonic()
            if now >= self.next_memory_look:
                self.next_memory_look = now + MEMORY_LOOK_SECONDS
                memory.check(self.deadline.check_time if self.deadline is not None else lambda: None, self.began)
        if self.background:
            self._step_aside()
        # every thread of an evaluation is new (its own, or the engine's pool for it): its CPU clock
        # counts this evaluation's work only. That clock is a system call; the engine checks often, so
        # it is read at most every LOOK_SECONDS of the monotonic clock (a cheap read) while the
        # evaluation is short
        if not self.gave_back:
            now = time.monotonic()
            if now < self.next_look:
                return
            self.next_look = now + LOOK_SECONDS
        self.worked[threading.get_ident()] = time.thread_time()
        spent = sum(self.worked.values())
        if self.cpu_budget is not None and spent > self.cpu_budget:
            raise QueryTimeout(f"the query took more than {self.cpu_budget:g} s of the node's CPU and was stopped")
        if not self.gave_back and spent < (LONG_AFTER if self.background else self.scheduler.heavy_after):
            return
        if self.probe:  # an estimate past heavy_after: its place to short queries, but no heavy place to wait for
            if not self.gave_back:
                self.gave_back = True
                self.give_back()
            return
        with self.lock:
            if not self.gave_back:  # this evaluation is heavy from now on
                self.gave_back = True
                self.scheduler._heavy_changed(1)
                self.give_back()
            thread = threading.get_native_id()
            if thread not in self.lowered:
                lower_priority(thread)
                self.lowered.add(thread)
            memory = self.scheduler.memory if not self.holds_heavy else None
            # it frees no memory while it waits, and holds its arrays: over the budget it may give way
            ticket = memory.hold(self.began) if memory is not None else None
            paused = not self.background and not self.holds_heavy
            if paused:
                self.scheduler._paused_changed(1)
            try:
                while not self.holds_heavy:  # wait for a heavy place, still stoppable meanwhile
                    self.holds_heavy = self.scheduler.heavy.acquire(timeout=HEAVY_LOOK_SECONDS)
                    if not self.holds_heavy:
                        if memory is not None and ticket is not None:
                            memory.stop_if_told(ticket)
                        if self.deadline is not None:
                            self.deadline.check_time()
            finally:
                if paused:
                    self.scheduler._paused_changed(-1)
                if memory is not None and ticket is not None:
                    memory.release(ticket)

    def _step_aside(self) -> None:
        """Background work: its thread at ``BACKGROUND_PRIORITY`` (the operating system gives interactive
        threads, of any process, the cores first), and at every check work-conserving room for
        interactive evaluations of this node: while they are at work on every core it pauses (out of
        the interpreter lock) at most ``STEP_ASIDE_MOST``; while fewer are, it only hands the
        interpreter lock over (they take it at once) and goes on, on the cores they leave free."""
        thread = threading.get_ident()
        if thread not in self.lowered_threads:
            lower_priority(threading.get_native_id(), BACKGROUND_PRIORITY)
            self.lowered_threads.add(thread)
        scheduler = self.scheduler
        working = scheduler.interactive_working()
        if not working:
            return
        waited = 0.0
        while working >= scheduler.cores and waited < STEP_ASIDE_MOST:
            time.sleep(STEP_ASIDE_SECONDS)
            waited += STEP_ASIDE_SECONDS
            working = scheduler.interactive_working()
        if not waited:
            time.sleep(0)  # the interpreter lock to an interactive thread that waits for it

    def finish_after(self, work: Callable[[], T]) -> T:
        if self.scheduler.memory is not None:
            self.scheduler.memory.started()
        try:
            return work()
        finally:
            if self.holds_heavy:
                self.scheduler.heavy.release()
            if self.gave_back and not self.probe:
                self.scheduler._heavy_changed(-1)
            if self.scheduler.memory is not None:
                self.scheduler.memory.ended()
                self.scheduler.memory.after()


def lower_priority(thread: int, niceness: int = LOWEST_PRIORITY) -> None:
    try:
        os.setpriority(os.PRIO_PROCESS, thread, niceness)  # Linux: one thread's niceness
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
