"""``POST /v1/frequency``, ``/v1/distribution``, ``/v1/cooccurrence`` and ``/v1/sortkeys``: analyses of a
query's hits on one partition, as counts that the front end adds up across partitions."""

from __future__ import annotations

import time

from fastapi import APIRouter, Request

from cowbird.core.analysis_spec import parse_span
from cowbird.core.errors import LimitExceeded
from cowbird.core.wire import (
    CooccurrenceRequest,
    CooccurrenceResponse,
    DistributionRequest,
    DistributionResponse,
    FrequencyRequest,
    FrequencyResponse,
    MarginalsRequest,
    MarginalsResponse,
    SortKeysRequest,
    SortKeysResponse,
)
from cowbird.engines.results import ArrayResultSet
from cowbird.node import compute
from cowbird.node.routes.auth import Service
from cowbird.node.service import PartitionService

router = APIRouter(prefix="/v1", tags=["analyses"])


async def _every_hit(request: FrequencyRequest | DistributionRequest | CooccurrenceRequest, service: PartitionService,
                     http: Request) -> tuple[str, ArrayResultSet]:
    """The query's canonical text and its result on the partition, every hit held."""
    http.state.log_partition = request.partition
    text, result = await service.run(
        request.partition, request.query, request.strategy, request.hard_boundary, http.is_disconnected
    )
    return text, service.every_hit(result)


@router.post("/frequency", response_model=FrequencyResponse)
async def frequency(request: FrequencyRequest, service: Service, http: Request) -> FrequencyResponse:
    """How often each value of a p-attribute occurs over a span of the hits (CQP's ``count A by ATT``)."""
    started = time.perf_counter()
    span = parse_span(request.on)
    text, held = await _every_hit(request, service, http)
    counted = await service.analyse(compute.frequency, held.corpus, held.matches, request.attribute, span,
                                    request.fold, service.settings.max_analysis_rows,
                                    service.settings.max_analysis_bytes, disconnected=http.is_disconnected)
    return FrequencyResponse(
        partition=request.partition, query=text, total=held.total, counted=counted.hits, unset=counted.unset,
        distinct=counted.distinct, truncated=counted.truncated, values=counted.values, counts=counted.counts,
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )


@router.post("/distribution", response_model=DistributionResponse)
async def distribution(request: DistributionRequest, service: Service, http: Request) -> DistributionResponse:
    """Hits per value of an s-attribute, with each value's size (CQP's ``group A match ATT``)."""
    started = time.perf_counter()
    text, held = await _every_hit(request, service, http)
    found = await service.analyse(compute.distribution, held.corpus, held.matches, request.attribute,
                                  service.settings.max_analysis_rows, disconnected=http.is_disconnected)
    return DistributionResponse(
        partition=request.partition, query=text, total=held.total, outside=found.outside,
        all_values=found.all_values, truncated=found.truncated, values=found.values, hits=found.hits,
        regions_with_hits=found.regions_with_hits, tokens=found.tokens, regions=found.regions,
        elapsed_ms=(time.perf_counter() - started) * 1000,
    )


@router.post("/cooccurrence", response_model=CooccurrenceResponse)
async def cooccurrence(request: CooccurrenceRequest, service: Service, http: Request) -> CooccurrenceResponse:
    """Co-occurrence counts in windows around the hits, with each collocate's marginal frequencies."""
    started = time.perf_counter()
    text, held = await _every_hit(request, service, http)
    compute.check_attributes(held.corpus, request.attribute, request.within)
    found = await service.analyse(compute.cooccurrence, held.corpus, held.matches, request.attribute,
                                  request.left, request.right, request.within, service.settings.max_analysis_rows,
                                  disconnected=http.is_disconnected)
    return CooccurrenceResponse(
        partition=request.partition, query=text, total=held.total, context_tokens=found.context_tokens,
        node_tokens=found.node_tokens, size=found.size, truncated=found.truncated, values=found.values, f=found.f,
        marginal=found.marginal, in_nodes=found.in_nodes, elapsed_ms=(time.perf_counter() - started) * 1000,
    )


@router.post("/marginals", response_model=MarginalsResponse)
async def marginals(request: MarginalsRequest, service: Service, http: Request) -> MarginalsResponse:
    """Frequencies of values of a p-attribute in the partition: collocates' marginals where they do
    not co-occur (their sum over partitions is the corpus's frequency)."""
    http.state.log_partition = request.partition
    corpus = service.engine(request.partition).store
    frequencies = await service.in_thread(compute.marginals, corpus, request.attribute, request.values)
    return MarginalsResponse(partition=request.partition, frequencies=frequencies)


@router.post("/sortkeys", response_model=SortKeysResponse)
async def sortkeys(request: SortKeysRequest, service: Service, http: Request) -> SortKeysResponse:
    """The sort keys of the hits at sorted ranks ``offset`` .. ``offset + limit``: what the front end
    needs to merge partitions' sorted hits and page at any offset."""
    started = time.perf_counter()
    http.state.log_partition = request.partition
    if request.limit > service.settings.max_sort_keys:
        most = service.settings.max_sort_keys
        raise LimitExceeded(f"limit {request.limit} is more than this node returns at once ({most})")
    text, result = await service.run(
        request.partition, request.query, request.strategy, request.hard_boundary, http.is_disconnected
    )
    order = await service.order(result, request.sort, http.is_disconnected)
    ranks = list(range(request.offset, min(result.total, request.offset + request.limit)))
    keys = await service.in_thread(order.keys, ranks)
    return SortKeysResponse(partition=request.partition, query=text, total=result.total, offset=request.offset,
                            keys=keys, elapsed_ms=(time.perf_counter() - started) * 1000)
