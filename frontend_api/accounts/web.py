"""Registration, login, the account page (API tokens, password) and the admin review, as
server-rendered forms that work without JavaScript.

Browser sessions are server-side records; the cookie (``cowbird_session``: HttpOnly,
SameSite=Lax, Secure behind TLS) carries the session id signed with the installation's key.
Every form post carries a CSRF token: the session's own once logged in, before that a signed
double-submit cookie (``cowbird_csrf``) that the form repeats.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Annotated, Any

from fastapi import APIRouter, Form, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from itsdangerous import BadSignature, Signer
from sqlalchemy.orm import Session

from cowbird.errors import BadParameter, CowbirdError
from frontend_api.accounts.mail import Mailer
from frontend_api.accounts.models import State, User, WebSession
from frontend_api.accounts.service import MIN_ABSTRACT, Accounts
from frontend_api.accounts.throttle import Throttle
from frontend_api.errors import Forbidden, TooManyRequests
from frontend_api.fair_use import FairUse
from frontend_api.viewer import Viewer

router = APIRouter(include_in_schema=False)

SESSION_COOKIE = "cowbird_session"
CSRF_COOKIE = "cowbird_csrf"
SESSION_DAYS = 14.0


class CsrfFailed(Forbidden):
    code, title = "csrf_failed", "The form is stale or was not sent by this site"


def _accounts(request: Request) -> Accounts:
    accounts: Accounts = request.app.state.accounts
    return accounts


def _signer(request: Request) -> Signer:
    signer: Signer | None = getattr(request.app.state, "session_signer", None)
    if signer is None:
        accounts = _accounts(request)
        with accounts.database.session() as session:
            key = accounts.secret(session, "session-key")
        signer = Signer(key, salt="cowbird-session")
        request.app.state.session_signer = signer
    return signer


def _secure(request: Request) -> bool:
    settings = request.app.state.settings
    return request.url.scheme == "https" or str(settings.public_url).startswith("https://")


def session_id(request: Request) -> str | None:
    """The session id of the request's cookie, if its signature holds."""
    cookie = request.cookies.get(SESSION_COOKIE)
    if not cookie:
        return None
    try:
        return _signer(request).unsign(cookie).decode("ascii")
    except BadSignature:
        return None


def current_session(request: Request, database_session: Any) -> WebSession | None:
    secret = session_id(request)
    return None if secret is None else _accounts(request).session_for(database_session, secret)


def _page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    token = request.cookies.get(CSRF_COOKIE)
    fresh = None
    if not token or not _valid_csrf_cookie(request, token):
        fresh = _signer(request).sign(secrets.token_urlsafe(24)).decode("ascii")
        token = fresh
    context.setdefault("csrf", token)
    response: HTMLResponse = request.app.state.templates.TemplateResponse(
        request, template, {"min_abstract": MIN_ABSTRACT, **context}, status_code=status
    )
    if fresh is not None:
        response.set_cookie(CSRF_COOKIE, fresh, httponly=True, samesite="lax", secure=_secure(request))
    return response


def _valid_csrf_cookie(request: Request, token: str) -> bool:
    try:
        _signer(request).unsign(token)
    except BadSignature:
        return False
    return True


def _check_anonymous_csrf(request: Request, sent: str) -> None:
    cookie = request.cookies.get(CSRF_COOKIE, "")
    if not cookie or not secrets.compare_digest(cookie, sent) or not _valid_csrf_cookie(request, cookie):
        raise CsrfFailed("the form expired or did not come from this site: reload the page and send it again")


def _check_session_csrf(web: WebSession, sent: str) -> None:
    if not secrets.compare_digest(web.csrf, sent):
        raise CsrfFailed("the form expired or did not come from this site: reload the page and send it again")


def _address(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _throttle(request: Request) -> Throttle:
    throttle: Throttle | None = getattr(request.app.state, "login_throttle", None)
    if throttle is None:
        throttle = request.app.state.login_throttle = Throttle()
    return throttle


# ------------------------------------------------------------------ login and logout


@router.get("/login", response_class=HTMLResponse)
async def login_form(request: Request) -> HTMLResponse:
    return _page(request, "login.html")


@router.post("/login", response_class=HTMLResponse)
def login(
    request: Request, login: Annotated[str, Form(max_length=300)], password: Annotated[str, Form(max_length=4096)],
    csrf: Annotated[str, Form(max_length=200)],
) -> Response:
    _check_anonymous_csrf(request, csrf)
    throttle, address = _throttle(request), _address(request)
    wait = throttle.wait(login, address)
    if wait:
        raise TooManyRequests(f"too many failed logins: try again in {wait} s", headers={"Retry-After": str(wait)})
    accounts = _accounts(request)
    with accounts.database.session() as session:
        user = accounts.authenticate(session, login, password)
        if user is None:
            throttle.failed(login, address)
            return _page(request, "login.html", 400, error="the name or e-mail address or the password is wrong",
                         login=login)
        throttle.succeeded(login)
        if not user.active:  # the password was right: the user may learn where their account stands
            decision = accounts.last_decision(session, user)
            return _page(request, "message.html", 403, title="Not approved",
                         message=_state_message(user, decision.reason if decision else ""))
        secret, _ = accounts.open_session(session, user, SESSION_DAYS)
    response = RedirectResponse("/account", status_code=303)
    response.set_cookie(SESSION_COOKIE, _signer(request).sign(secret).decode("ascii"), httponly=True,
                        samesite="lax", secure=_secure(request), max_age=int(SESSION_DAYS * 86400))
    return response


def _state_message(user: User, reason: str) -> str:
    why = f" Reason: {reason}" if reason else ""
    return {
        State.PENDING.value: "Your registration is waiting for review; you will be told the decision.",
        State.DENIED.value: f"Your registration was not approved.{why}",
        State.SUSPENDED.value: f"Your account is suspended.{why}",
    }.get(user.state, "Your account cannot be used.")


@router.post("/logout")
def logout(request: Request, csrf: Annotated[str, Form(max_length=200)]) -> Response:
    accounts = _accounts(request)
    secret = session_id(request)
    with accounts.database.session() as session:
        web = None if secret is None else accounts.session_for(session, secret)
        if web is not None:
            _check_session_csrf(web, csrf)
            accounts.close_session(session, secret or "")
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


# ------------------------------------------------------------------ registration


@router.get("/register", response_class=HTMLResponse)
async def register_form(request: Request) -> HTMLResponse:
    return _page(request, "register.html", form={})


@router.post("/register", response_class=HTMLResponse)
def register(
    request: Request,
    name: Annotated[str, Form(max_length=64)],
    email: Annotated[str, Form(max_length=254)],
    affiliation: Annotated[str, Form(max_length=300)],
    abstract: Annotated[str, Form(max_length=20_000)],
    password: Annotated[str, Form(max_length=4096)],
    csrf: Annotated[str, Form(max_length=200)],
) -> HTMLResponse:
    _check_anonymous_csrf(request, csrf)
    accounts = _accounts(request)
    form = {"name": name, "email": email, "affiliation": affiliation, "abstract": abstract}
    try:
        with accounts.database.session() as session:
            accounts.register(session, name, email, affiliation, abstract, password)
    except CowbirdError as error:
        return _page(request, "register.html", error.status, error=str(error), form=form)
    return _page(request, "message.html", title="Thank you",
                 message="Your registration is waiting for review. You can log in once it is approved.")


# ------------------------------------------------------------------ the account page


class LoginRequired(Exception):
    """No valid session: the app answers with a redirect to the login form (``redirect_to_login``)."""


def redirect_to_login(request: Request, error: Exception) -> Response:
    return RedirectResponse("/login", status_code=303)


@contextmanager
def _signed_in(
    request: Request, csrf: str | None = None, admin: bool = False
) -> Iterator[tuple[Accounts, Session, WebSession]]:
    """The accounts, a database session and the browser session of a logged-in user; the form's
    CSRF token checked when one is given, the admin role when asked."""
    accounts = _accounts(request)
    with accounts.database.session() as session:
        web = current_session(request, session)
        if web is None:
            raise LoginRequired
        if csrf is not None:
            _check_session_csrf(web, csrf)
        if admin and not web.user.is_admin:
            raise Forbidden("this page is for administrators")
        yield accounts, session, web


def _account_page(request: Request, web: WebSession, session: Session, status: int = 200, **extra: Any) -> HTMLResponse:
    fair_use: FairUse = request.app.state.fair_use
    key = f"user:{web.user.name}"
    budgets = []
    for label, viewer in (("in the browser", Viewer(web.user.name)), ("by API token", Viewer(web.user.name,
                          api_bulk=web.user.api_bulk))):
        limits = fair_use.limits(viewer)
        budgets.append((label, limits.running, fair_use.rows_left(viewer, key), limits.rows_per_day))
    return _page(request, "account.html", status, user=web.user, csrf=web.csrf,
                 tokens=_accounts(request).tokens(session, web.user), budgets=budgets, **extra)


@router.get("/account", response_class=HTMLResponse)
def account(request: Request) -> Response:
    with _signed_in(request) as (_, session, web):
        return _account_page(request, web, session)


@router.post("/account/tokens", response_class=HTMLResponse)
def create_token(
    request: Request, name: Annotated[str, Form(max_length=100)], csrf: Annotated[str, Form(max_length=200)]
) -> Response:
    with _signed_in(request, csrf) as (accounts, session, web):
        try:
            with session.begin_nested():
                token = accounts.create_token(session, web.user, name)
        except CowbirdError as error:
            return _account_page(request, web, session, error.status, error=str(error))
        return _account_page(request, web, session, new_token=token)


@router.post("/account/tokens/revoke", response_class=HTMLResponse)
def revoke_token(
    request: Request, name: Annotated[str, Form(max_length=100)], csrf: Annotated[str, Form(max_length=200)]
) -> Response:
    with _signed_in(request, csrf) as (accounts, session, web):
        try:
            accounts.revoke_token(session, web.user, name)
        except CowbirdError as error:
            return _account_page(request, web, session, error.status, error=str(error))
        return _account_page(request, web, session, notice=f"token {name} revoked")


@router.post("/account/password", response_class=HTMLResponse)
def change_password(
    request: Request, current: Annotated[str, Form(max_length=4096)], new: Annotated[str, Form(max_length=4096)],
    csrf: Annotated[str, Form(max_length=200)],
) -> Response:
    with _signed_in(request, csrf) as (accounts, session, web):
        if accounts.authenticate(session, web.user.name, current) is None:
            return _account_page(request, web, session, 400, error="the current password is wrong")
        try:
            accounts.set_password(session, web.user, new, web.user.name)
        except BadParameter as error:
            return _account_page(request, web, session, 400, error=str(error))
    response = RedirectResponse("/login", status_code=303)  # every session ends with a new password
    response.delete_cookie(SESSION_COOKIE)
    return response


# ------------------------------------------------------------------ the admin review


def _admin_page(request: Request, accounts: Accounts, session: Session, web: WebSession, status: int = 200,
                **extra: Any) -> HTMLResponse:
    return _page(request, "admin.html", status, csrf=web.csrf, pending=accounts.users(session, State.PENDING),
                 users=accounts.users(session), **extra)


@router.get("/admin/users", response_class=HTMLResponse)
def admin_users(request: Request) -> Response:
    with _signed_in(request, admin=True) as (accounts, session, web):
        return _admin_page(request, accounts, session, web)


@router.post("/admin/users/decide", response_class=HTMLResponse)
def admin_decide(
    request: Request,
    name: Annotated[str, Form(max_length=64)],
    decision: Annotated[str, Form(pattern="^(approved|denied|suspended)$")],
    csrf: Annotated[str, Form(max_length=200)],
    reason: Annotated[str, Form(max_length=2000)] = "",
) -> Response:
    with _signed_in(request, csrf, admin=True) as (accounts, session, web):
        try:
            with session.begin_nested():
                user = accounts.get(session, name)
                accounts.decide(session, user, State(decision), web.user.name, reason)
        except CowbirdError as error:
            return _admin_page(request, accounts, session, web, error.status, error=str(error))
        mailer: Mailer | None = request.app.state.mailer
        problem = None if mailer is None else mailer.send(user, State(decision), reason)
        if problem is not None:  # the decision stands; the admin learns that the e-mail did not go out
            return _admin_page(request, accounts, session, web, error=f"{name} is {decision}, but {problem}")
    return RedirectResponse("/admin/users", status_code=303)
