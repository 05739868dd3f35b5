"""A fake clock for the services' waits (``cowbird.serving.clock.Clock``), and the one way tests wait
on real time: polling a condition until a deadline.

On a :class:`FakeClock` nothing passes until the test moves it (:meth:`FakeClock.advance`): a node
timeout, a health check's time limit, a cooldown or a wait in line ends the moment the test says it
has passed — not seconds later — and not before, however slow the machine. Work that is real
(in-process nodes answering, in their threads) goes on meanwhile on real time; the clock may only
move once nothing but what the test waits for is at work. A test sees that either by the sleeps
pending on the clock (:meth:`FakeClock.when_pending`: each wait of the services under test is one),
or lets :meth:`FakeClock.drive` move the clock from one sleep's end to the next whenever every
request at work (:meth:`FakeClock.working`: ``front_client`` counts the front end's node calls) is
one that hangs on purpose (:meth:`FakeClock.hang`).

Waiting for something is :func:`until` / :func:`wait_until`, never a bare sleep. The sleeps left in
the tests are the time a test is about, not a guess at how long something takes: a simulated slow
web server or client (``tests/calf/web.py``, the slow readers of the abuse tests), an idle
connection kept past the front end's idle time, work that must take wall-clock time without CPU
(the scheduler's heavy-after), the window CPU use is measured over (``cluster.comes_to_rest``), and the
pause between retries of a process that is not listening yet.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn, TypeVar

T = TypeVar("T")

POLL_SECONDS = 0.005


class FakeClock:
    """``now()`` starts at ``start`` and moves only by :meth:`advance`; ``sleep(s)`` returns once the
    clock has been moved ``s`` past the moment it was called (at once for ``s <= 0``)."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._sleeps: list[tuple[float, int, asyncio.Future[None]]] = []
        self._order = itertools.count()
        self._lock = threading.Lock()  # now() may be read from worker threads
        self._at_work = 0  # requests being answered (working)
        self._hung = 0  # ... of which hang on purpose (hang)

    def now(self) -> float:
        with self._lock:
            return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        wake: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        with self._lock:
            heapq.heappush(self._sleeps, (self._now + seconds, next(self._order), wake))
        await wake  # cancelled: advance() skips it

    @property
    def pending(self) -> int:
        """Sleeps not over yet (and not cancelled)."""
        with self._lock:
            return sum(1 for _, _, wake in self._sleeps if not wake.done())

    def next_wake(self) -> float | None:
        """When the first pending sleep ends (None: nothing sleeps)."""
        with self._lock:
            ends = [end for end, _, wake in self._sleeps if not wake.done()]
        return min(ends, default=None)

    def advance(self, seconds: float) -> None:
        """Move the clock on by ``seconds``: every sleep that ends by then wakes up (in order of
        their ends; each sleeper runs when the event loop next comes to it)."""
        assert seconds >= 0, seconds
        with self._lock:
            moment = self._now + seconds
        self.advance_to(moment)

    def advance_to(self, moment: float) -> None:
        """Move the clock on to ``moment`` (:meth:`advance`)."""
        with self._lock:
            self._now = max(self._now, moment)
            due: list[asyncio.Future[None]] = []
            while self._sleeps and self._sleeps[0][0] <= self._now:
                due.append(heapq.heappop(self._sleeps)[2])
        for wake in due:
            if not wake.done():
                wake.set_result(None)

    async def when_pending(self, count: int, also: Callable[[], bool] = lambda: True, timeout: float = 30.0) -> None:
        """Wait (on real time, polling) until exactly ``count`` sleeps are pending on this clock and
        ``also`` holds, twice in a row: the waits the test expects, nothing else at work on a timer."""
        seen = 0
        deadline = time.monotonic() + timeout
        while seen < 2:
            seen = seen + 1 if self.pending == count and also() else 0
            if time.monotonic() > deadline:
                raise AssertionError(f"{self.pending} sleeps pending on the fake clock, not {count} "
                                     f"(or not {also}), after {timeout:g} s")
            await asyncio.sleep(POLL_SECONDS)

    async def advance_when(self, count: int, seconds: float, also: Callable[[], bool] = lambda: True) -> None:
        """:meth:`when_pending` ``count`` (and ``also``), then :meth:`advance` ``seconds``."""
        await self.when_pending(count, also)
        self.advance(seconds)


    @contextmanager
    def working(self) -> Iterator[None]:
        """Around a request being answered: while one is (and does not :meth:`hang`), :meth:`drive`
        leaves the clock where it is."""
        self._at_work += 1
        try:
            yield
        finally:
            self._at_work -= 1

    @contextmanager
    def hanging(self) -> Iterator[None]:
        """Around a wait that ends only when the waiter gives up (a node that never answers): not work
        :meth:`drive` waits for."""
        self._hung += 1
        try:
            yield
        finally:
            self._hung -= 1

    async def hang(self) -> NoReturn:
        """Never return (until cancelled), :meth:`hanging`."""
        with self.hanging():
            await never()

    async def drive(self, awaitable: Awaitable[T], timeout: float = 60.0) -> T:
        """``await awaitable``, moving the clock on to the end of the next pending sleep whenever
        some are pending and no request is at work but those that hang (twice in a row, polling):
        the services' timeouts pass the moment nothing else can happen first."""
        task = asyncio.ensure_future(awaitable)
        deadline = time.monotonic() + timeout
        quiet = 0
        try:
            while not task.done():
                if time.monotonic() > deadline:
                    at_work = self._at_work - self._hung
                    raise AssertionError(f"not done within {timeout:g} s (fake clock at {self.now():g} s, "
                                         f"{self.pending} sleeps pending, {at_work} requests at work)")
                wake = self.next_wake()
                quiet = quiet + 1 if wake is not None and self._at_work <= self._hung else 0
                if quiet >= 2 and wake is not None:
                    self.advance_to(wake)
                    quiet = 0
                await asyncio.wait({task}, timeout=POLL_SECONDS)
            return task.result()
        finally:
            if not task.done():
                task.cancel()


async def until(condition: Callable[[], bool], timeout: float = 30.0, what: str = "",
                every: float = POLL_SECONDS) -> None:
    """Poll ``condition`` on the event loop (every ``every`` seconds) until it holds; ``AssertionError``
    after ``timeout`` real seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what or condition}")
        await asyncio.sleep(every)


def wait_until(condition: Callable[[], bool], timeout: float = 30.0, what: str = "", every: float = 0.05) -> None:
    """:func:`until` for code off the event loop (blocking; ``every`` seconds between looks)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"not within {timeout:g} s: {what or condition}")
        time.sleep(every)


async def never() -> NoReturn:
    """Wait until cancelled (a node that hangs): not a sleep that would end by itself."""
    await asyncio.get_running_loop().create_future()
    raise AssertionError("unreachable")
