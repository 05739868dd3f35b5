"""The export streams (:class:`Exports`): exactly the hits asked for, in corpus order, sampled or
sorted, read from the partitions' streams; never a short stream."""

from __future__ import annotations

from collections.abc import AsyncIterator

from cowbird.core.analysis_spec import SortKey
from cowbird.core.operations import HITS
from cowbird.core.search.merge import Sorting, merge
from cowbird.core.search.partitions import P, Statuses, TimeLimit
from cowbird.core.search.plans import plan_sample, plan_window
from cowbird.core.search.query import Located

SAMPLE_BATCH = 1000
"""Sampled hits fetched per request (a node's ``max_hits_per_request``)."""


class Exports(Sorting[P]):
    """A search's hits for a file: streamed from the partitions, whole or not at all."""

    def stream(self, statuses: Statuses[P], offset: int, limit: int, *, sample: tuple[int, int] | None = None,
               sort: SortKey | None = None) -> AsyncIterator[Located[P]]:
        """Exactly the hits ``offset`` .. ``offset + limit`` in corpus order, or sorted, or the
        ``sample`` of (size, seed) — the preview's sample for the same seed —, streamed; a
        :class:`PartitionFailure` if a partition cannot be finished (never a short stream)."""
        if sample is not None:
            return self._sample_stream(statuses, *sample)
        if sort is not None:
            return self._sorted_stream(statuses, sort, offset, limit)
        return self._stream(statuses, offset, limit)

    async def _stream(self, statuses: Statuses[P], offset: int, limit: int) -> AsyncIterator[Located[P]]:
        time = TimeLimit(self.partitions.export_time_limit)
        for status, local, count in plan_window(statuses, offset, limit):
            request = self.view.export_request(status.partition.id, self.query, offset=local, limit=count)
            async for line in self.partitions.export(status.partition, request, count, time):
                yield Located(status.partition, line)

    async def _sample_stream(self, statuses: Statuses[P], size: int, seed: int) -> AsyncIterator[Located[P]]:
        time = TimeLimit(self.partitions.export_time_limit)
        for status, indices in plan_sample(statuses, size, seed):
            for start in range(0, len(indices), SAMPLE_BATCH):
                batch = indices[start : start + SAMPLE_BATCH]
                request = self.view.hits_request(status.partition.id, self.query, indices=batch, limit=len(batch))
                response = await self.partitions.call(status.partition, HITS, request, time)
                for line in response.data:
                    yield Located(status.partition, line)

    async def _sorted_stream(self, statuses: Statuses[P], sort: SortKey, offset: int,
                             limit: int) -> AsyncIterator[Located[P]]:
        """Each partition's sorted stream from its first rank in the range, merged on the sort keys."""
        self.check_sort(sort)
        time = TimeLimit(self.partitions.export_time_limit)
        starts = {s.partition.id: 0 for s in statuses if s.failure is None and s.total}
        if offset:  # each partition starts after its hits among the first `offset` of the merged order
            before, selection = await self._split(statuses, sort, offset, 0, time)
            starts = {status.partition.id: first for status, first in zip(before, selection.starts, strict=True)}
        live = [s for s in statuses if s.failure is None and s.total]
        streams = []
        for k, status in enumerate(live):
            first = starts[status.partition.id]
            count = min((status.total or 0) - first, limit)
            if count <= 0:
                continue
            request = self.view.export_request(status.partition.id, self.query, offset=first, limit=count,
                                               sort=self._spec(status, sort))
            streams.append((k, self.partitions.export(status.partition, request, count, time)))
        sent = 0
        async for k, line in merge(streams, sort.descending):
            yield Located(live[k].partition, line)
            sent += 1
            if sent == limit:
                break
