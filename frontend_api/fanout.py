"""Calling the nodes: one shared ``httpx.AsyncClient``, failover across a partition's nodes, node
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
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from backend_node.schemas import (
    ContextResponse,
    CountRequest,
    CountResponse,
    ExportRequest,
    HitsRequest,
    HitsResponse,
    Line,
)
from cowbird.problems import Problem
from frontend_api.corpora import Partition
from frontend_api.errors import RejectedByNode
from frontend_api.settings import FrontendSettings

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
logger = logging.getLogger("cowbird.fanout")

NODE_SIDE_CODES = frozenset({"unauthorized", "unknown_partition", "too_large", "not_found", "http_error", "busy"})
"""Codes of answers that say something about the node, not the request: try the next node."""

MAX_LINE_BYTES = 4 * 1024 * 1024
"""Longest line of an export stream (a line of 100 tokens of context each side is a few kB)."""


@dataclass
class NodeFailure(Exception):
    """A partition could not be served by a node (or by any: ``node`` lists them), and why.

    ``final``: the other nodes would fail the same way (the query itself ran out of time);
    ``timed_out``: the node did not answer in time (alive and slow, or not alive at all).
    """

    partition: str
    node: str
    reason: str
    final: bool = False
    timed_out: bool = False

    def __str__(self) -> str:
        return f"{self.partition} on {self.node}: {self.reason}"

    def public(self) -> str:
        """What clients may see: the partition and why, not where the nodes are."""
        return f"{self.partition}: {self.reason}"


def client_timeouts(settings: FrontendSettings) -> httpx.Timeout:
    return httpx.Timeout(settings.node_timeout, connect=settings.node_connect_timeout)


def client_limits(settings: FrontendSettings) -> httpx.Limits:
    # Generous: one request's fan-out is bounded by max_parallel, and a heavy query holding a
    # connection must never make a cheap one wait for the pool.
    return httpx.Limits(max_connections=max(256, 16 * settings.max_parallel), max_keepalive_connections=64)


def _problem(body: bytes) -> Problem | None:
    try:
        return Problem.model_validate(json.loads(body))
    except (ValueError, ValidationError):
        return None


def _detail(body: bytes, status: int) -> str:
    """What a failed answer says about itself, in a few words."""
    problem = _problem(body)
    if problem is not None:
        return problem.detail[:200]
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("detail"), str):
        return str(parsed["detail"])[:200]
    return httpx.codes.get_reason_phrase(status) or "no detail"


def classify(status: int, body: bytes, partition: str, node: str) -> None:
    """The rule for node answers: return for a success, raise ``NodeFailure`` for a failure of the
    node (try the next one; ``final`` when the query ran out of time), ``RejectedByNode`` for a
    refusal of the request itself."""
    if status < 300:
        return
    problem = _problem(body)
    if problem is not None and problem.code == "timeout":
        raise NodeFailure(partition, node, "the query ran out of time on the node", final=True)
    if problem is not None and 400 <= status < 500 and status not in (408, 429) and problem.code not in NODE_SIDE_CODES:
        extra = problem.model_dump(exclude_none=True, exclude={"type", "title", "status", "detail", "code"})
        raise RejectedByNode(status, problem.code, problem.title, problem.detail, **extra)
    raise NodeFailure(partition, node, f"HTTP {status}: {_detail(body, status)}")


@dataclass
class _Health:
    down: bool = False
    retry_at: float = 0.0
    cooldown: float = 0.0
    probe: asyncio.Future[bool] | None = None


@dataclass
class NodeHealth:
    """A circuit breaker per node: a node that failed is skipped until ``cooldown`` has passed, then
    one health check (shared by every request that wants the node) decides whether it is back."""

    client: httpx.AsyncClient
    probe_timeout: float
    first_cooldown: float = 1.0
    max_cooldown: float = 30.0
    _nodes: dict[str, _Health] = field(default_factory=dict)
    _background: set[asyncio.Future[bool]] = field(default_factory=set)

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    def is_down(self, node: str) -> bool:
        return self._nodes.get(node, _Health()).down

    async def usable(self, node: str) -> bool:
        state = self._nodes.get(node)
        if state is None or not state.down:
            return True
        if self._now() < state.retry_at:
            return False
        if state.probe is None or state.probe.done():  # one health check at a time, shared
            state.probe = asyncio.ensure_future(self._probe(node))
        return await asyncio.shield(state.probe)

    async def alive(self, node: str) -> bool:
        """After a timeout: does the node still answer its health check (then the query was slow)?"""
        return await self._probe(node)

    def check_later(self, node: str) -> None:
        """After a timeout nobody waits on: find out in the background whether the node is down."""
        task = asyncio.ensure_future(self._probe(node))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _probe(self, node: str) -> bool:
        try:
            async with asyncio.timeout(self.probe_timeout):
                response = await self.client.get(f"{node}/health", timeout=self.probe_timeout)
            ok = response.status_code == 200
        except (TimeoutError, httpx.HTTPError):
            ok = False
        if ok:
            self.succeeded(node)
        else:
            self.failed(node)
        return ok

    def failed(self, node: str) -> None:
        state = self._nodes.setdefault(node, _Health())
        if not state.down:
            logger.warning("node %s is not answering; skipping it until it does", node)
        state.down = True
        state.cooldown = min(self.max_cooldown, state.cooldown * 2 or self.first_cooldown)
        state.retry_at = self._now() + state.cooldown

    def succeeded(self, node: str) -> None:
        state = self._nodes.get(node)
        if state is not None and state.down:
            logger.warning("node %s answers again", node)
        self._nodes.pop(node, None)


class Budget:
    """The time a request has left: each node call gets ``node_timeout``, never more than this."""

    def __init__(self, seconds: float) -> None:
        self.at = asyncio.get_running_loop().time() + seconds

    def remaining(self) -> float:
        return self.at - asyncio.get_running_loop().time()

    def part(self, share: float) -> Budget:
        """A budget ending when ``share`` of the remaining time has passed (the rest is kept for
        what comes after, such as fetching the page of hits after the counts)."""
        return Budget(max(0.0, self.remaining() * share))


class NodeClient:
    """Typed calls to the node API, each with failover over the partition's nodes."""

    def __init__(self, client: httpx.AsyncClient, token: str, settings: FrontendSettings) -> None:
        self.client = client
        self.headers = {"Authorization": f"Bearer {token}"}
        self.settings = settings
        self.health = NodeHealth(client, settings.health_probe_timeout)

    # -- one rule for every call ---------------------------------------------------------------

    async def _attempt(self, partition: Partition, node: str, send: Callable[[str], Awaitable[T]],
                       budget: Budget | None) -> T:
        """One call to one node under the time limit, every failure as ``NodeFailure``."""
        timeout = self.settings.node_timeout if budget is None else min(self.settings.node_timeout,
                                                                          budget.remaining())
        if timeout <= 0:
            raise NodeFailure(partition.id, node, "no time left for this partition", final=True)
        try:
            async with asyncio.timeout(timeout):
                result = await send(node)
        except (TimeoutError, httpx.TimeoutException):
            raise NodeFailure(partition.id, node, f"timed out after {timeout:.3g} s", timed_out=True) from None
        except httpx.TransportError as exc:
            self.health.failed(node)
            raise NodeFailure(partition.id, node, f"unreachable ({type(exc).__name__})") from exc
        self.health.succeeded(node)
        return result

    async def _try_nodes(self, partition: Partition, send: Callable[[str], Awaitable[T]],
                         budget: Budget | None = None) -> T:
        """``send(node)`` on each node of the partition in turn until one answers."""
        failures: list[NodeFailure] = []
        for index, node in enumerate(partition.nodes):
            if not await self.health.usable(node):
                failures.append(NodeFailure(partition.id, node, "not answering (skipped until it answers again)"))
                continue
            try:
                return await self._attempt(partition, node, send, budget)
            except NodeFailure as failure:
                await self._after_timeout(failure, more=index + 1 < len(partition.nodes))
                failures.append(failure)
                if failure.final:
                    break
        raise _combined(partition, failures)

    async def _after_timeout(self, failure: NodeFailure, more: bool) -> None:
        """A node timed out: if it still answers its health check, the query is what is slow, and
        the replicas are spared it (``final``); with no replica left, find out in the background."""
        if not failure.timed_out:
            return
        if more:
            failure.final = await self.health.alive(failure.node)
        else:
            self.health.check_later(failure.node)

    async def _request(self, partition: Partition, node: str, method: str, path: str, **kwargs: Any) -> bytes:
        """The body of a successful answer, read up to ``max_node_response_bytes``."""
        request = self.client.build_request(method, f"{node}{path}", headers=self.headers, **kwargs)
        response = await self.client.send(request, stream=True)
        try:
            body = await _read_capped(response, self.settings.max_node_response_bytes, partition.id, node)
        finally:
            await response.aclose()
        classify(response.status_code, body, partition.id, node)
        return body

    # -- the node API ----------------------------------------------------------------------------

    async def count(self, partition: Partition, cqp: str, budget: Budget | None = None) -> CountResponse:
        request = CountRequest(partition=partition.id, query=cqp)

        async def send(node: str) -> CountResponse:
            body = await self._request(partition, node, "POST", "/v1/count", json=_payload(request))
            answer = _parse(body, CountResponse, partition.id, node)
            _check(answer.partition == partition.id and answer.query == cqp, "answered another request",
                   partition, node)
            _check(0 <= answer.total <= partition.size, f"claims {answer.total} hits", partition, node)
            return answer

        return await self._try_nodes(partition, send, budget)

    async def hits(self, partition: Partition, request: HitsRequest, budget: Budget | None = None) -> HitsResponse:
        async def send(node: str) -> HitsResponse:
            body = await self._request(partition, node, "POST", "/v1/hits", json=_payload(request))
            answer = _parse(body, HitsResponse, partition.id, node)
            _check(answer.partition == request.partition and answer.query == request.query
                   and answer.offset == request.offset, "answered another request", partition, node)
            _check(0 <= answer.total <= partition.size, f"claims {answer.total} hits", partition, node)
            wanted = len(request.indices) if request.indices is not None else \
                max(0, min(request.limit, answer.total - request.offset))
            _check(len(answer.data) == wanted, f"sent {len(answer.data)} lines instead of {wanted}", partition, node)
            _check_lines(answer.data, partition, node)
            return answer

        return await self._try_nodes(partition, send, budget)

    async def context(self, partition: Partition, cpos: int, **params: Any) -> ContextResponse:
        async def send(node: str) -> ContextResponse:
            body = await self._request(partition, node, "GET", f"/v1/context/{partition.id}/{cpos}", params=params)
            answer = _parse(body, ContextResponse, partition.id, node)
            _check(answer.partition == partition.id and answer.cpos == cpos, "answered another request",
                   partition, node)
            _check_lines([answer.line], partition, node)
            return answer

        return await self._try_nodes(partition, send)

    async def export(self, partition: Partition, request: ExportRequest, expected: int,
                     budget: Budget | None = None) -> AsyncIterator[Line]:
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
                response = await self._attempt(partition, node, open_stream, budget)
                opened = True
                try:
                    async for line in self._lines(partition, node, response, expected - delivered, budget):
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
            raise _combined(partition, failures)

    async def _open_export(self, partition: Partition, node: str, request: ExportRequest) -> httpx.Response:
        outgoing = self.client.build_request("POST", f"{node}/v1/export", json=_payload(request), headers=self.headers)
        response = await self.client.send(outgoing, stream=True)
        if response.status_code >= 300:
            try:
                body = await _read_capped(response, self.settings.max_node_response_bytes, partition.id, node)
            finally:
                await response.aclose()
            classify(response.status_code, body, partition.id, node)
        return response

    async def _lines(self, partition: Partition, node: str, response: httpx.Response, count: int,
                     budget: Budget | None) -> AsyncIterator[Line]:
        """``count`` valid lines of an export stream; each must arrive within ``node_timeout``."""
        previous = -1
        chunks = response.aiter_bytes()
        buffer = b""
        received = 0
        while received < count:
            while b"\n" not in buffer:
                if len(buffer) > MAX_LINE_BYTES:
                    raise NodeFailure(partition.id, node, f"sent a line longer than {MAX_LINE_BYTES} bytes")
                timeout = self.settings.node_timeout if budget is None else min(self.settings.node_timeout,
                                                                                  budget.remaining())
                try:
                    async with asyncio.timeout(max(timeout, 0)):
                        chunk = await anext(chunks, b"")
                except (TimeoutError, httpx.TimeoutException):
                    raise NodeFailure(partition.id, node, "stalled in the middle of the stream",
                                      timed_out=True) from None
                except httpx.TransportError as exc:
                    raise NodeFailure(partition.id, node, f"broke off the stream ({type(exc).__name__})") from exc
                if not chunk:
                    raise NodeFailure(partition.id, node, f"ended the stream after {received} of {count} lines")
                buffer += chunk
            text, buffer = buffer.split(b"\n", 1)
            if not text.strip():
                continue
            line = _parse(text, Line, partition.id, node)
            _check_lines([line], partition, node)
            _check(line.match >= previous, "sent lines out of order", partition, node)
            previous = line.match
            received += 1
            yield line

    async def gather(self, calls: list[Callable[[], Awaitable[T]]]) -> list[T | NodeFailure]:
        """Run one request's calls as configured — in parallel, at most ``max_parallel`` at once, or
        one after the other; failures are returned, not raised. The bound is per request, so one
        client's heavy queries never hold back another's."""
        slots = asyncio.Semaphore(self.settings.max_parallel)

        async def one(call: Callable[[], Awaitable[T]]) -> T | NodeFailure:
            async with slots:
                try:
                    return await call()
                except NodeFailure as failure:
                    logger.warning("%s", failure)
                    return failure

        if self.settings.fanout == "serial":
            return [await one(call) for call in calls]
        return list(await asyncio.gather(*(one(call) for call in calls)))


def _payload(request: BaseModel) -> dict[str, Any]:
    return request.model_dump(mode="json", exclude_unset=True)


async def _read_capped(response: httpx.Response, cap: int, partition: str, node: str) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise NodeFailure(partition, node, f"answered {int(declared)} bytes, more than {cap}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            raise NodeFailure(partition, node, f"answered more than {cap} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _parse(body: bytes, model: type[M], partition: str, node: str) -> M:
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        raise NodeFailure(partition, node, "answered something that is not a valid response") from exc


def _check(condition: bool, problem: str, partition: Partition, node: str) -> None:
    if not condition:
        raise NodeFailure(partition.id, node, f"answer refused: it {problem}")


def _check_lines(lines: list[Line], partition: Partition, node: str) -> None:
    for line in lines:
        _check(0 <= line.match <= line.matchend < partition.size,
               f"gives a hit at {line.match}-{line.matchend}, outside the partition", partition, node)


def _combined(partition: Partition, failures: list[NodeFailure]) -> NodeFailure:
    """One failure naming every node that was tried."""
    if not failures:
        return NodeFailure(partition.id, "-", "no node configured")
    if len(failures) == 1:
        return failures[0]
    reasons = list(dict.fromkeys(f.reason for f in failures))
    return NodeFailure(partition.id, ", ".join(f.node for f in failures), "; ".join(reasons),
                       final=any(f.final for f in failures))
