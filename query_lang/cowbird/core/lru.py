"""A least-recently-used cache bounded by the weight of what it holds.

Each value weighs what its ``weigher`` says (1 by default: the cache holds at most ``capacity``
entries; or its size in bytes, in hits, …); once the weights sum past ``capacity``, the least
recently used entries go. A value heavier than the whole capacity is not kept. Looking a key up
(``get``) makes it the most recently used; ``in`` and ``len`` do not.

Keys must stay equal to themselves for as long as they are held: never ``id()`` of an object that
can be freed (its number is then given to the next object). Key by a value, or by the object
itself, which the cache then holds.

Not thread-safe: one thread (an event loop) uses a cache, or its callers lock.
"""

from __future__ import annotations

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

    def __init__(self, capacity: int, weigher: Callable[[V], int] = one) -> None:
        if capacity < 0:
            raise ValueError(f"an LRU cache's capacity is at least 0, not {capacity}")
        self.capacity = capacity
        self.weigher = weigher
        self._entries: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._weight = 0

    @property
    def weight(self) -> int:
        """What the values held weigh together (at most ``capacity``)."""
        return self._weight

    def get(self, key: K) -> V | None:
        """The value under ``key`` (now the most recently used), or None."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        self._entries.move_to_end(key)
        return entry[0]

    def put(self, key: K, value: V) -> None:
        """Hold ``value`` under ``key`` (replacing what was there) as the most recently used, then evict
        the least recently used until the weights fit; a value heavier than ``capacity`` is not held."""
        weight = self.weigher(value)
        self.pop(key)
        if weight > self.capacity:
            return
        self._entries[key] = (value, weight)
        self._weight += weight
        while self._weight > self.capacity:
            _, (_, evicted) = self._entries.popitem(last=False)
            self._weight -= evicted

    def pop(self, key: K) -> V | None:
        """Remove ``key``'s entry; its value, or None."""
        entry = self._entries.pop(key, None)
        if entry is None:
            return None
        self._weight -= entry[1]
        return entry[0]

    def clear(self) -> None:
        self._entries.clear()
        self._weight = 0

    def values(self) -> list[V]:
        """The values held, the least recently used first."""
        return [value for value, _ in self._entries.values()]

    def __contains__(self, key: object) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)
