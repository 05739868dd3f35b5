"""The engine interface shared by the native engine and the ``cwb`` engine (real CQP).

An engine serves one corpus (a partition). ``run`` evaluates a CQP query once into a
:class:`ResultSet` holding just the hits as arrays; concordance lines are built on demand for
the slice a caller asks for, so a preview costs the exact total plus 100 lines.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar, cast

from cowbird.core.errors import QueryCancelled, QueryTimeout
from cowbird.core.wire import DEFAULT_HARD_BOUNDARY, EngineName, Strategy
from cowbird.query import Query, parse_cqp
from cowbird.store import CwbCorpus


@dataclass(frozen=True)
class EngineOptions:
    """Tunables of an engine, set from the node's settings.

    ``threads``: threads a query's ranges (or one large step) are evaluated on; ``resident_budget``:
    resident bytes above which a corpus releases its mapped pages after a query (if they are half
    of it: mapped corpus pages are page cache the kernel reclaims by itself, and each page released
    is faulted in again by the next query that reads it); ``regex_seconds``: longest one regex may
    run over a lexicon (the node keeps it within its query timeout);
    ``cqp_binary``: the ``cqp`` the cwb engine runs (default: the one on PATH);
    ``max_hits``: hits a result keeps for paging and exports (24 bytes each) — past it, the total
    is still counted exactly, but hits beyond are refused with ``limit_exceeded``;
    ``chunk_positions``: a corpus larger than this is evaluated range by range of start positions,
    so that memory follows the range, not the corpus; ``work_seconds``: a query whose certain work
    (candidates that cannot fail a test, such as ``[]{3,} []{500}``, stepped through every state) is
    estimated to take longer than this is refused before it runs (None: no estimate);
    ``automaton``: which simulation the native engine runs — ``auto`` (CQP's own DFA where paths
    of the query can meet with different positions or labels, the faster glushkov automaton
    elsewhere), ``cqp`` (CQP's DFA wherever CQP can build one) or ``glushkov``.
    """

    threads: int = 2
    resident_budget: int = 4 * 1024 * 1024 * 1024
    regex_seconds: float = 10.0
    cqp_binary: str | None = None
    max_hits: int = 20_000_000
    chunk_positions: int = 8 * 1024 * 1024
    work_seconds: float | None = None
    automaton: str = "auto"


class Deadline:
    """A query's time budget; engines call :meth:`check` between units of work and stop.

    ``pace`` (if given) is called at every check too: the node uses it to let a query that has
    run long step aside for short ones (``cowbird.node.scheduler``).
    """

    def __init__(self, seconds: float | None = None, pace: Callable[[], None] | None = None) -> None:
        self.seconds = seconds
        self.at = time.monotonic() + seconds if seconds is not None else None
        self.cancelled = False
        self.pace = pace

    def remaining(self) -> float | None:
        """Seconds left (None: no limit)."""
        return None if self.at is None else max(0.0, self.at - time.monotonic())

    def cancel(self) -> None:
        """Stop the work at the next check (the client went away)."""
        self.cancelled = True

    def check(self) -> None:
        """Stop (``QueryTimeout``) if the client went away or the time is up; else let ``pace`` run."""
        self.check_time()
        if self.pace is not None:
            self.pace()

    def check_time(self) -> None:
        if self.cancelled:
            raise QueryCancelled("the query was cancelled: the client went away")
        if self.at is not None and time.monotonic() > self.at:
            raise QueryTimeout(f"the query took longer than {self.seconds:g} s and was stopped")


@dataclass(frozen=True)
class Context:
    """How much context a concordance line gets: ``tokens`` each side, or up to a region's edges.

    With ``region`` (e.g. ``s``) the context runs to the start and end of the enclosing region,
    but never beyond ``tokens`` (when ``tokens`` is given) — so a runaway region stays bounded.
    """

    tokens: int = 10
    region: str | None = None
    marks: tuple[str, ...] = ()  # s-attributes whose region boundaries inside the line are reported


@dataclass(frozen=True)
class Estimate:
    """What a query would find and cost on a partition, known before it runs (``QueryEngine.estimate``).

    ``hits``: the estimated number of hits (None: this engine or query cannot be estimated); ``exact``:
    the query was cheap enough to count outright; ``seconds``: the estimated time of the whole
    evaluation; ``candidates``: at most how many start positions the evaluation reads; ``sampled``:
    the share of the partition read for the estimate (1.0: all of it); ``repeatable``: the same query
    on the same partition would be estimated alike (False: the estimate was cut short by its time on
    the clock, which says how busy the node was, not what the query is)."""

    hits: int | None
    exact: bool
    seconds: float | None
    candidates: int | None = None
    sampled: float = 0.0
    repeatable: bool = True


@dataclass(frozen=True)
class Hit:
    """One match: corpus positions, ``matchend`` inclusive, as CQP reports them; ``target`` and
    ``keyword`` are the anchors set by ``@[...]`` and ``@1[...]`` (None where unset)."""

    match: int
    matchend: int
    target: int | None = None
    keyword: int | None = None


@dataclass(frozen=True)
class KwicLine:
    """A concordance line: tokens as value lists (one value per shown p-attribute, word first)."""

    hit: Hit
    left: list[list[str]]
    keyword: list[list[str]]
    right: list[list[str]]
    meta: dict[str, str | None] = field(default_factory=dict)
    left_start: int = 0  # cpos of the first left-context token
    # per s-attribute of ``Context.marks``: the tokens (0-based over left, keyword and right) that a
    # boundary of its regions comes before — another region begins, or the last one ended
    breaks: dict[str, list[int]] = field(default_factory=dict)


class ResultSet(ABC):
    """The hits of one query on one corpus, in corpus order."""

    @property
    @abstractmethod
    def total(self) -> int:
        """The exact number of hits."""

    @property
    @abstractmethod
    def held(self) -> int:
        """How many hits, from the first, are held for reading (at most ``total``)."""

    @property
    def weight(self) -> int:
        """What the held hits cost in a result cache, in hits of 24 bytes (match, matchend, target)."""
        return self.held

    @abstractmethod
    def hits(self, offset: int = 0, limit: int | None = None) -> list[Hit]: ...

    @abstractmethod
    def kwic(
        self,
        offset: int,
        limit: int,
        context: Context,
        show: list[str],
        meta: list[str],
    ) -> list[KwicLine]: ...


class QueryEngine(ABC):
    """Runs checked CQP query text on one corpus."""

    name: ClassVar[EngineName]

    @property
    @abstractmethod
    def store(self) -> CwbCorpus:
        """The memory-mapped corpus both engines build lines and analyses from (and its names)."""

    @property
    def corpus_id(self) -> str:
        return self.store.corpus_id

    @property
    def size(self) -> int:
        return self.store.size

    @property
    def p_attributes(self) -> list[str]:
        return list(self.store.entry.p_attributes)

    @property
    def s_attributes(self) -> list[str]:
        return list(self.store.entry.s_attributes)

    @property
    def meta_attributes(self) -> list[str]:
        """The s-attributes whose regions carry values (``text_url``): what ``meta`` may name."""
        return self.store.meta_attribute_names

    # run, first and estimate take CQP text or a query parsed already (a node parses each query once):
    # they parse it here and leave the work to _run, _first and _estimate, which get it parsed

    def run(self, query: str | Query, strategy: Strategy = "standard", hard_boundary: int = DEFAULT_HARD_BOUNDARY,
            deadline: Deadline | None = None) -> ResultSet:
        """Evaluate a query; ``deadline`` stops the work when the time is spent."""
        parsed = _parsed(query)
        return self._run(parsed, strategy_of(parsed, strategy), hard_boundary, deadline)

    @abstractmethod
    def _run(self, query: Query, strategy: Strategy, hard_boundary: int, deadline: Deadline | None) -> ResultSet: ...

    def first(self, query: str | Query, wanted: int, strategy: Strategy = "standard",
              hard_boundary: int = DEFAULT_HARD_BOUNDARY, deadline: Deadline | None = None) -> tuple[ResultSet, bool]:
        """At least the first ``wanted`` hits (all when there are fewer), and whether the result's total
        is the exact count (False: the hits found so far, the rest not counted)."""
        parsed = _parsed(query)
        return self._first(parsed, wanted, strategy_of(parsed, strategy), hard_boundary, deadline)

    def _first(self, query: Query, wanted: int, strategy: Strategy, hard_boundary: int,
               deadline: Deadline | None) -> tuple[ResultSet, bool]:
        """An engine that cannot stop early evaluates the whole query: its total is exact."""
        return self.run(query, strategy, hard_boundary, deadline), True

    def estimate(self, query: str | Query, strategy: Strategy = "standard",
                 hard_boundary: int = DEFAULT_HARD_BOUNDARY, deadline: Deadline | None = None) -> Estimate:
        """What the query would find and cost, without running all of it."""
        parsed = _parsed(query)
        return self._estimate(parsed, strategy_of(parsed, strategy), hard_boundary, deadline)

    def _estimate(self, query: Query, strategy: Strategy, hard_boundary: int, deadline: Deadline | None) -> Estimate:
        """An engine that cannot tell says so (``hits`` and ``seconds`` None)."""
        return Estimate(None, False, None)

    def count(self, query: str, strategy: Strategy = "standard") -> int:
        return self.run(query, strategy).total

    def hits(
        self, query: str, offset: int = 0, limit: int | None = None, strategy: Strategy = "standard"
    ) -> list[Hit]:
        return self.run(query, strategy).hits(offset, limit)

    @abstractmethod
    def context(
        self, cpos: int, context: Context, show: list[str], meta: list[str], end: int | None = None
    ) -> KwicLine:
        """The line around one position (static links): ``cpos`` .. ``end`` (default ``cpos``) is the keyword."""


def strategy_of(query: Query, strategy: Strategy) -> Strategy:
    """The matching strategy a query runs with: its embedded modifier (``(?longest) ...``) before the one
    asked for, as in CQP."""
    return cast("Strategy", query.strategy) if query.strategy is not None else strategy


def _parsed(query: str | Query) -> Query:
    return parse_cqp(query) if isinstance(query, str) else query
