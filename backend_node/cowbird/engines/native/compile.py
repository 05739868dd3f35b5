"""Stage 1, compile: the CQP AST becomes an automaton over token tests and tag assertions.

Every token pattern and every structural tag of the query is one automaton *state* (a Glushkov
automaton, whose literature calls them positions; here "position" always means a corpus position,
a cpos): ``first`` are the states a match can start with, ``follow[i]`` the states that may come
right after state ``i``, ``final`` those a match can end with. Bounded repetitions are unrolled
(``x{1,3}`` is ``x (x (x)?)?``, as CQP does), so states never carry counters.

Token conditions are compiled here too: each attribute test becomes a boolean table over the
attribute's lexicon (``cowbird.store.lexicon``), and tests on one attribute combined with ``&``, ``|``, ``!``
fold into one table, so a token test is usually a single gather and lookup. Each test also keeps
its test on a string (``Lookup.accepts``, ``RegionTest.accepts``): a partition's neighbour token
(``cowbird.store.neighbours``), which a lookahead at the partition's end reads, need not be in the
partition's lexicon, so ``holds_on`` evaluates the query's own test on its strings.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, assert_never

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import QueryTooExpensive, UnknownAttribute
from cowbird.engines.base import EngineOptions
from cowbird.engines.native.dfa import leaves
from cowbird.store.lexicon import BoolTable, LexiconIndex
from cowbird.store.neighbours import NeighbourToken

if TYPE_CHECKING:
    from cowbird.engines.native.corpus_state import RegionIndex
    from cowbird.engines.results import Cpos
from cowbird.query import cqp_ast as ast

MAX_STATES = 2000
"""Largest unrolled pattern; ``[]{0,100000}`` is refused rather than allocated."""


ValueTest = Callable[[Sequence[str]], npt.NDArray[np.bool_]]
"""A token test on strings (values of neighbour tokens, which no lexicon of the partition holds)."""


def value_test(corpus: CorpusView, value: ast.RegexValue, negated: bool) -> ValueTest:
    """``value`` (``!=`` with ``negated``) tested on each string, as on a lexicon (``match_table``)."""

    def accepts(texts: Sequence[str]) -> npt.NDArray[np.bool_]:
        matched = corpus.neighbour_matches(value, texts)
        return ~matched if negated else matched

    return accepts


def _never(texts: Sequence[str]) -> npt.NDArray[np.bool_]:
    return np.zeros(len(texts), dtype=np.bool_)


class CorpusView(Protocol):
    """What compilation needs to know about a corpus (the native engine's corpus state)."""

    size: int
    options: EngineOptions

    def lexicon(self, attribute: str) -> LexiconIndex: ...

    def match_table(self, attribute: str, value: ast.RegexValue) -> BoolTable: ...

    def frequencies(self, attribute: str) -> npt.NDArray[np.int64]: ...

    def region_table(self, attribute: str, value: ast.RegexValue | None) -> npt.NDArray[np.bool_] | None: ...

    def has_s_attribute(self, attribute: str) -> bool: ...

    def whole_table(
        self, attribute: str, value: ast.RegexValue
    ) -> tuple[int, npt.NDArray[np.bool_] | None, npt.NDArray[np.int64] | None] | None: ...

    def neighbour_matches(self, value: ast.RegexValue, texts: Sequence[str]) -> npt.NDArray[np.bool_]: ...

    def regions(self, attribute: str) -> RegionIndex: ...

    @property
    def p_attribute_names(self) -> list[str]: ...


# ---------------------------------------------------------------------------- token predicates


@dataclass(frozen=True)
class Lookup:
    """``table[id of attribute at cpos]``; ``count`` is how many corpus positions satisfy it."""

    attribute: str
    table: BoolTable = field(compare=False)
    count: int = field(compare=False)
    beyond: bool = field(default=False, compare=False)  # its value past the corpus end (see holds_beyond)
    accepts: ValueTest = field(default=_never, compare=False)  # the same test on a string (see holds_on)


@dataclass(frozen=True)
class AllOf:
    parts: tuple[Predicate, ...]


@dataclass(frozen=True)
class AnyOf:
    parts: tuple[Predicate, ...]


@dataclass(frozen=True)
class Negation:
    part: Predicate


@dataclass(frozen=True)
class Always:
    """``[]``: any token."""


@dataclass(frozen=True)
class RegionTest:
    """``_.text_year="2010"``: the token lies in a region of ``attribute`` whose value passes
    (``region_ok`` per region; outside every region the value is undefined and the test fails);
    ``count`` is how many corpus positions that covers."""

    attribute: str
    region_ok: npt.NDArray[np.bool_] = field(compare=False)
    count: int = field(compare=False)
    accepts: ValueTest = field(default=_never, compare=False)  # the same test on a region's value


@dataclass(frozen=True)
class SameValue:
    """``word = lemma``: ``same[id of left] == id of right`` (``same`` maps each left id to the right
    lexicon's id of the same string, -1 where the right lexicon lacks it); ``negated``: ``!=``."""

    left: str
    right: str
    negated: bool
    same: npt.NDArray[np.int64] = field(compare=False)


@dataclass(frozen=True)
class Bound:
    """``lbound(s)`` / ``rbound(s)`` (``right``): a region of ``attribute`` starts (ends) at the token."""

    attribute: str
    right: bool
    count: int = field(compare=False)


@dataclass(frozen=True)
class LabelPredicate:
    """A comparison that reads labels set by earlier tokens (``[lemma = a.lemma]``, ``[a.pos="NN"]``):
    ``check`` takes the position of each label in ``labels``, of ``_`` (the token itself) and of
    ``match``, -1 where unset, and says where the comparison holds (as a global constraint would)."""

    labels: tuple[str, ...]
    left_label: str  # the label read on the left ("" if none): CQP cannot start a match with such a token
    check: Callable[[dict[str, Cpos]], npt.NDArray[np.bool_]] = field(compare=False)


Predicate = Lookup | AllOf | AnyOf | Negation | Always | RegionTest | SameValue | Bound | LabelPredicate


def holds_beyond(predicate: Predicate) -> bool:
    """Whether the predicate holds just past the corpus end, where a lookahead at the last token's
    boundary looks (``[] [:!word="x":]``): CQP reads no value there, as for an unset label, so a value
    test holds as it would for one (``PredicateCompiler.unset_passes``: false, unless CQP compiled it to
    a constant true or an inverted list of ids), a region test fails, ``!`` negates, ``[::]`` holds.
    (``!word="x"`` folds into a table like ``word!="x"``; ``Lookup.beyond`` keeps them apart.)"""
    if isinstance(predicate, Lookup):
        return predicate.beyond
    if isinstance(predicate, Always):
        return True
    if isinstance(predicate, Negation):
        return not holds_beyond(predicate.part)
    if isinstance(predicate, AllOf):
        return all(holds_beyond(part) for part in predicate.parts)
    if isinstance(predicate, AnyOf):
        return any(holds_beyond(part) for part in predicate.parts)
    return False


def holds_on(predicate: Predicate, tokens: Sequence[NeighbourToken]) -> npt.NDArray[np.bool_]:
    """Whether the predicate holds at each of these neighbour tokens of the partition
    (``cowbird.store.neighbours``): the query's tests on their strings, region tests on their regions'
    values, ``lbound``/``rbound`` on whether their regions start or end there. A comparison with labels
    is false here: each row's labels differ, and ``TokenTests.past_end_labelled`` compares them with
    the next token where a run has them."""
    if isinstance(predicate, Lookup):
        return predicate.accepts([token.values[predicate.attribute] for token in tokens])
    if isinstance(predicate, Always):
        return np.ones(len(tokens), dtype=np.bool_)
    if isinstance(predicate, Negation):
        return ~holds_on(predicate.part, tokens)
    if isinstance(predicate, AllOf | AnyOf):
        combined = holds_on(predicate.parts[0], tokens)
        for part in predicate.parts[1:]:
            combined = combined & holds_on(part, tokens) if isinstance(predicate, AllOf) else \
                combined | holds_on(part, tokens)
        return combined
    if isinstance(predicate, RegionTest):
        values = [None if (mark := token.regions.get(predicate.attribute)) is None else mark.value for token in tokens]
        valued = [k for k, value in enumerate(values) if value is not None]
        result = np.zeros(len(tokens), dtype=np.bool_)
        if valued:
            result[valued] = predicate.accepts([values[k] or "" for k in valued])
        return result
    if isinstance(predicate, Bound):
        marks = [token.regions.get(predicate.attribute) for token in tokens]
        return np.fromiter((mark is not None and (mark.end if predicate.right else mark.start) for mark in marks),
                           dtype=np.bool_, count=len(tokens))
    if isinstance(predicate, SameValue):
        same = np.fromiter((token.values[predicate.left] == token.values[predicate.right] for token in tokens),
                           dtype=np.bool_, count=len(tokens))
        return ~same if predicate.negated else same
    if isinstance(predicate, LabelPredicate):
        return np.full(len(tokens), holds_beyond(predicate), dtype=np.bool_)
    assert_never(predicate)


def label_predicates(predicate: Predicate | None) -> list[LabelPredicate]:
    """The label comparisons inside a predicate."""
    if isinstance(predicate, LabelPredicate):
        return [predicate]
    if isinstance(predicate, Negation):
        return label_predicates(predicate.part)
    if isinstance(predicate, AllOf | AnyOf):
        return [found for part in predicate.parts for found in label_predicates(part)]
    return []


def estimate(predicate: Predicate, size: int) -> int:
    """Upper bound of the number of positions where the predicate holds (for planning)."""
    if isinstance(predicate, Lookup):
        return predicate.count
    if isinstance(predicate, AllOf):
        return min(estimate(p, size) for p in predicate.parts)
    if isinstance(predicate, AnyOf):
        return min(size, sum(estimate(p, size) for p in predicate.parts))
    if isinstance(predicate, Negation):
        return size  # not tracked: a negation of a rare test holds almost everywhere
    if isinstance(predicate, Always):
        return size
    if isinstance(predicate, RegionTest | Bound):
        return predicate.count
    if isinstance(predicate, SameValue | LabelPredicate):
        return size
    assert_never(predicate)


def attributes(predicate: Predicate) -> set[str]:
    """The p-attributes a predicate reads."""
    if isinstance(predicate, Lookup):
        return {predicate.attribute}
    if isinstance(predicate, Negation):
        return attributes(predicate.part)
    if isinstance(predicate, AllOf):
        return set().union(*(attributes(p) for p in predicate.parts))
    if isinstance(predicate, AnyOf):
        return set().union(*(attributes(p) for p in predicate.parts))
    if isinstance(predicate, Always | RegionTest | Bound | LabelPredicate):
        return set()
    if isinstance(predicate, SameValue):
        return {predicate.left, predicate.right}
    assert_never(predicate)


class PredicateCompiler:
    """Turns conditions into predicates, folding tests on one attribute into one table."""

    def __init__(self, corpus: CorpusView) -> None:
        self.corpus = corpus
        self._tables: dict[tuple[str, ast.RegexValue], BoolTable] = {}
        self._same_ids: dict[tuple[str, str], npt.NDArray[np.int64]] = {}

    def table(self, attribute: str, value: ast.RegexValue) -> BoolTable:
        key = (attribute, value)
        if key not in self._tables:
            self._tables[key] = self.corpus.match_table(attribute, value)
        return self._tables[key]

    def unset_passes(self, attribute: str, value: ast.RegexValue, table: npt.NDArray[np.bool_], negated: bool) -> bool:
        """Whether an unset label passes ``label.attribute (!)= value`` — and, the same in CQP, whether
        the test ``attribute (!)= value`` holds past the corpus end, where a lookahead may look. As CQP
        compiles the comparison (parse_actions.c, OptimizeStringConstraint): a plain string (no
        flags, none of ``[](){}.*+|?\\``, or ``%l``) absent from the lexicon makes the comparison a
        constant (``=`` false, ``!=`` true);
        a regex over a lexicon of fewer than 1,000 types that matches none or all of them does too
        (none: as a missing string; all: ``=`` true, ``!=`` false); else such a regex becomes a list of
        ids, inverted when the ids cover more than half of the corpus, and an unset label passes a
        negated list. Everywhere else an unset label fails.

        The lexicon is the whole corpus's: on a partition, its ``neighbours.json`` carries the whole
        lexicons of fewer than 1,000 types (``NativeCorpus.whole_lexicon``). Of a larger one it only
        knows that: a plain string is then looked up in the partition's own lexicon."""
        plain = value.literal or (
            not value.ignore_case and not value.ignore_diacritics and not set(value.pattern) & set("[](){}.*+|?\\")
        )
        frequencies = self.corpus.frequencies(attribute)
        corpus_size = self.corpus.size
        whole = self.corpus.whole_table(attribute, value)
        if whole is not None:
            corpus_size, whole_table, whole_frequencies = whole
            if whole_table is None or whole_frequencies is None:  # 1,000 types or more over the whole corpus
                return bool(plain and not table.any() and negated)
            table, frequencies = whole_table, whole_frequencies
        matched = int(table.sum())
        if plain:
            return matched == 0 and negated
        size = len(table)
        if not 0 < size < 1000:
            return False
        if matched == 0:
            return negated
        if matched == size:
            return not negated
        inverted = int(frequencies[table].sum()) > corpus_size // 2
        return negated != inverted

    def lookup(self, attribute: str, table: BoolTable, beyond: bool = False, accepts: ValueTest = _never) -> Lookup:
        return Lookup(attribute, table, int(self.corpus.frequencies(attribute)[table].sum()), beyond, accepts)

    def compile(self, condition: ast.Condition | None) -> Predicate:
        if condition is None:
            return Always()
        if isinstance(condition, ast.AttributeTest):
            if condition.this and condition.attribute not in self.corpus.p_attribute_names:
                return self._region_test(condition)
            table = self.table(condition.attribute, condition.value)
            beyond = self.unset_passes(condition.attribute, condition.value, table, condition.negated)
            accepts = value_test(self.corpus, condition.value, condition.negated)
            return self.lookup(condition.attribute, ~table if condition.negated else table, beyond, accepts)
        if isinstance(condition, ast.Not):
            inner = self.compile(condition.operand)
            if isinstance(inner, Lookup):
                test = inner.accepts
                return self.lookup(inner.attribute, ~inner.table, not inner.beyond, lambda texts: ~test(texts))
            return Negation(inner)
        if isinstance(condition, ast.And):
            return self._combine([self.compile(c) for c in condition.operands], conjunction=True)
        if isinstance(condition, ast.Or):
            return self._combine([self.compile(c) for c in condition.operands], conjunction=False)
        if isinstance(condition, ast.AttributeComparison):
            return SameValue(condition.left, condition.right, condition.negated,
                             self._same(condition.left, condition.right))
        if isinstance(condition, ast.LabelComparison):
            return self._label_comparison(condition)
        if isinstance(condition, ast.RegionBound):
            if not self.corpus.has_s_attribute(condition.attribute):
                raise UnknownAttribute(f"the corpus has no s-attribute {condition.attribute!r} "
                                       f"(in {'rbound' if condition.right else 'lbound'}())")
            return Bound(condition.attribute, condition.right, len(self.corpus.regions(condition.attribute)))
        assert_never(condition)

    def _label_comparison(self, condition: ast.LabelComparison) -> LabelPredicate:
        """``[lemma = a.lemma]``: evaluated as the global constraint ``_.lemma = a.lemma`` would be,
        with ``_`` the token's own position (CQP evaluates both with the same code)."""
        from cowbird.engines.native.constraint import ConstraintEvaluator  # noqa: PLC0415 - it imports this module

        def own(ref: ast.LabelRef) -> ast.LabelRef:  # a bare attribute name is the token's own, as _.name is
            return ast.LabelRef("_", ref.attribute) if ref.label == "" else ref

        right = own(condition.right) if isinstance(condition.right, ast.LabelRef) else condition.right
        comparison = ast.Comparison(own(condition.left), condition.negated, right)
        evaluator = ConstraintEvaluator(self.corpus, comparison, self)  # type: ignore[arg-type]
        labels = tuple(name for name in evaluator.labels if name not in ("_", "match"))
        # CQP reads a label on the left ("_" too) only once a match has started
        return LabelPredicate(labels, condition.left.label, evaluator.holds)

    def _same(self, left: str, right: str) -> npt.NDArray[np.int64]:
        """For each id of ``left``'s lexicon, the id of the same string in ``right``'s (or -1)."""
        key = (left, right)
        if key not in self._same_ids:
            right_ids = {string: number for number, string in enumerate(self.corpus.lexicon(right).strings)}
            strings = self.corpus.lexicon(left).strings
            self._same_ids[key] = np.fromiter((right_ids.get(string, -1) for string in strings),
                                              dtype=np.int64, count=len(strings))
        return self._same_ids[key]

    def _region_test(self, condition: ast.AttributeTest) -> RegionTest:
        """``_.text_year="2010"``: the value of the region of an s-attribute around the token."""
        attribute = condition.attribute
        if not self.corpus.has_s_attribute(attribute):
            raise UnknownAttribute(f"_.{attribute}: the corpus has no attribute {attribute!r}")
        table = self.corpus.region_table(attribute, condition.value)
        if table is None:
            raise UnknownAttribute(f"_.{attribute}: s-attribute {attribute!r} has no values")
        ok = ~table if condition.negated else table
        regions = self.corpus.regions(attribute)
        return RegionTest(attribute, ok, int((regions.ends[ok] - regions.starts[ok] + 1).sum()),
                          value_test(self.corpus, condition.value, condition.negated))

    def _combine(self, parts: list[Predicate], conjunction: bool) -> Predicate:
        """``&`` (``conjunction``) or ``|`` of compiled parts; lookups on one attribute fold into
        one table, so a token test stays one gather per attribute."""
        merged: dict[str, tuple[BoolTable, bool, ValueTest]] = {}
        others: list[Predicate] = []
        for part in parts:
            if isinstance(part, Lookup):
                if part.attribute in merged:
                    table, beyond, test = merged[part.attribute]
                    merged[part.attribute] = (table & part.table, beyond and part.beyond, _both(test, part.accepts)) \
                        if conjunction else (table | part.table, beyond or part.beyond, _either(test, part.accepts))
                else:
                    merged[part.attribute] = (part.table, part.beyond, part.accepts)
            else:
                others.append(part)
        combined: list[Predicate] = [self.lookup(a, t, b, v) for a, (t, b, v) in merged.items()] + others
        if len(combined) == 1:
            return combined[0]
        return AllOf(tuple(combined)) if conjunction else AnyOf(tuple(combined))


def _both(a: ValueTest, b: ValueTest) -> ValueTest:
    return lambda texts: a(texts) & b(texts)


def _either(a: ValueTest, b: ValueTest) -> ValueTest:
    return lambda texts: a(texts) | b(texts)


# ---------------------------------------------------------------------------- the automaton


@dataclass(frozen=True)
class TagTest:
    """A zero-width assertion: a region of ``attribute`` starts here (or ended just before); or,
    with ``look`` (``attribute`` empty), CQP's lookahead ``[: ... :]``: the token here passes
    ``look``, and is not consumed."""

    attribute: str
    closing: bool
    region_ok: npt.NDArray[np.bool_] | None = field(default=None, compare=False)  # value test per region
    look: Predicate | None = field(default=None, compare=False)
    accepts: ValueTest | None = field(default=None, compare=False)  # the value test on a string


@dataclass
class State:
    """One token pattern or tag of the query: a state of the automaton."""

    predicate: Predicate | None  # token states
    tag: TagTest | None  # tag states
    label: str | None = None
    anchor: str | None = None  # "target" (@[...]) or "keyword" (@1[...])

    @property
    def is_token(self) -> bool:
        return self.tag is None


@dataclass
class Automaton:
    """The compiled pattern: ``states`` indexed by state number, transitions in ``follow``."""

    states: list[State]
    first: list[int]
    final: set[int]
    follow: list[list[int]]
    nullable: bool

    @property
    def sources(self) -> list[list[int]]:
        """For each state, the states it can be reached from."""
        into: list[list[int]] = [[] for _ in self.states]
        for i, targets in enumerate(self.follow):
            for j in targets:
                into[j].append(i)
        return into

    @property
    def labels(self) -> list[str]:
        return sorted({s.label for s in self.states if s.label})


@dataclass
class _Fragment:
    first: list[int]
    last: list[int]
    nullable: bool


def can_match(automaton: Automaton, size: int) -> bool:
    """Whether some path from a first to a final state passes only token tests that hold somewhere
    in the corpus. If none does (``[]{3,} [lemma="qqqq"]`` on a corpus without "qqqq"), the query
    has no hits, and nothing needs to be evaluated: that would walk every start all the same."""
    possible = [state.predicate is None or estimate(state.predicate, size) > 0 for state in automaton.states]
    seen = {i for i in automaton.first if possible[i]}
    todo = list(seen)
    while todo:
        i = todo.pop()
        if i in automaton.final:
            return True
        for j in automaton.follow[i]:
            if possible[j] and j not in seen:
                seen.add(j)
                todo.append(j)
    return False


class AutomatonBuilder:
    """Glushkov construction over the pattern AST."""

    def __init__(self, corpus: CorpusView, predicates: PredicateCompiler) -> None:
        self.corpus = corpus
        self.predicates = predicates
        self.states: list[State] = []
        self.follow: list[list[int]] = []

    def build(self, pattern: ast.Pattern) -> Automaton:
        fragment = self._build(pattern)
        return Automaton(self.states, fragment.first, set(fragment.last), self.follow, fragment.nullable)

    def patterns(self, pattern: ast.Pattern) -> Automaton:
        """One state per token pattern, tag and lookahead of the query, numbered as CQP numbers
        them (``dfa.leaves``), without transitions: the states the DFA's symbols stand for."""
        for leaf in leaves(pattern):
            self._build(leaf)
        return Automaton(self.states, [], set(), [[] for _ in self.states], False)

    def _new(self, state: State) -> _Fragment:
        if len(self.states) >= MAX_STATES:
            raise QueryTooExpensive(
                f"the query unrolls to more than {MAX_STATES} token patterns and tags: use smaller repetition bounds"
            )
        self.states.append(state)
        self.follow.append([])
        index = len(self.states) - 1
        return _Fragment([index], [index], False)

    def _link(self, sources: list[int], targets: list[int]) -> None:
        for s in sources:
            for t in targets:
                if t not in self.follow[s]:
                    self.follow[s].append(t)

    def _sequence(self, a: _Fragment, b: _Fragment) -> _Fragment:
        self._link(a.last, b.first)
        first = a.first + ([f for f in b.first if f not in a.first] if a.nullable else [])
        last = b.last + ([x for x in a.last if x not in b.last] if b.nullable else [])
        return _Fragment(first, last, a.nullable and b.nullable)

    def _build(self, pattern: ast.Pattern) -> _Fragment:
        if isinstance(pattern, ast.TokenPattern):
            predicate = self.predicates.compile(pattern.condition)
            anchor = "target" if pattern.target else "keyword" if pattern.keyword else None
            if pattern.lookahead:
                return self._new(State(None, TagTest("", False, look=predicate), pattern.label, anchor))
            return self._new(State(predicate, None, pattern.label, anchor))
        if isinstance(pattern, ast.StructuralTag):
            return self._new(State(None, self._tag(pattern)))
        if isinstance(pattern, ast.Sequence):
            fragment = self._build(pattern.items[0])
            for item in pattern.items[1:]:
                fragment = self._sequence(fragment, self._build(item))
            return fragment
        if isinstance(pattern, ast.Alternation):
            parts = [self._build(option) for option in pattern.options]
            first = [f for p in parts for f in p.first]
            last = [x for p in parts for x in p.last]
            return _Fragment(first, last, any(p.nullable for p in parts))
        if isinstance(pattern, ast.Repetition):
            return self._repetition(pattern)
        assert_never(pattern)

    def _repetition(self, pattern: ast.Repetition) -> _Fragment:
        fragment: _Fragment | None = None
        for _ in range(pattern.min):
            copy = self._build(pattern.item)
            fragment = copy if fragment is None else self._sequence(fragment, copy)
        if pattern.max is None:
            loop = self._build(pattern.item)
            self._link(loop.last, loop.first)
            loop = _Fragment(loop.first, loop.last, True)
            fragment = loop if fragment is None else self._sequence(fragment, loop)
        elif pattern.max > pattern.min:
            # nested optionals: x (x (x)?)? -- the second copy only after the first, as CQP unrolls it
            copies = [self._build(pattern.item) for _ in range(pattern.max - pattern.min)]
            for a, b in zip(copies, copies[1:], strict=False):
                self._link(a.last, b.first)
            tail = _Fragment(copies[0].first, [x for c in copies for x in c.last], True)
            fragment = tail if fragment is None else self._sequence(fragment, tail)
        if fragment is None:  # x{0} or x{0,0}: matches the empty string only
            return _Fragment([], [], True)
        return fragment

    def _tag(self, tag: ast.StructuralTag) -> TagTest:
        if not self.corpus.has_s_attribute(tag.attribute):
            raise UnknownAttribute(f"the corpus has no s-attribute {tag.attribute!r} (in <{tag.attribute}>)")
        if tag.test is None:
            return TagTest(tag.attribute, tag.closing)
        table = self.corpus.region_table(tag.attribute, tag.test.value)
        if table is None:
            raise UnknownAttribute(f"s-attribute {tag.attribute!r} has no annotations to compare with a value")
        accepts = value_test(self.corpus, tag.test.value, tag.test.negated)
        return TagTest(tag.attribute, tag.closing, ~table if tag.test.negated else table, accepts=accepts)
