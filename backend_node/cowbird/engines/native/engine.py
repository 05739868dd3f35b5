"""The native engine: CQP over CWB-format files with numpy, no CWB installation needed.

Stages: ``compile.py`` (AST -> automaton and lexicon tables), ``plan.py`` (candidate starts and
their boundaries), ``simulate.py`` (all candidates stepped through the automaton together, with
``registers.py`` for labels, anchors and entered regions), ``strategy.py`` (merge, matching
strategy, cut, expand); the hits go into the shared ``engines/results.py`` (concordance lines
for just the slice asked for). ``corpus_state.py`` and the store's ``lexicon.py`` hold the per-corpus state.
"""

from __future__ import annotations

import gc
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from itertools import islice
from pathlib import Path

import numpy as np

from cowbird.core.errors import InvalidOption, QueryFailed, UnknownAttribute
from cowbird.core.wire import DEFAULT_HARD_BOUNDARY, STRATEGIES, Strategy
from cowbird.engines.base import (
    Context,
    Deadline,
    EngineOptions,
    Estimate,
    KwicLine,
    QueryEngine,
    ResultSet,
    strategy_of,
)
from cowbird.engines.native.compile import Automaton, AutomatonBuilder, PredicateCompiler, can_match
from cowbird.engines.native.constraint import ConstraintEvaluator
from cowbird.engines.native.cooccurrence import cooccurrences
from cowbird.engines.native.corpus_state import NativeCorpus
from cowbird.engines.native.dfa import DfaUnavailable, build_dfa, paths_may_meet, reads_labels
from cowbird.engines.native.dfa_simulate import DfaRunner
from cowbird.engines.native.plan import SearchSpace
from cowbird.engines.native.simulate import PassRunner, RunSetup, WorkBudget
from cowbird.engines.native.strategy import (
    Expansion,
    StreamingExpand,
    StreamingStrategy,
    apply_strategy,
    expand,
    first,
    merge,
)
from cowbird.engines.results import ArrayResultSet, Matches, context_line
from cowbird.query import Meet, MuUnion, Pattern, Query, Tabular, parse_cqp
from cowbird.store import CwbCorpus


class _Kept:
    """The first ``limit`` matches (all when None), and how many there were."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self.parts: list[Matches] = []
        self.held = 0
        self.total = 0

    def add(self, found: Matches) -> None:
        self.total += len(found)
        room = len(found) if self.limit is None else min(len(found), self.limit - self.held)
        if room > 0:
            self.parts.append(found if room == len(found) else first(found, room))
            self.held += room

    def matches(self) -> Matches:
        return self.parts[0] if len(self.parts) == 1 else Matches.concatenate(self.parts)


def _kept(matches: Matches, limit: int | None) -> Matches:
    return matches if limit is None or len(matches) <= limit else first(matches, limit)


CUT_FIRST_RANGE = 1 << 16
"""Start positions a ``cut`` query reads first; each further range is twice as wide."""
ESTIMATE_RANGE = 1 << 16
"""Start positions in each range an estimate evaluates."""
ESTIMATE_RANGES = 32
"""At most this many ranges are evaluated for an estimate."""
ESTIMATE_WHOLE = 1 << 18
"""A query with at most this many candidates is counted outright for its estimate."""
ESTIMATE_FIRST = 1 << 10
"""Start positions the first range of an outright count reads (each further range is twice as wide): the
range a hopeless query is stopped in holds little (three labels over two ``[]{0,60}``: 65,536 starts took
775 MB and 2 s before the first check), and a query slow at every start is still read in part and so
bounded (``[] []{0,400} [word="w7"] [word="w7"]``: none of 16,384 starts in its second, 15 % of 1,024 and on)."""
ESTIMATE_SECONDS = 1.0
"""An estimate's own time (CPU time of its thread): a count or sample that takes longer stops there, and
the estimate says so — scaled up from what it read, or, when it read nothing, no hits (``_estimate``)."""
ESTIMATE_WALL = 8.0
"""An estimate's time on the clock is at most this many times its own (CPU) time: on a busy node (four
estimates at once on two cores shared with other work got a third of a second each in 5 s) it still
reads its sample, and answers within the tenth of the front end's time limit it is given (12 s)."""
PARALLEL_GAIN = 0.8
"""What each thread beyond the first adds to the speed of ranges evaluated side by side (for estimates:
1.4-2.6x with two threads on BIG50's heavy queries, ``bench/engine.py``)."""
WARM_FOLDED_TYPES = 1 << 20
"""Lexicons of at most this many types get their diacritics-folded views at start (``warm``)."""
PARALLEL_CANDIDATES = 1 << 18
"""A query with at least this many candidates is counted in as many ranges as the engine has threads
(``EngineOptions.threads``), evaluated side by side, even when one range would hold them."""
FIRST_WHOLE = 1 << 16
"""A query with at most this many candidates is evaluated whole by ``NativeEngine.first`` (exact): a
few milliseconds; with more, reading the first range is faster (``bench/progressive.py``)."""
FIRST_RANGE = 1 << 20
"""Start positions ``NativeEngine.first`` reads first; each further range is twice as wide (up to
``chunk_positions``)."""


def _doubling(size: int, first: int, most: int) -> Iterator[tuple[int, int]]:
    """Ranges ``[lo, hi)`` covering ``0 .. size``: ``first`` positions wide, then twice as wide each
    time, at most ``most``."""
    lo, step = 0, max(1, first)
    while lo < size:
        hi = min(size, lo + step)
        yield lo, hi
        lo, step = hi, min(max(1, most), step * 2)


class _Spent(Exception):
    """An estimate's own time is up (``_EstimateBudget``)."""


class _EstimateBudget(Deadline):
    """The query's deadline (time limit, cancel) and, within it, the estimate's own time: ``seconds`` of
    CPU time of each thread it runs on (four estimates at once on two busy cores each get their second
    of work), and ``ESTIMATE_WALL`` times as long on the clock at most."""

    def __init__(self, outer: Deadline, seconds: float) -> None:
        super().__init__(seconds * ESTIMATE_WALL, outer.pace)
        self.outer = outer
        self.cpu = seconds
        self.began: dict[int, float] = {}  # each thread's CPU clock when it first checked
        self.by_clock = False  # cut short by its time on the clock (a busy node), not by its own time

    def check_time(self) -> None:
        self.outer.check_time()
        if self.at is not None and time.monotonic() > self.at:
            self.by_clock = True
            raise _Spent
        now = time.thread_time()
        if now - self.began.setdefault(threading.get_ident(), now) > self.cpu:
            raise _Spent


class NativeEngine(QueryEngine):
    """Runs CQP queries on one corpus with the native (numpy) evaluator."""

    name = "native"

    def __init__(self, corpus: CwbCorpus, options: EngineOptions | None = None) -> None:
        corpus.check_readable(reverse_index=True)
        self.options = options or EngineOptions()
        self.corpus = NativeCorpus(corpus, self.options)

    @classmethod
    def open(cls, registry_dir: Path, corpus_id: str, options: EngineOptions | None = None) -> NativeEngine:
        return cls(CwbCorpus.open(registry_dir, corpus_id), options)

    @property
    def store(self) -> CwbCorpus:
        return self.corpus.store

    def warm(self) -> None:
        """Build the per-corpus state queries share (decoded lexicons, their sorted and folded views,
        the buffers regexes scan, region arrays), then run a query of each kind on the first hits,
        so that the first queries do not pay for any of it (nor for what the process loads on first
        use: numpy's lazily imported modules, the compiled loops); a node does this at start."""
        parse_cqp('[word="x"]')  # builds the parser once per process
        for name in self.p_attributes:
            lexicon = self.corpus.lexicon(name)
            lexicon.ids  # noqa: B018 - a cached property: building it is the point
            folds = (False, True) if len(lexicon.strings) <= WARM_FOLDED_TYPES else (False,)
            for ignore_diacritics in folds:  # %d folds every string: on large lexicons, on first use only
                for ignore_case in (False, True):
                    lexicon.sorted_view(ignore_case, ignore_diacritics)
                lexicon.buffer(ignore_diacritics)
            self.corpus.frequencies(name)
        for name in self.s_attributes:
            self.corpus.regions(name)
        for query in self._warm_queries():
            result, _ = self.first(query, 100)
            result.kwic(0, 100, Context(10), self.p_attributes, [])
        # what was built here lives as long as the process: the garbage collector need not walk it
        # again (a full collection over the lexicons' lists took ~100 ms, at any query's allocation)
        gc.collect()
        gc.freeze()

    def _warm_queries(self) -> list[str]:
        """A query of each kind the engine answers differently (a word, a regex over the lexicon by
        prefix and by scan, case and diacritics folded, a fixed sequence, a gap, a loop, regions,
        ``expand``), built from the corpus's most frequent plain word."""
        if self.size == 0:
            return []
        attribute = self.p_attributes[0]
        lexicon = self.corpus.lexicon(attribute)
        frequencies = self.corpus.frequencies(attribute)
        top = np.argpartition(-frequencies, 99)[:100] if len(frequencies) > 100 else np.arange(len(frequencies))
        frequent = top[np.argsort(-frequencies[top], kind="stable")].tolist()  # no sort of a whole large lexicon
        words = [lexicon.strings[i] for i in frequent if lexicon.strings[i].isalnum()]
        if not words:
            return []
        a, w = attribute, words[0]
        queries = [f'[{a}="{w}"]', f'[{a}="{w}"%cd]', f'[{a}="{w[0]}.*"]', f'[{a}=".{{12,}}"]',
                   f'[{a}="{w}"] [] [{a}="{w}"]', f'[{a}="{w}"] []* [{a}="{w}"]', f'[{a}="{w}"]+ [{a}!="{w}"]']
        if self.s_attributes:
            region = self.s_attributes[-1]
            queries += [f'<{region}> [{a}="{w}"]', f'[{a}="{w}"] expand to {region}']
        return queries

    def _run(self, query: Query, strategy: Strategy, hard_boundary: int, deadline: Deadline | None) -> ResultSet:
        matches, total = self.evaluate_counted(query, strategy, hard_boundary, deadline)
        self.corpus.trim()
        return ArrayResultSet(self.corpus.store, matches, total)

    def evaluate(self, query: Query, strategy: Strategy = "standard", hard_boundary: int = DEFAULT_HARD_BOUNDARY,
                 deadline: Deadline | None = None) -> Matches:
        """All matches of a parsed query, in corpus order (however many there are)."""
        matches, _ = self.evaluate_counted(query, strategy, hard_boundary, deadline, max_hits=None)
        return matches

    def evaluate_counted(self, query: Query, strategy: Strategy, hard_boundary: int, deadline: Deadline | None,
                         max_hits: int | None = -1) -> tuple[Matches, int]:
        """The first ``max_hits`` matches (default: the engine's ``max_hits``; None: all) and the
        exact number of matches. A query that may have more than ``chunk_positions`` candidates is
        evaluated range by range of start positions, so that memory follows the range and the hits
        kept, not the corpus; one with fewer (a rare word) is evaluated at once, which costs less."""
        deadline = deadline or Deadline()
        keep = self.options.max_hits if max_hits == -1 else max_hits
        strategy = strategy_of(query, strategy)  # (?longest) ...: the query's own
        self._check(query, strategy)
        if isinstance(query.pattern, Meet | MuUnion | Tabular):  # MU and TAB queries: no automaton
            matches = cooccurrences(self.corpus, query, hard_boundary)
            return _kept(matches, keep), len(matches)
        runner = self._prepared(query, strategy, hard_boundary, deadline)
        if runner is None:
            return Matches.empty(), 0
        if query.cut is not None:
            matches = self._cut(query, runner, runner.passes, strategy, query.cut)
            return _kept(matches, keep), len(matches)
        kept = _Kept(keep)
        step = max(1, self.options.chunk_positions)
        candidates = sum(runner.plan.candidate_bound(symbol) for symbol in runner.passes)
        if candidates <= step:
            # candidates bound the memory already: one range, or one per thread when there is work to share
            parts = self.options.threads if candidates >= PARALLEL_CANDIDATES else 1
            step = max(1, -(-self.size // max(1, parts)))
        ranges = [(lo, min(self.size, lo + step)) for lo in range(0, self.size, step)]
        runner.plan.tests.whole = True  # every range is read: a test may pay for a bitmap made once
        for found in self._scan(query, runner, strategy, ranges, deadline, parallel=len(ranges) > 1):
            kept.add(found)
        return kept.matches(), kept.total

    def stream(self, query: Query, strategy: Strategy = "standard", hard_boundary: int = DEFAULT_HARD_BOUNDARY,
               deadline: Deadline | None = None, positions: int | None = None) -> Iterator[tuple[Matches, int]]:
        """All matches of a parsed query piece by piece, in corpus order, each piece with a floor: no
        later piece has a match that starts before it (so none has an anchor before it). The pieces
        are ranges of ``positions`` start positions (default ``chunk_positions``): memory follows one
        range's matches, not the corpus's. A query with ``cut`` or ``expand`` (whose matches a later
        range may still change), and MU and TAB queries, come as one piece."""
        deadline = deadline or Deadline()
        strategy = strategy_of(query, strategy)
        self._check(query, strategy)
        if isinstance(query.pattern, Meet | MuUnion | Tabular) or query.cut is not None \
                or self._expansion(query) is not None:
            yield self.evaluate(query, strategy, hard_boundary, deadline), self.size
            return
        runner = self._prepared(query, strategy, hard_boundary, deadline)
        if runner is None:
            return
        step = max(1, positions or self.options.chunk_positions)
        ranges = [(lo, min(self.size, lo + step)) for lo in range(0, self.size, step)]
        runner.plan.tests.whole = True  # every range is read: a test may pay for a bitmap made once
        held = StreamingStrategy(strategy)
        for hi, passes in self._passes(runner, ranges, deadline, parallel=len(ranges) > 1):
            found = held.feed(merge(passes), hi)
            # shortest holds matches back until a later range cannot drop them: they start before hi
            yield found, min(hi, int(held.pending.match.min())) if len(held.pending) else hi
        yield held.finish(), self.size

    def _estimate(self, query: Query, strategy: Strategy, hard_boundary: int, deadline: Deadline | None) -> Estimate:
        """Hits and time of a query from its plan and a sample of the partition: a query whose
        candidates (the lexicon frequencies of its anchors bound them) are few is counted outright;
        otherwise up to ``ESTIMATE_RANGES`` ranges spread over the partition, ``ESTIMATE_RANGE`` and
        half as many positions wide in turn (about 1 % of it, at least 4 ranges, at most 32), are
        evaluated: the hits are scaled up, the time is a whole evaluation's ranges and positions at
        the cost per range and per position the two widths give. A ``cut N`` query is the query
        without it, stopped after N hits: at most N of its hits, in the share of its time that finding
        N of them takes. MU and TAB queries are not estimated. An estimate takes at most about
        ``ESTIMATE_SECONDS`` of CPU time (``ESTIMATE_WALL`` times that on the clock at most), checked at every
        step of its simulation: an outright count that takes longer is scaled up from the ranges it
        counted (``_counted``), a sample from what it read; a query of which nothing could be read in
        that time (a hopeless query) gets no hits and, as seconds, what it took (the front end refuses
        it: its cost has no bound)."""
        deadline = deadline or Deadline()
        self._check(query, strategy)
        if isinstance(query.pattern, Meet | MuUnion | Tabular):
            return Estimate(None, False, None)
        if query.cut is not None:
            whole = self.estimate(replace(query, cut=None), strategy, hard_boundary, deadline)
            if whole.hits is None or whole.seconds is None:
                return whole
            wanted = max(0, query.cut)
            share = 1.0 if whole.hits <= wanted else wanted / whole.hits  # a cut stops reading once it has them
            return replace(whole, hits=min(wanted, whole.hits), exact=whole.exact and whole.hits <= wanted,
                           seconds=whole.seconds * share)
        started = time.thread_time()  # its work is this thread's: CPU time, whatever else the node runs
        # the sample's simulation checks the estimate's own time at every step, not only the query's:
        # one range of a hopeless query (three labels over two wide repetitions) took 53 s
        budget = _EstimateBudget(deadline, ESTIMATE_SECONDS)
        found = self._sampled(query, strategy, hard_boundary, budget, started)
        return replace(found, repeatable=not budget.by_clock)

    def _sampled(self, query: Query, strategy: Strategy, hard_boundary: int, budget: _EstimateBudget,
                 started: float) -> Estimate:
        """The estimate of ``_estimate`` within its budget (``started``: its thread's CPU clock then)."""
        try:
            runner = self._prepared(query, strategy, hard_boundary, budget)
        except _Spent:
            return Estimate(None, False, time.thread_time() - started, None, 0.0)
        if runner is None:
            return Estimate(0, True, time.thread_time() - started, 0, 1.0)
        candidates = sum(runner.plan.candidate_bound(symbol) for symbol in runner.passes)
        count = min(ESTIMATE_RANGES, max(4, self.size // (ESTIMATE_RANGE * 100)))
        if candidates <= ESTIMATE_WHOLE or self.size <= 2 * count * ESTIMATE_RANGE:
            return self._counted(query, runner, strategy, budget, started, candidates)
        setup = time.thread_time() - started
        # ranges of two widths, taking turns: what a range costs whatever its width (a) and what each
        # position costs (b), so that the time of a whole evaluation (few wide ranges) is not taken
        # for that many narrow ones
        found = sampled = 0
        spent = {ESTIMATE_RANGE // 2: 0.0, ESTIMATE_RANGE: 0.0}
        for k in range(count):
            width = ESTIMATE_RANGE if k % 2 else ESTIMATE_RANGE // 2
            lo = k * self.size // count
            hi = min(self.size, lo + width)
            began = time.thread_time()
            try:
                found += sum(len(m) for m in self._scan(query, runner, strategy, [(lo, hi)], budget))
            except _Spent:  # the sample read so far (and the range begun) took the estimate's time
                took = time.thread_time() - started
                hits = round(found * self.size / sampled) if sampled else None  # None: nothing read in time
                return Estimate(hits, False, took * self.size / (sampled + hi - lo), candidates, sampled / self.size)
            spent[width] += time.thread_time() - began
            sampled += hi - lo
        narrow, wide = (spent[w] / (count // 2) for w in (ESTIMATE_RANGE // 2, ESTIMATE_RANGE))
        per_position = max(0.0, wide - narrow) / (ESTIMATE_RANGE // 2)
        per_range = max(0.0, narrow - per_position * (ESTIMATE_RANGE // 2))
        step = max(1, self.options.chunk_positions)
        threads = max(1, self.options.threads)
        if candidates <= step:  # a whole evaluation's ranges (evaluate_counted), and how many run at once
            ranges = threads if candidates >= PARALLEL_CANDIDATES else 1
        else:
            ranges = -(-self.size // step)
        at_once = min(threads, ranges)
        seconds = setup + (ranges * per_range + self.size * per_position) / (1 + PARALLEL_GAIN * (at_once - 1))
        return Estimate(round(found * self.size / sampled), False, seconds, candidates, sampled / self.size)

    def _counted(self, query: Query, runner: PassRunner | DfaRunner, strategy: Strategy, budget: _EstimateBudget,
                 started: float, candidates: int) -> Estimate:
        """The estimate of a query counted outright, range after range from the start (``ESTIMATE_FIRST``
        positions, then twice as wide each time): exact when it is counted within the estimate's time;
        else the hits and the time scaled up from the ranges counted by then, and when not even the
        first was (a hopeless query), no hits and as seconds what it took: the query could not be
        bounded in time (``EstimateResponse``)."""
        ranges = list(_doubling(self.size, ESTIMATE_FIRST, self.size))
        found = done = 0
        try:
            for k, matches in enumerate(self._scan(query, runner, strategy, ranges, budget)):
                found += len(matches)
                done = ranges[k][1] if k < len(ranges) else self.size  # (then what the strategy held back)
        except _Spent:
            took = time.thread_time() - started
            if done == 0 or done >= self.size:  # nothing counted in time (or only what the strategy held back)
                return Estimate(None, False, took, candidates, 0.0)
            return Estimate(round(found * self.size / done), False, took * self.size / done, candidates,
                            done / self.size)
        return Estimate(found, True, time.thread_time() - started, candidates, 1.0)

    def _check(self, query: Query, strategy: Strategy) -> None:
        if strategy not in STRATEGIES:
            raise InvalidOption(f"unknown matching strategy {strategy!r} (use one of: {', '.join(STRATEGIES)})")
        for name in (query.within, query.expand):
            if name is not None and not self.corpus.has_s_attribute(name):
                raise UnknownAttribute(f"the corpus has no s-attribute {name!r}")

    def _prepared(self, query: Query, strategy: Strategy, hard_boundary: int,
                  deadline: Deadline) -> PassRunner | DfaRunner | None:
        """The simulation of a query with an automaton, or None when it matches nothing: a nullable
        pattern (CQP: "start state is final state", nothing is evaluated) or a test on every path
        that holds nowhere in the corpus. (MU and TAB queries have no automaton.)"""
        pattern = query.pattern
        assert not isinstance(pattern, Meet | MuUnion | Tabular)
        predicates = PredicateCompiler(self.corpus)
        automaton = AutomatonBuilder(self.corpus, predicates).build(pattern)
        if automaton.nullable:
            return None
        constraint = (
            ConstraintEvaluator(self.corpus, query.constraint, predicates) if query.constraint is not None else None
        )
        if not can_match(automaton, self.size):
            return None
        return self._runner(query, pattern, strategy, automaton, constraint, predicates, hard_boundary, deadline)

    def _scan(self, query: Query, runner: PassRunner | DfaRunner, strategy: Strategy,
              ranges: Iterable[tuple[int, int]], deadline: Deadline, parallel: bool = False) -> Iterator[Matches]:
        """The matches of the query range by range of start positions, in corpus order: each range
        yields the matches that no later range can change (the strategy holds back the others),
        the end what was held back. Stopping early leaves the first matches exact."""
        stream = StreamingStrategy(strategy)
        expansion = self._expansion(query)
        widen = StreamingExpand(expansion) if expansion is not None else None
        for hi, passes in self._passes(runner, ranges, deadline, parallel):
            found = stream.feed(merge(passes), hi)
            yield found if widen is None else widen.feed(found)
        held = stream.finish()
        yield held if widen is None else widen.feed(held)

    def _passes(self, runner: PassRunner | DfaRunner, ranges: Iterable[tuple[int, int]], deadline: Deadline,
                parallel: bool) -> Iterator[tuple[int, list[Matches]]]:
        """Each range's end and the matches of every pass starting in it, range after range. With
        ``parallel`` and more than one thread (``EngineOptions.threads``), ranges are evaluated that
        many at a time, each on a thread of its own (numpy and the compiled loops do their array work
        without the GIL), and handed on in order; at most that many ranges are held at once."""

        def evaluate(lo: int, hi: int) -> list[Matches]:
            passes = []
            for symbol in runner.passes:
                deadline.check()
                passes.append(runner.run(symbol, None, lo, hi))
            return passes

        todo = iter(ranges)
        threads = self.options.threads
        if not parallel or threads < 2:
            for lo, hi in todo:
                yield hi, evaluate(lo, hi)
            return
        runner.threads = 1  # the ranges use the threads: a pass is no longer split in halves
        pool = ThreadPoolExecutor(threads, thread_name_prefix="cowbird-range")
        try:
            window = deque((hi, pool.submit(evaluate, lo, hi)) for lo, hi in islice(todo, threads))
            while window:
                hi, future = window.popleft()
                passes = future.result()
                for lo, later in islice(todo, 1):
                    window.append((later, pool.submit(evaluate, lo, later)))
                yield hi, passes
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _first(self, query: Query, wanted: int, strategy: Strategy, hard_boundary: int,
               deadline: Deadline | None) -> tuple[ResultSet, bool]:
        """The first ``wanted`` hits without counting the rest: the corpus is read from its start,
        range by range (``FIRST_RANGE`` positions, then twice as many each time), until they are
        found. The result's total is the hits found so far — exact only when the second value is
        True (the whole partition was read). Queries that are not read range by range (MU, TAB,
        ``cut``, or few candidates) are evaluated whole: their total is exact."""
        deadline = deadline or Deadline()
        if isinstance(query.pattern, Meet | MuUnion | Tabular) or query.cut is not None:
            return self.run(query, strategy, hard_boundary, deadline), True
        self._check(query, strategy)
        runner = self._prepared(query, strategy, hard_boundary, deadline)
        if runner is None:
            return ArrayResultSet(self.corpus.store, Matches.empty(), 0), True
        if sum(runner.plan.candidate_bound(symbol) for symbol in runner.passes) <= FIRST_WHOLE:
            return self.run(query, strategy, hard_boundary, deadline), True  # few candidates: as cheap whole
        kept = _Kept(max(0, min(wanted, self.options.max_hits)))
        exact = True
        for found in self._scan(query, runner, strategy, _doubling(self.size, FIRST_RANGE,
                                                                     self.options.chunk_positions), deadline):
            kept.add(found)
            if kept.held >= wanted:
                exact = False
                break
        self.corpus.trim()
        return ArrayResultSet(self.corpus.store, kept.matches(), kept.total), exact

    def _runner(
        self, query: Query, pattern: Pattern, strategy: Strategy, automaton: Automaton,
        constraint: ConstraintEvaluator | None, predicates: PredicateCompiler, hard_boundary: int, deadline: Deadline,
    ) -> PassRunner | DfaRunner:
        """The simulation for this query: CQP's own DFA where the query's paths may meet with
        different positions or labels (``dfa.paths_may_meet``), else the glushkov automaton; CQP's
        DFA also where the options ask for it, unless CQP has none for the query (it refuses it)."""
        longest = strategy == "longest"
        on_finals, on_starts = RunSetup.split(constraint)
        setup = RunSetup(self.corpus, on_finals, SearchSpace.of(query), longest, hard_boundary,
                         threads=self.options.threads, deadline=deadline,
                         work=WorkBudget(self.options.work_seconds, self.size), start_constraint=on_starts)
        choice = self.options.automaton
        needed = reads_labels(pattern)
        if needed or choice == "cqp" or (choice == "auto" and paths_may_meet(pattern)):
            try:
                dfa = build_dfa(pattern)
            except DfaUnavailable as error:
                if needed:  # only CQP's DFA keeps the labels a token reads
                    raise QueryFailed(f"CQP cannot run this query ({error}), and a token in it reads labels, "
                                      "which needs CQP's automaton: simplify the repetitions or alternatives") from None
            else:
                patterns = AutomatonBuilder(self.corpus, predicates).patterns(pattern)
                return DfaRunner(setup, dfa, patterns)
        return PassRunner(setup, automaton)

    def _cut(
        self, query: Query, runner: PassRunner | DfaRunner, first_states: list[int], strategy: Strategy, cut: int
    ) -> Matches:
        """``cut N``: each pass stops after its first N successful starts, as CQP's passes do. A pass
        reads its candidates range by range (doubling from ``CUT_FIRST_RANGE`` positions), so that
        ``[word="the"] cut 5`` reads a few index entries, not every position of "the"."""
        passes = [first(merge([self._first_starts(runner, symbol, cut)]), cut) for symbol in first_states]
        matches = first(apply_strategy(merge(passes), strategy), cut)
        expansion = self._expansion(query)
        return matches if expansion is None else expand(matches, expansion)

    def _expansion(self, query: Query) -> Expansion | None:
        """The query's ``expand`` clause over this corpus, if it has one."""
        if query.expand is None and query.expand_tokens is None:
            return None
        regions = self.corpus.regions(query.expand) if query.expand is not None else None
        count = query.expand_count if query.expand is not None else query.expand_tokens or 0
        return Expansion(regions, count, query.expand_direction != "right", query.expand_direction != "left",
                         self.size)

    def _first_starts(self, runner: PassRunner | DfaRunner, symbol: int, cut: int) -> Matches:
        """At least the first ``cut`` matches of one pass (all matches of every candidate up to
        there), range by range, as ``runner.run`` with a limit gives them for the whole corpus."""
        found: list[Matches] = []
        total = 0
        lo, width = 0, CUT_FIRST_RANGE
        while lo < self.size and total < cut:
            hi = min(self.size, lo + width)
            part = runner.run(symbol, cut - total, lo, hi)
            found.append(part)
            total += len(part)
            lo, width = hi, width * 2
        return Matches.concatenate(found)

    def context(
        self, cpos: int, context: Context, show: list[str], meta: list[str], end: int | None = None
    ) -> KwicLine:
        return context_line(self.corpus.store, cpos, end, context, show, meta)
