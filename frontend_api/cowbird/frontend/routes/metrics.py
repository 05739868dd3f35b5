"""``GET /metrics``: the front end's Prometheus metrics, for a monitoring system or an admin.

Protected like the nodes' internal routes: the bearer token of ``metrics_token_file`` (what a
Prometheus scrape sends), or an administrator's API token; anyone else gets 401.
"""

from __future__ import annotations

import secrets

from fastapi import APIRouter, Request
from fastapi.responses import Response

from cowbird.core.errors import Unauthorized
from cowbird.frontend.routes.deps import current_user
from cowbird.frontend.state import frontend_state
from cowbird.serving.config import read_token
from cowbird.serving.metrics import CONTENT_TYPE

router = APIRouter(include_in_schema=False)


@router.get("/metrics")
def metrics(request: Request) -> Response:
    settings = frontend_state(request).settings
    header = request.headers.get("authorization", "")
    given = header.partition(" ")[2].strip() if header.lower().startswith("bearer ") else ""
    allowed = False
    if settings.metrics_token_file is not None and given:
        expected = read_token(settings.metrics_token_file, None, settings.dev, "metrics token")
        allowed = secrets.compare_digest(given.encode(), expected.encode())
    if not allowed and given:
        try:
            allowed = current_user(request).admin
        except Unauthorized:
            allowed = False
    if not allowed:
        raise Unauthorized("/metrics needs the metrics token or an administrator's API token",
                           headers={"WWW-Authenticate": "Bearer"})
    return Response(frontend_state(request).metrics.exposition(), media_type=CONTENT_TYPE)
