"""The node's scheduler: queries in threads of their own."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from cowbird.node.scheduler import _in_thread


def test_a_query_thread_that_ends_after_its_loop_has_closed_is_quiet() -> None:
    """A query's worker thread can outlive the service's event loop (stopped while a query ran): its
    answer is dropped, with no exception in the thread."""
    release, failures = threading.Event(), list[Any]()
    hook, threading.excepthook = threading.excepthook, lambda args: failures.append(args.exc_value)
    try:
        loop = asyncio.new_event_loop()
        task = loop.create_task(_in_thread(lambda: release.wait(10)))
        loop.run_until_complete(asyncio.sleep(0.05))  # the thread runs
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
