"""Background work in a process of its own, at a lower CPU priority than the interactive one.

Background work — what its estimate classes heavy (``classing.py``), and word and keyword lists,
word sketches, trends and comparisons by their kind — costs the front end most of its CPU: parsing
and checking large node answers, merging the partitions' tables, writing files. In the process that
answers previews it would share its interpreter lock and its cores with them; ``cowbird serve``
therefore starts one *background process* beside its interactive worker(s): the same app on a Unix
socket in a private folder, niced (``NICENESS``), which the kernel runs only when the interactive
processes leave it CPU.

An interactive process sends background work there (``ToBackground``, the outermost middleware:
the background app checks, logs and answers it itself) and streams the answer back: what is
background by its kind unchanged, by its path (``is_background``); what its operation classes by
cost (``operations.may_hand_over``) after this process's app has estimated it heavy and handed it
over (``HAND_OVER``: nothing was sent yet), with its class (``classing.HANDED_OVER``). A client that
goes away closes the forwarded request too, which stops the work. A request whose
credential is refused (``credentials.py``) or whose headers could not be sent on as they are is never
forwarded: this process answers it (401, 400), so no client's header can make the forwarding fail. What only the
interactive process knows of the connection — the client's address and port, the scheme, the
server's address — travels in ``X-Cowbird-Forwarded`` (``FromInteractive`` restores it; the header
of a client is dropped, never passed on). A preview estimated heavy stays in the process that
estimated it, as background work there (``priority.Lanes``).
"""
from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from cowbird.core.errors import CowbirdError, HttpError, NodesUnavailable
from cowbird.frontend.classing import HAND_OVER_SCOPE, HANDED_OVER
from cowbird.frontend.operations import may_hand_over, runs_in_background
from cowbird.serving.asgi import HttpMiddleware, hands_over
from cowbird.serving.problems import problem_response

FORWARDED = b"x-cowbird-forwarded"
SERVED_BY = b"x-cowbird-served-by"
REFUND = b"x-cowbird-refund"
"""Between the processes only: a forwarded answer whose charge the interactive process gives back
(``{"key": …, "rows": …}``) unless it passed the whole body on to the client (an XLSX export, which
is useful only whole: the background process cannot tell whether its last bytes reached the client)."""
FORWARDED_SCOPE = "cowbird.forwarded"
"""Set in a request's scope by ``FromInteractive``: the request came from the interactive process."""
NICENESS = 10
"""How much lower the background process's CPU priority is (``os.nice``)."""
HOP_BY_HOP = frozenset({b"connection", b"keep-alive", b"transfer-encoding", b"te", b"trailer", b"upgrade",
                        b"proxy-connection", b"date", b"server"})
"""Headers of one connection, not passed on (and date and server, which this process's server sets)."""
HEADER_NAME = re.compile(rb"[-!#$%&'*+.^_`|~0-9a-zA-Z]+")
HEADER_VALUE = re.compile(rb"(?:[^\x00\s]+(?:[ \t]+[^\x00\s]+)*)?")
"""What the HTTP client between the processes (h11) sends: a token for a name, a value without NUL, line
breaks or other whitespace but spaces and tabs inside it (RFC 9110's field-content)."""
Gate = Callable[[Scope], Awaitable[CowbirdError | None]]
"""Why a request must not be forwarded (its credential refused), or None."""


def is_background(path: str) -> bool:
    """Whether a GET request is background work by its path: its public operation says so
    (``operations.py``: word and keyword lists, word sketches, trends, comparisons)."""
    return runs_in_background(path)


class ToBackground:
    """An interactive process's front door: background requests go to the background process."""

    def __init__(self, app: ASGIApp, socket: str, refund: Callable[[str, int], None],
                 gate: Gate | None = None) -> None:
        self.app = app
        self.refund = refund
        self.gate = gate
        self.client = httpx.AsyncClient(transport=httpx.AsyncHTTPTransport(uds=socket), base_url="http://background",
                                        timeout=None)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(scope, receive, send)
            return
        by_path = scope["type"] == "http" and scope["method"] in ("GET", "HEAD") and is_background(scope["path"])
        estimated = scope["type"] == "http" and scope["method"] in ("GET", "HEAD") and may_hand_over(scope["path"])
        if not (by_path or estimated) or (self.gate is not None and await self.gate(scope) is not None):
            await self.app(scope, receive, send)  # a refused credential: this process's own stack answers why
            return
        headers = forwardable(scope["headers"])
        if isinstance(headers, CowbirdError):
            await problem_response(headers)(scope, _nothing, send)
            return
        if estimated:  # run here unless its estimate classes it background: then it is handed over
            told = await self._here(scope, receive, send)
            if told is None:
                return
            headers.append((HANDED_OVER, told))
        forwarding = asyncio.ensure_future(self._forward(scope, send, headers))
        gone = asyncio.ensure_future(_disconnected(receive))
        try:
            await asyncio.wait({forwarding, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not forwarding.done():  # the client went away: the forwarded request is closed, its work stops
                forwarding.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await forwarding

    async def _here(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The request answered by this process, unless the app hands it over (``HAND_OVER``): then
        nothing is sent, and what the app says of its class (``HANDED_OVER``) is returned."""
        told: list[bytes] = []

        async def watched(message: Message) -> None:
            if hands_over(message):
                told.append(dict(message.get("headers", [])).get(HANDED_OVER, b"{}"))
            elif not told:
                await send(message)

        await self.app({**scope, HAND_OVER_SCOPE: True}, receive, watched)
        return told[0] if told else None

    async def _lifespan(self, scope: Scope, receive: Receive, send: Send) -> None:
        async def closing_receive() -> Message:
            message = await receive()
            if message["type"] == "lifespan.shutdown":
                await self.client.aclose()
            return message

        await self.app(scope, closing_receive, send)

    async def _forward(self, scope: Scope, send: Send, headers: list[tuple[bytes, bytes]]) -> None:
        client, server = scope.get("client"), scope.get("server")
        about = {"client": list(client) if client else None, "server": list(server) if server else None,
                 "scheme": scope.get("scheme", "http")}
        headers.append((FORWARDED, json.dumps(about).encode("latin-1")))
        target = scope.get("raw_path") or scope["path"].encode("utf-8")
        if scope["query_string"]:
            target += b"?" + scope["query_string"]
        request = self.client.build_request(scope["method"], target.decode("latin-1"), headers=headers)
        try:
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError as error:
            failure = NodesUnavailable(f"the front end's background process is not answering ({type(error).__name__}); "
                                       "try again shortly")
            await problem_response(failure)(scope, _nothing, send)
            return
        charged, passed = response.headers.get(REFUND.decode()), False
        try:
            await send({"type": "http.response.start", "status": response.status_code,
                        "headers": [(k, v) for k, v in response.headers.raw
                                    if k.lower() not in HOP_BY_HOP and k.lower() != REFUND]})
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
            passed = True
        except httpx.HTTPError:  # the background process broke off: so does this answer (never a clean short one)
            raise ConnectionAbortedError("the background process broke off its answer") from None
        finally:
            await response.aclose()
            if charged is not None and not passed:  # the client did not get it all: its rows are given back
                given = json.loads(charged)
                await asyncio.shield(asyncio.to_thread(self.refund, str(given["key"]), int(given["rows"])))


def forwardable(raw: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]] | CowbirdError:
    """A client's headers as they are sent on: without the connection's own, ``X-Cowbird-Forwarded``
    dropped, each value without the white space around it (not a part of it, RFC 9110 5.5; the server
    that read it may have kept it, h11 refuses it). A header still not sendable is refused (400),
    named, rather than failing the forwarding."""
    headers = []
    for name, value in raw:
        name = name.lower()
        if name in (FORWARDED, HANDED_OVER) or name in HOP_BY_HOP:
            continue
        value = value.strip(b" \t")
        if not HEADER_NAME.fullmatch(name) or not HEADER_VALUE.fullmatch(value):
            shown = name.decode("latin-1")[:40]
            return HttpError(400, f"the request's header {shown!r} holds characters HTTP does not allow in a header "
                                  "(control characters or line breaks): send it without them")
        headers.append((name, value))
    return headers


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def _nothing() -> Message:
    return {"type": "http.request", "body": b"", "more_body": False}


class FromInteractive(HttpMiddleware):
    """The background process's front door: what the interactive process knew of the connection is
    put back (``X-Cowbird-Forwarded``), so that fair use, logs and links see the real client; each
    answer says it came from here (``X-Cowbird-Served-By: background``)."""

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        forwarded = dict(scope["headers"]).get(FORWARDED)
        if forwarded is not None:
            about: dict[str, Any] = json.loads(forwarded)
            scope = {**scope, FORWARDED_SCOPE: True, HANDED_OVER.decode(): dict(scope["headers"]).get(HANDED_OVER),
                     "scheme": about.get("scheme", "http"),
                     "client": tuple(about["client"]) if about.get("client") else None,
                     "server": tuple(about["server"]) if about.get("server") else None}

        async def marked(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), (SERVED_BY, b"background")]}
            await send(message)

        await self.app(scope, receive, marked)
