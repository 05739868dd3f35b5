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
from typing import Any, TypeVar

import httpx

from cowbird.core.metrics import Metrics
from cowbird.core.off_loop import OFF_LOOP_BYTES, off_loop
from cowbird.core.search import A, AnalysisRequest, PartitionFailure, TimeLimit
from cowbird.core.wire import (
    ContextResponse,
    CooccurrenceResponse,
    CountRequest,
    CountResponse,
    DispersionResponse,
    DistributionResponse,
    EstimateResponse,
    ExportRequest,
    FirstRequest,
    FrequencyResponse,
    HitsRequest,
    HitsResponse,
    Line,
    MarginalsRequest,
    MarginalsResponse,
    NgramRequest,
    NgramResponse,
    SortKeysRequest,
    SortKeysResponse,
    SubcorpusRequest,
    SubcorpusResponse,
)
from cowbird.frontend.corpora import Partition
from cowbird.frontend.failover import Failover
from cowbird.frontend.fair_use import spent
from cowbird.frontend.ndjson import stream_lines
from cowbird.frontend.node_answers import (
    NodeFailure,
    check,
    check_cooccurrence,
    check_distribution,
    check_frequency,
    check_in_order,
    check_lines,
    check_sort_keys,
    combined,
    parse_answer,
    payload,
)
from cowbird.frontend.node_health import NodeHealth
from cowbird.frontend.pools import IDLE_SECONDS, NodePools
from cowbird.frontend.priority import stretched
from cowbird.frontend.settings import FrontendSettings

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

    # -- what a search needs besides the calls (cowbird.core.search.Partitions) ------------------

    @property
    def time_limit(self) -> float:
        """Seconds a preview or an analysis may take across all nodes (``deadline``; longer for
        background work)."""
        return stretched(self.settings.limits.deadline)

    @property
    def export_time_limit(self) -> float:
        return self.settings.limits.export_deadline

    @property
    def serial(self) -> bool:
        """Whether a search asks the partitions one after the other (``[nodes] fanout = "serial"``)."""
        return self.settings.nodes.fanout == "serial"

    # -- the node API ----------------------------------------------------------------------------

    async def count(self, partition: Partition, request: CountRequest, limit: TimeLimit | None = None) -> CountResponse:
        async def send(node: str) -> CountResponse:
            body = await self.failover.request(partition, node, "POST", "/v1/count", json=payload(request))
            answer = parse_answer(body, CountResponse, partition.id, node)
            check(answer.partition == partition.id and answer.query == request.query, "answered another request",
                   partition, node)
            check(0 <= answer.total <= partition.size, f"claims {answer.total} hits", partition, node)
            return answer

        return await self.failover.try_nodes(partition, send, limit)

    async def estimate(self, partition: Partition, request: CountRequest,
                       limit: TimeLimit | None = None) -> EstimateResponse:
        async def send(node: str) -> EstimateResponse:
            body = await self.failover.request(partition, node, "POST", "/v1/estimate", json=payload(request))
            answer = parse_answer(body, EstimateResponse, partition.id, node)
            check(answer.partition == partition.id and answer.query == request.query, "answered another request",
                   partition, node)
            check(answer.hits is None or 0 <= answer.hits <= partition.size, f"estimates {answer.hits} hits",
                  partition, node)
            return answer

        return await self.failover.try_nodes(partition, send, limit)

    async def hits(self, partition: Partition, request: HitsRequest, limit: TimeLimit | None = None) -> HitsResponse:
        return await self._page(partition, "/v1/hits", request, limit)

    async def first(self, partition: Partition, request: FirstRequest, limit: TimeLimit | None = None) -> HitsResponse:
        """The first hits before the rest is counted (``POST /v1/first``; ``exact`` says whether the total is)."""
        return await self._page(partition, "/v1/first", request, limit)

    async def _page(self, partition: Partition, path: str, request: FirstRequest,
                    limit: TimeLimit | None) -> HitsResponse:
        async def send(node: str) -> HitsResponse:
            body = await self.failover.request(partition, node, "POST", path, json=payload(request))
            answer = parse_answer(body, HitsResponse, partition.id, node)
            check(answer.partition == request.partition and answer.query == request.query
                   and answer.offset == request.offset, "answered another request", partition, node)
            check(0 <= answer.total <= partition.size, f"claims {answer.total} hits", partition, node)
            indices = request.indices if isinstance(request, HitsRequest) else None
            wanted = len(indices) if indices is not None else max(0, min(request.limit, answer.total - request.offset))
            check(len(answer.data) == wanted, f"sent {len(answer.data)} lines instead of {wanted}", partition, node)
            check_lines(answer.data, partition, node)
            if not isinstance(request, HitsRequest) or request.sort is None:  # corpus order, each once
                check_in_order(answer.data, partition, node)
            return answer

        return await self.failover.try_nodes(partition, send, limit)

    async def analysis(self, partition: Partition, path: str, request: AnalysisRequest, answer_type: type[A],
                       limit: TimeLimit | None = None) -> A:
        """An analysis of the hits on one partition (``/v1/frequency``, ``/v1/distribution``,
        ``/v1/cooccurrence``, ``/v1/sortkeys``; ``/v1/ngrams``: a word list), checked against the request
        and the manifest."""

        def checked(body: bytes, node: str) -> A:
            answer = parse_answer(body, answer_type, partition.id, node)
            if isinstance(answer, NgramResponse) and isinstance(request, NgramRequest):
                rows = [tuple(t) for t in answer.row_tokens]
                check(answer.partition == partition.id and len(answer.counts) == len(request.values)
                      and 0 <= answer.ngrams <= answer.tokens <= partition.size
                      and len(rows) <= answer.types <= answer.ngrams
                      and len(rows) == len(answer.row_counts) and len(set(rows)) == len(rows)
                      and all(len(t) == request.n for t in rows)
                      and all(0 < c <= answer.ngrams for c in answer.row_counts)
                      and sum(answer.row_counts) <= answer.ngrams
                      and all(answer.row_counts[i] >= answer.row_counts[i + 1] for i in range(len(rows) - 1))
                      and all(0 <= c <= answer.ngrams for c in answer.counts), "gives an impossible word list",
                      partition, node)
                return answer
            if isinstance(answer, SubcorpusResponse) and isinstance(request, SubcorpusRequest):
                check(answer.partition == partition.id and 0 <= answer.tokens <= partition.size
                      and len(answer.values) == len(answer.value_tokens) == len(answer.value_regions)
                      and len(set(answer.values)) == len(answer.values)
                      and all(0 < t <= answer.tokens for t in answer.value_tokens)
                      and sum(answer.value_tokens) <= answer.tokens  # one attribute's regions do not overlap
                      and all(1 <= r <= t for r, t in zip(answer.value_regions, answer.value_tokens, strict=True))
                      and (answer.texts is None) == (answer.all_texts is None) == (request.texts is None)
                      and 0 <= (answer.texts or 0) <= min(answer.tokens, answer.all_texts or 0)
                      and (answer.all_texts or 0) <= partition.size,
                      "gives an impossible subcorpus size", partition, node)
                return answer
            assert not isinstance(answer, NgramResponse | SubcorpusResponse)
            assert not isinstance(request, NgramRequest | SubcorpusRequest)
            check(answer.partition == partition.id and answer.query == request.query, "answered another request",
                   partition, node)
            check(0 <= answer.total <= partition.size, f"claims {answer.total} hits", partition, node)
            if isinstance(answer, FrequencyResponse):
                check_frequency(answer, partition, node)
            elif isinstance(answer, DistributionResponse):
                check_distribution(answer, partition, node)
            elif isinstance(answer, CooccurrenceResponse):
                check_cooccurrence(answer, partition, node)
            elif isinstance(answer, DispersionResponse):
                check(len(answer.bins) == getattr(request, "bins", -1) and sum(answer.bins) == answer.total
                      and all(b >= 0 for b in answer.bins)
                      and 0 <= answer.parts_with_hits <= min(answer.parts, answer.total)
                      and 0 <= answer.parts <= partition.size and 0 <= answer.smallest_part <= partition.size
                      and 0 <= answer.dp_sum <= 2.0 + 1e-9,  # shares of the corpus: at most 1 + 1
                      "gives an impossible dispersion", partition, node)
            elif isinstance(request, SortKeysRequest) and isinstance(answer, SortKeysResponse):
                check_sort_keys(answer, request, tuple(d == "desc" for d in request.sort.direction.split(",")),
                                partition, node)
            return answer

        async def send(node: str) -> A:
            body = await self.failover.request(partition, node, "POST", path, json=payload(request))
            return await off_loop(checked, body, node) if len(body) > OFF_LOOP_BYTES else checked(body, node)

        return await self.failover.try_nodes(partition, send, limit)

    async def marginals(self, partition: Partition, request: MarginalsRequest,
                        limit: TimeLimit | None = None) -> MarginalsResponse:
        async def send(node: str) -> MarginalsResponse:
            body = await self.failover.request(partition, node, "POST", "/v1/marginals", json=payload(request))
            answer = parse_answer(body, MarginalsResponse, partition.id, node)
            check(answer.partition == partition.id and len(answer.frequencies) == len(request.values),
                   "answered another request", partition, node)
            check(all(0 <= f <= partition.size for f in answer.frequencies), "claims impossible frequencies",
                   partition, node)
            return answer

        return await self.failover.try_nodes(partition, send, limit)

    async def context(self, partition: Partition, cpos: int, **params: Any) -> ContextResponse:
        params = {k: v for k, v in params.items() if v is not None}  # (httpx sends None as an empty value)

        async def send(node: str) -> ContextResponse:
            path = f"/v1/context/{partition.id}/{cpos}"
            body = await self.failover.request(partition, node, "GET", path, params=params)
            answer = parse_answer(body, ContextResponse, partition.id, node)
            check(answer.partition == partition.id and answer.cpos == cpos, "answered another request",
                   partition, node)
            check_lines([answer.line], partition, node)
            return answer

        return await self.failover.try_nodes(partition, send)

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
            if not await self.failover.health.usable(node):
                failures.append(NodeFailure(partition.id, node, "not answering (skipped until it answers again)"))
                continue
            rest = request.model_copy(update={"offset": request.offset + delivered, "limit": expected - delivered})

            async def open_stream(node: str, rest: ExportRequest = rest) -> httpx.Response:
                return await self._open_export(partition, node, rest)

            opened = False
            started = time.perf_counter()
            try:
                response = await self.failover.attempt(partition, node, open_stream, limit,
                                                       replica=node != partition.nodes[-1])
                opened = True
                try:
                    lines = stream_lines(self.failover, partition, node, response, expected - delivered, limit,
                                         in_corpus_order=request.sort is None)
                    async for line in lines:
                        delivered += 1
                        yield line
                finally:
                    await response.aclose()
                    spent((time.perf_counter() - started) * 1000)  # the node's time: its stream was open
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

    async def _open_export(self, partition: Partition, node: str, request: ExportRequest) -> httpx.Response:
        response = await self.failover.send(node, "POST", "/v1/export", json=payload(request))
        if response.status_code >= 300:
            await self.failover.body(partition, node, response)  # raises: the node refused or failed
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


