"""ASGI middleware of the front end: what every request must pass before any route sees it.

- ``TrustedHosts``: the ``Host`` header must name this front end (``allowed_hosts``), so that
  the links it builds into exports and citations cannot be pointed elsewhere by a client;
- ``Utf8Parameters``: a query string whose parameters are not valid UTF-8 (``%FF``, a lone
  surrogate ``%ED%A0%80``) is refused with ``400 bad_parameter`` naming the parameter, instead of
  being run with U+FFFD in place of what the user sent.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from cowbird.errors import BadParameter, CowbirdError
from cowbird.problems import Renderer


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


class BadHost(CowbirdError):
    status, code, title = 400, "bad_host", "Unknown host name"


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
