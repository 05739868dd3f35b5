"""``GET /api/v1/translate`` and ``GET /api/v1/check``: the query languages, with positioned errors."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from cowbird.errors import query_problem
from frontend_api.schemas import CheckResult, Translation
from query_lang import QueryError, canonical, translate

router = APIRouter(prefix="/api/v1", tags=["query language"])


@router.get("/translate", response_model=Translation)
async def translate_query(
    q: Annotated[str, Query(description="A query in the simplified language.")],
    ignore_case: Annotated[bool, Query(description="Case-insensitive: %c on every term.")] = False,
) -> Translation:
    try:
        return Translation(q=q, cqp=translate(q, ignore_case=ignore_case))
    except QueryError as exc:
        raise query_problem(exc) from exc


@router.get("/check", response_model=CheckResult)
async def check_query(cqp: Annotated[str, Query(description="A CQP query expression.")]) -> CheckResult:
    try:
        return CheckResult(cqp=canonical(cqp))
    except QueryError as exc:
        raise query_problem(exc) from exc
