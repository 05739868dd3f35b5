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
  pauses while others may end and free memory. An evaluation alone on the node past the budget is
  stopped with a clear answer (``limit_exceeded``: narrow the query) — nothing else holds memory it
  could wait for; a lone query relating three labels over two ``[]{0,60}`` once took a node to
  10.7 GB under a 4-GiB budget until the kernel killed it. When the only one still at work finds the
  node over its budget, the youngest of the evaluations (the least work lost) is stopped: a younger
  paused one — one at a time, with a moment for its memory to be freed, or all of them at once past
  ``BEYOND`` of the budget — while the one at work goes on, or the one at work itself when it is the
  youngest. Evaluations waiting for a heavy place (``scheduler``) hold their arrays as paused ones
  do, and give way alike: a burst of four heavy label queries under a 1-GiB budget was once stopped
  whole, the one at work stopped each time because the others only waited. So a burst ends with the
  oldest queries answered and the youngest stopped, not all of them. Between two checks an
  evaluation may still allocate: the budget is passed by what it allocates in one step of its work
  (the node's ``memory_limit``, an OS limit, bounds that: an allocation past it fails, and the
  evaluation is stopped as over the budget);
- under it all, the node process runs under an OS limit (``apply_memory_limit``: ``RLIMIT_DATA``, which
  counts the heap and anonymous mappings — every array — but not the corpus's mapped files, unlike
  ``RLIMIT_AS``): an allocation past it fails (``MemoryError``), the evaluation is stopped as over the
  budget, and the node answers on instead of the kernel killing it;
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
import resource
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
BEYOND = 1.25
"""Past this share of the budget the only evaluation at work does not wait for younger paused ones to be
stopped one at a time: all of them are told to stop at once."""


LIMIT_HEADROOM = 2**30
"""What a node's data may hold beyond its memory budget and its result cache under the derived
``memory_limit``: its code, compiled kernels, lexicon views and thread stacks (300 MB of data when idle,
serving a partition of a million tokens) and what an evaluation allocates past the budget between two
of its checks."""


def memory_limit(budget: int, cache_bytes: int, limit: int | None) -> int | None:
    """The node's OS limit on its data in bytes: ``limit`` as set (0: none), else derived — the memory
    budget, the result cache's most and ``LIMIT_HEADROOM``."""
    if limit is None:
        return budget + cache_bytes + LIMIT_HEADROOM
    return limit or None


def apply_memory_limit(limit: int) -> int:
    """Limit this process's data (``RLIMIT_DATA``: heap and anonymous mappings, not mapped files) to
    ``limit`` bytes, or to the hard limit when that is lower; the limit in force."""
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    soft = limit if hard == resource.RLIM_INFINITY else min(limit, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))
    return soft


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

    def hold(self, started: float) -> _Paused:
        """An evaluation (``started``: when it began) waits for something else than memory (a heavy place):
        meanwhile it frees nothing, as a paused one, and may be told to give way as one
        (``stop_if_told``); ``release`` the ticket when it goes on."""
        ticket = _Paused(started)
        with self._lock:
            self._paused.append(ticket)
            self.paused += 1
        return ticket

    def release(self, ticket: _Paused) -> None:
        with self._lock:
            self.paused -= 1
            self._paused.remove(ticket)

    def stop_if_told(self, ticket: _Paused) -> None:
        """Stop (``limit_exceeded``) the evaluation that holds ``ticket`` if it was told to give way."""
        if ticket.stop:
            self._stop()

    def check(self, still: Callable[[], None] = lambda: None, started: float | None = None) -> None:
        """At a running evaluation's check (``started``: when it began), when the node is over its
        budget even after giving freed memory back: alone on the node, the evaluation is stopped
        (``limit_exceeded``); the only one at work, the youngest evaluation gives way (a younger paused
        one, or this one); else it pauses (``still`` called meanwhile: its deadline and its client)
        while others that are not paused may end and free memory, until the node is back under
        ``RESUME`` of the budget — and when every evaluation is paused, the youngest gives way."""
        if self.used() <= self.budget:
            return
        self.trim()
        if (used := self.used()) <= self.budget:
            return
        ticket = self._pause_or_stop(time.time() if started is None else started, used)
        if ticket is None:
            return
        try:
            looks = 0
            while self.used() > self.budget * RESUME:
                self.stop_if_told(ticket)
                still()
                time.sleep(PAUSE_SECONDS)
                looks += 1
                if looks % 10 == 0:  # what a stopped or ended evaluation freed, given back
                    self.trim()
                with self._lock:
                    if self.running - self.paused <= 0:  # every evaluation paused: the youngest gives way
                        self._give_way(self._paused)
        finally:
            self.release(ticket)

    def _pause_or_stop(self, started: float, used: int) -> _Paused | None:
        """The evaluation's pause, or None when it goes on: the only one at work while younger paused
        ones are told to give way. Stopped itself when it is alone, or the youngest of the only one at
        work and the paused ones."""
        with self._lock:
            if self.running <= 1:  # alone: no wait would free memory, it holds what passes the budget
                self._stop(alone=True)
            if self.running - self.paused <= 1:  # the only one at work
                younger = [p for p in self._paused if p.started > started]
                if not younger:
                    self._stop()
                if used > self.budget * BEYOND:
                    for paused in younger:
                        paused.stop = True
                else:
                    self._give_way(younger)
                return None
            ticket = _Paused(started)
            self._paused.append(ticket)
            self.paused += 1
            return ticket

    def _give_way(self, among: list[_Paused]) -> None:
        """Tell the youngest of the paused evaluations ``among`` to stop (the lock held), unless one just
        was or is being stopped."""
        now = time.monotonic()
        if now < self._quiet_until or any(p.stop for p in self._paused):
            return
        youngest = max(among, key=lambda p: p.started, default=None)
        if youngest is not None:
            youngest.stop = True
            self._quiet_until = now + GRACE_SECONDS

    def _stop(self, alone: bool = False) -> None:
        used = self.used()
        LOG.warning("memory budget: %s of %s in use by queries%s; a query was stopped", self._in_mb(used),
                    self._in_mb(self.budget), " (one alone)" if alone else "")
        held = "the query held" if alone else "the queries running on the node held"
        raise OutOfMemory(
            f"the query was stopped: {held} {self._in_mb(used)} beyond its idle memory, past its budget of "
            f"{self._in_mb(self.budget)}, while it ran. Narrow it — a rarer word first, shorter repetitions "
            "([]{0,5} rather than []{0,20}), within s" + ("" if alone else " — or try again later"))

    def out_of_memory(self) -> OutOfMemory:
        """The answer to an evaluation whose allocation failed (``MemoryError``: the node's ``memory_limit``,
        an OS limit, was reached between two of its checks)."""
        LOG.warning("memory limit: an allocation failed at %s beyond the idle memory; a query was stopped",
                    self._in_mb(self.used()))
        return OutOfMemory(
            "the query was stopped: the node could not allocate the memory it asked for (its memory limit, "
            f"{self._in_mb(self.budget)} for queries). Narrow it — a rarer word first, shorter repetitions "
            "([]{0,5} rather than []{0,20}), within s")

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
