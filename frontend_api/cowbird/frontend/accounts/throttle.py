"""Throttling failed logins and registrations: events per key within a sliding window.

Counted in the account database (``throttle_events``), so every front-end process — on one host or
several behind a proxy — counts the same events, and a restart forgets nothing. Checking and
counting an attempt is one transaction under the keys' locks (``counting.lock``, taken in a fixed
order): attempts sent at once to several processes cannot all slip through under the limit. Over
a limit, a login is refused with 429 and ``Retry-After`` before the password is even checked.

Failed logins are counted per account from one address (5), per account from all addresses
together (20) and per address over all accounts (20), each within 15 minutes. The account is the
one the login resolves to (``Accounts.find``): its name or its e-mail address, in any case, with
spaces around it or in full-width letters, all count as one account, by its id. Every login is
also counted under its normalised text (``login_key``), known or not: a login that names no
account is throttled exactly like one that does, so the answers never tell which names exist.

A login attempt is counted as a failure when it is let through (``Throttle.attempt``), before the
password is checked, and taken back when the password was right (``Throttle.succeeded``).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlalchemy import Connection, Table, delete, insert, select

from cowbird.frontend.accounts.counting import Pruning, counted, inserted_id, lock, prune_locks
from cowbird.frontend.accounts.database import Database
from cowbird.frontend.accounts.models import ThrottleEvent

EVENTS: Table = ThrottleEvent.__table__  # type: ignore[assignment]


@dataclass(frozen=True)
class Counted:
    """One window an attempt counts in: what kind of key, the key, its limit within ``window`` seconds."""

    kind: str
    key: str
    limit: int
    window: float


@dataclass(frozen=True)
class Attempt:
    """What ``take`` decided: the seconds to wait (0: let through, and counted as ``events``)."""

    wait: int
    events: tuple[int, ...] = ()


def _wait(connection: Connection, counted: Counted, now: float) -> int:
    newest = connection.execute(
        select(EVENTS.c.at).where(EVENTS.c.kind == counted.kind, EVENTS.c.key == counted.key,
                                  EVENTS.c.at > now - counted.window)
        .order_by(EVENTS.c.at.desc()).limit(counted.limit)
    ).scalars().all()
    if len(newest) < counted.limit:
        return 0
    return int(newest[-1] + counted.window - now) + 1


def take(database: Database, windows: Sequence[Counted], pruning: Pruning, now: float | None = None) -> Attempt:
    """Seconds until an attempt is allowed in every window; 0 and the attempt counted in each when
    it is allowed now. Atomic across processes."""
    now = time.time() if now is None else now

    def count(connection: Connection) -> Attempt:
        for kind, key in sorted({(c.kind, c.key) for c in windows}):  # one order: no deadlock
            lock(connection, f"throttle:{kind}:{key}", now)
        wait = max((_wait(connection, counted, now) for counted in windows), default=0)
        if wait:
            return Attempt(wait)
        events = tuple(inserted_id(connection.execute(insert(EVENTS).values(kind=c.kind, key=c.key, at=now)))
                       for c in windows)
        if pruning.due(now):
            longest = max(c.window for c in windows)
            connection.execute(delete(EVENTS).where(EVENTS.c.kind.in_({c.kind for c in windows}),
                                                    EVENTS.c.at <= now - longest))
            prune_locks(connection, "throttle:", now)
        return Attempt(0, events)

    return counted(database.counting, count)


def forget(database: Database, events: Sequence[int], kind: str | None = None, keys: Sequence[str] = ()) -> None:
    """Take back the events ``events``, and every event of ``keys`` of ``kind``."""

    def delete_them(connection: Connection) -> None:
        if events:
            connection.execute(delete(EVENTS).where(EVENTS.c.id.in_(list(events))))
        if kind is not None and keys:
            connection.execute(delete(EVENTS).where(EVENTS.c.kind == kind, EVENTS.c.key.in_(list(keys))))

    counted(database.counting, delete_them)


@dataclass
class Window:
    """Events per key within the last ``window`` seconds; a key at ``limit`` has to wait."""

    database: Database
    kind: str
    limit: int
    window: float
    _pruning: Pruning = field(default_factory=Pruning)

    def take(self, key: str, at: float | None = None) -> Attempt:
        """0 (and the event counted) when ``key`` may act now; else the seconds it has to wait."""
        return take(self.database, [Counted(self.kind, key, self.limit, self.window)], self._pruning, at)

    def give_back(self, attempt: Attempt) -> None:
        """The attempt ``take`` counted does not count after all."""
        forget(self.database, attempt.events)


@dataclass
class Throttle:
    """Failed logins. ``accounts`` are the keys of what a login names: ``user:ID`` when it resolves
    to an account, and ``login:TEXT`` (its normalised text) always."""

    database: Database
    per_account_address: int = 5
    per_account: int = 20
    per_address: int = 20
    window: float = 15 * 60.0
    _pruning: Pruning = field(default_factory=Pruning)

    def _windows(self, accounts: Sequence[str], address: str) -> list[Counted]:
        pairs = [Counted("pair", f"{key} from {address}", self.per_account_address, self.window) for key in accounts]
        return pairs + [Counted("account", key, self.per_account, self.window) for key in accounts] + [
            Counted("address", address, self.per_address, self.window)]

    def attempt(self, accounts: Sequence[str], address: str, at: float | None = None) -> Attempt:
        """Seconds until another try is allowed (``wait``; 0: now, and the try is counted as a
        failure until ``succeeded`` says otherwise)."""
        return take(self.database, self._windows(accounts, address), self._pruning, at)

    def succeeded(self, attempt: Attempt, accounts: Sequence[str], address: str) -> None:
        """The right password: the attempt was no failure, and this address starts afresh on the
        account (what other addresses tried still counts against the account)."""
        forget(self.database, attempt.events, "pair", [f"{key} from {address}" for key in accounts])

    def give_back(self, attempt: Attempt) -> None:
        """The attempt could not be judged (an error): it does not count."""
        forget(self.database, attempt.events)


def registrations(database: Database) -> Window:
    """Registrations sent per address (made or not): 10 an hour."""
    return Window(database, "registration", 10, 3600.0)
