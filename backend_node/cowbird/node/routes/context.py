"""``GET /v1/context/{partition}/{cpos}``: the window or region around one position (static links)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Query

from cowbird.core.errors import OutOfRange
from cowbird.core.wire import MAX_KEYWORD_TOKENS, ContextResponse
from cowbird.engines import Context
from cowbird.node.api import line_model
from cowbird.node.routes.auth import Asking, Service

router = APIRouter(prefix="/v1", tags=["context"])

"""Longest keyword a static link shows (a match end at most this far after its start)."""


@router.get("/context/{partition}/{cpos}", response_model=ContextResponse)
async def context(
    partition: str,
    cpos: Annotated[int, Path(ge=-(2**63), le=2**63 - 1, description="A global corpus position.")],
    service: Service,
    asker: Asking,
    tokens: Annotated[int, Query(ge=0, le=2**63 - 1, description="Tokens of context on each side.")] = 20,
    region: Annotated[str | None, Query(description="Extend to the enclosing region (e.g. s) instead.")] = None,
    show: Annotated[list[str] | None, Query(description="p-attributes to show with each token.")] = None,
    meta: Annotated[list[str] | None, Query(description="s-attribute values to report.")] = None,
    end: Annotated[int | None, Query(ge=0, le=2**63 - 1, description=(
        "Last position of a longer keyword (a match end)."))] = None,
    marks: Annotated[list[str] | None, Query(max_length=8, description=(
        "s-attributes whose region boundaries inside the line are reported (line.breaks).")),] = None,
) -> ContextResponse:
    engine = service.engine(partition)
    shown = Context(tokens, region, tuple(marks or ()))
    service.check_request(1, 1, shown)
    last = cpos if end is None else end
    if not 0 <= cpos <= last < engine.size:
        raise OutOfRange(f"positions {cpos}..{last} are outside partition {partition} (0 to {engine.size - 1})")
    if last - cpos > MAX_KEYWORD_TOKENS:
        raise OutOfRange(f"end={end}: a keyword spans at most {MAX_KEYWORD_TOKENS} tokens")
    line = await service.in_thread(asker, engine.context, cpos, shown, show or [], meta or [], end)
    return ContextResponse(partition=partition, cpos=cpos, line=line_model(line))
