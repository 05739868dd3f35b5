"""A corpus's partitions served in this process: the :class:`~cowbird.core.search.Partitions` of
``cowbird query`` (one corpus, or every partition of a manifest) and of tests.

Each call goes to :class:`~cowbird.node.api.NodeApi` over one :class:`~cowbird.node.service.PartitionService`
holding an engine per partition — the code a node runs for the same request — so that a search over
local partitions answers exactly as one over the nodes. A partition here never fails over: an
error is the search's error.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from cowbird.core.manifest import Manifest
from cowbird.core.operations import Operation, Rq, Rs
from cowbird.core.search import PartitionFailure, PartitionRef, TimeLimit
from cowbird.core.wire import ExportRequest, Line
from cowbird.engines import EngineName, EngineOptions, QueryEngine, open_engine
from cowbird.node.api import NodeApi
from cowbird.node.service import PartitionService
from cowbird.node.settings import NodeSettings

T = TypeVar("T")
UNLIMITED = 10**12
"""Rows and bytes without a practical limit: the command line serves one user, its own."""
A_YEAR = 365 * 24 * 3600.0
"""Seconds without a practical limit (and which every timer takes)."""


@dataclass(frozen=True)
class LocalPartition(PartitionRef):
    """A partition of a local corpus (its id is the one in the registry), read in this process."""


@dataclass(frozen=True)
class LocalCorpus:
    """A corpus of local partitions (a manifest's, or one corpus of a registry)."""

    name: str
    partitions: Sequence[LocalPartition]
    p_attributes: list[str]
    s_attributes: list[str]
    meta: list[str]

    @property
    def parts(self) -> tuple[LocalCorpus, ...]:
        return (self,)

    @classmethod
    def of_manifest(cls, manifest: Manifest) -> LocalCorpus:
        return cls(manifest.corpus, [LocalPartition(p.id, p.size, p.offset) for p in manifest.partitions],
                   manifest.p_attributes, manifest.s_attributes, manifest.meta)

    @classmethod
    def of_engine(cls, corpus_id: str, engine: QueryEngine) -> LocalCorpus:
        """One corpus of a registry, as a corpus of one partition."""
        store = engine.store
        return cls(corpus_id, [LocalPartition(corpus_id, store.size, 0)], store.p_attribute_names,
                   store.s_attribute_names, store.meta_attribute_names)


def command_line_settings(registry: Path, engine: EngineName) -> NodeSettings:
    """A node's settings without its limits on rows, time and memory, for one local user."""
    return NodeSettings(registry=registry, engine=engine, dev=True, max_hits_per_request=UNLIMITED,
                        max_export_hits=UNLIMITED, max_analysis_rows=UNLIMITED, max_analysis_bytes=UNLIMITED,
                        max_sort_keys=UNLIMITED, max_context_tokens=1000, query_timeout=A_YEAR,
                        queue_seconds=A_YEAR, heavy_after_seconds=A_YEAR, max_query_hits=UNLIMITED)


class LocalPartitions:
    """The node API over partitions opened in this process."""

    def __init__(self, settings: NodeSettings, engines: dict[str, QueryEngine]) -> None:
        self.api = NodeApi(PartitionService(settings, engines))
        self.settings = settings
        self.time_limit = self.export_time_limit = settings.query_timeout  # (its Partitions' limits)
        self.serial = False

    @classmethod
    def open(cls, registry: Path, partition_ids: Sequence[str], engine: EngineName = "native",
             settings: NodeSettings | None = None) -> LocalPartitions:
        settings = settings or command_line_settings(registry, engine)
        options: EngineOptions = settings.engine_options()
        return cls(settings, {pid.lower(): open_engine(registry, pid, engine, options) for pid in partition_ids})

    def engine(self, partition_id: str) -> QueryEngine:
        return self.api.service.engine(partition_id)

    async def call(self, partition: LocalPartition, operation: Operation[Rq, Rs], request: Rq,
                   limit: TimeLimit | None = None) -> Rs:
        return await self.api.answer(operation, request)

    async def export(self, partition: LocalPartition, request: ExportRequest, expected: int,
                     limit: TimeLimit | None = None) -> AsyncIterator[Line]:
        found = await self.api.export(request)
        async for batch in found.batches:
            for line in batch:
                yield line

    async def gather(self, calls: list[Callable[[], Awaitable[T]]]) -> list[T | PartitionFailure]:
        return list(await asyncio.gather(*(call() for call in calls)))
