"""``POST /v1/count``, ``POST /v1/hits`` and the streamed ``POST /v1/export`` (NDJSON)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from cowbird.core.wire import (
    EXPORT_BATCH_LINES,
    CountRequest,
    CountResponse,
    ExportRequest,
    HitsRequest,
    HitsResponse,
    Line,
    SortValue,
)
from cowbird.engines import Context, KwicLine, ResultSet
from cowbird.node.compute import SortOrder
from cowbird.node.routes.auth import Service
from cowbird.node.service import PartitionService

router = APIRouter(prefix="/v1", tags=["queries"])


def line_model(line: KwicLine, sort_key: SortValue | None = None) -> Line:
    return Line(
        match=line.hit.match, matchend=line.hit.matchend, target=line.hit.target, keyword_position=line.hit.keyword,
        left=line.left, keyword=line.keyword, right=line.right, meta=line.meta, sort_key=sort_key,
    )


async def _sorted_models(service: PartitionService, order: SortOrder, ranks: list[int], context: Context,
                         show: list[str], meta: list[str]) -> list[Line]:
    """The lines at sorted ranks, each with its sort key (the front end merges partitions on it)."""
    lines = await service.sorted_lines(order, ranks, context, show, meta)
    keys = await service.in_thread(order.keys, ranks)
    return [line_model(line, key) for line, key in zip(lines, keys, strict=True)]


def _lines_at(
    result: ResultSet, indices: list[int], context: Context, show: list[str], meta: list[str]
) -> list[KwicLine]:
    return [line for i in indices if 0 <= i < result.total for line in result.kwic(i, 1, context, show, meta)]


@router.post("/count", response_model=CountResponse)
async def count(request: CountRequest, service: Service, http: Request) -> CountResponse:
    started = time.perf_counter()
    http.state.log_partition = request.partition
    text, result = await service.run(
        request.partition, request.query, request.strategy, request.hard_boundary, http.is_disconnected
    )
    elapsed = (time.perf_counter() - started) * 1000
    http.state.log_hits = result.total
    return CountResponse(partition=request.partition, query=text, total=result.total, elapsed_ms=elapsed)


@router.post("/hits", response_model=HitsResponse)
async def hits(request: HitsRequest, service: Service, http: Request) -> HitsResponse:
    started = time.perf_counter()
    http.state.log_partition = request.partition
    context = Context(request.context.tokens, request.context.region)
    wanted = len(request.indices) if request.indices is not None else request.limit
    service.check_request(wanted, service.settings.max_hits_per_request, context)
    text, result = await service.run(
        request.partition, request.query, request.strategy, request.hard_boundary, http.is_disconnected
    )
    if request.sort is not None:
        order = await service.order(result, request.sort, http.is_disconnected)
        ranks = [i for i in request.indices if 0 <= i < result.total] if request.indices is not None else \
            list(range(request.offset, min(result.total, request.offset + request.limit)))
        data = await _sorted_models(service, order, ranks, context, request.show, request.meta)
    else:
        if request.indices is not None:
            lines = await service.in_thread(_lines_at, result, request.indices, context, request.show, request.meta)
        else:
            lines = await service.lines(result, request.offset, request.limit, context, request.show, request.meta)
        data = [line_model(line) for line in lines]
    elapsed = (time.perf_counter() - started) * 1000
    return HitsResponse(
        partition=request.partition, query=text, total=result.total, offset=request.offset, data=data,
        elapsed_ms=elapsed,
    )


@router.post(
    "/export",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}}, "description": "One KWIC line (JSON) per line."}},
)
async def export(request: ExportRequest, service: Service, http: Request) -> StreamingResponse:
    """The lines of a range of hits, streamed as NDJSON, built a chunk at a time."""
    http.state.log_partition = request.partition
    context = Context(request.context.tokens, request.context.region)
    service.check_request(request.limit, service.settings.max_export_hits, context)
    text, result = await service.run(
        request.partition, request.query, request.strategy, request.hard_boundary, http.is_disconnected
    )
    stop = min(result.total, request.offset + request.limit)
    if stop > result.held:  # refuse now, while the answer can still be a problem+json
        result.hits(stop - 1, 1)
    order = None if request.sort is None else await service.order(result, request.sort, http.is_disconnected)
    # check attributes before the stream starts, so that errors are still problem+json
    await service.lines(result, request.offset, min(1, request.limit), context, request.show, request.meta)

    async def stream() -> AsyncIterator[bytes]:
        for start in range(request.offset, stop, EXPORT_BATCH_LINES):
            size = min(EXPORT_BATCH_LINES, stop - start)
            if order is not None:
                models = await _sorted_models(service, order, list(range(start, start + size)), context,
                                              request.show, request.meta)
            else:
                lines = await service.lines(result, start, size, context, request.show, request.meta)
                models = [line_model(line) for line in lines]
            yield b"".join(model.model_dump_json().encode() + b"\n" for model in models)

    headers = {"X-Total-Hits": str(result.total), "X-Lines": str(max(0, stop - request.offset)), "X-Query": text}
    return StreamingResponse(stream(), media_type="application/x-ndjson", headers=headers)
