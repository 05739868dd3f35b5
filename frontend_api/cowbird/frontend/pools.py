"""One small connection pool per node (:class:`NodePools`)."""

from __future__ import annotations

import ssl

import httpx

from cowbird.frontend.settings import FrontendSettings

IDLE_SECONDS = 10.0
"""How long an idle connection to a node is kept for reuse: well below the node's
``keep_alive_seconds`` (30), so that a request never goes out on a connection the node is just
closing (which fails with a read error, and without a replica the partition with it)."""


class NodePools:
    """One ``httpx.AsyncClient`` per node, each with at most ``[nodes] connections`` connections.

    Small pools per node rather than one big shared one: httpx's pool walks all its connections
    on every request, so a shared pool of a few hundred connections cost the front end more CPU
    than the queries cost the nodes (bench/load.py, 32 clients: 13 s with 32 connections, 22 s
    with 64). A pool per node also keeps one slow node from taking every connection.
    Health checks go out on clients of their own (:meth:`probes`, one connection per node): calls
    slow to answer may hold every connection of a node's pool, and a check waiting for one of them
    would take a busy node for a silent one. ``transport`` replaces the network (tests mount node apps).
    """

    def __init__(self, settings: FrontendSettings, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.transport = transport
        # https nodes: verified against [nodes] ca_file (a private CA) when given, else the system's CAs
        self.verify: ssl.SSLContext | bool = (
            ssl.create_default_context(cafile=str(settings.nodes.ca_file)) if settings.nodes.ca_file else True
        )
        self.timeout = httpx.Timeout(settings.nodes.timeout, connect=settings.nodes.connect_timeout)
        self.limits = httpx.Limits(
            max_connections=settings.nodes.connections, max_keepalive_connections=settings.nodes.connections,
            keepalive_expiry=IDLE_SECONDS,
        )
        self._clients: dict[str, httpx.AsyncClient] = {}
        self._probes: dict[str, httpx.AsyncClient] = {}

    def __call__(self, node: str) -> httpx.AsyncClient:
        """The client for ``node`` (its base URL)."""
        client = self._clients.get(node)
        if client is None:
            client = self._clients[node] = httpx.AsyncClient(
                transport=self.transport, timeout=self.timeout, limits=self.limits, verify=self.verify
            )
        return client

    def probes(self, node: str) -> httpx.AsyncClient:
        """The client health checks of ``node`` go out on (``NodeHealth``): apart from its calls'."""
        client = self._probes.get(node)
        if client is None:
            client = self._probes[node] = httpx.AsyncClient(
                transport=self.transport, timeout=self.timeout, verify=self.verify,
                limits=httpx.Limits(max_connections=8, max_keepalive_connections=2, keepalive_expiry=IDLE_SECONDS),
            )
        return client

    async def aclose(self) -> None:
        clients = [*self._clients.values(), *self._probes.values()]
        self._clients, self._probes = {}, {}
        for client in clients:
            await client.aclose()
