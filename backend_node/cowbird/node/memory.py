"""The node's own memory, held under a budget across everything it runs.

A node's resident memory is the corpus's mapped files (shared, given back by the kernel when needed)
and its own: the arrays its evaluations build, and what it keeps between them (caches, lexicon views,
compiled code, bounded by their own settings). One query relating two labels over a wide repetition
can build close to a gigabyte of arrays; sixteen at once took a node to 10 GB, and glibc kept most of
it after they ended. :class:`MemoryBudget` watches the node's own resident memory
(``/proc/self/statm``: resident minus file-backed pages, a cheap read) beyond the least it has held
idle (measured whenever no evaluation runs) against ``memory_budget``:

- an evaluation starts only while that is below ``ADMIT`` of the budget, or when none runs; otherwise
  it waits (up to its queue time) for others to end, and is then refused (``503 busy``, "the node's
  memory is in use");
- at its deadline checks (``scheduler._Pace``, at most every ``LOOK_SECONDS``) a running evaluation
  finds out whether the node is over the budget; if it still is after giving freed memory back, it
  pauses while others may end and free memory. When the only one still at work finds the node over
  its budget, the youngest paused evaluation (the least work lost) is stopped with a clear answer
  (``limit_exceeded``: narrow the query) and the one at work goes on — one at a time, with a moment
  for the stopped one's memory to be freed — instead of the node growing until the kernel kills it;
  so a burst ends with the oldest queries answered and the youngest stopped, not all of them.
  Between two checks an evaluation may still allocate: the budget is passed by at most what the
  running evaluations allocate in ``LOOK_SECONDS``;
- after an evaluation that left much memory behind (and after the last one running that left more
  than ``IDLE_TRIM``), freed memory is given back to the system (glibc's ``malloc_trim``), so that
  the node shrinks again when the work is done.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import os
import threading
import time
from collections.abc import Callable

from cowbird.core.errors import Busy, OutOfMemory

LOG = logging.getLogger("cowbird.node")
PAGE = os.sysconf("SC_PAGE_SIZE")
ADMIT = 0.75
"""An evaluation starts only while the node's own memory is below this share of the budget."""
TRIM_ABOVE = 0.25
"""After an evaluation, freed memory is given back when the node's own memory is above this share."""
IDLE_TRIM = 16 * 2**20
"""After the last running evaluation, freed memory is given back when the node holds more than this
beyond its idle memory: the node shrinks back once the work is done, not only below the share."""
LOOK_SECONDS = 0.005
"""How often (monotonic time) a running evaluation reads the node's memory at its checks."""
RESUME = 0.9
"""A paused evaluation goes on when the node's own memory is back under this share of the budget."""
PAUSE_SECONDS = 0.02
GRACE_SECONDS = 0.5
"""After an evaluation is stopped, how long no other is: its arrays are freed as it unwinds."""


class _Paused:
    """A paused evaluation: when it started (the youngest gives way first), and whether it must stop."""

    __slots__ = ("started", "stop")

    def __init__(self, started: float) -> None:
        self.started = started
        self.stop = False


def _trimmer() -> Callable[[], None]:
    """glibc's ``malloc_trim(0)`` (heap and arenas' free memory back to the system), or nothing."""
    name = ctypes.util.find_library("c")
    if name is None:
        return lambda: None
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return lambda: None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int

    def run() -> None:
        trim(0)

    return run


def own_memory() -> int:
    """Bytes of this process's resident memory that are its own (not file-backed: the corpus's mapped
    files do not count)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            fields = statm.read().split()
    except OSError:
        return 0
    return max(0, int(fields[1]) - int(fields[2])) * PAGE


class MemoryBudget:
    """See the module docstring. ``budget`` bytes of the node's own memory; ``read`` measures it."""

    def __init__(self, budget: int, read: Callable[[], int] = own_memory) -> None:
        self.budget = budget
        self.read = read
        self._trim = _trimmer()
        self._trim_lock = threading.Lock()
        self._lock = threading.Lock()
        self.running = 0  # evaluations at work (``started``, ``ended``)
        self.baseline = read()  # the least own memory the node has held when nothing ran
        self.paused = 0  # of them, paused at a check until memory is freed (or waiting for a heavy place)
        self._paused: list[_Paused] = []  # the paused evaluations, which one may be told to stop
        self._quiet_until = 0.0  # no evaluation is stopped before (one just was: its memory is being freed)

    def trim(self) -> None:
        if self._trim_lock.acquire(blocking=False):  # one at a time; a second caller need not wait
            try:
                self._trim()
            finally:
                self._trim_lock.release()

    def used(self) -> int:
        """Bytes beyond the least the node has held idle (its code, its lexicon views): what the running
        evaluations hold, and what the node has cached since."""
        return max(0, self.read() - self.baseline)

    def _in_mb(self, size: int) -> str:
        return f"{size / 2**20:,.0f} MB"

    async def admit(self, seconds: float) -> None:
        """Wait (up to ``seconds``) until the node's own memory is below ``ADMIT`` of the budget, or no
        evaluation runs (what the node holds then is its caches: waiting frees nothing); ``Busy`` if
        neither happens by then."""
        limit = self.budget * ADMIT
        if self.used() < limit or self.running == 0:  # nothing running: no wait would free memory
            return
        await asyncio.to_thread(self.trim)
        until = time.monotonic() + seconds
        while (used := self.used()) >= limit and self.running > 0:
            if time.monotonic() >= until:
                raise Busy(f"the node's memory is in use by other queries ({self._in_mb(used)} of its "
                           f"{self._in_mb(self.budget)}); try again shortly", headers={"Retry-After": "5"})
            await asyncio.sleep(0.05)

    def started(self) -> None:
        with self._lock:
            self.running += 1

    def ended(self) -> None:
        with self._lock:
            self.running -= 1

    def waiting(self, by: int) -> None:
        """An evaluation starts (1) or stops (-1) waiting for something else than memory (a heavy
        place): meanwhile it frees nothing, as a paused one."""
        with self._lock:
            self.paused += by

    def check(self, still: Callable[[], None] = lambda: None, started: float | None = None) -> None:
        """At a running evaluation's check (``started``: when it began), when the node is over its
        budget even after giving freed memory back: the evaluation pauses (``still`` called meanwhile:
        its deadline and its client) while others that are not paused may end and free memory, until
        the node is back under ``RESUME`` of the budget. The only evaluation at work goes on: the
        youngest paused one is stopped instead (``limit_exceeded``), one at a time; with none to
        stop (the others wait for a heavy place), this one is."""
        if self.used() <= self.budget:
            return
        self.trim()
        if self.used() <= self.budget:
            return
        ticket = self._pause_or_stop(time.monotonic() if started is None else started)
        if ticket is None:
            return
        try:
            looks = 0
            while self.used() > self.budget * RESUME:
                if ticket.stop:
                    self._stop()
                still()
                time.sleep(PAUSE_SECONDS)
                looks += 1
                if looks % 10 == 0:  # what a stopped or ended evaluation freed, given back
                    self.trim()
                with self._lock:
                    if self.running - self.paused <= 0:  # every evaluation paused: the youngest gives way
                        self._give_way()
        finally:
            with self._lock:
                self.paused -= 1
                self._paused.remove(ticket)

    def _pause_or_stop(self, started: float) -> _Paused | None:
        """The evaluation's pause, or None when it goes on: the only one (nothing else holds memory it
        could wait for), or the only one at work (the youngest paused one is told to stop instead);
        stopped itself when the others only wait for a heavy place."""
        with self._lock:
            if self.running <= 1:
                return None
            if self.running - self.paused <= 1:  # the only one at work: a paused one gives way
                if self._paused:
                    self._give_way()
                    return None
                self._stop()
            ticket = _Paused(started)
            self._paused.append(ticket)
            self.paused += 1
            return ticket

    def _give_way(self) -> None:
        """Tell the youngest paused evaluation to stop (the lock held), unless one just was."""
        now = time.monotonic()
        if now < self._quiet_until or any(p.stop for p in self._paused):
            return
        youngest = max(self._paused, key=lambda p: p.started, default=None)
        if youngest is not None:
            youngest.stop = True
            self._quiet_until = now + GRACE_SECONDS

    def _stop(self) -> None:
        used = self.used()
        LOG.warning("memory budget: %s of %s in use by queries; a query was stopped", self._in_mb(used),
                    self._in_mb(self.budget))
        raise OutOfMemory(
            f"the query was stopped: the queries running on the node held {self._in_mb(used)} beyond its idle "
            f"memory, past its budget of {self._in_mb(self.budget)}, while it ran. Narrow it — a rarer word first, "
            "shorter repetitions ([]{0,5} rather than []{0,20}), within s — or try again later")

    def after(self) -> None:
        """After an evaluation: give freed memory back if much is held; when none runs any more, what
        the node holds is its new idle memory (caches filled)."""
        with self._lock:
            last = self.running == 0
        if self.used() > (min(IDLE_TRIM, self.budget * TRIM_ABOVE) if last else self.budget * TRIM_ABOVE):
            self.trim()
        with self._lock:
            if self.running == 0:  # the least the node has held idle (what a wait could never free)
                self.baseline = min(self.baseline, self.read())
