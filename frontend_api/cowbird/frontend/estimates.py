"""Anonymous estimates in a lane of their own, so that a flood of them leaves previews alone.

An estimate (``/api/v1/estimate``) is a query's plan and a sample of it on every partition: cheap
alone, but 40 anonymous addresses sending them two at a time (each address's fair use) kept 80 at
work, taking the nodes' interactive places and the front end's connections to them: another
user's cheapest preview took 3.3 s. Anonymous estimates therefore take turns in :class:`EstimateLane`:
one at a time per address (``PER_ADDRESS``), ``[fair_use] anonymous_estimates`` at a time in a
front-end process for all addresses together; past either, 429 at once with ``Retry-After`` (a
flood is told to come back, not queued where it would hold connections). Their node calls go as
background work (``X-Cowbird-Priority: background``): a node runs them beside the interactive ones,
in its background places, never in a preview's. A logged-in user's estimate is one of their queries,
as before (fair use counts it).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from cowbird.core.errors import TooManyRequests
from cowbird.frontend.caller import Caller
from cowbird.frontend.viewer import Viewer

PER_ADDRESS = 1
"""Estimates one anonymous address has at work at once (a search page asks one before it runs a query)."""
RETRY_SECONDS = 1
"""The ``Retry-After`` of an estimate refused for its turn: an estimate takes about a second or less."""


@dataclass
class EstimateLane:
    """Anonymous estimates at work in this process: ``slots`` in all, ``PER_ADDRESS`` per address."""

    slots: int
    running: dict[str, int] = field(default_factory=dict)

    @contextmanager
    def turn(self, viewer: Viewer, key: str, caller: Caller) -> Iterator[None]:
        """The block as an anonymous estimate's turn (``key``: the address), its node calls background
        work; a logged-in viewer's runs as it is. 429 when the address or the lane is at its most."""
        if viewer.name is not None:
            yield
            return
        if self.running.get(key, 0) >= PER_ADDRESS:
            raise TooManyRequests(f"this address has {PER_ADDRESS} estimate at work already without login: wait for "
                                  f"it (or log in)", headers={"Retry-After": str(RETRY_SECONDS)})
        if sum(self.running.values()) >= self.slots:
            raise TooManyRequests(f"{self.slots} estimates without login are at work at once already: retry in "
                                  f"{RETRY_SECONDS} s (or log in)", headers={"Retry-After": str(RETRY_SECONDS)})
        self.running[key] = self.running.get(key, 0) + 1
        before, caller.priority = caller.priority, "background"
        try:
            yield
        finally:
            caller.priority = before
            left = self.running[key] - 1
            if left:
                self.running[key] = left
            else:
                del self.running[key]
