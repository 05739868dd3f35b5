"""The node's front door (ASGI middleware): the token is checked before anything else is read.

Every request but ``GET /health`` must carry ``Authorization: Bearer <node token>``; without it
the node answers ``401`` at once, never reading the body — so an anonymous client cannot make the
node buffer a large body, learn its API (``/docs``, ``/openapi.json``) or get a ``422`` for
malformed JSON. An authenticated body is read here, up to ``max_bytes`` (declared or chunked) and
within ``BODY_SECONDS`` (``cowbird.serving.bodies``), and handed on whole; after it, the app reads the
real connection again, so that it still learns when the client goes away.

A request that names itself (``X-Cowbird-Call: <id>``, as the front end's calls do) is listed in
``calls`` (``Calls``): after a timeout the front end asks ``GET /health?call=<id>`` how long the
node has worked on it, until now or until it ended (the client gone, the answer sent): long, and
the query is slow (the replicas are spared it); never or briefly, and the request was held up on
the way (a link down, a process stopped): a replica is asked. (The call's priority and start,
``X-Cowbird-Priority`` and ``X-Cowbird-Began``, are read by the routes: ``routes/auth.py:Asking``.)
"""

from __future__ import annotations

import asyncio
import re
import secrets
import time

from starlette.types import ASGIApp, Receive, Scope, Send

from cowbird.core.errors import SlowBody, TooLarge, Unauthorized
from cowbird.core.lru import Lru
from cowbird.serving.bodies import ClientLeft, ended, read_body, replay
from cowbird.serving.problems import problem_response

OPEN_PATHS = frozenset({"/health"})
CALL_HEADER = b"x-cowbird-call"
_CALL = re.compile(r"[0-9a-f]{8,64}")
BODY_SECONDS = 30.0
"""Time a request body has to arrive whole (the front end sends its few kB at once)."""


class Calls:
    """The front end's calls at work (id -> when it started), and for the ``KEPT`` latest that ended,
    their time span; time the node stood still (stopped with SIGSTOP, its loop blocked: ``tick()``
    did not run for ``FROZEN`` s) does not count as work on them."""

    KEPT = 4096
    TICK = 0.25
    FROZEN = 1.0

    def __init__(self) -> None:
        self.running: dict[str, float] = {}
        # a bounded record, not a cache: the spans of the KEPT calls that ended last, the first ended
        # going first (only put and peeked at: asking about a call does not keep it longer)
        self.ended: Lru[str, tuple[float, float]] = Lru(self.KEPT)
        self.frozen: list[tuple[float, float]] = []  # the last KEPT spans the node stood still
        self.last_tick = time.monotonic()

    def start(self, call: str) -> None:
        self.running[call] = time.monotonic()

    def end(self, call: str) -> None:
        started = self.running.pop(call, None)
        if started is not None:
            self.ended.put(call, (started, time.monotonic()))

    async def tick(self) -> None:
        """Runs for the node's life: notes every span in which the node stood still."""
        while True:
            self._note_freeze(time.monotonic())
            await asyncio.sleep(self.TICK)

    def _note_freeze(self, now: float) -> None:
        if now - self.last_tick > self.FROZEN:
            self.frozen.append((self.last_tick + self.TICK, now))
            del self.frozen[:-self.KEPT]
        self.last_tick = now

    def seconds(self, call: str) -> float | None:
        """How long the node has worked on ``call`` (until now, or until it ended), the time it
        stood still left out; None: it never got it."""
        now = time.monotonic()
        self._note_freeze(now)  # asked right after standing still, before tick() saw it
        span = self.ended.peek(call)
        if call in self.running:
            began, ended = self.running[call], now
        elif span is not None:
            began, ended = span
        else:
            return None
        still = sum(max(0.0, min(ended, stop) - max(began, start)) for start, stop in self.frozen)
        return max(0.0, ended - began - still)


class NodeGuard:
    """Token first, then a bounded body; see the module docstring."""

    def __init__(self, app: ASGIApp, token: str, max_bytes: int, calls: Calls | None = None) -> None:
        self.app = app
        self.token = f"Bearer {token}".encode()
        self.max_bytes = max_bytes
        self.calls = calls if calls is not None else Calls()

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
            await self._refuse(scope, send, TooLarge(f"request body of {int(length)} bytes is over the limit of "
                                                     f"{self.max_bytes} bytes"))
            return
        try:
            body = await read_body(receive, self.max_bytes, BODY_SECONDS)
        except ClientLeft:
            return
        except (TooLarge, SlowBody) as error:
            await self._refuse(scope, send, error)
            return
        call = headers.get(CALL_HEADER, b"").decode("latin-1")
        if not _CALL.fullmatch(call):
            await self.app(scope, replay(body, receive), send)
            return
        self.calls.start(call)
        try:
            await self.app(scope, replay(body, receive), send)
        finally:
            self.calls.end(call)

    @staticmethod
    async def _refuse(scope: Scope, send: Send, error: TooLarge | SlowBody) -> None:
        response = problem_response(error)
        response.headers["Connection"] = "close"  # do not read the rest of a body we refused
        await response(scope, ended, send)

