"""From request parameters to the one CQP text sent to nodes: syntax, case switch, filters.

Users type a simple query or CQP; the front end parses it, applies the global case switch
(``%c`` on every attribute test), adds metadata filters as a global constraint on the match
(``filter=text_genre!~forum``), and serialises the AST. Nodes parse that text again.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import assert_never, overload

from cowbird.core.errors import BadParameter, QuerySyntax, UnknownAttribute, query_problem
from cowbird.frontend.corpora import CorpusEntry
from cowbird.query import (
    MAX_QUERY_LENGTH,
    Alternation,
    And,
    AttributeComparison,
    AttributeTest,
    Comparison,
    Condition,
    Constraint,
    ConstraintAnd,
    Cooccurrence,
    LabelComparison,
    LabelRef,
    Meet,
    MuTerm,
    MuUnion,
    Not,
    Or,
    Pattern,
    Query,
    QueryError,
    RegexValue,
    RegionBound,
    Repetition,
    Sequence,
    StructuralTag,
    Tabular,
    TokenPattern,
    nfc,
    parse_cqp,
    serialize,
    translate,
)

MAX_FILTERS = 50
"""Metadata filters one request may have."""
_FILTER = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)(!~|~)(.*)$", re.DOTALL)


def _fold(condition: Condition) -> Condition:
    if isinstance(condition, AttributeTest):
        value = condition.value
        if value.literal:
            return condition
        return replace(condition, value=replace(value, ignore_case=True))
    if isinstance(condition, Not):
        return Not(_fold(condition.operand))
    if isinstance(condition, And):
        return And(tuple(_fold(c) for c in condition.operands))
    if isinstance(condition, Or):
        return Or(tuple(_fold(c) for c in condition.operands))
    if isinstance(condition, AttributeComparison | RegionBound):
        return condition  # no value to fold: CQP takes no flags here
    if isinstance(condition, LabelComparison):
        right = condition.right
        if isinstance(right, LabelRef) or right.literal:
            return condition
        return replace(condition, right=replace(right, ignore_case=True))
    assert_never(condition)


@overload
def ignore_case(pattern: Pattern) -> Pattern: ...
@overload
def ignore_case(pattern: Pattern | Cooccurrence) -> Pattern | Cooccurrence: ...


def ignore_case(pattern: Pattern | Cooccurrence) -> Pattern | Cooccurrence:
    """The pattern with ``%c`` on every attribute test (the global case switch for CQP input)."""
    if isinstance(pattern, Meet):
        return replace(pattern, left=_fold_term(pattern.left), right=_fold_term(pattern.right))
    if isinstance(pattern, MuUnion):
        return MuUnion(_fold_term(pattern.left), _fold_term(pattern.right))
    if isinstance(pattern, Tabular):
        return replace(pattern, columns=tuple(_fold_token(column) for column in pattern.columns))
    if isinstance(pattern, TokenPattern):
        return _fold_token(pattern)
    if isinstance(pattern, Sequence):
        return Sequence(tuple(ignore_case(p) for p in pattern.items))
    if isinstance(pattern, Alternation):
        return Alternation(tuple(ignore_case(p) for p in pattern.options))
    if isinstance(pattern, Repetition):
        return replace(pattern, item=ignore_case(pattern.item))
    if isinstance(pattern, StructuralTag):
        return pattern  # a region's value test keeps its own flags, like a filter
    assert_never(pattern)


def _fold_token(token: TokenPattern) -> TokenPattern:
    return token if token.condition is None else replace(token, condition=_fold(token.condition))


def _fold_term(term: MuTerm) -> MuTerm:
    if isinstance(term, TokenPattern):
        return _fold_token(term)
    folded = ignore_case(term)
    assert isinstance(folded, Meet | MuUnion)
    return folded


def parse_filter(text: str, corpus: CorpusEntry) -> Comparison:
    """``text_lastmod~2009.*`` (matches) or ``text_genre!~forum`` (does not match) on the match."""
    found = _FILTER.match(text)
    if not found:
        raise BadParameter(f"filter {text!r}: write ATTRIBUTE~REGEX or ATTRIBUTE!~REGEX, e.g. text_genre!~forum")
    attribute, operator, pattern = found.groups()
    pattern = nfc(pattern)  # as queries are, so that the CQP sent is canonical
    if attribute not in corpus.meta:
        raise UnknownAttribute(
            f"filter {text!r}: corpus {corpus.name} has no s-attribute with values named {attribute!r} "
            f"(it has: {', '.join(corpus.meta) or 'none'})"
        )
    try:  # the regex is checked by the CQP parser, in a query of its own, so errors point into it
        parse_cqp(serialize(Query(TokenPattern(None), constraint=Comparison(
            LabelRef("match", attribute), False, RegexValue(pattern)))))
    except QueryError as exc:  # its offset is in the query built here, not in anything the user typed
        raise QuerySyntax(f"filter {text!r}: {exc.message}", parameter="filter") from exc
    return Comparison(LabelRef("match", attribute), operator == "!~", RegexValue(pattern))


def build_query(q: str, syntax: str, case_insensitive: bool, filters: list[str], corpus: CorpusEntry | None) -> str:
    """The canonical CQP text for a request (filters need the corpus whose metadata they test)."""
    if not q.strip():
        raise BadParameter("q is empty: give a query")
    try:
        cqp = translate(q, ignore_case=case_insensitive) if syntax == "simple" else q
        query = parse_cqp(cqp)
    except QueryError as exc:
        raise query_problem(exc) from exc
    if syntax == "cqp" and case_insensitive:
        query = replace(query, pattern=ignore_case(query.pattern))
    if filters and isinstance(query.pattern, Meet | MuUnion | Tabular):
        raise BadParameter("filter: an MU or TAB query takes no constraint, so it cannot be filtered by metadata; "
                           "write the query as a pattern, or leave the filters out")
    if filters and corpus is None:
        raise BadParameter("filter: name the corpus whose metadata the filters test")
    if len(filters) > MAX_FILTERS:
        raise BadParameter(f"filter: {len(filters):,} filters; at most {MAX_FILTERS} (a regex can say more in one: "
                           "text_genre~news|blog)")
    comparisons: list[Constraint] = [parse_filter(f, corpus) for f in filters] if corpus is not None else []
    if comparisons:
        existing = query.constraint
        before = list(existing.operands) if isinstance(existing, ConstraintAnd) else [existing] if existing else []
        parts = before + comparisons
        query = replace(query, constraint=parts[0] if len(parts) == 1 else ConstraintAnd(tuple(parts)))
    text = serialize(query)
    if len(text) > MAX_QUERY_LENGTH:  # what the nodes take: the query with its case switch and filters
        raise BadParameter(f"the query with {'its filters' if filters else 'the case switch'} is too long for the "
                           f"nodes ({len(text):,} characters of CQP; at most {MAX_QUERY_LENGTH:,}): shorten it")
    return text
