"""Throttling failed logins and registrations: events per key within a sliding window.

Counted in the front-end process (each process throttles on its own). Over a limit, a login is
refused with 429 and ``Retry-After`` before the password is even checked.

Failed logins are counted per account from one address (5), per account from all addresses
together (20) and per address over all accounts (20), each within 15 minutes. The account is the
one the login resolves to (``Accounts.find``): its name or its e-mail address, in any case, with
spaces around it or in full-width letters, all count as one account, by its id. Every login is
also counted under its normalised text (``login_key``), known or not: a login that names no
account is throttled exactly like one that does, so the answers never tell which names exist.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

PRUNE_AT = 10_000  # keys kept before the stale ones are swept out


@dataclass
class Window:
    """Events per key within the last ``window`` seconds; a key at ``limit`` has to wait."""

    limit: int
    window: float
    _events: dict[str, deque[float]] = field(default_factory=dict)

    def _recent(self, key: str, at: float) -> deque[float]:
        times = self._events.get(key)
        if times is None:
            return deque()
        while times and times[0] <= at - self.window:
            times.popleft()
        if not times:
            del self._events[key]
        return times

    def wait(self, key: str, at: float | None = None) -> int:
        """Seconds until ``key`` may act again (0: now)."""
        at = time.monotonic() if at is None else at
        times = self._recent(key, at)
        if len(times) < self.limit:
            return 0
        return int(times[-self.limit] + self.window - at) + 1

    def add(self, key: str, at: float | None = None) -> None:
        at = time.monotonic() if at is None else at
        if len(self._events) >= PRUNE_AT:
            for stale in list(self._events):
                self._recent(stale, at)
        self._events.setdefault(key, deque()).append(at)

    def clear(self, key: str) -> None:
        self._events.pop(key, None)


@dataclass
class Throttle:
    """Failed logins. ``accounts`` are the keys of what a login names: ``user:ID`` when it resolves
    to an account, and ``login:TEXT`` (its normalised text) always."""

    per_account_address: int = 5
    per_account: int = 20
    per_address: int = 20
    window: float = 15 * 60.0
    _windows: dict[str, Window] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._windows = {"pair": Window(self.per_account_address, self.window),
                         "account": Window(self.per_account, self.window),
                         "address": Window(self.per_address, self.window)}

    def _keys(self, accounts: Sequence[str], address: str) -> list[tuple[Window, str]]:
        pair, account, by_address = self._windows["pair"], self._windows["account"], self._windows["address"]
        keys = [(pair, f"{key} from {address}") for key in accounts]
        return keys + [(account, key) for key in accounts] + [(by_address, address)]

    def wait(self, accounts: Sequence[str], address: str) -> int:
        """Seconds until another try is allowed (0: now)."""
        at = time.monotonic()
        return max((window.wait(key, at) for window, key in self._keys(accounts, address)), default=0)

    def failed(self, accounts: Sequence[str], address: str) -> None:
        at = time.monotonic()
        for window, key in self._keys(accounts, address):
            window.add(key, at)

    def succeeded(self, accounts: Sequence[str], address: str) -> None:
        """The right password: this address starts afresh on the account (what other addresses
        tried still counts against the account)."""
        for key in accounts:
            self._windows["pair"].clear(f"{key} from {address}")


def registrations() -> Window:
    """Registrations sent per address (made or not): 10 an hour."""
    return Window(10, 3600.0)
