"""``GET /api/v1/translate`` and ``GET /api/v1/check``: the query languages, with positioned errors."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Query

from cowbird.core.errors import BadParameter, query_problem
from cowbird.frontend.querying import build_query
from cowbird.frontend.routes.deps import Corpora, CurrentUser
from cowbird.frontend.schemas import CheckResult, Translation
from cowbird.query import QueryError, canonical

router = APIRouter(prefix="/api/v1", tags=["query language"])


@router.get("/translate", response_model=Translation)
async def translate_query(
    user: CurrentUser,
    catalogue: Corpora,
    q: Annotated[str, Query(description="A query in the simplified language (or CQP with syntax=cqp).")],
    syntax: Annotated[Literal["simple", "cqp"], Query(description="simple (the default) or cqp.")] = "simple",
    ignore_case: Annotated[bool, Query(description="Case-insensitive: %c on every term (with syntax=cqp: on "
                                                   "every attribute test).")] = False,
    corpus: Annotated[str | None, Query(description="The corpus the filters are checked against.")] = None,
    filters: Annotated[list[str] | None, Query(alias="filter", description="ATTR~REGEX or ATTR!~REGEX, "
                                                                          "repeatable (needs corpus).")] = None,
) -> Translation:
    """The CQP that /api/v1/query runs for the same parameters: the simple query translated (or the
    CQP query checked), the case switch applied, the filters added as a global constraint."""
    if filters and corpus is None:
        raise BadParameter("filter: name the corpus (corpus=...) whose metadata the filters test")
    target = None if corpus is None else catalogue.get(corpus, user)
    checked = build_query(q, syntax, ignore_case, filters or [], target)
    return Translation(q=q, cqp=checked.cqp, anchors=checked.anchors)


@router.get("/check", response_model=CheckResult)
async def check_query(cqp: Annotated[str, Query(description="A CQP query expression.")]) -> CheckResult:
    try:
        return CheckResult(cqp=canonical(cqp))
    except QueryError as exc:
        raise query_problem(exc) from exc
