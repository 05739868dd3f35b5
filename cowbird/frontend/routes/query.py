"""``GET /api/v1/query``: a merged KWIC preview (or a reproducible random sample) across partitions."""

from __future__ import annotations

import time
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool

from cowbird.core.analysis_spec import SortKey, parse_sort
from cowbird.core.errors import BadParameter
from cowbird.core.search import answered_total, failed_partitions
from cowbird.frontend.accounts import Accounts
from cowbird.frontend.hits import partition_result, public_hit, search_of
from cowbird.frontend.params import PreviewParameters
from cowbird.frontend.querying import build_query
from cowbird.frontend.routes.deps import Corpora, CurrentUser, Nodes, Quota, until_disconnected
from cowbird.frontend.schemas import QueryResult
from cowbird.frontend.state import frontend_state
from cowbird.query import QueryError, parse_cqp

router = APIRouter(prefix="/api/v1", tags=["query"])


def sort_key(sort: str | None, direction: str, seed: int, sample: int | None) -> SortKey | None:
    """The sort asked for (a sample is in corpus order: not both); the search checks it against the corpus."""
    if sort is None or not sort.strip():
        return None
    if sample is not None:
        raise BadParameter("sort and sample do not go together: a sample is in corpus order; "
                           "sort=random&seed=N orders all hits at random")
    return parse_sort(sort, direction, seed)  # type: ignore[arg-type]


@router.get("/query", response_model=QueryResult)
async def query(
    request: Request,
    response: Response,
    user: CurrentUser,
    quota: Quota,
    catalogue: Corpora,
    nodes: Nodes,
    asked: Annotated[PreviewParameters, Query()],
) -> QueryResult:
    started = time.perf_counter()
    target = catalogue.get(asked.corpus, user)
    settings = frontend_state(request).settings
    offset, limit, sample, seed = asked.offset, asked.limit, asked.sample, asked.seed
    if limit > settings.limits.preview_size or (sample or 0) > settings.limits.preview_size:
        raise BadParameter(f"a preview has at most {settings.limits.preview_size} hits; use /api/v1/export for more")
    view = asked.view(settings.limits.max_context)
    view.check(target)
    checked = build_query(asked.q, asked.syntax, asked.ignore_case, asked.filters, target)
    search = search_of(nodes, target, checked, view)
    order = sort_key(asked.sort, asked.direction, seed, sample)
    if order is not None:
        search.check_sort(order, asked.sort)
    key = quota.key(user, request)
    with quota.running(user, key):
        work = search.page(offset, limit, sample=None if sample is None else (sample, seed), sort=order)
        statuses, found = await until_disconnected(request, work, settings.limits.deadline)
    hits = [public_hit(target, view, f) for f in found]
    response.headers.update(quota.headers(user, key))
    failed = failed_partitions(statuses)
    request.state.log_corpus, request.state.log_hits = target.name, answered_total(statuses)
    if user.browser and user.name is not None and sample is None and offset == 0:
        accounts: Accounts = frontend_state(request).accounts
        await run_in_threadpool(_remember, accounts, user.name, target.name, asked.q, asked.syntax, asked.ignore_case,
                                asked.filters, answered_total(statuses))
    return QueryResult(
        corpus=target.name, cqp=search.cqp, total=answered_total(statuses), complete=not failed, failed=failed,
        partitions=[partition_result(s) for s in statuses], elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
        offset=offset if sample is None else 0, sample=sample, hits=hits,
        hint=CQP_HINT if asked.syntax == "simple" and not hits and looks_like_cqp(asked.q) else None,
        anchors=search.query.anchors,
    )


def _remember(accounts: Accounts, name: str, corpus: str, q: str, syntax: str, ignore_case: bool,
              filters: list[str], total: int) -> None:
    with accounts.database.session() as session:
        accounts.searches.remember(session, name, corpus, q, syntax, ignore_case, filters, total)


CQP_HINT = "this looks like CQP; use syntax=cqp"


def looks_like_cqp(q: str) -> bool:
    """A simple query that is CQP pasted into the simple box: it opens like a CQP token or tag,
    compares with =, and is valid CQP (searched as simple text, it finds the literal brackets)."""
    text = q.strip()
    if not text.startswith(("[", "<", '"', "(")) or "=" not in text:
        return False
    try:
        parse_cqp(text)
    except QueryError:
        return False
    return True
