"""``GET /api/v1/query``: a merged KWIC preview (or a reproducible random sample) across partitions."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import StreamingResponse
from starlette.background import BackgroundTask

from cowbird.core.analysis_merge import rate
from cowbird.core.analysis_spec import SortKey, parse_sort
from cowbird.core.errors import BadParameter, CowbirdError
from cowbird.core.search import CostEstimate, Located, Partitions, Statuses, answered_total, failed_partitions
from cowbird.frontend.accounts import Accounts
from cowbird.frontend.caller import Caller
from cowbird.frontend.corpora import CorpusEntry, Partition
from cowbird.frontend.events import BackgroundNotice, QueryCount, QueryPage, QueryStarted, event
from cowbird.frontend.gdex import page_scores, with_gdex
from cowbird.frontend.hits import NodeSearch, partition_result, public_hit
from cowbird.frontend.operations import ESTIMATE, QUERY
from cowbird.frontend.params import PreviewParameters, Searching, split
from cowbird.frontend.priority import DEEP_SORT, Lanes
from cowbird.frontend.routes.deps import Visitor, estimated, ndjson_line, tiered
from cowbird.frontend.routes.prologue import declared
from cowbird.frontend.schemas import CorpusTotal, EstimateResult, Hit, QueryResult
from cowbird.frontend.state import frontend_state
from cowbird.frontend.subcorpora import searched_tokens
from cowbird.frontend.viewer import Viewer
from cowbird.query import QueryError, parse_cqp
from cowbird.serving.problems import problem_body

router = APIRouter(prefix="/api/v1", tags=["query"])


def sort_key(sort: str | None, direction: str, seed: int, sample: int | None) -> SortKey | None:
    """The sort asked for (a sample is in corpus order: not both); the search checks it against the corpus."""
    if sort is None or not sort.strip():
        return None
    if sample is not None:
        raise BadParameter("sort and sample do not go together: a sample is in corpus order; "
                           "sort=random&seed=N orders all hits at random")
    return parse_sort(sort, direction, seed)


@declared(router, QUERY)
async def query(
    visit: Visitor,
    response: Response,
    asked: Annotated[PreviewParameters, Query()],
) -> QueryResult | StreamingResponse:
    started = time.perf_counter()
    request, user, quota, limits = visit.request, visit.user, visit.quota, visit.limits
    offset, limit, sample, seed = asked.offset, asked.limit, asked.sample, asked.seed
    if limit > limits.preview_size or (sample or 0) > limits.preview_size:
        raise BadParameter(f"a preview has at most {limits.preview_size} hits; use /api/v1/export for more")
    view = replace(asked.view(limits.max_context), marks=split(asked.boundaries))
    view.check(visit.corpus(asked.corpus))
    target, search = visit.search(asked, view)
    order = await with_gdex(visit, target, sort_key(asked.sort, asked.direction, seed, sample))
    if order is not None:
        search.check_sort(order, asked.sort)
    key = visit.key
    preview = Preview(request, user, asked, target, search, started, order, visit.caller)
    # a query that may be slow: estimated, refused past the deadline
    cost = await tiered(request, visit.caller, user, key, search)
    deep = order is not None and offset >= DEEP_SORT
    if deep and cost is None:  # a sorted page deep in the hits is classed by its cost: estimated
        cost = await estimated(request, visit.caller, user, key, search)
    background = visit.class_preview(cost, deep)
    if asked.stream:
        slot = ExitStack()  # the stream runs (counts as one of the viewer's queries) until its last event
        try:
            await visit.admit(slot, search, deadline=limits.deadline, known=cost)
        except BaseException:
            slot.close()
            raise
        waiting = Background(frontend_state(request).lanes, key, cost) if background else None
        return StreamingResponse(_events(preview, order, slot, waiting), media_type="application/x-ndjson",
                                 headers={**quota.headers(user, key), "Cache-Control": "no-store"},
                                 background=BackgroundTask(slot.close))
    work = search.page(offset, limit, sample=None if sample is None else (sample, seed), sort=order)
    statuses, found = await visit.run(work, search, known=cost, background=background)
    response.headers.update(quota.headers(user, key))
    if background:
        response.headers["X-Cowbird-Priority"] = "background"
    return await preview.result(statuses, found)


@dataclass(frozen=True)
class Background:
    """A streamed preview that runs as background work: the viewer's lanes, and why (its estimate)."""

    lanes: Lanes
    key: str
    cost: CostEstimate | None

    def event(self) -> dict[str, object]:
        seconds = None if self.cost is None or self.cost.seconds is None else round(self.cost.seconds, 1)
        reason = ("a sorted page deep in the hits" if self.cost is None
                  else "a query that may be slow, of a kind the engine does not estimate (MU, TAB)" if seconds is None
                  else f"estimated at {seconds:g} s")
        return event(BackgroundNotice(
            event="background", estimated_seconds=seconds, reason=reason,
            message=f"Running in the background ({reason}): other searches stay quick meanwhile."))


@dataclass(frozen=True)
class Preview:
    """One preview being answered: what was asked, the search, when it started."""

    request: Request
    user: Viewer
    asked: PreviewParameters
    corpus: CorpusEntry
    search: NodeSearch
    started: float
    order: SortKey | None = None
    caller: Caller = field(default_factory=Caller)  # its node calls' priority, start and meter

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 1)

    def hits(self, found: list[Located[Partition]]) -> list[Hit]:
        return [public_hit(self.corpus, self.search.view, f) for f in found]

    async def result(self, statuses: Statuses[Partition], found: list[Located[Partition]]) -> QueryResult:
        """The answer, as the plain preview gives it and a stream's last event; a browser user's
        first page goes into the search history."""
        asked, corpus = self.asked, self.corpus
        hits = self.hits(found)
        if self.order is not None and self.order.gdex is not None:  # each hit's score, recomputed and checked
            scores = await page_scores(self.search, self.order, asked.offset, found)
            hits = [hit.model_copy(update={"gdex": score}) for hit, score in zip(hits, scores, strict=True)]
        failed = failed_partitions(statuses)
        total = answered_total(statuses)
        self.request.state.log_corpus, self.request.state.log_hits = corpus.name, total
        # (not a request another site's page made the browser send: it would write into the user's history)
        own_site = self.request.headers.get("sec-fetch-site", "same-origin") in ("same-origin", "none")
        if self.user.browser and self.user.name is not None and asked.sample is None and asked.offset == 0 \
                and own_site:
            accounts: Accounts = frontend_state(self.request).accounts
            await run_in_threadpool(_remember, accounts, self.user.name, corpus.name, asked.q, asked.syntax,
                                    asked.ignore_case, asked.filters, total)
        answered = sum(s.partition.size for s in statuses if s.error is None)
        searched = await searched_tokens(self.search.partitions, corpus, asked.filters, statuses)
        corpora = [CorpusTotal(corpus=corpus.name, total=total, tokens=searched,
                               per_million=None if searched is None else rate(total, searched), complete=not failed,
                               failed=failed)] if not corpus.members else \
            [await corpus_total(self.search.partitions, member, asked.filters, statuses) for member in corpus.members]
        if self.order is None:  # corpus order: each corpus's hits after those of the ones before it
            corpora = with_firsts(corpora)
        return QueryResult(
            corpus=corpus.name, cqp=self.search.cqp, total=total, tokens=searched,
            per_million=None if searched is None else rate(total, searched),
            corpus_per_million=rate(total, answered), complete=not failed, failed=failed,
            partitions=[partition_result(s) for s in statuses], elapsed_ms=self.elapsed_ms(),
            offset=asked.offset if asked.sample is None else 0, sample=asked.sample, hits=hits,
            hint=CQP_HINT if asked.syntax == "simple" and not hits and looks_like_cqp(asked.q) else None,
            anchors=self.search.query.anchors,
            sort=None if self.order is None else f"{(asked.sort or '').strip()} {_directions(self.order.direction)}",
            sort_cqp=None if self.order is None or self.order.random else self.order.described(),
            seed=asked.seed if asked.sample is not None or (self.order is not None and self.order.random) else None,
            corpora=corpora,
        )


async def corpus_total(nodes: Partitions[Partition], member: CorpusEntry, filters: list[str],
                       statuses: Statuses[Partition]) -> CorpusTotal:
    """One corpus's total and rate, of a search over several (its partitions' statuses)."""
    ids = {p.id for p in member.partitions}
    own = [s for s in statuses if s.partition.id in ids]
    total, failed = answered_total(own), failed_partitions(own)
    tokens = await searched_tokens(nodes, member, filters, own)
    return CorpusTotal(corpus=member.name, total=total, tokens=tokens,
                       per_million=None if tokens is None else rate(total, tokens), complete=not failed, failed=failed)


def with_firsts(corpora: list[CorpusTotal]) -> list[CorpusTotal]:
    """Each corpus's total with where its hits begin in corpus order: the combined run holds the
    first corpus's hits, then the second's (its positions follow the first's), so the first hit of
    each is the sum of the totals before it (of the partitions that answered, as the pages are)."""
    before, out = 0, []
    for each in corpora:
        out.append(each.model_copy(update={"first": before if each.total else None}))
        before += each.total
    return out


def _directions(directions: str) -> str:
    """The sort's directions as one would ask them: one word when every key goes the same way."""
    each = directions.split(",")
    return each[0] if len(set(each)) == 1 else directions


async def _events(preview: Preview, order: SortKey | None, slot: ExitStack,
                  background: Background | None = None) -> AsyncIterator[bytes]:
    """The NDJSON events of a streamed preview. In corpus order the page comes as soon as it is
    known (``Search.progressive``); a sorted page or a sample needs every hit first, which the
    ``started`` event says (``early: false``). Background work (a deep sorted page, a query estimated
    heavy) says so in a ``background`` event, then waits for the viewer's turn. A failure after the
    start is an ``error`` event with the problem's members, and the stream ends."""
    asked, search = preview.asked, preview.search
    early = order is None and asked.sample is None
    try:
        yield ndjson_line(event(QueryStarted(
            event="started", corpus=search.corpus.name, cqp=search.cqp, partitions=len(search.corpus.partitions),
            anchors=list(search.query.anchors), early=early, background=background is not None)))
        if background is not None:
            yield ndjson_line(background.event())
            preview.caller.priority = "background"
            slot.callback((await background.lanes.turn(background.key)).release)
        if not early:
            sample = None if asked.sample is None else (asked.sample, asked.seed)
            statuses, found = await search.page(asked.offset, asked.limit, sample=sample, sort=order)
            yield ndjson_line({"event": "result", **(await preview.result(statuses, found)).model_dump(mode="json")})
            return
        async for step in search.progressive(asked.offset, asked.limit):
            if step.kind == "page" and step.hits is not None:
                yield ndjson_line(event(QueryPage(event="page", offset=asked.offset, elapsed_ms=preview.elapsed_ms(),
                                                  hits=preview.hits(step.hits))))
            elif step.kind == "count" and step.partition is not None:
                counted = sum(s.total is not None or s.failure is not None for s in step.statuses)
                yield ndjson_line(event(QueryCount(
                    event="count", partition=partition_result(step.partition),
                    total_at_least=answered_total(step.statuses), counted=counted, partitions=len(step.statuses),
                    failed=failed_partitions(step.statuses), elapsed_ms=preview.elapsed_ms())))
            elif step.kind == "done":
                result = await preview.result(step.statuses, step.hits or [])
                yield ndjson_line({"event": "result", **result.model_dump(mode="json")})
    except CowbirdError as error:
        yield ndjson_line({"event": "error", **problem_body(error)})
    finally:
        slot.close()


@declared(router, ESTIMATE)
async def estimate(visit: Visitor, asked: Annotated[Searching, Query()]) -> EstimateResult:
    """What the query would find and how long it would take, from each partition's plan and a small
    sample of it, without running it (``confirm``: the search page asks before running it)."""
    started = time.perf_counter()
    target, search = visit.search(asked)
    state = frontend_state(visit.request)
    settings = state.settings
    with state.estimates.turn(visit.user, visit.key, visit.caller):  # anonymous ones in a lane of their own
        found = await estimated(visit.request, visit.caller, visit.user, visit.key, search)
    return EstimateResult(
        corpus=target.name, cqp=search.cqp, hits=found.hits, exact=found.exact,
        seconds=None if found.seconds is None else round(found.seconds, 3), time_class=found.time_class,
        confirm=found.seconds is not None and found.seconds > settings.limits.confirm_seconds,
        failed=failed_partitions(found.statuses), elapsed_ms=round((time.perf_counter() - started) * 1000, 1),
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
