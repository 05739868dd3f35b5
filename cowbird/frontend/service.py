"""Queries across partitions: count everywhere first, then fetch just the hits asked for.

Hits are numbered in global corpus order — partition order, then position — so a page at any
offset is served by the partitions it overlaps, using the per-partition totals. A partition
whose nodes all fail is reported (``complete: false``) and left out of the numbering.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from cowbird.core.errors import UnknownAttribute
from cowbird.core.wire import ContextSpec, ExportRequest, HitsRequest, Line
from cowbird.frontend.corpora import CorpusEntry, Partition
from cowbird.frontend.errors import NodesUnavailable, QueryTooSlow
from cowbird.frontend.fanout import Budget, NodeClient, NodeFailure
from cowbird.frontend.schemas import Hit, PartitionResult
from cowbird.query import parse_cqp


@dataclass
class PartitionStatus:
    """How a partition answered so far: its total, or why it failed."""

    partition: Partition
    total: int | None = None
    failure: NodeFailure | None = None

    @property
    def error(self) -> str | None:
        """Why the partition failed, as clients may see it (no node URLs)."""
        return None if self.failure is None else self.failure.public()

    def result(self) -> PartitionResult:
        return PartitionResult(id=self.partition.id, status="ok" if self.error is None else "failed",
                               total=self.total, error=self.error)


@dataclass
class HitView:
    """What each hit shows: tokens of context each side, p-attributes of the match, metadata."""

    context: int = 10
    show: list[str] = field(default_factory=list)
    meta: list[str] = field(default_factory=list)
    region: str | None = None  # context=s: the whole region around the match instead of tokens

    def check(self, corpus: CorpusEntry) -> None:
        """Refuse attributes the corpus does not have, naming the parameter."""
        if self.region is not None and self.region not in corpus.s_attributes:
            raise UnknownAttribute(f"context={self.region}: corpus {corpus.name} has no s-attribute "
                                   f"{self.region!r}; give a number of tokens or one of: "
                                   f"{', '.join(corpus.s_attributes)}")
        for name in self.show:
            if name not in corpus.p_attributes:
                raise UnknownAttribute(f"show={name}: corpus {corpus.name} has no p-attribute {name!r} "
                                       f"(it has: {', '.join(corpus.p_attributes)})")
        for name in self.meta:
            if name not in corpus.s_attributes:
                raise UnknownAttribute(f"meta={name}: corpus {corpus.name} has no s-attribute {name!r} "
                                       f"(it has: {', '.join(corpus.s_attributes)})")

    def node_fields(self) -> dict[str, Any]:
        """The fields of a node request that say what each line shows (word always comes first)."""
        context = ContextSpec(tokens=0, region=self.region) if self.region else ContextSpec(tokens=self.context)
        return {"context": context, "show": [a for a in self.show if a != "word"], "meta": self.meta}

    def hit(self, corpus: CorpusEntry, partition: Partition, line: Line) -> Hit:
        """A node's line as the public API gives it: global positions, KWIC strings, attributes, link."""
        shown = [a for a in self.show if a != "word"]
        position = partition.offset + line.match
        matchend = partition.offset + line.matchend
        attributes = {name: " ".join(t[k + 1] for t in line.keyword) for k, name in enumerate(shown)}
        if "word" in self.show:
            attributes = {"word": " ".join(t[0] for t in line.keyword), **attributes}
        return Hit(
            position=position, matchend=matchend, partition=partition.id,
            left=" ".join(t[0] for t in line.left), match=" ".join(t[0] for t in line.keyword),
            right=" ".join(t[0] for t in line.right), attributes=attributes, meta=line.meta,
            ref=f"/ref/{corpus.name}/{position}" + (f"?end={matchend}" if matchend != position else ""),
        )


COUNT_SHARE = 0.75
"""Share of a query's deadline the counts may use; the rest is for fetching the page of hits."""


class QueryService:
    """The query path of the front end."""

    def __init__(self, nodes: NodeClient) -> None:
        self.nodes = nodes

    def budget(self) -> Budget:
        """The time one preview may take across all nodes (``deadline``)."""
        return Budget(self.nodes.settings.deadline)

    async def count(self, corpus: CorpusEntry, cqp: str, budget: Budget) -> list[PartitionStatus]:
        """Totals per partition; with ``cut N`` in the query, the first N hits of the whole corpus.

        The counts may use three quarters of the budget: a partition too slow for that is reported
        as failed, and the others' hits can still be fetched.
        """
        counting = budget.part(COUNT_SHARE)
        results = await self.nodes.gather(
            [lambda p=p: self.nodes.count(p, cqp, counting) for p in corpus.partitions]  # type: ignore[misc]
        )
        statuses = []
        for partition, result in zip(corpus.partitions, results, strict=True):
            if isinstance(result, NodeFailure):
                statuses.append(PartitionStatus(partition, None, result))
            else:
                statuses.append(PartitionStatus(partition, result.total))
        if all(s.failure is not None for s in statuses):
            raise _all_failed(corpus, statuses)
        cut = parse_cqp(cqp).cut
        if cut is not None:  # each node cut its own partition; the corpus keeps its first `cut` hits
            remaining = cut
            for status in statuses:
                if status.total is not None:
                    status.total = min(status.total, remaining)
                    remaining -= status.total
        return statuses

    async def preview(
        self, corpus: CorpusEntry, cqp: str, offset: int, limit: int, view: HitView
    ) -> tuple[list[PartitionStatus], list[Hit]]:
        """The hits ``offset`` .. ``offset + limit`` in global order.

        Hits are numbered over the partitions that answered. If a partition fails while its page
        is fetched, the numbering changes, so the page is planned and fetched again without it
        (nodes keep the results, so the second round is cheap): the hits always match the totals.
        """
        budget = self.budget()
        statuses = await self.count(corpus, cqp, budget)
        while True:
            failed = sum(s.failure is not None for s in statuses)
            hits = await self._fetch(corpus, cqp, view, budget, _plan(statuses, offset, limit), limit)
            if sum(s.failure is not None for s in statuses) == failed:
                return statuses, hits

    async def _fetch(
        self, corpus: CorpusEntry, cqp: str, view: HitView, budget: Budget,
        plan: list[tuple[PartitionStatus, int, int]], limit: int,
    ) -> list[Hit]:
        hits: list[Hit] = []
        if self.nodes.settings.fanout == "serial":
            for status, local, count in plan:  # in order; stops once the page is full
                if len(hits) >= limit:
                    break
                hits += await self._page(corpus, status, cqp, view, budget, offset=local, limit=count)
            return hits
        pages = await self.nodes.gather(
            [lambda s=s, a=a, c=c: self._page(corpus, s, cqp, view, budget, offset=a, limit=c)  # type: ignore[misc]
             for s, a, c in plan],
        )
        for page in pages:
            if isinstance(page, list):
                hits += page
        return hits

    async def _page(
        self, corpus: CorpusEntry, status: PartitionStatus, cqp: str, view: HitView, budget: Budget, **which: Any
    ) -> list[Hit]:
        """Hits of one partition (``offset``/``limit`` or ``indices``); a failure marks the partition."""
        request = HitsRequest(partition=status.partition.id, query=cqp, **which, **view.node_fields())
        try:
            response = await self.nodes.hits(status.partition, request, budget)
        except NodeFailure as failure:
            status.failure = failure
            return []
        return [view.hit(corpus, status.partition, line) for line in response.data]

    async def sample(
        self, corpus: CorpusEntry, cqp: str, size: int, seed: int, view: HitView
    ) -> tuple[list[PartitionStatus], list[Hit]]:
        """``size`` hits drawn uniformly, without replacement, from all hits of all partitions."""
        budget = self.budget()
        statuses = await self.count(corpus, cqp, budget)
        hits: list[Hit] = []
        for status, indices in sample_plan(statuses, size, seed):
            hits += await self._page(corpus, status, cqp, view, budget, indices=indices, limit=len(indices))
        return statuses, hits

    async def export(
        self, corpus: CorpusEntry, cqp: str, statuses: list[PartitionStatus], offset: int, limit: int,
        view: HitView, sample: tuple[int, int] | None = None,
    ) -> AsyncIterator[Hit]:
        """Exactly the hits ``offset`` .. ``offset + limit`` in global order (or the ``sample`` of
        (size, seed): the preview's sample for the same seed), streamed partition by partition;
        ``NodeFailure`` if a partition cannot be finished on any of its nodes (never a short stream)."""
        budget = Budget(self.nodes.settings.export_deadline)
        if sample is not None:
            for status, indices in sample_plan(statuses, *sample):
                for start in range(0, len(indices), SAMPLE_BATCH):
                    batch = indices[start : start + SAMPLE_BATCH]
                    request = HitsRequest(partition=status.partition.id, query=cqp, indices=batch, limit=len(batch),
                                          **view.node_fields())
                    response = await self.nodes.hits(status.partition, request, budget)
                    for line in response.data:
                        yield view.hit(corpus, status.partition, line)
            return
        for status, local, count in _plan(statuses, offset, limit):
            request = ExportRequest(partition=status.partition.id, query=cqp, offset=local, limit=count,
                                    **view.node_fields())
            async for line in self.nodes.export(status.partition, request, count, budget):
                yield view.hit(corpus, status.partition, line)


SAMPLE_BATCH = 1000
"""Sampled hits fetched per node request (a node's ``max_hits_per_request``)."""


def sample_plan(statuses: list[PartitionStatus], size: int, seed: int) -> list[tuple[PartitionStatus, list[int]]]:
    """Which hits of which partition make the sample of ``size`` for ``seed``: uniform without
    replacement over the hits of the partitions that answered, in global order."""
    ok = [s for s in statuses if s.total and s.failure is None]
    totals = np.asarray([s.total for s in ok], dtype=np.int64)
    population = int(totals.sum())
    if population == 0:
        return []
    chosen = np.sort(np.random.default_rng(seed).choice(population, size=min(size, population), replace=False))
    bounds = np.concatenate(([0], np.cumsum(totals)))
    plan = []
    for k, status in enumerate(ok):
        mine = chosen[(chosen >= bounds[k]) & (chosen < bounds[k + 1])] - bounds[k]
        if len(mine):
            plan.append((status, mine.tolist()))
    return plan


def _plan(statuses: list[PartitionStatus], offset: int, limit: int) -> list[tuple[PartitionStatus, int, int]]:
    """Which partitions hold the hits ``offset`` .. ``offset + limit`` of the partitions that
    answered, as (partition, local offset, count)."""
    plan: list[tuple[PartitionStatus, int, int]] = []
    before = 0
    for status in statuses:
        if status.total is None or status.failure is not None:
            continue
        first, last = max(offset, before), min(offset + limit, before + status.total)
        if first < last:
            plan.append((status, first - before, last - first))
        before += status.total
    return plan


def _all_failed(corpus: CorpusEntry, statuses: list[PartitionStatus]) -> NodesUnavailable | QueryTooSlow:
    """No partition answered: the query was too slow everywhere, or the nodes are not answering."""
    failures = [s.failure for s in statuses if s.failure is not None]
    reasons = "; ".join(f.public() for f in failures)
    if all(f.final or f.timed_out for f in failures):
        return QueryTooSlow(f"the query ran out of time on every partition of {corpus.name}: {reasons}")
    return NodesUnavailable(f"no node answered for corpus {corpus.name}: {reasons}", headers={"Retry-After": "10"})
