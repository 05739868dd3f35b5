"""Calling the nodes: :class:`NodeClient`, the node API as typed calls, and the fan-out of one
search's calls (``gather``: parallel, at most ``[nodes] max_parallel`` at once, or serial).

The parts of a call live beside it: a small connection pool per node (``pools.py``), the one rule
of attempts, failover and node health every call goes through (``failover.py``), the checks of
every answer against the request and the manifest (``node_answers.py``), the reading of export
streams (``ndjson.py``).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx

from cowbird.core.off_loop import OFF_LOOP_BYTES, off_loop
from cowbird.core.operations import ImpossibleAnswer, Operation, Rq, Rs
from cowbird.core.search import PartitionFailure, TimeLimit
from cowbird.core.wire import ContextResponse, ExportRequest, Line
from cowbird.frontend.caller import Caller
from cowbird.frontend.corpora import Partition
from cowbird.frontend.failover import Call, Failover, close
from cowbird.frontend.ndjson import stream_lines
from cowbird.frontend.node_answers import NodeFailure, check, check_lines, combined, parse_answer, payload
from cowbird.frontend.node_health import NodeHealth
from cowbird.frontend.pools import IDLE_SECONDS, NodePools
from cowbird.frontend.settings import FrontendSettings
from cowbird.serving.metrics import Metrics

__all__ = ["IDLE_SECONDS", "NodeClient", "NodeFailure", "NodePools"]

T = TypeVar("T")
logger = logging.getLogger("cowbird.fanout")


class NodeClient:
    """Typed calls to the node API, one method per route: each builds its request from a model,
    goes through :class:`~cowbird.frontend.failover.Failover` and checks the answer against the
    request and the manifest (``node_answers``). It is the front end's
    :class:`~cowbird.core.search.Partitions`."""

    def __init__(self, pools: NodePools, token: str, settings: FrontendSettings) -> None:
        self.failover = Failover(pools, token, settings)
        self.settings = settings

    @property
    def health(self) -> NodeHealth:
        return self.failover.health

    @property
    def metrics(self) -> Metrics | None:
        return self.failover.metrics

    @metrics.setter
    def metrics(self, metrics: Metrics | None) -> None:
        self.failover.metrics = metrics

    def bound(self, caller: Caller) -> RequestNodes:
        """The nodes as one request calls them (its :class:`~cowbird.core.search.Partitions`)."""
        return RequestNodes(self, caller)

    @property
    def serial(self) -> bool:
        """Whether a search asks the partitions one after the other (``[nodes] fanout = "serial"``)."""
        return self.settings.nodes.fanout == "serial"

    # -- the node API ----------------------------------------------------------------------------

    async def call(self, partition: Partition, operation: Operation[Rq, Rs], request: Rq,
                   limit: TimeLimit | None, caller: Caller) -> Rs:
        """One operation of the node API (``POST /v1/<name>``) on one partition, through the failover
        rule; the answer is parsed as the operation's response and checked with its check against the
        request and the partition's size from the manifest (large answers off the event loop)."""
        path = f"/v1/{operation.name}"

        def checked(body: bytes, node: str) -> Rs:
            answer = parse_answer(body, operation.response, partition.id, node)
            try:
                operation.check(request, answer, partition.size)
            except ImpossibleAnswer as impossible:
                raise NodeFailure(partition.id, node, str(impossible)) from None
            return answer

        async def send(call: Call) -> Rs:
            body = await self.failover.request(partition, call, "POST", path, json=payload(request))
            node = call.node
            return await off_loop(checked, body, node) if len(body) > OFF_LOOP_BYTES else checked(body, node)

        return await self.failover.try_nodes(partition, send, caller, limit)

    async def context(self, partition: Partition, cpos: int, **params: Any) -> ContextResponse:
        """One hit's line with its context (``GET /v1/context``): interactive, for nobody's meter."""
        params = {k: v for k, v in params.items() if v is not None}  # (httpx sends None as an empty value)

        async def send(call: Call) -> ContextResponse:
            path = f"/v1/context/{partition.id}/{cpos}"
            node = call.node
            body = await self.failover.request(partition, call, "GET", path, params=params)
            answer = parse_answer(body, ContextResponse, partition.id, node)
            check(answer.partition == partition.id and answer.cpos == cpos, "answered another request",
                   partition, node)
            check_lines([answer.line], partition, node)
            return answer

        return await self.failover.try_nodes(partition, send, Caller())

    async def export(self, partition: Partition, request: ExportRequest, expected: int,
                     limit: TimeLimit | None, caller: Caller) -> AsyncIterator[Line]:
        """Exactly ``expected`` lines from ``request.offset`` on, streamed; when a node fails part
        way, the next node resumes at the first line not yet delivered. If no node can finish,
        ``NodeFailure`` is raised after the lines delivered so far — never a line twice or skipped."""
        delivered = 0
        failures: list[NodeFailure] = []
        for index, node in enumerate(partition.nodes):
            if delivered == expected:
                return
            if not self.failover.health.usable(node):
                failures.append(NodeFailure(partition.id, node, "not answering (skipped until it answers again)"))
                continue
            rest = request.model_copy(update={"offset": request.offset + delivered, "limit": expected - delivered})

            async def open_stream(call: Call, rest: ExportRequest = rest) -> httpx.Response:
                return await self._open_export(partition, call, rest)

            opened = False
            started = time.perf_counter()
            try:
                response = await self.failover.attempt(partition, node, open_stream, limit, caller,
                                                       replica=self.failover.replica(partition, index))
                opened = True
                try:
                    lines = stream_lines(self.failover, partition, node, response, expected - delivered, limit,
                                         caller, in_corpus_order=request.sort is None,
                                         replica=self.failover.replica(partition, index))
                    async for line in lines:
                        delivered += 1
                        yield line
                finally:
                    await close(response)
                    caller.called((time.perf_counter() - started) * 1000)  # the node's time: its stream was open
            except NodeFailure as failure:
                logger.warning("export of %s: %s after %d of %d lines", partition.id, failure, delivered, expected)
                if opened:  # the query ran; the stream broke or stalled: a replica can finish it
                    if failure.timed_out:
                        self.failover.health.check_later(node)
                else:
                    await self.failover.after_timeout(failure, more=node != partition.nodes[-1])
                failures.append(failure)
                if failure.final:
                    break
        if delivered < expected:
            raise combined(partition, failures)

    async def _open_export(self, partition: Partition, call: Call, request: ExportRequest) -> httpx.Response:
        response = await self.failover.send(call, "POST", "/v1/export", json=payload(request))
        if response.status_code >= 300:
            await self.failover.body(partition, call.node, response)  # raises: the node refused or failed
        return response

    async def gather(self, calls: list[Callable[[], Awaitable[T]]]) -> list[T | PartitionFailure]:
        """Run one request's calls as configured — in parallel, at most ``[nodes] max_parallel`` at once, or
        one after the other; failures are returned, not raised. The bound is per request, so one
        client's heavy queries never hold back another's."""
        slots = asyncio.Semaphore(self.settings.nodes.max_parallel)

        async def one(call: Callable[[], Awaitable[T]]) -> T | PartitionFailure:
            async with slots:
                try:
                    return await call()
                except NodeFailure as failure:
                    logger.warning("%s", failure)
                    return failure

        if self.settings.nodes.fanout == "serial":
            return [await one(call) for call in calls]
        return list(await asyncio.gather(*(one(call) for call in calls)))




@dataclass(frozen=True)
class RequestNodes:
    """The nodes as one request calls them: its :class:`~cowbird.core.search.Partitions`, every call
    made for its :class:`~cowbird.frontend.caller.Caller` (priority, start, node-time meter)."""

    client: NodeClient
    caller: Caller

    @property
    def time_limit(self) -> float:
        """Seconds a preview or an analysis may take across all nodes (``deadline``; longer for
        background work)."""
        return self.caller.stretched(self.client.settings.limits.deadline)

    @property
    def export_time_limit(self) -> float:
        return self.client.settings.limits.export_deadline

    @property
    def serial(self) -> bool:
        return self.client.serial

    async def call(self, partition: Partition, operation: Operation[Rq, Rs], request: Rq,
                   limit: TimeLimit | None = None) -> Rs:
        return await self.client.call(partition, operation, request, limit, self.caller)

    def export(self, partition: Partition, request: ExportRequest, expected: int,
               limit: TimeLimit | None = None) -> AsyncIterator[Line]:
        return self.client.export(partition, request, expected, limit, self.caller)

    async def gather(self, calls: list[Callable[[], Awaitable[T]]]) -> list[T | PartitionFailure]:
        return await self.client.gather(calls)
