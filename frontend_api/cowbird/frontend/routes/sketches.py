"""``GET /api/v1/sketch``: the word sketch of a headword — its collocates in each grammatical relation
of the corpus's sketch grammar, ranked by logDice — exact over every partition
(``cowbird.core.search.sketches``)."""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Callable, Coroutine
from dataclasses import replace
from typing import Annotated, Any, TypeVar, cast
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel

from cowbird.core.errors import BadParameter, LimitExceeded, NotFound
from cowbird.core.search import CheckedQuery, CostEstimate, Statuses, WordSketch, failed_partitions
from cowbird.core.search.sketches import RelationSketch
from cowbird.frontend.corpora import CorpusEntry, Partition
from cowbird.frontend.downloads import Download, Format, stamp
from cowbird.frontend.hits import NodeSearch, partition_result, search_of
from cowbird.frontend.operations import SKETCH, SKETCH_DIFFERENCE, THESAURUS
from cowbird.frontend.params import MAX_JSON_ROWS, SketchDifferenceParameters, SketchParameters, ThesaurusParameters
from cowbird.frontend.querying import build_query
from cowbird.frontend.routes.analyses import _cqp_link, exactly
from cowbird.frontend.routes.deps import Visit, Visitor, estimated
from cowbird.frontend.routes.prologue import declared
from cowbird.frontend.schemas import (
    SketchCollocateRow,
    SketchDifferenceRelation,
    SketchDifferenceResult,
    SketchDifferenceRow,
    SketchRelationResult,
    ThesaurusResult,
    ThesaurusRow,
    WordSketchResult,
)
from cowbird.query import Alternation, Comparison, LabelRef, Pattern, QuerySyntaxError, serialize
from cowbird.query.cqp_ast import Constraint, ConstraintAnd, ConstraintOr
from cowbird.query.sketch_grammar import MATCHING_STRATEGY, SketchGrammar, View

router = APIRouter(prefix="/api/v1", tags=["word sketches"])
T = TypeVar("T")

DEFAULT_ROWS = 25
"""Collocates per relation in a JSON sketch (words in a thesaurus entry) unless ``limit`` says otherwise."""
MAX_THESAURUS_ROWS = 1000
"""Words a thesaurus entry lists at most (each scored from its whole sketch)."""


@declared(router, SKETCH)
async def sketch(visit: Visitor, asked: Annotated[SketchParameters, Query()]) -> BaseModel | Response:
    """The word sketch of ``headword``: for each relation of the corpus's sketch grammar, the collocates
    with their frequency in the relation and logDice, the most salient first; in the subcorpus of the
    ``filter``s if given. Counts are summed over the partitions before any score."""
    started = time.perf_counter()
    target, grammar, views, relations, search = _prepared(visit, asked)
    limit = _limit(asked)
    statuses, found = await _counted(visit, search, target, views, asked.filters, "a word sketch",
                                     lambda: search.sketch(asked.headword, grammar.attribute, views, relations,
                                                           asked.min_freq, limit))
    failed = failed_partitions(statuses)
    shown = [SketchRelationResult(
        name=r.name, label=view.shown(asked.headword), head_total=r.head_total,
        share=None if r.share is None else round(r.share, 6),
        instances=r.instances, distinct=r.distinct, queries=r.queries,
        rows=[SketchCollocateRow(value=c.value, f=c.f, total=c.total, log_dice=round(c.log_dice, 4),
                                 concordance=_link(target.name, view, queries, c.value, attribute=grammar.attribute,
                                                   headword=asked.headword))
              for c in r.collocates])
        for r, view, queries in zip(found.relations, views, relations, strict=True)]
    if asked.format != "json":
        return _file(asked, target.name, target.config.version or None, grammar.name, found, shown, failed)
    return WordSketchResult(**_answered(target, grammar, asked, found.frequency, statuses, failed, started),
                            tokens=found.size, saved=found.saved, relations=shown)


@declared(router, SKETCH_DIFFERENCE)
async def sketch_difference(visit: Visitor, asked: Annotated[SketchDifferenceParameters, Query()],
                            ) -> BaseModel | Response:
    """The sketch difference of ``headword`` and ``other``: for each relation, the collocates both have
    (``shared``, ordered from those preferring the headword to those preferring the other) and those
    only one has (``only_first``, ``only_second``, the most salient first), with both logDice scores and
    their ``difference``. Each sketch is exact over every partition, as ``/api/v1/sketch``'s."""
    started = time.perf_counter()
    if asked.other == asked.headword:
        raise BadParameter(f"other={asked.other}: compare the headword with another word")
    target, grammar, views, relations, search = _prepared(visit, asked)
    limit = _limit(asked)

    async def both() -> list[tuple[Statuses[Partition], WordSketch]]:
        return list(await asyncio.gather(*(
            search.sketch(word, grammar.attribute, views, relations, asked.min_freq, None)
            for word in (asked.headword, asked.other))))

    (statuses, first), (other_statuses, second) = await _counted(
        visit, search, target, views, asked.filters, "a sketch difference", both, reads=2)
    failed = sorted(set(failed_partitions(statuses)) | set(failed_partitions(other_statuses)))
    links = functools.partial(_link, target.name, attribute=grammar.attribute)
    shown = [_compared(one, two, functools.partial(links, view, queries, headword=asked.headword),
                       functools.partial(links, view, queries, headword=asked.other), limit,
                       view.shown(f"{asked.headword}/{asked.other}"))
             for one, two, view, queries in zip(first.relations, second.relations, views, relations, strict=True)]
    if asked.format != "json":
        return _difference_file(asked, target.name, target.config.version or None, grammar.name, first, second,
                                shown, failed)
    return SketchDifferenceResult(**_answered(target, grammar, asked, first.frequency, statuses, failed, started),
                                  other=asked.other, other_frequency=second.frequency, tokens=first.size,
                                  relations=shown)


def _link(corpus: str, view: View, queries: list[CheckedQuery], value: str, *, attribute: str,
          headword: str) -> str | None:
    return _cqp_link(corpus, functools.partial(_instances, view, queries, attribute, headword, value))


def _compared(one: RelationSketch, two: RelationSketch, link: Callable[[str], str | None],
              other_link: Callable[[str], str | None], limit: int | None, label: str) -> SketchDifferenceRelation:
    """One relation of a sketch difference (``label``: as users read it): the collocates both words
    have and those only one has."""
    scores = {c.value: c for c in one.collocates}
    others = {c.value: c for c in two.collocates}

    def row(value: str) -> SketchDifferenceRow:
        a, b = scores.get(value), others.get(value)
        score_a, score_b = (a.log_dice if a else None), (b.log_dice if b else None)
        return SketchDifferenceRow(
            value=value, f=a.f if a else 0, other_f=b.f if b else 0,
            log_dice=None if score_a is None else round(score_a, 4),
            other_log_dice=None if score_b is None else round(score_b, 4),
            difference=round((score_a or 0.0) - (score_b or 0.0), 4),
            concordance=link(value) if a else None, other_concordance=other_link(value) if b else None)

    shared = sorted((row(v) for v in scores.keys() & others.keys()), key=lambda r: (-r.difference, r.value))
    only_first = sorted((row(v) for v in scores.keys() - others.keys()), key=lambda r: (-r.difference, r.value))
    only_second = sorted((row(v) for v in others.keys() - scores.keys()), key=lambda r: (r.difference, r.value))
    return SketchDifferenceRelation(
        name=one.name, label=label, head_total=one.head_total, other_head_total=two.head_total,
        shared_total=len(shared),
        only_first_total=len(only_first), only_second_total=len(only_second), shared=shared[:limit],
        only_first=only_first[:limit], only_second=only_second[:limit])


@declared(router, THESAURUS)
async def thesaurus(visit: Visitor, asked: Annotated[ThesaurusParameters, Query()]) -> BaseModel | Response:
    """The words whose sketches are most like the headword's, with their similarity score (Rychlý and
    Kilgarriff 2007) from the counts summed over every partition; each links to its sketch."""
    started = time.perf_counter()
    target, grammar, views, relations, search = _prepared(visit, asked)
    if asked.limit is not None and asked.limit > MAX_THESAURUS_ROWS:
        raise BadParameter(f"limit={asked.limit}: a thesaurus entry lists at most {MAX_THESAURUS_ROWS:,} words")
    limit = asked.limit or DEFAULT_ROWS
    statuses, found = await _counted(visit, search, target, views, asked.filters, "a thesaurus entry",
                                     lambda: search.thesaurus(asked.headword, grammar.attribute, views,
                                                              relations, asked.min_freq, limit))
    failed = failed_partitions(statuses)
    base = {"corpus": target.name, "filter": asked.filters, "relation": asked.relation}
    rows = [ThesaurusRow(word=s.word, score=round(s.score, 6), shared=s.shared,
                         sketch="/api/v1/sketch?" + urlencode({**base, "headword": s.word}, doseq=True))
            for s in found.similar]
    if asked.format != "json":
        about: dict[str, Any] = {
            "analysis": "thesaurus", "corpus": target.name, "corpus_version": target.config.version or None,
            "grammar": grammar.name, "headword": asked.headword, "attribute": grammar.attribute,
            "relations": [view.name for view in views], "filters": asked.filters, "min_freq": asked.min_freq,
            "limit": limit, "contexts": found.contexts, "candidates": found.candidates,
            "score": "Rychlý and Kilgarriff 2007: shared contexts' logDice, less their squared difference / 50, over "
                     "both words' sums of logDice",
            "rows": len(rows), "complete": not failed, "failed_partitions": failed, **stamp(),
        }  # fmt: skip
        named = repr((target.name, asked.headword, sorted(asked.relation), asked.filters, asked.min_freq, limit))
        return Download(cast(Format, asked.format), ["word", "score", "shared"], about if asked.provenance else None,
                        f"{target.name}_thesaurus", named, failed, "thesaurus").whole(
            [[r.word, r.score, r.shared] for r in rows])
    return ThesaurusResult(**_answered(target, grammar, asked, found.frequency, statuses, failed, started),
                           contexts=found.contexts, candidates=found.candidates, rows=rows)


async def _counted(visit: Visit, search: NodeSearch, target: CorpusEntry, views: list[View], filters: list[str],
                   what: str, work: Callable[[], Coroutine[Any, Any, T]], reads: int = 1) -> T:
    """The work as one of the viewer's queries (``Visit.run``): a subcorpus's estimated first and charged
    the estimate (``_subcorpus_cost``), the whole corpus's paid as ``what`` reading each partition
    ``reads`` times."""
    cost = await _subcorpus_cost(visit, target, views, filters, what)
    found = await visit.run(work(), search if cost else None, known=cost, reads=reads * len(target.partitions),
                            what=what)
    visit.logged(target.name)
    return found


async def _subcorpus_cost(visit: Visit, target: CorpusEntry, views: list[View], filters: list[str],
                          what: str) -> CostEstimate | None:
    """A subcorpus's relations are counted from their queries (no table holds them): each query with
    the filters estimated first (as one of the viewer's queries, paid for), and the work refused when
    it would take longer than a query may; the estimates summed are what the work is charged. None
    for the whole corpus: its relations are read from tables, or counted once and kept."""
    if not filters:
        return None
    queries = {checked.cqp: checked for view in views for q in view.relation.queries
               for checked in [build_query(q, "cqp", False, filters, target)]}
    estimates = [await estimated(visit.request, visit.caller, visit.user, visit.key,
                                 search_of(visit.nodes, target, checked, None, None)) for checked in queries.values()]
    seconds = None if any(e.seconds is None for e in estimates) else sum(e.seconds or 0.0 for e in estimates)
    cpu = None if any(e.cpu_seconds is None for e in estimates) else sum(e.cpu_seconds or 0.0 for e in estimates)
    most = visit.limits.deadline
    if seconds is not None and seconds > most:
        raise LimitExceeded(f"{what} of this subcorpus counts its {len(queries)} relation queries in the texts the "
                            f"filters choose: about {seconds:,.0f} s of the nodes' time, more than a request may take "
                            f"({most:,.0f} s); choose fewer texts, or fewer relations (relation=)")
    hits = None if any(e.hits is None for e in estimates) else sum(e.hits or 0 for e in estimates)
    return CostEstimate(hits=hits, exact=False, seconds=seconds, cpu_seconds=cpu, statuses=estimates[0].statuses)


def _answered(target: CorpusEntry, grammar: SketchGrammar, asked: SketchParameters, frequency: int,
              statuses: Statuses[Partition], failed: list[str], started: float) -> dict[str, Any]:
    """What every word sketch answer says first (``SketchAnswer``'s fields)."""
    return {"corpus": target.name, "headword": asked.headword, "attribute": grammar.attribute,
            "grammar": grammar.name, "filters": asked.filters, "frequency": frequency, "min_freq": asked.min_freq,
            "complete": not failed, "failed": failed, "partitions": [partition_result(s) for s in statuses],
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 1)}


def _prepared(visit: Visit, asked: SketchParameters) -> tuple[CorpusEntry, SketchGrammar, list[View],
                                                               list[list[CheckedQuery]], NodeSearch]:
    """The corpus asked for, its grammar, the relations asked for, their queries as the nodes run them
    (the subcorpus's filters added: checked once, then kept, ``build_query``) and the search over
    the corpus's partitions."""
    target = visit.corpus(asked.corpus)
    grammar = target.grammar
    if grammar is None:
        raise NotFound(f"corpus {target.name} has no word sketches: its configuration names no sketch_grammar")
    views = list(grammar.views)
    if asked.relation:
        names = [view.name for view in views]
        unknown = [r for r in asked.relation if r not in names]
        if unknown:
            raise BadParameter(f"relation={unknown[0]}: the sketch grammar of {target.name} has no such relation "
                               f"(it has: {', '.join(names)})")
        views = [view for view in views if view.name in asked.relation]
    checked = [[build_query(q, "cqp", False, asked.filters, target) for q in view.relation.queries] for view in views]
    return target, grammar, views, checked, search_of(visit.nodes, target, checked[0][0], None, visit.progress)


def _limit(asked: SketchParameters) -> int | None:
    limit = asked.limit if asked.limit is not None else (DEFAULT_ROWS if asked.format == "json" else None)
    if asked.format == "json" and limit is not None and limit > MAX_JSON_ROWS:
        raise BadParameter(f"limit={limit}: a JSON answer has at most {MAX_JSON_ROWS:,} collocates a relation; take "
                           "the whole sketch as a file (format=tsv or csv)")
    return limit


def _instances(view: View, queries: list[CheckedQuery], attribute: str, headword: str, collocate: str) -> str:
    """One CQP query finding exactly the instances of the relation pairing headword and collocate: its
    queries (as one alternation when there are several), with the headword and the collocate
    constrained at the target and the keyword (either way round in a symmetric relation), under the
    strategy the sketch counts with (``(?traditional)``: every start of an instance is a hit, as the
    sketch counts it)."""
    parsed = [checked.query for checked in queries]  # checked once (``_prepared``): nothing parsed again
    head, coll = (collocate, headword) if view.swapped else (headword, collocate)

    def pair(at_target: str, at_keyword: str) -> Constraint:
        return ConstraintAnd((Comparison(LabelRef("target", attribute), False, exactly(at_target)),
                              Comparison(LabelRef("keyword", attribute), False, exactly(at_keyword))))

    wanted: Constraint = pair(head, coll)
    if view.relation.symmetric and head != coll:
        wanted = ConstraintOr((wanted, pair(coll, head)))
    base = parsed[0]
    if len(parsed) > 1:
        if any(p.within != base.within or p.constraint != base.constraint or p.within_count != base.within_count
               or p.strategy != base.strategy for p in parsed):
            raise QuerySyntaxError("the relation's queries differ beyond their patterns")  # no link, then
        base = replace(base, pattern=Alternation(tuple(cast(Pattern, p.pattern) for p in parsed)))
    existing = base.constraint
    return serialize(replace(base, constraint=wanted if existing is None else ConstraintAnd((existing, wanted)),
                             strategy=base.strategy or MATCHING_STRATEGY))


def _file(asked: SketchParameters, corpus: str, version: str | None, grammar: str, found: WordSketch,
          shown: list[SketchRelationResult], failed: list[str]) -> Response:
    """One row per relation and collocate, with a metadata block saying what was counted and how."""
    about: dict[str, Any] = {
        "analysis": "word sketch", "corpus": corpus, "corpus_version": version, "grammar": grammar,
        "headword": asked.headword, "attribute": found.attribute, "filters": asked.filters,
        "headword_frequency": found.frequency, "tokens": found.size, "min_freq": asked.min_freq, "limit": asked.limit,
        "log_dice": "14 + log2(2 f / (head_total + total)), Rychlý 2008",
        "relations": {r.name: {"head_total": r.head_total, "instances": r.instances, "queries": r.queries}
                      for r in shown},
        "rows": sum(len(r.rows) for r in shown), "complete": not failed, "failed_partitions": failed, **stamp(),
    }  # fmt: skip
    columns = ["relation", "label", "collocate", "f", "head_total", "total", "log_dice", "share"]
    rows = [[r.name, r.label, c.value, c.f, r.head_total, c.total, c.log_dice, r.share] for r in shown for c in r.rows]
    named = repr((corpus, asked.headword, sorted(asked.relation), asked.filters, asked.min_freq, asked.limit))
    return Download(cast(Format, asked.format), columns, about if asked.provenance else None,
                    f"{corpus}_sketch", named, failed, "word sketch").whole(rows)


def _difference_file(asked: SketchDifferenceParameters, corpus: str, version: str | None, grammar: str,
                     first: WordSketch, second: WordSketch, shown: list[SketchDifferenceRelation],
                     failed: list[str]) -> Response:
    about: dict[str, Any] = {
        "analysis": "sketch difference", "corpus": corpus, "corpus_version": version, "grammar": grammar,
        "headword": asked.headword, "other": asked.other, "attribute": first.attribute, "filters": asked.filters,
        "headword_frequency": first.frequency, "other_frequency": second.frequency, "tokens": first.size,
        "min_freq": asked.min_freq, "limit": asked.limit,
        "difference": "log_dice - other_log_dice, a missing score counted as 0",
        "rows": sum(r.shared_total + r.only_first_total + r.only_second_total for r in shown),
        "complete": not failed, "failed_partitions": failed, **stamp(),
    }  # fmt: skip
    columns = ["relation", "label", "group", "collocate", "f", "other_f", "log_dice", "other_log_dice", "difference"]
    rows = [[r.name, r.label, group, c.value, c.f, c.other_f, c.log_dice, c.other_log_dice, c.difference]
            for r in shown for group, listed in (("only_first", r.only_first), ("shared", r.shared),
                                                 ("only_second", r.only_second)) for c in listed]
    named = repr((corpus, asked.headword, asked.other, sorted(asked.relation), asked.filters, asked.min_freq,
                  asked.limit))
    return Download(cast(Format, asked.format), columns, about if asked.provenance else None,
                    f"{corpus}_sketchdiff", named, failed, "sketch difference").whole(rows)
