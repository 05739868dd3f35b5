"""Shared request dependencies: the (possibly anonymous) user, the services, common parameters."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from typing import Annotated, Any, TypeVar

from fastapi import Depends, Query, Request, Response
from sqlalchemy.exc import SQLAlchemyError

from cowbird.core.errors import (
    Busy,
    ClientGone,
    DeadlinePassed,
    LimitExceeded,
    QueryTooSlow,
)
from cowbird.core.search import CostEstimate, HitView, Progress
from cowbird.frontend.accounts import Accounts, DatabaseError
from cowbird.frontend.accounts.web import SESSION_COOKIE, current_session
from cowbird.frontend.background import FORWARDED_SCOPE
from cowbird.frontend.caller import Caller, viewer_tag
from cowbird.frontend.classing import (
    HAND_OVER_SCOPE,
    HANDED_OVER,
    Classed,
    class_by_cost,
    class_by_seconds,
    classing_of,
)
from cowbird.frontend.corpora import CorpusCatalogue, CorpusEntry
from cowbird.frontend.credentials import VIEWER_STATE, presented_token, token_viewer, viewer_of
from cowbird.frontend.failover import began
from cowbird.frontend.fair_use import FairUse, NodeTime
from cowbird.frontend.fanout import NodeClient, RequestNodes
from cowbird.frontend.hits import NodeSearch, search_of
from cowbird.frontend.operations import QUERY, PublicOperation
from cowbird.frontend.params import Parameters, Searching
from cowbird.frontend.priority import BACKGROUND_TIME, Turn
from cowbird.frontend.querying import build_query
from cowbird.frontend.settings import LimitSettings
from cowbird.frontend.stalled import Query as StalledQuery
from cowbird.frontend.state import frontend_state
from cowbird.frontend.subcorpora import S, in_subcorpus
from cowbird.frontend.viewer import ANONYMOUS, Viewer
from cowbird.query.cqp_ast import may_be_slow
from cowbird.serving.asgi import HAND_OVER

T = TypeVar("T")


def current_user(request: Request) -> Viewer:
    viewer = _viewer(request)
    request.state.log_user = viewer.name  # for the request log
    return viewer


def _viewer(request: Request) -> Viewer:
    """The viewer behind the request: anonymous (or the browser session's user), or the approved owner
    of the API token given as ``Authorization: Bearer <token>`` (or, for HTTP GET scripts,
    ``?token=<token>``). A credential that is malformed, unknown, revoked or whose account is not
    approved is refused (401, ``credentials.py``), never taken as anonymous; on ``/api/`` routes the
    ``Credentials`` middleware has found the viewer already."""
    found = getattr(request.state, VIEWER_STATE, None)
    if isinstance(found, Viewer):
        return found
    token = presented_token(request.headers.get("authorization"), request.query_params.get("token"))
    if token is None:
        return _session_viewer(request)
    return token_viewer(frontend_state(request).accounts, token)


def _session_viewer(request: Request) -> Viewer:
    """The logged-in browser user (a session cookie), or anonymous. A browser session works within
    the browser limits: API mode over them takes an API token."""
    if not request.cookies.get(SESSION_COOKIE):
        return ANONYMOUS
    accounts: Accounts = frontend_state(request).accounts
    try:
        with accounts.database.session() as session:
            web = current_session(request, session)
            return ANONYMOUS if web is None else replace(viewer_of(web.user), api_bulk=False, browser=True)
    except SQLAlchemyError as exc:
        raise DatabaseError("the account database cannot be read; try again shortly",
                            headers={"Retry-After": "10"}) from exc


def corpora(request: Request) -> CorpusCatalogue:
    catalogue: CorpusCatalogue = frontend_state(request).corpora
    return catalogue


def node_client(request: Request) -> NodeClient:
    nodes: NodeClient = frontend_state(request).nodes
    return nodes


CurrentUser = Annotated[Viewer, Depends(current_user)]


def fair_use(request: Request) -> FairUse:
    tracker: FairUse = frontend_state(request).fair_use
    return tracker


Quota = Annotated[FairUse, Depends(fair_use)]
Corpora = Annotated[CorpusCatalogue, Depends(corpora)]
Nodes = Annotated[NodeClient, Depends(node_client)]


async def affordable(request: Request, caller: Caller, quota: FairUse, viewer: Viewer, key: str, search: NodeSearch,
                     deadline: float, known: CostEstimate | None = None) -> float:
    """The query's estimated node seconds, charged before it runs when the viewer's day has less left
    than it could cost (``FairUse.afford``: the deadline on every partition); 429 if it does not fit.
    ``known``: the estimate made already (``tiered``), not asked again; else it is made as one of the
    viewer's queries, and paid for (``estimated``)."""

    not_stalled(request, search)

    async def node_seconds() -> float | None:
        return (known if known is not None else await estimated(request, caller, viewer, key, search)).cpu_seconds

    return await quota.afford(viewer, key, deadline * len(search.corpus.partitions), node_seconds)


def no_parameters(asked: Annotated[Parameters, Query()]) -> None:
    """Routes that take no query parameters (but ``token``) refuse any, naming them (``Parameters``)."""


def ndjson_line(event: dict[str, object]) -> bytes:
    """One event of a streamed answer: a JSON object on a line of its own (UTF-8, not ASCII-escaped)."""
    return (json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")


BACKSTOP_SECONDS = 5.0
"""How long past its deadline a query may still run: node calls end at the deadline themselves
(a slow partition is reported as failed), this only catches what does not."""


def stall_key(search: NodeSearch) -> StalledQuery:
    """The search as ``stalled.Stalled`` remembers a query that ran out of time."""
    return (search.corpus.name, search.cqp)


def not_stalled(request: Request, search: NodeSearch) -> None:
    """Refuse a query that just ran out of time (``stalled.Stalled``)."""
    frontend_state(request).stalled.check(stall_key(search))


async def estimated(request: Request, caller: Caller, user: Viewer, key: str, search: NodeSearch) -> CostEstimate:
    """The query's estimate (``Search.estimate``), as one of the viewer's queries at once (it waits for
    a place, or is refused), its nodes' time charged to the viewer's day, stopped when the client
    goes."""
    quota = frontend_state(request).fair_use
    await quota.room(user, key, request)
    with quota.running(user, key) as meter, metered(caller, meter):
        return await until_disconnected(request, caller, search.estimate(),
                                        frontend_state(request).settings.limits.deadline)


@contextmanager
def metered(caller: Caller, meter: NodeTime) -> Iterator[None]:
    """The caller's node calls counted on ``meter`` (a place among the viewer's running queries)
    while the block runs. After it the caller keeps reporting to ``meter`` (unless an outer block
    meters it): a call that was cancelled with the block tells what it cost when it has stopped,
    which may be later, and the settled meter charges it then (``NodeTime.late``)."""
    before, caller.meter = caller.meter, meter
    try:
        yield
    finally:
        caller.meter = before if before is not None else meter


async def tiered(request: Request, caller: Caller, user: Viewer, key: str, search: NodeSearch,
                 background: bool = False) -> CostEstimate | None:
    """A query that may be slow (``may_be_slow``: wide or open repetitions, constraints relating labels,
    MU and TAB queries) estimated before any node runs it; refused (``limit_exceeded``, with the estimate)
    when it would take longer than a query may (``[limits] deadline``, and ``[nodes] timeout`` a
    partition). None for the others. A query the estimate could not bound is refused too, with the
    reason, never run to find out: a node that read none of it within its estimate's time (``hits``
    None, ``seconds`` what that took: a query relating three labels over two ``[]{0,60}`` once ran
    anyway and took a node to 10 GB), or nodes that did not answer the estimate in time. MU and TAB
    queries, which the engine does not estimate (``seconds`` None), run as background work, within
    the nodes' memory budget. ``background``: the query runs as background work, whose time limits
    are ``BACKGROUND_TIME`` times longer."""
    not_stalled(request, search)
    if not may_be_slow(search.query.query):
        return None
    settings = frontend_state(request).settings
    most = min(settings.limits.deadline, settings.nodes.timeout)  # a node call is given up after [nodes] timeout
    if background:
        most *= BACKGROUND_TIME
    try:
        cost = await estimated(request, caller, user, key, search)
    except QueryTooSlow:  # the nodes could not say in time (NodesUnavailable, none answered, is passed on)
        raise not_bounded(f"the nodes did not estimate it within {search.partitions.time_limit / 10:g} s "
                          "(a tenth of the time limit)") from None
    late = [s.failure.public() for s in cost.statuses if s.failure is not None and (s.failure.timed_out
                                                                                  or s.failure.final)]
    if late:  # a partition that could not say in time would run the query unbounded
        raise not_bounded(f"a partition did not estimate it in time ({'; '.join(late)})")
    if cost.hits is None and cost.seconds is not None:  # the node read none of it in its estimate's time
        raise not_bounded(f"a node could not read any of it within the {cost.seconds:,.1f} s its estimate took")
    if cost.seconds is not None and cost.seconds > most:
        hits = "an unknown number of" if cost.hits is None else f"about {cost.hits:,}"
        kind = "a background query" if background else "a query"
        raise LimitExceeded(
            f"this query is estimated to take {cost.seconds:,.0f} s on the nodes ({hits} hits), more than the "
            f"{most:g} s {kind} may take: it was not run. Narrow it — a rarer word first, shorter or "
            "bounded repetitions ([]{0,5} rather than []*), within s, a filter")
    return cost


def not_bounded(why: str) -> LimitExceeded:
    """The refusal of a query whose cost could not be estimated (``tiered``): ``why`` says what the
    estimate found."""
    return LimitExceeded(
        f"this query could not be estimated: {why}, so what it would cost on the nodes has no bound and it was "
        "not run. Narrow it — a rarer word first, shorter repetitions ([]{0,5} rather than []{0,60}), fewer "
        "labels related to each other, within s")


async def background_turn(request: Request, caller: Caller, key: str, deadline: float, cost: float = 0.0) -> Turn:
    """Wait for the viewer's turn at background work (``priority.Lanes``: slots shared per viewer by
    cost; ``cost``: its estimated node seconds); the request and its node calls are background from
    now on (``caller.priority``). Stopped when the client goes; ``503 busy`` after the (stretched)
    ``deadline`` in line."""
    caller.priority = "background"
    try:
        return await until_disconnected(request, caller, frontend_state(request).lanes.turn(key, cost), deadline)
    except DeadlinePassed:
        raise Busy(f"background work (analyses, exports, deep sorted pages) waited {caller.stretched(deadline):g} s "
                   "for its turn; try again later", headers={"Retry-After": "30"}) from None


async def until_disconnected(request: Request, caller: Caller, work: Awaitable[T], deadline: float | None = None,
                             stall: StalledQuery | None = None, watched: bool = False) -> T:
    """Run ``work``; if the client goes away first, or ``deadline`` (plus a backstop margin, longer
    for background work) seconds pass, cancel it (which cancels the requests to the nodes) and raise
    ``ClientGone`` or ``DeadlinePassed``. A query (``stall``) that runs out of time is remembered
    (``stalled``); an estimate or a wait for a turn is not the query itself. ``watched``: a streamed
    answer's response notices the client going itself (and cancels the work): reading the request's
    messages here too would compete with it.

    However it ends — the work done, the client gone, the deadline, this wait cancelled (a stream
    whose client went) — cancelled work is waited for until it has stopped (``stopped``): its node
    calls report what they cost before the request's place, and its meter, end."""
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    deadline = None if deadline is None else caller.stretched(deadline)
    stop = loop.time() + deadline + BACKSTOP_SECONDS if deadline is not None else None
    try:
        while not task.done():
            done, _ = await asyncio.wait({task}, timeout=0.25)
            if done:
                break
            if stop is not None and loop.time() > stop:
                await stopped(task)
                if stall is not None:
                    frontend_state(request).stalled.note(stall, f"it was stopped at the deadline of {deadline:g} s")
                raise DeadlinePassed(f"the query took longer than {deadline:g} s across the nodes and was stopped")
            if not watched and await request.is_disconnected():
                await stopped(task)
                raise ClientGone("the client closed the connection; the query was stopped")
    finally:
        if not task.done():  # this wait was cancelled (a stream whose client went): the work stops with it, once
            await stopped(task)
    try:
        return await task
    except QueryTooSlow:
        if stall is not None:
            frontend_state(request).stalled.note(stall, "it ran out of time on every partition")
        raise


async def stopped(task: asyncio.Future[Any]) -> None:
    """Cancel ``task`` once and wait until it has stopped, whatever it ends with, even when this wait is
    cancelled (``failover.finish``: a streamed answer's client that goes cancels the response's work
    again and again); a cancel of this wait is passed on once the task has stopped."""
    task.cancel()
    cancelled = False
    while not task.done():
        try:
            await asyncio.wait({task})
        except asyncio.CancelledError:
            cancelled = True
    if not task.cancelled():
        task.exception()  # retrieved: its failure matters no more
    if cancelled:
        raise asyncio.CancelledError


@dataclass
class Visit:
    """The prologue every route that reaches the nodes shares, as one dependency (``Visitor``): who asks
    (their fair-use key), the corpora they see, the nodes; a saved subcorpus expanded into filters; the
    search the parameters make; and ``run``, which admits the work (its cost afforded, a place among
    the viewer's queries, its node time metered), waits for its turn as background work, stops it
    when the client goes or the deadline passes, and logs what it searched.

    Its ``caller`` goes with every node call of the request (``nodes``): when the request began, its
    priority, the meter of its node time. ``progress`` is told of each partition's answer to its
    searches; ``streamed``: the work runs under a streamed answer, which watches the client itself."""

    request: Request
    user: Viewer
    quota: FairUse
    catalogue: CorpusCatalogue
    client: NodeClient
    caller: Caller = field(default_factory=Caller)
    progress: Progress | None = None
    streamed: bool = False
    classed: Classed | None = None
    """The request's class (``classify``); None: as each ``run`` says (``background``)."""

    @property
    def nodes(self) -> RequestNodes:
        """The nodes as this request calls them."""
        return self.client.bound(self.caller)

    @functools.cached_property
    def key(self) -> str:
        """The viewer's key in the fair-use counts: the user, or the address of an anonymous one."""
        return self.quota.key(self.user, self.request)

    @property
    def limits(self) -> LimitSettings:
        limits: LimitSettings = frontend_state(self.request).settings.limits
        return limits

    async def subcorpus(self, asked: S) -> S:
        """``asked`` with its saved subcorpus (``subcorpus=ID``) expanded into filters."""
        return await in_subcorpus(self.request, self.user, asked)

    def corpus(self, name: str) -> CorpusEntry:
        """A corpus the viewer may search (404 otherwise)."""
        return self.catalogue.get(name, self.user)

    def search(self, asked: Searching, view: HitView | None = None) -> tuple[CorpusEntry, NodeSearch]:
        """The corpus asked for and the search the parameters make over its partitions (the query
        translated and checked once, the filters added)."""
        target = self.corpus(asked.corpus)
        checked = build_query(asked.q, asked.syntax, asked.ignore_case, asked.filters, target)
        return target, search_of(self.nodes, target, checked, view, self.progress)

    async def admit(self, slot: ExitStack, search: NodeSearch | None = None, *, deadline: float,
                    known: CostEstimate | None = None, reads: int = 0, what: str = "",
                    lease: float | None = None) -> None:
        """Let the work in, holding its place in ``slot`` until the slot closes: a query's cost afforded
        (``affordable``: estimated when the day's node time may not pay for it; ``known``: the
        estimate made already), or for work that cannot be estimated (``what``, reading ``reads``
        partitions) the day's node time able to pay for it at most; then a place among the viewer's
        queries (``room``, ``running``; ``lease``: how long the place counts if this process dies)."""
        hold = 0.0
        if search is not None:
            hold = await affordable(self.request, self.caller, self.quota, self.user, self.key, search, deadline,
                                    known)
        elif what:
            self.quota.can_pay(self.user, self.key, deadline * reads, what)
        await self.quota.room(self.user, self.key, self.request)
        slot.enter_context(metered(self.caller, slot.enter_context(self.quota.running(self.user, self.key, hold,
                                                                                      lease))))

    async def run(self, work: Coroutine[Any, Any, T], search: NodeSearch | None = None, *,
                  deadline: float | None = None, background: bool = True, known: CostEstimate | None = None,
                  reads: int = 0, what: str = "") -> T:
        """``work`` as one of the viewer's queries (``admit``), as background work after its turn when
        ``background``, stopped when the client goes or the ``deadline`` (``[limits] deadline``)
        passes. A ``search`` that may be slow is estimated first and refused past its time limit
        (``tiered``), unless its estimate is ``known``. Work refused or never started is closed, not
        left to warn."""
        deadline = self.limits.deadline if deadline is None else deadline
        if self.classed is not None:
            background = self.classed.background
            known = known if known is not None else self.classed.estimate
        with ExitStack() as slot:
            try:
                asked = asyncio.get_running_loop().time()
                if search is not None and known is None:
                    known = await tiered(self.request, self.caller, self.user, self.key, search, background)
                await self.admit(slot, search, deadline=deadline, known=known, reads=reads, what=what)
                if background:
                    turn = await self.background_turn(deadline, known)
                    slot.callback(lambda: turn.release(self.node_seconds()))
                self.waited(asyncio.get_running_loop().time() - asked)
            except BaseException:
                work.close()  # never started (refused, or the client went while it waited)
                raise
            found = await until_disconnected(self.request, self.caller, work, deadline,
                                             None if search is None else stall_key(search), self.streamed)
        if search is not None:
            self.request.state.log_corpus = search.corpus.name
        return found

    async def until_disconnected(self, work: Awaitable[T], deadline: float | None = None,
                                 search: NodeSearch | None = None) -> T:
        """``work`` of this request stopped when the client goes or the deadline passes (``search``: the
        query it runs, remembered if it runs out of time)."""
        return await until_disconnected(self.request, self.caller, work, deadline,
                                        None if search is None else stall_key(search), self.streamed)

    async def background_turn(self, deadline: float, known: CostEstimate | None = None) -> Turn:
        """The viewer's turn at background work, charged its estimated cost (the estimate ``known``, or
        the class's) until it ends; this request is background work from now on."""
        seconds = self.classed.seconds if self.classed is not None else None
        if seconds is None and known is not None:
            seconds = known.cpu_seconds if known.cpu_seconds is not None else known.seconds
        return await background_turn(self.request, self.caller, self.key, deadline, seconds or 0.0)

    def node_seconds(self) -> float | None:
        """The node seconds this request's calls have cost so far (None: not metered)."""
        return None if self.caller.meter is None else self.caller.meter.ms / 1000

    def waited(self, seconds: float) -> None:
        """How long the request's work waited before it began (its answer says it: ``classing``)."""
        classing = classing_of(self.request.scope)
        if classing is not None:
            classing.waited = seconds if classing.waited is None else classing.waited + seconds

    def class_preview(self, cost: CostEstimate | None, deep: bool) -> bool:
        """Class a preview, and say whether it is background work: a query that may be slow (``tiered``
        gave ``cost``) estimated beyond the interactive budget (``[limits] interactive_seconds``) or
        not estimated at all; a sorted page deep in the hits (``deep``: from ``DEEP_SORT`` on, ``cost``
        its estimate) by its cost, its estimated hits' sort keys included."""
        budget = self.limits.interactive_seconds
        if deep and cost is not None:
            self.classed = class_by_cost(cost, QUERY.per_hit, budget)
        elif cost is None:
            self.classed = Classed("interactive", "a query that cannot be slow (not estimated)")
        elif cost.seconds is None:
            self.classed = Classed("background", "a query the engine does not estimate (MU, TAB)", cost)
        else:
            self.classed = class_by_seconds(cost.seconds, budget, cost)
        classing = classing_of(self.request.scope)
        if classing is not None:
            classing.classed = self.classed
        return self.classed.background

    async def classify(self, operation: PublicOperation, asked: Parameters,
                       answering: Callable[[], bool] = lambda: False) -> Response | None:
        """Class the request by its operation and, for an ``estimated`` one, by its estimated cost
        (``classing.py``); the class holds for every ``run`` of the request and its answer says it.
        Work classed background in a process that can hand it over is handed over — unless its answer
        has begun meanwhile (``answering``: a streamed analysis starts its events while its estimate
        runs): the hand-over response is returned, for the route's answer."""
        scope = self.request.scope
        if scope.get(FORWARDED_SCOPE):
            self.classed = Classed.from_handed_over(scope.get(HANDED_OVER.decode()))
        elif operation.cost == "interactive":
            self.classed = Classed("interactive", "interactive work of its kind (never estimated)")
        elif operation.cost == "background":
            self.classed = Classed("background", "background work of its kind (not estimated)")
        elif isinstance(asked, Searching) and operation.name != "query":  # a preview classes its sorted pages
            _, search = self.search(asked)
            not_stalled(self.request, search)  # a query that just ran out of time: refused before any estimate
            if may_be_slow(search.query.query):  # refused past the background time limit
                estimate = await tiered(self.request, self.caller, self.user, self.key, search, background=True)
                assert estimate is not None
            else:
                estimate = await estimated(self.request, self.caller, self.user, self.key, search)
            rows = getattr(asked, "sample", None) or getattr(asked, "limit", None) or self.limits.browser_export_limit
            handled = int(rows) if operation.name == "export" else None  # an export handles its rows, at most
            self.classed = class_by_cost(estimate, operation.per_hit, self.limits.interactive_seconds, handled,
                                         operation.fixed)
        classing = classing_of(scope)
        if classing is not None:
            classing.classed = self.classed
        if self.classed is not None and self.classed.background and scope.get(HAND_OVER_SCOPE) and not answering():
            return Response(status_code=202, headers={HAND_OVER.decode(): "1",
                                                      HANDED_OVER.decode(): self.classed.handed_over().decode()})
        return None

    def logged(self, corpus: str, hits: int | None = None) -> None:
        """What the request log says the request searched (and found)."""
        self.request.state.log_corpus = corpus
        if hits is not None:
            self.request.state.log_hits = hits


def visit(request: Request, user: CurrentUser, quota: Quota, catalogue: Corpora, nodes: Nodes) -> Visit:
    made = Visit(request, user, quota, catalogue, nodes, Caller(began=began(request.scope)))
    made.caller.viewer = viewer_tag(made.key)
    return made


Visitor = Annotated[Visit, Depends(visit)]
"""The route prologue (``Visit``) as a route parameter."""
