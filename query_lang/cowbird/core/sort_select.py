"""Where a sorted page lies across partitions, found by selection instead of a merge from the top.

Every partition sorts its own hits; all hits of a corpus order by (sort key, partition, rank in the
partition), so ties stay in corpus order. The page ``offset .. end`` of that order is found in two
rounds of questions to the partitions, whatever the offset:

1. **Samples** (:func:`sample_ranks`): each partition sends the keys at evenly spaced ranks of its
   first ``end + 1`` sorted hits (hits after those cannot be among the first ``end``). Merged, the
   samples bound every sample's place in the whole order (:func:`pivots`): a partition's hits before a
   sample are at least one more than its last sample before it and at most the rank of its first
   sample after it. The lower pivot is the last sample whose place is surely at most ``offset``, the
   upper the first whose place is surely at least ``end``.
2. **The window**: each partition tells how many of its hits lie before each pivot (a binary search
   on its sorted keys, ``SortBound``) and sends the keys between them. The hits before the lower
   pivot are counted, not sent; the window's keys are merged (:func:`select`) and the page is cut
   out of them at ``offset`` less that count.

With ``s`` samples a partition, the window holds about the page and three sample gaps of each
partition; :func:`samples_per_partition` chooses ``s`` so that the samples and the window cost about
the same. Both rounds' keys are merged partition by partition (each is already sorted), so the front
end compares keys only ``log2(partitions)`` times a key.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from cowbird.core.analysis_merge import MergeKey
from cowbird.core.wire import SortBound, SortValue

DIRECT_KEYS = 2_000
"""When the partitions' first ``end + 1`` hits are no more than this many keys in all, they are asked for
at once (one round) instead of sampled."""
MIN_SAMPLES, MAX_SAMPLES = 64, 4096


@dataclass(frozen=True)
class Part:
    """One partition as the selection sees it: its global offset (which orders equal keys) and how many
    of its sorted hits can matter (``size``: at most ``end + 1``)."""

    base: int
    size: int


def considered(total: int, end: int) -> int:
    """A partition's sorted hits that can matter for a page ending at ``end``: its first ``end + 1`` (one
    more than the page's end, so that a pivot past them is surely past the page)."""
    return min(total, end + 1)


def samples_per_partition(sizes: Sequence[int]) -> int:
    """Samples a partition sends: about sqrt(2 N / P), which makes the samples (P s keys) and the window
    (about 3 N / s keys) cost alike."""
    parts = max(1, sum(1 for size in sizes if size))
    return max(MIN_SAMPLES, min(MAX_SAMPLES, math.isqrt(2 * sum(sizes) // parts)))


def sample_ranks(size: int, samples: int) -> list[int]:
    """``samples`` ranks spread evenly over ``0 .. size - 1``, the first always 0 (ascending, distinct)."""
    if size <= samples:
        return list(range(size))
    return sorted({k * size // samples for k in range(samples)})


@dataclass(frozen=True)
class Pivots:
    """The places the window lies between (None: the start, or the end, of the order)."""

    low: SortBound | None
    high: SortBound | None


def _merged(parts: Sequence[Part], columns: Sequence[tuple[Sequence[int], Sequence[SortValue]]],
            descending: tuple[bool, ...]) -> Iterator[tuple[MergeKey, int, int, int]]:
    """(key, base, rank, partition number) of every key, in the order of all partitions."""
    return heapq.merge(*[[(MergeKey(key, descending), part.base, rank, k) for rank, key in zip(ranks, keys,
                                                                                               strict=True)]
                         for k, (part, (ranks, keys)) in enumerate(zip(parts, columns, strict=True))])


def pivots(parts: Sequence[Part], samples: Sequence[tuple[Sequence[int], Sequence[SortValue]]],
           descending: tuple[bool, ...], offset: int, end: int) -> Pivots:
    """The lower and upper pivot among the partitions' samples (their ranks and keys, ascending): the
    last sample with at most ``offset`` hits surely before it, and the first with at least ``end``."""
    ranks = [list(r) for r, _ in samples]
    passed = [0] * len(parts)
    # bounds on each partition's hits before the next sample: at most the rank of its next sample not
    # passed yet (its size when none is left), at least one more than its last sample passed (or 0)
    upper = [r[0] if r else part.size for r, part in zip(ranks, parts, strict=True)]
    lower = [0] * len(parts)
    up_sum, low_sum = sum(upper), 0
    low: tuple[MergeKey, int, int] | None = None
    for key, base, rank, k in _merged(parts, samples, descending):
        # this sample's own partition has exactly `rank` hits before it (its upper term is this rank)
        surely_at_most, surely_at_least = up_sum, low_sum - lower[k] + rank
        if surely_at_least >= end:
            return Pivots(_bound(low), _bound((key, base, rank)))
        if surely_at_most <= offset:
            low = (key, base, rank)
        passed[k] += 1
        following = ranks[k][passed[k]] if passed[k] < len(ranks[k]) else parts[k].size
        up_sum += following - upper[k]
        low_sum += rank + 1 - lower[k]
        upper[k], lower[k] = following, rank + 1
    return Pivots(_bound(low), None)


def _bound(sample: tuple[MergeKey, int, int] | None) -> SortBound | None:
    return None if sample is None else SortBound(key=sample[0].key, base=sample[1], rank=sample[2])


@dataclass(frozen=True)
class Selection:
    """A sorted page: ``page`` holds (partition number, rank) of each of its hits in order; ``starts``
    each partition's hits before the page."""

    page: list[tuple[int, int]]
    starts: list[int]

    def ranges(self) -> list[tuple[int, int, int]]:
        """(partition number, first rank, hits) of each partition with hits on the page."""
        first: dict[int, int] = {}
        count: dict[int, int] = {}
        for k, rank in self.page:
            first.setdefault(k, rank)
            count[k] = count.get(k, 0) + 1
        return [(k, first[k], count[k]) for k in sorted(first)]


class Inconsistent(Exception):
    """The partitions' answers cannot hold the page (a node placed a pivot wrongly)."""


def select(parts: Sequence[Part], windows: Sequence[tuple[int, Sequence[SortValue]]], descending: tuple[bool, ...],
           offset: int, end: int) -> Selection:
    """The page ``offset .. end`` cut out of the partitions' windows: each window its first rank (its
    hits before it all come before every window's hits) and its keys from there on."""
    before = sum(first for first, _ in windows)
    skip = offset - before
    if skip < 0:
        raise Inconsistent(f"{before} hits said to come before the window, more than the page's offset {offset}")
    starts = [first for first, _ in windows]
    page: list[tuple[int, int]] = []
    columns = [(range(first, first + len(keys)), keys) for first, keys in windows]
    for position, (_, _, rank, k) in enumerate(_merged(parts, columns, descending)):
        if position < skip:
            starts[k] += 1
        elif position < end - before:
            page.append((k, rank))
        else:
            break
    if len(page) < end - offset:
        raise Inconsistent(f"the windows hold {before + skip + len(page)} hits up to the page's end, not {end}")
    return Selection(page, starts)
