"""Serving an app with uvicorn, guarded against clients that never finish their request headers.

uvicorn reads a request's headers without a size limit and without a time limit (its keep-alive
timeout only covers idle connections): 30 connections sending 8 MB of never-ending headers each
held 250 MB of a server's memory. :class:`GuardedHttp` (uvicorn's httptools protocol) counts the
bytes of a request until its headers are complete — more than ``MAX_HEADER_BYTES`` is answered
``431`` and the connection closed — and gives them ``HEADER_SECONDS`` from their first byte;
slower, the connection is closed. Both services run through :func:`serve`.

With ``workers`` above 1, uvicorn runs that many worker processes on one port (its supervisor
binds the socket, starts them and restarts one that dies); each makes the app from ``app``, an
import string of a factory, and has the same guards and limits (``MAX_CONNECTIONS`` each).
"""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

MAX_HEADER_BYTES = 64 * 1024
"""Request line and headers of one request (the largest a browser sends is a few kB)."""
HEADER_SECONDS = 10.0
"""Time a client has to send a request's line and headers, from their first byte."""
SHUTDOWN_SECONDS = 10.0
"""After SIGTERM, how long requests still running may finish before the server stops anyway."""
MAX_CONNECTIONS = 2048
"""Connections served at once; more are answered 503 (uvicorn's limit_concurrency)."""


class GuardedHttp(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol with a size and a time limit on each request's headers."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._header_bytes = 0
        self._tail = b""  # the last bytes seen, for a blank line split between two packets
        self._in_headers = False
        self._header_timer: asyncio.TimerHandle | None = None

    def data_received(self, data: bytes) -> None:
        if self._in_headers or self.cycle is None or self.cycle.response_complete:
            if not self._in_headers:  # the first bytes of a request: its headers' time starts
                self._in_headers = True
                self._header_bytes = 0
                self._tail = b""
                self._header_timer = self.loop.call_later(HEADER_SECONDS, self._too_slow)
            # only the bytes up to the blank line that ends the headers count: the body's first
            # bytes often come in the same packet
            seen = self._tail + data
            end = seen.find(b"\r\n\r\n")
            self._header_bytes += len(data) if end < 0 else max(0, end + 4 - len(self._tail))
            self._tail = seen[-3:]
            if self._header_bytes > MAX_HEADER_BYTES:
                self._refuse(431, "Request Header Fields Too Large", f"the request's headers are longer than "
                                                                     f"{MAX_HEADER_BYTES} bytes")
                return
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._headers_done()
        super().on_headers_complete()

    def _headers_done(self) -> None:
        self._in_headers = False
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        self._headers_done()
        super().connection_lost(exc)

    def _too_slow(self) -> None:
        self._header_timer = None
        if self._in_headers and not self.transport.is_closing():
            self._refuse(408, "Request Timeout", f"the request's headers did not arrive within {HEADER_SECONDS:g} s")

    def _refuse(self, status: int, reason: str, message: str) -> None:
        self._headers_done()
        body = message.encode("ascii")
        self.transport.write(
            f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode("ascii") + body)
        self.transport.close()


def serve(app: Any, host: str, port: int, workers: int = 1, **options: Any) -> None:
    """Run ``app`` (options as uvicorn's: ``timeout_keep_alive``, ``ssl_certfile`` ...) with the guards;
    with ``workers`` above 1, ``app`` is the import string of a factory (``module:function``) that
    each worker process calls."""
    if isinstance(app, str):
        options.update(factory=True)
    options.setdefault("timeout_graceful_shutdown", SHUTDOWN_SECONDS)
    if workers > 1:
        if not isinstance(app, str):
            raise TypeError("several workers make the app themselves: give the import string of a factory")
        options.update(workers=workers)
    uvicorn.run(app, host=host, port=port, log_level="warning", http=GuardedHttp,
                limit_concurrency=MAX_CONNECTIONS, **options)
