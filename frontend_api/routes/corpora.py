"""``GET /api/v1/corpora``: the corpora the user may see."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from frontend_api.routes.deps import Corpora, CurrentUser

router = APIRouter(prefix="/api/v1", tags=["corpora"])


@router.get("/corpora")
async def list_corpora(user: CurrentUser, registry: Corpora) -> dict[str, Any]:
    data = [
        {
            "name": c.name, "title": c.config.title, "description": c.config.description,
            "language": c.config.language, "access": c.config.access, "size": c.size,
            "p_attributes": c.p_attributes, "s_attributes": c.s_attributes, "metadata": c.annotated,
            "partitions": [{"id": p.id, "size": p.size, "offset": p.offset} for p in c.partitions],
        }
        for c in registry.visible(user.name)
    ]
    return {"data": data, "total": len(data)}
