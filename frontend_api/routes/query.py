"""``GET /api/v1/query``: a merged KWIC preview (or a reproducible random sample) across partitions."""

from __future__ import annotations

import time
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from frontend_api.errors import BadParameter
from frontend_api.querying import build_query
from frontend_api.routes.deps import Corpora, CurrentUser, Queries, until_disconnected, window
from frontend_api.service import PartitionStatus, Window, check_window

router = APIRouter(prefix="/api/v1", tags=["query"])

Syntax = Annotated[Literal["simple", "cqp"], Query(description="simple (Colibri² language) or cqp.")]
Filters = Annotated[list[str] | None, Query(alias="filter", description="ATTR~REGEX or ATTR!~REGEX, repeatable.")]


def summary(statuses: list[PartitionStatus]) -> dict[str, Any]:
    failed = [s.partition.id for s in statuses if s.error is not None]
    return {
        "total": sum(s.total or 0 for s in statuses if s.error is None),
        "complete": not failed,
        "failed": failed,
        "partitions": [s.as_json() for s in statuses],
    }


@router.get("/query")
async def query(
    request: Request,
    user: CurrentUser,
    registry: Corpora,
    queries: Queries,
    corpus: Annotated[str, Query(description="Corpus name.")],
    q: Annotated[str, Query(description="The query.")],
    shown: Annotated[Window, Depends(window)],
    syntax: Syntax = "simple",
    ignore_case: Annotated[bool, Query(description="Case-insensitive matching.")] = False,
    filters: Filters = None,
    offset: Annotated[int, Query(ge=0)] = 0,
    limit: Annotated[int, Query(ge=0)] = 100,
    sample: Annotated[int | None, Query(ge=1, description="Return a random sample of this many hits.")] = None,
    seed: Annotated[int, Query(description="Seed of the sample (same seed, same sample).")] = 0,
) -> dict[str, Any]:
    started = time.perf_counter()
    target = registry.get(corpus, user.name)
    preview_size = request.app.state.settings.preview_size
    if limit > preview_size or (sample or 0) > preview_size:
        raise BadParameter(f"a preview has at most {preview_size} hits; use /api/v1/export for more")
    check_window(target, shown)
    cqp = build_query(q, syntax, ignore_case, filters or [], target)
    deadline = request.app.state.settings.deadline
    if sample is not None:
        work = queries.sample(target, cqp, sample, seed, shown)
    else:
        work = queries.preview(target, cqp, offset, limit, shown)
    statuses, hits = await until_disconnected(request, work, deadline)
    return {
        "corpus": target.name,
        "cqp": cqp,
        **summary(statuses),
        "elapsed_ms": round((time.perf_counter() - started) * 1000, 1),
        "offset": offset if sample is None else 0,
        "sample": sample,
        "hits": hits,
    }
