"""Subcorpora: texts chosen by their metadata.

``GET /api/v1/subcorpus`` says how large the subcorpus of some filters is (tokens, texts, exact over
every partition) and, with ``values=ATTR``, lists that s-attribute's values in it with their sizes:
the picker that builds a subcorpus from values rather than from a regex. ``GET/POST
/api/v1/subcorpora`` lists and keeps named subcorpora (a user's, and those shared with a group of
theirs), ``GET/DELETE /api/v1/subcorpora/{id}`` shows or deletes one. Every search, analysis, word
list and keyword list takes ``subcorpus=ID`` (``cowbird.frontend.subcorpora``)."""

from __future__ import annotations

import datetime
import json
import time
from typing import Annotated, Any, cast
from urllib.parse import urlencode

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel

from cowbird.core.analysis_merge import value_order
from cowbird.core.errors import BadParameter
from cowbird.core.search import failed_partitions, no_attribute
from cowbird.core.subcorpus import SubcorpusSizes, subcorpus_sizes
from cowbird.frontend.accounts import Accounts
from cowbird.frontend.accounts.models import Subcorpus
from cowbird.frontend.corpora import CorpusEntry
from cowbird.frontend.downloads import Download, Format, stamp
from cowbird.frontend.fanout import RequestNodes
from cowbird.frontend.hits import partition_result
from cowbird.frontend.operations import SUBCORPUS
from cowbird.frontend.params import MAX_JSON_ROWS, SubcorpusParameters
from cowbird.frontend.querying import region_filters
from cowbird.frontend.routes.analyses import only_value
from cowbird.frontend.routes.deps import CurrentUser, Visitor
from cowbird.frontend.routes.prologue import declared
from cowbird.frontend.routes.saved import account_owner
from cowbird.frontend.routes.wordlist import DOCUMENT
from cowbird.frontend.schemas import SaveSubcorpus, SubcorpusList, SubcorpusOut, SubcorpusResult, SubcorpusValue
from cowbird.frontend.state import frontend_state
from cowbird.frontend.subcorpora import readable
from cowbird.query.regex_check import check_regex

router = APIRouter(prefix="/api/v1", tags=["subcorpora"])
"""The routes with a model of their query parameters."""
saved_router = APIRouter(prefix="/api/v1", tags=["subcorpora"])
"""The routes that take no query parameters (but ``token``)."""


async def _sizes(nodes: RequestNodes, target: CorpusEntry, filters: list[str], attribute: str | None = None,
                 match: str | None = None, ignore_case: bool = False) -> SubcorpusSizes:
    texts = DOCUMENT if DOCUMENT in target.s_attributes else None
    return await subcorpus_sizes(nodes, target.name, target.partitions, region_filters(filters, target, "filter"),
                                 texts, attribute, match, ignore_case, nodes.time_limit)


@declared(router, SUBCORPUS)
async def subcorpus(visit: Visitor, asked: Annotated[SubcorpusParameters, Query()]) -> BaseModel | Response:
    """The size of the subcorpus the ``filter``s (and a saved ``subcorpus``) choose — its tokens and texts,
    exact over every partition that answers — and with ``values=ATTR`` that s-attribute's values in it,
    each with its tokens and texts there and the filter that chooses it (the subcorpus picker)."""
    started = time.perf_counter()
    target = visit.corpus(asked.corpus)
    if asked.values is not None and asked.values not in target.meta:
        raise BadParameter(f"values={asked.values}: {no_attribute(target, 'meta', asked.values)}")
    if asked.limit > MAX_JSON_ROWS:
        raise BadParameter(f"limit={asked.limit:,}: at most {MAX_JSON_ROWS:,} values at once; page with offset")
    if asked.match is not None:
        problem, _ = check_regex(asked.match)
        if problem is not None:
            raise BadParameter(f"match={asked.match!r}: {problem.message}")
    found = await visit.run(_sizes(visit.nodes, target, asked.filters, asked.values, asked.match, asked.ignore_case),
                            background=False)
    visit.logged(target.name)
    failed = failed_partitions(found.statuses)
    _, by_value = value_order(list(found.values))
    ranked = sorted(found.values.items(), key=lambda item: by_value(item[0]))
    if asked.order == "tokens":
        ranked.sort(key=lambda item: -item[1][0])
    elif asked.order == "texts":
        ranked.sort(key=lambda item: -item[1][1])
    page = ranked[asked.offset: asked.offset + asked.limit]
    attribute = asked.values or ""
    values = [SubcorpusValue(value=v, tokens=t, texts=r, per_cent=round(t * 100 / found.tokens, 3) if found.tokens
                             else 0.0, filter=only_value(attribute, v)) for v, (t, r) in page]
    result = SubcorpusResult(
        corpus=target.name, filters=asked.filters, tokens=found.tokens, texts=found.texts, corpus_tokens=target.size,
        corpus_texts=found.all_texts if not failed else None,
        per_cent=round(found.tokens * 100 / target.size, 3) if target.size else 0.0, attribute=asked.values,
        values=values, values_total=len(ranked), complete=not failed, failed=failed,
        partitions=[partition_result(s) for s in found.statuses], elapsed_ms=round((time.perf_counter() - started)
                                                                                  * 1000, 1))
    if asked.format == "json":
        return result
    about: dict[str, Any] = {
        "analysis": "subcorpus", "corpus": target.name, "corpus_version": target.config.version or None,
        "corpus_size": target.size, "filters": asked.filters, "subcorpus_tokens": found.tokens,
        "subcorpus_texts": found.texts, "attribute": asked.values, "match": asked.match,
        "ignore_case": asked.ignore_case, "order": asked.order, "offset": asked.offset, "rows": len(values),
        "values_total": len(ranked), "complete": not failed, "failed_partitions": failed, **stamp(),
    }  # fmt: skip
    rows: list[list[object]] = [[v.value, v.tokens, v.texts, v.per_cent] for v in values]
    named = repr((target.name, asked.filters, asked.values, asked.match, asked.ignore_case, asked.order,
                  asked.offset, asked.limit))
    return Download(cast(Format, asked.format), [asked.values or "value", "tokens", "texts", "per_cent"],
                    about if asked.provenance else None, f"{target.name}_subcorpus", named, failed,
                    "subcorpus").whole(rows)


def _out(found: Subcorpus, user: str) -> SubcorpusOut:
    at = found.at if found.at.tzinfo else found.at.replace(tzinfo=datetime.UTC)  # SQLite: UTC
    filters: list[str] = json.loads(found.filters)
    return SubcorpusOut(
        id=found.slug, name=found.name, corpus=found.corpus, filters=filters, tokens=found.tokens, texts=found.texts,
        owner=found.owner.name, group=found.group.name if found.group is not None else None,
        mine=found.owner.name == user, at=at.isoformat(timespec="seconds"),
        search="/?" + urlencode([("corpus", found.corpus), *(("filter", f) for f in filters)]))


@saved_router.get("/subcorpora", response_model=SubcorpusList)
async def subcorpora(request: Request, user: CurrentUser) -> SubcorpusList:
    """Your subcorpora and those shared with a group of yours, by name: each with its ID (what
    ``subcorpus=`` takes), its filters and its size when it was saved."""
    name = account_owner(request, user)
    accounts: Accounts = frontend_state(request).accounts
    may_read = readable(request, user)

    def read() -> list[SubcorpusOut]:
        with accounts.database.session() as session:
            return [_out(s, name) for s in accounts.subcorpora.visible(session, name, user.groups, may_read)]

    return SubcorpusList(data=await run_in_threadpool(read))


@saved_router.post("/subcorpora", response_model=SubcorpusOut)
async def save_subcorpus(visit: Visitor, asked: SaveSubcorpus) -> SubcorpusOut:
    """Keep a subcorpus (a corpus and the filters choosing its texts) under a name, shared with one of
    your groups if ``group`` names one; one of the same name is replaced (its ID kept). Its size is
    counted now (as one of your queries) and shown in lists."""
    request, user = visit.request, visit.user
    name = account_owner(request, user, changes=True)
    title = " ".join(asked.name.split())
    if not title:
        raise BadParameter("name: give the subcorpus a name")
    target = visit.corpus(asked.corpus)
    filters = [f.strip() for f in asked.filters if f.strip()]
    if not filters:
        raise BadParameter("filters: a subcorpus is chosen by at least one filter (ATTR~REGEX, ATTR=VALUE ...)")
    found = await visit.run(_sizes(visit.nodes, target, filters), background=False)
    failed = failed_partitions(found.statuses)
    if failed:
        raise BadParameter(f"the partitions {', '.join(failed)} did not answer, so the subcorpus's size is not "
                           "known: try again later")
    if found.tokens == 0:
        raise BadParameter(f"the filters {'; '.join(filters)} choose no tokens of {target.name}: nothing to save")
    accounts: Accounts = frontend_state(request).accounts

    def write() -> SubcorpusOut:
        with accounts.database.session() as session:
            return _out(accounts.subcorpora.save(session, name, title, target.name, filters, found.tokens,
                                                 found.texts, asked.group or None), name)

    return await run_in_threadpool(write)


@saved_router.get("/subcorpora/{slug}", response_model=SubcorpusOut)
async def one_subcorpus(request: Request, user: CurrentUser, slug: str) -> SubcorpusOut:
    """One subcorpus of yours or shared with you (its size now: ``/api/v1/subcorpus?subcorpus=ID``)."""
    name = account_owner(request, user)
    accounts: Accounts = frontend_state(request).accounts
    may_read = readable(request, user)

    def read() -> SubcorpusOut:
        with accounts.database.session() as session:
            return _out(accounts.subcorpora.find(session, slug, name, user.groups, may_read), name)

    return await run_in_threadpool(read)


@saved_router.delete("/subcorpora/{slug}", response_model=SubcorpusList)
async def delete_subcorpus(request: Request, user: CurrentUser, slug: str) -> SubcorpusList:
    """Delete one of your subcorpora (searches naming it stop working; searches saved with its filters
    do not); answers with the subcorpora you see."""
    name = account_owner(request, user, changes=True)
    accounts: Accounts = frontend_state(request).accounts
    may_read = readable(request, user)

    def delete() -> SubcorpusList:
        with accounts.database.session() as session:
            accounts.subcorpora.delete(session, name, slug)
        with accounts.database.session() as session:
            return SubcorpusList(data=[_out(s, name) for s in accounts.subcorpora.visible(session, name, user.groups,
                                                                                           may_read)])

    return await run_in_threadpool(delete)
