"""The sort-key merge: where the sorted hits ``offset`` .. ``offset + limit`` lie across partitions
(:class:`Sorting`, asking the partitions' sort keys for ``cowbird.core.sort_select``'s pivots and
selection), and partitions' sorted line streams merged on their keys (:func:`merge`)."""

from __future__ import annotations

import functools
import heapq
from collections.abc import AsyncIterator, Sequence
from typing import Any

from cowbird.core.analysis_merge import MergeKey
from cowbird.core.analysis_spec import SortKey
from cowbird.core.errors import NodesUnavailable, UnknownAttribute
from cowbird.core.off_loop import off_loop
from cowbird.core.operations import SORT_KEYS
from cowbird.core.search.counts import Counts
from cowbird.core.search.partitions import P, PartitionFailure, PartitionStatus, Statuses, TimeLimit, no_attribute
from cowbird.core.sort_select import (
    DIRECT_KEYS,
    Inconsistent,
    Part,
    Pivots,
    Selection,
    considered,
    pivots,
    sample_ranks,
    samples_per_partition,
    select,
)
from cowbird.core.wire import Line, SortKeysRequest, SortKeysResponse, SortSpec, SortValue

SORT_KEYS_BATCH = 20_000
"""Sort keys asked of a partition at once when a page lies deep in the sorted hits."""


class Sorting(Counts[P]):
    """A search's sorted hits: the sort checked, each partition's sort keys asked, the page found."""

    def _spec(self, status: PartitionStatus[P], sort: SortKey) -> SortSpec:
        return SortSpec(key=str(sort), direction=sort.direction, seed=sort.seed, base=status.partition.offset,
                        gdex=sort.gdex)

    def check_sort(self, sort: SortKey, written: str | None = None) -> None:
        """Refuse a sort of a cut query or on an attribute the corpus does not have (``written``: the
        sort as the user wrote it, for the message)."""
        self.query.check_no_cut("sorting")
        for level in sort.levels:
            if level.attribute not in self.corpus.p_attributes:
                raise UnknownAttribute(f"sort={written or sort}: {no_attribute(self.corpus, 'p', level.attribute)}")

    def _sort_request(self, status: PartitionStatus[P], sort: SortKey, **asked: Any) -> SortKeysRequest:
        return self.asked(SortKeysRequest, status.partition, sort=self._spec(status, sort), **asked)

    async def _sort_keys(self, status: PartitionStatus[P], time: TimeLimit,
                         request: SortKeysRequest) -> SortKeysResponse:
        return await self.partitions.call(status.partition, SORT_KEYS, request, time)

    async def _window(self, status: PartitionStatus[P], sort: SortKey, size: int, found: Pivots | None,
                      time: TimeLimit) -> tuple[int, list[SortValue]]:
        """A partition's keys between the pivots (all of its first ``size`` without pivots): its first rank
        there and the keys, up to ``size`` ranks, in pieces of at most ``SORT_KEYS_BATCH``."""
        low, high = (found.low, found.high) if found is not None else (None, None)
        answer = await self._sort_keys(status, time, self._sort_request(
            status, sort, start=low, stop=high, limit=min(SORT_KEYS_BATCH, size)))
        first, keys = answer.offset, list(answer.keys)
        last = min(size, answer.total if answer.end is None else answer.end)
        while first + len(keys) < last:
            more = await self._sort_keys(status, time, self._sort_request(
                status, sort, offset=first + len(keys), limit=min(SORT_KEYS_BATCH, last - first - len(keys))))
            if not more.keys:
                break
            keys += more.keys
        return first, keys

    async def _split(self, statuses: Statuses[P], sort: SortKey, offset: int, limit: int, time: TimeLimit,
                     keys: dict[tuple[int, int], SortValue] | None = None,
                     ) -> tuple[list[PartitionStatus[P]], Selection]:
        """Where the sorted hits ``offset`` .. ``offset + limit`` lie (``sort_select``): the partitions
        that answered and, for them, the page as (partition number, rank) and each one's hits before
        it (``keys``, when given: filled with the sort key of each hit of the page, as its partition's
        sort keys gave it). Two rounds at most whatever the offset: samples of every partition's sorted
        keys, then each partition's keys between two pivots. A partition that fails is marked failed
        and the page is found again over the others."""
        while True:
            live = [s for s in statuses if s.failure is None and s.total]
            total = sum(s.total or 0 for s in live)
            if offset >= total:
                return live, Selection([], [s.total or 0 for s in live])
            end = min(offset + limit, total)
            parts = [Part(s.partition.offset, considered(s.total or 0, end)) for s in live]
            found: Pivots | None = None
            if sum(part.size for part in parts) > DIRECT_KEYS:
                per = samples_per_partition([part.size for part in parts])
                ranks = [sample_ranks(part.size, per) for part in parts]
                answers = await self.partitions.gather([
                    functools.partial(self._sort_keys, status, time, self._sort_request(status, sort, ranks=mine))
                    for status, mine in zip(live, ranks, strict=True)])
                if _mark_failed(live, answers):
                    continue
                samples = [(mine, answer.keys) for mine, answer in zip(ranks, answers, strict=True)
                           if not isinstance(answer, PartitionFailure)]
                found = await off_loop(pivots, parts, samples, sort.descending, offset, end)
            windows = await self.partitions.gather([
                functools.partial(self._window, status, sort, part.size, found, time)
                for status, part in zip(live, parts, strict=True)])
            if _mark_failed(live, windows):
                continue
            done = [w for w in windows if not isinstance(w, PartitionFailure)]
            try:
                selection = await off_loop(select, parts, done, sort.descending, offset, end)
            except Inconsistent as exc:
                raise NodesUnavailable(f"the nodes' sorted hits do not add up: {exc}") from exc
            if keys is not None:
                for k, rank in selection.page:
                    first, window = done[k]
                    keys[(k, rank)] = window[rank - first]
            return live, selection


def _mark_failed(live: Sequence[PartitionStatus[Any]], answers: Sequence[object]) -> bool:
    """Mark the partitions whose answer is a failure; whether there was one."""
    failed = False
    for status, answer in zip(live, answers, strict=True):
        if isinstance(answer, PartitionFailure):
            status.failure, failed = answer, True
    return failed


async def merge(streams: list[tuple[int, AsyncIterator[Line]]],
                descending: tuple[bool, ...]) -> AsyncIterator[tuple[int, Line]]:
    """Sorted line streams merged on their sort keys; equal keys in partition order."""
    heap: list[tuple[MergeKey, int, int, Line]] = []
    iterators = dict(streams)
    counter = 0
    try:
        for k, iterator in iterators.items():
            line = await anext(iterator, None)
            if line is not None:
                key = line.sort_key if line.sort_key is not None else []
                heap.append((MergeKey(key, descending), k, counter, line))
                counter += 1
        heapq.heapify(heap)
        while heap:
            _, k, _, line = heapq.heappop(heap)
            yield k, line
            following = await anext(iterators[k], None)
            if following is not None:
                key = following.sort_key if following.sort_key is not None else []
                heapq.heappush(heap, (MergeKey(key, descending), k, counter, following))
                counter += 1
    finally:
        for iterator in iterators.values():
            close = getattr(iterator, "aclose", None)
            if close is not None:
                await close()
