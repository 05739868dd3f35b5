"""Shared request dependencies: the (possibly anonymous) user, the services, common parameters."""

from __future__ import annotations

import asyncio
import difflib
import re
from collections.abc import Awaitable
from dataclasses import replace
from typing import Annotated, TypeVar

from fastapi import Depends, Query, Request
from fastapi.dependencies.models import Dependant
from fastapi.routing import APIRoute
from sqlalchemy.exc import SQLAlchemyError

from cowbird.core.errors import BadParameter, ClientGone, DeadlinePassed, Unauthorized
from cowbird.core.search import HitView
from cowbird.frontend.accounts import Accounts, DatabaseError, User
from cowbird.frontend.accounts.web import SESSION_COOKIE, current_session
from cowbird.frontend.corpora import CorpusCatalogue
from cowbird.frontend.fair_use import FairUse
from cowbird.frontend.fanout import NodeClient
from cowbird.frontend.state import frontend_state
from cowbird.frontend.viewer import ANONYMOUS, Viewer

T = TypeVar("T")


def current_user(request: Request) -> Viewer:
    viewer = _viewer(request)
    request.state.log_user = viewer.name  # for the request log
    return viewer


def _viewer(request: Request) -> Viewer:
    """The viewer behind the request: anonymous, or the approved owner of the API token given as
    ``Authorization: Bearer <token>`` (or, for HTTP GET scripts, ``?token=<token>``). A token that is
    unknown, revoked or whose account is not approved is refused (401), never taken as anonymous."""
    header = request.headers.get("authorization", "")
    if header:
        scheme, _, token = header.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthorized("use Authorization: Bearer <API token>", headers={"WWW-Authenticate": "Bearer"})
    else:
        token = request.query_params.get("token", "")
        if not token:
            return _session_viewer(request)
    accounts: Accounts = frontend_state(request).accounts
    try:
        with accounts.database.session() as session:
            user = accounts.tokens.user_for(session, token.strip())
            viewer = None if user is None else viewer_of(user)
    except SQLAlchemyError as exc:
        raise DatabaseError("the account database cannot be read; try again shortly",
                            headers={"Retry-After": "10"}) from exc
    if viewer is None:
        raise Unauthorized("the API token is not valid (unknown or revoked, or the account is not approved)",
                           headers={"WWW-Authenticate": "Bearer"})
    return viewer


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


def viewer_of(user: User) -> Viewer:
    return Viewer(user.name, frozenset(user.group_names), user.api_bulk, user.is_admin)


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


def split(values: str | None) -> list[str]:
    return [v.strip() for v in (values or "").split(",") if v.strip()]


def hit_view(
    request: Request,
    context: Annotated[
        str, Query(description="Tokens of context each side, or an s-attribute (s) for the whole region.")
    ] = "10",
    show: Annotated[str | None, Query(description="p-attributes of the match to return, comma-separated.")] = None,
    meta: Annotated[str | None, Query(description="s-attributes (metadata) to return, comma-separated.")] = None,
) -> HitView:
    """What each hit shows, from the ``context``, ``show`` and ``meta`` parameters."""
    limit = frontend_state(request).settings.max_context
    names = split(meta)
    if any(name.lower() in ("1", "true", "yes") for name in names):
        raise BadParameter(
            f"meta={meta}: meta names the s-attributes to show with each hit (meta=text_genre,text_url); "
            "for the provenance block of a download use provenance=1"
        )
    if re.fullmatch(r"[0-9]{1,9}", context.strip()):  # ASCII digits: "²" is a digit to str.isdigit
        tokens = int(context.strip())
        if tokens > limit:
            raise BadParameter(f"context={context}: at most {limit} tokens each side")
        return HitView(tokens, split(show), names)
    if not context.strip().isidentifier():
        raise BadParameter(f"context={context!r}: give a number of tokens (0-{limit}) or an s-attribute such as s")
    return HitView(0, split(show), names, region=context.strip())


def known_parameters(request: Request) -> None:
    """Refuse query parameters the route does not take, naming them and the accepted ones: a
    misspelt parameter (``ignorecase=1``) must not be ignored without a word."""
    route = request.scope.get("route")
    if not isinstance(route, APIRoute):
        return
    accepted = _accepted(route) | {"token"}  # ?token= authenticates HTTP GET scripts on every route
    unknown = [name for name in dict.fromkeys(request.query_params.keys()) if name not in accepted]
    if not unknown:
        return
    hints = []
    for name in unknown:
        close = difflib.get_close_matches(name, sorted(accepted), n=1, cutoff=0.6)
        hints.append(f"{name} (did you mean {close[0]}?)" if close else name)
    raise BadParameter(
        f"unknown parameter{'s' if len(unknown) > 1 else ''} {', '.join(hints)}; "
        f"{route.path} takes: {', '.join(sorted(accepted)) or 'no parameters'}"
    )


_ACCEPTED: dict[int, frozenset[str]] = {}


def _accepted(route: APIRoute) -> frozenset[str]:
    if id(route) not in _ACCEPTED:
        _ACCEPTED[id(route)] = frozenset(_query_names(route.dependant))
    return _ACCEPTED[id(route)]


def _query_names(dependant: Dependant) -> list[str]:
    """The query parameters of an endpoint and of all its dependencies, by the names users write."""
    names = [param.alias for param in dependant.query_params]
    for sub in dependant.dependencies:
        names += _query_names(sub)
    return names


View = Annotated[HitView, Depends(hit_view)]

BACKSTOP_SECONDS = 5.0
"""How long past its deadline a query may still run: node calls end at the deadline themselves
(a slow partition is reported as failed), this only catches what does not."""


async def until_disconnected(request: Request, work: Awaitable[T], deadline: float | None = None) -> T:
    """Run ``work``; if the client goes away first, or ``deadline`` (plus a backstop margin) seconds
    pass, cancel it (which cancels the requests to the nodes) and raise ``ClientGone`` or
    ``DeadlinePassed``."""
    task = asyncio.ensure_future(work)
    loop = asyncio.get_running_loop()
    stop = loop.time() + deadline + BACKSTOP_SECONDS if deadline is not None else None
    while not task.done():
        done, _ = await asyncio.wait({task}, timeout=0.25)
        if done:
            break
        if stop is not None and loop.time() > stop:
            task.cancel()
            raise DeadlinePassed(f"the query took longer than {deadline:g} s across the nodes and was stopped")
        if await request.is_disconnected():
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            raise ClientGone("the client closed the connection; the query was stopped")
    return await task
