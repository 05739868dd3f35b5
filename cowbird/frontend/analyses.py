"""Analyses across partitions — frequency breakdowns, distributions, collocations, sorted hits —
exact over the whole corpus.

Each partition's node answers with counts (``cowbird.node.compute``) and the front end
adds them up (``cowbird.core.analysis_merge``) before computing shares, rates and association
scores. Sorted hits are merged like sorted streams: every node sorts its own hits and sends the
keys, the front end merges them in order (ties by global position, i.e. partition order, then
position), so the page at any offset holds exactly the hits a single sorted corpus would.
"""

from __future__ import annotations

import functools
import heapq
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from typing import Any, Literal

from cowbird.core.analysis_merge import (
    CollocationTable,
    CooccurrenceSums,
    DistributionSums,
    DistributionTable,
    FrequencyTable,
    Measure,
    MergeKey,
    collocation_table,
    distribution_table,
    frequency_table,
    merge_frequencies,
)
from cowbird.core.analysis_spec import SortKey, parse_fold, parse_span
from cowbird.core.errors import BadParameter, UnknownAttribute
from cowbird.core.wire import (
    CooccurrenceRequest,
    CooccurrenceResponse,
    DistributionRequest,
    DistributionResponse,
    ExportRequest,
    FrequencyRequest,
    FrequencyResponse,
    HitsRequest,
    Line,
    MarginalsRequest,
    SortKeysRequest,
    SortKeysResponse,
    SortSpec,
    SortValue,
)
from cowbird.frontend.corpora import CorpusEntry, Partition
from cowbird.frontend.fanout import Budget, NodeFailure
from cowbird.frontend.off_loop import off_loop
from cowbird.frontend.schemas import Hit
from cowbird.frontend.service import HitView, PartitionStatus, QueryService, _all_failed
from cowbird.query import parse_cqp

SORT_KEYS_BATCH = 20_000
"""Sort keys asked of a node at once when a page lies deep in the sorted hits."""


def check_no_cut(cqp: str, what: str) -> None:
    if parse_cqp(cqp).cut is not None:
        raise BadParameter(f"{what} counts every hit: drop the query's cut (narrow the query down instead)")


class Analyses:
    """The analyses of the front end, over the query service's node client."""

    def __init__(self, queries: QueryService) -> None:
        self.queries = queries
        self.nodes = queries.nodes

    async def _each(self, corpus: CorpusEntry,
                    call: Callable[[Partition, Budget], Any]) -> list[tuple[PartitionStatus, Any]]:
        """One analysis call per partition, as configured (parallel or serial); failures are reported."""
        budget = self.queries.budget()
        answers = await self.nodes.gather(
            [functools.partial(call, p, budget) for p in corpus.partitions])
        statuses: list[tuple[PartitionStatus, Any]] = []
        for partition, answer in zip(corpus.partitions, answers, strict=True):
            if isinstance(answer, NodeFailure):
                statuses.append((PartitionStatus(partition, None, answer), None))
            else:
                statuses.append((PartitionStatus(partition, answer.total), answer))
        if all(status.failure is not None for status, _ in statuses):
            raise _all_failed(corpus, [status for status, _ in statuses])
        return statuses

    # -- frequency -----------------------------------------------------------------------------

    async def frequency(self, corpus: CorpusEntry, cqp: str, attribute: str, on: str | None, fold: str,
                        minimum: int, offset: int, limit: int | None) -> tuple[list[PartitionStatus], FrequencyTable]:
        check_no_cut(cqp, "a frequency breakdown")
        span = parse_span(on)
        folded = parse_fold(fold)
        if attribute not in corpus.p_attributes:
            raise UnknownAttribute(f"by={attribute}: corpus {corpus.name} has no p-attribute {attribute!r} "
                                   f"(it has: {', '.join(corpus.p_attributes)})")

        async def call(partition: Partition, budget: Budget) -> FrequencyResponse:
            request = FrequencyRequest(partition=partition.id, query=cqp, attribute=attribute,
                                       on=str(span), fold=folded)
            return await self.nodes.analysis(partition, "/v1/frequency", request, FrequencyResponse, budget)

        answered = await self._each(corpus, call)
        answers: list[FrequencyResponse] = [a for _, a in answered if a is not None]

        def merged() -> FrequencyTable:
            ordered = merge_frequencies([(a.values, a.counts) for a in answers])
            return frequency_table(ordered, sum(a.counted for a in answers), sum(a.unset for a in answers),
                                   any(a.truncated for a in answers), _answered_size(answered), minimum, offset,
                                   limit)

        return [s for s, _ in answered], await off_loop(merged)

    # -- distribution --------------------------------------------------------------------------

    async def distribution(self, corpus: CorpusEntry, cqp: str, attribute: str,
                           order: Literal["value", "hits", "per_million"]) -> tuple[list[PartitionStatus],
                                                                                    DistributionTable]:
        check_no_cut(cqp, "a distribution")
        if attribute not in corpus.meta:
            raise UnknownAttribute(f"by={attribute}: corpus {corpus.name} has no s-attribute with values named "
                                   f"{attribute!r} (it has: {', '.join(corpus.meta) or 'none'})")

        async def call(partition: Partition, budget: Budget) -> DistributionResponse:
            request = DistributionRequest(partition=partition.id, query=cqp, attribute=attribute)
            return await self.nodes.analysis(partition, "/v1/distribution", request, DistributionResponse, budget)

        answered = await self._each(corpus, call)
        answers: list[DistributionResponse] = [a for _, a in answered if a is not None]

        def merged() -> DistributionTable:
            sums = DistributionSums()
            for a in answers:
                sums.add(a.values, a.hits, a.regions_with_hits, a.tokens, a.regions)
            return distribution_table(sums, sum(a.outside for a in answers), all(a.all_values for a in answers),
                                      any(a.truncated for a in answers), order)

        return [s for s, _ in answered], await off_loop(merged)

    # -- collocations --------------------------------------------------------------------------

    async def collocations(self, corpus: CorpusEntry, cqp: str, attribute: str, left: int, right: int,
                           within: str | None, measures: list[Measure], order: Measure | Literal["f"],
                           min_freq: int) -> tuple[list[PartitionStatus], CollocationTable]:
        check_no_cut(cqp, "a collocation analysis")
        if attribute not in corpus.p_attributes:
            raise UnknownAttribute(f"attribute={attribute}: corpus {corpus.name} has no p-attribute {attribute!r} "
                                   f"(it has: {', '.join(corpus.p_attributes)})")

        async def call(partition: Partition, budget: Budget) -> CooccurrenceResponse:
            request = CooccurrenceRequest(partition=partition.id, query=cqp, attribute=attribute, left=left,
                                          right=right, within=within)
            return await self.nodes.analysis(partition, "/v1/cooccurrence", request, CooccurrenceResponse, budget)

        answered = await self._each(corpus, call)
        # a collocate's marginal counts on every partition, also where it never co-occurs: ask those
        found: dict[str, int] = {}
        for _, a in answered:
            for value, f in zip(a.values if a is not None else [], a.f if a is not None else [], strict=True):
                found[value] = found.get(value, 0) + f
        wanted = {v for v, f in found.items() if f >= min_freq}
        asks = [(status, sorted(wanted - set(a.values))) for status, a in answered if a is not None]
        asks = [(status, values) for status, values in asks if values]
        budget = self.queries.budget()
        answers = await self.nodes.gather([functools.partial(
            self.nodes.marginals, status.partition,
            MarginalsRequest(partition=status.partition.id, attribute=attribute, values=values), budget)
            for status, values in asks])
        marginals: dict[str, tuple[list[str], list[int]]] = {}
        for (status, values), answer in zip(asks, answers, strict=True):
            if isinstance(answer, NodeFailure):
                status.failure = answer  # without its marginals, none of its counts are in
                status.total = None
            else:
                marginals[status.partition.id] = (values, answer.frequencies)
        if all(status.failure is not None for status, _ in answered):
            raise _all_failed(corpus, [status for status, _ in answered])

        def merged() -> CollocationTable:
            sums = CooccurrenceSums()
            for status, a in answered:
                if a is None or status.failure is not None:
                    continue
                sums.add(a.values, a.f, a.marginal, a.in_nodes)
                sums.context_tokens += a.context_tokens
                sums.node_tokens += a.node_tokens
                sums.size += a.size
                sums.truncated = sums.truncated or a.truncated
                if status.partition.id in marginals:
                    values, frequencies = marginals[status.partition.id]
                    sums.add(values, [0] * len(values), frequencies, [0] * len(values))
            return collocation_table(sums, measures, order, min_freq)

        return [s for s, _ in answered], await off_loop(merged)

    # -- sorted hits ---------------------------------------------------------------------------

    def _spec(self, status: PartitionStatus, sort: SortKey) -> SortSpec:
        return SortSpec(key=str(sort), direction=sort.direction, seed=sort.seed, base=status.partition.offset)

    async def _keys(self, status: PartitionStatus, cqp: str, sort: SortKey, count: int,
                    budget: Budget) -> AsyncGenerator[list[SortValue], None]:
        """The sort keys of a partition's first ``count`` sorted hits, a batch at a time: a deep page
        holds a batch of each partition at once, not every key up to its offset."""
        sent = 0
        while sent < count:
            request = SortKeysRequest(partition=status.partition.id, query=cqp, sort=self._spec(status, sort),
                                      offset=sent, limit=min(SORT_KEYS_BATCH, count - sent))
            answer = await self.nodes.analysis(status.partition, "/v1/sortkeys", request, SortKeysResponse, budget)
            if not answer.keys:
                return
            yield answer.keys
            sent += len(answer.keys)

    async def _split(self, statuses: list[PartitionStatus], cqp: str, sort: SortKey, offset: int, limit: int,
                     budget: Budget) -> tuple[list[tuple[PartitionStatus, int, int]], list[tuple[int, int]]]:
        """Where the sorted hits ``offset`` .. ``offset + limit`` lie: per partition (first rank, count),
        and the page's order as (partition number, rank). The partitions' keys are merged as they
        come, a batch at a time (in a worker thread: a deep page's merge is CPU work); a partition
        that fails is marked failed (and the page is made again from the others by the caller)."""
        live = [s for s in statuses if s.failure is None and s.total]
        streams = [self._keys(s, cqp, sort, min(s.total or 0, offset + limit), budget) for s in live]
        merge = _KeyMerge(len(live), sort.direction == "desc", offset, offset + limit)

        async def following(k: int) -> None:
            try:
                merge.feed(k, await anext(streams[k], []))
            except NodeFailure as failure:
                live[k].failure = failure
                merge.feed(k, [])

        try:
            await self.nodes.gather([functools.partial(following, k) for k in range(len(live))])
            while (wanted := await off_loop(merge.run)) is not None:
                await following(wanted)
        finally:
            for stream in streams:
                await stream.aclose()
        ranges: list[tuple[PartitionStatus, int, int]] = []
        for k, status in enumerate(live):
            mine = [rank for p, rank in merge.page if p == k]
            if mine:
                ranges.append((status, mine[0], len(mine)))
        return ranges, merge.page

    async def sorted_preview(self, corpus: CorpusEntry, cqp: str, offset: int, limit: int, view: HitView,
                             sort: SortKey) -> tuple[list[PartitionStatus], list[Hit]]:
        """The sorted hits ``offset`` .. ``offset + limit`` of the whole corpus."""
        check_no_cut(cqp, "sorting")
        budget = self.queries.budget()
        statuses = await self.queries.count(corpus, cqp, budget)
        while True:
            failed = sum(s.failure is not None for s in statuses)
            ranges, page = await self._split(statuses, cqp, sort, offset, limit, budget)
            if all(s.failure is not None for s in statuses):  # the counts came, then every sort failed
                raise _all_failed(corpus, statuses)
            lines: dict[tuple[str, int], Hit] = {}
            live = [s for s in statuses if s.failure is None and s.total]
            for status, first, count in ranges:
                request = HitsRequest(partition=status.partition.id, query=cqp, sort=self._spec(status, sort),
                                      offset=first, limit=count, **view.node_fields())
                try:
                    response = await self.nodes.hits(status.partition, request, budget)
                except NodeFailure as failure:
                    status.failure = failure
                    continue
                for rank, line in enumerate(response.data, start=first):
                    lines[(status.partition.id, rank)] = view.hit(corpus, status.partition, line)
            if all(s.failure is not None for s in statuses):
                raise _all_failed(corpus, statuses)
            if sum(s.failure is not None for s in statuses) == failed:
                return statuses, [lines[(live[k].partition.id, rank)] for k, rank in page]

    async def sorted_export(self, corpus: CorpusEntry, cqp: str, statuses: list[PartitionStatus], offset: int,
                            limit: int, view: HitView, sort: SortKey) -> AsyncIterator[Hit]:
        """Exactly the sorted hits ``offset`` .. ``offset + limit``: each partition's sorted stream from
        its first rank in the range, merged on the sort keys."""
        check_no_cut(cqp, "sorting")
        budget = Budget(self.nodes.settings.export_deadline)
        live = [s for s in statuses if s.failure is None and s.total]
        starts = {s.partition.id: 0 for s in live}
        if offset:  # each partition starts after its hits among the first `offset` of the merged order
            before, _ = await self._split(statuses, cqp, sort, 0, offset, budget)
            starts.update({status.partition.id: count for status, _first, count in before})
        streams = []
        for k, status in enumerate(live):
            first = starts[status.partition.id]
            count = min((status.total or 0) - first, limit)
            if count <= 0:
                continue
            request = ExportRequest(partition=status.partition.id, query=cqp, sort=self._spec(status, sort),
                                    offset=first, limit=count, **view.node_fields())
            streams.append((k, status, self.nodes.export(status.partition, request, count, budget)))
        sent = 0
        async for k, line in _merge(streams, sort.direction == "desc"):
            yield view.hit(corpus, live[k].partition, line)
            sent += 1
            if sent == limit:
                break


class _KeyMerge:
    """The partitions' sort keys merged in order, batch by batch, up to rank ``end``; ``page``
    holds (partition number, rank) of the ranks ``offset`` .. ``end``."""

    def __init__(self, partitions: int, descending: bool, offset: int, end: int) -> None:
        self.descending = descending
        self.offset, self.end = offset, end
        self.heap: list[tuple[MergeKey, int, int]] = []
        self.batches: list[list[SortValue]] = [[] for _ in range(partitions)]
        self.used = [0] * partitions  # keys of the current batch taken
        self.ranks = [0] * partitions  # keys of the partition taken
        self.position = 0
        self.page: list[tuple[int, int]] = []

    def feed(self, k: int, keys: list[SortValue]) -> None:
        """The next batch of partition ``k`` (empty: it has no more); its first key joins the merge."""
        self.batches[k], self.used[k] = keys, 0
        self._next(k)

    def _next(self, k: int) -> bool:
        if self.used[k] == len(self.batches[k]):
            return False
        key = self.batches[k][self.used[k]]
        heapq.heappush(self.heap, (MergeKey(key, self.descending), k, self.ranks[k]))
        self.used[k] += 1
        self.ranks[k] += 1
        return True

    def run(self) -> int | None:
        """Merge on until the page is complete (None) or partition ``k``'s batch is used up while it
        may have more (``k``: feed it its next batch, then run again)."""
        while self.heap and self.position < self.end:
            _, k, rank = heapq.heappop(self.heap)
            if self.position >= self.offset:
                self.page.append((k, rank))
            self.position += 1
            if not self._next(k) and self.batches[k]:
                return k
        return None


def _answered_size(answered: list[tuple[PartitionStatus, Any]]) -> int:
    """Tokens in the partitions that answered (the base of per-million rates)."""
    return sum(status.partition.size for status, answer in answered if answer is not None)


async def _merge(streams: list[tuple[int, PartitionStatus, AsyncIterator[Line]]],
                 descending: bool) -> AsyncIterator[tuple[int, Line]]:
    """Sorted line streams merged on their sort keys; equal keys in partition order."""
    heap: list[tuple[MergeKey, int, int, Line]] = []
    iterators = {k: stream for k, _, stream in streams}
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
