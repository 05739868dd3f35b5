"""The node's front door (ASGI middleware): the token is checked before anything else is read.

Every request but ``GET /health`` must carry ``Authorization: Bearer <node token>``; without it
the node answers ``401`` at once, never reading the body — so an anonymous client cannot make the
node buffer a large body, learn its API (``/docs``, ``/openapi.json``) or get a ``422`` for
malformed JSON. An authenticated body is read here, up to ``max_bytes`` (declared or chunked), and
handed on whole; after it, the app reads the real connection again, so that it still learns when
the client goes away.
"""

from __future__ import annotations

import secrets

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from backend_node.errors import TooLarge
from cowbird.errors import Unauthorized
from cowbird.problems import problem_response

OPEN_PATHS = frozenset({"/health"})


class NodeGuard:
    """Token first, then a bounded body; see the module docstring."""

    def __init__(self, app: ASGIApp, token: str, max_bytes: int) -> None:
        self.app = app
        self.token = f"Bearer {token}".encode()
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        headers = dict(scope["headers"])
        if not secrets.compare_digest(headers.get(b"authorization", b""), self.token):
            await problem_response(Unauthorized("send 'Authorization: Bearer <node token>'"))(scope, receive, send)
            return
        length = headers.get(b"content-length", b"")
        if length.isdigit() and int(length) > self.max_bytes:
            await self._too_large(scope, receive, send, f"request body of {int(length)} bytes")
            return
        body = await self._read_body(receive)
        if body is None:
            await self._too_large(scope, receive, send, "a request body")
            return
        await self.app(scope, _replay(body, receive), send)

    async def _read_body(self, receive: Receive) -> bytes | None:
        """The whole body, or None as soon as it passes the limit (the rest is never read)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks)  # the client went away; the app will see the disconnect
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                return b"".join(chunks)

    async def _too_large(self, scope: Scope, receive: Receive, send: Send, what: str) -> None:
        error = TooLarge(f"{what} is over the limit of {self.max_bytes} bytes")
        response = problem_response(error)
        response.headers["Connection"] = "close"  # do not read the rest of a body we refused
        await response(scope, receive, send)


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay
