"""The node API as typed calls: one per route, a request model in, a response model out.

The HTTP routes (``cowbird.node.routes``) are adapters over :class:`NodeApi`: they add the request
log, the client's disconnection and the NDJSON stream. ``cowbird.node.local.LocalPartitions``
calls the same methods in-process, so that ``cowbird query`` over a manifest answers exactly as
the nodes do.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from cowbird.core.analysis_spec import parse_breakdown
from cowbird.core.declared import analyses, analysis_named
from cowbird.core.errors import BadParameter, LimitExceeded, UnknownAttribute
from cowbird.core.operations import (
    COOCCURRENCE,
    COUNT,
    DISPERSION,
    DISTRIBUTION,
    ESTIMATE,
    FIRST,
    FREQUENCY,
    HITS,
    MARGINALS,
    NGRAMS,
    SKETCH,
    SORT_KEYS,
    SUBCORPUS,
    Operation,
    Rq,
    Rs,
)
from cowbird.core.wire import (
    EXPORT_BATCH_LINES,
    CooccurrenceRequest,
    CooccurrenceResponse,
    CountRequest,
    CountResponse,
    DispersionRequest,
    DispersionResponse,
    DistributionRequest,
    DistributionResponse,
    EstimateResponse,
    ExportRequest,
    FirstRequest,
    FrequencyRequest,
    FrequencyResponse,
    HitsRequest,
    HitsResponse,
    InSubcorpus,
    Line,
    MarginalsRequest,
    MarginalsResponse,
    NgramRequest,
    NgramResponse,
    SketchRequest,
    SketchResponse,
    SketchRows,
    SortKeysRequest,
    SortKeysResponse,
    SortValue,
    SubcorpusRequest,
    SubcorpusResponse,
)
from cowbird.engines import Context, KwicLine, ResultSet
from cowbird.engines.analyses import (
    cooccurrence,
    dispersion,
    distribution,
    frequency,
    marginals,
    ngrams,
    sketches,
    subcorpus,
)
from cowbird.engines.analyses.declared import computation
from cowbird.engines.analyses.sort_order import SortOrder
from cowbird.engines.analyses.subcorpus import chosen
from cowbird.engines.results import ArrayResultSet
from cowbird.node.scheduler import NOBODY, Asker
from cowbird.node.service import PartitionService
from cowbird.store.regions import check_attributes

Handler = Callable[["NodeApi", Rq], Awaitable[Rs]]
"""How the node answers one operation of the table (``cowbird.core.operations``)."""

_HANDLERS: dict[str, Callable[..., Awaitable[BaseModel]]] = {}


def answers(operation: Operation[Rq, Rs]) -> Callable[[Handler[Rq, Rs]], Handler[Rq, Rs]]:
    """Declare the method that answers ``operation`` (its request and response types must be the
    operation's: mypy checks the method against them)."""

    def register(method: Handler[Rq, Rs]) -> Handler[Rq, Rs]:
        assert operation.name not in _HANDLERS, f"{operation.name} is answered twice"
        _HANDLERS[operation.name] = method
        return method

    return register


def answered() -> set[str]:
    """The names of the operations the node answers (every one of the table and every declared
    analysis with its computation: tests/node check it)."""
    declared = analyses()
    for analysis in declared:
        computation(analysis)  # (refused when its module computes nothing for it)
    return set(_HANDLERS) | {analysis.name for analysis in declared}


def line_model(line: KwicLine, sort_key: SortValue | None = None) -> Line:
    return Line(
        match=line.hit.match, matchend=line.hit.matchend, target=line.hit.target, keyword_position=line.hit.keyword,
        left=line.left, keyword=line.keyword, right=line.right, meta=line.meta, sort_key=sort_key,
        breaks=line.breaks,
    )


def _lines_at(
    result: ResultSet, indices: list[int], context: Context, show: list[str], meta: list[str]
) -> list[KwicLine]:
    return [line for i in indices if 0 <= i < result.total for line in result.kwic(i, 1, context, show, meta)]


def _filters(request: InSubcorpus) -> list[tuple[str, bool, str]]:
    """The subcorpus a request counts in, as the analyses take it (none: the whole partition)."""
    return [(f.attribute, f.negated, f.pattern) for f in request.filters]


def _elapsed(started: float) -> float:
    return (time.perf_counter() - started) * 1000


@dataclass(frozen=True)
class Export:
    """An export about to stream: the canonical query, the partition's total, how many lines come,
    and the lines, a batch at a time (checked before the first: errors still come as problems)."""

    query: str
    total: int
    lines: int
    batches: AsyncIterator[list[Line]]


class NodeApi:
    """What a node answers, over its :class:`PartitionService`, to one asker (a request's priority,
    start and connection: ``scheduler.Asker``)."""

    def __init__(self, service: PartitionService, asker: Asker = NOBODY) -> None:
        self.service = service
        self.asker = asker

    async def answer(self, operation: Operation[Rq, Rs], request: Rq) -> Rs:
        """The node's answer to one operation of the table (the routes' and ``LocalPartitions``' one way in)."""
        handler = _HANDLERS.get(operation.name)
        answer = await (handler(self, request) if handler is not None else self._declared(operation, request))
        assert isinstance(answer, operation.response)
        return answer

    async def _declared(self, operation: Operation[Any, Any], request: Any) -> BaseModel:
        """A declared analysis (``cowbird.core.declared``): its computation (``engines.analyses.<name>``)
        on the partition's store and the hits, every hit held, as every analysis is run."""
        analysis = analysis_named(operation.name)
        if analysis is None:
            raise KeyError(f"the node answers no operation {operation.name!r}")
        started = time.perf_counter()
        text, held = await self._every_hit(request)
        own = analysis.parameters.model_validate(request.model_dump(include=set(analysis.parameters.model_fields)))
        computed = await self.service.analyse(self.asker, computation(analysis), held.corpus, held.matches, own,
                                              self.service.settings.max_analysis_rows)
        answer: BaseModel = operation.response(partition=request.partition, query=text, total=held.total,
                                               elapsed_ms=_elapsed(started), **dict(computed))
        return answer

    async def _run(self, request: CountRequest | HitsRequest | FrequencyRequest | DistributionRequest
                   | CooccurrenceRequest | SortKeysRequest | DispersionRequest) -> tuple[str, ResultSet]:
        return await self.service.run(request.partition, request.query, request.strategy, request.hard_boundary,
                                      self.asker)

    async def _sorted(self, order: SortOrder, ranks: list[int], context: Context, show: list[str],
                      meta: list[str]) -> list[Line]:
        """The lines at sorted ranks, each with its sort key (the front end merges partitions on it)."""
        lines = await self.service.sorted_lines(self.asker, order, ranks, context, show, meta)
        keys = await self.service.in_thread(self.asker, order.keys, ranks)
        return [line_model(line, key) for line, key in zip(lines, keys, strict=True)]

    @answers(COUNT)
    async def count(self, request: CountRequest) -> CountResponse:
        started = time.perf_counter()
        text, result = await self._run(request)
        return CountResponse(partition=request.partition, query=text, total=result.total, elapsed_ms=_elapsed(started))

    @answers(ESTIMATE)
    async def estimate(self, request: CountRequest) -> EstimateResponse:
        started = time.perf_counter()
        text, found = await self.service.estimate(request.partition, request.query, request.strategy,
                                                  request.hard_boundary, self.asker)
        return EstimateResponse(partition=request.partition, query=text, hits=found.hits, exact=found.exact,
                                seconds=found.seconds, candidates=found.candidates, sampled=found.sampled,
                                elapsed_ms=_elapsed(started))

    @answers(FIRST)
    async def first(self, request: FirstRequest) -> HitsResponse:
        """The hits ``offset`` .. ``offset + limit`` as soon as they are found, before the rest is counted
        (``total`` is then a lower bound: ``exact`` says which)."""
        started = time.perf_counter()
        service = self.service
        context = Context(request.context.tokens, request.context.region, tuple(request.context.marks))
        service.check_request(request.limit, service.settings.max_hits_per_request, context)
        text, result, exact = await service.first(request.partition, request.query, request.strategy,
                                                  request.hard_boundary, request.offset + request.limit, self.asker)
        limit = max(0, min(request.limit, result.total - request.offset))
        lines = await service.lines(self.asker, result, request.offset, limit, context, request.show,
                                    request.meta) if limit else []
        return HitsResponse(partition=request.partition, query=text, total=result.total, offset=request.offset,
                            data=[line_model(line) for line in lines], elapsed_ms=_elapsed(started), exact=exact)

    @answers(HITS)
    async def hits(self, request: HitsRequest) -> HitsResponse:
        started = time.perf_counter()
        service = self.service
        context = Context(request.context.tokens, request.context.region, tuple(request.context.marks))
        wanted = len(request.indices) if request.indices is not None else request.limit
        service.check_request(wanted, service.settings.max_hits_per_request, context)
        text, result = await self._run(request)
        if request.sort is not None:
            order = await service.order(result, request.sort, self.asker)
            ranks = [i for i in request.indices if 0 <= i < result.total] if request.indices is not None else \
                list(range(request.offset, min(result.total, request.offset + request.limit)))
            data = await self._sorted(order, ranks, context, request.show, request.meta)
        else:
            if request.indices is not None:
                lines = await service.in_thread(self.asker, _lines_at, result, request.indices, context, request.show,
                                                request.meta)
            else:
                lines = await service.lines(self.asker, result, request.offset, request.limit, context, request.show,
                                            request.meta)
            data = [line_model(line) for line in lines]
        return HitsResponse(partition=request.partition, query=text, total=result.total, offset=request.offset,
                            data=data, elapsed_ms=_elapsed(started))

    async def export(self, request: ExportRequest) -> Export:
        """The lines of a range of hits, built a batch at a time as they are streamed."""
        service = self.service
        context = Context(request.context.tokens, request.context.region, tuple(request.context.marks))
        service.check_request(request.limit, service.settings.max_export_hits, context)
        text, result = await self._run(request)
        stop = min(result.total, request.offset + request.limit)
        if stop > result.held:  # refuse now, while the answer can still be a problem+json
            result.hits(stop - 1, 1)
        order = None if request.sort is None else await service.order(result, request.sort, self.asker)
        # check attributes before the stream starts, so that errors are still problem+json
        await service.lines(self.asker, result, request.offset, min(1, request.limit), context, request.show,
                            request.meta)

        async def batches() -> AsyncIterator[list[Line]]:
            for start in range(request.offset, stop, EXPORT_BATCH_LINES):
                size = min(EXPORT_BATCH_LINES, stop - start)
                if order is not None:
                    yield await self._sorted(order, list(range(start, start + size)), context, request.show,
                                             request.meta)
                else:
                    lines = await service.lines(self.asker, result, start, size, context, request.show, request.meta)
                    yield [line_model(line) for line in lines]

        return Export(text, result.total, max(0, stop - request.offset), batches())

    async def _every_hit(self, request: FrequencyRequest | DistributionRequest | CooccurrenceRequest
                         | DispersionRequest) -> tuple[str, ArrayResultSet]:
        """The query's canonical text and its result on the partition, every hit held."""
        text, result = await self._run(request)
        return text, self.service.every_hit(result)

    @answers(FREQUENCY)
    async def frequency(self, request: FrequencyRequest) -> FrequencyResponse:
        """How often each value of a p-attribute occurs over a span of the hits (CQP's ``count A by ATT``)."""
        started = time.perf_counter()
        levels = parse_breakdown(request.attribute, request.on)
        text, held = await self._every_hit(request)
        settings = self.service.settings
        counted = await self.service.analyse(self.asker, frequency.frequency_levels, held.corpus, held.matches,
                                             levels, request.fold, settings.max_analysis_rows,
                                             settings.max_analysis_bytes)
        return FrequencyResponse(
            partition=request.partition, query=text, total=held.total, counted=counted.hits, unset=counted.unset,
            distinct=counted.distinct, truncated=counted.truncated, values=counted.values, counts=counted.counts,
            elapsed_ms=_elapsed(started),
        )

    @answers(DISPERSION)
    async def dispersion(self, request: DispersionRequest) -> DispersionResponse:
        """This partition's part of where the hits fall: Gries' DP over the regions of an s-attribute, and
        the hits in equal stretches of the corpus."""
        started = time.perf_counter()
        text, held = await self._every_hit(request)
        found = await self.service.analyse(self.asker, dispersion.dispersion, held.corpus, held.matches,
                                           request.attribute, request.hits, request.corpus_size, request.base,
                                           request.bins, _filters(request), request.tokens)
        return DispersionResponse(
            partition=request.partition, query=text, total=held.total, parts=found.parts,
            parts_with_hits=found.parts_with_hits, smallest_part=found.smallest_part, dp_sum=found.dp_sum,
            bins=found.bins, elapsed_ms=_elapsed(started))

    @answers(DISTRIBUTION)
    async def distribution(self, request: DistributionRequest) -> DistributionResponse:
        """Hits per value of an s-attribute, with each value's size (CQP's ``group A match ATT``)."""
        started = time.perf_counter()
        text, held = await self._every_hit(request)
        found = await self.service.analyse(self.asker, distribution.distribution, held.corpus, held.matches,
                                           request.attribute, self.service.settings.max_analysis_rows,
                                           request.period, _filters(request))
        return DistributionResponse(
            partition=request.partition, query=text, total=held.total, outside=found.outside,
            all_values=found.all_values, truncated=found.truncated, values=found.values, hits=found.hits,
            regions_with_hits=found.regions_with_hits, tokens=found.tokens, regions=found.regions,
            elapsed_ms=_elapsed(started),
        )

    @answers(COOCCURRENCE)
    async def cooccurrence(self, request: CooccurrenceRequest) -> CooccurrenceResponse:
        """Co-occurrence counts in windows around the hits, with each collocate's marginal frequencies."""
        started = time.perf_counter()
        text, held = await self._every_hit(request)
        check_attributes(held.corpus, request.attribute, request.within)
        found = await self.service.analyse(self.asker, cooccurrence.cooccurrence, held.corpus, held.matches,
                                           request.attribute, request.left, request.right, request.within,
                                           self.service.settings.max_analysis_rows, _filters(request),
                                           self.service.kept)
        spilled = await self.service.analyse(self.asker, cooccurrence.spill, held.corpus, held.matches,
                                             request.attribute, request.left, request.right, request.within,
                                             _filters(request))
        return CooccurrenceResponse(
            partition=request.partition, query=text, total=held.total, context_tokens=found.context_tokens,
            node_tokens=found.node_tokens, size=found.size, truncated=found.truncated, values=found.values,
            f=found.f, marginal=found.marginal, in_nodes=found.in_nodes, spilled=spilled.positions,
            spilled_values=spilled.values, occupied=spilled.occupied, spilled_texts=spilled.texts, texts=found.texts,
            edge_texts=found.edge_texts, text_regions=found.text_regions,
            first_text_continued=found.first_text_continued, last_text_continues=found.last_text_continues,
            elapsed_ms=_elapsed(started),
        )

    @answers(MARGINALS)
    async def marginals(self, request: MarginalsRequest) -> MarginalsResponse:
        """Frequencies of values of a p-attribute in the partition: collocates' marginals where they do
        not co-occur (their sum over partitions is the corpus's frequency)."""
        corpus = self.service.engine(request.partition).store
        frequencies = await self.service.in_thread(self.asker, marginals.marginals, corpus, request.attribute,
                                                   request.values, _filters(request), self.service.kept)
        return MarginalsResponse(partition=request.partition, frequencies=frequencies)

    @answers(NGRAMS)
    async def ngrams(self, request: NgramRequest) -> NgramResponse:
        """A word list or n-gram list of the partition (or of its part in a subcorpus): the rows with at
        least ``threshold`` occurrences and the ``top`` most frequent, and the counts of ``values``."""
        started = time.perf_counter()
        filters = [(f.attribute, f.negated, f.pattern) for f in request.filters]
        table = await self.service.ngrams(request.partition, request.attribute, request.n, request.within, filters,
                                          request.match, request.ignore_case, self.asker)
        rows, counts, types = await self.service.analyse(
            self.asker, ngrams.ngram_rows, table, request.match, request.ignore_case, request.threshold,
            request.top, self.service.settings.max_ngram_rows, request.values)
        return NgramResponse(partition=request.partition, tokens=table.tokens, ngrams=table.ngrams, types=types,
                             row_tokens=[t for t, _ in rows], row_counts=[c for _, c in rows], counts=counts,
                             across=table.across, elapsed_ms=_elapsed(started))

    @answers(SUBCORPUS)
    async def subcorpus(self, request: SubcorpusRequest) -> SubcorpusResponse:
        """The partition's part in a subcorpus: its tokens and texts, and an s-attribute's values in it
        with their sizes."""
        started = time.perf_counter()
        corpus = self.service.engine(request.partition).store
        filters = [(f.attribute, f.negated, f.pattern) for f in request.filters]
        found = await self.service.in_thread(self.asker, subcorpus.subcorpus, corpus, filters, request.texts,
                                             request.attribute, request.match, request.ignore_case,
                                             self.service.settings.max_analysis_rows, request.period)
        return SubcorpusResponse(partition=request.partition, tokens=found.tokens, texts=found.texts,
                                 all_texts=found.all_texts,
                                 values=found.values, value_tokens=found.value_tokens,
                                 value_regions=found.value_regions, elapsed_ms=_elapsed(started))

    @answers(SKETCH)
    async def sketch(self, request: SketchRequest) -> SketchResponse:
        """A headword's collocates in each relation asked (a word sketch's counts on the partition), and
        the totals of the collocates other partitions found."""
        started = time.perf_counter()
        service = self.service
        corpus = service.engine(request.partition).store
        if request.attribute not in corpus.p_attribute_names:
            raise UnknownAttribute(f"attribute={request.attribute}: partition {request.partition} has no p-attribute "
                                   f"{request.attribute!r} (it has: {', '.join(corpus.p_attribute_names)})")
        # each table once, however many relations read it (kept ones at once: no thread)
        tables = [await service.sketch_table(request.partition, request.attribute, table.queries, table.symmetric,
                                             request.strategy, request.hard_boundary, self.asker)
                  for table in request.tables]

        def read() -> list[sketches.RelationRows]:
            return [sketches.sketch_rows(corpus, request.attribute, tables[relation.table][1],
                                         relation.headword or request.headword, relation.swapped, relation.totals_of)
                    for relation in request.relations]

        answers = [SketchRows(saved=tables[relation.table][2], instances=rows.instances, head_total=rows.head_total,
                              values=rows.values, f=rows.f, totals=rows.totals, asked=rows.asked)
                   for rows, relation in zip(await service.in_thread(self.asker, read), request.relations, strict=True)]
        p = corpus.p_attribute(request.attribute)
        word = p.str2id(request.headword) if request.headword is not None else None
        # the subcorpus's size and the headword's frequency in it (the tables count its instances only)
        searched = await service.in_thread(self.asker, chosen, corpus, _filters(request), service.kept)
        [frequency] = await service.in_thread(self.asker, searched.frequencies, p, [word])
        return SketchResponse(partition=request.partition, size=searched.tokens, frequency=frequency,
                              tables=[texts for texts, _, _ in tables], relations=answers,
                              elapsed_ms=_elapsed(started))

    @answers(SORT_KEYS)
    async def sortkeys(self, request: SortKeysRequest) -> SortKeysResponse:
        """The sort keys of the hits at sorted ranks ``offset`` .. ``offset + limit``: what the front end
        needs to merge partitions' sorted hits and page at any offset."""
        started = time.perf_counter()
        if request.limit > self.service.settings.max_sort_keys:
            most = self.service.settings.max_sort_keys
            raise LimitExceeded(f"limit {request.limit} is more than this node returns at once ({most})")
        ranks_asked = request.ranks
        if ranks_asked is not None and (request.start is not None or request.stop is not None or request.offset):
            raise BadParameter("sortkeys: ranks are asked instead of offset, start and stop, not with them")
        if ranks_asked is not None and any(b <= a for a, b in zip(ranks_asked, ranks_asked[1:], strict=False)):
            raise BadParameter("sortkeys: ranks must be ascending, each once")
        if request.start is not None and request.offset:
            raise BadParameter("sortkeys: start is asked instead of offset, not with it")
        text, result = await self._run(request)
        order = await self.service.order(result, request.sort, self.asker)
        end: int | None = None
        if ranks_asked is not None:
            if ranks_asked and ranks_asked[-1] >= result.total:
                raise BadParameter(f"sortkeys: rank {ranks_asked[-1]} is past the partition's {result.total} hits")
            offset, ranks = 0, ranks_asked
        else:
            start, stop = request.start, request.stop
            offset = request.offset if start is None else \
                await self.service.in_thread(self.asker, order.place, start.key, start.base, start.rank)
            end = None if stop is None else \
                await self.service.in_thread(self.asker, order.place, stop.key, stop.base, stop.rank)
            ranks = list(range(offset, min(result.total if end is None else max(end, offset),
                                           offset + request.limit)))
        keys = await self.service.in_thread(self.asker, order.keys, ranks)
        return SortKeysResponse(partition=request.partition, query=text, total=result.total, offset=offset,
                                keys=keys, end=end, elapsed_ms=_elapsed(started))
