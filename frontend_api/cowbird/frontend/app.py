"""The front end: ``create_app(settings)``; the shared node client lives in the lifespan.

The configuration is checked when the app is created (manifests readable, every partition has a
node, no unknown partitions), so a bad configuration fails at start with a clear message.
"""

from __future__ import annotations

import datetime
import tempfile
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
from fastapi import Depends, FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from fastapi_offline import FastAPIOffline
from pydantic.json_schema import models_json_schema
from starlette.types import Scope

from cowbird.core.errors import CowbirdError
from cowbird.core.version import __version__
from cowbird.frontend.accounts import Accounts, Database
from cowbird.frontend.accounts import web as accounts_web
from cowbird.frontend.accounts.throttle import Throttle, registrations
from cowbird.frontend.background import FromInteractive, ToBackground
from cowbird.frontend.classing import ClassHeaders
from cowbird.frontend.corpora import CorpusCatalogue
from cowbird.frontend.credentials import Credentials, refusal
from cowbird.frontend.events import ANALYSIS_EVENTS, QUERY_EVENTS
from cowbird.frontend.failover import RequestStart
from cowbird.frontend.fair_use import LEASE_MARGIN, FairUse, Limits
from cowbird.frontend.fanout import NodeClient
from cowbird.frontend.middleware import SecurityHeaders, TrustedHosts, Utf8Parameters
from cowbird.frontend.pools import NodePools
from cowbird.frontend.priority import Lanes
from cowbird.frontend.routes import (
    analyses,
    comparing,
    context,
    corpora,
    declared,
    export,
    history,
    language,
    metrics,
    pages,
    query,
    ref,
    saved,
    sketches,
    subcorpora,
    wordlist,
    workshop,
)
from cowbird.frontend.routes.deps import no_parameters
from cowbird.frontend.settings import FrontendSettings
from cowbird.frontend.state import FrontendState
from cowbird.frontend.workshop import Workshop, published_source
from cowbird.serving.bodies import BodyLimit
from cowbird.serving.config import ConfigError
from cowbird.serving.metrics import Metrics
from cowbird.serving.problems import PROBLEM_RESPONSES, install_problem_handlers, problem_body, problem_response
from cowbird.serving.request_log import RequestLog
from cowbird.web import STATIC, TEMPLATES

if TYPE_CHECKING:
    from cowbird.calf.core import Reconstructor


@asynccontextmanager
async def calf_for(settings: FrontendSettings) -> AsyncIterator[Reconstructor]:
    """Calf as the front end runs it: public addresses only (unless allowed), a page cache, the
    configured search engine. Calf (``cowbird[calf]``) is imported here, only when it is enabled."""
    try:
        from cowbird.calf.archives import Archive, ArchiveCache
        from cowbird.calf.core import Reconstructor
        from cowbird.calf.fetching import Fetcher
        from cowbird.calf.search import SearxngSearch
    except ModuleNotFoundError as error:
        raise ConfigError(f"[calf] enabled needs Calf, which is not installed here (missing module {error.name!r}): "
                          "pip install 'cowbird[calf]', or set [calf] enabled = false") from error
    cache = settings.calf.cache_dir or Path(tempfile.gettempdir()) / "cowbird-calf-cache"
    fetcher = Fetcher(timeout=settings.calf.timeout, deadline=settings.calf.timeout, retries=1, delay=0.5,
                      cache_dir=cache,
                      cache_seconds=settings.calf.cache_seconds, public_only=True,
                      allowed_hosts=tuple(settings.calf.allowed_hosts))
    search = SearxngSearch(settings.calf.search_url) if settings.calf.search_url else None
    async with fetcher, httpx.AsyncClient(timeout=settings.calf.timeout) as client, \
            httpx.AsyncClient(follow_redirects=False) as archive_client:
        kept = ArchiveCache(cache / "archives", settings.calf.cache_seconds)  # look-ups and captures, as pages
        archives = [Archive(a, archive_client, kept) for a in settings.calf.archives]
        yield Reconstructor(fetcher, search, client, context_chars=500, archives=archives,
                            window=datetime.timedelta(days=settings.calf.archive_window_days),
                            live=settings.calf.fetch_pages)


def create_app(
    settings: FrontendSettings, transport: httpx.AsyncBaseTransport | None = None, node_token: str | None = None,
    background: str | None = None, forwarded: bool = False,
) -> FastAPI:
    """The app; ``transport`` replaces the network for the node client (tests mount node apps).
    ``background``: the Unix socket of the background process, to which this (interactive) process
    forwards background requests; ``forwarded``: this is the background process, whose requests come
    from the interactive ones (``frontend_api/cowbird/frontend/background.py``)."""
    token = node_token if node_token is not None else settings.node_bearer()

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        pools = NodePools(settings, transport)
        async with AsyncExitStack() as stack:
            try:
                state.node_client = NodeClient(pools, token, settings)
                state.node_client.metrics = state.metrics
                if settings.calf.enabled:
                    state.calf = await stack.enter_async_context(calf_for(settings))
                yield
            finally:
                if state.node_client is not None:
                    await state.node_client.health.aclose()  # its probers stop before the pools close
                await pools.aclose()
            state.accounts.database.close()
            state.metrics.close()

    app = FastAPIOffline(  # /docs with Swagger UI served by cowbird itself: it works offline
        title="cowbird",
        version=__version__,
        description="Query very large web corpora: simplified language or CQP, merged previews across "
        "partitions, TSV export, static links. Errors are application/problem+json with a stable code.",
        lifespan=lifespan,
        responses=PROBLEM_RESPONSES,
        # Starlette would answer /api/v1/query/?token=... with a redirect whose absolute Location repeats
        # the token (over http:// behind a TLS proxy, before the token is checked): no route has a slash
        redirect_slashes=False,
    )
    if settings.accounts.api_tokens_file is not None:
        old = settings.accounts.api_tokens_file
        raise ConfigError(
            f"api_tokens_file is replaced by accounts: run `cowbird users import-tokens {old} "
            "--user NAME --config ...` once, then remove [accounts] api_tokens_file from the configuration"
        )
    database = Database(settings.database_address())
    database.upgrade()  # migrations only add: an older database keeps its data
    catalogue = CorpusCatalogue(settings, published_source(database))  # with the workshop's corpora
    limits = settings.fair_use
    fair_use = FairUse(
        anonymous=Limits(limits.anonymous_running_queries, limits.anonymous_rows_per_day,
                         limits.anonymous_node_seconds_per_day),
        user=Limits(limits.user_running_queries, limits.user_rows_per_day, limits.user_node_seconds_per_day),
        bulk=Limits(limits.bulk_running_queries, limits.bulk_rows_per_day, limits.bulk_node_seconds_per_day),
        database=database, lease=settings.limits.deadline + LEASE_MARGIN, queue=limits.queue_seconds,
    )
    templates = Jinja2Templates(directory=str(TEMPLATES),
                                context_processors=[accounts_web.page_context, workshop.workshop_link])
    state = app.state.frontend = FrontendState(settings, catalogue, Metrics(), Accounts(database), settings.mailer(),
                                               fair_use, templates, Throttle(database), registrations(database),
                                               Lanes(settings.limits.background_slots,
                                                     min(settings.limits.long_background_slots,
                                                         settings.limits.background_slots)))
    if settings.workshop.enabled:  # crawls and builds in the browser (docs/workshop.md)
        state.workshop = Workshop(settings.workshop, database, token, lambda: set(catalogue.configured))
    app.mount("/static", StaticFiles(directory=str(STATIC)), name="static")

    def render(request: Request, error: CowbirdError) -> Response:
        """problem+json for the API and scripts; an HTML page for a browser on a page route."""
        if not request.url.path.startswith("/api/") and "text/html" in request.headers.get("accept", ""):
            page: HTMLResponse = templates.TemplateResponse(
                request, "error.html", {"problem": problem_body(error)}, status_code=error.status,
                headers=error.headers,
            )
            return page
        return problem_response(error)

    install_problem_handlers(app, render)
    app.add_exception_handler(accounts_web.LoginRequired, accounts_web.redirect_to_login)
    # before any route (credentials.py); the router's own list of routes, so those added later count
    app.add_middleware(Credentials, accounts=state.accounts, render=render, routes=app.router.routes)
    app.add_middleware(Utf8Parameters, render=render)
    app.add_middleware(BodyLimit, max_bytes=settings.limits.max_request_bytes,
                       seconds=settings.limits.request_body_seconds, render=render,
                       streamed=(workshop.UPLOAD_PATH,) if settings.workshop.enabled else ())
    app.add_middleware(TrustedHosts, hosts=settings.trusted_hosts(), render=render)
    app.add_middleware(RequestStart)
    app.add_middleware(RequestLog, service="frontend", metrics=state.metrics)
    app.add_middleware(ClassHeaders)  # each answer says its class and wait (classing.py)
    app.add_middleware(SecurityHeaders)
    if forwarded:
        app.add_middleware(FromInteractive)
    if background is not None:
        async def refused(scope: Scope) -> CowbirdError | None:
            return (await refusal(state.accounts, scope))[1]

        app.add_middleware(ToBackground, socket=background, refund=fair_use.refund, gate=refused)

    for router in (language.router, query.router, analyses.router, export.router, ref.router, context.router,
                   wordlist.router, subcorpora.router, sketches.router, comparing.router, declared.router):
        app.include_router(router)  # each route takes one model of its parameters (``cowbird.frontend.params``)
    for router in (corpora.router, history.router, saved.router, subcorpora.saved_router, accounts_web.router,
                   workshop.router):
        app.include_router(router, dependencies=[Depends(no_parameters)])
    app.include_router(accounts_web.login_router)  # ``next``: its own parameters (``LoginParameters``)
    app.include_router(pages.router)
    app.include_router(metrics.router)  # the search page's URL carries the search itself: its script reads it
    _describe_events(app)
    return app


def _describe_events(app: FastAPI) -> None:
    """The streamed answers' event models (``events.py``) among the OpenAPI components, which the
    streamed routes' ``application/x-ndjson`` content names (FastAPI lists only JSON models)."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            document = generate()
            _, named = models_json_schema([(m, "serialization") for m in QUERY_EVENTS + ANALYSIS_EVENTS],
                                          ref_template="#/components/schemas/{model}")
            schemas = document.setdefault("components", {}).setdefault("schemas", {})
            for name, schema in named.get("$defs", {}).items():
                schemas.setdefault(name, schema)
        return app.openapi_schema or {}

    app.openapi = openapi  # type: ignore[method-assign]
