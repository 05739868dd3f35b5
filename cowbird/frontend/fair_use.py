"""Fair use: how many queries one user (or one address, for anonymous users) runs at once, and
how many rows they export per day (UTC). Over a limit the answer is 429 with ``Retry-After``;
every query and export answer says what is left in ``X-Cowbird-Queries-Limit`` and
``X-Cowbird-Export-Rows-Left``, and the account page shows the same.

Counted in the front-end process: each front-end process keeps its own counts, and a restart
starts the day's export count afresh.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from fastapi import Request

from cowbird.core.errors import TooManyRequests
from cowbird.frontend.viewer import Viewer


@dataclass(frozen=True)
class Limits:
    running: int
    rows_per_day: int


def _today() -> datetime.date:
    return datetime.datetime.now(datetime.UTC).date()


def _seconds_to_midnight() -> int:
    now = datetime.datetime.now(datetime.UTC)
    tomorrow = datetime.datetime.combine(now.date() + datetime.timedelta(days=1), datetime.time(), datetime.UTC)
    return int((tomorrow - now).total_seconds()) + 1


@dataclass
class FairUse:
    anonymous: Limits
    user: Limits
    bulk: Limits  # users with api_bulk, through an API token
    _running: dict[str, int] = field(default_factory=dict)
    _exported: dict[tuple[str, datetime.date], int] = field(default_factory=dict)

    def key(self, viewer: Viewer, request: Request) -> str:
        if viewer.name is not None:
            return f"user:{viewer.name}"
        return f"address:{request.client.host if request.client else 'unknown'}"

    def limits(self, viewer: Viewer) -> Limits:
        if viewer.name is None:
            return self.anonymous
        return self.bulk if viewer.api_bulk else self.user

    def rows_left(self, viewer: Viewer, key: str) -> int:
        return max(0, self.limits(viewer).rows_per_day - self._exported.get((key, _today()), 0))

    def headers(self, viewer: Viewer, key: str) -> dict[str, str]:
        return {
            "X-Cowbird-Queries-Limit": str(self.limits(viewer).running),
            "X-Cowbird-Export-Rows-Left": str(self.rows_left(viewer, key)),
        }

    @contextmanager
    def running(self, viewer: Viewer, key: str) -> Iterator[None]:
        """One query or export of this viewer running; 429 when they already run their limit."""
        limit = self.limits(viewer).running
        if self._running.get(key, 0) >= limit:
            who = "you run" if viewer.name else "this address runs"
            raise TooManyRequests(f"{who} {limit} queries at once already; wait for one to finish",
                                  headers={"Retry-After": "2"})
        self._running[key] = self._running.get(key, 0) + 1
        try:
            yield
        finally:
            self._running[key] -= 1
            if not self._running[key]:
                del self._running[key]

    def charge(self, viewer: Viewer, key: str, rows: int) -> None:
        """Count an export of ``rows`` against today's budget, or refuse it (429) if it does not fit."""
        left = self.rows_left(viewer, key)
        if rows > left:
            raise TooManyRequests(
                f"this export of {rows:,} rows is more than the {left:,} rows left of today's budget "
                f"({self.limits(viewer).rows_per_day:,} a day, renewed at 00:00 UTC): export fewer rows or wait",
                headers={"Retry-After": str(_seconds_to_midnight())},
            )
        day = (key, _today())
        self._exported[day] = self._exported.get(day, 0) + rows

    def refund(self, key: str, rows: int) -> None:
        """Give back rows charged for an export that did not deliver them (the client left, a node failed)."""
        day = (key, _today())
        if rows > 0 and day in self._exported:
            self._exported[day] = max(0, self._exported[day] - rows)
