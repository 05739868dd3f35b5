"""The clock the services wait on (:class:`Clock`): monotonic seconds (``now``) and a sleep.

Failover and node health in the front end and the node's scheduler take one in their constructors,
the real :class:`MonotonicClock` by default; tests give them a fake one (``tests/clock.py``), on
which a node timeout, a cooldown or a wait in line passes when the test says so, not after that
long. Their time limits are :func:`within` and :func:`done_within`: ``asyncio.timeout`` and
``asyncio.wait(timeout=...)`` on any clock.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Clock(Protocol):
    def now(self) -> float:
        """Seconds on a monotonic clock (only differences between two readings mean anything)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return once ``seconds`` have passed on this clock."""
        ...


class MonotonicClock:
    """The real clock: ``time.monotonic`` and ``asyncio.sleep``."""

    def now(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


async def within(clock: Clock, seconds: float, awaitable: Awaitable[T]) -> T:
    """``await awaitable``, or ``TimeoutError`` once ``seconds`` have passed on ``clock`` (the
    awaitable is cancelled then, as under ``asyncio.timeout``)."""
    loop = asyncio.get_running_loop()
    async with asyncio.timeout(None) as limit:

        async def ring() -> None:
            await clock.sleep(seconds)
            limit.reschedule(loop.time())  # expires now: asyncio cancels the wait, says TimeoutError

        timer = asyncio.ensure_future(ring())
        try:
            return await awaitable
        finally:
            timer.cancel()


async def done_within(clock: Clock, seconds: float, future: asyncio.Future[Any]) -> bool:
    """Whether ``future`` is done within ``seconds`` on ``clock`` (it is not cancelled either way)."""
    timer = asyncio.ensure_future(clock.sleep(seconds))
    try:
        await asyncio.wait({future, timer}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        timer.cancel()
    return future.done()
