"""``GET /api/v1/translate`` and ``GET /api/v1/check``: the query languages, with positioned errors."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from cowbird.core.errors import BadParameter, query_problem
from cowbird.frontend.params import CheckParameters, TranslateParameters
from cowbird.frontend.querying import build_query
from cowbird.frontend.routes.deps import Corpora, CurrentUser
from cowbird.frontend.schemas import CheckResult, Translation
from cowbird.frontend.subcorpora import in_subcorpus
from cowbird.query import QueryError, canonical

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
