"""The base of both services' pure ASGI middleware: HTTP requests go to ``http``, anything else
(lifespan, websockets) passes through untouched."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class HttpMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        await self.http(scope, receive, send)

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        """One HTTP request; the app is ``self.app``."""
        raise NotImplementedError


HAND_OVER = b"x-cowbird-hand-over"
"""A response header between a front end's app and its front door only: the request is not answered
here but handed over to the background process (``cowbird.frontend.background``); the request log
leaves such a response out (the background process logs the answer)."""


def hands_over(message: Message) -> bool:
    """Whether a response's start is a hand-over (``HAND_OVER``), not an answer."""
    return message["type"] == "http.response.start" and any(
        name.lower() == HAND_OVER for name, _ in message.get("headers", []))
