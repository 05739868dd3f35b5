"""``POST /v1/count``, ``/v1/estimate``, ``/v1/first``, ``/v1/hits`` and the streamed ``/v1/export``
(NDJSON): adapters over :class:`cowbird.node.api.NodeApi`."""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from cowbird.core.wire import (
    CountRequest,
    CountResponse,
    EstimateResponse,
    ExportRequest,
    FirstRequest,
    HitsRequest,
    HitsResponse,
    Line,
)
from cowbird.node.api import NodeApi
from cowbird.node.routes.auth import Service

router = APIRouter(prefix="/v1", tags=["queries"])


@router.post("/count", response_model=CountResponse)
async def count(request: CountRequest, service: Service, http: Request) -> CountResponse:
    http.state.log_partition = request.partition
    answer = await NodeApi(service).count(request, http.is_disconnected)
    http.state.log_hits = answer.total
    return answer


@router.post("/estimate", response_model=EstimateResponse)
async def estimate(request: CountRequest, service: Service, http: Request) -> EstimateResponse:
    """What the query would find and cost on the partition, from its plan and a small sample of it."""
    http.state.log_partition = request.partition
    return await NodeApi(service).estimate(request)


@router.post("/first", response_model=HitsResponse)
async def first(request: FirstRequest, service: Service, http: Request) -> HitsResponse:
    """The first hits of a partition before the rest is counted (the front end's progressive preview)."""
    http.state.log_partition = request.partition
    answer = await NodeApi(service).first(request, http.is_disconnected)
    http.state.log_hits = answer.total
    return answer


@router.post("/hits", response_model=HitsResponse)
async def hits(request: HitsRequest, service: Service, http: Request) -> HitsResponse:
    http.state.log_partition = request.partition
    return await NodeApi(service).hits(request, http.is_disconnected)


@router.post(
    "/export",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}}, "description": "One KWIC line (JSON) per line."}},
)
async def export(request: ExportRequest, service: Service, http: Request) -> StreamingResponse:
    """The lines of a range of hits, streamed as NDJSON, built a batch at a time."""
    http.state.log_partition = request.partition
    found = await NodeApi(service).export(request, http.is_disconnected)

    async def stream() -> AsyncIterator[bytes]:
        async for batch in found.batches:
            yield await service.in_thread(_ndjson, batch)  # written off the event loop

    headers = {"X-Total-Hits": str(found.total), "X-Lines": str(found.lines), "X-Query": found.query}
    return StreamingResponse(stream(), media_type="application/x-ndjson", headers=headers)


def _ndjson(batch: list[Line]) -> bytes:
    return b"".join(line.model_dump_json().encode() + b"\n" for line in batch)
