"""Pages of hits (:class:`Pages`): a window in corpus order, the same streamed as it becomes known
(``progressive``), a sample, and sorted hits."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Generic, Literal

from cowbird.core.analysis_spec import SortKey
from cowbird.core.operations import COUNT, FIRST, HITS
from cowbird.core.search.consistency import InconsistentAnswer
from cowbird.core.search.counts import COUNT_SHARE
from cowbird.core.search.merge import Sorting
from cowbird.core.search.partitions import P, PartitionFailure, PartitionStatus, Statuses, T, TimeLimit
from cowbird.core.search.plans import plan_key, plan_sample, plan_window, settled_before, until_stable
from cowbird.core.search.query import Located
from cowbird.core.wire import CountResponse, HitsRequest, HitsResponse, SortValue


@dataclass(frozen=True)
class Step(Generic[P]):
    """What a progressive search (``Search.progressive``) learnt: ``page``, the hits asked for (final
    unless a later ``done`` brings others); ``count``, a partition counted or failed (``partition``);
    ``done``, every partition settled, with the page (the exact answer)."""

    kind: Literal["page", "count", "done"]
    statuses: Statuses[Any]
    hits: list[Located[Any]] | None = None
    partition: PartitionStatus[Any] | None = None


class Pages(Sorting[P]):
    """A search's pages of hits: in corpus order, progressively, sampled or sorted."""

    async def page(self, offset: int, limit: int, *, sample: tuple[int, int] | None = None,
                   sort: SortKey | None = None) -> tuple[Statuses[P], list[Located[P]]]:
        """A preview: the hits ``offset`` .. ``offset + limit`` in corpus order or sorted by ``sort``,
        or a ``sample`` of (size, seed) drawn from all hits (then ``offset`` and ``sort`` are unused)."""
        if sample is not None:
            return await self.sample(*sample)
        if sort is not None:
            return await self.sorted(sort, offset, limit)
        return await self.window(offset, limit)

    async def window(self, offset: int, limit: int) -> tuple[Statuses[P], list[Located[P]]]:
        """The hits ``offset`` .. ``offset + limit`` in global order.

        The first partition is asked for its count and its part of the page at once (``/v1/hits``
        answers the total too), the others for their counts; the page's other lines are fetched
        when the counts say where they are. Hits are numbered over the partitions that answered. If a
        partition fails while its page is fetched, the numbering changes, so the page is planned and
        fetched again without it (nodes keep the results, so the second round is cheap): the hits
        always match the totals.
        """
        time = self.time_limit()
        if self.query.cut is not None or not limit or not self.corpus.partitions:
            statuses, early = await self.count(time), None
        else:  # the first partition counts and sends its part of the page in one call
            first = self.corpus.partitions[0]

            async def counted(partition: P, limit_: TimeLimit) -> CountResponse | HitsResponse:
                if partition is first:
                    request = self.view.hits_request(partition.id, self.query, offset=offset, limit=limit)
                    return await self.partitions.call(partition, HITS, request, limit_)
                return await self.partitions.call(partition, COUNT, self._count_request(partition), limit_)

            answered = await self._each(counted, time.part(COUNT_SHARE))
            statuses = [status for status, _ in answered]
            early = answered[0][1] if isinstance(answered[0][1], HitsResponse) else None

        async def attempt() -> list[Located[P]]:
            plan = plan_window(statuses, offset, limit)
            if early is not None and plan and plan[0][0] is statuses[0] and plan[0][1] == offset \
                    and len(early.data) >= plan[0][2]:  # the first partition's part came with its count
                head = [Located(statuses[0].partition, line) for line in early.data[:plan[0][2]]]
                return head + await self._fetch(time, plan[1:], limit - len(head))
            return await self._fetch(time, plan, limit)

        return statuses, await until_stable(statuses, attempt)

    async def progressive(self, offset: int, limit: int) -> AsyncIterator[Step[P]]:
        """The hits ``offset`` .. ``offset + limit`` in corpus order as soon as they are known, then
        each partition's count as it comes, then the exact answer (``Step``).

        Every partition but the first counts at once; the first is asked for its first hits
        (``Partitions.first``), which a node finds without counting the rest, and counts after
        them unless reading them counted it whole (a cheap query: the node then holds its result,
        and no work is done twice, nor the setup of a cold partition run twice at once). The page
        is known when the first partition holds it, or when the partitions before its end have
        counted. Hits are
        numbered over the partitions that answered: if one that the page was planned on fails
        later, ``done`` brings the page again, planned without it. A query with ``cut`` (the first N
        hits of the whole corpus) and serial mode answer at the end only.
        """
        if self.query.cut is not None or self.partitions.serial or not self.corpus.partitions:
            whole, hits = await self.window(offset, limit)
            yield Step("done", whole, hits)
            return
        time = self.time_limit()
        counting = time.part(COUNT_SHARE)
        partitions = list(self.corpus.partitions)
        statuses: Statuses[P] = [PartitionStatus(p, None) for p in partitions]
        def counted(k: int) -> asyncio.Task[CountResponse]:
            return asyncio.ensure_future(self.partitions.call(partitions[k], COUNT, self._count_request(partitions[k]),
                                                              counting))

        early: asyncio.Task[HitsResponse] | None = asyncio.ensure_future(self.partitions.call(
            partitions[0], FIRST, self.view.first_request(partitions[0].id, self.query, offset=offset, limit=limit),
            counting)) if limit > 0 else None
        counts = {counted(k): k for k in range(0 if early is None else 1, len(partitions))}
        page: list[Located[P]] | None = None
        shown: list[tuple[str, int, int]] = []
        try:
            while counts or early is not None:
                waiting: set[asyncio.Future[Any]] = {*counts, *([early] if early is not None else [])}
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if early is not None and early in done:
                    answer, early = _answer(early), None
                    first = statuses[0]
                    if not isinstance(answer, HitsResponse) or not answer.exact:
                        counts[counted(0)] = 0  # its count, after its first hits (or their failure)
                    else:  # the whole partition was read: its count
                        first.total = answer.total
                        yield Step("count", statuses, partition=first)
                    if isinstance(answer, HitsResponse) and page is None:
                        if answer.total >= offset + limit:  # the page lies in the first partition
                            page = [Located(partitions[0], line) for line in answer.data]
                            shown = [(partitions[0].id, offset, len(page))]
                            yield Step("page", statuses, page)
                for task in [t for t in done if t in counts]:
                    status = statuses[counts.pop(task)]
                    result = _answer(task)
                    if isinstance(result, PartitionFailure):
                        status.failure = result
                    else:
                        status.total = result.total
                    yield Step("count", statuses, partition=status)
                if page is None and settled_before(statuses, offset + limit) and \
                        any(s.answered for s in statuses):
                    plan = plan_window([s for s in statuses if s.total is not None], offset, limit)
                    fetched = await self._fetch(time, plan, limit)
                    if all(s.failure is None for s, _, _ in plan):
                        page, shown = fetched, plan_key(plan)
                        yield Step("page", statuses, page)
            self._check_some_answered(statuses)
            if page is None or plan_key(plan_window(statuses, offset, limit)) != shown:
                async def attempt() -> list[Located[P]]:
                    return await self._fetch(time, plan_window(statuses, offset, limit), limit)

                page = await until_stable(statuses, attempt)
            yield Step("done", statuses, page)
        finally:
            for pending in [*counts, *([early] if early is not None else [])]:
                pending.cancel()

    async def _fetch(self, time: TimeLimit, plan: list[tuple[PartitionStatus[P], int, int]],
                     limit: int) -> list[Located[P]]:
        hits: list[Located[P]] = []
        if self.partitions.serial:
            for status, local, count in plan:  # in order; stops once the page is full
                if len(hits) >= limit:
                    break
                hits += await self._lines(status, self.view.hits_request(
                    status.partition.id, self.query, offset=local, limit=count), time)
            return hits
        pages = await self.partitions.gather([
            functools.partial(self._lines, s, self.view.hits_request(s.partition.id, self.query, offset=a, limit=c),
                              time) for s, a, c in plan])
        for page in pages:
            if isinstance(page, list):
                hits += page
        return hits

    async def _lines(self, status: PartitionStatus[P], request: HitsRequest,
                     time: TimeLimit) -> list[Located[P]]:
        """Lines of one partition; a failure marks the partition (the caller plans again)."""
        try:
            response = await self.partitions.call(status.partition, HITS, request, time)
        except PartitionFailure as failure:
            status.failure = failure
            return []
        return [Located(status.partition, line) for line in response.data]

    async def sample(self, size: int, seed: int) -> tuple[Statuses[P], list[Located[P]]]:
        """``size`` hits drawn uniformly, without replacement, from all hits of all partitions, in
        corpus order; the same seed draws the same sample (the export's too)."""
        time = self.time_limit()
        statuses = await self.count(time)
        hits: list[Located[P]] = []
        for status, indices in plan_sample(statuses, size, seed):
            hits += await self._lines(status, self.view.hits_request(
                status.partition.id, self.query, indices=indices, limit=len(indices)), time)
        return statuses, hits

    async def sorted(self, sort: SortKey, offset: int, limit: int) -> tuple[Statuses[P], list[Located[P]]]:
        """The sorted hits ``offset`` .. ``offset + limit`` of the whole corpus (ties in corpus order)."""
        self.check_sort(sort)
        time = self.time_limit()
        statuses = await self.count(time)

        async def attempt() -> list[Located[P]]:
            keys: dict[tuple[int, int], SortValue] = {}
            live, selection = await self._split(statuses, sort, offset, limit, time, keys)
            self._check_some_answered(statuses)  # the counts came, then every sort failed
            lines: dict[tuple[str, int], Located[P]] = {}
            for k, first, count in selection.ranges():
                status = live[k]
                request = self.view.hits_request(status.partition.id, self.query, offset=first, limit=count,
                                                 sort=self._spec(status, sort))
                for rank, hit in enumerate(await self._lines(status, request, time), start=first):
                    if hit.line.sort_key != keys[(k, rank)]:  # another hit than the one its sort keys placed here
                        status.failure = InconsistentAnswer(status.partition.id, (
                            f"answer refused: it sent a hit at sorted rank {rank} ({hit.line.match}-"
                            f"{hit.line.matchend}) whose sort key is not the one its sort keys gave that rank"))
                        break
                    lines[(status.partition.id, rank)] = hit
            self._check_some_answered(statuses)
            return [lines[(live[k].partition.id, rank)] for k, rank in selection.page
                    if (live[k].partition.id, rank) in lines]

        return statuses, await until_stable(statuses, attempt)


def _answer(task: asyncio.Task[T]) -> T | PartitionFailure:
    """A finished call's answer, or the partition's failure."""
    try:
        return task.result()
    except PartitionFailure as failure:
        return failure
