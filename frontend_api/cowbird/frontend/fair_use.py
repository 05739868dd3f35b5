"""Fair use: how many queries one user (or one address, for anonymous users) runs at once, how
many rows they export per day (UTC), and how much of the nodes' time their queries take per day:
a query costs what the nodes spent on it (each node answer's ``elapsed_ms``, summed over the
partitions: ``node_seconds``), not one request. When what is left of the day could not pay for the
longest query (the deadline on every partition), a query is estimated first (``/v1/estimate`` on
the nodes) and refused if its estimate is more than is left; the estimate is held while it runs (so
that queries running side by side cannot spend the same seconds) and the measured time charged
when it ends — a node call that stops after that (cancelled as a stream's client left) when it
reports (``NodeTime.late``). Over a limit the answer is 429 with
``Retry-After``; every query and export answer says what is left in ``X-Cowbird-Queries-Limit``,
``X-Cowbird-Export-Rows-Left`` and ``X-Cowbird-Node-Seconds-Left``, and the account page shows the
same. ``/api/v1/estimate`` tells the cost of a query before it runs.

Counted in the account database (``accounts/counting.py``), so that any number of front-end
processes — ``cowbird serve --workers N``, or several hosts behind a proxy — share the counts, and
the day's counts survive a restart. A running query is a row of ``running_queries`` with its process
and an expiry (its deadline plus ``LEASE_MARGIN``): the queries of a process that crashed stop
counting once their deadline has passed. Export rows and node seconds are counted per viewer and day
in ``fair_use_days``. Each check-and-increment is one short transaction under the viewer's lock row
(``running``), or one conditional ``UPDATE`` (``charge``), so the limits hold exactly across
processes. Days older than ``KEEP_DAYS`` and expired queries are pruned now and then.

If the account database cannot be written or read (its disk full under SQLite, PostgreSQL gone), a
request is served uncounted rather than failed, and each such failure is logged as an error naming
what was not counted (``_unless_down``): fair use keeps one user from crowding out the others, it
does not take the service down with its database.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import logging
import os
import socket
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar

from fastapi import Request
from sqlalchemy import Connection, Float, String, Table, bindparam, case, cast, delete, func, insert, select, update
from sqlalchemy.exc import DBAPIError

from cowbird.core.errors import ClientGone, TooManyRequests
from cowbird.frontend.accounts.counting import Hot, Pruning, counted, lock, prune_locks, upsert_into
from cowbird.frontend.accounts.database import Database
from cowbird.frontend.accounts.models import FairUseDay, RunningQuery
from cowbird.frontend.viewer import Viewer

LOG = logging.getLogger("cowbird.fair_use")
T = TypeVar("T")


def _unless_down(what: str, work: Callable[[], T], fallback: T) -> T:
    """``work()``; if the account database fails (SQLAlchemy's error, or the driver's own from the
    statements run on its cursor), ``fallback`` — the request goes on uncounted — and an error in the
    log."""
    try:
        return work()
    except Exception as error:
        if not isinstance(error, DBAPIError) and type(error).__module__.split(".")[0] not in DRIVERS:
            raise
        LOG.error("fair use: %s not counted, the account database failed: %s", what, str(error).split("\n")[0])
        return fallback


DRIVERS = frozenset({"sqlite3", "psycopg", "psycopg2"})
"""The database drivers whose errors (``sqlite3.OperationalError`` ...) are the database failing."""

RUNNING: Table = RunningQuery.__table__  # type: ignore[assignment]
DAYS: Table = FairUseDay.__table__  # type: ignore[assignment]

LEASE_MARGIN = 60.0
"""Seconds a running query's row counts beyond its deadline: if its process dies without taking it
back, it stops counting then."""
KEEP_DAYS = 7
"""Days of export rows and node seconds kept in the database (for the record; only today counts)."""


@dataclass(frozen=True)
class Limits:
    running: int
    rows_per_day: int
    node_seconds_per_day: float = float("inf")


class NodeTime:
    """The nodes' time spent on one request's calls (milliseconds), added up as the answers come:
    the request's ``caller.Caller`` holds it while the request runs (``FairUse.running`` makes it).

    When the request's place ends, what it counted is charged (``settle``); a call that reports after
    that — one cancelled as the client left, which tells what it cost only once it has stopped — is
    charged as it reports (``late``), never lost."""

    def __init__(self) -> None:
        self.ms = 0.0
        self.late: Callable[[float], None] | None = None  # set when settled: charges one call's milliseconds

    def add(self, ms: float) -> None:
        if self.late is not None:
            if ms > 0:
                self.late(ms)
            return
        self.ms += max(0.0, ms)

    def settle(self, charge: Callable[[float], None]) -> float:
        """The milliseconds counted so far, to be charged now; later reports go to ``charge`` at once."""
        self.late = charge
        return self.ms


def _today() -> datetime.date:
    return datetime.datetime.now(datetime.UTC).date()


def _day() -> str:
    """Today (UTC) as the day's rows name it: 2026-11-27."""
    return _today().isoformat()


def _seconds_to_midnight() -> int:
    now = datetime.datetime.now(datetime.UTC)
    tomorrow = datetime.datetime.combine(now.date() + datetime.timedelta(days=1), datetime.time(), datetime.UTC)
    return int((tomorrow - now).total_seconds()) + 1


@dataclass(frozen=True)
class Usage:
    """What one viewer key has running and has spent today, as every process counted it."""

    running: int
    export_rows: int
    node_seconds: float
    held: float  # the estimates of the queries running now


def _process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


# The statements, compiled once (``counting.Hot``); parameters the_key, the_day (a string), now,
# and per statement what it adds.
_LIVE = RUNNING.c.key == bindparam("the_key"), RUNNING.c.expires_at > bindparam("now")
_TODAY = DAYS.c.key == bindparam("the_key"), DAYS.c.day == bindparam("the_day")
_COUNTS = (
    select(func.count()).select_from(RUNNING).where(*_LIVE).scalar_subquery(),
    select(DAYS.c.export_rows).where(*_TODAY).scalar_subquery(),
    select(DAYS.c.node_seconds).where(*_TODAY).scalar_subquery(),
    select(func.sum(RUNNING.c.hold)).where(*_LIVE).scalar_subquery(),
)
USAGE = Hot(lambda dialect: select(*_COUNTS))


def _start(dialect: str) -> Any:
    """A place among the key's running queries, made only if there is room: fewer than ``running``
    live, and node time left after what was spent and is held (``seconds``: the day's limit)."""
    count, _, spent, held = _COUNTS
    room = select(cast(bindparam("the_key"), String), cast(bindparam("process"), String),
                  cast(bindparam("hold"), Float), cast(bindparam("now"), Float), cast(bindparam("until"), Float)
                  ).where(count < bindparam("running"),
                          func.coalesce(spent, 0.0) + func.coalesce(held, 0.0) < bindparam("seconds"))
    columns = ["key", "process", "hold", "started_at", "expires_at"]
    return insert(RUNNING).from_select(columns, room).returning(RUNNING.c.id)


START = Hot(_start)
END = Hot(lambda dialect: delete(RUNNING).where(RUNNING.c.id == bindparam("place")))
CHARGE = Hot(lambda dialect: update(DAYS).where(*_TODAY, DAYS.c.export_rows + bindparam("rows") <= bindparam("limit"))
             .values(export_rows=DAYS.c.export_rows + bindparam("rows")))
REFUND = Hot(lambda dialect: update(DAYS).where(*_TODAY).values(
    export_rows=case((DAYS.c.export_rows > bindparam("rows"), DAYS.c.export_rows - bindparam("rows")), else_=0)))


def _day_row(dialect: str) -> Any:
    return upsert_into(dialect, DAYS).values(key=bindparam("the_key"), day=bindparam("the_day"), export_rows=0,
                                             node_seconds=bindparam("seconds"))


SPEND = Hot(lambda dialect: _day_row(dialect).on_conflict_do_update(
    index_elements=[DAYS.c.key, DAYS.c.day], set_={"node_seconds": DAYS.c.node_seconds + bindparam("seconds")}))
"""Add node seconds to the key's day (the row made if need be)."""
DAY = Hot(lambda dialect: _day_row(dialect).on_conflict_do_nothing(index_elements=[DAYS.c.key, DAYS.c.day]))
"""Make the key's day's row if there is none."""


@dataclass
class FairUse:
    anonymous: Limits
    user: Limits
    bulk: Limits  # users with api_bulk, through an API token
    database: Database
    lease: float = 120.0 + LEASE_MARGIN  # seconds a running query counts at most: the deadline and a margin
    queue: float = 0.0
    """Seconds a query waits for a place among the viewer's queries at once (``room``) before ``running``
    refuses it."""
    _pruning: Pruning = field(default_factory=Pruning)
    _waiting: dict[str, int] = field(default_factory=dict)

    def key(self, viewer: Viewer, request: Request) -> str:
        if viewer.name is not None:
            return f"user:{viewer.name}"
        return f"address:{request.client.host if request.client else 'unknown'}"

    def limits(self, viewer: Viewer) -> Limits:
        if viewer.name is None:
            return self.anonymous
        return self.bulk if viewer.api_bulk else self.user

    @staticmethod
    def _usage(connection: Connection, key: str, now: float) -> Usage:
        with contextlib.closing(USAGE.run(connection, the_key=key, the_day=_day(), now=now)) as cursor:
            row = cursor.fetchone()
        return Usage(int(row[0] or 0), int(row[1] or 0), float(row[2] or 0.0), float(row[3] or 0.0))

    def usage(self, key: str) -> Usage:
        now = time.time()
        return _unless_down("usage", lambda: counted(self.database.reading,
                                                     lambda connection: self._usage(connection, key, now), write=False),
                            Usage(0, 0, 0.0, 0.0))

    def _rows_left(self, viewer: Viewer, usage: Usage) -> int:
        return max(0, self.limits(viewer).rows_per_day - usage.export_rows)

    def _seconds_left(self, viewer: Viewer, usage: Usage) -> float:
        return max(0.0, self.limits(viewer).node_seconds_per_day - usage.node_seconds - usage.held)

    def rows_left(self, viewer: Viewer, key: str) -> int:
        return self._rows_left(viewer, self.usage(key))

    def node_seconds_left(self, viewer: Viewer, key: str) -> float:
        """Today's node seconds not spent, nor held for the queries running now."""
        return self._seconds_left(viewer, self.usage(key))

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

    def can_pay(self, viewer: Viewer, key: str, most: float, what: str) -> None:
        """Work that cannot be estimated (a word or keyword list) runs only while what is left of the
        day's node time could pay for it at most (``most``: the deadline on every partition it reads);
        429 otherwise."""
        left = self.node_seconds_left(viewer, key)
        if left < most:
            limit = self.limits(viewer).node_seconds_per_day
            raise TooManyRequests(
                f"{what} cannot be estimated before it runs and could take up to {most:,.0f} seconds of the nodes' "
                f"time, more than the {left:,.1f} left of {'your' if viewer.name else 'this address’s'} "
                f"{limit:,.0f} a day (renewed at 00:00 UTC)", headers={"Retry-After": str(_seconds_to_midnight())})

    def headers(self, viewer: Viewer, key: str) -> dict[str, str]:
        usage = self.usage(key)
        left = self._seconds_left(viewer, usage)
        return {
            "X-Cowbird-Queries-Limit": str(self.limits(viewer).running),
            "X-Cowbird-Export-Rows-Left": str(self._rows_left(viewer, usage)),
            "X-Cowbird-Node-Seconds-Left": "unlimited" if left == float("inf") else f"{left:.1f}",
        }

    async def room(self, viewer: Viewer, key: str, request: Request | None = None) -> None:
        """Wait up to ``queue`` seconds while the viewer already runs their limit of queries at once,
        so that a search that replaces one still ending (the browser aborted it; its nodes are being
        stopped) is not refused for it; then ``running`` decides. As many of a viewer's requests wait
        in one process as they may run at once; more are refused by ``running`` at once, so a flood
        holds no more than that. Stops (``ClientGone``) if the client goes while it waits."""
        limit = self.limits(viewer).running
        if self.queue <= 0 or self._waiting.get(key, 0) >= limit:
            return
        self._waiting[key] = self._waiting.get(key, 0) + 1
        try:
            loop = asyncio.get_running_loop()
            until, pause = loop.time() + self.queue, 0.05
            while self.usage(key).running >= limit and loop.time() < until:
                if request is not None and await request.is_disconnected():
                    raise ClientGone("the client closed the connection while its query waited for a place")
                await asyncio.sleep(min(pause, max(0.0, until - loop.time())))
                pause = min(2 * pause, 0.5)
        finally:
            self._waiting[key] -= 1
            if not self._waiting[key]:
                del self._waiting[key]

    @contextmanager
    def running(self, viewer: Viewer, key: str, hold: float = 0.0, seconds: float | None = None
                ) -> Iterator[NodeTime]:
        """One query or export of this viewer running; 429 when they already run their limit, or
        when today's node time is spent. ``hold`` (the estimate ``afford`` gave) is held against
        today's node time while it runs; the nodes' time of the calls made meanwhile (the meter it
        yields, which the request's ``Caller`` fills) is counted instead at the end, and a call that
        reports after the end (cancelled, it had not stopped yet) when it reports. Its place counts
        until it ends, or for ``seconds`` (default ``lease``) if its process dies first."""
        limits = self.limits(viewer)
        who = "you run" if viewer.name else "this address runs"
        now = time.time()
        lease = self.lease if seconds is None else seconds

        def start(connection: Connection) -> int:
            lock(connection, f"fair-use:{key}", now)
            with contextlib.closing(START.run(
                    connection, the_key=key, the_day=_day(), process=_process(), hold=hold, now=now, until=now + lease,
                    running=limits.running, seconds=limits.node_seconds_per_day)) as cursor:
                made = cursor.fetchone()
            if made is not None:
                return int(made[0])
            usage = self._usage(connection, key, now)  # no room: why
            if usage.running >= limits.running:
                raise TooManyRequests(f"{who} {limits.running} queries at once already; wait for one to finish",
                                      headers={"Retry-After": "2"})
            if self._seconds_left(viewer, usage) <= 0:
                raise TooManyRequests(
                    f"{'your' if viewer.name else 'this address’s'} queries took today's "
                    f"{limits.node_seconds_per_day:,.0f} seconds of the nodes' time (renewed at 00:00 UTC); "
                    "/api/v1/estimate tells what a query costs",
                    headers={"Retry-After": str(_seconds_to_midnight())})
            raise TooManyRequests(f"{who} {limits.running} queries at once already; wait for one to finish",
                                  headers={"Retry-After": "2"})  # (a float's rounding: the sums said no)

        place = _unless_down("a query", lambda: counted(self.database.counting, start), None)
        meter = NodeTime()
        try:
            yield meter
        finally:

            spent = meter.settle(lambda ms: self.spend(key, ms / 1000))

            def end(connection: Connection) -> None:
                if place is not None:
                    END.run(connection, place=place).close()
                if spent > 0:
                    self._spend(connection, key, spent / 1000)
                if self._pruning.due():
                    self._prune(connection)

            _unless_down("a query's end", lambda: counted(self.database.counting, end), None)

    @staticmethod
    def _spend(connection: Connection, key: str, seconds: float) -> None:
        SPEND.run(connection, the_key=key, the_day=_day(), seconds=seconds).close()

    def spend(self, key: str, seconds: float) -> None:
        """Count ``seconds`` of the nodes' time against today's (as a query's end does)."""
        _unless_down("node seconds", lambda: counted(self.database.counting,
                                                     lambda connection: self._spend(connection, key, seconds)), None)

    def charge(self, viewer: Viewer, key: str, rows: int) -> None:
        """Count an export of ``rows`` against today's budget, or refuse it (429) if it does not fit."""
        limit = self.limits(viewer).rows_per_day
        now = time.time()

        def take(connection: Connection) -> int | None:
            """None when charged, else the rows exported today."""
            DAY.run(connection, the_key=key, the_day=_day(), seconds=0.0).close()
            with contextlib.closing(CHARGE.run(connection, the_key=key, the_day=_day(), rows=rows,
                                               limit=limit)) as cursor:
                if cursor.rowcount == 1:
                    return None
            return self._usage(connection, key, now).export_rows

        exported = _unless_down(f"an export of {rows} rows", lambda: counted(self.database.counting, take), None)
        if exported is None:
            return
        left = max(0, limit - exported)
        raise TooManyRequests(
            f"this export of {rows:,} rows is more than the {left:,} rows left of today's budget "
            f"({limit:,} a day, renewed at 00:00 UTC): export fewer rows or wait",
            headers={"Retry-After": str(_seconds_to_midnight())},
        )

    def refund(self, key: str, rows: int) -> None:
        """Give back rows charged for an export that did not deliver them (the client left, a node failed)."""
        if rows <= 0:
            return
        _unless_down(f"a refund of {rows} rows", lambda: counted(
            self.database.counting, lambda connection: REFUND.run(connection, the_key=key, the_day=_day(),
                                                                   rows=rows).close()), None)

    @staticmethod
    def _prune(connection: Connection) -> None:
        """Forget the queries whose place expired, the days no longer kept, and stale lock rows."""
        now = time.time()
        connection.execute(delete(RUNNING).where(RUNNING.c.expires_at <= now))
        connection.execute(delete(DAYS).where(DAYS.c.day < (_today() - datetime.timedelta(days=KEEP_DAYS)).isoformat()))
        prune_locks(connection, "fair-use:", now)
