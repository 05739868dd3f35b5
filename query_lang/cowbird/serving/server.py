"""Serving an app with uvicorn, guarded against clients that never finish their request headers and
against one client address taking every connection.

uvicorn reads a request's headers without a size limit and without a time limit (its keep-alive
timeout only covers idle connections): 30 connections sending 8 MB of never-ending headers each
held 250 MB of a server's memory. :class:`GuardedHttp` (uvicorn's httptools protocol) counts the
bytes of a request until its headers are complete — more than ``MAX_HEADER_BYTES`` is answered
``431`` and the connection closed — and gives them ``HEADER_SECONDS`` from their first byte (the
first request of a connection: from the connection's opening, so that a connection that sends
nothing is closed too); slower, the connection is closed. Both services run through :func:`serve`.

uvicorn's own ``limit_concurrency`` counts connections only once a request's headers are in and then
answers ``503`` to everybody: one client holding 2,300 half-sent requests made 90 % of everyone's
previews fail. :class:`GuardedHttp` counts connections as they open, before a byte is read, against
:class:`ConnectionLimits` (``serve(limits=...)``): a client address (an IPv6 client by its /64)
with ``per_client`` connections open has its next ones answered ``429`` at once, and past ``total``
connections of the process anybody's next ones ``503``, both with ``Retry-After`` (the answer is
written as the connection opens, the rest of the request read and dropped for at most
``REFUSED_LINGER_SECONDS``); where ``allowed`` networks are given (a node's front ends), a
connection from any other address is answered ``403`` and closed. A connection from a
``trusted_proxies`` address carries many clients: it counts towards ``total`` only, and each of its
requests counts, once its headers are in (the proxy sends them whole), for the client the
``X-Forwarded-For`` names — found as uvicorn's proxy headers find it, the last address in the
list that is not a trusted proxy — from its headers to the end of its answer.

With ``workers`` above 1, uvicorn runs that many worker processes on one port (its supervisor
binds the socket, starts them and restarts one that dies); each makes the app from ``app``, an
import string of a factory, and has the same guards and limits, counted in each process.
"""

from __future__ import annotations

import asyncio
import ipaddress
import os
import weakref
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
from uvicorn.server import ServerState

MAX_HEADER_BYTES = 64 * 1024
"""Request line and headers of one request (the largest a browser sends is a few kB)."""
HEADER_SECONDS = 10.0
"""Time a client has to send a request's line and headers, from their first byte (for a
connection's first request, from the connection's opening)."""
SHUTDOWN_SECONDS = 10.0
"""After SIGTERM, how long requests still running may finish before the server stops anyway."""
MAX_CONNECTIONS = 2048
"""Connections of one process open at once by default; more are answered 503 as they open."""
RETRY_AFTER_SECONDS = 2
"""The ``Retry-After`` of a connection refused for a limit: connections are short, a slot is free soon."""
REFUSED_LINGER_SECONDS = 1.0
"""How long a refused connection's request is still read (and dropped) after the answer was written:
closing a socket with unread bytes resets it, and the reset can reach the client before the answer."""
IPV6_CLIENT_PREFIX = 64
"""An IPv6 client is counted by its /64: one host is given a whole /64 and can use any address in it."""

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def networks(texts: Iterable[str], setting: str) -> tuple[Network, ...]:
    """``texts`` (addresses or networks: ``10.0.0.0/8``, ``127.0.0.1``) as networks; ``ValueError``
    naming ``setting`` and the entry for one that is neither."""
    found = []
    for text in texts:
        try:
            found.append(ipaddress.ip_network(text.strip(), strict=False))
        except ValueError:
            raise ValueError(f"{setting}: {text!r} is not an IP address or network (10.0.0.0/8)") from None
    return tuple(found)


def _address(text: str) -> Address | None:
    try:
        address = ipaddress.ip_address(text.strip().strip("[]"))
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped  # a dual-stack socket's IPv4 client
    return address


@dataclass(frozen=True)
class ConnectionLimits:
    """What :class:`GuardedHttp` admits: ``total`` connections at once, ``per_client`` of them from
    one client address (None: no limit), connections only from ``allowed`` (empty: from anywhere);
    ``trusted_proxies`` forward many clients' requests (counted per client from X-Forwarded-For)."""

    total: int = MAX_CONNECTIONS
    per_client: int | None = None
    allowed: tuple[Network, ...] = ()
    trusted_proxies: tuple[Network, ...] = ()

    def __post_init__(self) -> None:
        if self.total < 1 or (self.per_client is not None and self.per_client < 1):
            raise ValueError(f"connection limits must be at least 1 (total {self.total}, per client "
                             f"{self.per_client})")

    def admits(self, address: Address) -> bool:
        return not self.allowed or any(address in network for network in self.allowed)

    def is_proxy(self, address: Address) -> bool:
        return any(address in network for network in self.trusted_proxies)

    def forwarded_client(self, forwarded_for: bytes) -> Address | None:
        """The client a trusted proxy's ``X-Forwarded-For`` names: the last address not a trusted
        proxy (the ones before it were written by the client, and may be anything), else the first."""
        hops = [_address(part) for part in forwarded_for.decode("latin-1").split(",")]
        known = [hop for hop in hops if hop is not None]
        if not known or len(known) < len(hops):
            return None
        for hop in reversed(known):
            if not self.is_proxy(hop):
                return hop
        return known[0]


LIMITS = "cowbird_connection_limits"
"""The attribute of uvicorn's ``Config`` that carries a server's :class:`ConnectionLimits` (it goes
with the configuration to each worker process)."""


def client_key(address: Address) -> str:
    """The key a client's connections are counted under: an IPv4 address, an IPv6 address's /64."""
    if isinstance(address, ipaddress.IPv6Address):
        return str(ipaddress.IPv6Network((address, IPV6_CLIENT_PREFIX), strict=False))
    return str(address)


@dataclass
class Counts:
    """The connections of one server (one process) open now: in all, and per client key."""

    total: int = 0
    per_client: dict[str, int] = field(default_factory=dict)

    def add(self, key: str) -> None:
        self.per_client[key] = self.per_client.get(key, 0) + 1

    def drop(self, key: str) -> None:
        left = self.per_client.get(key, 0) - 1
        if left > 0:
            self.per_client[key] = left
        else:
            self.per_client.pop(key, None)


_COUNTS: weakref.WeakKeyDictionary[ServerState, Counts] = weakref.WeakKeyDictionary()


def _too_many(client: str, limit: int) -> str:
    return (f"too many connections from {client} at once (at most {limit}): close some, or retry after "
            f"{RETRY_AFTER_SECONDS} s")


class GuardedHttp(HttpToolsProtocol):
    """uvicorn's HTTP/1.1 protocol with a size and a time limit on each request's headers, and the
    connection limits of the server's configuration (:data:`LIMITS`)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._header_bytes = 0
        self._tail = b""  # the last bytes seen, for a blank line split between two packets
        self._in_headers = False
        self._header_timer: asyncio.TimerHandle | None = None
        self._turned_away: asyncio.TimerHandle | None = None
        self._counted: str | None = None  # the client key this connection counts under
        self._forwarded: str | None = None  # behind a trusted proxy: the client of the request at work
        self._limits: ConnectionLimits = getattr(self.config, LIMITS, None) or ConnectionLimits()
        self._counts = _COUNTS.setdefault(self.server_state, Counts())
        if self._admitted(transport):
            super().connection_made(transport)
            self._start_headers()

    def _admitted(self, transport: asyncio.Transport) -> bool:
        """Whether the connection is served; if not, it is answered and will close (``_turn_away``)."""
        peer = transport.get_extra_info("peername")
        address = _address(str(peer[0])) if isinstance(peer, tuple) and peer else None  # None: a Unix socket
        limits, counts = self._limits, self._counts
        if address is not None and not limits.admits(address):
            self._turn_away(transport, 403, "Forbidden", f"connections from {address} are not accepted here "
                            f"(the server's allowed_clients)", retry=False)
            return False
        if counts.total >= limits.total:
            self._turn_away(transport, 503, "Service Unavailable", f"the server has {limits.total} connections "
                            f"open, its most: retry after {RETRY_AFTER_SECONDS} s")
            return False
        key = None if address is None or limits.is_proxy(address) else client_key(address)
        if key is not None and limits.per_client is not None and counts.per_client.get(key, 0) >= limits.per_client:
            self._turn_away(transport, 429, "Too Many Requests", _too_many(key, limits.per_client))
            return False
        counts.total += 1
        if key is not None:
            counts.add(key)
            self._counted = key
        return True

    def _turn_away(self, transport: asyncio.Transport, status: int, reason: str, message: str,
                   retry: bool = True) -> None:
        """Answer ``status`` before reading a byte, then drop what the client still sends for at
        most ``REFUSED_LINGER_SECONDS`` and close."""
        self.transport = transport
        body = message.encode("utf-8")
        retry_after = f"retry-after: {RETRY_AFTER_SECONDS}\r\n" if retry else ""
        transport.write(
            f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n{retry_after}"
            f"content-length: {len(body)}\r\nconnection: close\r\n\r\n".encode("ascii") + body)
        if transport.can_write_eof():
            transport.write_eof()
        self._turned_away = self.loop.call_later(REFUSED_LINGER_SECONDS, transport.close)

    def data_received(self, data: bytes) -> None:
        if self._turned_away is not None:
            return
        if self._in_headers or self.cycle is None or self.cycle.response_complete:
            if not self._in_headers:  # the first bytes of a request: its headers' time starts
                self._start_headers()
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

    def _start_headers(self) -> None:
        self._in_headers = True
        self._header_bytes = 0
        self._tail = b""
        self._header_timer = self.loop.call_later(HEADER_SECONDS, self._too_slow)

    def eof_received(self) -> None:
        if self._turned_away is not None:  # the client has sent all it will: the answer is out
            self.transport.close()
            return
        super().eof_received()

    def on_headers_complete(self) -> None:
        self._headers_done()
        refusal = self._forwarded_refusal()
        if refusal is None:
            super().on_headers_complete()
            return
        app, self.app = self.app, refusal  # the request is answered by the refusal instead of the app
        try:
            super().on_headers_complete()
        finally:
            self.app = app

    def _forwarded_refusal(self) -> Any:
        """From a trusted proxy: the request counted for the client its X-Forwarded-For names, or the
        ASGI app answering 429 when that client has ``per_client`` requests at work already."""
        self._release_forwarded()
        limit = self._limits.per_client
        if limit is None or self._counted is not None or not self._limits.trusted_proxies:
            return None
        peer = self.client[0] if self.client else None
        address = _address(peer) if peer else None
        if address is None or not self._limits.is_proxy(address):
            return None
        forwarded = [value for name, value in self.headers if name == b"x-forwarded-for"]
        client = self._limits.forwarded_client(b",".join(forwarded)) if forwarded else None
        if client is None:
            return None
        key = client_key(client)
        if self._counts.per_client.get(key, 0) >= limit:
            return _refusal(429, _too_many(key, limit))
        self._counts.add(key)
        self._forwarded = key
        return None

    def _release_forwarded(self) -> None:
        if self._forwarded is not None:
            self._counts.drop(self._forwarded)
            self._forwarded = None

    def on_response_complete(self) -> None:
        self._release_forwarded()
        super().on_response_complete()

    def _headers_done(self) -> None:
        self._in_headers = False
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def connection_lost(self, exc: Exception | None) -> None:
        if self._turned_away is not None:
            self._turned_away.cancel()
            return
        self._headers_done()
        self._release_forwarded()
        self._counts.total -= 1
        if self._counted is not None:
            self._counts.drop(self._counted)
            self._counted = None
        super().connection_lost(exc)

    def pause_writing(self) -> None:
        if self._turned_away is None:
            super().pause_writing()

    def resume_writing(self) -> None:
        if self._turned_away is None:
            super().resume_writing()

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


def _refusal(status: int, message: str) -> Any:
    """An ASGI app answering every request ``status`` with ``message`` and ``Retry-After``."""
    body = message.encode("utf-8")

    async def refuse(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()),
            (b"retry-after", str(RETRY_AFTER_SECONDS).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    return refuse


def serve(app: Any, host: str, port: int, workers: int = 1, limits: ConnectionLimits | None = None,
          **options: Any) -> None:
    """Run ``app`` (options as uvicorn's: ``timeout_keep_alive``, ``ssl_certfile`` ...) with the guards
    and ``limits`` (default: ``MAX_CONNECTIONS`` in all, none per client); with ``workers`` above 1,
    ``app`` is the import string of a factory (``module:function``) that each worker process calls."""
    if isinstance(app, str):
        options.update(factory=True)
    options.setdefault("timeout_graceful_shutdown", SHUTDOWN_SECONDS)
    if workers > 1:
        if not isinstance(app, str):
            raise TypeError("several workers make the app themselves: give the import string of a factory")
        options.update(workers=workers)
    config = uvicorn.Config(app, host=host, port=port, log_level="warning", http=GuardedHttp, **options)
    setattr(config, LIMITS, limits or ConnectionLimits())
    # uvicorn.run, less what cowbird never uses (reload)
    server = uvicorn.Server(config)
    try:
        if config.workers > 1:
            from uvicorn.supervisors import Multiprocess

            Multiprocess(config, sockets=[config.bind_socket()]).run()
        else:
            server.run()
    except KeyboardInterrupt:
        pass
    finally:
        if config.uds and os.path.exists(config.uds):
            os.remove(config.uds)
    if not server.started and config.workers == 1:
        raise SystemExit(3)  # uvicorn's STARTUP_FAILURE: the port is taken, the app did not start
