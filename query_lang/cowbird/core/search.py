"""One search over a partitioned corpus: a query checked once, counted, paged, sampled, sorted,
exported and analysed exactly as if the corpus were one.

A :class:`Search` holds the corpus, the query (parsed once: :class:`CheckedQuery`) and what each
hit shows (:class:`HitView`). It asks a :class:`Partitions` for each partition's answer — over HTTP
to the nodes (``cowbird.frontend.fanout.NodeClient``, with failover across replicas) or in this
process over local partitions (``cowbird.node.local.LocalPartitions``, for ``cowbird query`` and
tests) — and merges the answers: hits are numbered in global corpus order (partition order, then
position); counts, distributions and co-occurrences are summed (``cowbird.core.analysis_merge``)
before shares, rates and association scores are computed; sorted hits are merged like sorted
streams. A partition that cannot be served is reported (``complete: false``) and left out of the
numbering and the sums; when none answers, the search fails (:class:`~cowbird.core.errors.NodesUnavailable`
or :class:`~cowbird.core.errors.QueryTooSlow`).

Every route of the front end and the ``cowbird query`` command are adapters over this module.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import heapq
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, Protocol, TypeVar

import numpy as np

from cowbird.core.analysis_merge import (
    CollocationTable,
    CooccurrenceSums,
    DistributionSums,
    DistributionTable,
    FrequencyTable,
    Measure,
    MergeKey,
    collocation_table,
    distribution_table,
    frequency_table,
    merge_frequencies,
)
from cowbird.core.analysis_spec import SortKey, parse_breakdown, parse_fold
from cowbird.core.errors import BadParameter, NodesUnavailable, QueryTooSlow, UnknownAttribute
from cowbird.core.off_loop import off_loop
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
    SORT_KEYS,
    Operation,
    Rq,
    Rs,
)
from cowbird.core.sort_select import (
    DIRECT_KEYS,
    Inconsistent,
    Part,
    Pivots,
    Selection,
    considered,
    pivots,
    sample_ranks,
    samples_per_partition,
    select,
)
from cowbird.core.wire import (
    DEFAULT_HARD_BOUNDARY,
    ContextSpec,
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
    Line,
    MarginalsRequest,
    SortKeysRequest,
    SortKeysResponse,
    SortSpec,
    SortValue,
    Strategy,
    json_pieces,
)
from cowbird.query import Comparison, ConstraintAnd, Meet, MuUnion, Query, Tabular, serialize
from cowbird.query.cqp_ast import marked_anchors

T = TypeVar("T")
COUNT_SHARE = 0.75
"""Share of a search's time limit the counts may use; the rest is for fetching the page of hits."""
SAMPLE_BATCH = 1000
"""Sampled hits fetched per request (a node's ``max_hits_per_request``)."""
SORT_KEYS_BATCH = 20_000
"""Sort keys asked of a partition at once when a page lies deep in the sorted hits."""
MARGINALS_BYTES = 32 * 1024
"""Collocates one request asks a partition's marginals of, at most this many bytes of JSON."""


# -- the query, checked once ------------------------------------------------------------------------


@dataclass(frozen=True)
class CheckedQuery:
    """A query parsed once: its AST and the canonical CQP text sent to every partition, with how CQP
    is to evaluate it (``MatchingStrategy``, ``HardBoundary``)."""

    query: Query
    cqp: str
    strategy: Strategy = "standard"
    hard_boundary: int = DEFAULT_HARD_BOUNDARY

    @classmethod
    def of(cls, query: Query, strategy: Strategy = "standard",
           hard_boundary: int = DEFAULT_HARD_BOUNDARY) -> CheckedQuery:
        return cls(query, serialize(query), strategy, hard_boundary)

    def _again(self, query: Query) -> CheckedQuery:
        return CheckedQuery.of(query, self.strategy, self.hard_boundary)

    @property
    def cut(self) -> int | None:
        return self.query.cut

    @property
    def anchors(self) -> list[Literal["target", "keyword"]]:
        """The anchors the query marks (``@`` target, ``@1`` keyword): what its hits can be sorted
        and counted on besides the match."""
        pattern = self.query.pattern
        marked = frozenset() if isinstance(pattern, Meet | MuUnion | Tabular) else marked_anchors(pattern)
        return [name for name in ("target", "keyword") if name in marked]

    def constrained(self, *comparisons: Comparison) -> CheckedQuery:
        """The query with these comparisons added to its global constraint (``:: ... & ...``)."""
        if not comparisons:
            return self
        existing = self.query.constraint
        parts = [*(existing.operands if isinstance(existing, ConstraintAnd) else [existing] if existing else []),
                 *comparisons]
        return self._again(replace(self.query, constraint=parts[0] if len(parts) == 1 else ConstraintAnd(tuple(parts))))

    def within(self, region: str | None) -> CheckedQuery:
        """The query kept inside ``region`` unless it says ``within`` itself."""
        if region is None or self.query.within is not None:
            return self
        return self._again(replace(self.query, within=region))

    def check_no_cut(self, what: str) -> None:
        if self.cut is not None:
            raise BadParameter(f"{what} counts every hit: drop the query's cut (narrow the query down instead)")


# -- what a search runs on ---------------------------------------------------------------------------


class PartitionFailure(Exception):
    """A partition could not be served (by any of its nodes), and why.

    ``final``: another try would fail the same way (the query itself ran out of time);
    ``timed_out``: the partition did not answer in time.
    """

    partition: str
    final: bool
    timed_out: bool

    def public(self) -> str:
        """What clients may see: the partition and why (never where it is served)."""
        raise NotImplementedError


class TimeLimit:
    """The time a search has left: each partition call gets at most this (not a fair-use quota)."""

    def __init__(self, seconds: float) -> None:
        self.at = asyncio.get_running_loop().time() + seconds

    def remaining(self) -> float:
        return self.at - asyncio.get_running_loop().time()

    def part(self, share: float) -> TimeLimit:
        """A limit ending when ``share`` of the remaining time has passed (the rest is kept for what
        comes after, such as fetching the page of hits after the counts)."""
        return TimeLimit(max(0.0, self.remaining() * share))


class PartitionRef(Protocol):
    """A partition as a search sees it: its id, its size and its first token's global position."""

    @property
    def id(self) -> str: ...
    @property
    def size(self) -> int: ...
    @property
    def offset(self) -> int: ...


P = TypeVar("P", bound=PartitionRef)
P_co = TypeVar("P_co", bound=PartitionRef, covariant=True)
P_contra = TypeVar("P_contra", bound=PartitionRef, contravariant=True)


class CorpusRef(Protocol[P_co]):
    """A corpus as a search sees it: its partitions in order and its attributes."""

    @property
    def name(self) -> str: ...
    @property
    def partitions(self) -> Sequence[P_co]: ...
    @property
    def p_attributes(self) -> list[str]: ...
    @property
    def s_attributes(self) -> list[str]: ...
    @property
    def meta(self) -> list[str]: ...


class Partitions(Protocol[P_contra]):
    """The answers of a corpus's partitions, one call per partition (the node API, typed).

    A failure to serve a partition is a :class:`PartitionFailure`; ``gather`` runs one search's
    calls (in parallel or one after the other) and returns failures instead of raising them.
    """

    @property
    def time_limit(self) -> float: ...
    @property
    def export_time_limit(self) -> float: ...
    @property
    def serial(self) -> bool: ...

    async def call(self, partition: P_contra, operation: Operation[Rq, Rs], request: Rq,
                   limit: TimeLimit | None = None) -> Rs:
        """One operation of the node API (``cowbird.core.operations``) on one partition, its answer checked."""
        ...
    def export(self, partition: P_contra, request: ExportRequest, expected: int,
               limit: TimeLimit | None = None) -> AsyncIterator[Line]: ...
    async def gather(self, calls: list[Callable[[], Awaitable[T]]]) -> list[T | PartitionFailure]: ...


# -- what a search gives ----------------------------------------------------------------------------

@dataclass
class Dispersion:
    """Where a query's hits fall: over ``parts`` (regions of an s-attribute, such as texts) with Gries'
    DP (0: spread as the parts' sizes are; near 1: all in the smallest part) and its normalised
    form (DP / (1 - the smallest part's share), Lijffijt and Gries 2012), over the partitions, and
    in equal stretches of the corpus (``bins``). None where a partition failed."""

    parts: int
    parts_with_hits: int
    hits: int
    dp: float | None
    dp_norm: float | None
    dp_partitions: float | None
    bins: list[int]
    partitions: list[tuple[str, int, int]]  # (id, tokens, hits)



@dataclass
class PartitionStatus(Generic[P]):
    """How a partition answered so far: its total, or why it failed."""

    partition: P
    total: int | None = None
    failure: PartitionFailure | None = None

    @property
    def error(self) -> str | None:
        """Why the partition failed, as clients may see it."""
        return None if self.failure is None else self.failure.public()

    @property
    def answered(self) -> bool:
        return self.failure is None and self.total is not None


def failed_partitions(statuses: Sequence[PartitionStatus[Any]]) -> list[str]:
    """The partitions that failed, each once (a keyword list asks a partition for the target and the reference)."""
    return list(dict.fromkeys(s.partition.id for s in statuses if s.failure is not None))


def answered_total(statuses: Sequence[PartitionStatus[Any]]) -> int:
    """Hits in the partitions that answered."""
    return sum(s.total or 0 for s in statuses if s.failure is None)


def time_class(seconds: float) -> Literal["fast", "seconds", "minutes"]:
    """How long a query will take, in words: under a second, under a minute, longer."""
    return "fast" if seconds < 1.0 else "seconds" if seconds < 60.0 else "minutes"


@dataclass(frozen=True)
class CostEstimate:
    """What a search would find and cost before it runs (``Search.estimate``): the partitions'
    estimates summed (``hits`` None when a partition cannot tell), the time of the slowest
    partition (of all of them one after the other in serial mode), and the CPU time of all."""

    hits: int | None
    exact: bool
    seconds: float | None
    cpu_seconds: float | None
    statuses: Statuses[Any]

    @property
    def time_class(self) -> Literal["fast", "seconds", "minutes"] | None:
        return None if self.seconds is None else time_class(self.seconds)


@dataclass(frozen=True)
class Step(Generic[P]):
    """What a progressive search (``Search.progressive``) learnt: ``page``, the hits asked for (final
    unless a later ``done`` brings others); ``count``, a partition counted or failed (``partition``);
    ``done``, every partition settled, with the page (the exact answer)."""

    kind: Literal["page", "count", "done"]
    statuses: Statuses[Any]
    hits: list[Located[Any]] | None = None
    partition: PartitionStatus[Any] | None = None


def settled_before(statuses: Sequence[PartitionStatus[Any]], end: int) -> bool:
    """Whether the hits up to ``end`` are known: every partition before them has counted (or failed),
    so no hit can come before them any more."""
    before = 0
    for status in statuses:
        if status.failure is not None:
            continue
        if status.total is None:
            return False
        before += status.total
        if before >= end:
            return True
    return True


def plan_key(plan: Sequence[tuple[PartitionStatus[Any], int, int]]) -> list[tuple[str, int, int]]:
    return [(status.partition.id, local, count) for status, local, count in plan]


@dataclass(frozen=True)
class Located(Generic[P]):
    """A hit's line and the partition it is in (its positions are the partition's)."""

    partition: P
    line: Line

    @property
    def position(self) -> int:
        return self.partition.offset + self.line.match

    @property
    def matchend(self) -> int:
        return self.partition.offset + self.line.matchend


@dataclass
class HitView:
    """What each hit shows: tokens of context each side (or the whole region around the match),
    p-attributes of the tokens, metadata of the match."""

    context: int = 10
    show: list[str] = field(default_factory=list)
    meta: list[str] = field(default_factory=list)
    region: str | None = None  # context=s: the whole region around the match instead of tokens
    inline: list[str] = field(default_factory=list)  # written after each token's word: house/NN
    marks: list[str] = field(default_factory=list)  # s-attributes whose boundaries inside a line are given

    def check(self, corpus: CorpusRef[Any]) -> None:
        """Refuse attributes the corpus does not have, naming the parameter."""
        if self.region is not None and self.region not in corpus.s_attributes:
            raise UnknownAttribute(f"context={self.region}: corpus {corpus.name} has no s-attribute "
                                   f"{self.region!r}; give a number of tokens or one of: "
                                   f"{', '.join(corpus.s_attributes)}")
        for parameter, names in (("show", self.show), ("inline", self.inline)):
            for name in names:
                if name not in corpus.p_attributes:
                    raise UnknownAttribute(f"{parameter}={name}: corpus {corpus.name} has no p-attribute {name!r} "
                                           f"(it has: {', '.join(corpus.p_attributes)})")
        for parameter, names in (("meta", self.meta), ("boundaries", self.marks)):
            for name in names:
                if name not in corpus.s_attributes:
                    raise UnknownAttribute(f"{parameter}={name}: corpus {corpus.name} has no s-attribute {name!r} "
                                           f"(it has: {', '.join(corpus.s_attributes)})")

    @property
    def shown(self) -> list[str]:
        """The p-attributes each token carries after the word (which always comes first): those shown,
        then those written inline."""
        named = [a for a in self.show if a != "word"]
        return named + [a for a in dict.fromkeys(self.inline) if a != "word" and a not in named]

    def tokens(self, tokens: list[list[str]]) -> str:
        """Tokens as the KWIC writes them: words, or word/attribute/... with ``inline``."""
        return " ".join(self.token_texts(tokens))

    def token_texts(self, tokens: list[list[str]]) -> list[str]:
        """Each token as the KWIC writes it."""
        if not self.inline:
            return [t[0] for t in tokens]
        shown = self.shown
        where = [0 if a == "word" else 1 + shown.index(a) for a in self.inline]
        return ["/".join([t[0], *(t[k] for k in where)]) for t in tokens]

    def hits_request(self, partition: str, query: CheckedQuery, *, offset: int = 0, limit: int = 100,
                     indices: list[int] | None = None, sort: SortSpec | None = None) -> HitsRequest:
        return HitsRequest(partition=partition, query=query.cqp, strategy=query.strategy,
                           hard_boundary=query.hard_boundary, offset=offset, limit=limit, indices=indices, sort=sort,
                           context=self._context(), show=self.shown, meta=self.meta)

    def first_request(self, partition: str, query: CheckedQuery, *, offset: int, limit: int) -> FirstRequest:
        return FirstRequest(partition=partition, query=query.cqp, strategy=query.strategy,
                            hard_boundary=query.hard_boundary, offset=offset, limit=limit, context=self._context(),
                            show=self.shown, meta=self.meta)

    def export_request(self, partition: str, query: CheckedQuery, *, offset: int, limit: int,
                       sort: SortSpec | None = None) -> ExportRequest:
        return ExportRequest(partition=partition, query=query.cqp, strategy=query.strategy,
                             hard_boundary=query.hard_boundary, offset=offset, limit=limit, sort=sort,
                             context=self._context(), show=self.shown, meta=self.meta)

    def _context(self) -> ContextSpec:
        return (ContextSpec(tokens=0, region=self.region, marks=self.marks) if self.region
                else ContextSpec(tokens=self.context, marks=self.marks))


Statuses = list[PartitionStatus[P]]


# -- the search --------------------------------------------------------------------------------------


class Search(Generic[P]):
    """A query over a corpus's partitions; every answer is exact for the corpus as a whole."""

    def __init__(self, partitions: Partitions[P], corpus: CorpusRef[P], query: CheckedQuery,
                 view: HitView | None = None) -> None:
        self.partitions = partitions
        self.corpus = corpus
        self.query = query
        self.view = view or HitView()

    @property
    def cqp(self) -> str:
        return self.query.cqp

    def refined(self, query: CheckedQuery) -> Search[P]:
        """The same search with another query (the corpus, the partitions and the view kept)."""
        return Search(self.partitions, self.corpus, query, self.view)

    def time_limit(self) -> TimeLimit:
        return TimeLimit(self.partitions.time_limit)

    # -- counting --------------------------------------------------------------------------------

    async def _each(self, call: Callable[[P, TimeLimit], Awaitable[Any]],
                    limit: TimeLimit) -> list[tuple[PartitionStatus[P], Any]]:
        """One call per partition (as configured: parallel or serial), each answer with the
        partition's status; every partition failing fails the search."""
        report = PARTITION_ANSWERED.get()
        if report is not None:  # somebody follows the partitions' answers (a streamed analysis)
            call = _reporting(call, report)
        answers = await self.partitions.gather([functools.partial(call, p, limit) for p in self.corpus.partitions])
        answered: list[tuple[PartitionStatus[P], Any]] = []
        for partition, answer in zip(self.corpus.partitions, answers, strict=True):
            if isinstance(answer, PartitionFailure):
                answered.append((PartitionStatus(partition, None, answer), None))
            else:
                answered.append((PartitionStatus(partition, getattr(answer, "total", None)), answer))
        self._check_some_answered([status for status, _ in answered])
        return answered

    def _check_some_answered(self, statuses: Sequence[PartitionStatus[P]]) -> None:
        if all(s.failure is not None for s in statuses):
            raise all_failed(self.corpus.name, statuses)

    def _count_request(self, partition: P) -> CountRequest:
        return CountRequest(partition=partition.id, query=self.cqp, strategy=self.query.strategy,
                            hard_boundary=self.query.hard_boundary)

    async def count(self, limit: TimeLimit | None = None) -> Statuses[P]:
        """Totals per partition; with ``cut N`` in the query, the first N hits of the whole corpus.

        The counts may use three quarters of the time limit: a partition too slow for that is
        reported as failed, and the others' hits can still be fetched.
        """
        counting = (limit or self.time_limit()).part(COUNT_SHARE)
        answered = await self._each(lambda p, time: self.partitions.call(p, COUNT, self._count_request(p), time),
                                    counting)
        statuses = [status for status, _ in answered]
        if self.query.cut is not None:  # each partition cut its own hits; the corpus keeps its first `cut`
            remaining = self.query.cut
            for status in statuses:
                if status.total is not None:
                    status.total = min(status.total, remaining)
                    remaining -= status.total
        return statuses

    # -- pages of hits -----------------------------------------------------------------------------

    async def page(self, offset: int, limit: int, *, sample: tuple[int, int] | None = None,
                   sort: SortKey | None = None) -> tuple[Statuses[P], list[Located[P]]]:
        """A preview: the hits ``offset`` .. ``offset + limit`` in corpus order or sorted by ``sort``,
        or a ``sample`` of (size, seed) drawn from all hits (then ``offset`` and ``sort`` are unused)."""
        if sample is not None:
            return await self.sample(*sample)
        if sort is not None:
            return await self.sorted(sort, offset, limit)
        return await self.window(offset, limit)

    async def window(self, offset: int, limit: int) -> tuple[Statuses[P], list[Located[P]]]:
        """The hits ``offset`` .. ``offset + limit`` in global order.

        The first partition is asked for its count and its part of the page at once (``/v1/hits``
        answers the total too), the others for their counts; the page's other lines are fetched
        when the counts say where they are. Hits are numbered over the partitions that answered. If a
        partition fails while its page is fetched, the numbering changes, so the page is planned and
        fetched again without it (nodes keep the results, so the second round is cheap): the hits
        always match the totals.
        """
        time = self.time_limit()
        if self.query.cut is not None or not limit or not self.corpus.partitions:
            statuses, early = await self.count(time), None
        else:  # the first partition counts and sends its part of the page in one call
            first = self.corpus.partitions[0]

            async def counted(partition: P, limit_: TimeLimit) -> CountResponse | HitsResponse:
                if partition is first:
                    request = self.view.hits_request(partition.id, self.query, offset=offset, limit=limit)
                    return await self.partitions.call(partition, HITS, request, limit_)
                return await self.partitions.call(partition, COUNT, self._count_request(partition), limit_)

            answered = await self._each(counted, time.part(COUNT_SHARE))
            statuses = [status for status, _ in answered]
            early = answered[0][1] if isinstance(answered[0][1], HitsResponse) else None

        async def attempt() -> list[Located[P]]:
            plan = plan_window(statuses, offset, limit)
            if early is not None and plan and plan[0][0] is statuses[0] and plan[0][1] == offset \
                    and len(early.data) >= plan[0][2]:  # the first partition's part came with its count
                head = [Located(statuses[0].partition, line) for line in early.data[:plan[0][2]]]
                return head + await self._fetch(time, plan[1:], limit - len(head))
            return await self._fetch(time, plan, limit)

        return statuses, await _until_stable(statuses, attempt)

    async def estimate(self) -> CostEstimate:
        """The hits and time the search would take, from each partition's plan and a small sample
        of it (the estimate operation), without running it; quickly (a tenth of the time limit)."""
        answered = await self._each(
            lambda p, time: self.partitions.call(p, ESTIMATE, self._count_request(p), time),
            self.time_limit().part(0.1))
        answers: list[EstimateResponse] = [a for s, a in answered if s.failure is None]
        hits = None if any(a.hits is None for a in answers) else sum(a.hits or 0 for a in answers)
        if hits is not None and self.query.cut is not None:
            hits = min(hits, self.query.cut)  # each partition cut its own hits; the corpus keeps its first `cut`
        seconds = [a.seconds for a in answers if a.seconds is not None]
        known = len(seconds) == len(answers)
        return CostEstimate(
            hits=hits, exact=all(a.exact for a in answers) and len(answers) == len(answered),
            seconds=(sum(seconds) if self.partitions.serial else max(seconds, default=0.0)) if known else None,
            cpu_seconds=sum(seconds) if known else None, statuses=[s for s, _ in answered])

    async def progressive(self, offset: int, limit: int) -> AsyncIterator[Step[P]]:
        """The hits ``offset`` .. ``offset + limit`` in corpus order as soon as they are known, then
        each partition's count as it comes, then the exact answer (``Step``).

        Every partition but the first counts at once; the first is asked for its first hits
        (``Partitions.first``), which a node finds without counting the rest, and counts after
        them unless reading them counted it whole (a cheap query: the node then holds its result,
        and no work is done twice, nor the setup of a cold partition run twice at once). The page
        is known when the first partition holds it, or when the partitions before its end have
        counted. Hits are
        numbered over the partitions that answered: if one that the page was planned on fails
        later, ``done`` brings the page again, planned without it. A query with ``cut`` (the first N
        hits of the whole corpus) and serial mode answer at the end only.
        """
        if self.query.cut is not None or self.partitions.serial or not self.corpus.partitions:
            whole, hits = await self.window(offset, limit)
            yield Step("done", whole, hits)
            return
        time = self.time_limit()
        counting = time.part(COUNT_SHARE)
        partitions = list(self.corpus.partitions)
        statuses: Statuses[P] = [PartitionStatus(p, None) for p in partitions]
        def counted(k: int) -> asyncio.Task[CountResponse]:
            return asyncio.ensure_future(self.partitions.call(partitions[k], COUNT, self._count_request(partitions[k]),
                                                              counting))

        early: asyncio.Task[HitsResponse] | None = asyncio.ensure_future(self.partitions.call(
            partitions[0], FIRST, self.view.first_request(partitions[0].id, self.query, offset=offset, limit=limit),
            counting)) if limit > 0 else None
        counts = {counted(k): k for k in range(0 if early is None else 1, len(partitions))}
        page: list[Located[P]] | None = None
        shown: list[tuple[str, int, int]] = []
        try:
            while counts or early is not None:
                waiting: set[asyncio.Future[Any]] = {*counts, *([early] if early is not None else [])}
                done, _ = await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                if early is not None and early in done:
                    answer, early = _answer(early), None
                    first = statuses[0]
                    if not isinstance(answer, HitsResponse) or not answer.exact:
                        counts[counted(0)] = 0  # its count, after its first hits (or their failure)
                    else:  # the whole partition was read: its count
                        first.total = answer.total
                        yield Step("count", statuses, partition=first)
                    if isinstance(answer, HitsResponse) and page is None:
                        if answer.total >= offset + limit:  # the page lies in the first partition
                            page = [Located(partitions[0], line) for line in answer.data]
                            shown = [(partitions[0].id, offset, len(page))]
                            yield Step("page", statuses, page)
                for task in [t for t in done if t in counts]:
                    status = statuses[counts.pop(task)]
                    result = _answer(task)
                    if isinstance(result, PartitionFailure):
                        status.failure = result
                    else:
                        status.total = result.total
                    yield Step("count", statuses, partition=status)
                if page is None and settled_before(statuses, offset + limit) and \
                        any(s.answered for s in statuses):
                    plan = plan_window([s for s in statuses if s.total is not None], offset, limit)
                    fetched = await self._fetch(time, plan, limit)
                    if all(s.failure is None for s, _, _ in plan):
                        page, shown = fetched, plan_key(plan)
                        yield Step("page", statuses, page)
            self._check_some_answered(statuses)
            if page is None or plan_key(plan_window(statuses, offset, limit)) != shown:
                async def attempt() -> list[Located[P]]:
                    return await self._fetch(time, plan_window(statuses, offset, limit), limit)

                page = await _until_stable(statuses, attempt)
            yield Step("done", statuses, page)
        finally:
            for pending in [*counts, *([early] if early is not None else [])]:
                pending.cancel()

    async def _fetch(self, time: TimeLimit, plan: list[tuple[PartitionStatus[P], int, int]],
                     limit: int) -> list[Located[P]]:
        hits: list[Located[P]] = []
        if self.partitions.serial:
            for status, local, count in plan:  # in order; stops once the page is full
                if len(hits) >= limit:
                    break
                hits += await self._lines(status, self.view.hits_request(
                    status.partition.id, self.query, offset=local, limit=count), time)
            return hits
        pages = await self.partitions.gather([
            functools.partial(self._lines, s, self.view.hits_request(s.partition.id, self.query, offset=a, limit=c),
                              time) for s, a, c in plan])
        for page in pages:
            if isinstance(page, list):
                hits += page
        return hits

    async def _lines(self, status: PartitionStatus[P], request: HitsRequest,
                     time: TimeLimit) -> list[Located[P]]:
        """Lines of one partition; a failure marks the partition (the caller plans again)."""
        try:
            response = await self.partitions.call(status.partition, HITS, request, time)
        except PartitionFailure as failure:
            status.failure = failure
            return []
        return [Located(status.partition, line) for line in response.data]

    async def sample(self, size: int, seed: int) -> tuple[Statuses[P], list[Located[P]]]:
        """``size`` hits drawn uniformly, without replacement, from all hits of all partitions, in
        corpus order; the same seed draws the same sample (the export's too)."""
        time = self.time_limit()
        statuses = await self.count(time)
        hits: list[Located[P]] = []
        for status, indices in plan_sample(statuses, size, seed):
            hits += await self._lines(status, self.view.hits_request(
                status.partition.id, self.query, indices=indices, limit=len(indices)), time)
        return statuses, hits

    # -- sorted hits -------------------------------------------------------------------------------

    def _spec(self, status: PartitionStatus[P], sort: SortKey) -> SortSpec:
        return SortSpec(key=str(sort), direction=sort.direction, seed=sort.seed, base=status.partition.offset)

    def check_sort(self, sort: SortKey, written: str | None = None) -> None:
        """Refuse a sort of a cut query or on an attribute the corpus does not have (``written``: the
        sort as the user wrote it, for the message)."""
        self.query.check_no_cut("sorting")
        for level in sort.levels:
            if level.attribute not in self.corpus.p_attributes:
                raise UnknownAttribute(f"sort={written or sort}: corpus {self.corpus.name} has no p-attribute "
                                       f"{level.attribute!r} (it has: {', '.join(self.corpus.p_attributes)})")

    def _sort_request(self, status: PartitionStatus[P], sort: SortKey, **asked: Any) -> SortKeysRequest:
        return SortKeysRequest(partition=status.partition.id, query=self.cqp, strategy=self.query.strategy,
                               hard_boundary=self.query.hard_boundary, sort=self._spec(status, sort), **asked)

    async def _sort_keys(self, status: PartitionStatus[P], time: TimeLimit,
                         request: SortKeysRequest) -> SortKeysResponse:
        return await self.partitions.call(status.partition, SORT_KEYS, request, time)

    async def _window(self, status: PartitionStatus[P], sort: SortKey, size: int, found: Pivots | None,
                      time: TimeLimit) -> tuple[int, list[SortValue]]:
        """A partition's keys between the pivots (all of its first ``size`` without pivots): its first rank
        there and the keys, up to ``size`` ranks, in pieces of at most ``SORT_KEYS_BATCH``."""
        low, high = (found.low, found.high) if found is not None else (None, None)
        answer = await self._sort_keys(status, time, self._sort_request(
            status, sort, start=low, stop=high, limit=min(SORT_KEYS_BATCH, size)))
        first, keys = answer.offset, list(answer.keys)
        last = min(size, answer.total if answer.end is None else answer.end)
        while first + len(keys) < last:
            more = await self._sort_keys(status, time, self._sort_request(
                status, sort, offset=first + len(keys), limit=min(SORT_KEYS_BATCH, last - first - len(keys))))
            if not more.keys:
                break
            keys += more.keys
        return first, keys

    async def _split(self, statuses: Statuses[P], sort: SortKey, offset: int, limit: int,
                     time: TimeLimit) -> tuple[list[PartitionStatus[P]], Selection]:
        """Where the sorted hits ``offset`` .. ``offset + limit`` lie (``sort_select``): the partitions
        that answered and, for them, the page as (partition number, rank) and each one's hits before
        it. Two rounds at most whatever the offset: samples of every partition's sorted keys, then each
        partition's keys between two pivots. A partition that fails is marked failed and the page is
        found again over the others."""
        while True:
            live = [s for s in statuses if s.failure is None and s.total]
            total = sum(s.total or 0 for s in live)
            if offset >= total:
                return live, Selection([], [s.total or 0 for s in live])
            end = min(offset + limit, total)
            parts = [Part(s.partition.offset, considered(s.total or 0, end)) for s in live]
            found: Pivots | None = None
            if sum(part.size for part in parts) > DIRECT_KEYS:
                per = samples_per_partition([part.size for part in parts])
                ranks = [sample_ranks(part.size, per) for part in parts]
                answers = await self.partitions.gather([
                    functools.partial(self._sort_keys, status, time, self._sort_request(status, sort, ranks=mine))
                    for status, mine in zip(live, ranks, strict=True)])
                if _mark_failed(live, answers):
                    continue
                samples = [(mine, answer.keys) for mine, answer in zip(ranks, answers, strict=True)
                           if not isinstance(answer, PartitionFailure)]
                found = await off_loop(pivots, parts, samples, sort.descending, offset, end)
            windows = await self.partitions.gather([
                functools.partial(self._window, status, sort, part.size, found, time)
                for status, part in zip(live, parts, strict=True)])
            if _mark_failed(live, windows):
                continue
            done = [w for w in windows if not isinstance(w, PartitionFailure)]
            try:
                return live, await off_loop(select, parts, done, sort.descending, offset, end)
            except Inconsistent as exc:
                raise NodesUnavailable(f"the nodes' sorted hits do not add up: {exc}") from exc

    async def sorted(self, sort: SortKey, offset: int, limit: int) -> tuple[Statuses[P], list[Located[P]]]:
        """The sorted hits ``offset`` .. ``offset + limit`` of the whole corpus (ties in corpus order)."""
        self.check_sort(sort)
        time = self.time_limit()
        statuses = await self.count(time)

        async def attempt() -> list[Located[P]]:
            live, selection = await self._split(statuses, sort, offset, limit, time)
            self._check_some_answered(statuses)  # the counts came, then every sort failed
            lines: dict[tuple[str, int], Located[P]] = {}
            for k, first, count in selection.ranges():
                status = live[k]
                request = self.view.hits_request(status.partition.id, self.query, offset=first, limit=count,
                                                 sort=self._spec(status, sort))
                for rank, hit in enumerate(await self._lines(status, request, time), start=first):
                    lines[(status.partition.id, rank)] = hit
            self._check_some_answered(statuses)
            return [lines[(live[k].partition.id, rank)] for k, rank in selection.page
                    if (live[k].partition.id, rank) in lines]

        return statuses, await _until_stable(statuses, attempt)

    # -- exports -----------------------------------------------------------------------------------

    def stream(self, statuses: Statuses[P], offset: int, limit: int, *, sample: tuple[int, int] | None = None,
               sort: SortKey | None = None) -> AsyncIterator[Located[P]]:
        """Exactly the hits ``offset`` .. ``offset + limit`` in corpus order, or sorted, or the
        ``sample`` of (size, seed) — the preview's sample for the same seed —, streamed; a
        :class:`PartitionFailure` if a partition cannot be finished (never a short stream)."""
        if sample is not None:
            return self._sample_stream(statuses, *sample)
        if sort is not None:
            return self._sorted_stream(statuses, sort, offset, limit)
        return self._stream(statuses, offset, limit)

    async def _stream(self, statuses: Statuses[P], offset: int, limit: int) -> AsyncIterator[Located[P]]:
        time = TimeLimit(self.partitions.export_time_limit)
        for status, local, count in plan_window(statuses, offset, limit):
            request = self.view.export_request(status.partition.id, self.query, offset=local, limit=count)
            async for line in self.partitions.export(status.partition, request, count, time):
                yield Located(status.partition, line)

    async def _sample_stream(self, statuses: Statuses[P], size: int, seed: int) -> AsyncIterator[Located[P]]:
        time = TimeLimit(self.partitions.export_time_limit)
        for status, indices in plan_sample(statuses, size, seed):
            for start in range(0, len(indices), SAMPLE_BATCH):
                batch = indices[start : start + SAMPLE_BATCH]
                request = self.view.hits_request(status.partition.id, self.query, indices=batch, limit=len(batch))
                response = await self.partitions.call(status.partition, HITS, request, time)
                for line in response.data:
                    yield Located(status.partition, line)

    async def _sorted_stream(self, statuses: Statuses[P], sort: SortKey, offset: int,
                             limit: int) -> AsyncIterator[Located[P]]:
        """Each partition's sorted stream from its first rank in the range, merged on the sort keys."""
        self.check_sort(sort)
        time = TimeLimit(self.partitions.export_time_limit)
        starts = {s.partition.id: 0 for s in statuses if s.failure is None and s.total}
        if offset:  # each partition starts after its hits among the first `offset` of the merged order
            before, selection = await self._split(statuses, sort, offset, 0, time)
            starts = {status.partition.id: first for status, first in zip(before, selection.starts, strict=True)}
        live = [s for s in statuses if s.failure is None and s.total]
        streams = []
        for k, status in enumerate(live):
            first = starts[status.partition.id]
            count = min((status.total or 0) - first, limit)
            if count <= 0:
                continue
            request = self.view.export_request(status.partition.id, self.query, offset=first, limit=count,
                                               sort=self._spec(status, sort))
            streams.append((k, self.partitions.export(status.partition, request, count, time)))
        sent = 0
        async for k, line in _merge(streams, sort.descending):
            yield Located(live[k].partition, line)
            sent += 1
            if sent == limit:
                break

    # -- analyses ----------------------------------------------------------------------------------

    async def frequency(self, attribute: str, on: str | None, fold: str, minimum: int, offset: int,
                        limit: int | None) -> tuple[Statuses[P], FrequencyTable]:
        """How often each value of ``attribute`` occurs over a span of the hits (CQP's
        ``count A by ATT on SPAN %FOLD``), summed over partitions; with several attributes (and
        spans), each combination of their values (tab-joined)."""
        self.query.check_no_cut("a frequency breakdown")
        levels, folded = parse_breakdown(attribute, on), parse_fold(fold)
        for name, _ in levels:
            if name not in self.corpus.p_attributes:
                raise UnknownAttribute(f"by={attribute}: corpus {self.corpus.name} has no p-attribute {name!r} "
                                       f"(it has: {', '.join(self.corpus.p_attributes)})")
        spans = ",".join(str(span) for _, span in levels)

        async def call(partition: P, time: TimeLimit) -> FrequencyResponse:
            request = FrequencyRequest(partition=partition.id, query=self.cqp, strategy=self.query.strategy,
                                       hard_boundary=self.query.hard_boundary, attribute=attribute, on=spans,
                                       fold=folded)
            return await self.partitions.call(partition, FREQUENCY, request, time)

        answered = await self._each(call, self.time_limit())
        answers: list[FrequencyResponse] = [a for _, a in answered if a is not None]

        def merged() -> FrequencyTable:
            ordered = merge_frequencies([(a.values, a.counts) for a in answers])
            return frequency_table(ordered, sum(a.counted for a in answers), sum(a.unset for a in answers),
                                   any(a.truncated for a in answers), _answered_size(answered), minimum, offset,
                                   limit)

        return [s for s, _ in answered], await off_loop(merged)

    async def distribution(self, attribute: str, order: Literal["value", "hits", "per_million"] = "value",
                           ) -> tuple[Statuses[P], DistributionTable]:
        """Hits per value of an s-attribute at the match (CQP's ``group A match ATT``), with each
        value's size, summed over partitions."""
        self.query.check_no_cut("a distribution")
        if attribute not in self.corpus.meta:
            raise UnknownAttribute(f"by={attribute}: corpus {self.corpus.name} has no s-attribute with values named "
                                   f"{attribute!r} (it has: {', '.join(self.corpus.meta) or 'none'})")

        async def call(partition: P, time: TimeLimit) -> DistributionResponse:
            request = DistributionRequest(partition=partition.id, query=self.cqp, strategy=self.query.strategy,
                                          hard_boundary=self.query.hard_boundary, attribute=attribute)
            return await self.partitions.call(partition, DISTRIBUTION, request, time)

        answered = await self._each(call, self.time_limit())
        answers: list[DistributionResponse] = [a for _, a in answered if a is not None]

        def merged() -> DistributionTable:
            sums = DistributionSums()
            for a in answers:
                sums.add(a.values, a.hits, a.regions_with_hits, a.tokens, a.regions)
            return distribution_table(sums, sum(a.outside for a in answers), all(a.all_values for a in answers),
                                      any(a.truncated for a in answers), order)

        return [s for s, _ in answered], await off_loop(merged)

    async def dispersion(self, attribute: str, bins: int) -> tuple[Statuses[P], Dispersion]:
        """Where the hits fall: Gries' DP over the regions of ``attribute`` (the parts: texts), over
        the partitions, and the hits in ``bins`` equal stretches of the corpus. Counted first (the
        parts' shares are of the corpus's hits and tokens), then each partition adds its parts up."""
        self.query.check_no_cut("a dispersion")
        if attribute not in self.corpus.s_attributes:
            raise UnknownAttribute(f"parts={attribute}: corpus {self.corpus.name} has no s-attribute {attribute!r} "
                                   f"(it has: {', '.join(self.corpus.s_attributes) or 'none'})")
        time = self.time_limit()
        statuses = await self.count(time)
        hits = answered_total(statuses)
        size = sum(p.size for p in self.corpus.partitions)
        if hits == 0:
            return statuses, Dispersion(0, 0, 0, None, None, None, [0] * bins, [])

        async def call(partition: P, limit: TimeLimit) -> DispersionResponse:
            request = DispersionRequest(partition=partition.id, query=self.cqp, strategy=self.query.strategy,
                                        hard_boundary=self.query.hard_boundary, attribute=attribute, hits=hits,
                                        corpus_size=size, base=partition.offset, bins=bins)
            return await self.partitions.call(partition, DISPERSION, request, limit)

        answered = await self._each(call, time)
        answers = [a for _, a in answered if a is not None]
        failed = len(answers) < len(answered)
        counted = [(s.partition.size, s.total or 0) for s in statuses if s.failure is None]
        dp_parts = None if failed else 0.5 * sum(a.dp_sum for a in answers)
        smallest = min((a.smallest_part for a in answers if a.parts), default=0)
        norm = None if dp_parts is None or not size else dp_parts / (1 - smallest / size)
        dp_partitions = 0.5 * sum(abs(h / hits - n / size) for n, h in counted) if not failed else None
        shown = [0] * bins
        for a in answers:
            shown = [x + y for x, y in zip(shown, a.bins, strict=True)]
        return [s for s, _ in answered], Dispersion(
            sum(a.parts for a in answers), sum(a.parts_with_hits for a in answers), hits, dp_parts, norm,
            dp_partitions, shown, [(s.partition.id, s.partition.size, s.total or 0) for s in statuses])

    async def collocations(self, attribute: str, left: int, right: int, within: str | None,
                           measures: list[Measure], order: Measure | Literal["f"],
                           min_freq: int) -> tuple[Statuses[P], CollocationTable]:
        """Collocates of the hits in a window of ``left`` and ``right`` tokens (inside ``within``),
        co-occurrence and marginal frequencies summed over partitions before any measure."""
        self.query.check_no_cut("a collocation analysis")
        if attribute not in self.corpus.p_attributes:
            raise UnknownAttribute(f"attribute={attribute}: corpus {self.corpus.name} has no p-attribute "
                                   f"{attribute!r} (it has: {', '.join(self.corpus.p_attributes)})")

        async def call(partition: P, time: TimeLimit) -> CooccurrenceResponse:
            request = CooccurrenceRequest(partition=partition.id, query=self.cqp, strategy=self.query.strategy,
                                          hard_boundary=self.query.hard_boundary, attribute=attribute, left=left,
                                          right=right, within=within)
            return await self.partitions.call(partition, COOCCURRENCE, request, time)

        answered = await self._each(call, self.time_limit())
        # a collocate's marginal counts on every partition, also where it never co-occurs: ask those
        found: dict[str, int] = {}
        for _, a in answered:
            for value, f in zip(a.values if a is not None else [], a.f if a is not None else [], strict=True):
                found[value] = found.get(value, 0) + f
        wanted = {v for v, f in found.items() if f >= min_freq}
        asks = [(status, sorted(wanted - set(a.values))) for status, a in answered if a is not None]
        asks = [(status, values) for status, values in asks if values]
        # in pieces a node takes (its request bodies are limited: 64 KB by default)
        pieces = [(status, piece) for status, values in asks for piece in json_pieces(values, MARGINALS_BYTES)]
        time = self.time_limit()
        answers = await self.partitions.gather([functools.partial(
            self.partitions.call, status.partition, MARGINALS,
            MarginalsRequest(partition=status.partition.id, attribute=attribute, values=piece), time)
            for status, piece in pieces])
        marginals: dict[str, tuple[list[str], list[int]]] = {}
        for (status, piece), answer in zip(pieces, answers, strict=True):
            if status.failure is not None:
                continue
            if isinstance(answer, PartitionFailure):
                status.failure = answer  # without its marginals, none of its counts are in
                status.total = None
                marginals.pop(status.partition.id, None)
            else:
                values, frequencies = marginals.setdefault(status.partition.id, ([], []))
                values += piece
                frequencies += answer.frequencies
        self._check_some_answered([status for status, _ in answered])

        def merged() -> CollocationTable:
            sums = CooccurrenceSums()
            for status, a in answered:
                if a is None or status.failure is not None:
                    continue
                sums.add(a.values, a.f, a.marginal, a.in_nodes)
                sums.context_tokens += a.context_tokens
                sums.node_tokens += a.node_tokens
                sums.size += a.size
                sums.truncated = sums.truncated or a.truncated
                if status.partition.id in marginals:
                    values, frequencies = marginals[status.partition.id]
                    sums.add(values, [0] * len(values), frequencies, [0] * len(values))
            return collocation_table(sums, measures, order, min_freq)

        return [s for s, _ in answered], await off_loop(merged)


# -- plans and merges --------------------------------------------------------------------------------


PARTITION_ANSWERED: contextvars.ContextVar[Callable[[PartitionStatus[Any]], None] | None] = contextvars.ContextVar(
    "cowbird_partition_answered", default=None)
"""Told of each partition's answer (or failure) to a search's calls as it comes: a streamed
analysis sets it (``cowbird.frontend.routes.analyses``), and the tasks of its search inherit it."""


def _reporting(call: Callable[[P, TimeLimit], Awaitable[Any]],
               report: Callable[[PartitionStatus[Any]], None]) -> Callable[[P, TimeLimit], Awaitable[Any]]:
    async def reported(partition: P, limit: TimeLimit) -> Any:
        try:
            answer = await call(partition, limit)
        except PartitionFailure as failure:
            report(PartitionStatus(partition, None, failure))
            raise
        report(PartitionStatus(partition, getattr(answer, "total", None)))
        return answer

    return reported


def _answer(task: asyncio.Task[T]) -> T | PartitionFailure:
    """A finished call's answer, or the partition's failure."""
    try:
        return task.result()
    except PartitionFailure as failure:
        return failure


async def _until_stable(statuses: Sequence[PartitionStatus[Any]], attempt: Callable[[], Awaitable[T]]) -> T:
    """``attempt()`` again until no partition fails during it: a failure renumbers the hits, so a
    page fetched while one failed is planned again from the partitions that are left."""
    while True:
        failed = sum(s.failure is not None for s in statuses)
        result = await attempt()
        if sum(s.failure is not None for s in statuses) == failed:
            return result


def plan_window(statuses: Sequence[PartitionStatus[P]], offset: int,
                limit: int) -> list[tuple[PartitionStatus[P], int, int]]:
    """Which partitions hold the hits ``offset`` .. ``offset + limit`` of the partitions that
    answered, as (partition, local offset, count)."""
    plan: list[tuple[PartitionStatus[P], int, int]] = []
    before = 0
    for status in statuses:
        if status.total is None or status.failure is not None:
            continue
        first, last = max(offset, before), min(offset + limit, before + status.total)
        if first < last:
            plan.append((status, first - before, last - first))
        before += status.total
    return plan


def plan_sample(statuses: Sequence[PartitionStatus[P]], size: int,
                seed: int) -> list[tuple[PartitionStatus[P], list[int]]]:
    """Which hits of which partition make the sample of ``size`` for ``seed``: uniform without
    replacement over the hits of the partitions that answered, in global order."""
    ok = [s for s in statuses if s.total and s.failure is None]
    totals = np.asarray([s.total for s in ok], dtype=np.int64)
    population = int(totals.sum())
    if population == 0:
        return []
    chosen = np.sort(np.random.default_rng(seed).choice(population, size=min(size, population), replace=False))
    bounds = np.concatenate(([0], np.cumsum(totals)))
    plan = []
    for k, status in enumerate(ok):
        mine = chosen[(chosen >= bounds[k]) & (chosen < bounds[k + 1])] - bounds[k]
        if len(mine):
            plan.append((status, mine.tolist()))
    return plan


def all_failed(corpus: str, statuses: Sequence[PartitionStatus[Any]]) -> NodesUnavailable | QueryTooSlow:
    """No partition answered: the query was too slow everywhere, or the partitions are not served."""
    failures = [s.failure for s in statuses if s.failure is not None]
    reasons = "; ".join(f.public() for f in failures)
    if all(f.final or f.timed_out for f in failures):
        return QueryTooSlow(f"the query ran out of time on every partition of {corpus}: {reasons}")
    return NodesUnavailable(f"no node answered for corpus {corpus}: {reasons}", headers={"Retry-After": "10"})


def _mark_failed(live: Sequence[PartitionStatus[Any]], answers: Sequence[object]) -> bool:
    """Mark the partitions whose answer is a failure; whether there was one."""
    failed = False
    for status, answer in zip(live, answers, strict=True):
        if isinstance(answer, PartitionFailure):
            status.failure, failed = answer, True
    return failed


def _answered_size(answered: Sequence[tuple[PartitionStatus[Any], Any]]) -> int:
    """Tokens in the partitions that answered (the base of per-million rates)."""
    return sum(status.partition.size for status, answer in answered if answer is not None)


async def _merge(streams: list[tuple[int, AsyncIterator[Line]]],
                 descending: tuple[bool, ...]) -> AsyncIterator[tuple[int, Line]]:
    """Sorted line streams merged on their sort keys; equal keys in partition order."""
    heap: list[tuple[MergeKey, int, int, Line]] = []
    iterators = dict(streams)
    counter = 0
    try:
        for k, iterator in iterators.items():
            line = await anext(iterator, None)
            if line is not None:
                key = line.sort_key if line.sort_key is not None else []
                heap.append((MergeKey(key, descending), k, counter, line))
                counter += 1
        heapq.heapify(heap)
        while heap:
            _, k, _, line = heapq.heappop(heap)
            yield k, line
            following = await anext(iterators[k], None)
            if following is not None:
                key = following.sort_key if following.sort_key is not None else []
                heapq.heappush(heap, (MergeKey(key, descending), k, counter, following))
                counter += 1
    finally:
        for iterator in iterators.values():
            close = getattr(iterator, "aclose", None)
            if close is not None:
                await close()
