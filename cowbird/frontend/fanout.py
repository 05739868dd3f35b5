"""Calling the nodes: a small connection pool per node (:class:`NodePools`), failover across a partition's nodes, node
health, and parallel or serial fan-out.

Every call goes through :meth:`NodeClient._try_nodes`, which tries a partition's nodes in order
under one rule (:func:`classify` and :meth:`NodeClient._attempt`):

- a failure of the node — refused connection, a redirect, a 5xx, a node-side refusal such as a
  wrong node token or an unknown partition, an answer that is too large, does not parse or does
  not fit the request and the manifest — moves on to the next node;
- a refusal of the request itself (a 4xx problem such as ``query_syntax``) is the same on every
  node and goes to the client as :class:`RejectedByNode`;
- a query that runs out of time on a node that is alive (it says ``timeout``, or still answers its
  health check) is not repeated on the replicas: it would only cost them the same time.

Every attempt runs under a time limit (``node_timeout``, and never past the request's own
deadline), so a node that trickles its answer fails like one that does not answer. Nodes that do
not answer are skipped (:class:`NodeHealth`) until a quick health check says they are back, so a
dead node costs a preview one probe, not ``node_timeout`` per call. Failures keep the node's URL
for the log; what clients see names partitions only.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import secrets
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

import httpx

from cowbird.core.metrics import Metrics
from cowbird.core.off_loop import OFF_LOOP_BYTES, off_loop
from cowbird.core.search import PartitionFailure, TimeLimit
from cowbird.core.wire import (
    ContextResponse,
    CooccurrenceRequest,
    CooccurrenceResponse,
    CountRequest,
    CountResponse,
    DistributionRequest,
    DistributionResponse,
    ExportRequest,
    FrequencyRequest,
    FrequencyResponse,
    HitsRequest,
    HitsResponse,
    Line,
    MarginalsRequest,
    MarginalsResponse,
    SortKeysRequest,
    SortKeysResponse,
)
from cowbird.frontend.corpora import Partition
from cowbird.frontend.node_answers import (
    MAX_LINE_BYTES,
    NodeFailure,
    check,
    check_cooccurrence,
    check_distribution,
    check_frequency,
    check_in_order,
    check_lines,
    check_sort_keys,
    classify,
    combined,
    parse_answer,
    payload,
    read_capped,
)
from cowbird.frontend.node_health import NodeHealth
from cowbird.frontend.settings import FrontendSettings

__all__ = ["NodeClient", "NodeFailure", "NodePools"]

T = TypeVar("T")
AnalysisRequest = FrequencyRequest | DistributionRequest | CooccurrenceRequest | SortKeysRequest
A = TypeVar("A", FrequencyResponse, DistributionResponse, CooccurrenceResponse, SortKeysResponse)
logger = logging.getLogger("cowbird.fanout")


IDLE_SECONDS = 10.0
"""How long an idle connection to a node is kept for reuse: well below the node's
``keep_alive_seconds`` (30), so that a request never goes out on a connection the node is just
closing (which fails with a read error, and without a replica the partition with it)."""


class NodePools:
    """One ``httpx.AsyncClient`` per node, each with at most ``node_connections`` connections.

    Small pools per node rather than one big shared one: httpx's pool walks all its connections
    on every request, so a shared pool of a few hundred connections cost the front end more CPU
    than the queries cost the nodes (bench/load.py, 32 clients: 13 s with 32 connections, 22 s
    with 64). A pool per node also keeps one slow node from taking every connection.
    ``transport`` replaces the network (tests mount node apps).
    """

    def __init__(self, settings: FrontendSettings, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.transport = transport
        # https nodes: verified against node_ca_file (a private CA) when given, else the system's CAs
        self.verify: ssl.SSLContext | bool = (
            ssl.create_default_context(cafile=str(settings.node_ca_file)) if settings.node_ca_file else True
        )
        self.timeout = httpx.Timeout(settings.node_timeout, connect=settings.node_connect_timeout)
        self.limits = httpx.Limits(
            max_connections=settings.node_connections, max_keepalive_connections=settings.node_connections,
            keepalive_expiry=IDLE_SECONDS,
        )
        self._clients: dict[str, httpx.AsyncClient] = {}

    def __call__(self, node: str) -> httpx.AsyncClient:
        """The client for ``node`` (its base URL)."""
        client = self._clients.get(node)
        if client is None:
            client = self._clients[node] = httpx.AsyncClient(
                transport=self.transport, timeout=self.timeout, limits=self.limits, verify=self.verify
            )
        return client

    async def aclose(self) -> None:
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.aclose()


FANOUT = logging.getLogger("cowbird.fanout")
_CALL: contextvars.ContextVar[str] = contextvars.ContextVar("cowbird_node_call", default="")


class NodeClient:
    """Typed calls to the node API, each with failover over the partition's nodes."""

    def __init__(self, pools: NodePools, token: str, settings: FrontendSettings) -> None:
        self.pools = pools
        self.headers = {"Authorization": f"Bearer {token}"}
        self.settings = settings
        self.health = NodeHealth(pools, settings.health_probe_timeout)
        self.metrics: Metrics | None = None  # node calls by partition and outcome, when the app counts them

    # -- what a search needs besides the calls (cowbird.core.search.Partitions) ------------------

    @property
    def time_limit(self) -> float:
        """Seconds a preview or an analysis may take across all nodes (``deadline``)."""
        return self.settings.deadline

    @property
    def export_time_limit(self) -> float:
        return self.settings.export_deadline

    @property
    def serial(self) -> bool:
        """Whether a search asks the partitions one after the other (``fanout = "serial"``)."""
        return self.settings.fanout == "serial"

    # -- one rule for every call ---------------------------------------------------------------

    def _time_limit(self, limit: TimeLimit | None) -> float:
        """``node_timeout``, but never past the request's deadline."""
        timeout = self.settings.node_timeout
        return timeout if limit is None else min(timeout, limit.remaining())

    async def _attempt(self, partition: Partition, node: str, send: Callable[[str], Awaitable[T]],
                       limit: TimeLimit | None) -> T:
        """One call to one node under the time limit, every failure as ``NodeFailure``."""
        timeout = self._time_limit(limit)
        if timeout <= 0:
            raise NodeFailure(partition.id, node, "no time left for this partition", final=True)
        started = time.perf_counter()
        outcome = "ok"
        call = secrets.token_hex(8)
        named = _CALL.set(call)
        try:
            async with asyncio.timeout(timeout):
                result = await send(node)
        except (TimeoutError, httpx.TimeoutException):
            outcome = "timeout"
            raise NodeFailure(partition.id, node, f"timed out after {timeout:.3g} s", timed_out=True, call=call,
                              waited=timeout) from None
        except httpx.TransportError as exc:
            outcome = "unreachable"
            self.health.failed(node)
            raise NodeFailure(partition.id, node, f"unreachable ({type(exc).__name__})") from exc
        except NodeFailure as failure:
            outcome = f"failed: {failure.reason}"
            raise
        finally:
            _CALL.reset(named)
            fields = {"node": node, "partition": partition.id, "ms": round((time.perf_counter() - started) * 1000, 1),
                      "status": outcome}
            FANOUT.info("node call %s %s", partition.id, outcome, extra={"fields": fields})
            if self.metrics is not None:
                self.metrics.node_calls.labels(partition.id, outcome.split(":")[0]).inc()
        self.health.succeeded(node)
        return result

    async def _try_nodes(self, partition: Partition, send: Callable[[str], Awaitable[T]],
                         limit: TimeLimit | None = None) -> T:
        """``send(node)`` on each node of the partition in turn until one answers."""
        failures: list[NodeFailure] = []
        for index, node in enumerate(partition.nodes):
            if not await self.health.usable(node):
                failures.append(NodeFailure(partition.id, node, "not answering (skipped until it answers again)"))
                continue
            try:
                return await self._attempt(partition, node, send, limit)
            except NodeFailure as failure:
                await self._after_timeout(failure, more=index + 1 < len(partition.nodes))
                failures.append(failure)
                if failure.final:
                    break
        raise combined(partition, failures)

    async def _after_timeout(self, failure: NodeFailure, more: bool) -> None:
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

    async def _request(self, partition: Partition, node: str, method: str, path: str, **kwargs: Any) -> bytes:
        """The body of a successful answer, read up to ``max_node_response_bytes``."""
        return await self._body(partition, node, await self._send(node, method, path, **kwargs))

    async def _send(self, node: str, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """The node's answer, its body not read yet."""
        client = self.pools(node)
        headers = {**self.headers, "X-Cowbird-Call": _CALL.get()} if _CALL.get() else self.headers
        request = client.build_request(method, f"{node}{path}", headers=headers, **kwargs)
        return await client.send(request, stream=True)

    async def _body(self, partition: Partition, node: str, response: httpx.Response) -> bytes:
        """The body, read up to ``max_node_response_bytes``; a failure answer raises (``classify``)."""
        try:
            body = await read_capped(response, self.settings.max_node_response_bytes, partition.id, node)
        finally:
            await response.aclose()
        classify(response.status_code, body, partition.id, node)
        return body

    # -- the node API ----------------------------------------------------------------------------

    async def count(self, partition: Partition, request: CountRequest, limit: TimeLimit | None = None) -> CountResponse:
        async def send(node: str) -> CountResponse:
            body = await self._request(partition, node, "POST", "/v1/count", json=payload(request))
            answer = parse_answer(body, CountResponse, partition.id, node)
            check(answer.partition == partition.id and answer.query == request.query, "answered another request",
                   partition, node)
            check(0 <= answer.total <= partition.size, f"claims {answer.total} hits", partition, node)
            return answer

        return await self._try_nodes(partition, send, limit)

    async def hits(self, partition: Partition, request: HitsRequest, limit: TimeLimit | None = None) -> HitsResponse:
        async def send(node: str) -> HitsResponse:
            body = await self._request(partition, node, "POST", "/v1/hits", json=payload(request))
            answer = parse_answer(body, HitsResponse, partition.id, node)
            check(answer.partition == request.partition and answer.query == request.query
                   and answer.offset == request.offset, "answered another request", partition, node)
            check(0 <= answer.total <= partition.size, f"claims {answer.total} hits", partition, node)
            wanted = len(request.indices) if request.indices is not None else \
                max(0, min(request.limit, answer.total - request.offset))
            check(len(answer.data) == wanted, f"sent {len(answer.data)} lines instead of {wanted}", partition, node)
            check_lines(answer.data, partition, node)
            if request.sort is None:  # a page or a sample's hits: in corpus order, each once
                check_in_order(answer.data, partition, node)
            return answer

        return await self._try_nodes(partition, send, limit)

    async def analysis(self, partition: Partition, path: str, request: AnalysisRequest, answer_type: type[A],
                       limit: TimeLimit | None = None) -> A:
        """An analysis of the hits on one partition (``/v1/frequency``, ``/v1/distribution``,
        ``/v1/cooccurrence``, ``/v1/sortkeys``), checked against the request and the manifest."""

        def checked(body: bytes, node: str) -> A:
            answer = parse_answer(body, answer_type, partition.id, node)
            check(answer.partition == partition.id and answer.query == request.query, "answered another request",
                   partition, node)
            check(0 <= answer.total <= partition.size, f"claims {answer.total} hits", partition, node)
            if isinstance(answer, FrequencyResponse):
                check_frequency(answer, partition, node)
            elif isinstance(answer, DistributionResponse):
                check_distribution(answer, partition, node)
            elif isinstance(answer, CooccurrenceResponse):
                check_cooccurrence(answer, partition, node)
            elif isinstance(request, SortKeysRequest):
                check_sort_keys(answer, request, request.sort.direction == "desc", partition, node)
            return answer

        async def send(node: str) -> A:
            body = await self._request(partition, node, "POST", path, json=payload(request))
            return await off_loop(checked, body, node) if len(body) > OFF_LOOP_BYTES else checked(body, node)

        return await self._try_nodes(partition, send, limit)

    async def marginals(self, partition: Partition, request: MarginalsRequest,
                        limit: TimeLimit | None = None) -> MarginalsResponse:
        async def send(node: str) -> MarginalsResponse:
            body = await self._request(partition, node, "POST", "/v1/marginals", json=payload(request))
            answer = parse_answer(body, MarginalsResponse, partition.id, node)
            check(answer.partition == partition.id and len(answer.frequencies) == len(request.values),
                   "answered another request", partition, node)
            check(all(0 <= f <= partition.size for f in answer.frequencies), "claims impossible frequencies",
                   partition, node)
            return answer

        return await self._try_nodes(partition, send, limit)

    async def context(self, partition: Partition, cpos: int, **params: Any) -> ContextResponse:
        async def send(node: str) -> ContextResponse:
            body = await self._request(partition, node, "GET", f"/v1/context/{partition.id}/{cpos}", params=params)
            answer = parse_answer(body, ContextResponse, partition.id, node)
            check(answer.partition == partition.id and answer.cpos == cpos, "answered another request",
                   partition, node)
            check_lines([answer.line], partition, node)
            return answer

        return await self._try_nodes(partition, send)

    async def export(self, partition: Partition, request: ExportRequest, expected: int,
                     limit: TimeLimit | None = None) -> AsyncIterator[Line]:
        """Exactly ``expected`` lines from ``request.offset`` on, streamed; when a node fails part
        way, the next node resumes at the first line not yet delivered. If no node can finish,
        ``NodeFailure`` is raised after the lines delivered so far — never a line twice or skipped."""
        delivered = 0
        failures: list[NodeFailure] = []
        for node in partition.nodes:
            if delivered == expected:
                return
            if not await self.health.usable(node):
                failures.append(NodeFailure(partition.id, node, "not answering (skipped until it answers again)"))
                continue
            rest = request.model_copy(update={"offset": request.offset + delivered, "limit": expected - delivered})

            async def open_stream(node: str, rest: ExportRequest = rest) -> httpx.Response:
                return await self._open_export(partition, node, rest)

            opened = False
            try:
                response = await self._attempt(partition, node, open_stream, limit)
                opened = True
                try:
                    async for line in self._lines(partition, node, response, expected - delivered, limit,
                                                  in_corpus_order=request.sort is None):
                        delivered += 1
                        yield line
                finally:
                    await response.aclose()
            except NodeFailure as failure:
                logger.warning("export of %s: %s after %d of %d lines", partition.id, failure, delivered, expected)
                if opened:  # the query ran; the stream broke or stalled: a replica can finish it
                    if failure.timed_out:
                        self.health.check_later(node)
                else:
                    await self._after_timeout(failure, more=node != partition.nodes[-1])
                failures.append(failure)
                if failure.final:
                    break
        if delivered < expected:
            raise combined(partition, failures)

    async def _open_export(self, partition: Partition, node: str, request: ExportRequest) -> httpx.Response:
        response = await self._send(node, "POST", "/v1/export", json=payload(request))
        if response.status_code >= 300:
            await self._body(partition, node, response)  # raises: the node refused or failed
        return response

    async def _lines(self, partition: Partition, node: str, response: httpx.Response, count: int,
                     limit: TimeLimit | None, in_corpus_order: bool = True) -> AsyncIterator[Line]:
        """``count`` valid lines of an export stream, in corpus order unless sorted (then each line
        carries its sort key); the stream must keep moving."""
        previous = (-1, -1)
        received = 0
        async for text in self._raw_lines(partition, node, response, limit):
            if not text.strip():
                continue
            line = parse_answer(text, Line, partition.id, node)
            check_lines([line], partition, node)
            if in_corpus_order:
                check((line.match, line.matchend) > previous, "sent lines out of order or twice", partition, node)
            else:
                check(line.sort_key is not None, "sent a sorted line without its sort key", partition, node)
            previous = (line.match, line.matchend)
            received += 1
            yield line
            if received == count:
                return
        raise NodeFailure(partition.id, node, f"ended the stream after {received} of {count} lines")

    async def _raw_lines(self, partition: Partition, node: str, response: httpx.Response,
                         limit: TimeLimit | None) -> AsyncIterator[bytes]:
        """The lines of a stream as they come; each chunk must arrive within ``node_timeout``, and
        no line may be longer than ``MAX_LINE_BYTES``."""
        chunks = response.aiter_bytes()
        pending = b""
        while True:
            try:
                async with asyncio.timeout(max(self._time_limit(limit), 0)):
                    chunk = await anext(chunks, b"")
            except (TimeoutError, httpx.TimeoutException):
                raise NodeFailure(partition.id, node, "stalled in the middle of the stream", timed_out=True) from None
            except httpx.TransportError as exc:
                raise NodeFailure(partition.id, node, f"broke off the stream ({type(exc).__name__})") from exc
            if not chunk:
                if pending:
                    yield pending
                return
            lines = (pending + chunk).split(b"\n")
            pending = lines.pop()
            if len(pending) > MAX_LINE_BYTES:
                raise NodeFailure(partition.id, node, f"sent a line longer than {MAX_LINE_BYTES} bytes")
            for line in lines:
                yield line

    async def gather(self, calls: list[Callable[[], Awaitable[T]]]) -> list[T | PartitionFailure]:
        """Run one request's calls as configured — in parallel, at most ``max_parallel`` at once, or
        one after the other; failures are returned, not raised. The bound is per request, so one
        client's heavy queries never hold back another's."""
        slots = asyncio.Semaphore(self.settings.max_parallel)

        async def one(call: Callable[[], Awaitable[T]]) -> T | PartitionFailure:
            async with slots:
                try:
                    return await call()
                except NodeFailure as failure:
                    logger.warning("%s", failure)
                    return failure

        if self.settings.fanout == "serial":
            return [await one(call) for call in calls]
        return list(await asyncio.gather(*(one(call) for call in calls)))


