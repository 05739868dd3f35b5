"""Queries that just ran out of time, refused for a while instead of run again.

A query that ran out of time on every partition (``QueryTooSlow``) or at the request's deadline
(``DeadlinePassed``) cost the nodes all that time and gave nothing; sent again as it was — same
corpus, same CQP, so the same filters and case switch — it would do the same. :class:`Stalled`
remembers such queries (the ``KEPT`` latest, for ``SECONDS``) and refuses them with the reason
(``limit_exceeded``, ``Retry-After``) before any node works on them. Each front-end process
remembers what it saw (``FrontendState.stalled``).

Not a cache but a bounded record, in the one cache type (``cowbird.core.lru.Lru``) only put and
peeked at: the query noted first goes first, and checking one does not keep it longer. Each entry
says when it was noted, and goes at its first check after ``SECONDS``.
"""

from __future__ import annotations

import time

from cowbird.core.errors import LimitExceeded
from cowbird.core.lru import Lru

SECONDS = 300.0
KEPT = 1024

Query = tuple[str, str]
"""A query as :class:`Stalled` knows it: (corpus, canonical CQP)."""


class Stalled:
    def __init__(self, seconds: float = SECONDS, kept: int = KEPT) -> None:
        self.seconds = seconds
        self.kept = kept
        self._ran_out: Lru[Query, tuple[float, str]] = Lru(kept)

    def check(self, key: Query) -> None:
        """Refuse the query if it ran out of time within ``seconds``."""
        noted = self._ran_out.peek(key)
        now = time.monotonic()
        if noted is not None:
            at, why = noted
            if now - at < self.seconds:
                left = int(self.seconds - (now - at)) + 1
                raise LimitExceeded(
                    f"this query ran out of time {now - at:,.0f} s ago ({why}) and is not run again for {left} s: "
                    "it would only do the same. Narrow it — a rarer word first, shorter or bounded repetitions, "
                    "within s, a filter", headers={"Retry-After": str(left)})
            self._ran_out.pop(key)

    def note(self, key: Query, why: str) -> None:
        """The query ran out of time (``why``)."""
        self._ran_out.put(key, (time.monotonic(), why))
