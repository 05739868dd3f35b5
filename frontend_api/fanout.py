"""Calling the nodes: one shared ``httpx.AsyncClient``, failover across a partition's nodes, and
parallel (at most ``max_parallel`` at once) or serial fan-out.

Every failure — refused connection, timeout, an error status, or an answer that does not parse —
becomes a :class:`NodeFailure` naming the partition, the node and why; callers report it per
partition instead of dropping it.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from pydantic import ValidationError

from backend_node.schemas import CountResponse, HitsResponse, Line
from frontend_api.corpora import Partition
from frontend_api.settings import FrontendSettings

T = TypeVar("T")


@dataclass
class NodeFailure(Exception):
    partition: str
    node: str
    reason: str

    def __str__(self) -> str:
        return f"{self.partition} on {self.node}: {self.reason}"


def client_timeouts(settings: FrontendSettings) -> httpx.Timeout:
    return httpx.Timeout(settings.node_timeout, connect=settings.node_connect_timeout)


def client_limits(settings: FrontendSettings) -> httpx.Limits:
    return httpx.Limits(max_connections=max(16, 4 * settings.max_parallel), max_keepalive_connections=32)


class NodeClient:
    """Typed calls to the node API with failover."""

    def __init__(self, client: httpx.AsyncClient, token: str, settings: FrontendSettings) -> None:
        self.client = client
        self.headers = {"Authorization": f"Bearer {token}"}
        self.settings = settings
        self._slots = asyncio.Semaphore(settings.max_parallel)

    async def _post(self, partition: Partition, path: str, body: dict[str, Any], model: type[T]) -> T:
        failures: list[NodeFailure] = []
        for node in partition.nodes:
            try:
                response = await self.client.post(f"{node}{path}", json=body, headers=self.headers)
            except httpx.TimeoutException:
                failures.append(NodeFailure(partition.id, node, "timed out"))
                continue
            except httpx.TransportError as exc:
                failures.append(NodeFailure(partition.id, node, f"unreachable ({type(exc).__name__})"))
                continue
            if response.status_code >= 400:
                problem = _problem(response)
                if 400 <= response.status_code < 500 and problem.get("code") != "unknown_partition":
                    # the query itself is wrong: another node would say the same
                    raise NodeRejected(response.status_code, problem)
                failures.append(NodeFailure(partition.id, node, f"HTTP {response.status_code}: "
                                            f"{problem.get('detail', response.reason_phrase)}"))
                continue
            try:
                return model.model_validate(response.json())  # type: ignore[attr-defined, no-any-return]
            except (ValueError, ValidationError):
                failures.append(NodeFailure(partition.id, node, "answered something that is not a valid response"))
        raise _combined(partition, failures)

    async def count(self, partition: Partition, cqp: str) -> CountResponse:
        body = {"partition": partition.id, "query": cqp}
        return await self._post(partition, "/v1/count", body, CountResponse)

    async def hits(self, partition: Partition, cqp: str, **window: Any) -> HitsResponse:
        body = {"partition": partition.id, "query": cqp, **window}
        return await self._post(partition, "/v1/hits", body, HitsResponse)

    async def export(self, partition: Partition, cqp: str, **window: Any) -> AsyncIterator[Line]:
        """Lines of a range of hits, streamed from the first node that answers."""
        body = {"partition": partition.id, "query": cqp, **window}
        last: NodeFailure | None = None
        for node in partition.nodes:
            try:
                async with self.client.stream("POST", f"{node}/v1/export", json=body, headers=self.headers) as response:
                    if response.status_code >= 400:
                        await response.aread()
                        problem = _problem(response)
                        if 400 <= response.status_code < 500:
                            raise NodeRejected(response.status_code, problem)
                        last = NodeFailure(partition.id, node, f"HTTP {response.status_code}")
                        continue
                    async for text in response.aiter_lines():
                        if text:
                            try:
                                yield Line.model_validate(json.loads(text))
                            except (ValueError, ValidationError) as exc:
                                raise NodeFailure(partition.id, node, "sent a line that is not valid") from exc
                    return
            except httpx.TimeoutException:
                last = NodeFailure(partition.id, node, "timed out")
            except httpx.TransportError as exc:
                last = NodeFailure(partition.id, node, f"unreachable ({type(exc).__name__})")
        raise last or NodeFailure(partition.id, "-", "no node configured")

    async def context(self, partition: Partition, cpos: int, **params: Any) -> dict[str, Any]:
        failures = []
        for node in partition.nodes:
            try:
                response = await self.client.get(f"{node}/v1/context/{partition.id}/{cpos}", params=params,
                                                 headers=self.headers)
            except httpx.HTTPError as exc:
                failures.append(NodeFailure(partition.id, node, type(exc).__name__))
                continue
            if response.status_code < 400:
                data: dict[str, Any] = response.json()
                return data
            if response.status_code < 500:
                raise NodeRejected(response.status_code, _problem(response))
            failures.append(NodeFailure(partition.id, node, f"HTTP {response.status_code}"))
        raise _combined(partition, failures)

    async def gather(
        self, calls: list[Callable[[], Awaitable[T]]]
    ) -> list[T | NodeFailure]:
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


class NodeRejected(Exception):
    """A node refused the request itself (a 4xx problem): passed on to the user."""

    def __init__(self, status: int, problem: dict[str, Any]) -> None:
        super().__init__(problem.get("detail", ""))
        self.status = status
        self.problem = problem


def _combined(partition: Partition, failures: list[NodeFailure]) -> NodeFailure:
    """One failure naming every node that was tried."""
    if not failures:
        return NodeFailure(partition.id, "-", "no node configured")
    if len(failures) == 1:
        return failures[0]
    return NodeFailure(partition.id, ", ".join(f.node for f in failures), "; ".join(
        f"{f.node}: {f.reason}" for f in failures))


def _problem(response: httpx.Response) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {"detail": response.text[:200]}
    return body if isinstance(body, dict) else {"detail": str(body)[:200]}
