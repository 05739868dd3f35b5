"""The one rule for an API credential: who an ``Authorization`` header (or ``?token=``) names, or why
it is refused.

A request without a credential is anonymous (or the browser session of its cookie, which
``routes/deps.py`` reads). A credential that is given must be ``Authorization: Bearer <API token>``
naming an approved account's token that is not revoked; anything else — an empty header (an unset
``$COWBIRD_TOKEN`` in ``-H "Authorization: Bearer $COWBIRD_TOKEN"``), ``Bearer`` with no token,
another scheme, more than one word after it, an unknown token — is ``401 unauthorized`` saying
which. ``Credentials`` (middleware) holds every ``/api/`` route to it before any route runs, and
the interactive process asks the same check before it forwards a request to its background process
(``background.py:ToBackground``), so no route, in either process, ever sees a bad credential.
"""

from __future__ import annotations

import asyncio
from urllib.parse import parse_qs

from sqlalchemy.exc import SQLAlchemyError
from starlette.requests import Request
from starlette.routing import BaseRoute, Match
from starlette.types import ASGIApp, Receive, Scope, Send

from cowbird.core.errors import CowbirdError, Unauthorized
from cowbird.frontend.accounts import Accounts, DatabaseError, User
from cowbird.frontend.viewer import Viewer
from cowbird.serving.asgi import HttpMiddleware
from cowbird.serving.problems import Renderer

CHALLENGE = {"WWW-Authenticate": "Bearer"}
VIEWER_STATE = "credential_viewer"
"""The key in a request's ``state`` under which ``Credentials`` leaves the viewer it found, so that the
route's ``current_user`` does not read the account database again."""
SHOWN_SCHEME = 20
"""How many characters of a wrong scheme a refusal repeats (never any of the token)."""
HOW = "send `Authorization: Bearer <API token>` (your account page makes one), or no Authorization header at all " \
      "to search anonymously"


def presented_token(header: str | None, query_token: str | None) -> str | None:
    """The API token a request presents: the ``Authorization`` header's (``Bearer <token>``) if it has
    one, else a non-empty ``?token=``, else None (no credential). A header that is not exactly
    ``Bearer <token>`` is refused (``Unauthorized``), saying what it holds instead."""
    if header is None:
        return query_token.strip() if query_token and query_token.strip() else None
    words = header.split()
    if not words:
        raise Unauthorized(f"the Authorization header is empty (an unset $COWBIRD_TOKEN?): {HOW}", headers=CHALLENGE)
    scheme = words[0]
    if scheme.lower() != "bearer":
        shown = scheme if len(scheme) <= SHOWN_SCHEME else scheme[:SHOWN_SCHEME] + "…"
        what = f"the scheme {shown!r}" if len(words) > 1 else "no scheme (a bare word)"
        raise Unauthorized(f"the Authorization header holds {what}, not Bearer: {HOW}", headers=CHALLENGE)
    if len(words) == 1:
        raise Unauthorized("the Authorization header holds 'Bearer ' with no token: set COWBIRD_TOKEN to your API "
                           "token (your account page makes one), or send no Authorization header at all to search "
                           "anonymously", headers=CHALLENGE)
    if len(words) > 2:
        raise Unauthorized(f"the Authorization header holds more than one word after 'Bearer': {HOW}",
                           headers=CHALLENGE)
    return words[1]


def viewer_of(user: User) -> Viewer:
    return Viewer(user.name, frozenset(user.group_names), user.api_bulk, user.is_admin)


def token_viewer(accounts: Accounts, token: str) -> Viewer:
    """The approved owner of an API token; 401 if it is unknown, revoked or its account not approved,
    503 if the account database cannot be read."""
    try:
        with accounts.database.session() as session:
            user = accounts.tokens.user_for(session, token)
            viewer = None if user is None else viewer_of(user)
    except SQLAlchemyError as exc:
        raise DatabaseError("the account database cannot be read; try again shortly",
                            headers={"Retry-After": "10"}) from exc
    if viewer is None:
        raise Unauthorized("the API token is not valid (unknown or revoked, or the account is not approved): "
                           f"check COWBIRD_TOKEN, or {HOW.removeprefix('send ')}", headers=CHALLENGE)
    return viewer


def credential_viewer(accounts: Accounts, scope: Scope) -> Viewer | None:
    """The viewer a request's credential names, None if it presents none; refused as ``presented_token``
    and ``token_viewer`` say."""
    raw = dict(scope["headers"]).get(b"authorization")
    header = None if raw is None else raw.decode("latin-1")
    query_token = None
    if b"token=" in scope.get("query_string", b""):
        query_token = parse_qs(scope["query_string"].decode("latin-1")).get("token", [""])[-1]
    token = presented_token(header, query_token)
    return None if token is None else token_viewer(accounts, token)


def is_api(scope: Scope, routes: list[BaseRoute] | None = None) -> bool:
    """Whether the request is for an ``/api/`` route: of ``routes`` where given (a path no route has,
    such as one with a trailing slash, is left to the router's 404 naming it)."""
    if not str(scope.get("path", "")).startswith("/api/"):
        return False
    return routes is None or any(route.matches(scope)[0] != Match.NONE for route in routes)


async def refusal(accounts: Accounts, scope: Scope,
                  routes: list[BaseRoute] | None = None) -> tuple[Viewer | None, CowbirdError | None]:
    """The viewer of an ``/api/`` request's credential (None: none given, or not an ``/api/`` request;
    with ``routes``, not a request for one of them), or why it is refused."""
    if not is_api(scope, routes):
        return None, None
    try:
        return await asyncio.to_thread(credential_viewer, accounts, scope), None
    except (Unauthorized, DatabaseError) as refused:
        return None, refused


class Credentials(HttpMiddleware):
    """Every ``/api/`` request with a credential is held to the rule before any route sees it: the
    viewer found is left in the request's state (``VIEWER_STATE``), a refusal answered here. A path
    none of ``routes`` has is the router's 404, whatever its credential."""

    def __init__(self, app: ASGIApp, accounts: Accounts, render: Renderer, routes: list[BaseRoute]) -> None:
        super().__init__(app)
        self.accounts = accounts
        self.render = render
        self.routes = routes

    async def http(self, scope: Scope, receive: Receive, send: Send) -> None:
        viewer, refused = await refusal(self.accounts, scope, self.routes)
        if refused is not None:
            await self.render(Request(scope, receive), refused)(scope, receive, send)
            return
        if viewer is not None:
            scope.setdefault("state", {})[VIEWER_STATE] = viewer
        await self.app(scope, receive, send)
