"""The one LRU cache (``cowbird.core.lru.Lru``): bounded by entries or by a weigher, the least recently
used evicted first, a value heavier than the capacity not kept (or kept alone, if the cache keeps the
newest); `peek` leaves the order; `get_or_put` in one step; shared by threads."""

from __future__ import annotations

import gc
import weakref

import pytest

from cowbird.core.lru import Lru


def test_entries_the_least_recently_used_go_first() -> None:
    cache: Lru[str, int] = Lru(3)
    for key, value in [("a", 1), ("b", 2), ("c", 3)]:
        cache.put(key, value)
    assert cache.get("a") == 1  # now the most recently used: "b" is the oldest
    cache.put("d", 4)
    assert "b" not in cache and cache.get("b") is None
    assert cache.values() == [3, 1, 4] and len(cache) == 3 and cache.weight == 3


def test_in_and_len_do_not_count_as_a_use() -> None:
    cache: Lru[str, str] = Lru(2)
    cache.put("a", "first")
    cache.put("b", "second")
    assert "a" in cache and len(cache) == 2
    cache.put("c", "third")  # "a" was only looked at with `in`: it goes
    assert cache.values() == ["second", "third"]


def test_a_weigher_bounds_the_total_weight() -> None:
    cache: Lru[tuple[str, int], bytes] = Lru(10, len)
    cache.put(("x", 1), b"1234")
    cache.put(("x", 2), b"12345")
    assert cache.weight == 9
    cache.put(("x", 3), b"123")  # 12 > 10: the oldest goes
    assert ("x", 1) not in cache and cache.weight == 8
    cache.put(("x", 4), b"1234567890")  # exactly the capacity: everything else goes
    assert cache.values() == [b"1234567890"] and cache.weight == 10


def test_a_value_heavier_than_the_capacity_is_not_kept() -> None:
    cache: Lru[str, list[int]] = Lru(5, len)
    cache.put("small", [1, 2])
    cache.put("large", list(range(6)))
    assert "large" not in cache and cache.values() == [[1, 2]] and cache.weight == 2
    cache.put("small", list(range(6)))  # replacing with a value too heavy drops the old one too
    assert len(cache) == 0 and cache.weight == 0


def test_put_replaces_and_makes_the_entry_the_most_recent() -> None:
    cache: Lru[str, str] = Lru(8, len)
    cache.put("a", "aaa")
    cache.put("b", "bb")
    cache.put("a", "a")
    assert cache.weight == 3 and cache.values() == ["bb", "a"]
    assert cache.pop("b") == "bb" and cache.pop("b") is None and cache.weight == 1
    cache.clear()
    assert len(cache) == 0 and cache.weight == 0


def test_a_capacity_of_zero_keeps_nothing_and_a_negative_one_is_refused() -> None:
    cache: Lru[int, str] = Lru(0)
    cache.put(1, "one")
    assert len(cache) == 0
    with pytest.raises(ValueError, match="at least 0"):
        Lru(-1)


def test_an_object_as_its_own_key_is_held_so_its_identity_is_never_reused() -> None:
    """Keyed by the object itself, not id(object): while the entry lives the object does, so a new
    object cannot take its id and be mistaken for it."""

    class Result:
        pass

    cache: Lru[tuple[Result, str], str] = Lru(4)
    first = Result()
    cache.put((first, "word"), "sorted")
    alive = weakref.ref(first)
    del first
    gc.collect()
    held = alive()
    assert held is not None  # held by its entry: no other object can be given its id
    others = [Result() for _ in range(100)]
    assert all((other, "word") not in cache for other in others)
    assert cache.get((held, "word")) == "sorted"
    del held
    cache.clear()
    gc.collect()
    assert alive() is None


def test_peek_leaves_the_order_as_it_was() -> None:
    """A cache only put and peeked at is a bounded record: the first in goes first."""
    cache: Lru[str, int] = Lru(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.peek("a") == 1 and cache.peek("z") is None
    cache.put("c", 3)
    assert cache.values() == [2, 3]


def test_keeps_newest_holds_the_value_just_put_alone_when_it_outweighs_the_capacity() -> None:
    cache: Lru[str, list[int]] = Lru(5, len, keeps_newest=True)
    cache.put("small", [1, 2])
    cache.put("other", [3])
    cache.put("large", list(range(8)))  # heavier than the capacity: the others go, it stays
    assert cache.values() == [list(range(8))] and cache.weight == 8
    cache.put("small", [1, 2])  # the oversized one is the least recently used: it goes first
    assert cache.values() == [[1, 2]] and cache.weight == 2
    cache.put("a", [1, 2])
    cache.put("b", [1, 2])  # 6 > 5: the oldest goes, as in any cache
    assert cache.values() == [[1, 2], [1, 2]] and "small" not in cache and cache.weight == 4


def test_get_or_put_makes_the_value_once_and_then_returns_it() -> None:
    cache: Lru[str, list[int]] = Lru(2)
    made: list[str] = []

    def make() -> list[int]:
        made.append("x")
        return []

    first = cache.get_or_put("x", make)
    first.append(1)
    assert cache.get_or_put("x", make) is first and made == ["x"]
    cache.put("y", [2])
    cache.get_or_put("x", make)  # a use: "y" is now the least recently used
    cache.put("z", [3])
    assert "y" not in cache and cache.peek("x") == [1]
    heavy: Lru[str, list[int]] = Lru(1, len)
    assert heavy.get_or_put("w", lambda: [1, 2]) == [1, 2] and len(heavy) == 0  # returned, not held


def test_threads_share_one_cache() -> None:
    import threading

    cache: Lru[int, int] = Lru(64, lambda v: v % 3 + 1)
    errors: list[BaseException] = []

    def work(start: int) -> None:
        try:
            for k in range(start, start + 5_000):
                cache.put(k % 200, k)
                cache.get((k * 7) % 200)
                cache.get_or_put((k * 13) % 200, lambda: 0)
                cache.pop((k * 11) % 200)
        except BaseException as error:  # noqa: BLE001 - any error fails the test below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n * 5_000,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert cache.weight == sum(v % 3 + 1 for v in cache.values()) <= cache.capacity
