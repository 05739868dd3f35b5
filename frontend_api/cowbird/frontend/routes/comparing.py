"""Korp's comparative views, exact over every partition: ``GET /api/v1/trend`` — one or more queries'
relative frequency per period of a date attribute, with a confidence band (``cowbird.core.trends``);
``GET /api/v1/compare`` — two searches compared on an attribute of their matches, each value ranked
by keyness (``cowbird.core.wordlist.keyness``)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Annotated, Any, Literal, cast
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel

from cowbird.core.analysis_merge import FrequencyTable
from cowbird.core.analysis_spec import parse_breakdown, parse_fold
from cowbird.core.errors import BadParameter, CowbirdError, UnknownAttribute
from cowbird.core.periods import period_regex
from cowbird.core.search import PartitionStatus, answered_total, failed_partitions, no_attribute
from cowbird.core.subcorpus import subcorpus_sizes
from cowbird.core.trends import points
from cowbird.core.wordlist import Keyness, Significance, keyness
from cowbird.frontend.corpora import CorpusEntry, Partition
from cowbird.frontend.downloads import Download, Format, stamp
from cowbird.frontend.hits import partition_result
from cowbird.frontend.operations import COMPARE, TREND
from cowbird.frontend.params import CompareParameters, Searching, TrendParameters
from cowbird.frontend.querying import region_filters
from cowbird.frontend.routes.analyses import searched, value_links
from cowbird.frontend.routes.deps import Visitor, not_stalled
from cowbird.frontend.routes.prologue import declared
from cowbird.frontend.schemas import (
    ComparedSearch,
    CompareNext,
    CompareResult,
    CompareRow,
    TrendPoint,
    TrendResult,
    TrendSeries,
)
from cowbird.frontend.subcorpora import subcorpus_filters

router = APIRouter(prefix="/api/v1", tags=["analyses"])

PLAIN_YEAR = "[0-9]{4}"
"""A trend's values that are a year and nothing more (``match`` of the sizes asked per value): at most
10,000 of them, however many dates the attribute holds."""
LOOSER_P = (0.01, 0.05, 1.0)
"""The significance levels a comparison that listed nothing is offered next, strictest first (those of the
page's *significant at*): the first looser than the one asked that lists a row; p=1 ranks every value by
log-likelihood, as Korp's comparison and Sketch Engine's keywords list them."""


def date_attribute(corpus: CorpusEntry, by: str | None) -> str:
    """The s-attribute a trend is counted over: ``by``, which the corpus must have with values, or the
    corpus's first ``*_year``, then ``*_date``, then ``*lastmod*`` attribute."""
    if by is not None:
        if by not in corpus.meta:
            raise UnknownAttribute(f"by={by}: {no_attribute(corpus, 'meta', by)}")
        return by
    for test in (lambda n: n.endswith("_year") or n == "year", lambda n: n.endswith("_date") or n == "date",
                 lambda n: "lastmod" in n):
        found = [name for name in corpus.meta if test(name)]
        if found:
            return found[0]
    raise BadParameter(f"by: corpus {corpus.name} has no attribute named as a year or a date; name the one that "
                       f"holds dates (it has: {', '.join(corpus.meta) or 'none'})")


@declared(router, TREND)
async def trend(visit: Visitor, asked: Annotated[TrendParameters, Query()]) -> BaseModel | Response:
    """How often each query occurs per period (``period``: year, month, decade) of the dates an
    s-attribute holds (``by``), per million tokens of the (sub)corpus in that period, with a 95 %
    Wilson band; periods with fewer than ``sparse_below`` tokens are marked sparse, periods without
    text have no rate. Several ``q`` are counted on the same periods."""
    started = time.perf_counter()
    target = visit.corpus(asked.corpus)
    by = date_attribute(target, asked.by)
    filters = region_filters(asked.filters, target, "filter")
    searches = []
    for q in asked.q:
        _, search = visit.search(Searching.model_validate(
            {"corpus": target.name, "q": q, "syntax": asked.syntax, "ignore_case": asked.ignore_case,
             "filter": asked.filters}))
        search.query.check_no_cut("a trend")
        not_stalled(visit.request, search)
        searches.append(search)
    partitions = target.partitions

    yearly = asked.period == "year"

    async def work() -> tuple[Any, Any, list[Any]]:
        sizes = subcorpus_sizes(visit.nodes, target.name, partitions, filters, None, by, None, False,
                                visit.nodes.time_limit, asked.period)
        # per year, the texts whose value is the year and nothing more: a year holding only those has
        # its hits under the readable filter by=YEAR (equals)
        plain = [subcorpus_sizes(visit.nodes, target.name, partitions, filters, None, by, PLAIN_YEAR, False,
                                 visit.nodes.time_limit)] if yearly else []
        counted = [s.distribution(by, "value", asked.period) for s in searches]
        found = await asyncio.gather(sizes, *plain, *counted)
        return found[0], found[1] if yearly else None, list(found[1 + yearly:])

    sizes, plain, distributions = await visit.run(work(), reads=len(partitions) * (len(searches) + 1 + yearly),
                                                  what="a trend")
    visit.logged(target.name)
    by_period = {k: (v[0], v[1]) for k, v in sizes.values.items()}
    plain_years = set() if plain is None or failed_partitions(plain.statuses) else {
        year for year, (tokens, _) in plain.values.items() if year in by_period and by_period[year][0] == tokens}
    if not any(by_period):
        raise BadParameter(f"by={by}: none of its values in the texts searched holds a year or a date (2012, "
                           "2012-05-04, 20120504, 2012-05-04T10:20); name an attribute that does")
    series = []
    for q, search, (statuses, table) in zip(asked.q, searches, distributions, strict=True):
        hits = {row.value: row.hits for row in table.rows}
        failed = failed_partitions(statuses)
        series.append(TrendSeries(
            q=q, cqp=search.cqp, total=answered_total(statuses), undated=hits.get("", 0) + table.outside,
            complete=not failed, failed=failed, partitions=[partition_result(s) for s in statuses],
            points=[TrendPoint(period=p.period, hits=p.hits, tokens=p.tokens, texts=p.texts,
                               per_million=p.per_million, low=p.low, high=p.high, sparse=p.sparse,
                               concordance=_period_hits(target.name, q, asked, by, p.period, p.period in plain_years)
                               if p.tokens else None)
                    for p in points(hits, by_period, asked.period, asked.sparse_below)]))
    failed = sorted({*failed_partitions(sizes.statuses), *(f for s in series for f in s.failed)})
    if asked.format != "json":
        return _file(asked, target, by, sizes.tokens, failed, series)
    return TrendResult(
        corpus=target.name, by=by, period=asked.period, filters=asked.filters, sparse_below=asked.sparse_below,
        tokens=sizes.tokens, undated_tokens=by_period.get("", (0, 0))[0], total=sum(s.total for s in series),
        complete=not failed, failed=failed, series=series,
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1))


def _period_hits(corpus: str, q: str, asked: TrendParameters, by: str, period: str, plain: bool) -> str:
    """The search page with the query's hits in ``period``: its filters and one on the date attribute
    matching exactly the values of that period — ``text_year=2005`` (equals) when every text of the
    year has just the year as its value (``plain``), else the expression of every date in the period."""
    only = f"{by}={period}" if plain else f"{by}~{period_regex(period, asked.period)}"
    params: dict[str, str | list[str]] = {"corpus": corpus, "q": q, "syntax": asked.syntax,
                                          "filter": [*asked.filters, only]}
    if asked.ignore_case:
        params["ignore_case"] = "1"
    return "/?" + urlencode(params, doseq=True)


def _file(asked: TrendParameters, target: CorpusEntry, by: str, tokens: int, failed: list[str],
          series: list[TrendSeries]) -> Response:
    """One row per query and period as a file, with a metadata block saying what was counted and how."""
    about: dict[str, Any] = {
        "analysis": "trend", "corpus": target.name, "corpus_version": target.config.version or None,
        "queries": asked.q, "syntax": asked.syntax, "ignore_case": asked.ignore_case,
        "cqp": [s.cqp for s in series], "filters": asked.filters, "by": by, "period": asked.period,
        "sparse_below": asked.sparse_below, "tokens_searched": tokens,
        "band": "95 % Wilson score interval of hits/tokens, per million tokens",
        "undated_hits": [s.undated for s in series], "complete": not failed, "failed_partitions": failed, **stamp(),
    }  # fmt: skip
    columns = ["query", "period", "hits", "tokens", "texts", "per_million", "low", "high", "sparse"]
    rows = [[s.q, p.period, p.hits, p.tokens, p.texts, p.per_million, p.low, p.high, p.sparse]
            for s in series for p in s.points]
    named = repr((target.name, asked.q, asked.syntax, asked.ignore_case, asked.filters, by, asked.period,
                  asked.sparse_below))
    return Download(cast(Format, asked.format), columns, about if asked.provenance else None,
                    f"{target.name}_trend", named, failed, "trend").whole(rows)


@declared(router, COMPARE)
async def compare(visit: Visitor, asked: Annotated[CompareParameters, Query()]) -> BaseModel | Response:
    """Two searches — two queries, two corpora, or one query over two subcorpora — compared on an
    attribute of the match (``by``, ``on``, ``fold`` as for a frequency breakdown): the values each
    search prefers, counted exactly over every partition on both sides, ranked by keyness as keyword
    lists are (signed log-likelihood, Log Ratio with its 95 % interval, %DIFF) with the same
    significance filter, the sizes being each search's hits counted."""
    started = time.perf_counter()
    other_filters = list(asked.other_filters)
    other_corpus = asked.other_corpus or asked.corpus
    if asked.other_subcorpus:
        saved = await subcorpus_filters(visit.request, visit.user, asked.other_subcorpus, other_corpus,
                                        "other_subcorpus")
        other_filters = [*saved, *other_filters]
    first = searched(visit, asked)
    try:
        second = searched(visit, Searching.model_validate({
            "corpus": other_corpus, "q": asked.other_q if asked.other_q is not None else asked.q,
            "syntax": asked.other_syntax or asked.syntax,
            "ignore_case": asked.ignore_case if asked.other_ignore_case is None else asked.other_ignore_case,
            "filter": other_filters}))
    except CowbirdError as error:  # say which search it is about
        error.detail = f"the second search (other_q, other_corpus, other_filter): {error.detail}"
        raise
    if (first.corpus.name, first.search.cqp) == (second.corpus.name, second.search.cqp):
        raise BadParameter("the two searches are the same: give another query (other_q), corpus (other_corpus) or "
                           "texts (other_filter, e.g. the texts the first search's filter leaves out)")
    levels, folded = parse_breakdown(asked.by, asked.on), parse_fold(asked.fold)
    for side in (first, second):
        side.search.query.check_no_cut("a comparison")
        not_stalled(visit.request, side.search)

    async def work() -> list[tuple[list[PartitionStatus[Partition]], FrequencyTable]]:
        return list(await asyncio.gather(*(side.search.frequency(asked.by, asked.on, folded, 1, 0, None)
                                           for side in (first, second))))

    reads = len(first.corpus.partitions) + len(second.corpus.partitions)
    (statuses, ours), (other_statuses, theirs) = await visit.run(work(), reads=reads, what="a comparison")
    visit.logged(first.corpus.name)
    compared = comparison(ours, theirs, asked)
    links = [value_links(side.corpus.name, side.search.query.query, levels, folded) for side in (first, second)]
    rows = [CompareRow(
        value=value, preferred=preferred, frequency=a, other_frequency=b,
        share=a / ours.counted if ours.counted else 0.0, other_share=b / theirs.counted if theirs.counted else 0.0,
        log_likelihood=round(m.log_likelihood, 4), log_ratio=round(m.log_ratio, 4),
        log_ratio_low=round(m.log_ratio_low, 4), log_ratio_high=round(m.log_ratio_high, 4), diff=round(m.diff, 2),
        hits=links[0](value) if a else None, other_hits=links[1](value) if b else None)
        for value, preferred, a, b, m in compared.rows]
    all_statuses = statuses + other_statuses
    failed = failed_partitions(all_statuses)
    sides = [ComparedSearch(corpus=side.corpus.name, q=side.q, syntax=side.syntax, ignore_case=side.ignore_case,
                            filters=side.filters, cqp=side.search.cqp, total=answered_total(s), counted=t.counted,
                            distinct=t.distinct, truncated=t.truncated)
             for side, s, t in ((first, statuses, ours), (second, other_statuses, theirs))]
    shown_on = ",".join(str(span) for _, span in levels)
    if asked.format != "json":
        about: dict[str, Any] = {
            "analysis": "compare", "first": sides[0].model_dump(), "second": sides[1].model_dump(), "by": asked.by,
            "on": shown_on, "fold": folded, "min": asked.min, "order": asked.order, "compared": compared.candidates,
            "p": asked.p, "correction": asked.correction, "critical_log_likelihood": round(compared.critical, 4),
            "min_log_ratio": asked.min_log_ratio, "not_significant": compared.not_significant,
            "sizes": "each search's hits counted (counted); shares are frequency / counted",
            "rows": len(rows), "complete": not failed, "failed_partitions": failed, **stamp(),
        }  # fmt: skip
        columns = ["value", "preferred", "frequency", "other_frequency", "share", "other_share", "log_likelihood",
                   "log_ratio", "log_ratio_low", "log_ratio_high", "diff"]
        named = repr(sorted(asked.model_dump().items()))
        return Download(cast(Format, asked.format), columns, about if asked.provenance else None,
                        f"{first.corpus.name}_compare", named, failed, "compare").whole(
            [[row[c] for c in columns] for row in (r.model_dump() for r in rows)])
    return CompareResult(
        first=sides[0], second=sides[1], by=asked.by, on=shown_on, fold=folded, min=asked.min, order=asked.order,
        compared=compared.candidates, p=asked.p, correction=asked.correction,
        critical_log_likelihood=round(compared.critical, 4), min_log_ratio=asked.min_log_ratio,
        not_significant=compared.not_significant, preferred_first=compared.first, preferred_second=compared.second,
        complete=not failed, failed=failed, partitions=[partition_result(s) for s in all_statuses], rows=rows,
        next_setting=None if rows else next_setting(ours, theirs, asked, compared),
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1))


@dataclass
class Comparison:
    """The values compared, those listed (each side's preferred, most distinctive first, at most
    ``limit`` a side) and how many the significance filter left out."""

    rows: list[tuple[str, Literal["first", "second"], int, int, Keyness]]
    candidates: int
    critical: float
    not_significant: int
    first: int
    second: int


def comparison(ours: FrequencyTable, theirs: FrequencyTable, asked: CompareParameters) -> Comparison:
    """Every value with at least ``min`` hits on one side, its keyness (the sizes: each side's hits
    counted), kept when significant (``Significance``, as keyword lists) and preferred by one side."""
    a = {row.value: row.frequency for row in ours.rows}
    b = {row.value: row.frequency for row in theirs.rows}
    values = sorted(v for v in {*a, *b} if a.get(v, 0) >= asked.min or b.get(v, 0) >= asked.min)
    significance = Significance(asked.p, asked.correction == "bonferroni", asked.min_log_ratio)
    if not ours.counted or not theirs.counted:
        return Comparison([], len(values), 0.0, len(values), 0, 0)
    measured = [(v, a.get(v, 0), b.get(v, 0), keyness(a.get(v, 0), ours.counted, b.get(v, 0), theirs.counted))
                for v in values]
    critical = significance.critical(len(measured))
    sides: dict[str, list[tuple[str, Literal["first", "second"], int, int, Keyness]]] = {"first": [], "second": []}
    for value, x, y, measure in measured:
        if x * theirs.counted == y * ours.counted or not significance.keeps(measure, critical):
            continue  # equal shares: preferred by neither
        side: Literal["first", "second"] = "first" if x * theirs.counted > y * ours.counted else "second"
        sides[side].append((value, side, x, y, measure))
    for listed in sides.values():
        listed.sort(key=lambda row: (-abs(float(getattr(row[4], asked.order))), row[0]))
    kept = len(sides["first"]) + len(sides["second"])
    return Comparison(sides["first"][: asked.limit] + sides["second"][: asked.limit], len(values), critical,
                      len(values) - kept, len(sides["first"]), len(sides["second"]))


def next_setting(ours: FrequencyTable, theirs: FrequencyTable, asked: CompareParameters,
                 compared: Comparison) -> CompareNext | None:
    """The nearest setting under which a comparison that listed nothing lists rows: with values compared
    but none significant, the first of ``LOOSER_P`` looser than ``p`` that keeps one; with no value
    reaching ``min`` (but hits on both sides), ``min`` 1. None when no setting lists anything (no hits
    counted on a side, or every value equally frequent on both)."""
    if not ours.counted or not theirs.counted:
        return None
    if not compared.candidates:
        if asked.min == 1:
            return None
        fewer = comparison(ours, theirs, asked.model_copy(update={"min": 1}))
        if not fewer.rows:
            return None
        return CompareNext(parameter="min", value=1, rows=len(fewer.rows), detail=(
            f"no value of {asked.by} has {asked.min} hits on either side; with min=1 "
            f"{len(fewer.rows)} are listed"))
    correction = " (Bonferroni-corrected for the values compared)" if asked.correction == "bonferroni" else ""
    for p in LOOSER_P:
        if p <= asked.p:
            continue
        looser = comparison(ours, theirs, asked.model_copy(update={"p": p}))
        if looser.rows:
            listed = "every value ranked by log-likelihood, significant or not" if p >= 1 else f"at p < {p:g}"
            return CompareNext(parameter="p", value=p, rows=len(looser.rows), detail=(
                f"none of the {compared.candidates} values compared is significantly more frequent in either "
                f"search at p < {asked.p:g}{correction}; {listed}: {len(looser.rows)} rows"))
    return None
