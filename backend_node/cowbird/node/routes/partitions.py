"""``GET /v1/partitions``: what this node serves."""

from __future__ import annotations

from fastapi import APIRouter

from cowbird.core.wire import PartitionInfo, PartitionList
from cowbird.node.routes.auth import Service

router = APIRouter(prefix="/v1", tags=["partitions"])


@router.get("/partitions", response_model=PartitionList)
async def partitions(service: Service) -> PartitionList:
    data = [
        PartitionInfo(
            id=pid, size=e.size, p_attributes=e.p_attributes, s_attributes=e.s_attributes,
            meta=e.meta_attributes, engine=e.name,
        )
        for pid, e in sorted(service.engines.items())
    ]
    return PartitionList(data=data, total=len(data))
