"""The streamed ``POST /v1/export`` (NDJSON, a batch of lines at a time): an adapter over
:meth:`cowbird.node.api.NodeApi.export`. (The other query routes are the operations' table:
``operations.py``.)"""

from __future__ import annotations

from collections.abc import AsyncIterator

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from cowbird.core.wire import (
    ExportRequest,
    Line,
)
from cowbird.node.api import NodeApi
from cowbird.node.routes.auth import Asking, Service

router = APIRouter(prefix="/v1", tags=["queries"])


@router.post(
    "/export",
    response_class=StreamingResponse,
    responses={200: {"content": {"application/x-ndjson": {}}, "description": "One KWIC line (JSON) per line."}},
)
async def export(request: ExportRequest, service: Service, asker: Asking, http: Request) -> StreamingResponse:
    """The lines of a range of hits, streamed as NDJSON, built a batch at a time."""
    http.state.log_partition = request.partition
    found = await NodeApi(service, asker).export(request)

    async def stream() -> AsyncIterator[bytes]:
        async for batch in found.batches:
            yield await service.in_thread(asker, _ndjson, batch)  # written off the event loop

    headers = {"X-Total-Hits": str(found.total), "X-Lines": str(found.lines), "X-Query": found.query}
    return StreamingResponse(stream(), media_type="application/x-ndjson", headers=headers)


def _ndjson(batch: list[Line]) -> bytes:
    return b"".join(line.model_dump_json().encode() + b"\n" for line in batch)
