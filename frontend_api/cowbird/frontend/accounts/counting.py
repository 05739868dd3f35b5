"""Counts shared by every front-end process, in the account database: the pieces the fair-use
counts (``frontend_api/cowbird/frontend/fair_use.py``) and the throttles (``throttle.py``) are built of.

A check-and-increment is one transaction that first writes the key's row in ``counter_locks``
(``lock``: ``INSERT .. ON CONFLICT DO UPDATE``), then counts, then adds. The write takes a lock
held until the transaction ends — a row lock on PostgreSQL, the database's write lock on SQLite
(whose driver begins the transaction at that first write, so the counting that follows already
holds it) — so two processes checking the same key take turns, and the second sees what the first
added. Statements are SQLAlchemy Core, kept few and short: they run on the request's thread. Those
of every query (``Hot``) are compiled once and run on the driver's cursor, and the reads run
outside a transaction (``counted``): a preview's counting then costs about a millisecond of CPU.

Times are wall-clock seconds since the epoch (``time.time``), compared across processes and hosts;
keep the front ends' clocks in step (NTP). Rows that no longer count are pruned now and then
(``Pruning``), by whichever process comes by.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from sqlalchemy import Connection, CursorResult, Engine, Table, bindparam, delete
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import DBAPIError

from cowbird.frontend.accounts.models import CounterLock

LOCKS: Table = CounterLock.__table__  # type: ignore[assignment]
T = TypeVar("T")

STALE_LOCK_SECONDS = 2 * 86_400.0
"""A lock row unused this long is pruned (the longest any count needs it is a day)."""
PRUNE_SECONDS = 300.0
"""Each process prunes what no longer counts at most this often."""


def counted(engine: Engine, work: Callable[[Connection], T], write: bool = True) -> T:
    """``work`` in one transaction of ``engine`` (``write``), or on a connection of its own (a read,
    on ``Database.reading``: autocommit, no ``BEGIN`` and ``ROLLBACK`` around it). These engines do
    not ping a connection before each use (one more round trip per transaction): a connection the
    database dropped (a restart) fails its first statement, and the work is done once more on a new
    one."""
    for attempt in (1, 2):
        try:
            if write:
                with engine.begin() as connection:
                    return work(connection)
            with engine.connect() as connection:
                return work(connection)
        except DBAPIError as error:
            if attempt == 2 or not error.connection_invalidated:
                raise
    raise AssertionError("unreachable")


DIALECTS = {"postgresql": postgresql.psycopg.dialect(),  # type: ignore[no-untyped-call]  # untyped in SQLAlchemy
            "sqlite": sqlite.pysqlite.dialect(paramstyle="named")}
"""The dialects the statements of ``Hot`` are compiled for (named parameters on both)."""


class Hot:
    """A statement run on every query (``fair_use.py``): compiled once per dialect and run on the
    driver's cursor of the transaction's connection — SQLAlchemy's execution path costs three times
    what the driver does. Parameters are plain strings and numbers (no type conversion is needed:
    ``fair_use_days.day`` is a string for that reason)."""

    def __init__(self, build: Callable[[str], Any]) -> None:
        self.build = build  # dialect name -> the Core statement
        self._compiled: dict[str, Any] = {}

    def run(self, connection: Connection, **values: Any) -> Any:
        """The driver's cursor, the statement executed."""
        dialect = connection.dialect.name
        compiled = self._compiled.get(dialect)
        if compiled is None:
            compiled = self._compiled[dialect] = self.build(dialect).compile(dialect=DIALECTS[dialect])
        cursor = connection.connection.cursor()
        cursor.execute(str(compiled), compiled.construct_params(values))
        return cursor


def upsert_into(dialect: str, table: Table) -> Any:
    """``INSERT`` with ``ON CONFLICT`` in ``dialect`` (``postgresql`` or ``sqlite``)."""
    return (postgresql if dialect == "postgresql" else sqlite).insert(table)


def _lock_statement(dialect: str) -> Any:
    statement = upsert_into(dialect, LOCKS).values(name=bindparam("lock_name"), at=bindparam("lock_at"))
    return statement.on_conflict_do_update(index_elements=[LOCKS.c.name], set_={"at": statement.excluded.at})


LOCK = Hot(_lock_statement)


def lock(connection: Connection, name: str, at: float) -> None:
    """Take the write lock of ``name`` for the rest of the transaction (made on first use)."""
    LOCK.run(connection, lock_name=name, lock_at=at).close()


class Pruning:
    """When this process last pruned: ``due`` says whether it is time again (and notes that it is)."""

    def __init__(self, every: float = PRUNE_SECONDS) -> None:
        self.every = every
        self.last = 0.0

    def due(self, now: float | None = None) -> bool:
        now = time.time() if now is None else now
        if now - self.last < self.every:
            return False
        self.last = now
        return True


def prune_locks(connection: Connection, prefix: str, now: float) -> None:
    """Forget the lock rows of ``prefix`` not used for ``STALE_LOCK_SECONDS``."""
    connection.execute(delete(LOCKS).where(LOCKS.c.name.startswith(prefix, autoescape=True),
                                           LOCKS.c.at < now - STALE_LOCK_SECONDS))


def inserted_id(result: CursorResult[Any]) -> int:
    """The primary key of the row an ``INSERT`` made."""
    key = result.inserted_primary_key
    assert key is not None
    return int(key[0])
