"""``GET /health``: liveness, without authentication and without touching any corpus."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from cowbird.core.wire import Health
from cowbird.node.state import node_state

router = APIRouter(tags=["health"])


@router.get("/health", response_model=Health)
async def health(request: Request,
                 call: Annotated[str | None, Query(max_length=64, description="A call's X-Cowbird-Call id: how "
                                                   "long has the node worked on it?")] = None) -> Health:
    state = node_state(request)
    seconds = state.calls.seconds(call) if call else None
    return Health(engine=state.settings.engine, partitions=len(state.service.engines),
                  call_seconds=None if seconds is None else round(seconds, 3))
