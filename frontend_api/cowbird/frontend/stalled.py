"""Queries that just ran out of time, refused for a while instead of run again.

A query that ran out of time on every partition (``QueryTooSlow``) or at the request's deadline
(``DeadlinePassed``) cost the nodes all that time and gave nothing; sent again as it was — same
corpus, same CQP, so the same filters and case switch — it would do the same. :class:`Stalled`
remembers such queries (the ``KEPT`` latest, for ``SECONDS``) and refuses them with the reason
(``limit_exceeded``, ``Retry-After``) before any node works on them. Each front-end process
remembers what it saw.
"""

from __future__ import annotations

import contextvars
import time
from collections import OrderedDict

from cowbird.core.errors import LimitExceeded

SECONDS = 300.0
KEPT = 1024

STALL_KEY: contextvars.ContextVar[tuple[str, str] | None] = contextvars.ContextVar("cowbird_stall_key", default=None)
"""The (corpus, CQP) of the search the request runs (set by ``Stalled.check``), noted if it runs out of time."""


class Stalled:
    def __init__(self, seconds: float = SECONDS, kept: int = KEPT) -> None:
        self.seconds = seconds
        self.kept = kept
        self._ran_out: OrderedDict[tuple[str, str], tuple[float, str]] = OrderedDict()

    def check(self, corpus: str, cqp: str) -> None:
        """Refuse the query if it ran out of time within ``seconds``; else mark it as the request's."""
        key = (corpus, cqp)
        noted = self._ran_out.get(key)
        now = time.monotonic()
        if noted is not None:
            at, why = noted
            if now - at < self.seconds:
                left = int(self.seconds - (now - at)) + 1
                raise LimitExceeded(
                    f"this query ran out of time {now - at:,.0f} s ago ({why}) and is not run again for {left} s: "
                    "it would only do the same. Narrow it — a rarer word first, shorter or bounded repetitions, "
                    "within s, a filter", headers={"Retry-After": str(left)})
            del self._ran_out[key]
        STALL_KEY.set(key)

    def note(self, why: str) -> None:
        """The request's query ran out of time (``why``)."""
        key = STALL_KEY.get()
        if key is None:
            return
        self._ran_out[key] = (time.monotonic(), why)
        self._ran_out.move_to_end(key)
        while len(self._ran_out) > self.kept:
            self._ran_out.popitem(last=False)
