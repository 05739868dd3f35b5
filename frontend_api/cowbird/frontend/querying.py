"""From request parameters to the one query sent to nodes: syntax, case switch, filters.

Users type a simple query or CQP; the front end parses it once (a simple query straight into the
CQP AST), applies the global case switch (``%c`` on every attribute test), adds metadata filters as
a global constraint on the match (``filter=text_genre!~forum``) and serialises the AST: a
:class:`~cowbird.core.search.CheckedQuery`, AST and canonical text. Each node parses that text once.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import assert_never, overload

from cowbird.core.errors import BadParameter, CowbirdError, QuerySyntax, UnknownAttribute, query_problem
from cowbird.core.search import CheckedQuery, no_attribute
from cowbird.core.wire import RegionFilter
from cowbird.frontend.corpora import CorpusEntry
from cowbird.query import MAX_QUERY_LENGTH, QueryError, nfc, parse_cqp, translate_query
from cowbird.query import cqp_ast as ast
from cowbird.query.cqp_lexical import unrepresentable_reason
from cowbird.query.numeric_range import equals_regex, parse_bound, range_regex
from cowbird.query.regex_check import check_regex
from cowbird.query.sketch_grammar import attributes_read

MAX_FILTERS = 50
"""Metadata filters one request may have."""
_FILTER = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)(!~|~|!=|=|!:|:)(.*)$", re.DOTALL)
FILTER_FORMS = ("ATTRIBUTE~REGEX (matches), ATTRIBUTE!~REGEX (does not), ATTRIBUTE=VALUE (equals), "
                "ATTRIBUTE!=VALUE (does not equal) or ATTRIBUTE:FROM..TO (a number from FROM to TO, both included; "
                "FROM.. or ..TO open), e.g. text_genre!~forum, text_year=2005, text_year:2010..2015")
"""The forms of a filter, as errors name them."""


def _fold(condition: ast.Condition) -> ast.Condition:
    if isinstance(condition, ast.AttributeTest):
        value = condition.value
        if value.literal:
            return condition
        return replace(condition, value=replace(value, ignore_case=True))
    if isinstance(condition, ast.Not):
        return ast.Not(_fold(condition.operand))
    if isinstance(condition, ast.And):
        return ast.And(tuple(_fold(c) for c in condition.operands))
    if isinstance(condition, ast.Or):
        return ast.Or(tuple(_fold(c) for c in condition.operands))
    if isinstance(condition, ast.AttributeComparison | ast.RegionBound):
        return condition  # no value to fold: CQP takes no flags here
    if isinstance(condition, ast.LabelComparison):
        right = condition.right
        if isinstance(right, ast.LabelRef) or right.literal:
            return condition
        return replace(condition, right=replace(right, ignore_case=True))
    assert_never(condition)


@overload
def ignore_case(pattern: ast.Pattern) -> ast.Pattern: ...
@overload
def ignore_case(pattern: ast.Pattern | ast.Cooccurrence) -> ast.Pattern | ast.Cooccurrence: ...


def ignore_case(pattern: ast.Pattern | ast.Cooccurrence) -> ast.Pattern | ast.Cooccurrence:
    """The pattern with ``%c`` on every attribute test (the global case switch for CQP input)."""
    if isinstance(pattern, ast.Meet):
        return replace(pattern, left=_fold_term(pattern.left), right=_fold_term(pattern.right))
    if isinstance(pattern, ast.MuUnion):
        return ast.MuUnion(_fold_term(pattern.left), _fold_term(pattern.right))
    if isinstance(pattern, ast.Tabular):
        return replace(pattern, columns=tuple(_fold_token(column) for column in pattern.columns))
    if isinstance(pattern, ast.TokenPattern):
        return _fold_token(pattern)
    if isinstance(pattern, ast.Sequence):
        return ast.Sequence(tuple(ignore_case(p) for p in pattern.items))
    if isinstance(pattern, ast.Alternation):
        return ast.Alternation(tuple(ignore_case(p) for p in pattern.options))
    if isinstance(pattern, ast.Repetition):
        return replace(pattern, item=ignore_case(pattern.item))
    if isinstance(pattern, ast.StructuralTag):
        return pattern  # a region's value test keeps its own flags, like a filter
    assert_never(pattern)


def _fold_token(token: ast.TokenPattern) -> ast.TokenPattern:
    return token if token.condition is None else replace(token, condition=_fold(token.condition))


def _fold_term(term: ast.MuTerm) -> ast.MuTerm:
    if isinstance(term, ast.TokenPattern):
        return _fold_token(term)
    folded = ignore_case(term)
    assert isinstance(folded, ast.Meet | ast.MuUnion)
    return folded


def parse_filter(text: str, corpus: CorpusEntry) -> ast.Comparison:
    """A filter as a comparison on the match: ``text_lastmod~2009.*`` (matches the regex),
    ``text_genre!~forum`` (does not), ``text_year=2005`` (equals the value: no regex, ``a.b`` is only
    itself), ``text_year!=2005`` (does not equal) or ``text_year:2010..2015`` (a number in the range,
    both ends included, ``2010..`` or ``..2015`` open; values that are not numbers never match). The
    page's filter row and the API write the same text (search-state.js ``filterText``)."""
    found = _FILTER.match(text)
    if not found:
        raise BadParameter(f"filter {text!r}: write {FILTER_FORMS}")
    attribute, operator, written = found.groups()
    written = nfc(written)  # as queries are, so that the CQP sent is canonical
    if attribute not in corpus.meta:
        raise UnknownAttribute(f"filter {text!r}: {no_attribute(corpus, 'meta', attribute)}")
    if operator in ("=", "!="):
        pattern = equals_regex(written)
    elif operator == "!:":
        raise BadParameter(f"filter {text!r}: a range cannot be negated (values that are not numbers would pass); "
                           "write the two ranges outside it as a regex, or as ranges in two searches")
    elif operator == ":":
        pattern = _range_pattern(text, written)
    else:
        pattern = written
    # the regex is checked as the CQP parser checks a query's: what it cannot be written as, what it
    # would cost, whether it compiles
    problem = unrepresentable_reason(pattern)
    if problem is None:
        found_problem, _ = check_regex(pattern)
        problem = None if found_problem is None else found_problem.message
    if problem is not None:
        raise QuerySyntax(f"filter {text!r}: {problem}", parameter="filter")
    return ast.Comparison(ast.LabelRef("match", attribute), operator.startswith("!"), ast.RegexValue(pattern))


def _range_pattern(text: str, written: str) -> str:
    """The regex of a range filter's ``FROM..TO`` (``numeric_range``), or an error naming the filter."""
    low, dots, high = written.partition("..")
    if not dots:
        raise BadParameter(f"filter {text!r}: a range is written FROM..TO (FROM.. or ..TO open), e.g. "
                           "text_year:2010..2015")
    try:
        bounds = [None if not bound.strip() else parse_bound(bound.strip()) for bound in (low, high)]
        return range_regex(bounds[0], bounds[1])
    except ValueError as error:
        raise BadParameter(f"filter {text!r}: {error}") from error


def build_query(q: str, syntax: str, case_insensitive: bool, filters: list[str],
                corpus: CorpusEntry | None) -> CheckedQuery:
    """The query of a request, parsed once, with the case switch and the filters (which need the
    corpus whose metadata they test). Checked for a corpus, it is kept (``corpora.Kept.checked``:
    the catalogue's, by the corpus's name and version and what was asked), and the same asked again
    is the same ``CheckedQuery``, neither parsed nor serialised; a refusal is not kept."""
    if corpus is None:
        return _built(q, syntax, case_insensitive, filters, None)
    key = (corpus.name, corpus.config.version or "", q, syntax, case_insensitive, tuple(filters))
    found = corpus.kept.checked.get(key)
    if found is None:
        found = _built(q, syntax, case_insensitive, filters, corpus)
        corpus.kept.checked.put(key, found)
    return found


def _built(q: str, syntax: str, case_insensitive: bool, filters: list[str],
           corpus: CorpusEntry | None) -> CheckedQuery:
    if not q.strip():
        raise BadParameter("q is empty: give a query")
    try:
        if syntax == "simple":
            query, text = translate_query(q, case_insensitive)
        else:
            query, text = parse_cqp(q), ""
    except QueryError as exc:
        raise query_problem(exc) from exc
    if syntax == "cqp" and case_insensitive:
        query = replace(query, pattern=ignore_case(query.pattern))
    if corpus is not None and corpus.members:
        check_members(query, corpus)
    if filters and isinstance(query.pattern, ast.Meet | ast.MuUnion | ast.Tabular):
        raise BadParameter("filter: an MU or TAB query takes no constraint, so it cannot be filtered by metadata; "
                           "write the query as a pattern, or leave the filters out")
    if filters and corpus is None:
        raise BadParameter("filter: name the corpus whose metadata the filters test")
    if len(filters) > MAX_FILTERS:
        raise BadParameter(f"filter: {len(filters):,} filters; at most {MAX_FILTERS} (a regex can say more in one: "
                           "text_genre~news|blog)")
    comparisons = [parse_filter(f, corpus) for f in filters] if corpus is not None else []
    checked = (CheckedQuery(query, text) if text else CheckedQuery.of(query)).constrained(*comparisons)
    checked = replace(checked, filters=tuple((f.attribute, f.negated, f.pattern)  # the subcorpus counted in
                                             for f in map(_region_filter, comparisons)))
    if len(checked.cqp) > MAX_QUERY_LENGTH:  # what the nodes take: the query with its case switch and filters
        what = "its filters" if filters else "the case switch"
        raise BadParameter(f"the query with {what} is too long for the nodes ({len(checked.cqp):,} characters of "
                           f"CQP; at most {MAX_QUERY_LENGTH:,}): shorten it")
    return checked


def check_members(query: ast.Query, corpus: CorpusEntry) -> None:
    """Refuse a query over several corpora that names an attribute one of them lacks, naming that
    corpus: it is never searched without the attribute, nor silently left out."""
    tokens, regions = attributes_read(query)
    for name, kind in [*((t, "any") for t in tokens), *((r, "s") for r in regions)]:
        lacking = corpus.members_lacking(name, kind)
        if lacking:
            what = "attribute" if kind == "any" else "s-attribute"
            names = ", ".join(c.name for c in lacking)
            raise UnknownAttribute(
                f"the query names the {what} {name!r}, which corpus {names} lacks "
                f"({lacking[0].name} has: {', '.join(lacking[0].p_attributes + lacking[0].s_attributes)}); search "
                f"{'it' if len(lacking) == 1 else 'them'} apart, or leave {'it' if len(lacking) == 1 else 'them'} "
                "out of corpus=")


def region_filters(texts: list[str], corpus: CorpusEntry, parameter: str) -> list[RegionFilter]:
    """The subcorpus the filters (``ATTR~REGEX``, ``ATTR=VALUE``, ``ATTR:FROM..TO``...) choose, for the nodes."""
    if len(texts) > MAX_FILTERS:
        raise BadParameter(f"{parameter}: {len(texts):,} filters; at most {MAX_FILTERS}")
    filters = []
    for text in texts:
        try:
            comparison = parse_filter(text, corpus)
        except CowbirdError as error:
            error.detail = f"{parameter}: {error.detail}" if parameter != "filter" else error.detail
            raise
        filters.append(_region_filter(comparison))
    return filters


def _region_filter(comparison: ast.Comparison) -> RegionFilter:
    """A filter's comparison on the match (``parse_filter``) as the subcorpus it chooses."""
    assert isinstance(comparison.left, ast.LabelRef) and isinstance(comparison.right, ast.RegexValue)
    return RegionFilter(attribute=comparison.left.attribute, negated=comparison.negated,
                        pattern=comparison.right.pattern)
