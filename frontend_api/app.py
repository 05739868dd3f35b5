"""The front end: ``create_app(settings)``; the shared node client lives in the lifespan.

The configuration is checked when the app is created (manifests readable, every partition has a
node, no unknown partitions), so a bad configuration fails at start with a clear message.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException as StarletteHTTPException

from cowbird import __version__
from frontend_api.corpora import CorpusRegistry
from frontend_api.errors import FrontendError
from frontend_api.fanout import NodeClient, NodeRejected, client_limits, client_timeouts
from frontend_api.routes import corpora, export, language, query, ref
from frontend_api.service import QueryService
from frontend_api.settings import FrontendSettings
from web import STATIC, TEMPLATES

PROBLEM = "application/problem+json"


def create_app(
    settings: FrontendSettings, transport: httpx.AsyncBaseTransport | None = None, node_token: str | None = None
) -> FastAPI:
    """The app; ``transport`` replaces the network for the node client (tests mount node apps)."""
    registry = CorpusRegistry(settings)
    token = node_token if node_token is not None else settings.node_bearer()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        async with httpx.AsyncClient(
            transport=transport, timeout=client_timeouts(settings), limits=client_limits(settings)
        ) as client:
            app.state.nodes = NodeClient(client, token, settings)
            app.state.queries = QueryService(app.state.nodes)
            yield

    app = FastAPI(
        title="cowbird",
        version=__version__,
        description="Query very large web corpora: simplified language or CQP, merged previews across "
        "partitions, TSV export, static links. Errors are application/problem+json with a stable code.",
        lifespan=lifespan,
    )
    app.state.settings = settings
    app.state.corpora = registry
    app.state.api_tokens = settings.api_tokens()
    app.state.templates = Jinja2Templates(directory=str(TEMPLATES))
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")

    def render(request: Request, status: int, code: str, title: str, detail: str, **extra: object) -> Response:
        body = {"type": "about:blank", "title": title, "status": status, "detail": detail, "code": code, **extra}
        if not request.url.path.startswith("/api/") and "text/html" in request.headers.get("accept", ""):
            page: HTMLResponse = app.state.templates.TemplateResponse(
                request, "error.html", {"problem": body}, status_code=status
            )
            return page
        return JSONResponse(body, status_code=status, media_type=PROBLEM)

    @app.exception_handler(FrontendError)
    async def frontend_error(request: Request, error: FrontendError) -> Response:
        response = render(request, error.status, error.code, error.title, error.detail, **error.extra)
        response.headers.update(error.headers)
        return response

    @app.exception_handler(NodeRejected)
    async def rejected(request: Request, error: NodeRejected) -> Response:
        problem = error.problem
        return render(request, error.status, str(problem.get("code", "bad_request")),
                      str(problem.get("title", "Rejected by a node")), str(problem.get("detail", "")))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        first = error.errors()[0] if error.errors() else {"loc": (), "msg": "invalid request"}
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("query", "path"))
        detail = f"{where}: {first['msg']}"
        return render(request, 422, "invalid_parameter", "A parameter is missing or invalid", detail)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        code = "not_found" if error.status_code == 404 else "http_error"
        return render(request, error.status_code, code, str(error.detail), f"{request.method} {request.url.path}")

    @app.get("/", include_in_schema=False)
    async def home() -> RedirectResponse:
        return RedirectResponse("/docs")

    for router in (corpora.router, language.router, query.router, export.router, ref.router):
        app.include_router(router)
    return app
