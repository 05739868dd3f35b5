"""Calling the nodes: one shared ``httpx.AsyncClient``, failover across a partition's nodes, and
parallel (at most ``max_parallel`` at once) or serial fan-out.

Every call goes through :meth:`NodeClient._try_nodes`, which tries a partition's nodes in order
under one rule (:func:`classify`): a failure that another node may not have — refused connection,
timeout, a 5xx, a redirect, a node-side refusal such as a wrong node token or an unknown
partition, an answer that does not parse — moves on to the next node and, if all fail, becomes a
:class:`NodeFailure` naming the partition, the nodes and why, which callers report per partition.
A refusal of the request itself (a 4xx problem such as ``query_syntax``) would be the same on
every node: it is passed to the client as :class:`RejectedByNode`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
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

NODE_SIDE_CODES = frozenset({"unauthorized", "unknown_partition", "too_large", "not_found", "http_error"})
"""Codes of 4xx answers that say something about the node, not the request: try the next node."""


@dataclass
class NodeFailure(Exception):
    """A partition could not be served: by which node(s), and why."""

    partition: str
    node: str
    reason: str

    def __str__(self) -> str:
        return f"{self.partition} on {self.node}: {self.reason}"


def client_timeouts(settings: FrontendSettings) -> httpx.Timeout:
    return httpx.Timeout(settings.node_timeout, connect=settings.node_connect_timeout)


def client_limits(settings: FrontendSettings) -> httpx.Limits:
    return httpx.Limits(max_connections=max(16, 4 * settings.max_parallel), max_keepalive_connections=32)


def _problem(response: httpx.Response) -> Problem | None:
    try:
        return Problem.model_validate(response.json())
    except (ValueError, ValidationError):
        return None


def _detail(response: httpx.Response, problem: Problem | None) -> str:
    """What a failed answer says about itself, in a few words."""
    if problem is not None:
        return problem.detail
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("detail"), str):
        return str(body["detail"])[:200]
    return response.reason_phrase or "no detail"


def classify(response: httpx.Response, partition: str, node: str) -> None:
    """The one rule for node answers: return for a success, raise ``NodeFailure`` for a failure of the
    node (try the next one), ``RejectedByNode`` for a refusal of the request itself."""
    status = response.status_code
    if status < 300:
        return
    problem = _problem(response)
    if problem is not None and 400 <= status < 500 and status not in (408, 429) and problem.code not in NODE_SIDE_CODES:
        extra = problem.model_dump(exclude_none=True, exclude={"type", "title", "status", "detail", "code"})
        raise RejectedByNode(status, problem.code, problem.title, problem.detail, **extra)
    raise NodeFailure(partition, node, f"HTTP {status}: {_detail(response, problem)}")


class NodeClient:
    """Typed calls to the node API, each with failover over the partition's nodes."""

    def __init__(self, client: httpx.AsyncClient, token: str, settings: FrontendSettings) -> None:
        self.client = client
        self.headers = {"Authorization": f"Bearer {token}"}
        self.settings = settings
        self._slots = asyncio.Semaphore(settings.max_parallel)

    async def _try_nodes(self, partition: Partition, send: Callable[[str], Awaitable[T]]) -> T:
        """``send(node)`` on each node of the partition in turn until one answers."""
        failures: list[NodeFailure] = []
        for node in partition.nodes:
            try:
                return await send(node)
            except httpx.TimeoutException:
                failures.append(NodeFailure(partition.id, node, "timed out"))
            except httpx.TransportError as exc:
                failures.append(NodeFailure(partition.id, node, f"unreachable ({type(exc).__name__})"))
            except NodeFailure as failure:
                failures.append(failure)
        raise _combined(partition, failures)

    async def _post(self, partition: Partition, path: str, body: BaseModel, model: type[M]) -> M:
        payload = body.model_dump(mode="json", exclude_unset=True)

        async def send(node: str) -> M:
            response = await self.client.post(f"{node}{path}", json=payload, headers=self.headers)
            classify(response, partition.id, node)
            return _parse(response, model, partition.id, node)

        return await self._try_nodes(partition, send)

    async def count(self, partition: Partition, cqp: str) -> CountResponse:
        return await self._post(partition, "/v1/count", CountRequest(partition=partition.id, query=cqp),
                                CountResponse)

    async def hits(self, partition: Partition, request: HitsRequest) -> HitsResponse:
        return await self._post(partition, "/v1/hits", request, HitsResponse)

    async def export(self, partition: Partition, request: ExportRequest) -> AsyncIterator[Line]:
        """Lines of a range of hits, streamed from the first node that answers."""
        payload = request.model_dump(mode="json", exclude_unset=True)

        async def open_stream(node: str) -> tuple[str, httpx.Response]:
            outgoing = self.client.build_request("POST", f"{node}/v1/export", json=payload, headers=self.headers)
            response = await self.client.send(outgoing, stream=True)
            try:
                if response.status_code >= 300:
                    await response.aread()
                classify(response, partition.id, node)
            except BaseException:
                await response.aclose()
                raise
            return node, response

        node, response = await self._try_nodes(partition, open_stream)
        try:
            async for text in response.aiter_lines():
                if text:
                    try:
                        yield Line.model_validate(json.loads(text))
                    except (ValueError, ValidationError) as exc:
                        raise NodeFailure(partition.id, node, "sent a line that is not valid") from exc
        finally:
            await response.aclose()

    async def context(self, partition: Partition, cpos: int, **params: Any) -> ContextResponse:
        async def send(node: str) -> ContextResponse:
            response = await self.client.get(f"{node}/v1/context/{partition.id}/{cpos}", params=params,
                                             headers=self.headers)
            classify(response, partition.id, node)
            return _parse(response, ContextResponse, partition.id, node)

        return await self._try_nodes(partition, send)

    async def gather(self, calls: list[Callable[[], Awaitable[T]]]) -> list[T | NodeFailure]:
        """Run calls as configured, in parallel (bounded) or one after the other; failures are
        returned, not raised."""

        async def one(call: Callable[[], Awaitable[T]]) -> T | NodeFailure:
            async with self._slots:
                try:
                    return await call()
                except NodeFailure as failure:
                    return failure

        if self.settings.fanout == "serial":
            return [await one(call) for call in calls]
        return list(await asyncio.gather(*(one(call) for call in calls)))


def _parse(response: httpx.Response, model: type[M], partition: str, node: str) -> M:
    try:
        return model.model_validate(response.json())
    except (ValueError, ValidationError) as exc:
        raise NodeFailure(partition, node, "answered something that is not a valid response") from exc


def _combined(partition: Partition, failures: list[NodeFailure]) -> NodeFailure:
    """One failure naming every node that was tried."""
    if not failures:
        return NodeFailure(partition.id, "-", "no node configured")
    if len(failures) == 1:
        return failures[0]
    return NodeFailure(partition.id, ", ".join(f.node for f in failures), "; ".join(
        f"{f.node}: {f.reason}" for f in failures))
