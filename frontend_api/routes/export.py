"""``GET /api/v1/export``: a streamed TSV download of up to 10,000 hits (more in API mode).

Escaping, documented for users: in every cell a backslash is written ``\\\\``, a tab ``\\t``, a
newline ``\\n`` and a carriage return ``\\r``; a cell starting with ``=``, ``+``, ``-`` or ``@``
(which a spreadsheet would run as a formula) gets a leading apostrophe unless ``raw=1``.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Annotated, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import StreamingResponse

from backend_node.schemas import EXPORT_BATCH_LINES
from cowbird.errors import BadParameter
from frontend_api.errors import ExportBroken, Forbidden
from frontend_api.fanout import NodeFailure
from frontend_api.querying import build_query
from frontend_api.routes.deps import Corpora, CurrentUser, Queries, View, until_disconnected
from frontend_api.routes.query import Filters, Syntax, answered_total, failed_partitions

router = APIRouter(prefix="/api/v1", tags=["export"])
_FORMULA = ("=", "+", "-", "@")


def cell(value: object, raw: bool) -> str:
    text = "" if value is None else str(value)
    text = text.replace("\\", "\\\\").replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r")
    if not raw and text.startswith(_FORMULA):
        text = "'" + text
    return text


@router.get(
    "/export",
    response_class=StreamingResponse,
    responses={200: {"content": {"text/tab-separated-values": {}}, "description": "The rows as TSV, streamed."}},
)
async def export(
    request: Request,
    user: CurrentUser,
    registry: Corpora,
    queries: Queries,
    corpus: Annotated[str, Query()],
    q: Annotated[str, Query()],
    view: View,
    syntax: Syntax = "simple",
    ignore_case: bool = False,
    filters: Filters = None,
    limit: Annotated[int | None, Query(ge=1, description="Rows (default: the browser limit).")] = None,
    format: Annotated[Literal["tsv"], Query()] = "tsv",
    raw: Annotated[bool, Query(description="Do not neutralise cells that look like formulas.")] = False,
) -> StreamingResponse:
    settings = request.app.state.settings
    target = registry.get(corpus, user.name)
    allowed = settings.api_export_limit if user.api else settings.browser_export_limit
    rows = limit or settings.browser_export_limit
    if rows > allowed:
        if not user.api:
            raise Forbidden(f"more than {allowed} rows need API mode (an API token)")
        raise BadParameter(f"limit={rows}: API mode exports at most {allowed} rows")
    view.check(target)
    cqp = build_query(q, syntax, ignore_case, filters or [], target)
    statuses = await until_disconnected(request, queries.count(target, cqp, queries.budget()), settings.deadline)
    total = answered_total(statuses)
    written = min(rows, total)
    base = settings.public_url.rstrip("/") or str(request.base_url).rstrip("/")

    async def stream() -> AsyncIterator[bytes]:
        header = ["corpus", "position", "ref", "left", "match", "right", *view.show, *view.meta]
        yield ("\t".join(header) + "\n").encode()
        batch: list[str] = []
        sent = 0
        try:
            async for hit in queries.export(target, cqp, statuses, rows, view):
                values = [target.name, hit.position, base + hit.ref, hit.left, hit.match, hit.right,
                          *(hit.attributes.get(a, "") for a in view.show), *(hit.meta.get(m) for m in view.meta)]
                batch.append("\t".join(cell(v, raw) for v in values) + "\n")
                if len(batch) >= EXPORT_BATCH_LINES:
                    yield "".join(batch).encode()
                    sent += len(batch)
                    batch = []
        except NodeFailure as failure:
            # The headers promised `written` rows: the connection is dropped so that no client can
            # take what it got for a complete file.
            raise ExportBroken(f"the export broke off after {sent + len(batch)} of {written} rows: "
                               f"{failure.public()}") from failure
        if batch:
            yield "".join(batch).encode()

    headers = _download_headers(target.name, q, written, total, rows, failed_partitions(statuses))
    return StreamingResponse(stream(), media_type="text/tab-separated-values; charset=utf-8", headers=headers)


def _download_headers(corpus: str, q: str, written: int, total: int, rows: int, failed: list[str]) -> dict[str, str]:
    name = re.sub(r"[^A-Za-z0-9_-]+", "_", q)[:40].strip("_") or "query"
    return {
        "Content-Disposition": f'attachment; filename="{corpus}-{name}.tsv"',
        "X-Cowbird-Rows": str(written),
        "X-Cowbird-Total": str(total),
        "X-Cowbird-Truncated": "true" if total > rows else "false",
        "X-Cowbird-Complete": "false" if failed else "true",
        "X-Cowbird-Failed": ",".join(failed),
    }
