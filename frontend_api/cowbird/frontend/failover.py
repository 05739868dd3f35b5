"""Failover: the one rule every call to a node goes through (:class:`Failover`).

A call tries a partition's nodes in order (:meth:`Failover.try_nodes`), each attempt under a time
limit (:meth:`Failover.attempt`: ``[nodes] timeout``, never past the request's own deadline):

- a failure of the node — refused connection, a redirect, a 5xx, a node-side refusal such as a
  wrong node token or an unknown partition, an answer that is too large, does not parse or does
  not fit the request and the manifest — moves on to the next node;
- a refusal of the request itself (a 4xx problem such as ``query_syntax``) is the same on every
  node and goes to the client as :class:`~cowbird.core.errors.RejectedByNode`;
- a query that runs out of time on a node that is alive (it says ``timeout``, or still answers its
  health check) is not repeated on the replicas: it would only cost them the same time.

Nodes that do not answer are skipped (:class:`NodeHealth`) until a quick health check says they
are back, so a dead node costs a preview one probe, not ``[nodes] timeout`` per call. Failures keep
the node's URL for the log; what clients see names partitions only.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import httpx
from starlette.types import ASGIApp, Receive, Scope, Send

from cowbird.core.search import TimeLimit
from cowbird.frontend.corpora import Partition
from cowbird.frontend.fair_use import spent
from cowbird.frontend.node_answers import NodeFailure, classify, combined, read_capped
from cowbird.frontend.node_health import NodeHealth
from cowbird.frontend.pools import NodePools
from cowbird.frontend.priority import PRIORITY, priority_headers, stretched
from cowbird.frontend.settings import FrontendSettings
from cowbird.serving.metrics import Metrics

T = TypeVar("T")
FANOUT = logging.getLogger("cowbird.fanout")
_CALL: contextvars.ContextVar[str] = contextvars.ContextVar("cowbird_node_call", default="")
REQUEST_BEGAN: contextvars.ContextVar[float | None] = contextvars.ContextVar("cowbird_request_began", default=None)
"""When the request being served began (seconds since the epoch): its node calls say so
(``X-Cowbird-Began``), so that every node ranks the requests it runs the same way."""


class RequestStart:
    """Notes when each request began (``REQUEST_BEGAN``) for its node calls to carry."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            REQUEST_BEGAN.set(time.time())
        await self.app(scope, receive, send)


class Failover:
    """Calls to the nodes of a partition, one rule for all: attempts, failover, health, the log."""

    def __init__(self, pools: NodePools, token: str, settings: FrontendSettings) -> None:
        self.pools = pools
        self.headers = {"Authorization": f"Bearer {token}"}
        self.settings = settings
        self.health = NodeHealth(pools, settings.nodes.health_probe_timeout)
        self.metrics: Metrics | None = None  # node calls by partition and outcome, when the app counts them

    def time_limit(self, limit: TimeLimit | None) -> float:
        """``[nodes] timeout`` (longer for background work), but never past the request's deadline."""
        timeout = stretched(self.settings.nodes.timeout)
        return timeout if limit is None else min(timeout, limit.remaining())

    async def attempt(self, partition: Partition, node: str, send: Callable[[str], Awaitable[T]],
                       limit: TimeLimit | None, replica: bool = False) -> T:
        """One call to one node under the time limit, every failure as ``NodeFailure``; ``replica``:
        another node could answer if this one is gone."""
        timeout = self.time_limit(limit)
        if timeout <= 0:
            raise NodeFailure(partition.id, node, "no time left for this partition", final=True)
        started = time.perf_counter()
        outcome = "ok"
        call = secrets.token_hex(8)
        named = _CALL.set(call)
        try:
            result = await self._waited(node, call, send(node), timeout, replica)
        except (TimeoutError, httpx.TimeoutException):
            outcome = "timeout"
            waited = min(timeout, time.perf_counter() - started)  # less: the node stopped answering
            shown = timeout if waited > timeout * 0.98 else waited
            raise NodeFailure(partition.id, node, f"timed out after {shown:.3g} s", timed_out=True, call=call,
                              waited=waited) from None
        except httpx.TransportError as exc:
            outcome = "unreachable"
            self.health.failed(node)
            raise NodeFailure(partition.id, node, f"unreachable ({type(exc).__name__})") from exc
        except NodeFailure as failure:
            outcome = f"failed: {failure.reason}"
            raise
        except BaseException:  # cancelled: the client went, the deadline passed, a sibling call failed
            outcome = "cancelled"
            raise
        finally:
            _CALL.reset(named)
            ms = (time.perf_counter() - started) * 1000
            if outcome in ("timeout", "cancelled") or outcome.startswith("failed"):
                spent(ms)  # the node worked on it until it gave up or saw the call go: the viewer pays that
            fields = {"node": node, "partition": partition.id, "ms": round(ms, 1), "status": outcome}
            FANOUT.info("node call %s %s", partition.id, outcome, extra={"fields": fields})
            if self.metrics is not None:
                self.metrics.node_calls.labels(partition.id, outcome.split(":")[0]).inc()
        self.health.succeeded(node)
        elapsed = getattr(result, "elapsed_ms", None)
        if isinstance(elapsed, int | float):
            spent(elapsed)  # the viewer's fair use counts the nodes' time
        return result

    async def _waited(self, node: str, call: str, sending: Awaitable[T], timeout: float, replica: bool) -> T:
        """The call's answer within ``timeout``. Where a replica could answer instead, a wait longer
        than ``[nodes] timeout`` (background work's) goes on past it only while the node answers its
        health check: a node cut off or stopped (two checks unanswered) is given up while the replica
        still has time, not at the end of the longer wait. Without a replica the node gets it all."""
        job = asyncio.ensure_future(sending)
        loop = asyncio.get_running_loop()
        end, step = loop.time() + timeout, self.settings.nodes.timeout
        silent = 0
        try:
            done, _ = await asyncio.wait({job}, timeout=min(timeout, step) if replica else timeout)
            while not done and loop.time() < end:
                silent = 0 if await self.health.at_work(node, call) is not None else silent + 1
                if silent >= 2:
                    break
                done, _ = await asyncio.wait({job}, timeout=min(end - loop.time(), step))
            if not done:
                raise TimeoutError
            return job.result()
        finally:
            if not job.done():
                job.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):  # what ends it matters no more
                    await job

    async def try_nodes(self, partition: Partition, send: Callable[[str], Awaitable[T]],
                         limit: TimeLimit | None = None) -> T:
        """``send(node)`` on each node of the partition in turn until one answers."""
        failures: list[NodeFailure] = []
        for index, node in enumerate(partition.nodes):
            if not await self.health.usable(node):
                failures.append(NodeFailure(partition.id, node, "not answering (skipped until it answers again)"))
                continue
            try:
                return await self.attempt(partition, node, send, limit, replica=index + 1 < len(partition.nodes))
            except NodeFailure as failure:
                await self.after_timeout(failure, more=index + 1 < len(partition.nodes))
                failures.append(failure)
                if failure.final:
                    break
        raise combined(partition, failures)

    async def after_timeout(self, failure: NodeFailure, more: bool) -> None:
        """A node timed out: if it worked on the call for at least half the time waited (until now,
        or until it saw the call given up), the query is what is slow, and the replicas are spared
        it (``final``); if it never got the call, or late (held up on the way: a link down, a
        process stopped), a replica is asked. With no replica left, find out in the background."""
        if not failure.timed_out:
            return
        if more:
            seconds = await self.health.at_work(failure.node, failure.call) if failure.call else None
            failure.final = seconds is not None and seconds >= failure.waited / 2
        else:
            self.health.check_later(failure.node)

    async def request(self, partition: Partition, node: str, method: str, path: str, **kwargs: Any) -> bytes:
        """The body of a successful answer, read up to ``[nodes] max_response_bytes``."""
        return await self.body(partition, node, await self.send(node, method, path, **kwargs))

    async def send(self, node: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """The node's answer, its body not read yet."""
        client = self.pools(node)
        headers = {**self.headers, "X-Cowbird-Call": _CALL.get()} if _CALL.get() else self.headers
        headers = {**headers, **priority_headers()} if PRIORITY.get() == "background" else headers
        began = REQUEST_BEGAN.get()
        headers = {**headers, "X-Cowbird-Began": f"{began:.6f}"} if began is not None else headers
        request = client.build_request(method, f"{node}{path}", headers=headers, **kwargs)
        try:
            return await client.send(request, stream=True)
        except (AttributeError, OSError) as exc:
            # a node killed while the connection is made can surface as the socket vanishing under
            # httpcore/anyio (``'NoneType' object has no attribute 'getpeername'``): the node is
            # unreachable, as for any transport error, not a failure of the front end
            raise httpx.ConnectError(f"{type(exc).__name__}: {exc}", request=request) from exc

    async def body(self, partition: Partition, node: str, response: httpx.Response) -> bytes:
        """The body, read up to ``[nodes] max_response_bytes``; a failure answer raises (``classify``)."""
        try:
            body = await read_capped(response, self.settings.nodes.max_response_bytes, partition.id, node)
        finally:
            await response.aclose()
        classify(response.status_code, body, partition.id, node)
        return body
