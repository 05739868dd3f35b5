"""``GET /api/v1/translate`` and ``GET /api/v1/check``: the query languages, with positioned errors;
``GET /api/v1/builder``: queries in boxes and back (``cowbird.query.builder``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request
from pydantic import ValidationError

from cowbird.core.errors import BadParameter, UnknownAttribute, query_problem
from cowbird.core.search import no_attribute
from cowbird.frontend.corpora import CorpusEntry
from cowbird.frontend.params import BuilderParameters, CheckParameters, TranslateParameters
from cowbird.frontend.querying import build_query
from cowbird.frontend.routes.deps import Corpora, CurrentUser
from cowbird.frontend.schemas import BoxTest, BuilderResult, CheckResult, QueryBox, QueryBoxes, Translation
from cowbird.frontend.subcorpora import in_subcorpus
from cowbird.query import QueryError, canonical, parse_cqp, serialize
from cowbird.query import translate_query as simple_to_ast
from cowbird.query.builder import Box, Boxes, DoesNotFit, TokenTest, from_query, to_query

router = APIRouter(prefix="/api/v1", tags=["query language"])


@router.get("/translate", response_model=Translation)
async def translate_query(
    request: Request, user: CurrentUser, catalogue: Corpora, asked: Annotated[TranslateParameters, Query()]
) -> Translation:
    """The CQP that /api/v1/query runs for the same parameters: the simple query translated (or the
    CQP query checked), the case switch applied, the filters added as a global constraint."""
    asked = await in_subcorpus(request, user, asked)
    if asked.filters and asked.corpus is None:
        raise BadParameter("filter: name the corpus (corpus=...) whose metadata the filters test")
    target = None if asked.corpus is None else catalogue.get(asked.corpus, user)
    checked = build_query(asked.q, asked.syntax, asked.ignore_case, asked.filters, target)
    return Translation(q=asked.q, cqp=checked.cqp, anchors=checked.anchors)


@router.get("/check", response_model=CheckResult)
async def check_query(asked: Annotated[CheckParameters, Query()]) -> CheckResult:
    try:
        return CheckResult(cqp=canonical(asked.cqp))
    except QueryError as exc:
        raise query_problem(exc) from exc


@router.get("/builder", response_model=BuilderResult)
async def builder(user: CurrentUser, catalogue: Corpora, asked: Annotated[BuilderParameters, Query()]) -> BuilderResult:
    """A query read into the builder's boxes (``q``: ``fits`` false, with the ``reason``, when they cannot
    show it), or the boxes written as canonical CQP (``boxes``); either way the query is checked as
    every query is (positioned errors)."""
    if (asked.q is None) == (asked.boxes is None):
        raise BadParameter("give q (a query to read into boxes) or boxes (boxes to write as CQP), one of the two")
    try:
        if asked.boxes is not None:
            try:
                given = QueryBoxes.model_validate_json(asked.boxes)
            except ValidationError as exc:
                problem = exc.errors()[0]
                where = ".".join(str(p) for p in problem["loc"])
                raise BadParameter(f"boxes: {where + ': ' if where else ''}{problem['msg']}") from None
            if asked.corpus is not None:
                _check_attributes(given, catalogue.get(asked.corpus, user))
            boxes = Boxes(tuple(Box(tuple(TokenTest(t.attribute, t.operator, t.value, t.ignore_case)
                                          for t in box.tests), box.min, box.max) for box in given.tokens),
                          given.within)
            if any(b.max is not None and b.min > b.max for b in boxes.tokens):
                raise BadParameter("boxes: a token repeats at least min and at most max times: min is more than max")
            cqp = canonical(serialize(to_query(boxes)))  # checked as a typed query is
            return BuilderResult(cqp=cqp, fits=True, boxes=given)
        text = asked.q or ""
        query = simple_to_ast(text)[0] if asked.syntax == "simple" else parse_cqp(text)
        cqp = serialize(query)
    except QueryError as exc:
        raise query_problem(exc) from exc
    try:
        read = from_query(query)
    except DoesNotFit as reason:
        return BuilderResult(cqp=cqp, fits=False, reason=str(reason))
    return BuilderResult(cqp=cqp, fits=True, boxes=QueryBoxes(
        tokens=[QueryBox(tests=[BoxTest(attribute=t.attribute, operator=t.operator, value=t.value,
                                        ignore_case=t.ignore_case) for t in box.tests], min=box.min, max=box.max)
                for box in read.tokens], within=read.within))


def _check_attributes(boxes: QueryBoxes, corpus: CorpusEntry) -> None:
    for box in boxes.tokens:
        for test in box.tests:
            if test.attribute not in corpus.p_attributes:
                raise UnknownAttribute(f"boxes: {no_attribute(corpus, 'p', test.attribute)}")
    if boxes.within is not None and boxes.within not in corpus.s_attributes:
        raise UnknownAttribute(f"boxes: {no_attribute(corpus, 's', boxes.within)}")
