"""A least-recently-used cache bounded by the weight of what it holds: the one cache type of cowbird.

Each value weighs what its ``weigher`` says (1 by default: the cache holds at most ``capacity``
entries; or its size in bytes, in hits, …); once the weights sum past ``capacity``, the least
recently used entries go. A value heavier than the whole capacity is not kept — unless the cache
``keeps_newest``: then the value just put stays, alone (a corpus's one huge match table is worth
more than none). Looking a key up (``get``, ``get_or_put``) makes it the most recently used;
``peek``, ``in`` and ``len`` do not, so a cache only ever ``put`` and ``peek``-ed is a bounded
record in the order its entries came (the first in goes first).

Keys must stay equal to themselves for as long as they are held: never ``id()`` of an object that
can be freed (its number is then given to the next object). Key by a value, or by the object
itself, which the cache then holds.

Thread-safe: each call holds the cache's own lock (uncontended, well under a microsecond), so that
worker threads of one node share a cache; a caller that reads a value and writes it back as one
step still locks around both (or uses ``get_or_put``).

A cache is state: it belongs to the object that owns the data it keeps (the node's service, a
corpus, the front end's catalogue, a fetcher), never to a module. ``functools.lru_cache`` stays
where it memoises a pure function of its hashable arguments (a compiled regex of a pattern), which
holds no corpus data.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


def one(_: object) -> int:
    """The default weigher: every entry weighs 1 (a capacity in entries)."""
    return 1


class Lru(Generic[K, V]):
    """Values by key, at most ``capacity`` of weight in all, the least recently used evicted first."""

    def __init__(self, capacity: int, weigher: Callable[[V], int] = one, *, keeps_newest: bool = False) -> None:
        if capacity < 0:
            raise ValueError(f"an LRU cache's capacity is at least 0, not {capacity}")
        self.capacity = capacity
        self.weigher = weigher
        self.keeps_newest = keeps_newest
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    @property
    def weight(self) -> int:
        """What the values held weigh together (at most ``capacity``, or the newest alone if it
        ``keeps_newest``)."""
        return self._weight

    def get(self, key: K) -> V | None:
        """The value under ``key`` (now the most recently used), or None."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def peek(self, key: K) -> V | None:
        """The value under ``key``, or None; its place in the order stays as it was."""
        with self._lock:
            entry = self._entries.get(key)
            return None if entry is None else entry[0]

    def put(self, key: K, value: V) -> None:
        """Hold ``value`` under ``key`` (replacing what was there) as the most recently used, then evict
        the least recently used until the weights fit; a value heavier than ``capacity`` is not held
        (unless the cache ``keeps_newest``: then it is, alone)."""
        weight = self.weigher(value)
        with self._lock:
            self._put(key, value, weight)

    def get_or_put(self, key: K, make: Callable[[], V]) -> V:
        """The value under ``key`` (now the most recently used); else ``make()``'s, put under it and
        returned (also when too heavy to be held), in one step: two threads asking at once get one
        value. ``make`` runs under the cache's lock: it should be cheap (an empty table to fill)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                return entry[0]
            value = make()
            self._put(key, value, self.weigher(value))
            return value

    def _put(self, key: K, value: V, weight: int) -> None:
        self._pop(key)
        if weight > self.capacity and not self.keeps_newest:
            return
        self._entries[key] = (value, weight)
        self._weight += weight
        while self._weight > self.capacity and len(self._entries) > 1:
            _, (_, evicted) = self._entries.popitem(last=False)
            self._weight -= evicted

    def pop(self, key: K) -> V | None:
        """Remove ``key``'s entry; its value, or None."""
        with self._lock:
            return self._pop(key)

    def _pop(self, key: K) -> V | None:
        entry = self._entries.pop(key, None)
        if entry is None:
            return None
        self._weight -= entry[1]
        return entry[0]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._weight = 0

    def values(self) -> list[V]:
        """The values held, the least recently used first."""
        with self._lock:
            return [value for value, _ in self._entries.values()]

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)
