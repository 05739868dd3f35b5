"""The one LRU cache (``cowbird.core.lru.Lru``): bounded by entries or by a weigher, the least recently
used evicted first, a value heavier than the capacity not kept."""

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
