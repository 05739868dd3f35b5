"""The node's query service: engines per partition, a result cache, a concurrency limit, time quota.

Queries run in worker threads, off the event loop, under a :class:`Deadline` the engine checks
between steps, so a query past ``query_timeout`` really stops. The result cache keeps recent
(partition, query) results so paging through one query costs one evaluation; it is bounded by the
number of hits it holds (24 bytes each: match, matchend, target; a query that marks a keyword
anchor, ``@1[...]``, holds a fourth array and counts 4/3 per hit). A query keeps at most
``max_query_hits`` of its hits; it is counted exactly however many it has.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any, Concatenate, ParamSpec, TypeVar

import anyio

from cowbird.core.analysis_spec import parse_sort
from cowbird.core.errors import LimitExceeded, OutOfMemory, UnknownPartition, query_problem
from cowbird.core.gdex import GdexSpec
from cowbird.core.lru import Lru
from cowbird.core.wire import SortSpec
from cowbird.engines import Context, Deadline, Estimate, KwicLine, QueryEngine, ResultSet, Strategy
from cowbird.engines.analyses import sketches
from cowbird.engines.analyses.kept import Kept
from cowbird.engines.analyses.ngrams import NgramTable, ngram_table
from cowbird.engines.analyses.sort_order import SortOrder, sort_order
from cowbird.engines.results import ArrayResultSet, build_lines
from cowbird.node.memory import MemoryBudget
from cowbird.node.scheduler import NOBODY, Asker, Scheduler, lower_priority
from cowbird.node.settings import NodeSettings
from cowbird.query import Query, QueryError, parse_cqp, serialize
from cowbird.serving.metrics import Metrics

T = TypeVar("T")
P = ParamSpec("P")

ResultKey = tuple[str, str, str, int]
"""A result's name in the caches: the corpus, the query's canonical text, the strategy, the hard boundary."""
OrderKey = tuple[ResultSet, str, str, int, int, GdexSpec | None]
"""A sort order's name: the result itself (held: an object's id() may be another's once it is freed),
the sort key, direction, seed and the partition's base."""
NgramKey = tuple[str, str, int, str | None, tuple[tuple[str, bool, str], ...], str | None, bool]
"""A counted n-gram table's name: partition, attribute, n, within, filters, match, ignore_case."""

NGRAM_TABLES_KEPT = 3
"""Counted n-gram tables a node keeps (a word list's later requests, the next page of it)."""
BYTES_PER_HIT = 24
REFUSALS_KEPT = 256
"""Queries refused for their size, remembered so that asking again costs nothing."""
ESTIMATES_KEPT = 1024
"""Estimates kept, so that asking again (a page reloaded, a query refused and tried again, the same
query of many users) costs nothing: an estimate of a query that may be slow reads up to a second of
a partition (``ESTIMATE_SECONDS``), and under load those seconds were a third of a node's CPU."""
CHECKED_KEPT = 1024
"""Query texts kept parsed (their canonical text and AST), most recently used first."""
SORT_ORDERS_KEPT = 8
"""Sort orders kept for paging (8 bytes per hit each)."""
SKETCH_TABLES_BYTES = 256 * 2**20
"""Relation tables counted for word sketches (not saved ones: those are mapped) kept, in bytes."""
MAX_SKETCH_INSTANCES = 40_000_000
"""Hits of one relation's queries a node counts at once for a word sketch without a saved table (each
query keeps at most ``max_query_hits`` of them)."""



BACKGROUND_THREADS = ThreadPoolExecutor(
    2, thread_name_prefix="cowbird-background", initializer=lambda: lower_priority(threading.get_native_id()))
"""Threads that build lines and write answers of background work (exports, analyses), niced."""


def hits_held(result: ResultSet) -> int:
    """A result's weight in the result cache: its hits held (``ResultSet.weight``, 24 bytes each)."""
    return result.weight


class PartitionService:
    """Runs checked queries on the partitions this node serves."""

    def __init__(self, settings: NodeSettings, engines: dict[str, QueryEngine], metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.engines = engines
        self.metrics = metrics
        # query results, bounded by the hits they hold
        self.cache: Lru[ResultKey, ResultSet] = Lru(settings.cache_max_hits, hits_held)
        self.orders: Lru[OrderKey, SortOrder] = Lru(SORT_ORDERS_KEPT)
        self.checked: Lru[str, tuple[str, Query]] = Lru(CHECKED_KEPT)  # query text -> canonical text, AST
        # queries refused for what they are (their certain work is more than query_timeout): refused again
        # at once, not after seconds of planning each time
        # (their reasons' text only: an exception would keep its traceback's frames, and with them the
        # arrays the evaluation held when it was refused)
        self.refused: Lru[ResultKey, str] = Lru(REFUSALS_KEPT)
        # estimates that the same query would get again (not those cut short by a busy node's clock)
        self.estimates: Lru[ResultKey, Estimate] = Lru(ESTIMATES_KEPT)
        # counted n-grams, kept for the requests of one word list that follow (a few, as they are large)
        self.ngram_tables: Lru[NgramKey, NgramTable] = Lru(NGRAM_TABLES_KEPT)
        # relation tables of word sketches: counted ones by their bytes, saved ones mapped (cheap to hold)
        self.sketch_tables: Lru[tuple[str, str], sketches.RelationTable] = Lru(SKETCH_TABLES_BYTES,
                                                                               lambda t: t.nbytes)
        self.saved_sketch_tables: Lru[tuple[str, str], sketches.RelationTable] = Lru(4096)
        # what the analyses keep for the next ones, over every partition: GDEX flags and sentence
        # counts, lexicons counted in subcorpora
        self.kept = Kept()
        self.scheduler = Scheduler(
            settings.max_concurrent_queries, settings.max_queued_queries, settings.queue_seconds,
            settings.max_heavy_queries, settings.heavy_after_seconds, settings.max_background_queries,
            MemoryBudget(settings.memory_budget),
        )

    def engine(self, partition: str) -> QueryEngine:
        engine = self.engines.get(partition) or self.engines.get(partition.lower())
        if engine is None:
            served = ", ".join(sorted(self.engines)) or "none"
            raise UnknownPartition(f"this node does not serve partition {partition!r} (it serves: {served})")
        return engine

    def check(self, query: str) -> tuple[str, Query]:
        """The query's canonical text, which names its result in the cache (and is what the cwb engine
        sends to CQP), and the AST the engine runs. A text is parsed once: the count, the page of hits
        and the analyses of one search send the same text (to every partition of this node)."""
        known = self.checked.get(query)
        if known is not None:
            return known
        try:
            parsed = parse_cqp(query)
        except QueryError as exc:
            raise query_problem(exc) from exc
        answer = (serialize(parsed), parsed)
        self.checked.put(query, answer)
        return answer

    async def analyse(self, asker: Asker, function: Callable[Concatenate[Deadline, P], T],
                      *args: P.args, **kwargs: P.kwargs) -> T:
        """Analysis work (``function(deadline, *args, **kwargs)``) as a query is run: under the scheduler
        (a place among the queries running, heavy after a while), stopped at ``query_timeout`` and
        when the client goes away (``asker.disconnected``) — an analysis can take longer than the
        query it counts."""

        def work(deadline: Deadline) -> T:
            try:
                return function(deadline, *args, **kwargs)
            except MemoryError as exc:
                raise LimitExceeded("the analysis needs more memory than this node has; narrow it down") from exc

        return await self.scheduler.run(work, self.settings.query_timeout, _watching(asker), asker)

    async def ngrams(self, partition: str, attribute: str, n: int, within: str | None,
                     filters: list[tuple[str, bool, str]], match: str | None = None, ignore_case: bool = False,
                     asker: Asker = NOBODY) -> NgramTable:
        """The partition's n-grams counted (``analyses.ngrams.ngram_table``; with ``match`` only those with
        a token matching it), as a query is run; the last few tables are kept, since one word list asks
        a partition two or three times (a table of every n-gram answers for any ``match`` too)."""
        every: NgramKey = (partition, attribute, n, within, tuple(filters), None, False)
        key: NgramKey = every if match is None else (*every[:5], match, ignore_case)
        for known in (every, key):
            table = self.ngram_tables.get(known)
            if table is not None:
                return table
        corpus = self.engine(partition).store
        table = await self.analyse(asker, ngram_table, corpus, attribute, n, within, filters,
                                   self.settings.max_ngram_types, match, ignore_case)
        self.ngram_tables.put(key, table)
        return table

    async def sketch_table(self, partition: str, attribute: str, queries: list[str], symmetric: bool,
                           strategy: Strategy, hard_boundary: int,
                           asker: Asker = NOBODY) -> tuple[list[str], sketches.RelationTable, bool]:
        """A relation's table on a partition (``analyses.sketches``): its canonical queries, the table, and
        whether it was saved by ``cowbird sketches build`` (else counted from the queries' hits now and
        kept for the requests that follow)."""
        engine = self.engine(partition)
        texts = [self.check(query)[0] for query in queries]
        key = (engine.corpus_id, sketches.table_key(attribute, tuple(texts), symmetric, strategy, hard_boundary))
        for tables, is_saved in ((self.saved_sketch_tables, True), (self.sketch_tables, False)):
            known = tables.get(key)
            if known is not None:
                return texts, known, is_saved
        corpus = engine.store
        table = await self.in_thread(asker, sketches.saved, corpus, key[1])
        if table is not None:
            self.saved_sketch_tables.put(key, table)
            return texts, table, True
        corpus.p_attribute(attribute)  # an unknown attribute is refused before the queries run
        held = []
        for text in texts:
            _, result = await self.run(partition, text, strategy, hard_boundary, asker)
            if result.held < result.total:
                raise LimitExceeded(
                    f"a relation's query has {result.total:,} hits on partition {partition}, more than the node keeps "
                    f"({result.held:,}, max_query_hits): build the partition's word sketch tables (cowbird sketches "
                    "build), or sketch a smaller subcorpus")
            held.append(self.every_hit(result).matches)
        table = await self.analyse(asker, sketches.relation_table, corpus, attribute, held, symmetric,
                                   MAX_SKETCH_INSTANCES)
        self.sketch_tables.put(key, table)
        return texts, table, False

    async def in_thread(self, asker: Asker, function: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        """Run engine work (building lines, writing answers) in a worker thread (its errors carry their
        own status and code); the asker's background work in a thread at the lowest CPU priority."""
        work = functools.partial(function, *args, **kwargs)
        if asker.background:
            return await asyncio.get_running_loop().run_in_executor(BACKGROUND_THREADS, work)
        return await anyio.to_thread.run_sync(work)

    async def run(
        self,
        partition: str,
        query: str,
        strategy: Strategy,
        hard_boundary: int,
        asker: Asker = NOBODY,
    ) -> tuple[str, ResultSet]:
        """The result of a query on a partition, from the cache or evaluated now (for ``asker``: when
        its client has gone, the engine is told to stop)."""
        text, result, _ = await self._evaluate(partition, query, strategy, hard_boundary, asker, None)
        return text, result

    async def first(
        self,
        partition: str,
        query: str,
        strategy: Strategy,
        hard_boundary: int,
        wanted: int,
        asker: Asker = NOBODY,
    ) -> tuple[str, ResultSet, bool]:
        """The first ``wanted`` hits of a query on a partition without counting the rest (the
        engine's ``first``), and whether the total is exact: a result in the cache is, and a
        result that is exact goes into it."""
        return await self._evaluate(partition, query, strategy, hard_boundary, asker, wanted)

    async def _evaluate(
        self,
        partition: str,
        query: str,
        strategy: Strategy,
        hard_boundary: int,
        asker: Asker,
        wanted: int | None,
    ) -> tuple[str, ResultSet, bool]:
        engine = self.engine(partition)
        text, parsed = self.check(query)
        key = (engine.corpus_id, text, strategy, hard_boundary)
        cached = self.cache.get(key)
        if cached is not None:
            if self.metrics is not None:
                self.metrics.cache_hits.labels(partition).inc()
            return text, cached, True
        refused = self.refused.get(key)
        if refused is not None:
            raise LimitExceeded(refused)
        if self.metrics is not None:
            self.metrics.queries.labels(partition).inc()

        def work(deadline: Deadline) -> tuple[ResultSet, bool]:
            try:
                if wanted is None:
                    return engine.run(parsed, strategy, hard_boundary, deadline), True
                return engine.first(parsed, wanted, strategy, hard_boundary, deadline)
            except MemoryError as exc:  # the query asked for more than this process can hold
                raise OutOfMemory("the query needs more memory than this node has; narrow it down") from exc

        try:
            result, exact = await self.scheduler.run(work, self.settings.query_timeout, _watching(asker), asker)
        except OutOfMemory:
            raise  # what the node held then, not what the query is: not remembered
        except LimitExceeded as refusal:
            self.refused.put(key, refusal.detail)
            raise
        if exact and key not in self.cache:  # (one evaluated meanwhile stays: sort orders may hold it)
            self.cache.put(key, result)
        return text, result, exact

    async def estimate(self, partition: str, query: str, strategy: Strategy,
                       hard_boundary: int, asker: Asker = NOBODY) -> tuple[str, Estimate]:
        """What the query would find and cost (the engine's ``estimate``); a result in the cache is
        known exactly and costs nothing more."""
        engine = self.engine(partition)
        text, parsed = self.check(query)
        key = (engine.corpus_id, text, strategy, hard_boundary)
        cached = self.cache.get(key)
        if cached is not None:
            return text, Estimate(cached.total, True, 0.0, None, 1.0)
        known = self.estimates.get(key)
        if known is not None:
            return text, known

        def work(deadline: Deadline) -> Estimate:
            return engine.estimate(parsed, strategy, hard_boundary, deadline)

        found = await self.scheduler.run(work, self.settings.query_timeout, _watching(asker), asker, probe=True)
        if found.repeatable:
            self.estimates.put(key, found)
        return text, found

    def check_request(self, limit: int, maximum: int, context: Context) -> None:
        if limit > maximum:
            raise LimitExceeded(f"limit {limit} is more than this node returns at once ({maximum})")
        if context.tokens > self.settings.max_context_tokens:
            raise LimitExceeded(
                f"context of {context.tokens} tokens is wider than allowed ({self.settings.max_context_tokens})"
            )

    async def lines(
        self, asker: Asker, result: ResultSet, offset: int, limit: int, context: Context, show: list[str],
        meta: list[str]
    ) -> list[KwicLine]:
        return await self.in_thread(asker, result.kwic, offset, limit, context, show, meta)

    @staticmethod
    def every_hit(result: ResultSet) -> ArrayResultSet:
        """The result with every hit held: an analysis counts all of them, never the first ones only."""
        if not isinstance(result, ArrayResultSet):  # both engines hold hits as arrays
            raise TypeError(f"an analysis needs hits as arrays, not {type(result).__name__}")
        if result.held < result.total:
            raise LimitExceeded(
                f"this query has {result.total:,} hits on this partition and the node keeps {result.held:,} "
                "(max_query_hits): an analysis needs every hit; narrow the query down"
            )
        return result

    async def order(self, result: ResultSet, spec: SortSpec, asker: Asker = NOBODY) -> SortOrder:
        """The hits of a result in sorted order (kept for paging, as results are)."""
        key = parse_sort(spec.key, spec.direction, spec.seed)
        if key.gdex is not None and spec.gdex is not None:
            key = replace(key, gdex=spec.gdex)  # the corpus's rules and common words, as the front end sends them
        held = self.every_hit(result)
        cache_key: OrderKey = (result, str(key), spec.direction, spec.seed, spec.base, key.gdex)
        cached = self.orders.get(cache_key)
        if cached is not None:
            return cached
        order = await self.analyse(asker, sort_order, held.corpus, held.matches, key, spec.base, self.kept)
        self.orders.put(cache_key, order)
        return order

    async def sorted_lines(
        self, asker: Asker, order: SortOrder, ranks: list[int], context: Context, show: list[str], meta: list[str]
    ) -> list[KwicLine]:
        """The lines of the hits at these sorted ranks, in that order."""

        def build() -> list[KwicLine]:
            picked = order.order[ranks] if ranks else order.order[:0]
            hits = ArrayResultSet(order.corpus, order.matches.take(picked)).hits()
            return build_lines(order.corpus, hits, context, show, meta)

        return await self.in_thread(asker, build)


def _watching(asker: Asker) -> Callable[[Deadline], Coroutine[Any, Any, None]]:
    """What watches an evaluation for ``asker``: it cancels the deadline once the client has gone."""

    async def watch(deadline: Deadline) -> None:
        disconnected = asker.disconnected
        if disconnected is None:
            return
        while not await disconnected():
            await asyncio.sleep(0.1)
        deadline.cancel()

    return watch

