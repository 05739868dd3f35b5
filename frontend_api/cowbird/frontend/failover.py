"""Failover: the one rule every call to a node goes through (:class:`Failover`).

A call tries a partition's nodes in order (:meth:`Failover.try_nodes`), each attempt under a time
limit (:meth:`Failover.attempt`: ``[nodes] timeout``, never past the request's own deadline):

- a failure of the node — refused connection, a redirect, a 5xx, a node-side refusal such as a
  wrong node token or an unknown partition, an answer that is too large, does not parse or does
  not fit the request and the manifest — moves on to the next node;
- a refusal of the request itself (a 4xx problem such as ``query_syntax``) is the same on every
  node and goes to the client as :class:`~cowbird.core.errors.RejectedByNode`;
- a node that stops answering is left for its replica within about a second, interactive work and
  background work alike: while a replica could answer, a call that has had no answer within
  ``[nodes] hedge_after`` asks whether the node still answers anything (``NodeHealth.answering``:
  one health check per node at a time, shared by every call waiting on it), and again every
  ``hedge_after``; a node that does not is marked down and the call goes to the replica;
- a query that runs out of time on a node that is alive (it says ``timeout``, or still answers its
  health check) is not repeated on the replicas: it would only cost them the same time.

Nodes marked down are skipped (:class:`NodeHealth`) without a wait or a probe of their own until
the node's one background prober sees it answer again, so a hung node costs the calls that were
waiting on it about a second, and later calls nothing. Failures keep the node's URL for the log;
what clients see names partitions only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar, runtime_checkable

import httpx
from starlette.types import ASGIApp, Receive, Scope, Send

from cowbird.core.search import TimeLimit
from cowbird.frontend.caller import Caller
from cowbird.frontend.corpora import Partition
from cowbird.frontend.node_answers import NodeFailure, classify, combined, read_capped
from cowbird.frontend.node_health import NodeHealth
from cowbird.frontend.pools import NodePools
from cowbird.frontend.settings import FrontendSettings
from cowbird.serving.clock import Clock, MonotonicClock, done_within
from cowbird.serving.metrics import Metrics

T = TypeVar("T")
FANOUT = logging.getLogger("cowbird.fanout")
BEGAN = "cowbird_began"
"""Where a request's start is kept in its scope's state (``request.state.cowbird_began``)."""


class RequestStart:
    """Notes when each request began (seconds since the epoch, in the request's state) for its node
    calls to carry (``Caller.began``): every node ranks the requests it runs the same way."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            scope.setdefault("state", {})[BEGAN] = time.time()
        await self.app(scope, receive, send)


def began(scope: Scope) -> float | None:
    """When the request of ``scope`` began (``RequestStart``), if noted."""
    value = scope.get("state", {}).get(BEGAN)
    return value if isinstance(value, float) else None


_ENDING: set[asyncio.Task[Any]] = set()
"""Node calls ending (cancelled, or closing their connections), held: the loop keeps weak references."""


async def finish(job: asyncio.Task[Any]) -> None:
    """Wait for ``job`` to end without passing on a cancel of this wait. A streamed answer's client
    that goes away cancels the response's work again and again (anyio's cancel scopes are
    level-triggered): awaited plainly, each of those would reach the job too and cut httpcore's
    cleanup short — the connection left open in the pool, the node at work for a client that has
    gone. Shielded, a cancelled call is cancelled once and closes its connection, and a closing one
    finishes closing, even when this wait is cut short."""
    if job.done():
        return
    _ENDING.add(job)
    job.add_done_callback(_ENDING.discard)
    await asyncio.shield(job)


async def close(response: httpx.Response) -> None:
    """Close a node's response (its connection goes back to the pool, or is closed mid-answer), to
    the end even when this is cancelled (``finish``)."""
    await finish(asyncio.ensure_future(response.aclose()))


@dataclass(frozen=True)
class Call:
    """One attempt at a node call: the node, the call's id (``X-Cowbird-Call``: after a timeout the
    node says whether it is still at work on it) and the request it is made for."""

    node: str
    id: str
    caller: Caller


class Silent(Exception):
    """The node has not answered the call, nor a health check since (``Failover._waited``)."""


@runtime_checkable
class Timed(Protocol):
    """A node's answer that says how long the node worked on it (``elapsed_ms``: every operation's
    response of ``cowbird.core.wire``; not a context line's, nor an export's stream)."""

    elapsed_ms: float


BUSY_PAUSE = 0.25
"""Seconds before a partition whose every node said it is busy is asked again (doubling each time)..."""
BUSY_PAUSE_MOST = 2.0
"""... up to this many."""


class Failover:
    """Calls to the nodes of a partition, one rule for all: attempts, failover, health, the log."""

    def __init__(self, pools: NodePools, token: str, settings: FrontendSettings, clock: Clock | None = None) -> None:
        self.pools = pools
        self.headers = {"Authorization": f"Bearer {token}"}
        self.settings = settings
        self.clock: Clock = clock if clock is not None else MonotonicClock()  # what calls are timed on
        self.health = NodeHealth(lambda node: pools.probes(node), settings.nodes.health_probe_timeout,
                                 fresh=settings.nodes.hedge_after, clock=self.clock)
        self.metrics: Metrics | None = None  # node calls by partition and outcome, when the app counts them

    def time_limit(self, limit: TimeLimit | None, caller: Caller) -> float:
        """``[nodes] timeout`` (longer for background work), but never past the request's deadline."""
        timeout = caller.stretched(self.settings.nodes.timeout)
        return timeout if limit is None else min(timeout, limit.remaining())

    async def attempt(self, partition: Partition, node: str, send: Callable[[Call], Awaitable[T]],
                      limit: TimeLimit | None, caller: Caller, replica: bool = False) -> T:
        """One call to one node under the time limit, every failure as ``NodeFailure``; ``replica``:
        another node could answer if this one is gone. The caller is told what the call cost the node."""
        timeout = self.time_limit(limit, caller)
        if timeout <= 0:
            raise NodeFailure(partition.id, node, "no time left for this partition", final=True)
        started = self.clock.now()
        outcome = "ok"
        call = Call(node, secrets.token_hex(8), caller)
        try:
            result = await self._waited(node, call.id, send(call), timeout, replica)
        except (TimeoutError, httpx.TimeoutException):
            outcome = "timeout"
            waited = min(timeout, self.clock.now() - started)  # less: the node stopped answering
            shown = timeout if waited > timeout * 0.98 else waited
            raise NodeFailure(partition.id, node, f"timed out after {shown:.3g} s", timed_out=True, call=call.id,
                              waited=waited) from None
        except Silent:
            outcome = "not answering"
            waited = self.clock.now() - started
            raise NodeFailure(partition.id, node, f"not answering (nothing for {waited:.3g} s, not even its health "
                                                  "check): left for its replica") from None
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
            ms = (self.clock.now() - started) * 1000
            if outcome in ("timeout", "cancelled", "not answering") or outcome.startswith("failed"):
                caller.called(ms)  # the node worked on it until it gave up or saw the call go: the viewer pays that
            fields = {"node": node, "partition": partition.id, "ms": round(ms, 1), "status": outcome}
            FANOUT.info("node call %s %s", partition.id, outcome, extra={"fields": fields})
            if self.metrics is not None:
                self.metrics.node_calls.labels(partition.id, outcome.split(":")[0].replace(" ", "_")).inc()
        self.health.succeeded(node)
        if isinstance(result, Timed):
            caller.called(result.elapsed_ms)  # the node's own figure
        return result

    async def _waited(self, node: str, call: str, sending: Awaitable[T], timeout: float, replica: bool) -> T:
        """The call's answer within ``timeout``. Where a replica could answer instead, the node must
        go on answering while it works: after ``[nodes] hedge_after`` without an answer, and every
        ``hedge_after`` after that, ``NodeHealth.answering`` (shared by the node's calls) — a node
        that says nothing, not even to its health check, is left at once (``Silent``). Past ``[nodes]
        timeout`` (background work's longer wait) the node must also be at work on this very call: a
        call lost on the way is left after two checks that do not find it, while the replica still
        has time. Without a replica the node gets it all."""
        job = asyncio.ensure_future(sending)
        started = self.clock.now()
        end = started + timeout
        nodes = self.settings.nodes
        lost = 0
        try:
            done = await done_within(self.clock, min(timeout, nodes.hedge_after) if replica else timeout, job)
            while not done and self.clock.now() < end:
                answering = await self.health.answering(node)
                if job.done():  # it answered meanwhile
                    break
                if not answering:
                    raise Silent
                step = nodes.hedge_after
                if self.clock.now() - started >= nodes.timeout:  # past the interactive wait: at work on it?
                    lost = 0 if await self.health.at_work(node, call) is not None else lost + 1
                    if lost >= 2:
                        break
                    step = nodes.timeout
                done = await done_within(self.clock, min(end - self.clock.now(), step), job)
            if not job.done():
                raise TimeoutError
            return job.result()
        finally:
            if not job.done():
                job.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):  # what ends it matters no more
                    await finish(job)

    async def next_chunk(self, chunks: AsyncIterator[bytes], node: str, limit: TimeLimit | None, caller: Caller,
                         replica: bool) -> bytes:
        """The next chunk of a node's stream (``b""`` at its end) within the call's time limit; while a
        replica could take the rest, only as long as the node answers (``NodeHealth.answering`` every
        ``[nodes] hedge_after`` without a chunk): ``Silent`` once it does not."""
        timeout = max(self.time_limit(limit, caller), 0)
        if not replica:
            async with asyncio.timeout(timeout):
                return await anext(chunks, b"")
        job = asyncio.ensure_future(anext(chunks, b""))
        end = self.clock.now() + timeout
        try:
            while not await done_within(self.clock, max(0, min(self.settings.nodes.hedge_after,
                                                                  end - self.clock.now())), job):
                if self.clock.now() >= end:
                    raise TimeoutError
                answering = await self.health.answering(node)
                if job.done():
                    break
                if not answering:
                    raise Silent
            return job.result()
        finally:
            if not job.done():
                job.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):  # the stream is given up
                    await finish(job)

    async def try_nodes(self, partition: Partition, send: Callable[[Call], Awaitable[T]], caller: Caller,
                        limit: TimeLimit | None = None) -> T:
        """``send(node)`` on each node of the partition in turn until one answers (nodes marked down
        skipped: ``NodeHealth.usable``). When every node said it is busy — alive, its line full or its
        wait for a place over: the machine is loaded, nothing failed — the partition is asked again
        after a pause (``BUSY_PAUSE``, doubling up to ``BUSY_PAUSE_MOST``) as long as the call's time
        limit lasts: under load a request is slow, never partial."""
        end = self.clock.now() + self.time_limit(limit, caller)
        pause = BUSY_PAUSE
        while True:
            failures: list[NodeFailure] = []
            for index, node in enumerate(partition.nodes):
                if not self.health.usable(node):
                    failures.append(NodeFailure(partition.id, node, "not answering (skipped until it answers again)"))
                    continue
                try:
                    return await self.attempt(partition, node, send, limit, caller,
                                              replica=self.replica(partition, index))
                except NodeFailure as failure:
                    await self.after_timeout(failure, more=index + 1 < len(partition.nodes))
                    failures.append(failure)
                    if failure.final:
                        break
            failed = combined(partition, failures)
            if not failed.busy or self.clock.now() + pause >= end:
                raise failed
            await self.clock.sleep(pause)
            pause = min(pause * 2, BUSY_PAUSE_MOST)

    def replica(self, partition: Partition, index: int) -> bool:
        """Whether a node after the ``index``-th of the partition could answer instead (not marked down)."""
        return any(self.health.usable(node) for node in partition.nodes[index + 1:])

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

    async def request(self, partition: Partition, call: Call, method: str, path: str, **kwargs: Any) -> bytes:
        """The body of a successful answer, read up to ``[nodes] max_response_bytes``."""
        return await self.body(partition, call.node, await self.send(call, method, path, **kwargs))

    async def send(self, call: Call, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """The node's answer, its body not read yet. The connection's timeouts between bytes are ``[nodes]
        timeout``, stretched for background work as ``time_limit`` stretches the whole call: a node says
        nothing until its answer is ready, and background work may take it longer than that."""
        client = self.pools(call.node)
        headers = {**self.headers, "X-Cowbird-Call": call.id, **call.caller.headers()}
        nodes = self.settings.nodes
        timeout = httpx.Timeout(call.caller.stretched(nodes.timeout), connect=nodes.connect_timeout)
        request = client.build_request(method, f"{call.node}{path}", headers=headers, timeout=timeout, **kwargs)
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
            await close(response)
        classify(response.status_code, body, partition.id, node)
        return body
