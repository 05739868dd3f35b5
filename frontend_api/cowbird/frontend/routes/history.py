"""``GET /api/v1/history``: the logged-in user's last searches in the browser, re-runnable."""

from __future__ import annotations

import datetime
import json
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool

from cowbird.core.errors import Unauthorized
from cowbird.frontend.accounts import Accounts
from cowbird.frontend.routes.deps import CurrentUser
from cowbird.frontend.schemas import History, PastSearch
from cowbird.frontend.state import frontend_state

router = APIRouter(prefix="/api/v1", tags=["history"])


@router.get("/history", response_model=History)
async def history(request: Request, user: CurrentUser) -> History:
    if user.name is None:
        raise Unauthorized("the search history belongs to a logged-in user: log in first")
    accounts: Accounts = frontend_state(request).accounts
    name = user.name

    def read() -> list[PastSearch]:
        with accounts.database.session() as session:
            past = []
            for search in accounts.searches.of(session, name):
                filters = json.loads(search.filters)
                query = [("corpus", search.corpus), ("q", search.q), ("syntax", search.syntax)]
                query += [("ignore_case", "1")] if search.ignore_case else []
                query += [("filter", f) for f in filters]
                at = search.at if search.at.tzinfo else search.at.replace(tzinfo=datetime.UTC)  # SQLite: UTC
                past.append(PastSearch(at=at.isoformat(timespec="seconds"), corpus=search.corpus, q=search.q,
                                       syntax=search.syntax, ignore_case=search.ignore_case, filters=filters,
                                       total=search.total, url=f"/?{urlencode(query)}"))
            return past

    return History(data=await run_in_threadpool(read))
