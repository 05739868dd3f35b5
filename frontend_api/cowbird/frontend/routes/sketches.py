"""``GET /api/v1/sketch``: the word sketch of a headword — its collocates in each grammatical relation
of the corpus's sketch grammar, ranked by logDice — exact over every partition
(``cowbird.core.search.sketches``)."""

from __future__ import annotations

import functools
import time
from dataclasses import replace
from typing import Annotated, Any, cast

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel

from cowbird.core.errors import BadParameter, NotFound
from cowbird.core.search import WordSketch, failed_partitions
from cowbird.frontend.downloads import TABLE_FILES, Download, Format, stamp
from cowbird.frontend.hits import partition_result, search_of
from cowbird.frontend.params import MAX_JSON_ROWS, SketchParameters
from cowbird.frontend.querying import build_query
from cowbird.frontend.routes.analyses import _cqp_link, exactly
from cowbird.frontend.routes.deps import Visitor
from cowbird.frontend.schemas import SketchCollocateRow, SketchRelationResult, WordSketchResult
from cowbird.query import Alternation, Comparison, LabelRef, Pattern, QuerySyntaxError, parse_cqp, serialize
from cowbird.query.cqp_ast import Constraint, ConstraintAnd, ConstraintOr
from cowbird.query.sketch_grammar import View

router = APIRouter(prefix="/api/v1", tags=["analyses"])

DEFAULT_ROWS = 25
"""Collocates per relation in a JSON sketch unless ``limit`` says otherwise."""


@router.get("/sketch", response_model=WordSketchResult, responses=TABLE_FILES)
async def sketch(visit: Visitor, asked: Annotated[SketchParameters, Query()]) -> BaseModel | Response:
    """The word sketch of ``headword``: for each relation of the corpus's sketch grammar, the collocates
    with their frequency in the relation and logDice, the most salient first; in the subcorpus of the
    ``filter``s if given. Counts are summed over the partitions before any score."""
    started = time.perf_counter()
    asked = await visit.subcorpus(asked)
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
    limit = asked.limit if asked.limit is not None else (DEFAULT_ROWS if asked.format == "json" else None)
    if asked.format == "json" and limit is not None and limit > MAX_JSON_ROWS:
        raise BadParameter(f"limit={limit}: a JSON sketch has at most {MAX_JSON_ROWS:,} collocates a relation; take "
                           "the whole sketch as a file (format=tsv or csv)")
    # each relation's queries as the nodes run them: the subcorpus's filters added
    relations = [[build_query(q, "cqp", False, asked.filters, target).cqp for q in view.relation.queries]
                 for view in views]
    first = build_query(views[0].relation.queries[0], "cqp", False, asked.filters, target)
    search = search_of(visit.nodes, target, first, None, visit.progress)
    work = search.sketch(asked.headword, grammar.attribute, views, relations, asked.min_freq, limit)
    statuses, found = await visit.run(work, reads=len(target.partitions), what="a word sketch")
    visit.logged(target.name)
    failed = failed_partitions(statuses)
    shown = [SketchRelationResult(
        name=r.name, head_total=r.head_total, share=None if r.share is None else round(r.share, 6),
        instances=r.instances, distinct=r.distinct, queries=r.queries,
        rows=[SketchCollocateRow(value=c.value, f=c.f, total=c.total, log_dice=round(c.log_dice, 4),
                                 concordance=_cqp_link(target.name, functools.partial(
                                     _instances, view, queries, grammar.attribute, asked.headword, c.value)))
              for c in r.collocates])
        for r, view, queries in zip(found.relations, views, relations, strict=True)]
    if asked.format != "json":
        return _file(asked, target.name, target.config.version or None, grammar.name, found, shown, failed)
    return WordSketchResult(
        corpus=target.name, headword=asked.headword, attribute=grammar.attribute, grammar=grammar.name,
        filters=asked.filters, frequency=found.frequency, tokens=found.size, min_freq=asked.min_freq,
        saved=found.saved, relations=shown, complete=not failed, failed=failed,
        partitions=[partition_result(s) for s in statuses],
        elapsed_ms=round((time.perf_counter() - started) * 1000, 1))


def _instances(view: View, queries: list[str], attribute: str, headword: str, collocate: str) -> str:
    """One CQP query finding exactly the instances of the relation pairing headword and collocate: its
    queries (as one alternation when there are several), with the headword and the collocate
    constrained at the target and the keyword (either way round in a symmetric relation)."""
    parsed = [parse_cqp(q) for q in queries]
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
               for p in parsed):
            raise QuerySyntaxError("the relation's queries differ beyond their patterns")  # no link, then
        base = replace(base, pattern=Alternation(tuple(cast(Pattern, p.pattern) for p in parsed)))
    existing = base.constraint
    return serialize(replace(base, constraint=wanted if existing is None else ConstraintAnd((existing, wanted))))


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
    columns = ["relation", "collocate", "f", "head_total", "total", "log_dice", "share"]
    rows = [[r.name, c.value, c.f, r.head_total, c.total, c.log_dice, r.share] for r in shown for c in r.rows]
    named = repr((corpus, asked.headword, sorted(asked.relation), asked.filters, asked.min_freq, asked.limit))
    return Download(cast(Format, asked.format), columns, about if asked.provenance else None,
                    f"{corpus}_sketch", named, failed, "word sketch").whole(rows)
