"""Registration, login, the account page (API tokens, password) and the admin review, as
server-rendered forms that work without JavaScript.

Browser sessions are server-side records; the cookie (``cowbird_session``: HttpOnly,
SameSite=Lax, Secure behind TLS) carries the session id signed with the installation's key.
Every form post carries a CSRF token: the session's own once logged in, before that a signed
double-submit cookie (``cowbird_csrf``) that the form repeats.

Failed logins are throttled on the account the login resolves to, however it is spelt, and on
the client's address (``throttle``); registrations per address. A registration whose name or
e-mail address is taken is answered exactly as one that was made (nothing is made, nobody is
told), so that the form does not tell which names and addresses exist.

Every page's header shows who is logged in (``page_context``, the templates' context processor):
the session looked up for the request is remembered on it, so a page costs one lookup at most.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, Any
from urllib.parse import quote, unquote

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from itsdangerous import BadSignature, Signer
from pydantic import Field
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from cowbird.core.errors import BadParameter, Conflict, CowbirdError, ErrorCode, Forbidden, NotAllowed, TooManyRequests
from cowbird.frontend.accounts.mail import Mailer
from cowbird.frontend.accounts.models import State, User, WebSession
from cowbird.frontend.accounts.service import MIN_ABSTRACT, Accounts, login_key, rights
from cowbird.frontend.accounts.throttle import Throttle, Window
from cowbird.frontend.fair_use import FairUse
from cowbird.frontend.params import Parameters
from cowbird.frontend.state import frontend_state
from cowbird.frontend.viewer import Viewer

router = APIRouter(include_in_schema=False)
login_router = APIRouter(include_in_schema=False)  # the login form, which takes ``next`` (``router`` takes nothing)
log = logging.getLogger("cowbird.accounts")

SESSION_COOKIE = "cowbird_session"
CSRF_COOKIE = "cowbird_csrf"
SESSION_DAYS = 14.0
MAX_NEXT = 2000
"""Characters of a login's ``next`` (the page to go back to): a longer one is not a page of this site's."""

# the form fields several forms post
Csrf = Annotated[str, Form(max_length=200)]
Password = Annotated[str, Form(max_length=4096)]
UserName = Annotated[str, Form(max_length=64)]
Reason = Annotated[str, Form(max_length=2000)]
Confirm = Annotated[str, Form(max_length=1)]  # "1" once the user confirmed a warning


class CsrfFailed(Forbidden):
    code, title = ErrorCode.CSRF_FAILED, "The form is stale or was not sent by this site"


def _accounts(request: Request) -> Accounts:
    accounts: Accounts = frontend_state(request).accounts
    return accounts


def _signer(request: Request) -> Signer:
    state = frontend_state(request)
    if state.session_signer is None:
        with state.accounts.database.session() as session:
            key = state.accounts.secrets.get(session, "session-key")
        state.session_signer = Signer(key, salt="cowbird-session")
    return state.session_signer


def _secure(request: Request) -> bool:
    settings = frontend_state(request).settings
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
    """The live browser session of the request's cookie, or None; remembered for the page header."""
    secret = session_id(request)
    web = None if secret is None else _accounts(request).browser_sessions.find(database_session, secret)
    _remember(request, web)
    return web


@dataclass(frozen=True)
class SignedIn:
    """Who is logged in, as the header of every page shows them."""

    name: str
    is_admin: bool
    csrf: str  # the session's: the header's Log out form sends it


def _remember(request: Request, web: WebSession | None) -> None:
    request.state.signed_in = None if web is None else SignedIn(web.user.name, web.user.is_admin, web.csrf)


def signed_in(request: Request) -> SignedIn | None:
    """The logged-in browser user of the request, or None: what ``current_session`` found for it,
    else one lookup now. The header must not break a page (an error page among them): an account
    database that cannot be read shows the anonymous header."""
    if not hasattr(request.state, "signed_in"):
        request.state.signed_in = None
        if request.cookies.get(SESSION_COOKIE):
            try:
                with _accounts(request).database.session() as session:
                    current_session(request, session)
            except SQLAlchemyError:
                request.state.signed_in = None
    found: SignedIn | None = request.state.signed_in
    return found


def page_context(request: Request) -> dict[str, Any]:
    """The templates' context processor: ``signed_in`` for the header of every page."""
    return {"signed_in": signed_in(request)}


def _page(request: Request, template: str, status: int = 200, **context: Any) -> HTMLResponse:
    token = request.cookies.get(CSRF_COOKIE)
    fresh = None
    if not token or not _valid_csrf_cookie(request, token):
        fresh = _signer(request).sign(secrets.token_urlsafe(24)).decode("ascii")
        token = fresh
    context.setdefault("csrf", token)
    response: HTMLResponse = frontend_state(request).templates.TemplateResponse(
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
    return frontend_state(request).login_throttle


def _registrations(request: Request) -> Window:
    return frontend_state(request).registration_throttle


def _login_keys(login: str, user: User | None) -> list[str]:
    """What a failed login counts against: its normalised text always (known or not, so that an
    unknown name is throttled like a known one), and the account it resolves to."""
    return [f"login:{login_key(login)}"] + ([] if user is None else [f"user:{user.id}"])


# ------------------------------------------------------------------ login and logout


def same_site_path(target: str) -> str:
    """``target`` when it is a path on this site (``/ref/web/2?x=1``), else the search page ``/``: a
    login's ``next`` must not lead off the site (``//evil.example``, ``/\\evil.example``,
    ``https://…``, ``javascript:…``), nor back to the login form."""
    if (not target.startswith("/") or target.startswith(("//", "/\\")) or "\\" in target
            or any(ord(c) < 32 or ord(c) == 127 for c in target) or len(target) > MAX_NEXT
            or target.split("?", 1)[0] in ("/login", "/logout")):
        return "/"
    return target


class LoginParameters(Parameters):
    """The login form's parameters: where to go once logged in."""

    next: str = Field("/", max_length=MAX_NEXT, description="The page to go to once logged in (a path on this site).")


@login_router.get("/login", response_class=HTMLResponse)
def login_form(request: Request, asked: Annotated[LoginParameters, Query()]) -> HTMLResponse:
    return _page(request, "login.html", next=same_site_path(asked.next))


@router.post("/login", response_class=HTMLResponse)
def login(request: Request, login: Annotated[str, Form(max_length=300)], password: Password, csrf: Csrf,
          next: Annotated[str, Form(max_length=MAX_NEXT)] = "/") -> Response:
    _check_anonymous_csrf(request, csrf)
    throttle, address = _throttle(request), _address(request)
    accounts = _accounts(request)
    with accounts.database.session() as session:
        named = accounts.users.find(session, login) if login_key(login) else None
        keys = _login_keys(login, named)
        attempt = throttle.attempt(keys, address)  # counted as a failure from here (atomic across processes)
        if attempt.wait:
            raise TooManyRequests(f"too many failed logins: try again in {attempt.wait} s",
                                  headers={"Retry-After": str(attempt.wait)})
        try:
            user = accounts.users.check_password(named, password)
        except BaseException:
            throttle.give_back(attempt)
            raise
        if user is None:
            return _page(request, "login.html", 400, error="the name or e-mail address or the password is wrong",
                         login=login, next=same_site_path(next))
        throttle.succeeded(attempt, keys, address)
        if not user.active:  # the password was right: the user may learn where their account stands
            decision = accounts.users.last_decision(session, user)
            return _page(request, "message.html", 403, title="Not approved",
                         message=_state_message(user, decision.reason if decision else ""))
        secret, _ = accounts.browser_sessions.open(session, user, SESSION_DAYS)
    response = RedirectResponse(same_site_path(next), status_code=303)  # the search, or the page the user came from
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
def logout(request: Request, csrf: Csrf) -> Response:
    accounts = _accounts(request)
    secret = session_id(request)
    with accounts.database.session() as session:
        web = None if secret is None else accounts.browser_sessions.find(session, secret)
        if web is not None:
            _check_session_csrf(web, csrf)
            accounts.browser_sessions.close(session, secret or "")
    response = RedirectResponse("/", status_code=303)
    response.delete_cookie(SESSION_COOKIE)
    return response


# ------------------------------------------------------------------ registration


@router.get("/register", response_class=HTMLResponse)
def register_form(request: Request) -> HTMLResponse:
    return _page(request, "register.html", form={})


@router.post("/register", response_class=HTMLResponse)
def register(
    request: Request,
    name: UserName,
    email: Annotated[str, Form(max_length=254)],
    affiliation: Annotated[str, Form(max_length=300)],
    abstract: Annotated[str, Form(max_length=20_000)],
    password: Password,
    csrf: Csrf,
) -> HTMLResponse:
    """A new pending account. A name or e-mail address that is taken (or a name too like a taken
    one) is answered exactly as a registration that was made: nothing is made and nobody is told,
    so the form cannot be used to find out which names and addresses exist (the log says it, for
    the admins). Every complete form counts against the address's registrations per hour."""
    _check_anonymous_csrf(request, csrf)
    limit, address = _registrations(request), _address(request)
    attempt = limit.take(address)  # counted from here (atomic across processes); given back if the form is wrong
    if attempt.wait:
        raise TooManyRequests(f"too many registrations from your address: try again in {attempt.wait} s",
                              headers={"Retry-After": str(attempt.wait)})
    accounts = _accounts(request)
    form = {"name": name, "email": email, "affiliation": affiliation, "abstract": abstract}
    try:
        with accounts.database.session() as session:
            accounts.users.register(session, name, email, affiliation, abstract, password)
    except Conflict as taken:
        log.info("registration from %s not made: %s", address, taken)
    except CowbirdError as error:
        limit.give_back(attempt)
        return _page(request, "register.html", error.status, error=str(error), form=form)
    except BaseException:
        limit.give_back(attempt)
        raise
    return _page(request, "message.html", title="Thank you",
                 message="Your registration is waiting for review. You can log in once it is approved.",
                 note="For privacy this page is the same when the name or e-mail address is already taken: "
                      "then nothing was registered. If you have an account already, log in with it.")


# ------------------------------------------------------------------ the account page


class LoginRequired(Exception):
    """No valid session: the app answers with a redirect to the login form (``redirect_to_login``)."""


def redirect_to_login(request: Request, error: Exception) -> Response:
    """The login form, which leads back to the page asked for (a page, not a form's post)."""
    wanted = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    if request.method != "GET" or same_site_path(wanted) == "/":
        return RedirectResponse("/login", status_code=303)
    return RedirectResponse(f"/login?next={quote(wanted, safe='/')}", status_code=303)


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
    fair_use: FairUse = frontend_state(request).fair_use
    key = f"user:{web.user.name}"
    limits_of = frontend_state(request).settings.limits
    quota = []
    for label, viewer in (("in the browser", Viewer(web.user.name)), ("by API token", Viewer(web.user.name,
                          api_bulk=web.user.api_bulk))):
        limits = fair_use.limits(viewer)
        per_download = limits_of.api_export_limit if viewer.api else limits_of.browser_export_limit  # as export does
        quota.append((label, limits.running, fair_use.rows_left(viewer, key), limits.rows_per_day,
                      fair_use.node_seconds_left(viewer, key), limits.node_seconds_per_day, per_download))
    return _page(request, "account.html", status, user=web.user, csrf=web.csrf,
                 tokens=_accounts(request).tokens.of(session, web.user), quota=quota,
                 browser_limit=limits_of.browser_export_limit, **extra)


@router.get("/account", response_class=HTMLResponse)
def account(request: Request) -> Response:
    with _signed_in(request) as (_, session, web):
        return _account_page(request, web, session)


@router.post("/account/tokens", response_class=HTMLResponse)
def create_token(request: Request, name: Annotated[str, Form(max_length=100)], csrf: Csrf) -> Response:
    with _signed_in(request, csrf) as (accounts, session, web):
        try:
            with session.begin_nested():
                token = accounts.tokens.create(session, web.user, name)
        except CowbirdError as error:
            return _account_page(request, web, session, error.status, error=str(error))
        return _account_page(request, web, session, new_token=token)


@router.post("/account/tokens/revoke", response_class=HTMLResponse)
def revoke_token(
    request: Request, name: Annotated[str, Form(max_length=100)], csrf: Csrf,
    confirm: Confirm = "",
) -> Response:
    """Revoke one API token, after a page that asks."""
    with _signed_in(request, csrf) as (accounts, session, web):
        if confirm != "1":
            return _account_page(request, web, session, confirm={
                "action": "/account/tokens/revoke", "fields": {"name": name}, "button": f"Revoke token {name}",
                "what": f"The token {name} stops working at once: scripts that send it get 401 until they have a "
                        "new one."})
        try:
            accounts.tokens.revoke(session, web.user, name)
        except CowbirdError as error:
            return _account_page(request, web, session, error.status, error=str(error))
        return _account_page(request, web, session, notice=f"token {name} revoked")


@router.post("/account/tokens/revoke-all", response_class=HTMLResponse)
def revoke_all_tokens(request: Request, csrf: Csrf, confirm: Confirm = "") -> Response:
    """Revoke every API token of the user at once (a password change leaves them working), after a
    page that asks."""
    with _signed_in(request, csrf) as (accounts, session, web):
        if confirm != "1":
            return _account_page(request, web, session, confirm={
                "action": "/account/tokens/revoke-all", "fields": {}, "button": "Revoke every token",
                "what": "Every API token of yours stops working at once: scripts that send one get 401 until "
                        "they have a new one."})
        count = accounts.tokens.revoke_all(session, web.user, web.user.name)
        return _account_page(request, web, session, notice=f"{count} API token{'' if count == 1 else 's'} revoked")


@router.post("/account/password", response_class=HTMLResponse)
def change_password(request: Request, current: Password, new: Password, csrf: Csrf) -> Response:
    with _signed_in(request, csrf) as (accounts, session, web):
        if accounts.users.authenticate(session, web.user.name, current) is None:
            return _account_page(request, web, session, 400, error="the current password is wrong")
        try:
            accounts.users.set_password(session, web.user, new, web.user.name)
        except BadParameter as error:
            return _account_page(request, web, session, 400, error=str(error))
        live = sum(token.revoked_at is None for token in accounts.tokens.of(session, web.user))
    _remember(request, None)  # every session ends with a new password, this one too
    tokens = ("Your API tokens were not revoked: they keep working. If one may be known to someone else, "
              "log in and revoke it on your account page.") if live else ""
    response = _page(request, "message.html", title="Password changed",
                     message=f"Your password is changed and every browser session has ended: log in again with "
                             f"the new one. {tokens}".strip(), link=("/login", "Log in"))
    response.delete_cookie(SESSION_COOKIE)
    return response


# ------------------------------------------------------------------ the admin review


def _admin_page(request: Request, accounts: Accounts, session: Session, web: WebSession, status: int = 200,
                **extra: Any) -> HTMLResponse:
    _remember(request, web)
    return _page(request, "admin.html", status, csrf=web.csrf, pending=accounts.users.all(session, State.PENDING),
                 users=accounts.users.all(session), rights_of=rights, **extra)


def _other_admins(accounts: Accounts, session: Session, user: User) -> bool:
    return any(other.is_admin and other.id != user.id for other in accounts.users.all(session, State.APPROVED))


def _warning(request: Request, accounts: Accounts, session: Session, web: WebSession, action: str,
             fields: dict[str, str], reason: str, what: str, button: str, yourself: bool = True) -> HTMLResponse:
    """The step before a change that takes something away (an admin's to their own account, a
    denial, a suspension, a right revoked): the page says what it does and repeats the form with
    ``confirm=1``; only that request makes the change."""
    alone = "" if not yourself or _other_admins(accounts, session, web.user) else (
        " No other approved administrator is left: only the command line (cowbird users) can undo it.")
    return _admin_page(request, accounts, session, web, confirm={
        "action": action, "fields": fields, "reason": reason, "what": what + alone, "button": button,
        "reason_required": fields.get("decision") in (State.SUSPENDED.value, State.DENIED.value), "danger": True})


NOTICE_COOKIE = "cowbird_notice"
"""What an admin's last change did, shown once by the page it redirects to (the page's URL stays
clean, and reloading it repeats nothing)."""


def _done(text: str) -> RedirectResponse:
    """Back to the admin page, which says ``text`` once."""
    response = RedirectResponse("/admin/users", status_code=303)
    response.set_cookie(NOTICE_COOKIE, quote(text[:300]), max_age=60, path="/admin", httponly=True, samesite="lax")
    return response


@router.get("/admin", response_class=HTMLResponse)
def admin_home(request: Request) -> Response:
    """``/admin`` is the review of accounts, for administrators (others: the login form, or 403)."""
    with _signed_in(request, admin=True):
        return RedirectResponse("/admin/users", status_code=303)


@router.get("/admin/users", response_class=HTMLResponse)
def admin_users(request: Request) -> Response:
    with _signed_in(request, admin=True) as (accounts, session, web):
        notice = request.cookies.get(NOTICE_COOKIE)
        page = _admin_page(request, accounts, session, web, notice=unquote(notice)[:300] if notice else None)
        if notice is not None:
            page.delete_cookie(NOTICE_COOKIE, path="/admin")
        return page


@router.post("/admin/users/decide", response_class=HTMLResponse)
def admin_decide(
    request: Request,
    name: UserName,
    decision: Annotated[str, Form(pattern="^(approved|denied|suspended)$")],
    csrf: Csrf,
    reason: Reason = "",
    confirm: Confirm = "",
) -> Response:
    """Approve, deny, suspend or reinstate; an admin suspending themselves is warned first."""
    with _signed_in(request, csrf, admin=True) as (accounts, session, web):
        try:
            with session.begin_nested():
                user = accounts.users.get(session, name)
                yourself = user.id == web.user.id
                if yourself and decision == State.SUSPENDED.value and confirm != "1":
                    return _warning(
                        request, accounts, session, web, "/admin/users/decide",
                        {"name": user.name, "decision": decision}, reason,
                        "You are about to suspend your own account. This ends all your sessions at once (you "
                        "are logged out here and everywhere) and you lose access to the site, this page "
                        "included, until another administrator reinstates you.",
                        "Suspend my own account",
                    )
                if decision != State.APPROVED.value and confirm != "1":  # deny, suspend: asked first
                    what = (f"You are about to deny the registration of {user.name}: they cannot log in, and are "
                            "told by e-mail with your reason." if decision == State.DENIED.value else
                            f"You are about to suspend {user.name}: every session of theirs ends and their API "
                            "tokens stop working until an administrator reinstates them.")
                    return _warning(request, accounts, session, web, "/admin/users/decide",
                                    {"name": user.name, "decision": decision}, reason, what,
                                    f"{'Deny' if decision == State.DENIED.value else 'Suspend'} {user.name}",
                                    yourself=False)
                was = user.state
                accounts.users.decide(session, user, State(decision), web.user.name, reason)
        except CowbirdError as error:
            return _admin_page(request, accounts, session, web, error.status, error=str(error))
        mailer: Mailer | None = frontend_state(request).mailer
        problem = None if mailer is None else mailer.send(user, State(decision), reason)
        if yourself:  # suspended: every session of theirs, this one too, has just ended
            _remember(request, None)
            told = f" Note: {problem}." if problem else ""
            response = _page(request, "message.html", title="Your account is suspended",
                             message=f"You suspended your own account; your sessions have ended.{told}")
            response.delete_cookie(SESSION_COOKIE)
            return response
        if problem is not None:  # the decision stands; the admin learns that the e-mail did not go out
            return _admin_page(request, accounts, session, web, error=f"{name} is {decision}, but {problem}")
        back = was == State.SUSPENDED.value
        done = {State.APPROVED.value: (f"{user.name} is reinstated and may log in again." if back
                                       else f"{user.name} is approved and may log in now."),
                State.DENIED.value: f"The registration of {user.name} is denied.",
                State.SUSPENDED.value: f"{user.name} is suspended."}[decision]
        told = " An e-mail told them." if mailer is not None else ""
        return _done(done + told)


@router.post("/admin/users/rights", response_class=HTMLResponse)
def admin_rights(
    request: Request,
    name: UserName,
    change: Annotated[str, Form(pattern="^(grant|revoke)$")],
    right: Annotated[str, Form(max_length=80)],
    csrf: Csrf,
    group: Annotated[str, Form(max_length=80)] = "",
    reason: Reason = "",
    confirm: Confirm = "",
) -> Response:
    """Grant or revoke ``api_bulk``, ``admin`` or ``group:NAME`` (``right=group`` takes the name from
    ``group``), recorded with the admin and the reason as the command line records its changes; an
    admin taking their own admin right is warned first."""
    on, yourself = change == "grant", False
    with _signed_in(request, csrf, admin=True) as (accounts, session, web):
        try:
            if right == "group":
                right = f"group:{group.strip()}"
            elif group.strip():
                raise BadParameter(f"group: choose the right 'group' to add {name} to group {group.strip()!r}")
            with session.begin_nested():
                user = accounts.users.get(session, name)
                if accounts.users.has_right(user, right) == on:
                    raise NotAllowed(f"{user.name} {'already has' if on else 'does not have'} {right}")
                yourself = user.id == web.user.id and right == "admin" and not on
                if yourself and confirm != "1":
                    return _warning(
                        request, accounts, session, web, "/admin/users/rights",
                        {"name": user.name, "change": change, "right": right}, reason,
                        "You are about to take away your own admin right. You will no longer be able to "
                        "review registrations or change accounts and rights, this page included.",
                        "Revoke my own admin right",
                    )
                if not on and confirm != "1":  # a right taken away: asked first
                    return _warning(
                        request, accounts, session, web, "/admin/users/rights",
                        {"name": user.name, "change": change, "right": right}, reason,
                        f"You are about to take {right} from {user.name}: what it opens is closed to them at "
                        "once.", f"Revoke {right} from {user.name}", yourself=False,
                    )
                (accounts.users.grant if on else accounts.users.revoke)(session, user, right, web.user.name, reason)
        except CowbirdError as error:
            return _admin_page(request, accounts, session, web, error.status, error=str(error))
        if yourself:
            return RedirectResponse("/account", status_code=303)
        return _done(f"{user.name} {'has' if on else 'no longer has'} {right}.")
