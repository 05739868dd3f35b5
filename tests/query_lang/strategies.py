"""Hypothesis strategies for CQP ASTs in normal form (what ``parse_cqp`` can produce)."""

from __future__ import annotations

import unicodedata
from typing import Any

from hypothesis import strategies as st

from cowbird.query.cqp_ast import (
    Alternation,
    And,
    AttributeTest,
    Comparison,
    Condition,
    Constraint,
    ConstraintAnd,
    ConstraintNot,
    ConstraintOr,
    FunctionCall,
    LabelRef,
    Not,
    NumericComparison,
    Or,
    Pattern,
    Query,
    RegexValue,
    Repetition,
    Sequence,
    StructuralTag,
    TokenPattern,
    ValueTest,
)
from cowbird.query.cqp_build import matches_empty

ATTRIBUTES = st.sampled_from(["word", "lemma", "pos", "upos", "text_genre", "x-y", "_a1"])
S_ATTRIBUTES = st.sampled_from(["s", "p", "text", "text_genre", "chapter-1"])
LABELS = ("a", "b", "lab_2")

# Pieces of valid regexes, several of them awkward to quote: quotes, backslash pairs, non-ASCII.
REGEX_PIECES = st.sampled_from(
    [
        "a", "é", "Z", "ß", "日本", " ", ".", ".*", "\\.", "\\(", "\\$", "[a-z]", "[^\"]", "[[:alpha:]]",
        "\\p{L}", "x{2,3}", "(?:ab|c)", '\\"', '"', "'", "''", '""', "\\\\x", "ü+", "%c", "]", "|",
    ]
)  # fmt: skip
REGEXES = st.lists(REGEX_PIECES, max_size=4).map("".join)
# values as the parser keeps them: NFC (queries are normalised), no lone backslash at the end
LITERALS = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), max_size=6).filter(
    lambda s: not s.endswith("\\") and unicodedata.normalize("NFC", s) == s
)


@st.composite
def values(draw: st.DrawFn) -> RegexValue:
    if draw(st.booleans()) and draw(st.booleans()):
        return RegexValue(draw(LITERALS), literal=True)
    return RegexValue(draw(REGEXES), ignore_case=draw(st.booleans()), ignore_diacritics=draw(st.booleans()))


def _flat(kind: type[Any], operands: list[Any]) -> tuple[Any, ...]:
    flat: list[Any] = []
    for operand in operands:
        flat.extend(operand.operands if type(operand) is kind else (operand,))
    return tuple(flat)


def conditions() -> st.SearchStrategy[Condition]:
    tests = st.builds(AttributeTest, ATTRIBUTES, st.booleans(), values())
    return st.recursive(
        tests,
        lambda inner: st.one_of(
            st.builds(Not, inner),
            st.lists(inner, min_size=2, max_size=3).map(lambda ops: And(_flat(And, ops))),
            st.lists(inner, min_size=2, max_size=3).map(lambda ops: Or(_flat(Or, ops))),
        ),
        max_leaves=5,
    )


BOUNDS = st.one_of(
    st.sampled_from([(0, 1), (0, None), (1, None), (1, 1)]),
    st.integers(0, 1000).flatmap(
        lambda low: st.tuples(st.just(low), st.none() | st.integers(max(low, 1), 1000))
    ),
)


def _tokens() -> st.SearchStrategy[Pattern]:
    return st.builds(
        TokenPattern,
        st.none() | conditions(),
        label=st.none() | st.sampled_from(LABELS),
        target=st.sampled_from([False] * 6 + [True]),
    )


def _tags() -> st.SearchStrategy[Pattern]:
    opening = st.builds(
        StructuralTag,
        S_ATTRIBUTES,
        closing=st.just(False),
        test=st.none() | st.builds(ValueTest, st.booleans(), values()),
    )
    closing = st.builds(StructuralTag, S_ATTRIBUTES, closing=st.just(True))
    return opening | closing


def _sequence(items: list[Pattern]) -> Sequence:
    flat: list[Pattern] = []
    for item in items:
        flat.extend(item.items if isinstance(item, Sequence) else (item,))
    return Sequence(tuple(flat))


def _alternation(options: list[Pattern]) -> Alternation:
    flat: list[Pattern] = []
    for option in options:
        flat.extend(option.options if isinstance(option, Alternation) else (option,))
    return Alternation(tuple(flat))


def patterns() -> st.SearchStrategy[Pattern]:
    return st.recursive(
        _tokens() | _tags(),
        lambda inner: st.one_of(
            st.lists(inner, min_size=2, max_size=3).map(_sequence),
            st.lists(inner, min_size=2, max_size=3).map(_alternation),
            st.builds(lambda item, bounds: Repetition(item, *bounds), inner, BOUNDS),
        ),
        max_leaves=6,
    )


def walk_tokens(pattern: Pattern) -> list[TokenPattern]:
    """Every TokenPattern in ``pattern``, in order."""
    if isinstance(pattern, TokenPattern):
        return [pattern]
    if isinstance(pattern, Sequence):
        return [t for item in pattern.items for t in walk_tokens(item)]
    if isinstance(pattern, Alternation):
        return [t for option in pattern.options for t in walk_tokens(option)]
    if isinstance(pattern, Repetition):
        return walk_tokens(pattern.item)
    return []


def constraints(labels: list[str]) -> st.SearchStrategy[Constraint]:
    refs = st.builds(LabelRef, st.sampled_from(labels), ATTRIBUTES)
    comparisons = st.builds(Comparison, refs, st.booleans(), values() | refs)
    return st.recursive(
        comparisons,
        lambda inner: st.one_of(
            st.builds(ConstraintNot, inner),
            st.lists(inner, min_size=2, max_size=3).map(lambda ops: ConstraintAnd(_flat(ConstraintAnd, ops))),
            st.lists(inner, min_size=2, max_size=3).map(lambda ops: ConstraintOr(_flat(ConstraintOr, ops))),
        ),
        max_leaves=4,
    )


@st.composite
def queries(draw: st.DrawFn) -> Query:
    """A Query in the normal form the parser produces, and one CQP accepts: the pattern does not
    match the empty string, every label it sets is read by the constraint, ``target`` is read only
    when a token carries ``@``."""
    pattern = draw(patterns())
    if matches_empty(pattern):
        pattern = _sequence([pattern, TokenPattern(None)])
    tokens = walk_tokens(pattern)
    defined = sorted({t.label for t in tokens if t.label is not None})
    readable = [*defined, "match", "matchend"] + (["target"] if any(t.target for t in tokens) else [])
    constraint = draw(st.none() | constraints(readable))
    unread = [label for label in defined if label not in _read_labels(constraint)]
    if unread:
        reads = [Comparison(LabelRef(label, "word"), False, LabelRef("match", "word")) for label in unread]
        operands = ([] if constraint is None else [constraint]) + reads
        constraint = operands[0] if len(operands) == 1 else ConstraintAnd(_flat(ConstraintAnd, operands))
    return Query(
        pattern,
        within=draw(st.none() | S_ATTRIBUTES),
        constraint=constraint,
        cut=draw(st.none() | st.integers(1, 2**31 - 1)),
        expand=draw(st.none() | S_ATTRIBUTES),
    )


def _read_labels(constraint: Constraint | None) -> set[str]:
    if constraint is None:
        return set()
    if isinstance(constraint, Comparison):
        right = {constraint.right.label} if isinstance(constraint.right, LabelRef) else set()
        return {constraint.left.label} | right
    if isinstance(constraint, ConstraintNot):
        return _read_labels(constraint.operand)
    if isinstance(constraint, NumericComparison):  # not drawn by constraints(), read for completeness
        return {
            argument.label if isinstance(argument, LabelRef) else argument
            for number in (constraint.left, constraint.right) if isinstance(number, FunctionCall)
            for argument in number.arguments if not isinstance(argument, int)
        }
    return {label for operand in constraint.operands for label in _read_labels(operand)}
