"""``GET /v1/context/{partition}/{cpos}``: the window or region around one position (static links)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from backend_node.engines import Context
from backend_node.routes.auth import Service
from backend_node.routes.queries import line_model
from backend_node.schemas import ContextResponse
from cowbird.errors import OutOfRange

router = APIRouter(prefix="/v1", tags=["context"])


@router.get("/context/{partition}/{cpos}", response_model=ContextResponse)
async def context(
    partition: str,
    cpos: int,
    service: Service,
    tokens: Annotated[int, Query(ge=0, description="Tokens of context on each side.")] = 20,
    region: Annotated[str | None, Query(description="Extend to the enclosing region (e.g. s) instead.")] = None,
    show: Annotated[list[str] | None, Query(description="p-attributes to show with each token.")] = None,
    meta: Annotated[list[str] | None, Query(description="s-attribute values to report.")] = None,
) -> ContextResponse:
    engine = service.engine(partition)
    shown = Context(tokens, region)
    service.check_request(1, 1, shown)
    if not 0 <= cpos < engine.size:
        raise OutOfRange(f"position {cpos} is outside partition {partition} (0 to {engine.size - 1})")
    line = await service.in_thread(engine.context, cpos, shown, show or [], meta or [])
    return ContextResponse(partition=partition, cpos=cpos, line=line_model(line))
