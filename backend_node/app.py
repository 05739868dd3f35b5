"""The node service: ``create_app(settings)`` builds the FastAPI app; partitions open in its lifespan.

Every route but ``/health`` needs the node token; every error is ``application/problem+json`` with
a stable ``code`` (``cowbird.problems``); request bodies over ``max_request_bytes`` are refused.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from backend_node.engines import QueryEngine, open_engine
from backend_node.errors import TooLarge
from backend_node.routes import context, health, partitions, queries
from backend_node.service import PartitionService
from backend_node.settings import NodeSettings
from backend_node.store import RegistryError, list_registry
from cowbird import __version__
from cowbird.problems import PROBLEM_RESPONSES, install_problem_handlers, problem_response


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


class BodyLimit:
    """ASGI middleware: refuse a request whose declared body is over the limit, before it is read."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            length = dict(scope["headers"]).get(b"content-length", b"")
            if length.isdigit() and int(length) > self.max_bytes:
                error = TooLarge(f"request body of {int(length)} bytes is over the limit of {self.max_bytes}")
                await problem_response(error)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def create_app(
    settings: NodeSettings, engines: dict[str, QueryEngine] | None = None, token: str | None = None
) -> FastAPI:
    """The node app; ``engines`` (partition id -> engine) replaces opening the registry (tests)."""
    bearer = token if token is not None else settings.bearer_token()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        opened = engines if engines is not None else open_engines(settings)
        app.state.service = PartitionService(settings, opened)
        yield

    app = FastAPI(
        title="cowbird node",
        version=__version__,
        description="Serves CWB-format partitions to the cowbird front end. All routes but /health need "
        "'Authorization: Bearer <node token>'. Errors are application/problem+json with a stable code.",
        lifespan=lifespan,
        responses=PROBLEM_RESPONSES,
    )
    app.state.settings = settings
    app.state.token = bearer
    install_problem_handlers(app)
    app.add_middleware(BodyLimit, max_bytes=settings.max_request_bytes)
    for router in (health.router, partitions.router, queries.router, context.router):
        app.include_router(router)
    return app
