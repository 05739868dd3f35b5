"""``GET /v1/partitions``: what this node serves; ``POST /v1/registry/reload``: serve what its
registry directory holds now (the workshop's published corpora, without a restart)."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter

from cowbird.core.wire import PartitionInfo, PartitionList
from cowbird.engines import QueryEngine, open_engine
from cowbird.node.routes.auth import Service
from cowbird.node.service import PartitionService
from cowbird.store import RegistryError, list_registry

router = APIRouter(prefix="/v1", tags=["partitions"])
_reloading = asyncio.Lock()  # one reload at a time in this process


def _served(service: PartitionService) -> PartitionList:
    data = [
        PartitionInfo(
            id=pid, size=e.size, p_attributes=e.p_attributes, s_attributes=e.s_attributes,
            meta=e.meta_attributes, engine=e.name,
        )
        for pid, e in sorted(service.engines.items())
    ]
    return PartitionList(data=data, total=len(data))


@router.get("/partitions", response_model=PartitionList)
async def partitions(service: Service) -> PartitionList:
    return _served(service)


def reload_registry(service: PartitionService) -> None:
    """Rescan the registry directory: open the partitions that are new there (all of them, or those
    of the settings' ``corpora`` list), close those whose registry file is gone. A partition that
    cannot be opened fails the reload with its reason, and nothing changes."""
    settings = service.settings
    available = {corpus_id.lower() for corpus_id in list_registry(settings.registry)}
    wanted = {c.lower() for c in settings.corpora} & available if settings.corpora else available
    options = settings.engine_options()
    opened: dict[str, QueryEngine] = {}
    try:
        for corpus_id in sorted(wanted - set(service.engines)):
            opened[corpus_id] = open_engine(settings.registry, corpus_id, settings.engine, options, warm=True)
    except (RegistryError, OSError) as exc:
        for engine in opened.values():
            _close(engine)
        raise RegistryError(f"registry reload of {settings.registry}: {exc}") from exc
    gone = [corpus_id for corpus_id in service.engines if corpus_id not in available]
    engines = {k: v for k, v in service.engines.items() if k not in gone} | opened
    closed = [service.engines[corpus_id] for corpus_id in gone]
    service.engines = engines  # one assignment: a query sees the old set or the new one
    if gone:  # results of the closed partitions are kept no longer
        service.cache.clear()
        service.orders.clear()
    for engine in closed:
        _close(engine)


def _close(engine: QueryEngine) -> None:
    close = getattr(engine, "close", None)
    if callable(close):
        close()


@router.post("/registry/reload", response_model=PartitionList)
async def reload(service: Service) -> PartitionList:
    """Open the partitions new in the registry directory, close those whose registry file is gone,
    and answer what the node serves now."""
    async with _reloading:
        await asyncio.to_thread(reload_registry, service)
    return _served(service)
