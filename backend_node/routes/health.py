"""``GET /health``: liveness, without authentication and without touching any corpus."""

from __future__ import annotations

from fastapi import APIRouter, Request

from backend_node.schemas import Health

router = APIRouter(tags=["health"])


@router.get("/health", response_model=Health)
async def health(request: Request) -> Health:
    service = request.app.state.service
    return Health(engine=request.app.state.settings.engine, partitions=len(service.engines))
