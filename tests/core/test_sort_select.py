"""The sorted page's selection across partitions (``cowbird.core.sort_select``), against one global
sort of every hit by (key, partition, rank): random partitions with many equal keys, keys of one or
two levels in either direction, empty spans, random keys, pages anywhere from the first hit to past
the last."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cowbird.core.analysis_merge import MergeKey
from cowbird.core.sort_select import (
    Part,
    considered,
    pivots,
    sample_ranks,
    samples_per_partition,
    select,
)
from cowbird.core.wire import SortBound, SortValue

Keys = list[SortValue]


def place(keys: Keys, base: int, bound: SortBound | None, descending: tuple[bool, ...], default: int) -> int:
    """What a node answers for a bound (``SortOrder.place``), by counting."""
    if bound is None:
        return default
    if bound.base == base:
        return min(bound.rank, len(keys))
    key = MergeKey(bound.key, descending)
    return sum(1 for k in keys if MergeKey(k, descending) < key or (MergeKey(k, descending) == key
                                                                   and base < bound.base))


def brute(partitions: list[Keys], bases: list[int], descending: tuple[bool, ...]) -> list[tuple[int, int]]:
    everything = [(MergeKey(key, descending), bases[k], rank, k) for k, keys in enumerate(partitions)
                  for rank, key in enumerate(keys)]
    return [(k, rank) for _, _, rank, k in sorted(everything)]


def selected(partitions: list[Keys], bases: list[int], descending: tuple[bool, ...], offset: int,
             limit: int, samples: int | None = None) -> tuple[list[tuple[int, int]], list[int], int]:
    """The selection as ``Search._split`` makes it, nodes played by lists; and the keys sent."""
    total = sum(len(keys) for keys in partitions)
    end = min(offset + limit, total)
    parts = [Part(base, considered(len(keys), end)) for base, keys in zip(bases, partitions, strict=True)]
    per = samples or samples_per_partition([p.size for p in parts])
    ranks = [sample_ranks(p.size, per) for p in parts]
    found = pivots(parts, [(r, [keys[i] for i in r]) for r, keys in zip(ranks, partitions, strict=True)],
                   descending, offset, end)
    windows = []
    for part, keys in zip(parts, partitions, strict=True):
        first = place(keys, part.base, found.low, descending, 0)
        last = min(part.size, place(keys, part.base, found.high, descending, len(keys)))
        windows.append((first, keys[first:max(first, last)]))
    chosen = select(parts, windows, descending, offset, end)
    return chosen.page, chosen.starts, sum(len(r) for r in ranks) + sum(len(w) for _, w in windows)


def sorted_partition(keys: Keys, descending: tuple[bool, ...]) -> Keys:
    return [k for _, k in sorted(((MergeKey(k, descending), i), k) for i, k in enumerate(keys))]


words = st.sampled_from(["a", "b", "ba", "c", "Ä", "é", "zz", ""])
level: st.SearchStrategy[list[list[str]]] = st.one_of(
    st.just([]), st.lists(words, min_size=1, max_size=3).map(lambda v: [v]))


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[Keys], tuple[bool, ...]]:
    levels = draw(st.integers(1, 2))
    descending = tuple(draw(st.booleans()) for _ in range(levels))
    random = draw(st.booleans())
    sizes = draw(st.lists(st.integers(0, 60), min_size=1, max_size=5))
    partitions: list[Keys] = []
    for size in sizes:
        if random:
            keys: Keys = draw(st.lists(st.integers(0, 20), min_size=size, max_size=size))
            descending = descending[:1]
        else:
            keys = draw(st.lists(st.lists(level, min_size=levels, max_size=levels), min_size=size, max_size=size))
        partitions.append(sorted_partition(keys, descending))
    return partitions, descending


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(corpora(), st.integers(0, 400), st.integers(0, 30), st.sampled_from([1, 2, 3, 7, None]))
def test_the_page_is_the_global_sort_cut_at_the_offset(corpus: tuple[list[Keys], tuple[bool, ...]], offset: int,
                                                         limit: int, samples: int | None) -> None:
    partitions, descending = corpus
    bases = list(itertools.accumulate([0] + [len(k) + 5 for k in partitions[:-1]]))
    expected = brute(partitions, bases, descending)
    total = len(expected)
    offset = min(offset, total + 3)
    page, starts, _ = selected(partitions, bases, descending, offset, limit, samples)
    assert page == expected[offset:offset + limit]
    before = expected[:offset]
    assert starts == [sum(1 for k, _ in before if k == p) for p in range(len(partitions))]


@pytest.mark.slow
def test_a_deep_page_asks_few_keys() -> None:
    """Offset 100,000 of 120,000 hits in three partitions with many ties: the page is the global sort's,
    and the samples and the window together are a few thousand keys, not the 100,000 before the page."""
    import random

    rng = random.Random(5)
    vocabulary = [f"w{k:03d}" for k in range(400)]
    partitions = [sorted_partition([[[[rng.choice(vocabulary)]]] for _ in range(40_000)], (False,))
                  for _ in range(3)]
    bases = [0, 1_000_000, 2_000_000]
    expected = brute(partitions, bases, (False,))
    page, starts, sent = selected(partitions, bases, (False,), 100_000, 100)
    assert page == expected[100_000:100_100]
    assert sum(starts) == 100_000
    assert sent < 5_000


def test_sample_ranks_spread_from_zero() -> None:
    assert sample_ranks(5, 10) == [0, 1, 2, 3, 4]
    assert sample_ranks(100, 4) == [0, 25, 50, 75]
    assert sample_ranks(0, 4) == []
