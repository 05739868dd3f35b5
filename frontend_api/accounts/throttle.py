"""Login throttling: failures per account and per client address within a sliding window.

Counted in the front-end process (each process throttles on its own). Over the limit, a login is
refused with 429 and ``Retry-After`` before the password is even checked, and the answer is the
same whether the account exists or not.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field


@dataclass
class Throttle:
    per_account: int = 5
    per_address: int = 20
    window: float = 15 * 60.0
    _failures: dict[str, deque[float]] = field(default_factory=dict)

    def _recent(self, key: str, at: float) -> deque[float]:
        times = self._failures.setdefault(key, deque())
        while times and times[0] <= at - self.window:
            times.popleft()
        if not times:
            del self._failures[key]
            return deque()
        return times

    def wait(self, account: str, address: str) -> int:
        """Seconds until another try is allowed (0: now)."""
        at = time.monotonic()
        waits = []
        keys = ((f"account:{account.casefold()}", self.per_account), (f"address:{address}", self.per_address))
        for key, limit in keys:
            times = self._recent(key, at)
            if len(times) >= limit:
                waits.append(int(times[0] + self.window - at) + 1)
        return max(waits, default=0)

    def failed(self, account: str, address: str) -> None:
        at = time.monotonic()
        for key in (f"account:{account.casefold()}", f"address:{address}"):
            self._failures.setdefault(key, deque()).append(at)

    def succeeded(self, account: str) -> None:
        self._failures.pop(f"account:{account.casefold()}", None)
