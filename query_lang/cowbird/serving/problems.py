"""Errors as ``application/problem+json`` (RFC 9457): one body model and one set of handlers for both services.

``install_problem_handlers(app)`` makes every failure of an app a problem+json answer:

- a ``CowbirdError`` with its own status and code;
- a request that does not match the API (FastAPI's validation) as ``422 invalid_request``, or
  ``400 bad_parameter`` when a query parameter is at fault;
- Starlette's HTTP errors (an unknown route: ``404 not_found``);
- anything unexpected as ``500 internal``: the traceback goes to the log, the body says only that
  something failed (no traceback, path or token).

The front end passes its own ``render`` to answer browsers with an HTML page instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cowbird.core.errors import BadParameter, BrokenStream, CowbirdError, HttpError, Internal, InvalidRequest, NotFound
from cowbird.core.wire import Problem
from cowbird.serving.asgi import HttpMiddleware

PROBLEM_MEDIA_TYPE = "application/problem+json"
logger = logging.getLogger("cowbird")


PROBLEM_RESPONSES: dict[int | str, dict[str, Any]] = {
    "4XX": {"model": Problem, "description": "The request cannot be served (application/problem+json)."},
    "5XX": {"model": Problem, "description": "A server-side failure (application/problem+json)."},
}
"""``responses=`` for an app: documents the problem+json answers of every route in the OpenAPI document
(``install_problem_handlers`` files them under their real media type)."""


def problem_body(error: CowbirdError) -> dict[str, Any]:
    """The problem+json body of an error (members that are None are left out)."""
    fields = {"title": error.title, "status": error.status, "detail": error.detail, "code": error.code}
    return Problem.model_validate(error.extra | fields).model_dump(exclude_none=True)


def problem_response(error: CowbirdError) -> Response:
    """The JSON answer for an error, with its headers (and the challenge of a 401)."""
    response = JSONResponse(problem_body(error), status_code=error.status, media_type=PROBLEM_MEDIA_TYPE)
    response.headers.update(error.headers)
    if error.status == 401:
        response.headers.setdefault("WWW-Authenticate", "Bearer")
    return response


Renderer = Callable[[Request, CowbirdError], Response]


def _default_render(request: Request, error: CowbirdError) -> Response:
    return problem_response(error)


class UnknownParameters(ValueError):
    """Query parameters a route does not take (raised by the front end's parameter models,
    ``cowbird.frontend.params``): ``unknown`` says which, with hints; ``accepted`` lists what it takes."""

    def __init__(self, unknown: str, accepted: str) -> None:
        super().__init__(unknown)
        self.unknown = unknown
        self.accepted = accepted


def validation_error(error: RequestValidationError, path: str = "") -> InvalidRequest | BadParameter:
    """FastAPI's validation failure as one line: where (``body.limit``, ``query.context``) and why.
    A bad query or path parameter (``format=xls``, ``offset=-1``, a position of 309 digits) is ``400
    bad_parameter`` naming it, like the parameters the routes check themselves; a body that does not
    match the API stays 422. An
    unknown parameter names the route (``path``) and every parameter it takes."""
    errors = error.errors()
    first = errors[0] if errors else {"loc": (), "msg": "invalid request"}
    for each in errors:
        unknown = each.get("ctx", {}).get("error")
        if isinstance(unknown, UnknownParameters):
            return BadParameter(f"{unknown.unknown}; {path or 'the route'} takes: {unknown.accepted}")
    location = tuple(first.get("loc", ()))
    if location[:1] in (("query",), ("path",)) and len(location) > 1:
        return BadParameter(f"{location[1]}: {first['msg']}")
    where = ".".join(str(part) for part in location)
    return InvalidRequest(f"{where}: {first['msg']}" if where else str(first["msg"]))


def install_problem_handlers(app: FastAPI, render: Renderer = _default_render) -> None:
    """Route every failure of ``app`` through ``render`` (see the module docstring)."""

    @app.exception_handler(CowbirdError)
    async def known(request: Request, error: CowbirdError) -> Response:
        return render(request, error)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> Response:
        route = request.scope.get("route")
        return render(request, validation_error(error, getattr(route, "path", request.url.path)))

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, error: StarletteHTTPException) -> Response:
        detail = f"{request.method} {request.url.path}: {error.detail}"
        path = request.url.path
        if error.status_code == 404 and len(path) > 1 and path.endswith("/"):
            # no slash redirects (a Location would repeat ?token=): say what the route is called instead
            detail += f" (routes have no trailing slash: {path.rstrip('/') or '/'})"
        return render(request, NotFound(detail) if error.status_code == 404 else HttpError(error.status_code, detail))

    app.add_middleware(CatchAll, render=render)
    _document_problems(app)


def _document_problems(app: FastAPI) -> None:
    """FastAPI files a response model under application/json; errors are application/problem+json."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is not None:
            return app.openapi_schema
        document = build()
        for operations in document.get("paths", {}).values():
            for operation in operations.values():
                for status in ("4XX", "5XX"):
                    content = operation.get("responses", {}).get(status, {}).get("content", {})
                    if "application/json" in content:
                        content[PROBLEM_MEDIA_TYPE] = content.pop("application/json")
        return document

    app.openapi = openapi  # type: ignore[method-assign]


class CatchAll(HttpMiddleware):
    """ASGI middleware: an unexpected exception is logged with its traceback and answered ``500 internal``.

    It runs inside Starlette's own error middleware, so the exception is handled here once (logged
    once) instead of being re-raised to the server. If the response had already started (a stream
    that broke), the exception is re-raised so that the server aborts the connection and the client
    sees a broken response, never a clean short one.
    """

    def __init__(self, app: ASGIApp, render: Renderer = _default_render) -> None:
        super().__init__(app)
        self.render = render

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def tracking_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, tracking_send)
        except Exception as exc:
            where = f"{scope.get('method', '')} {scope.get('path', '')}"
            if started and isinstance(exc, BrokenStream):  # a known failure of a stream: one line will do
                logger.warning("%s: response broken off: %s", where, exc)
                raise
            logger.exception("unexpected error in %s", where)
            if started:
                raise
            error = Internal("an unexpected error occurred on the server; it has been logged")
            response = self.render(Request(scope, receive), error)
            await response(scope, receive, send)
