"""``GET /api/v1/wordlist``: the word list or n-gram list of a corpus or of a subcorpus (its texts
chosen by their metadata), by any p-attribute, exact over every partition (``cowbird.core.wordlist``);
``GET /api/v1/keywords``: a corpus or subcorpus against a reference, exact on both sides."""

from __future__ import annotations

import time
from typing import Annotated, Any, cast
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel

from cowbird.core.analysis_merge import rate
from cowbird.core.errors import BadParameter, UnknownAttribute
from cowbird.core.search import failed_partitions, no_attribute
from cowbird.core.wordlist import Significance, WordListSpec, keyword_list, word_list
from cowbird.frontend.downloads import Download, Format, stamp
from cowbird.frontend.hits import partition_result
from cowbird.frontend.operations import KEYWORDS, WORDLIST
from cowbird.frontend.params import MAX_JSON_ROWS, KeywordParameters, WordListParameters
from cowbird.frontend.querying import region_filters
from cowbird.frontend.routes.analyses import exactly
from cowbird.frontend.routes.deps import Visitor
from cowbird.frontend.routes.prologue import declared
from cowbird.frontend.schemas import KeywordResult, KeywordRow, WordListResult, WordListRow
from cowbird.frontend.subcorpora import subcorpus_filters
from cowbird.query import AttributeTest, QuerySyntaxError, TokenPattern, serialize
from cowbird.query import Query as ParsedQuery
from cowbird.query import Sequence as Succession
from cowbird.query.regex_check import check_regex

router = APIRouter(prefix="/api/v1", tags=["analyses"])

DOCUMENT = "text"
"""The s-attribute n-grams stay within by default, when the corpus has it."""


@declared(router, WORDLIST)
async def wordlist(visit: Visitor, asked: Annotated[WordListParameters, Query()]) -> BaseModel | Response:
    """The ``limit`` most frequent n-grams (n=1: words) of ``attribute`` with at least ``min`` occurrences,
    in the corpus or in the subcorpus its ``filter``s choose, staying within one ``within`` region (text);
    only those with a token matching ``match``, if given. Exact over every partition that answers."""
    started = time.perf_counter()
    target = visit.corpus(asked.corpus)
    if asked.attribute not in target.p_attributes:
        raise UnknownAttribute(f"attribute={asked.attribute}: {no_attribute(target, 'p', asked.attribute)}")
    within = asked.within if asked.within is not None else (DOCUMENT if DOCUMENT in target.s_attributes else "")
    if within in ("", "none"):
        within = ""
    elif within not in target.s_attributes:
        raise UnknownAttribute(f"within={within}: {no_attribute(target, 's', within)}; within=none crosses "
                               "them all")
    if asked.limit > MAX_JSON_ROWS:
        raise BadParameter(f"limit={asked.limit:,}: a word list has at most {MAX_JSON_ROWS:,} rows at once; raise "
                           "min or narrow it with match")
    filters = region_filters(asked.filters, target, "filter")
    if asked.match is not None:
        problem, _ = check_regex(asked.match)
        if problem is not None:
            raise BadParameter(f"match={asked.match!r}: {problem.message}")
    spec = WordListSpec(asked.attribute, asked.n, within or None, tuple(filters), asked.match, asked.ignore_case,
                        asked.min, asked.limit)
    found = await visit.run(word_list(visit.nodes, target.partitions, spec, visit.nodes.time_limit),
                            reads=len(target.partitions), what="a word list")
    visit.logged(target.name)
    failed = failed_partitions(found.statuses)
    tokens = found.tokens
    rows = [WordListRow(tokens=list(k), value=" ".join(k), frequency=c,
                        per_million=rate(c, tokens),
                        hits=_hits(target.name, asked.attribute, k, within, asked.filters)) for k, c in found.rows]
    uncounted = _uncounted(within, asked.n, [s.failure is None for s in found.statuses],
                           [s.partition.id in found.cut_off for s in found.statuses])
    if asked.format != "json":
        return _file(asked, target.name, target.config.version or None, target.size, within, found.tokens,
                     found.ngrams, found.more, failed, rows, uncounted)
    return WordListResult(
        corpus=target.name, attribute=asked.attribute, n=asked.n, within=within or None, filters=asked.filters,
        match=asked.match, min=asked.min, tokens=found.tokens, ngrams=found.ngrams, rows=rows, more=found.more,
        uncounted=uncounted,
        complete=not failed, failed=failed, partitions=[partition_result(s) for s in found.statuses],
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1))


def _uncounted(within: str, n: int, answered: list[bool], cut_off: list[bool]) -> int:
    """N-grams across a cut between two partitions that answered (within=none) that are not counted: those
    after a partition that carries no neighbour tokens (encoded before ``neighbours.json``; each other
    partition completes its last n-1 n-grams with the next one's first tokens). Partitions are cut
    between texts, so with a region they never occur."""
    if within or n == 1:
        return 0
    return (n - 1) * sum(a and b and c for a, b, c in zip(answered, answered[1:], cut_off, strict=False))


def _file(asked: WordListParameters, corpus: str, version: str | None, size: int, within: str, tokens: int,
          ngrams: int, more: bool, failed: list[str], rows: list[WordListRow], uncounted: int) -> Response:
    """The rows as a TSV, CSV or XLSX file, with a metadata block saying what was counted and how."""
    about: dict[str, Any] = {
        "analysis": "wordlist", "corpus": corpus, "corpus_version": version, "corpus_size": size,
        "attribute": asked.attribute, "n": asked.n, "within": within or None, "filters": asked.filters,
        "match": asked.match, "ignore_case": asked.ignore_case, "min": asked.min, "limit": asked.limit,
        "subcorpus_tokens": tokens, "ngrams": ngrams, "uncounted_at_partition_cuts": uncounted, "rows": len(rows),
        "truncated": more, "complete": not failed,
        "failed_partitions": failed, **stamp(),
    }  # fmt: skip
    columns = [*(f"token{k + 1}" for k in range(asked.n)), "value", "frequency", "per_million"] if asked.n > 1 else [
        "value", "frequency", "per_million"]
    named = repr((corpus, asked.attribute, asked.n, within, asked.filters, asked.match, asked.ignore_case, asked.min,
                  asked.limit))
    return Download(cast(Format, asked.format), columns, about if asked.provenance else None, f"{corpus}_wordlist",
                    named, failed, "wordlist" if asked.n == 1 else f"{asked.n}-grams").whole(
        [[*(r.tokens if asked.n > 1 else []), r.value, r.frequency, r.per_million] for r in rows])

def _hits(corpus: str, attribute: str, tokens: tuple[str, ...], within: str, filters: list[str]) -> str | None:
    """The search page finding an n-gram's occurrences as the list counted them: the tokens exactly, in
    one region of ``within``, in the subcorpus of the filters (None when a token cannot be a CQP string)."""
    try:
        each = tuple(TokenPattern(AttributeTest(attribute, False, exactly(t))) for t in tokens)
        q = serialize(ParsedQuery(each[0] if len(each) == 1 else Succession(each), within=within or None))
    except QuerySyntaxError:
        return None
    return "/?" + urlencode({"corpus": corpus, "q": q, "syntax": "cqp", "filter": filters}, doseq=True)


@declared(router, KEYWORDS)
async def keywords(visit: Visitor, asked: Annotated[KeywordParameters, Query()]) -> BaseModel | Response:
    """Keywords of the target (``corpus`` and its ``filter``s) against the reference (``reference``, by
    default the same corpus, and its ``reference_filter``s): every value of ``attribute`` occurring at
    least ``min`` times in the target (or ``reference_min`` in the reference), counted exactly on both
    sides, with signed log-likelihood, Log Ratio and its 95 % interval, and %DIFF; ranked by ``order``."""
    started = time.perf_counter()
    if asked.reference_subcorpus:
        saved = await subcorpus_filters(visit.request, visit.user, asked.reference_subcorpus,
                                        asked.reference or asked.corpus, "reference_subcorpus")
        asked = asked.model_copy(update={"reference_filters": [*saved, *asked.reference_filters],
                                         "reference_subcorpus": None})
    target = visit.corpus(asked.corpus)
    reference = visit.corpus(asked.reference or asked.corpus)
    for corpus, parameter in ((target, "attribute"), (reference, "attribute")):
        if asked.attribute not in corpus.p_attributes:
            raise UnknownAttribute(f"{parameter}={asked.attribute}: {no_attribute(corpus, 'p', asked.attribute)}")
    if asked.limit > MAX_JSON_ROWS:
        raise BadParameter(f"limit={asked.limit:,}: a keyword list has at most {MAX_JSON_ROWS:,} rows at once")
    if reference.name == target.name and sorted(asked.filters) == sorted(asked.reference_filters):
        raise BadParameter("the reference is the target itself: name another corpus (reference=) or other texts "
                           "(reference_filter=, e.g. the texts the target's filter leaves out)")
    filters = region_filters(asked.filters, target, "filter")
    reference_filters = region_filters(asked.reference_filters, reference, "reference_filter")
    least = asked.reference_min or asked.min
    spec = WordListSpec(asked.attribute, 1, None, tuple(filters), None, False, asked.min, asked.limit)
    reference_spec = WordListSpec(asked.attribute, 1, None, tuple(reference_filters), None, False, least, asked.limit)
    significance = Significance(asked.p, asked.correction == "bonferroni", asked.min_log_ratio, asked.smoothing)
    found = await visit.run(keyword_list(
        visit.nodes, target.partitions, spec, reference.partitions, reference_spec, asked.order,
        visit.nodes.time_limit, significance), reads=len(target.partitions) + len(reference.partitions),
        what="a keyword list")
    visit.logged(target.name)
    statuses = found.target + found.reference
    failed = failed_partitions(statuses)
    rows = [KeywordRow(
        value=" ".join(k), frequency=o1, reference_frequency=o2,
        per_million=rate(o1, found.tokens),
        reference_per_million=rate(o2, found.reference_tokens),
        log_likelihood=round(m.log_likelihood, 4), log_ratio=round(m.log_ratio, 4),
        log_ratio_low=round(m.log_ratio_low, 4), log_ratio_high=round(m.log_ratio_high, 4), diff=round(m.diff, 2),
        simple_maths=round(m.simple_maths, 4),
        hits=_hits(target.name, asked.attribute, k, "", asked.filters) if o1 else None)
        for k, o1, o2, m in found.rows]
    if asked.format != "json":
        about: dict[str, Any] = {
            "analysis": "keywords", "corpus": target.name, "corpus_version": target.config.version or None,
            "filters": asked.filters, "tokens": found.tokens, "reference": reference.name,
            "reference_version": reference.config.version or None, "reference_filters": asked.reference_filters,
            "reference_tokens": found.reference_tokens, "attribute": asked.attribute, "min": asked.min,
            "reference_min": least, "order": asked.order, "compared": found.candidates, "p": asked.p,
            "correction": asked.correction, "critical_log_likelihood": round(found.critical, 4),
            "min_log_ratio": asked.min_log_ratio, "smoothing": asked.smoothing,
            "not_significant": found.not_significant,
            "log_ratio": "log2 of the ratio of relative frequencies, a zero frequency counted as 0.5; 95 % interval",
            "rows": len(rows), "complete": not failed, "failed_partitions": failed, **stamp(),
        }  # fmt: skip
        columns = list(KeywordRow.model_fields)[:-1]
        named = repr((target.name, asked.filters, reference.name, asked.reference_filters, asked.attribute,
                      asked.min, least, asked.order, asked.limit, asked.p, asked.correction, asked.min_log_ratio,
                      asked.smoothing))
        return Download(cast(Format, asked.format), columns, about if asked.provenance else None,
                        f"{target.name}_keywords", named, failed, "keywords").whole(
            [[row[c] for c in columns] for row in (r.model_dump() for r in rows)])
    return KeywordResult(
        corpus=target.name, filters=asked.filters, reference=reference.name, reference_filters=asked.reference_filters,
        attribute=asked.attribute, min=asked.min, reference_min=least, order=asked.order, tokens=found.tokens,
        reference_tokens=found.reference_tokens, compared=found.candidates, p=asked.p, correction=asked.correction,
        critical_log_likelihood=round(found.critical, 4), min_log_ratio=asked.min_log_ratio,
        smoothing=asked.smoothing, not_significant=found.not_significant, listed=found.kept,
        target_partitions=[s.partition.id for s in found.target],
        reference_partitions=[s.partition.id for s in found.reference], rows=rows,
        complete=not failed,
        failed=failed, partitions=[partition_result(s) for s in statuses],
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1))
