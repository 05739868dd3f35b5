"""The query, checked once (:class:`CheckedQuery`), what each hit shows (:class:`HitView`) and a
hit found (:class:`Located`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Generic, Literal, cast

from cowbird.core.errors import BadParameter, UnknownAttribute
from cowbird.core.search.partitions import CorpusRef, P, no_attribute
from cowbird.core.wire import (
    DEFAULT_HARD_BOUNDARY,
    ContextSpec,
    ExportRequest,
    FirstRequest,
    HitsRequest,
    Line,
    RegionFilter,
    SortSpec,
    Strategy,
)
from cowbird.query import Comparison, ConstraintAnd, Meet, MuUnion, Query, Tabular, serialize
from cowbird.query.cqp_ast import marked_anchors


@dataclass(frozen=True)
class CheckedQuery:
    """A query parsed once: its AST and the canonical CQP text sent to every partition, with how CQP
    is to evaluate it (``MatchingStrategy``, ``HardBoundary``). A query's own modifier
    (``(?traditional) ...``) is its strategy, as in CQP. ``filters`` are the subcorpus the query's
    filters choose (each one a comparison on the match in its constraint too): the analyses count
    sizes, marginals and frequencies in it."""

    query: Query
    cqp: str
    strategy: Strategy = "standard"
    hard_boundary: int = DEFAULT_HARD_BOUNDARY
    filters: tuple[tuple[str, bool, str], ...] = ()  # (s-attribute, negated, regex): hashable as the rest

    @property
    def subcorpus(self) -> list[RegionFilter]:
        """The subcorpus of the query's filters as the nodes take it (none: the whole corpus)."""
        return [RegionFilter(attribute=a, negated=negated, pattern=pattern) for a, negated, pattern in self.filters]

    def __post_init__(self) -> None:
        if self.query.strategy is not None:
            object.__setattr__(self, "strategy", cast("Strategy", self.query.strategy))

    @classmethod
    def of(cls, query: Query, strategy: Strategy = "standard",
           hard_boundary: int = DEFAULT_HARD_BOUNDARY) -> CheckedQuery:
        return cls(query, serialize(query), strategy, hard_boundary)

    def _again(self, query: Query) -> CheckedQuery:
        return replace(CheckedQuery.of(query, self.strategy, self.hard_boundary), filters=self.filters)

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
            raise UnknownAttribute(f"context={self.region}: {no_attribute(corpus, 's', self.region)}; or give a "
                                   "number of tokens")
        for parameter, names in (("show", self.show), ("inline", self.inline)):
            for name in names:
                if name not in corpus.p_attributes:
                    raise UnknownAttribute(f"{parameter}={name}: {no_attribute(corpus, 'p', name)}")
        for parameter, names in (("meta", self.meta), ("boundaries", self.marks)):
            for name in names:
                if name not in corpus.s_attributes:
                    raise UnknownAttribute(f"{parameter}={name}: {no_attribute(corpus, 's', name)}")

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
