"""CPU work of the front end off its event loop.

Reading a large node answer, merging the partitions' tables or a deep sort's keys takes the front
end's CPU for up to seconds; on the event loop, every other request — a cheap preview beside a
wide analysis — would wait that long. Such work runs in a worker thread instead (``off_loop``):
the event loop keeps answering between the thread's slices, at most ``THREADS`` of them at once so
that they do not crowd it out.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
T = TypeVar("T")

OFF_LOOP_BYTES = 64 * 1024  # node answers larger than this are read in a worker thread
THREADS = 2
_POOL = ThreadPoolExecutor(THREADS, thread_name_prefix="cowbird-cpu")


async def off_loop(function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """``function(*args, **kwargs)`` in a worker thread; the caller's request waits, no other."""
    return await asyncio.get_running_loop().run_in_executor(_POOL, functools.partial(function, *args, **kwargs))
