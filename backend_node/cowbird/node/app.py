"""The node service: ``create_app(settings)`` builds the FastAPI app; partitions open in its lifespan.

Every route but ``/health`` needs the node token, checked before the request is read
(``guard.py``); every error is ``application/problem+json`` with a stable ``code``
(``cowbird.serving.problems``); request bodies over ``max_request_bytes`` are refused.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from fastapi.responses import Response

from cowbird.core.version import __version__
from cowbird.engines import QueryEngine, open_engine
from cowbird.node.guard import Calls, NodeGuard
from cowbird.node.routes import context, export, health, operations, partitions
from cowbird.node.service import PartitionService
from cowbird.node.settings import NodeSettings
from cowbird.node.state import NodeState
from cowbird.serving.metrics import CONTENT_TYPE, Metrics
from cowbird.serving.problems import PROBLEM_RESPONSES, install_problem_handlers
from cowbird.serving.request_log import RequestLog
from cowbird.store import RegistryError, list_registry


def open_engines(settings: NodeSettings) -> dict[str, QueryEngine]:
    """Open (and warm) every partition the settings name, or all in the registry."""
    available = list_registry(settings.registry)
    wanted = settings.corpora or available
    missing = [c for c in wanted if c.lower() not in {a.lower() for a in available}]
    if missing:
        raise RegistryError(
            f"partition(s) {', '.join(missing)} not found in registry {settings.registry} "
            f"(it has: {', '.join(available) or 'nothing'})"
        )
    options = settings.engine_options()
    return {corpus_id.lower(): open_engine(settings.registry, corpus_id, settings.engine, options, warm=True)
            for corpus_id in wanted}


def create_app(
    settings: NodeSettings, engines: dict[str, QueryEngine] | None = None, token: str | None = None
) -> FastAPI:
    """The node app; ``engines`` (partition id -> engine) replaces opening the registry (tests)."""
    bearer = token if token is not None else settings.bearer_token()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        opened = engines if engines is not None else open_engines(settings)
        state.opened = PartitionService(settings, opened, state.metrics)
        ticking = asyncio.create_task(state.calls.tick())
        try:
            yield
        finally:
            ticking.cancel()

    app = FastAPI(
        title="cowbird node",
        version=__version__,
        description="Serves CWB-format partitions to the cowbird front end. All routes but /health need "
        "'Authorization: Bearer <node token>'. Errors are application/problem+json with a stable code.",
        lifespan=lifespan,
        responses=PROBLEM_RESPONSES,
        redirect_slashes=False,  # an API answers the route it is asked, never a redirect to another
    )
    state = app.state.node = NodeState(settings, Metrics(), Calls())
    install_problem_handlers(app)
    app.add_middleware(NodeGuard, token=bearer, max_bytes=settings.max_request_bytes, calls=state.calls)
    app.add_middleware(RequestLog, service="node", metrics=state.metrics)

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        """Prometheus metrics (behind the node token, like every route but /health)."""
        return Response(state.metrics.exposition(), media_type=CONTENT_TYPE)

    for router in (health.router, partitions.router, operations.router, export.router, context.router):
        app.include_router(router)
    return app
