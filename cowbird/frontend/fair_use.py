"""Fair use: how many queries one user (or one address, for anonymous users) runs at once, how
many rows they export per day (UTC), and how much of the nodes' time their queries take per day:
a query costs what the nodes spent on it (each node answer's ``elapsed_ms``, summed over the
partitions: ``node_seconds``), not one request. When what is left of the day could not pay for the
longest query (the deadline on every partition), a query is estimated first (``/v1/estimate`` on
the nodes) and refused if its estimate is more than is left; the estimate is held while it runs (so
that queries running side by side cannot spend the same seconds) and the measured time charged
when it ends. Over a limit the answer is 429 with
``Retry-After``; every query and export answer says what is left in ``X-Cowbird-Queries-Limit``,
``X-Cowbird-Export-Rows-Left`` and ``X-Cowbird-Node-Seconds-Left``, and the account page shows the
same. ``/api/v1/estimate`` tells the cost of a query before it runs.

Counted in the front-end process: each front-end process keeps its own counts, and a restart
starts the day's export count afresh.
"""

from __future__ import annotations

import contextlib
import contextvars
import datetime
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from fastapi import Request

from cowbird.core.errors import TooManyRequests
from cowbird.frontend.viewer import Viewer


@dataclass(frozen=True)
class Limits:
    running: int
    rows_per_day: int
    node_seconds_per_day: float = float("inf")


class NodeTime:
    """The nodes' time spent on one request's calls (milliseconds), added up as the answers come
    (``Failover.attempt``) from every task of the request: the meter is shared through a context
    variable, which tasks inherit."""

    def __init__(self) -> None:
        self.ms = 0.0

    def add(self, ms: float) -> None:
        self.ms += max(0.0, ms)


METER: contextvars.ContextVar[NodeTime | None] = contextvars.ContextVar("cowbird_node_time", default=None)


def spent(ms: float) -> None:
    """Count ``ms`` of node time against the request running now (if one is being metered)."""
    meter = METER.get()
    if meter is not None:
        meter.add(ms)


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
    _node_seconds: dict[tuple[str, datetime.date], float] = field(default_factory=dict)
    _held: dict[str, float] = field(default_factory=dict)  # estimates of the queries running now

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

    def node_seconds_left(self, viewer: Viewer, key: str) -> float:
        """Today's node seconds not spent, nor held for the queries running now."""
        spent_today = self._node_seconds.get((key, _today()), 0.0) + self._held.get(key, 0.0)
        return max(0.0, self.limits(viewer).node_seconds_per_day - spent_today)

    async def afford(self, viewer: Viewer, key: str, most: float,
                     estimate: Callable[[], Awaitable[float | None]]) -> float:
        """The node seconds a query is estimated to cost, to hold while it runs (``running``). The
        nodes are asked (``estimate``) only when less than ``most`` — what the query could cost at
        most — is left of today's node time; a query estimated at more than is left is refused
        (429) before it runs. 0 when not asked, or when the nodes could not say."""
        left = self.node_seconds_left(viewer, key)
        if left >= most:
            return 0.0
        seconds = await estimate()
        if seconds is None:
            return 0.0
        if seconds > left:
            limit = self.limits(viewer).node_seconds_per_day
            raise TooManyRequests(
                f"this query is estimated to take {seconds:,.1f} seconds of the nodes' time, more than the "
                f"{left:,.1f} left of {'your' if viewer.name else 'this address’s'} {limit:,.0f} a day (renewed "
                "at 00:00 UTC): narrow it (a rarer word, a filter, fewer alternatives) or wait",
                headers={"Retry-After": str(_seconds_to_midnight())})
        return seconds

    def headers(self, viewer: Viewer, key: str) -> dict[str, str]:
        left = self.node_seconds_left(viewer, key)
        return {
            "X-Cowbird-Queries-Limit": str(self.limits(viewer).running),
            "X-Cowbird-Export-Rows-Left": str(self.rows_left(viewer, key)),
            "X-Cowbird-Node-Seconds-Left": "unlimited" if left == float("inf") else f"{left:.1f}",
        }

    @contextmanager
    def running(self, viewer: Viewer, key: str, hold: float = 0.0) -> Iterator[NodeTime]:
        """One query or export of this viewer running; 429 when they already run their limit, or
        when today's node time is spent. ``hold`` (the estimate ``afford`` gave) is held against
        today's node time while it runs; the nodes' time of the calls made meanwhile is counted
        instead at the end."""
        limits = self.limits(viewer)
        who = "you run" if viewer.name else "this address runs"
        if self._running.get(key, 0) >= limits.running:
            raise TooManyRequests(f"{who} {limits.running} queries at once already; wait for one to finish",
                                  headers={"Retry-After": "2"})
        if self.node_seconds_left(viewer, key) <= 0:
            raise TooManyRequests(
                f"{'your' if viewer.name else 'this address’s'} queries took today's "
                f"{limits.node_seconds_per_day:,.0f} seconds of the nodes' time (renewed at 00:00 UTC); "
                "/api/v1/estimate tells what a query costs",
                headers={"Retry-After": str(_seconds_to_midnight())})
        self._running[key] = self._running.get(key, 0) + 1
        self._held[key] = self._held.get(key, 0.0) + hold
        meter = NodeTime()
        token = METER.set(meter)
        try:
            yield meter
        finally:
            with contextlib.suppress(ValueError):  # a stream ends in a task of its own, with a copy of the context
                METER.reset(token)
            day = (key, _today())
            self._node_seconds[day] = self._node_seconds.get(day, 0.0) + meter.ms / 1000
            self._running[key] -= 1
            self._held[key] -= hold
            if not self._running[key]:
                del self._running[key], self._held[key]

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
