"""Request bodies read whole, within a size and a time limit, before an app sees them.

A server that hands the body to the app as it streams in lets a client decide how much memory and
how long a connection it holds: a chunked body of 200 MB was buffered whole before its route
refused it, and one byte every few seconds held a connection for minutes. :func:`read_body` reads a
request's body with a limit on its size (413 as soon as it is passed, the rest never read) and on
the time it takes to arrive (408); :class:`BodyLimit` does it for every request of an app — a
body declared larger than the limit (``Content-Length``) is refused before a byte of it is read —
and hands the app the body as one message. Both answers close the connection. A JSON body with a
lone surrogate (``"\\ud800"``: valid JSON, but no text a database or a file can hold) is refused
(422) before a route stores it. The node's guard
(``cowbird.node.guard``) reads its bodies the same way.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cowbird.core.errors import CowbirdError, InvalidRequest, SlowBody, TooLarge
from cowbird.serving.asgi import HttpMiddleware


class ClientLeft(Exception):
    """The client went away while its body was being read."""


async def read_body(receive: Receive, max_bytes: int, seconds: float) -> bytes:
    """The whole body; ``TooLarge`` as soon as it passes ``max_bytes``, ``SlowBody`` if it has not
    all arrived within ``seconds``, ``ClientLeft`` if the client goes first."""
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(seconds):
            while True:
                message = await receive()
                if message["type"] != "http.request":
                    raise ClientLeft
                chunk = message.get("body", b"")
                size += len(chunk)
                if size > max_bytes:
                    raise TooLarge(f"the request body is over the limit of {max_bytes:,} bytes")
                chunks.append(chunk)
                if not message.get("more_body", False):
                    return b"".join(chunks)
    except TimeoutError:
        raise SlowBody(f"the request body did not arrive within {seconds:g} s ({size:,} bytes came)") from None


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` as one message, then whatever the client sends next (its
    disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed



def has_body(headers: dict[bytes, bytes]) -> bool:
    """Whether a request says it has a body (a length above 0, or chunks)."""
    length = headers.get(b"content-length", b"").strip()
    return (length.isdigit() and int(length) > 0) or b"transfer-encoding" in headers


class BodyLimit(HttpMiddleware):
    """Every request's body read whole (``read_body``) before the app runs: over ``max_bytes`` 413,
    slower than ``seconds`` 408, each answered by ``render`` with the connection closed."""

    def __init__(self, app: ASGIApp, max_bytes: int, seconds: float,
                 render: Callable[[Request, CowbirdError], Response], streamed: tuple[str, ...] = ()) -> None:
        super().__init__(app)
        self.max_bytes = max_bytes
        self.seconds = seconds
        self.render = render
        self.streamed = streamed  # POST paths whose route reads the body itself, bounded (file uploads)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope["headers"])
        if scope.get("method") == "POST" and scope.get("path") in self.streamed:
            await self.app(scope, receive, send)
            return
        if not has_body(headers):
            await self.app(scope, receive, send)
            return
        length = headers.get(b"content-length", b"").strip()
        try:
            if length.isdigit() and int(length) > self.max_bytes:
                raise TooLarge(f"a request body of {int(length):,} bytes is over the limit of {self.max_bytes:,} bytes")
            body = await read_body(receive, self.max_bytes, self.seconds)
        except ClientLeft:
            return
        except (TooLarge, SlowBody) as error:
            response = self.render(Request(scope), error)
            response.headers["Connection"] = "close"  # the rest of the body is never read
            await response(scope, ended, send)
            return
        if b"json" in headers.get(b"content-type", b"") and b"\\u" in body:
            bad = lone_surrogate(body)
            if bad is not None:
                problem = InvalidRequest(f"the JSON body holds a string that is not valid Unicode (a lone surrogate "
                                       f"in {bad!r}): send UTF-8 text, or pairs of \\u escapes")
                await self.render(Request(scope), problem)(scope, replay(body, receive), send)
                return
        await self.app(scope, replay(body, receive), send)


def lone_surrogate(body: bytes) -> str | None:
    """The first string (a key or a value) of a JSON body that holds a lone surrogate (``"\\ud800"``:
    valid JSON, not text; no database or file takes it), shortened; None if there is none or the body
    is not JSON (the route says why)."""
    try:
        stack: list[Any] = [json.loads(body)]
    except ValueError:
        return None
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return item[:40]
    return None


async def ended() -> Message:
    """A ``receive`` for an answer sent without reading the rest of a request: the client is done."""
    return {"type": "http.disconnect"}
