"""``GET /api/v1/export``: a streamed download of up to 10,000 hits (more in API mode).

Formats (``frontend_api/cowbird/frontend/downloads.py``): ``tsv`` (default), ``csv``, ``xlsx``, ``ndjson``. Values are
written exactly as the corpus has them — no formula guard in TSV, CSV or NDJSON (a token ``-`` or
``=`` must stay what it is); spreadsheets should open the XLSX, where every cell is a string.
The file name says what the file holds (``ewt_<query-hash>_first<rows>of<total>[_incomplete].tsv``), and
``provenance=1`` puts the query, its CQP, the filters, the totals and what is missing into the file.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from contextlib import ExitStack
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from cowbird.core import gdex
from cowbird.core.analysis_spec import SortKey
from cowbird.core.errors import BadParameter, ExportBroken, Forbidden, NodesUnavailable, Unauthorized
from cowbird.core.search import HitView, Located, PartitionFailure, Statuses, answered_total, failed_partitions
from cowbird.core.wire import EXPORT_BATCH_LINES
from cowbird.frontend.accounts import Accounts
from cowbird.frontend.background import FORWARDED_SCOPE, REFUND
from cowbird.frontend.corpora import CorpusEntry, Partition
from cowbird.frontend.downloads import XLSX_MAX_ROWS, Download, stamp
from cowbird.frontend.fair_use import LEASE_MARGIN
from cowbird.frontend.gdex import streamed_scores, with_gdex
from cowbird.frontend.hits import NodeSearch, public_hit
from cowbird.frontend.links import public_base
from cowbird.frontend.operations import EXPORT
from cowbird.frontend.params import ExportParameters
from cowbird.frontend.routes.deps import Visitor
from cowbird.frontend.routes.prologue import declared
from cowbird.frontend.routes.query import sort_key
from cowbird.frontend.schemas import GdexScore, Hit
from cowbird.frontend.state import frontend_state
from cowbird.frontend.viewer import Viewer

router = APIRouter(prefix="/api/v1", tags=["export"])


@declared(router, EXPORT)
async def export(visit: Visitor, asked: Annotated[ExportParameters, Query()]) -> StreamingResponse:
    request, user, quota = visit.request, visit.user, visit.quota
    settings = frontend_state(request).settings
    target = visit.corpus(asked.corpus)
    q, syntax, ignore_case, filters, format = asked.q, asked.syntax, asked.ignore_case, asked.filters, asked.format
    offset, limit, sample, seed, sort = asked.offset, asked.limit, asked.sample, asked.seed, asked.sort
    allowed = settings.limits.api_export_limit if user.api else settings.limits.browser_export_limit
    rows = sample if sample is not None else (limit or settings.limits.browser_export_limit)
    if rows > allowed:
        if not user.api:
            raise Forbidden(f"more than {allowed:,} rows need API mode: an API token of an account with the "
                            "api_bulk right (ask an administrator)")
        raise BadParameter(f"{'sample' if sample else 'limit'}={rows}: API mode exports at most {allowed} rows")
    if sample is not None and offset:
        raise BadParameter("offset and sample do not go together: a sample is drawn from all hits")
    view = asked.view(settings.limits.max_context)
    view.check(target)
    categorised = None if asked.categories is None else await _categories(request, user, asked.categories)
    only = asked.only_categorised
    if only and categorised is None:
        raise BadParameter("only_categorised=1 needs categories=: the saved search whose categorised lines you want")
    if only and (sample is not None or offset or limit is not None):
        raise BadParameter("only_categorised=1 exports every categorised line: leave out sample, offset and limit")
    _, search = visit.search(asked, view)
    cqp = search.cqp
    order = await with_gdex(visit, target, sort_key(sort, asked.direction, seed, sample))
    if order is not None:
        search.check_sort(order, sort)
    key = visit.key
    slot = ExitStack()  # the export runs (counts as one of the viewer's queries) until its last byte
    try:
        asked_at = time.monotonic()
        known = visit.classed.estimate if visit.classed is not None else None
        await visit.admit(slot, search, deadline=settings.limits.export_deadline, known=known,
                          lease=settings.limits.export_deadline + LEASE_MARGIN)
        if visit.classed is None or visit.classed.background:  # a small export is interactive work
            turn = await visit.background_turn(settings.limits.deadline, known)
            slot.callback(lambda: turn.release(visit.node_seconds()))
        visit.waited(time.monotonic() - asked_at)
        statuses = await visit.until_disconnected(search.count(), settings.limits.deadline, search)
        total = answered_total(statuses)
        written = min(rows, total) if sample is not None else max(0, min(rows, total - offset))
        found_lines: list[tuple[Located[Partition], GdexScore | None]] = []
        if only and categorised is not None:
            written = _categorised_rows(categorised, total, allowed, user.api)
            # known before the first byte: every categorised line found among the hits, or a 400 naming those not
            found_lines = await visit.until_disconnected(
                _find_categorised(search, statuses, total, order, categorised[0]), settings.limits.export_deadline,
                search)
        if format == "xlsx" and written + 1 > XLSX_MAX_ROWS:
            raise BadParameter(
                f"format=xlsx: {written:,} rows do not fit in a spreadsheet ({XLSX_MAX_ROWS - 1:,} rows and a "
                "header at most); export fewer rows (limit=) or use tsv, csv or ndjson"
            )
        quota.charge(user, key, written)
        visit.logged(target.name, written)
    except BaseException:
        slot.close()
        raise
    failed = failed_partitions(statuses)
    base = public_base(request)
    several = bool(target.members)  # corpus=a,b: each line's place in its corpus and in the combined run
    columns = ["corpus", "position", "matchend", *(("combined_position", "combined_matchend") if several else ()),
               "ref", "left", "match", "right", *view.show, *view.meta]
    if categorised is not None:
        columns += ["category", "category_label"]
    scored = order is not None and order.gdex is not None
    if scored:  # good examples first: each line's score and its rules' values, as the rules recompute them
        columns += GDEX_COLUMNS
    about = {
        "query": q, "syntax": syntax, "ignore_case": ignore_case, "filters": filters, "cqp": cqp,
        "corpus": target.name, "corpus_version": target.config.version or None, "corpus_size": target.size,
        **stamp(),
        "total": total, "selection": (_selection(total, offset, written, sample, seed, sort, order) if not only
                                      else _categorised_selection(total, written, sort, order, seed)),
        "offset": offset, "rows": written, "sample": sample,
        "seed": seed if sample or (order and order.random) else None,
        "sort": None if order is None else f"{(sort or '').strip()} {order.direction}",
        "sort_cqp": None if order is None or order.random else order.described(),
        "truncated": written < total and not only, "complete": not failed, "failed_partitions": failed,
        "context": view.region or view.context, "inline": view.inline or None,
        "ref_base": f"{base}/ref/{target.name if not target.members else '<corpus>'}/",
        "corpora": [{"corpus": m.name, "version": m.config.version or None, "size": m.size,
                     **({"combined_offset": start} if several else {})}
                    for m, start in zip(target.parts, _starts(target.parts), strict=True)],
        **({"positions": POSITIONS.format(corpora=", then ".join(m.name for m in target.parts))} if several else {}),
        "categories": asked.categories, "only_categorised": only,
        **({"gdex": order.gdex.rules.model_dump()} if scored and order is not None and order.gdex is not None else {}),
    }  # fmt: skip
    # The file's name says what it holds: ``web_<hash>_100of100.tsv`` (every hit), ``web_<hash>_first10000of46555.tsv``
    # cut at the row limit, ``web_<hash>_hits3to5of46555.tsv`` from an offset, ``web_<hash>_sample100of46555.tsv``
    # for a random sample, ``web_<hash>_categorised12of46555.tsv`` for the categorised lines, and
    # ``_incomplete`` after it when a partition failed (its hits are missing from the total too).
    held = (f"sample{written}" if sample is not None else f"categorised{written}" if only
            else f"hits{offset + 1}to{offset + written}" if offset and written
            else f"first{written}" if written < total else f"{written}")
    incomplete = "_incomplete" if failed else ""
    named = _named(q, syntax, ignore_case, filters, view, sample, seed, None if order is None else order.described(),
                   only)
    download = Download(format, columns, about if asked.provenance else None, target.name, named, failed, "hits",
                        f"_{held}of{total}{incomplete}")
    delivered = [0]  # rows whose bytes went out to the client: the rest of the charge is given back at the end
    # A spreadsheet forwarded by the interactive process is delivered when that process has passed its
    # last byte on, which only it knows: it gives the rows back otherwise (``background.REFUND``).
    worker_refunds = format == "xlsx" and bool(request.scope.get(FORWARDED_SCOPE))

    def row(hit: Hit, score: GdexScore | None = None) -> list[Any]:
        own = [hit.position, hit.matchend]
        if several:  # the corpus's own positions first (its ref link's), then the combined run's
            _, local = target.member_at(hit.position)
            own = [local, local + hit.matchend - hit.position, hit.position, hit.matchend]
        line: list[Any] = [hit.corpus, *own, base + hit.ref, hit.left, hit.match, hit.right,
                *(hit.attributes.get(a, "") for a in view.show), *(hit.meta.get(m) for m in view.meta)]
        if categorised is not None:
            category, labels = categorised[0].get((hit.position, hit.matchend)), categorised[1]
            label = "" if category is None or category > len(labels) else labels[category - 1]  # unnamed: ""
            line += ["" if category is None else category, label]
        if score is not None:
            line += [score.score, score.key, score.tokens, *(score.values.get(r, "") for r in gdex.RULES),
                     " ".join(score.rare), " ".join(score.numbers), " ".join(score.urls)]
        return line

    async def stream() -> AsyncIterator[bytes]:
        try:
            async for chunk in rows_of():
                yield chunk
        finally:
            if not worker_refunds:
                quota.refund(key, written - delivered[0])
            slot.close()

    async def rows_of() -> AsyncIterator[bytes]:
        # made here, not before: a client that leaves before the stream starts leaves no temporary file
        out = download.writer()
        try:
            async for chunk in written_rows(out):
                yield chunk
        finally:
            out.abort()  # the XLSX writer's temporary files go, finished or not

    async def written_rows(out: Any) -> AsyncIterator[bytes]:
        yield out.start()
        batch: list[list[Any]] = []
        sent = 0
        try:
            if only:  # the categorised lines, found among the hits before the first byte
                lines: AsyncIterator[tuple[Located[Partition], GdexScore | None]] = _listed(found_lines)
            else:
                found = search.stream(statuses, offset, written, sample=None if sample is None else (sample, seed),
                                      sort=order)
                lines = (streamed_scores(search, order, statuses, offset, written, found)
                         if scored and order is not None else _unscored(found))
            async for hit, score in lines:
                batch.append(row(public_hit(target, view, hit), score))
                if len(batch) >= EXPORT_BATCH_LINES:
                    yield out.rows(batch)
                    sent += len(batch)
                    batch = []
                    if format != "xlsx":  # a spreadsheet is delivered when its last byte is
                        delivered[0] = sent
        except PartitionFailure as failure:
            # The headers promised `written` rows: the file ends with a line saying it is incomplete and
            # why, then the connection is dropped so that no client can take it for a complete file.
            reason = f"the export broke off after {sent + len(batch)} of {written} rows: {failure.public()}"
            yield out.rows(batch)
            for chunk in out.incomplete(reason):
                yield chunk
            raise ExportBroken(reason) from failure
        except Exception:  # logged with its traceback; the file says it is incomplete all the same
            for chunk in out.incomplete(f"the export broke off after {sent} of {written} rows: an unexpected error "
                                        "occurred on the server; it has been logged"):
                yield chunk
            raise
        yield out.rows(batch)
        sent += len(batch)
        if format != "xlsx":
            delivered[0] = sent
        if sent < written:  # fewer lines than the headers promised: never a clean short file
            reason = f"the export broke off after {sent} of {written} rows: the search found fewer hits than it counted"
            for chunk in out.incomplete(reason):
                yield chunk
            raise ExportBroken(reason)
        for chunk in out.end():
            yield chunk
        if format == "xlsx":  # a client that took only part of it resets the connection: found gone meanwhile
            await asyncio.sleep(XLSX_SETTLE_SECONDS)
        delivered[0] = sent

    headers = download.headers(written, **{
        "X-Cowbird-Total": str(total), "X-Cowbird-Truncated": "true" if written < total and not only else "false"})
    headers.update(quota.headers(user, key))
    if worker_refunds:
        headers[REFUND.decode()] = json.dumps({"key": key, "rows": written})
    return StreamingResponse(stream(), media_type=download.media_type, headers=headers,
                             background=BackgroundTask(slot.close))


async def _categories(request: Request, user: Viewer, slug: str) -> tuple[dict[tuple[int, int], int], list[str]]:
    """The categories of one of the user's saved searches' lines, by the hits' positions, and their names."""
    if user.name is None:
        raise Unauthorized("categories=: the categories belong to a logged-in user's saved search: log in first")
    accounts: Accounts = frontend_state(request).accounts
    name = user.name

    def read() -> tuple[dict[tuple[int, int], int], list[str]]:
        with accounts.database.session() as session:
            saved, lines = accounts.saved.categories(session, name, slug)
            return {(x.position, x.matchend): x.category for x in lines}, json.loads(saved.labels)

    return await run_in_threadpool(read)


async def _find_categorised(search: NodeSearch, statuses: Statuses[Partition], total: int, order: SortKey | None,
                            wanted: dict[tuple[int, int], int]) -> list[tuple[Located[Partition], GdexScore | None]]:
    """Every categorised line among the search's hits, in the order asked (every hit passes by, until
    the last categorised one), with its GDEX score when sorted by GDEX. A categorised line that is not
    a hit of this search is refused here, before the file's first byte (400, naming the lines): a
    category names a line of the search it was given in, and the export's search may be another one,
    or the corpus may have changed since."""
    found: list[tuple[Located[Partition], GdexScore | None]] = []
    scored = order is not None and order.gdex is not None
    try:
        hits = search.stream(statuses, 0, total, sort=order)
        lines = streamed_scores(search, order, statuses, 0, total, hits) if scored and order else _unscored(hits)
        async for hit, score in lines:
            if (hit.position, hit.matchend) in wanted:
                found.append((hit, score))
                if len(found) == len(wanted):
                    break  # the last categorised line: the rest of the hits need not pass
    except PartitionFailure as failure:
        raise NodesUnavailable(f"only_categorised=1: the hits could not all be looked through for the categorised "
                               f"lines: {failure.public()}", headers={"Retry-After": "10"}) from failure
    if len(found) < len(wanted):
        seen = {(hit.position, hit.matchend) for hit, _ in found}
        missing = sorted(line for line in wanted if line not in seen)
        shown = ", ".join(f"{start}-{end}" for start, end in missing[:MISSING_SHOWN])
        more = f" and {len(missing) - MISSING_SHOWN:,} more" if len(missing) > MISSING_SHOWN else ""
        raise BadParameter(f"categories=: {len(missing):,} of the {len(wanted):,} categorised lines are not hits of "
                           f"this search (position-matchend {shown}{more}): categorise lines of this search (each "
                           "hit's position and matchend, as its preview gives them), or export the search they "
                           "were categorised in")
    return found


MISSING_SHOWN = 10
"""How many categorised lines that are not hits a refusal names (the first, by position)."""


async def _listed(lines: list[tuple[Located[Partition], GdexScore | None]],
                  ) -> AsyncIterator[tuple[Located[Partition], GdexScore | None]]:
    for line in lines:
        yield line


GDEX_COLUMNS = ["gdex_score", "gdex_key", "gdex_tokens", *(f"gdex_{rule}" for rule in gdex.RULES), "gdex_rare_words",
                "gdex_number_tokens", "gdex_url_tokens"]
"""The columns a GDEX-sorted export adds: the score, the key sorted on, the sentence's tokens, each
rule's value (``gdex_numbers``, ``gdex_urls`` …), and the tokens counted as rare words, numbers or
symbols and URLs (space-separated; named apart from the rules' values, so that no two columns share a name)."""


async def _unscored(hits: AsyncIterator[Located[Partition]]) -> AsyncIterator[tuple[Located[Partition], None]]:
    async for hit in hits:
        yield hit, None


POSITIONS = ("position and matchend are each line's first and last token in its own corpus (the corpus column), "
             "as its ref link gives them; combined_position and combined_matchend are its place in the corpora "
             "searched as one ({corpora}: each corpus's positions follow the one before, from its "
             "combined_offset)")
"""What a several-corpora export's metadata says of its positions."""


def _starts(parts: tuple[CorpusEntry, ...]) -> list[int]:
    """Each corpus's first position in the combined run of the corpora searched."""
    starts, start = [], 0
    for part in parts:
        starts.append(start)
        start += part.size
    return starts


XLSX_SETTLE_SECONDS = 1.0
"""How long an XLSX file's end is held back after its last bytes went out, before its rows count as
delivered. The client's own buffers take hundreds of kilobytes at once: a client that read a part of
the file and left (its connection reset, as closing with bytes unread does) is found gone meanwhile,
and charged no row — a part of an XLSX file (a zip, its directory at its end) holds none."""

CATEGORISED_SCAN = 2_000_000
"""The most hits an export of the categorised lines only looks through for them."""


def _categorised_rows(categorised: tuple[dict[tuple[int, int], int], list[str]], total: int, allowed: int,
                      api: bool) -> int:
    """How many rows an export of the categorised lines only holds: all of them, within the limits."""
    rows = len(categorised[0])
    if rows > allowed:
        raise BadParameter(f"only_categorised=1: {rows:,} categorised lines are more than the {allowed:,} rows "
                           + ("API mode exports at once" if api else "the browser downloads at once: use API mode"))
    if total > CATEGORISED_SCAN:
        raise BadParameter(f"only_categorised=1 looks through every hit for the categorised lines, at most "
                           f"{CATEGORISED_SCAN:,}; this search has {total:,}: download its hits in parts "
                           "(offset, limit) with categories= instead")
    return rows


def _categorised_selection(total: int, rows: int, sort: str | None, order: SortKey | None, seed: int) -> str:
    where = f"the {rows:,} categorised lines of the {total:,} hits"
    if order is None:
        return f"{where}, in corpus order"
    return f"{where}, sorted by {(sort or '').strip()} {order.direction}" + (f" (seed {seed})" if order.random else "")


def _selection(total: int, offset: int, rows: int, sample: int | None, seed: int, sort: str | None,
               order: SortKey | None) -> str:
    """Which hits the file holds, in words: a reader of the file alone must not take a sample for the first hits."""
    if sample is not None:
        return (f"a random sample of {rows:,} of the {total:,} hits, drawn with seed {seed} "
                "(the same request draws the same sample), in corpus order")
    where = f"hits {offset + 1:,} to {offset + rows:,} of {total:,}" if rows else f"no hits (of {total:,})"
    if order is None:
        return f"{where}, in corpus order"
    return f"{where}, sorted by {(sort or '').strip()} {order.direction}" + (f" (seed {seed})" if order.random else "")


def _named(
    q: str, syntax: str, ignore_case: bool, filters: list[str] | None, view: HitView, sample: int | None, seed: int,
    sort: str | None = None, only_categorised: bool = False,
) -> str:
    """What names the request (the file's eight hex digits): the same search, the same name."""
    return repr((q, syntax, ignore_case, filters or [], view.context, view.region, view.show, view.meta, sample, seed)
                + ((sort,) if sort else ()) + ((tuple(view.inline),) if view.inline else ())
                + (("categorised",) if only_categorised else ()))
