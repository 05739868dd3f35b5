"""``GET /api/v1/translate`` and ``GET /api/v1/check``: the query languages, with positioned errors."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from frontend_api.errors import BadQuery, Unsupported
from query_lang import QueryError, UnsupportedQueryError, canonical, translate

router = APIRouter(prefix="/api/v1", tags=["query language"])


def _error(exc: QueryError) -> BadQuery | Unsupported:
    kind = Unsupported if isinstance(exc, UnsupportedQueryError) else BadQuery
    return kind(exc.pretty(), offset=exc.offset, line=exc.line, column=exc.column)


@router.get("/translate")
async def translate_query(
    q: Annotated[str, Query(description="A query in the simplified language.")],
    ignore_case: Annotated[bool, Query(description="Case-insensitive: %c on every term.")] = False,
) -> dict[str, str]:
    try:
        return {"q": q, "cqp": translate(q, ignore_case=ignore_case)}
    except QueryError as exc:
        raise _error(exc) from exc


@router.get("/check")
async def check_query(cqp: Annotated[str, Query(description="A CQP query expression.")]) -> dict[str, str]:
    try:
        return {"cqp": canonical(cqp)}
    except QueryError as exc:
        raise _error(exc) from exc
