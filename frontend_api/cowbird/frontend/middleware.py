"""ASGI middleware of the front end: what every request must pass before any route sees it.

- ``TrustedHosts``: the ``Host`` header must name this front end (``allowed_hosts``), so that
  the links it builds into exports and citations cannot be pointed elsewhere by a client;
- ``Utf8Parameters``: a query string whose parameters are not valid UTF-8 (``%FF``, a lone
  surrogate ``%ED%A0%80``) is refused with ``400 bad_parameter`` naming the parameter, instead of
  being run with U+FFFD in place of what the user sent;
- ``SecurityHeaders``: every answer says ``nosniff``, a same-origin referrer policy and that no
  other site may frame it; pages run scripts and styles from this site only (the OpenAPI pages,
  whose Swagger UI starts with an inline script, also that script).
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from starlette.requests import Request
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cowbird.core.errors import BadHost, BadParameter
from cowbird.serving.asgi import HttpMiddleware
from cowbird.serving.problems import Renderer


class TrustedHosts:
    def __init__(self, app: ASGIApp, hosts: list[str], render: Renderer) -> None:
        self.app = app
        self.any = "*" in hosts
        self.exact = {h.lower() for h in hosts if not h.startswith("*")}
        self.suffixes = tuple(h[1:].lower() for h in hosts if h.startswith("*."))
        self.render = render

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.any:
            host = dict(scope["headers"]).get(b"host", b"").decode("latin-1").lower()
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            if name not in self.exact and not (self.suffixes and name.endswith(self.suffixes)):
                error = BadHost(f"this front end does not answer to host {host!r}: add it to allowed_hosts "
                                "(or set public_url)")
                await self.render(Request(scope, receive), error)(scope, receive, send)
                return
        await self.app(scope, receive, send)



class Utf8Parameters:
    def __init__(self, app: ASGIApp, render: Renderer) -> None:
        self.app = app
        self.render = render

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            bad = _not_utf8(scope.get("query_string", b""))
            if bad is not None:
                error = BadParameter(f"parameter {bad!r} is not valid UTF-8: percent-encode UTF-8 bytes")
                await self.render(Request(scope, receive), error)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _not_utf8(query_string: bytes) -> str | None:
    """The name of the first parameter whose name or value does not decode as UTF-8, or None."""
    for pair in query_string.split(b"&"):
        name, _, value = pair.partition(b"=")
        for part in (name, value):
            try:
                unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
            except UnicodeDecodeError:
                return unquote_to_bytes(name.replace(b"+", b" ")).decode("utf-8", "replace")
    return None


PAGE_POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
               "frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'")
DOCS_POLICY = PAGE_POLICY.replace("script-src 'self'", "script-src 'self' 'unsafe-inline'").replace(
    "style-src 'self'", "style-src 'self' 'unsafe-inline'")
COMMON = [(b"x-content-type-options", b"nosniff"), (b"referrer-policy", b"same-origin"),
          (b"x-frame-options", b"DENY")]


class SecurityHeaders(HttpMiddleware):
    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        docs = scope["path"].startswith(("/docs", "/redoc"))
        policy = (DOCS_POLICY if docs else PAGE_POLICY).encode("ascii")

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.lower() not in
                           {b"x-content-type-options", b"referrer-policy", b"x-frame-options",
                            b"content-security-policy"}]
                message["headers"] = [*headers, *COMMON, (b"content-security-policy", policy)]
            await send(message)

        await self.app(scope, receive, with_headers)
