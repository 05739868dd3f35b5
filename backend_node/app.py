"""The node service: ``create_app(settings)`` builds the FastAPI app; partitions open in its lifespan.

Every route but ``/health`` needs the node token; every error is ``application/problem+json`` with
a stable ``code`` (see ``errors.py``); request bodies over ``max_request_bytes`` are refused.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from fastapi import FastAPI, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from backend_node.engines.base import QueryEngine
from backend_node.engines.errors import EngineError
from backend_node.errors import NodeError, QuerySyntax, TooLarge, Unavailable
from backend_node.routes import context, health, partitions, queries
from backend_node.schemas import Problem
from backend_node.service import PartitionService
from backend_node.settings import NodeSettings
from backend_node.store.errors import StoreError
from backend_node.store.registry import list_registry
from cowbird import __version__

PROBLEM = "application/problem+json"


def problem(status: int, code: str, title: str, detail: str, **extra: object) -> JSONResponse:
    body = Problem(title=title, status=status, detail=detail, code=code, **extra)  # type: ignore[arg-type]
    return JSONResponse(body.model_dump(exclude_none=True), status_code=status, media_type=PROBLEM)


def open_engines(settings: NodeSettings) -> dict[str, QueryEngine]:
    """Open (and warm) every partition the settings name, or all in the registry."""
    available = list_registry(settings.registry)
    wanted = settings.corpora or available
    missing = [c for c in wanted if c.lower() not in {a.lower() for a in available}]
    if missing:
        raise StoreError(
            f"partition(s) {', '.join(missing)} not found in registry {settings.registry} "
            f"(it has: {', '.join(available) or 'nothing'})"
        )
    engines: dict[str, QueryEngine] = {}
    for corpus_id in wanted:
        engines[corpus_id.lower()] = make_engine(settings, settings.registry, corpus_id)
    return engines


def make_engine(settings: NodeSettings, registry: Path, corpus_id: str) -> QueryEngine:
    if settings.engine == "cwb":
        from backend_node.engines.cwb import CwbEngine

        return CwbEngine(registry, corpus_id, settings.cqp_binary)
    from backend_node.engines.native.engine import NativeEngine

    engine = NativeEngine.open(registry, corpus_id)
    engine.warm()
    return engine


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
    )
    app.state.settings = settings
    app.state.token = bearer

    @app.middleware("http")
    async def limit_body(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        length = request.headers.get("content-length")
        if length is not None and length.isdigit() and int(length) > settings.max_request_bytes:
            error = TooLarge(f"request body of {length} bytes is over the limit of {settings.max_request_bytes}")
            return problem(error.status, error.code, error.title, error.detail)
        return await call_next(request)

    @app.exception_handler(NodeError)
    async def node_error(request: Request, error: NodeError) -> JSONResponse:
        extra = {"offset": error.offset} if isinstance(error, QuerySyntax) and error.offset is not None else {}
        response = problem(error.status, error.code, error.title, error.detail, **extra)
        response.headers.update(error.headers)
        if error.status == 401:
            response.headers["WWW-Authenticate"] = "Bearer"
        return response

    @app.exception_handler(EngineError)
    async def engine_error(request: Request, error: EngineError) -> JSONResponse:
        return await node_error(request, Unavailable(str(error)))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        first = error.errors()[0] if error.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return problem(422, "invalid_request", "The request does not match the API", f"{where}: {first['msg']}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> JSONResponse:
        code = "not_found" if error.status_code == 404 else "http_error"
        return problem(error.status_code, code, str(error.detail), f"{request.method} {request.url.path}")

    for router in (health.router, partitions.router, queries.router, context.router):
        app.include_router(router)
    return app

