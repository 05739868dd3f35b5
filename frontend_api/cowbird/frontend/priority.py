"""Interactive first, fairly: which requests are background work, and how they take turns.

Requests are of two classes. *Interactive*: a preview, a count, the first sorted pages, context,
``/ref``, an estimate, the subcorpus picker — what a person waits for. *Background*: analyses
(frequency, distribution, collocations, dispersion, trends, comparisons, word sketches and their
differences, the thesaurus, word and keyword lists), exports, sorted pages deep in the hits
(``DEEP_SORT`` and beyond), and queries estimated beyond the interactive budget. Background work:

- waits longer (``BACKGROUND_TIME``), the nodes counting its cost in CPU seconds;
- is marked for the nodes (``X-Cowbird-Priority: background``, from the request's
  ``caller.Caller``, which its node calls carry): a node runs it beside interactive work, never in its place, at the
  lowest CPU priority, stepping aside at each deadline check while interactive work runs
  (``cowbird.node.scheduler``);
- takes turns in the front end (:class:`Lanes`): at most ``slots`` background requests of this
  process at work at once, shared **per viewer**, not per request — a free slot goes to the waiting
  viewer with the fewest requests at work, among equals the one served longest ago (round robin over
  viewers, first come first served within one) —, so a viewer's ten analyses take one share
  while others wait, and the idle slots when nobody does.

The lanes are per front-end process; with several processes each shares out its own slots.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Literal

Priority = Literal["interactive", "background"]
HEADER = "X-Cowbird-Priority"
DEEP_SORT = 1_000
"""Sorted pages from this offset on are background work (the first pages of a sort stay interactive)."""
BACKGROUND_TIME = 5.0
"""Background work waits this many times longer than interactive work: for its turn, for a node's
answer, for the whole request. A node counts its deadline in CPU seconds instead (it runs niced and
steps aside, so its time on the clock says little of its cost), with this many times more on the clock."""


@dataclass
class Turn:
    """A background request's turn: :meth:`release` (once) gives it to the next viewer in line."""

    lanes: Lanes
    key: str
    released: bool = False

    def release(self) -> None:
        if not self.released:
            self.released = True
            self.lanes._done(self.key)


@dataclass
class Lanes:
    """Background turns, ``slots`` at once, shared out per viewer key (the fewest at work first)."""

    slots: int
    running: dict[str, int] = field(default_factory=dict)
    waiting: OrderedDict[str, deque[asyncio.Future[None]]] = field(default_factory=OrderedDict)
    served: dict[str, int] = field(default_factory=dict)  # when each viewer at work or waiting last got a turn
    turns: int = 0

    @property
    def busy(self) -> int:
        return sum(self.running.values())

    def queued(self) -> int:
        return sum(len(line) for line in self.waiting.values())

    async def turn(self, key: str) -> Turn:
        """Wait for this viewer's turn at background work (the caller marks the request as background:
        ``Caller.priority``). Cancelled while waiting (the client went), it leaves the line."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.setdefault(key, deque()).append(future)
        self._dispatch()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # the turn came just as the client went
                self._done(key)
            else:
                self._leave(key, future)
            raise
        return Turn(self, key)

    def _leave(self, key: str, future: asyncio.Future[None]) -> None:
        line = self.waiting.get(key)
        if line is not None and future in line:
            line.remove(future)
            if not line:
                del self.waiting[key]
                if not self.running.get(key):
                    self.served.pop(key, None)

    def _done(self, key: str) -> None:
        self.running[key] -= 1
        if not self.running[key]:
            del self.running[key]
            if key not in self.waiting:
                self.served.pop(key, None)  # gone: nothing to remember of it
        self._dispatch()

    def _dispatch(self) -> None:
        """Give free slots to the viewers who wait: the fewest at work first, then the one served
        longest ago (never: first), then the first in line."""
        while self.busy < self.slots and self.waiting:
            chosen = min(self.waiting, key=lambda key: (self.running.get(key, 0), self.served.get(key, -1)))
            self.turns += 1
            self.served[chosen] = self.turns
            line = self.waiting.pop(chosen)
            future = line.popleft()
            if line:  # the viewer's next request waits at the end of the round
                self.waiting[chosen] = line
            if future.cancelled():
                continue
            self.running[chosen] = self.running.get(chosen, 0) + 1
            future.set_result(None)
