"""Interactive first, fairly by cost: how background work takes turns.

Requests are of two classes (``classing.py`` decides which by the estimated cost, not by the kind of
request). *Interactive*: what a person waits for and what is estimated cheap — a preview, a count, an
estimate, the subcorpus picker, a sorted page, an export or an analysis within the interactive
budget. *Background*: what is estimated beyond it, and word and keyword lists, word sketches, trends
and comparisons (not estimated yet). Background work:

- waits longer (``BACKGROUND_TIME``), the nodes counting its cost in CPU seconds;
- is marked for the nodes (``X-Cowbird-Priority: background``, from the request's
  ``caller.Caller``, which its node calls carry): a node runs it beside interactive work, never in its place, at the
  lowest CPU priority, stepping aside at each deadline check while interactive work runs
  (``cowbird.node.scheduler``);
- takes turns in the front end (:class:`Lanes`): at most ``slots`` background requests of this
  process at work at once, shared **per viewer by cost** — weighted fair queuing on node seconds: a
  free slot goes to the waiting viewer whose background work has been charged least —, so a viewer's
  ten heavy requests take one share while others wait, a viewer with one cheap request is served
  next, and the idle slots go to whoever waits.

The lanes are per front-end process; with several processes each shares out its own slots.
"""
from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Literal

Priority = Literal["interactive", "background"]
HEADER = "X-Cowbird-Priority"
LONG_SECONDS = 2.0
"""Background work estimated at this many node seconds or more is long: it takes at most
``[limits] long_background_slots`` of the background turns at once (``Lanes``)."""
DEEP_SORT = 1_000
"""Sorted pages from this offset on are background work (the first pages of a sort stay interactive)."""
BACKGROUND_TIME = 5.0
"""Background work waits this many times longer than interactive work: for its turn, for a node's
answer, for the whole request. A node counts its deadline in CPU seconds instead (it runs niced and
steps aside, so its time on the clock says little of its cost), with this many times more on the clock."""


@dataclass
class Turn:
    """A background request's turn: :meth:`release` (once) gives it to the next viewer in line. It was
    charged its estimated node seconds (``charged``) when it began; released, it is charged what it
    spent instead."""

    lanes: Lanes
    key: str
    charged: float = 0.0
    released: bool = False
    long: bool = False  # one of the long turns (``Lanes.long_slots``)

    def release(self, spent: float | None = None) -> None:
        """The turn ends, having cost ``spent`` node seconds (None: as estimated)."""
        if not self.released:
            self.released = True
            self.lanes._done(self.key, self.charged if spent is None else spent, self.charged, self.long)


@dataclass
class Lanes:
    """Background turns, ``slots`` at once, shared out per viewer key by cost: a free slot goes to the
    waiting viewer whose background work has cost least so far (weighted fair queuing on node seconds).

    Each viewer's *use* is the node seconds of their background work while they have any at work or
    waiting: a turn adds its estimate when it begins and, when it ends, what it really cost in its
    place. A viewer who comes (back) starts at the least use among those at work or waiting, never
    below — time spent idle is not saved up —, so a viewer's ten heavy requests take one share and a
    viewer with one cheap request is served next. Among equal uses: the fewest at work, then the one
    served longest ago, then the first in line.

    *Long* turns — estimated at ``long_seconds`` of node time or more (a heavy query, a wide export) —
    take at most ``long_slots`` of the slots at once: the others stay for short background work (an
    analysis of a common word), which never waits behind minutes of heavy queries, only its turn
    among short ones; a long turn that finds its slots taken waits while short ones go past it."""

    slots: int
    long_slots: int = 1
    long_seconds: float = LONG_SECONDS
    running: dict[str, int] = field(default_factory=dict)
    waiting: OrderedDict[str, deque[tuple[asyncio.Future[None], float]]] = field(default_factory=OrderedDict)
    served: dict[str, int] = field(default_factory=dict)  # when each viewer at work or waiting last got a turn
    used: dict[str, float] = field(default_factory=dict)  # node seconds of each viewer at work or waiting
    turns: int = 0
    long_running: int = 0  # long turns at work

    @property
    def busy(self) -> int:
        return sum(self.running.values())

    def queued(self) -> int:
        return sum(len(line) for line in self.waiting.values())

    async def turn(self, key: str, cost: float = 0.0) -> Turn:
        """Wait for this viewer's turn at background work that is estimated to cost ``cost`` node seconds
        (the caller marks the request as background: ``Caller.priority``). Cancelled while waiting (the
        client went), it leaves the line."""
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        if key not in self.used:
            self.used[key] = min(self.used.values(), default=0.0)
        self.waiting.setdefault(key, deque()).append((future, cost))
        self._dispatch()
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():  # the turn came just as the client went
                self._done(key, 0.0, cost, self.is_long(cost))
            else:
                self._leave(key, future)
            raise
        return Turn(self, key, cost, long=self.is_long(cost))

    def is_long(self, cost: float) -> bool:
        """Whether a turn of this estimated cost is a long one (``long_slots``)."""
        return cost >= self.long_seconds

    def share(self, key: str) -> float:
        """The node seconds this viewer's background work has been charged while at work or waiting."""
        return self.used.get(key, 0.0)

    def _forget(self, key: str) -> None:
        if not self.running.get(key) and key not in self.waiting:
            self.served.pop(key, None)  # gone: nothing to remember of it
            self.used.pop(key, None)

    def _leave(self, key: str, future: asyncio.Future[None]) -> None:
        line = self.waiting.get(key)
        if line is not None:
            for entry in line:
                if entry[0] is future:
                    line.remove(entry)
                    break
            if not line:
                del self.waiting[key]
                self._forget(key)

    def _done(self, key: str, spent: float, charged: float, long: bool = False) -> None:
        self.used[key] = self.used.get(key, 0.0) + max(0.0, spent) - charged
        if long:
            self.long_running -= 1
        self.running[key] -= 1
        if not self.running[key]:
            del self.running[key]
            self._forget(key)
        self._dispatch()

    def _dispatch(self) -> None:
        """Give free slots to the viewers who wait: the least use first, then the fewest at work, then
        the one served longest ago (never: first), then the first in line; a viewer whose next request
        is long waits while the long slots are taken."""
        while self.busy < self.slots and self.waiting:
            room = self.long_running < self.long_slots
            ready = [key for key, line in self.waiting.items() if room or not self.is_long(line[0][1])]
            if not ready:
                break
            chosen = min(ready, key=lambda key: (self.used.get(key, 0.0), self.running.get(key, 0),
                                                 self.served.get(key, -1)))
            self.turns += 1
            self.served[chosen] = self.turns
            line = self.waiting.pop(chosen)
            future, cost = line.popleft()
            if line:  # the viewer's next request waits at the end of the round
                self.waiting[chosen] = line
            if future.cancelled():
                self._forget(chosen)
                continue
            self.running[chosen] = self.running.get(chosen, 0) + 1
            self.long_running += self.is_long(cost)
            self.used[chosen] = self.used.get(chosen, 0.0) + cost
            future.set_result(None)
