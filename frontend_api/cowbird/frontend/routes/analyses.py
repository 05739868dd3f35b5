"""``GET /api/v1/frequency``, ``/api/v1/distribution`` and ``/api/v1/collocations``: analyses of a
query's hits over every partition, exact for the whole corpus (``cowbird.core.search``)."""

from __future__ import annotations

import asyncio
import functools
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Any, Literal, cast
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel

from cowbird.core.analysis_merge import (
    MEASURES,
    DistributionSums,
    DistributionTable,
    FrequencyTable,
    Measure,
    distribution_table,
    frequency_table,
    merge_frequencies,
    rate,
    stretches,
)
from cowbird.core.analysis_spec import LEVEL_SEPARATOR, WHOLE_MATCH, Span, parse_breakdown, parse_fold
from cowbird.core.errors import BadParameter, UnknownAttribute
from cowbird.core.search import CheckedQuery, PartitionStatus, answered_total, failed_partitions, no_attribute
from cowbird.frontend.corpora import CorpusEntry, Partition
from cowbird.frontend.downloads import Download, Format, stamp
from cowbird.frontend.hits import NodeSearch, partition_result, search_of
from cowbird.frontend.operations import COLLOCATIONS, DISPERSION, DISTRIBUTION, FREQUENCY
from cowbird.frontend.params import (
    MAX_JSON_ROWS,
    CollocationParameters,
    DispersionParameters,
    DistributionParameters,
    FrequencyParameters,
    Searching,
    split,
)
from cowbird.frontend.routes.deps import Visit, Visitor
from cowbird.frontend.routes.prologue import declared
from cowbird.frontend.schemas import (
    CollocateRow,
    CollocationResult,
    CorpusShare,
    DispersionBin,
    DispersionPartition,
    DispersionResult,
    DistributionResult,
    DistributionRow,
    FrequencyResult,
    FrequencyRow,
)
from cowbird.frontend.subcorpora import searched_tokens
from cowbird.query import (
    Alternation,
    AttributeTest,
    Comparison,
    LabelRef,
    Meet,
    MuUnion,
    Pattern,
    QuerySyntaxError,
    RegexValue,
    Repetition,
    Tabular,
    TokenPattern,
    serialize,
)
from cowbird.query import Query as ParsedQuery
from cowbird.query import Sequence as Succession

router = APIRouter(prefix="/api/v1", tags=["analyses"])


def _link(**params: str | list[str]) -> str:
    return "/?" + urlencode(params, doseq=True)


def _cqp_link(corpus: str, build: Callable[[], str]) -> str | None:
    """The search page running the CQP query ``build`` makes, or None when the value in it cannot be
    written as a CQP string (a token holding a control character)."""
    try:
        return _link(corpus=corpus, q=build(), syntax="cqp")
    except QuerySyntaxError:
        return None


def _escaped(value: str) -> str:
    """A regex matching ``value`` exactly; backslashes at its end are written ``\\x5c``, as a CQP
    string ending in a backslash is read differently when another quote follows in the query."""
    body = value.rstrip("\\")
    return re.escape(body) + "\\x5c" * (len(value) - len(body))


def exactly(value: str) -> RegexValue:
    """A test that matches ``value`` exactly: literally (``%l``), or as a regex when it ends in a backslash."""
    return RegexValue(_escaped(value)) if value.endswith("\\") else RegexValue(value, literal=True)


def _with_value(query: ParsedQuery, label: str, attribute: str, value: str, fold: str) -> str:
    """The query restricted to hits whose ``label`` token has this (folded) ``attribute`` value."""
    test = exactly(value) if not fold else \
        RegexValue(_escaped(value), ignore_case="c" in fold, ignore_diacritics="d" in fold)
    return CheckedQuery.of(query).constrained(Comparison(LabelRef(label, attribute), False, test)).cqp


def _followed_by(query: ParsedQuery, attribute: str, value: str, fold: str) -> str:
    """The query restricted to hits whose next token has this (folded) ``attribute`` value: a
    lookahead (``[: … :]``) after the pattern tests it without making it part of the match."""
    test = exactly(value) if not fold else \
        RegexValue(_escaped(value), ignore_case="c" in fold, ignore_diacritics="d" in fold)
    ahead = TokenPattern(AttributeTest(attribute, False, test), lookahead=True)
    pattern = query.pattern
    assert not isinstance(pattern, Meet | MuUnion | Tabular)
    items = pattern.items if isinstance(pattern, Succession) else (pattern,)
    return CheckedQuery.of(replace(query, pattern=Succession((*items, ahead)))).cqp


@dataclass(frozen=True)
class Asked:
    """The query of an analysis request as the user wrote it, and the search over the nodes it makes
    (the corpus visible to the viewer, the query checked once)."""

    corpus: CorpusEntry
    search: NodeSearch
    q: str
    syntax: str
    ignore_case: bool
    filters: list[str]


def searched(visit: Visit, asked: Searching) -> Asked:
    target, search = visit.search(asked)
    return Asked(target, search, asked.q, asked.syntax, asked.ignore_case, asked.filters)


def table_file(found: Asked, cqp: str, kind: str, format: str, provenance: bool, parameters: dict[str, object],
           statuses: list[PartitionStatus[Partition]], truncated: bool, columns: Sequence[str],
           rows: Sequence[Sequence[object]]) -> Response:
    """The rows as a file (``downloads``' writer: values exactly as counted), with a metadata block
    saying what was counted, how, and whether a partition was missing."""
    failed = failed_partitions(statuses)
    about: dict[str, Any] = {
        "analysis": kind, "query": found.q, "syntax": found.syntax, "ignore_case": found.ignore_case,
        "filters": found.filters, "cqp": cqp, "corpus": found.corpus.name,
        "corpus_version": found.corpus.config.version or None, "corpus_size": found.corpus.size, **parameters,
        **stamp(), "total": answered_total(statuses), "rows": len(rows), "truncated": truncated,
        "complete": not failed, "failed_partitions": failed,
    }  # fmt: skip
    named = repr((kind, found.corpus.name, found.q, found.syntax, found.ignore_case, found.filters,
                  sorted(parameters.items())))
    return Download(cast(Format, format), columns, about if provenance else None, f"{found.corpus.name}_{kind}",
                    named, failed, kind).whole(rows)


def page_size(limit: int | None, format: str, default: int) -> int | None:
    """The rows a request returns: ``limit``, or the default page of JSON; a file has every row (None)."""
    if format != "json":
        return limit
    if limit is not None and limit > MAX_JSON_ROWS:
        raise BadParameter(f"limit={limit}: a JSON answer has at most {MAX_JSON_ROWS:,} rows; page with offset, "
                           "or take the whole table as a file (format=tsv or csv)")
    return default if limit is None else limit


def statuses_of(statuses: list[PartitionStatus[Partition]]) -> dict[str, object]:
    failed = failed_partitions(statuses)
    return {"total": answered_total(statuses), "complete": not failed, "failed": failed,
            "partitions": [partition_result(s) for s in statuses]}


@declared(router, FREQUENCY)
async def frequency(visit: Visitor, asked: Annotated[FrequencyParameters, Query()]) -> BaseModel | Response:
    """How often each value occurs on the hits: CQP's ``count A by ATT on SPAN %FOLD``, summed over partitions."""
    started = time.perf_counter()
    found = searched(visit, asked)
    by, on, min, offset, limit, format = asked.by, asked.on, asked.min, asked.offset, asked.limit, asked.format
    target, cqp = found.corpus, found.search.cqp
    levels, folded = parse_breakdown(by, on), parse_fold(asked.fold)
    rows_wanted = page_size(limit, format, 1000)
    by_corpus: list[dict[str, int]] = []  # several corpora: each one's counts, for a column each
    if target.members:
        statuses, table, by_corpus = await visit.run(_frequency_per_corpus(
            visit, found, by, on, folded, min, offset, rows_wanted), found.search)
    else:
        work = found.search.frequency(by, on, folded, min, offset, rows_wanted)
        statuses, table = await visit.run(work, found.search)
    visit.logged(target.name, answered_total(statuses))
    names = [m.name for m in target.members]
    tokens = await searched_tokens(visit.nodes, target, asked.filters, statuses)
    for row in table.rows:  # per million tokens of the texts searched (the filters' subcorpus), as every view
        row.per_million = 0.0 if tokens is None else rate(row.frequency, tokens)
    sizes = await _member_tokens(visit, target, asked.filters, statuses)  # each corpus's: rates 20,000x apart
    shown_on = ",".join(str(s) for _, s in levels)
    keys = [f"{s}.{name}" for name, s in levels]  # the columns of a breakdown by several keys
    if format != "json":
        value_columns = ["value"] if len(levels) == 1 else keys
        return table_file(found, cqp, "frequency", format, asked.provenance,
                      {"by": by, "on": shown_on, "fold": folded, "min": min, "offset": offset, "limit": rows_wanted,
                       "tokens_searched": tokens, **{f"tokens_searched_{n}": t for n, t in sizes.items()}},
                      statuses, table.truncated,
                      [*value_columns, "frequency", "share", "per_million",
                       *(f"{c}_{n}" for n in names for c in ("frequency", "per_million"))],
                      [[*(r.value.split(LEVEL_SEPARATOR) if len(levels) > 1 else [r.value]), r.frequency, r.share,
                        r.per_million, *(x for n, counts in zip(names, by_corpus, strict=True)
                                         for x in _count_and_rate(counts.get(r.value, 0), sizes[n]))]
                       for r in table.rows])
    link = value_links(target.name, found.search.query.query, levels, folded)
    rows = [
        FrequencyRow(value=" / ".join(values) if len(levels) > 1 else row.value, values=values,
                     frequency=row.frequency, share=row.share, per_million=row.per_million,
                     concordance=link(row.value),
                     corpora={n: counts.get(row.value, 0) for n, counts in zip(names, by_corpus, strict=True)},
                     corpora_per_million={n: _count_and_rate(counts.get(row.value, 0), sizes[n])[1]
                                          for n, counts in zip(names, by_corpus, strict=True)})
        for row in table.rows
        for values in [row.value.split(LEVEL_SEPARATOR) if len(levels) > 1 else [row.value]]
    ]
    return FrequencyResult(
        corpus=target.name, cqp=cqp, **statuses_of(statuses),
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
        by=by, on=shown_on, keys=keys, fold=folded, tokens=tokens, counted=table.counted,
        unset=table.unset, distinct=table.distinct, truncated=table.truncated, offset=offset, rows_total=table.listed,
        rows=rows, corpora_tokens=sizes,
    )


async def _member_tokens(visit: Visit, target: CorpusEntry, filters: list[str],
                         statuses: list[PartitionStatus[Partition]]) -> dict[str, int | None]:
    """Each of several corpora searched: the tokens of its texts searched (its subcorpus under the
    filters), in its partitions that answered; empty for one corpus."""
    sizes: dict[str, int | None] = {}
    for member in target.members:
        ids = {p.id for p in member.partitions}
        sizes[member.name] = await searched_tokens(visit.nodes, member, filters,
                                                   [s for s in statuses if s.partition.id in ids])
    return sizes


def _count_and_rate(count: int, tokens: int | None) -> tuple[int, float]:
    """A corpus's frequency of a value and its rate per million of its tokens searched (0: size unknown)."""
    return count, 0.0 if not tokens else rate(count, tokens)


def value_links(corpus: str, parsed: ParsedQuery, levels: list[tuple[str, Span]],
                folded: str) -> Callable[[str], str | None]:
    """The search page with the hits whose counted value is the one given (a frequency row's
    concordance), where a query can say so: a breakdown by one attribute of one token of the match
    (the first, the last, or the whole match of one token) or of the token right after it (tested
    by a lookahead, which leaves the hits as they are); None for the others."""
    by, span = levels[0][0], levels[0][1]
    one_token = isinstance(parsed.pattern, TokenPattern)  # the whole match is its first token
    single = len(levels) == 1 and ((span.start == span.end and span.start.offset == 0)
                                   or (span == WHOLE_MATCH and one_token))
    after = len(levels) == 1 and span.start == span.end and span.start.offset == 1 and (
        span.start.name == "matchend" or (span.start.name == "match" and one_token)) and not isinstance(
        parsed.pattern, Meet | MuUnion | Tabular)

    def link(value: str) -> str | None:
        if single:
            return _cqp_link(corpus, functools.partial(_with_value, parsed, span.start.name, by, value, folded))
        if after:
            return _cqp_link(corpus, functools.partial(_followed_by, parsed, by, value, folded))
        return None

    return link


async def _frequency_per_corpus(visit: Visit, found: Asked, by: str, on: str | None, folded: str, least: int,
                                offset: int, limit: int | None,
                                ) -> tuple[list[PartitionStatus[Partition]], FrequencyTable, list[dict[str, int]]]:
    """A breakdown over several corpora: each counted on its own partitions (the same query), the
    values summed, and each corpus's counts kept for a column of its own."""
    members = found.corpus.members
    searches = [search_of(visit.nodes, member, found.search.query, progress=visit.progress) for member in members]
    answers = await asyncio.gather(*(s.frequency(by, on, folded, 1, 0, None) for s in searches))
    statuses = [status for each, _ in answers for status in each]
    counts = [{row.value: row.frequency for row in table.rows} for _, table in answers]
    tables = [table for _, table in answers]
    size = sum(s.partition.size for s in statuses if s.failure is None)
    table = frequency_table(merge_frequencies([(list(c), list(c.values())) for c in counts]),
                            sum(t.counted for t in tables), sum(t.unset for t in tables),
                            any(t.truncated for t in tables), size, least, offset, limit)
    return statuses, table, counts


@declared(router, DISPERSION)
async def dispersion(visit: Visitor, asked: Annotated[DispersionParameters, Query()]) -> BaseModel | Response:
    """Where the hits fall: Gries' DP over the parts (``parts``: the regions of an s-attribute, texts by
    default) and over the partitions, exact over every partition, and the hits in ``bins`` equal
    stretches of the corpus (a file: the stretches, the measures in its metadata block)."""
    started = time.perf_counter()
    found = searched(visit, asked)
    target, cqp = found.corpus, found.search.cqp
    statuses, measured = await visit.run(found.search.dispersion(asked.parts, asked.bins), found.search)
    visit.logged(target.name, answered_total(statuses))
    size = target.size
    bins = [DispersionBin(start=start, end=end, hits=h)
            for (start, end), h in zip(stretches(size, asked.bins), measured.bins, strict=True)]
    if asked.format != "json":
        return table_file(found, cqp, "dispersion", asked.format, asked.provenance,
                      {"parts": asked.parts, "bins": asked.bins, "tokens_searched": measured.tokens,
                       "parts_total": measured.parts,
                       "parts_with_hits": measured.parts_with_hits, "dp": measured.dp, "dp_norm": measured.dp_norm,
                       "dp_partitions": measured.dp_partitions}, statuses, False, ["start", "end", "hits"],
                      [[b.start, b.end, b.hits] for b in bins])
    return DispersionResult(
        corpus=target.name, cqp=cqp, **statuses_of(statuses),
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
        parts_attribute=asked.parts, tokens=measured.tokens, parts=measured.parts,
        parts_with_hits=measured.parts_with_hits, dp=measured.dp, dp_norm=measured.dp_norm,
        dp_partitions=measured.dp_partitions, bins=bins,
        partitions_hits=[DispersionPartition(id=p, tokens=t, hits=h) for p, t, h in measured.partitions])


@declared(router, DISTRIBUTION)
async def distribution(visit: Visitor, asked: Annotated[DistributionParameters, Query()]) -> BaseModel | Response:
    """Hits per value of an s-attribute at the match (CQP's ``group A match ATT``), with the size of
    each value's subcorpus and the relative frequency. An attribute such as a sentence id has as many
    values as regions: the rows come a page at a time (``offset``, ``limit``; ``rows_total`` says how
    many there are), a file has them all."""
    started = time.perf_counter()
    found = searched(visit, asked)
    by, order, offset, format = asked.by, asked.order, asked.offset, asked.format
    target, cqp = found.corpus, found.search.cqp
    rows_wanted = page_size(asked.limit, format, 1000)
    shares: list[tuple[str, DistributionSums]] = []  # several corpora: each one's hits and sizes per value
    if target.members:
        statuses, table, shares = await visit.run(_distribution_per_corpus(visit, found, by, order), found.search)
    else:
        statuses, table = await visit.run(found.search.distribution(by, order), found.search)
    visit.logged(target.name, answered_total(statuses))
    page = table.rows[offset:] if rows_wanted is None else table.rows[offset : offset + rows_wanted]

    def each(value: str) -> dict[str, CorpusShare]:
        return {name: CorpusShare(hits=sums.hits.get(value, 0), tokens=sums.tokens.get(value, 0),
                                  per_million=rate(sums.hits.get(value, 0), sums.tokens.get(value, 0)))
                for name, sums in shares}

    if format != "json":
        return table_file(found, cqp, "distribution", format, asked.provenance,
                      {"by": by, "order": order, "offset": offset, "limit": rows_wanted}, statuses,
                      table.truncated, ["value", "hits", "tokens", "per_million", "regions", "regions_with_hits",
                                        *(f"{kind}_{name}" for name, _ in shares for kind in ("hits", "tokens"))],
                      [[r.value, r.hits, r.tokens, r.per_million, r.regions, r.regions_with_hits,
                        *(n for share in each(r.value).values() for n in (share.hits, share.tokens))] for r in page])
    exact = not failed_partitions(statuses)
    base: dict[str, str | list[str]] = {"corpus": target.name, "q": found.q, "syntax": found.syntax}
    if found.ignore_case:
        base["ignore_case"] = "1"
    rows = [
        DistributionRow(value=row.value, hits=row.hits, tokens=row.tokens, per_million=row.per_million,
                        regions=row.regions, regions_with_hits=row.regions_with_hits, size_exact=exact,
                        concordance=_link(**base, filter=[*found.filters, only_value(by, row.value)]),
                        corpora=each(row.value))
        for row in page
    ]
    return DistributionResult(
        corpus=target.name, cqp=cqp, **statuses_of(statuses),
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
        by=by, outside=table.outside, numeric=table.numeric, all_values=table.all_values, truncated=table.truncated,
        offset=offset, rows_total=len(table.rows), rows=rows,
    )


async def _distribution_per_corpus(visit: Visit, found: Asked, by: str, order: Literal["value", "hits", "per_million"],
                                   ) -> tuple[list[PartitionStatus[Partition]], DistributionTable,
                                              list[tuple[str, DistributionSums]]]:
    """A distribution over several corpora: each counted on its own partitions, the values' hits and
    sizes summed, and each corpus's kept for columns of its own."""
    members = found.corpus.members
    searches = [search_of(visit.nodes, member, found.search.query, progress=visit.progress) for member in members]
    answers = await asyncio.gather(*(s.distribution(by, order) for s in searches))
    statuses = [status for each, _ in answers for status in each]
    shares: list[tuple[str, DistributionSums]] = []
    total = DistributionSums()
    for member, (_, table) in zip(members, answers, strict=True):
        sums = DistributionSums()
        for row in table.rows:
            for target in (sums, total):
                target.add([row.value], [row.hits], [row.regions_with_hits], [row.tokens], [row.regions])
        shares.append((member.name, sums))
    merged = distribution_table(total, sum(t.outside for _, t in answers), all(t.all_values for _, t in answers),
                                any(t.truncated for _, t in answers), order)
    return statuses, merged, shares


@declared(router, COLLOCATIONS)
async def collocations(visit: Visitor, asked: Annotated[CollocationParameters, Query()]) -> BaseModel | Response:
    """Collocates of the hits in a window, with co-occurrence and marginal frequencies summed over
    partitions before any association measure is computed."""
    started = time.perf_counter()
    found = searched(visit, asked)
    attribute, window, left, right, measures = asked.attribute, asked.window, asked.left, asked.right, asked.measures
    order, min_freq, offset, format = asked.order, asked.min_freq, asked.offset, asked.format
    target = found.corpus
    chosen = cast(list[Measure], split(measures) or list(MEASURES))
    unknown = [m for m in chosen if m not in MEASURES]
    if unknown:
        raise BadParameter(f"measures={measures}: unknown {', '.join(unknown)}; give any of {', '.join(MEASURES)}")
    if order != "f" and order not in MEASURES:
        raise BadParameter(f"order={order}: give f or one of {', '.join(MEASURES)}")
    region = _within(asked.within, target)
    # as cwb-ccc: the hits lie inside the windows' region too
    search = found.search.refined(found.search.query.within(region))
    cqp = search.cqp
    work = search.collocations(attribute, window if left is None else left, window if right is None else right,
                               region, chosen, cast(Measure, order), min_freq)
    statuses, table = await visit.run(work, search)
    visit.logged(target.name, answered_total(statuses))
    before, after = window if left is None else left, window if right is None else right
    rows_wanted = page_size(asked.limit, format, 100)
    page = table.rows[offset:] if rows_wanted is None else table.rows[offset : offset + rows_wanted]
    if format != "json":
        parameters: dict[str, object] = {
            "attribute": attribute, "left": before, "right": after, "within": region, "measures": chosen,
            "order": order, "min_freq": min_freq, "f1": table.f1, "n": table.n, "tokens_searched": table.tokens,
            "offset": offset, "limit": rows_wanted}
        return table_file(found, cqp, "collocations", format, asked.provenance, parameters, statuses, table.truncated,
                      ["value", "f", "f2", "marginal", "in_nodes", "expected", "texts", *chosen],
                      [[r.value, r.f, r.f2, r.marginal, r.in_nodes, r.expected, r.texts,
                        *(r.scores[m] for m in chosen)] for r in page])
    parsed = search.query.query
    rows = [CollocateRow(value=r.value, f=r.f, f2=r.f2, marginal=r.marginal, in_nodes=r.in_nodes, expected=r.expected,
                         texts=r.texts, scores=r.scores, concordance=_cqp_link(target.name, functools.partial(
                             _with_collocate, parsed, attribute, r.value, before, after)))
            for r in page]
    return CollocationResult(
        corpus=target.name, cqp=cqp, **statuses_of(statuses),
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
        attribute=attribute, left=before, right=after, within=region, measures=chosen, order=order, min_freq=min_freq,
        f1=table.f1, n=table.n, tokens=table.tokens,
        candidates=table.candidates, truncated=table.truncated, offset=offset, rows_total=len(table.rows), rows=rows,
    )


def _with_collocate(query: ParsedQuery, attribute: str, value: str, left: int, right: int) -> str:
    """The query's hits with ``value`` at most ``left`` tokens before or ``right`` after them, as one
    CQP query whose matches run from the hit to the collocate (or back): the concordance of a
    collocation. Its region (``within``) and constraint stay as they were."""
    collocate = TokenPattern(AttributeTest(attribute, False, exactly(value)))
    pattern = query.pattern
    if isinstance(pattern, Meet | MuUnion | Tabular):
        raise QuerySyntaxError("an MU or TAB query cannot be extended to its collocate")  # no link, then

    def gap(tokens: int) -> list[Pattern]:
        return [Repetition(TokenPattern(None), 0, tokens - 1)] if tokens > 1 else []

    options: list[Pattern] = []
    if right:
        options.append(Succession((pattern, *gap(right), collocate)))
    if left:
        options.append(Succession((collocate, *gap(left), pattern)))
    return serialize(replace(query, pattern=options[0] if len(options) == 1 else Alternation(tuple(options))))


def only_value(attribute: str, value: str) -> str:
    """A filter keeping the regions whose value is exactly ``value``."""
    return f"{attribute}~{re.escape(value)}" if value else f"{attribute}!~.+"


def _within(within: str | None, corpus: CorpusEntry) -> str | None:
    """The region windows stay in: as given, ``none`` for none, by default ``text`` when the corpus has
    texts (partitions are cut between texts, so windows never cross a partition's edge either)."""
    if within is None:
        return "text" if "text" in corpus.s_attributes else None
    if within.strip().lower() == "none":
        return None
    if within not in corpus.s_attributes:
        raise UnknownAttribute(f"within={within}: {no_attribute(corpus, 's', within)}; or none")
    return within

