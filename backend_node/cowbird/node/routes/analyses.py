"""``POST /v1/frequency``, ``/v1/distribution``, ``/v1/cooccurrence``, ``/v1/marginals``,
``/v1/sortkeys``, ``/v1/ngrams`` and ``/v1/subcorpus``: analyses of a query's hits (or of the partition's
tokens: word lists, a subcorpus's size) on one partition, as counts that the front end adds up across
partitions — adapters over :class:`cowbird.node.api.NodeApi`."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel

from cowbird.core.wire import (
    CooccurrenceRequest,
    CooccurrenceResponse,
    DispersionRequest,
    DispersionResponse,
    DistributionRequest,
    DistributionResponse,
    FrequencyRequest,
    FrequencyResponse,
    MarginalsRequest,
    MarginalsResponse,
    NgramRequest,
    NgramResponse,
    SortKeysRequest,
    SortKeysResponse,
    SubcorpusRequest,
    SubcorpusResponse,
)
from cowbird.node.api import NodeApi
from cowbird.node.routes.auth import Service

router = APIRouter(prefix="/v1", tags=["analyses"])


async def _json(service: Service, answer: BaseModel) -> Response:
    """The answer as JSON, written in a worker thread (a niced one for background work): a table of
    100,000 rows takes tens of milliseconds to write, which the event loop must not spend."""
    return Response(await service.in_thread(answer.model_dump_json), media_type="application/json")


@router.post("/frequency", response_model=FrequencyResponse)
async def frequency(request: FrequencyRequest, service: Service, http: Request) -> Response:
    """How often each value of a p-attribute occurs over a span of the hits (CQP's ``count A by ATT``)."""
    http.state.log_partition = request.partition
    return await _json(service, await NodeApi(service).frequency(request, http.is_disconnected))


@router.post("/dispersion", response_model=DispersionResponse)
async def dispersion(request: DispersionRequest, service: Service, http: Request) -> Response:
    """This partition's part of Gries' DP over the regions of an s-attribute, and its hits in equal
    stretches of the corpus."""
    http.state.log_partition = request.partition
    return await _json(service, await NodeApi(service).dispersion(request, http.is_disconnected))


@router.post("/distribution", response_model=DistributionResponse)
async def distribution(request: DistributionRequest, service: Service, http: Request) -> Response:
    """Hits per value of an s-attribute, with each value's size (CQP's ``group A match ATT``)."""
    http.state.log_partition = request.partition
    return await _json(service, await NodeApi(service).distribution(request, http.is_disconnected))


@router.post("/cooccurrence", response_model=CooccurrenceResponse)
async def cooccurrence(request: CooccurrenceRequest, service: Service, http: Request) -> Response:
    """Co-occurrence counts in windows around the hits, with each collocate's marginal frequencies."""
    http.state.log_partition = request.partition
    return await _json(service, await NodeApi(service).cooccurrence(request, http.is_disconnected))


@router.post("/marginals", response_model=MarginalsResponse)
async def marginals(request: MarginalsRequest, service: Service, http: Request) -> Response:
    """Frequencies of values of a p-attribute in the partition: collocates' marginals where they do
    not co-occur (their sum over partitions is the corpus's frequency)."""
    http.state.log_partition = request.partition
    return await _json(service, await NodeApi(service).marginals(request))


@router.post("/sortkeys", response_model=SortKeysResponse)
async def sortkeys(request: SortKeysRequest, service: Service, http: Request) -> Response:
    """The sort keys of the hits at sorted ranks ``offset`` .. ``offset + limit``: what the front end
    needs to merge partitions' sorted hits and page at any offset."""
    http.state.log_partition = request.partition
    return await _json(service, await NodeApi(service).sortkeys(request, http.is_disconnected))


@router.post("/ngrams", response_model=NgramResponse)
async def ngrams(request: NgramRequest, service: Service, http: Request) -> Response:
    """A word list or n-gram list of the partition or of its part in a subcorpus (counted once, kept for
    the requests that follow): the frequent rows, the top rows, and the counts of given n-grams."""
    http.state.log_partition = request.partition
    return await _json(service, await NodeApi(service).ngrams(request, http.is_disconnected))


@router.post("/subcorpus", response_model=SubcorpusResponse)
async def subcorpus(request: SubcorpusRequest, service: Service, http: Request) -> Response:
    """The partition's part in a subcorpus (the regions its filters choose): its tokens and texts, and an
    s-attribute's values in it with their tokens and regions (the subcorpus picker's list)."""
    http.state.log_partition = request.partition
    return await _json(service, await NodeApi(service).subcorpus(request))
