"""Hypothesis strategies for CQP ASTs in normal form (what ``parse_cqp`` can produce)."""

from __future__ import annotations

import unicodedata
from functools import partial
from typing import Any

from hypothesis import strategies as st

from cowbird.query import cqp_ast as ast
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
def values(draw: st.DrawFn) -> ast.RegexValue:
    if draw(st.booleans()) and draw(st.booleans()):
        return ast.RegexValue(draw(LITERALS), literal=True)
    return ast.RegexValue(draw(REGEXES), ignore_case=draw(st.booleans()), ignore_diacritics=draw(st.booleans()))


def _joined(kind: type[Any], operands: list[Any]) -> Any:
    """``kind`` (``And``, ``ConstraintOr`` ...) of the operands, those of the same kind flattened into it."""
    flat: list[Any] = []
    for operand in operands:
        flat.extend(operand.operands if type(operand) is kind else (operand,))
    return kind(tuple(flat))


def _boolean(
    leaves: st.SearchStrategy[Any], negation: type[Any], conjunction: type[Any], disjunction: type[Any], max_leaves: int
) -> st.SearchStrategy[Any]:
    """Trees of ``leaves`` under negation, conjunction and disjunction, in the parser's normal form."""
    return st.recursive(
        leaves,
        lambda inner: st.one_of(
            st.builds(negation, inner),
            st.lists(inner, min_size=2, max_size=3).map(partial(_joined, conjunction)),
            st.lists(inner, min_size=2, max_size=3).map(partial(_joined, disjunction)),
        ),
        max_leaves=max_leaves,
    )


def conditions() -> st.SearchStrategy[ast.Condition]:
    tests = st.builds(ast.AttributeTest, ATTRIBUTES, st.booleans(), values())
    return _boolean(tests, ast.Not, ast.And, ast.Or, max_leaves=5)


BOUNDS = st.one_of(
    st.sampled_from([(0, 1), (0, None), (1, None), (1, 1)]),
    st.integers(0, 1000).flatmap(
        lambda low: st.tuples(st.just(low), st.none() | st.integers(max(low, 1), 1000))
    ),
)


def _tokens() -> st.SearchStrategy[ast.Pattern]:
    return st.builds(
        ast.TokenPattern,
        st.none() | conditions(),
        label=st.none() | st.sampled_from(LABELS),
        target=st.sampled_from([False] * 6 + [True]),
    )


def _tags() -> st.SearchStrategy[ast.Pattern]:
    opening = st.builds(
        ast.StructuralTag,
        S_ATTRIBUTES,
        closing=st.just(False),
        test=st.none() | st.builds(ast.ValueTest, st.booleans(), values()),
    )
    closing = st.builds(ast.StructuralTag, S_ATTRIBUTES, closing=st.just(True))
    return opening | closing


def _sequence(items: list[ast.Pattern]) -> ast.Sequence:
    flat: list[ast.Pattern] = []
    for item in items:
        flat.extend(item.items if isinstance(item, ast.Sequence) else (item,))
    return ast.Sequence(tuple(flat))


def _alternation(options: list[ast.Pattern]) -> ast.Alternation:
    flat: list[ast.Pattern] = []
    for option in options:
        flat.extend(option.options if isinstance(option, ast.Alternation) else (option,))
    return ast.Alternation(tuple(flat))


def patterns() -> st.SearchStrategy[ast.Pattern]:
    return st.recursive(
        _tokens() | _tags(),
        lambda inner: st.one_of(
            st.lists(inner, min_size=2, max_size=3).map(_sequence),
            st.lists(inner, min_size=2, max_size=3).map(_alternation),
            st.builds(lambda item, bounds: ast.Repetition(item, *bounds), inner, BOUNDS),
        ),
        max_leaves=6,
    )


def walk_tokens(pattern: ast.Pattern) -> list[ast.TokenPattern]:
    """Every TokenPattern in ``pattern``, in order."""
    if isinstance(pattern, ast.TokenPattern):
        return [pattern]
    if isinstance(pattern, ast.Sequence):
        return [t for item in pattern.items for t in walk_tokens(item)]
    if isinstance(pattern, ast.Alternation):
        return [t for option in pattern.options for t in walk_tokens(option)]
    if isinstance(pattern, ast.Repetition):
        return walk_tokens(pattern.item)
    return []


def constraints(labels: list[str]) -> st.SearchStrategy[ast.Constraint]:
    refs = st.builds(ast.LabelRef, st.sampled_from(labels), ATTRIBUTES)
    comparisons = st.builds(ast.Comparison, refs, st.booleans(), values() | refs)
    existence = st.builds(ast.Exists, st.sampled_from(labels), st.none() | ATTRIBUTES)  # :: a, :: a.lemma
    return _boolean(comparisons | existence, ast.ConstraintNot, ast.ConstraintAnd, ast.ConstraintOr, max_leaves=4)


@st.composite
def queries(draw: st.DrawFn) -> ast.Query:
    """A Query in the normal form the parser produces, and one CQP accepts: the pattern does not
    match the empty string, every label it sets is read by the constraint, ``target`` is read only
    when a token carries ``@``."""
    pattern = draw(patterns())
    if matches_empty(pattern):
        pattern = _sequence([pattern, ast.TokenPattern(None)])
    tokens = walk_tokens(pattern)
    defined = sorted({t.label for t in tokens if t.label is not None})
    readable = [*defined, "match", "matchend"] + (["target"] if any(t.target for t in tokens) else [])
    constraint = draw(st.none() | constraints(readable))
    unread = [label for label in defined if label not in _read_labels(constraint)]
    if unread:
        reads = [ast.Comparison(ast.LabelRef(label, "word"), False, ast.LabelRef("match", "word")) for label in unread]
        operands = ([] if constraint is None else [constraint]) + reads
        constraint = operands[0] if len(operands) == 1 else _joined(ast.ConstraintAnd, operands)
    return ast.Query(
        pattern,
        within=draw(st.none() | S_ATTRIBUTES),
        constraint=constraint,
        cut=draw(st.none() | st.integers(1, 2**31 - 1)),
        expand=draw(st.none() | S_ATTRIBUTES),
    )


def _read_labels(constraint: ast.Constraint | None) -> set[str]:
    if constraint is None:
        return set()
    if isinstance(constraint, ast.Comparison):
        right = {constraint.right.label} if isinstance(constraint.right, ast.LabelRef) else set()
        return {constraint.left.label} | right
    if isinstance(constraint, ast.ConstraintNot):
        return _read_labels(constraint.operand)
    if isinstance(constraint, ast.Exists):
        return {constraint.label}
    if isinstance(constraint, ast.NumericComparison):  # not drawn by constraints(), read for completeness
        return {
            argument.label if isinstance(argument, ast.LabelRef) else argument
            for number in (constraint.left, constraint.right) if isinstance(number, ast.FunctionCall)
            for argument in number.arguments if not isinstance(argument, int)
        }
    return {label for operand in constraint.operands for label in _read_labels(operand)}
