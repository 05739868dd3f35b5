"""Queries across partitions: count everywhere first, then fetch just the window of hits asked for.

Hits are numbered in global corpus order — partition order, then position — so a page at any
offset is served by the partitions it overlaps, using the per-partition totals. A partition
whose nodes all fail is reported (``complete: false``) and left out of the numbering.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from backend_node.schemas import Line
from frontend_api.corpora import Corpus, Partition
from frontend_api.errors import NodesUnavailable, UnknownAttribute
from frontend_api.fanout import NodeClient, NodeFailure
from query_lang import parse_cqp


@dataclass
class PartitionStatus:
    partition: Partition
    total: int | None = None
    error: str | None = None

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.partition.id, "status": "ok" if self.error is None else "failed"}
        data["total"] = self.total
        if self.error is not None:
            data["error"] = self.error
        return data


@dataclass
class Window:
    """What a request shows: context width, attributes of tokens, metadata of the match."""

    context: int = 10
    show: list[str] = field(default_factory=list)
    meta: list[str] = field(default_factory=list)

    def node_params(self) -> dict[str, Any]:
        return {"context": {"tokens": self.context}, "show": [a for a in self.show if a != "word"],
                "structure": self.meta}


def check_window(corpus: Corpus, window: Window) -> None:
    for name in window.show:
        if name not in corpus.p_attributes:
            raise UnknownAttribute(f"show={name}: corpus {corpus.name} has no p-attribute {name!r} "
                                   f"(it has: {', '.join(corpus.p_attributes)})")
    for name in window.meta:
        if name not in corpus.s_attributes:
            raise UnknownAttribute(f"meta={name}: corpus {corpus.name} has no s-attribute {name!r} "
                                   f"(it has: {', '.join(corpus.s_attributes)})")


def hit_json(corpus: Corpus, partition: Partition, line: Line, window: Window) -> dict[str, Any]:
    """One hit as the public API gives it: global position, KWIC strings, attributes, metadata, link."""
    shown = [a for a in window.show if a != "word"]
    position = partition.offset + line.match
    attributes = {name: " ".join(t[k + 1] for t in line.keyword) for k, name in enumerate(shown)}
    if "word" in window.show:
        attributes = {"word": " ".join(t[0] for t in line.keyword), **attributes}
    return {
        "position": position,
        "matchend": partition.offset + line.matchend,
        "partition": partition.id,
        "left": " ".join(t[0] for t in line.left),
        "match": " ".join(t[0] for t in line.keyword),
        "right": " ".join(t[0] for t in line.right),
        "attributes": attributes,
        "meta": line.structure,
        "ref": f"/ref/{corpus.name}/{position}",
    }


class QueryService:
    """The query path of the front end."""

    def __init__(self, nodes: NodeClient) -> None:
        self.nodes = nodes

    async def count(self, corpus: Corpus, cqp: str) -> list[PartitionStatus]:
        """Totals per partition; with ``cut N`` in the query, the first N hits of the whole corpus."""
        results = await self.nodes.gather(
            [lambda p=p: self.nodes.count(p, cqp) for p in corpus.partitions]  # type: ignore[misc]
        )
        statuses = []
        for partition, result in zip(corpus.partitions, results, strict=True):
            if isinstance(result, NodeFailure):
                statuses.append(PartitionStatus(partition, None, str(result)))
            else:
                statuses.append(PartitionStatus(partition, result.total))
        if all(s.error is not None for s in statuses):
            raise NodesUnavailable(
                "no node answered for corpus " + corpus.name + ": " + "; ".join(str(s.error) for s in statuses),
                headers={"Retry-After": "10"},
            )
        cut = parse_cqp(cqp).cut
        if cut is not None:  # each node cut its own partition; the corpus keeps its first `cut` hits
            remaining = cut
            for status in statuses:
                if status.total is not None:
                    status.total = min(status.total, remaining)
                    remaining -= status.total
        return statuses

    async def preview(
        self, corpus: Corpus, cqp: str, offset: int, limit: int, window: Window
    ) -> tuple[list[PartitionStatus], list[dict[str, Any]]]:
        """The hits ``offset`` .. ``offset + limit`` in global order."""
        statuses = await self.count(corpus, cqp)
        plan: list[tuple[PartitionStatus, int, int]] = []
        before = 0
        for status in statuses:
            if status.total is None:
                continue
            first, last = max(offset, before), min(offset + limit, before + status.total)
            if first < last:
                plan.append((status, first - before, last - first))
            before += status.total
        hits: list[dict[str, Any]] = []
        if self.nodes.settings.fanout == "serial":
            for status, local, count in plan:  # in order; stops once the page is full
                if len(hits) >= limit:
                    break
                hits += await self._page(corpus, status, cqp, local, count, window)
        else:
            pages = await self.nodes.gather(
                [lambda s=s, a=a, c=c: self._page(corpus, s, cqp, a, c, window) for s, a, c in plan],  # type: ignore[misc]
            )
            for page in pages:
                if isinstance(page, list):
                    hits += page
        return statuses, hits

    async def _page(
        self, corpus: Corpus, status: PartitionStatus, cqp: str, offset: int, count: int, window: Window
    ) -> list[dict[str, Any]]:
        try:
            response = await self.nodes.hits(status.partition, cqp, offset=offset, limit=count, **window.node_params())
        except NodeFailure as failure:
            status.error = str(failure)
            return []
        return [hit_json(corpus, status.partition, line, window) for line in response.data]

    async def sample(
        self, corpus: Corpus, cqp: str, size: int, seed: int, window: Window
    ) -> tuple[list[PartitionStatus], list[dict[str, Any]]]:
        """``size`` hits drawn uniformly, without replacement, from all hits of all partitions."""
        statuses = await self.count(corpus, cqp)
        ok = [s for s in statuses if s.total]
        totals = np.asarray([s.total for s in ok], dtype=np.int64)
        population = int(totals.sum())
        if population == 0:
            return statuses, []
        chosen = np.sort(np.random.default_rng(seed).choice(population, size=min(size, population), replace=False))
        bounds = np.concatenate(([0], np.cumsum(totals)))
        hits: list[dict[str, Any]] = []
        for k, status in enumerate(ok):
            mine = chosen[(chosen >= bounds[k]) & (chosen < bounds[k + 1])] - bounds[k]
            if len(mine) == 0:
                continue
            try:
                response = await self.nodes.hits(status.partition, cqp, indices=mine.tolist(), limit=len(mine),
                                                 **window.node_params())
            except NodeFailure as failure:
                status.error = str(failure)
                continue
            hits += [hit_json(corpus, status.partition, line, window) for line in response.data]
        return statuses, hits

    async def export(
        self, corpus: Corpus, cqp: str, statuses: list[PartitionStatus], limit: int, window: Window
    ) -> AsyncIterator[tuple[Partition, Line]]:
        """Up to ``limit`` lines in global order, streamed partition by partition."""
        remaining = limit
        for status in statuses:
            if remaining <= 0:
                return
            if not status.total:
                continue
            count = min(remaining, status.total)
            async for line in self.nodes.export(status.partition, cqp, offset=0, limit=count, **window.node_params()):
                yield status.partition, line
            remaining -= count
