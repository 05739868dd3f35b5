"""What can happen to an account, each step recorded with who, when and why.

Registration leaves a user ``pending``; an admin approves or denies (with a reason); an approved
user can be suspended and reinstated. Only approved users log in or use tokens, and a suspension
or a password change revokes every browser session at once. API tokens are random, shown once,
stored as SHA-256 digests, and checked on every request (a revoked token stops working at once);
they outlive a password change (as personal access tokens do elsewhere): ``Tokens.revoke_all``
ends them all.

``Accounts`` holds the parts, each a class of its own: ``users`` (lookups, registration, approval,
passwords, rights, the account's history of changes), ``tokens`` (API tokens),
``browser_sessions`` (logged-in browsers; a ``database.session()`` is a database transaction),
``secrets`` (the installation's keys) and ``searches`` (search history).

A login is looked up after Unicode NFKC and without the spaces around it (``normal_login``): an
e-mail address in any case, a name as it is written. A new name may not equal an existing one
after case-folding and NFKC ("ADMIN" beside "admin"); names are ASCII letters, digits, '.', '_'
and '-', so no other script's look-alike letters can be registered at all.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import re
import secrets
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass

from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from cowbird.core.errors import BadParameter, Conflict, NotAllowed, NotFound
from cowbird.frontend.accounts.database import Database
from cowbird.frontend.accounts.models import (
    ApiToken,
    AppSecret,
    Group,
    LineCategory,
    Role,
    SavedSearch,
    Search,
    State,
    StateChange,
    Subcorpus,
    User,
    WebSession,
    now,
)
from cowbird.frontend.accounts.passwords import WeakPassword, hash_password, needs_rehash, verify_password

MIN_ABSTRACT = 200
HISTORY_SIZE = 100
SAVED_SIZE = 500
"""Searches a user may keep by name."""
SUBCORPORA_SIZE = 200
"""Subcorpora a user may keep."""
CATEGORIES = 9
"""Categories a concordance line can be given (keys 1-9, as in CQPweb)."""
CATEGORISED_LINES = 100_000
"""Categorised lines a saved search keeps."""
TOKEN_PREFIX = "cb_"
MIN_IMPORTED_TOKEN = 20  # characters: a shorter token is too easy to guess
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{1,63}$")
_EMAIL = re.compile(r"^[^@\s]{1,64}@[^@\s]+\.[^@\s]+$")
_GROUP = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")

# The changes an admin may make, from each state.
TRANSITIONS = {
    State.APPROVED: {State.PENDING, State.DENIED, State.SUSPENDED},
    State.DENIED: {State.PENDING},
    State.SUSPENDED: {State.APPROVED},
}




def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def normal_login(text: str) -> str:
    """A name or e-mail address as typed, as it is looked up: Unicode NFKC (full-width letters and
    spaces become plain ones), without the spaces around it."""
    return unicodedata.normalize("NFKC", text).strip()


def login_key(text: str) -> str:
    """What a login is throttled under (beside the account it names, if any): ``normal_login``, case-folded."""
    return normal_login(text).casefold()


def email_key(email: str) -> str:
    """The unique key of an e-mail address: NFKC, case-folded, without the spaces around it."""
    return login_key(email)


def _old_email_key(email: str) -> str:
    """The key as stored before NFKC was part of it (an address with full-width letters)."""
    return email.strip().casefold()


def name_key(name: str) -> str:
    """Names that are one for people reading them: "ADMIN" and "admin" (names are ASCII)."""
    return login_key(name)


@dataclass(frozen=True)
class NewToken:
    """A token just made: ``secret`` is shown once and never stored."""

    name: str
    secret: str
    prefix: str


def record(session: Session, user: User, what: str, actor: str, reason: str) -> None:
    """One line of the account's history (``Users.changes``): what happened, who did it, why."""
    session.add(StateChange(user_id=user.id, what=what, actor=actor, reason=reason.strip()))


class BrowserSessions:
    """Logged-in browsers: a session per login, its id in a signed cookie (only its digest stored)."""

    def open(self, session: Session, user: User, days: float) -> tuple[str, WebSession]:
        """A new browser session: (the id for the cookie, the record). Only its digest is stored."""
        secret = secrets.token_urlsafe(32)
        web = WebSession(digest=digest(secret), user_id=user.id, csrf=secrets.token_urlsafe(32),
                         expires_at=now() + datetime.timedelta(days=days))
        session.add(web)
        session.flush()
        return secret, web

    def find(self, session: Session, secret: str) -> WebSession | None:
        """The live session of this id, its user approved; None if unknown, revoked or expired."""
        web = session.scalar(select(WebSession).where(WebSession.digest == digest(secret)))
        if web is None or web.revoked_at is not None or _aware(web.expires_at) <= now() or not web.user.active:
            return None
        if _aware(web.created_at) < _aware(web.user.password_changed_at):
            return None
        return web

    def close(self, session: Session, secret: str) -> None:
        web = session.scalar(select(WebSession).where(WebSession.digest == digest(secret)))
        if web is not None and web.revoked_at is None:
            web.revoked_at = now()

    def revoke_all(self, session: Session, user: User) -> int:
        """End every browser session of ``user``; how many were live."""
        live = session.scalars(select(WebSession).where(WebSession.user_id == user.id,
                                                        WebSession.revoked_at.is_(None)))
        count = 0
        for web in live:
            web.revoked_at = now()
            count += 1
        return count


class Users:
    """The accounts themselves: lookups, registration and approval, passwords, rights."""

    def __init__(self, browser_sessions: BrowserSessions) -> None:
        self.browser_sessions = browser_sessions

    def find(self, session: Session, name_or_email: str) -> User | None:
        """The user of this name (as written) or e-mail address (any case), after ``normal_login``."""
        text = normal_login(name_or_email)
        if "@" in text:
            keys = {email_key(text), _old_email_key(name_or_email)}
            return session.scalars(select(User).where(User.email_key.in_(keys)).order_by(User.id)).first()
        return session.scalar(select(User).where(User.name == text))

    def _taken(self, session: Session, name: str, email: str) -> None:
        """Refuse a name or e-mail address that exists, a name also when it equals an existing one
        after case-folding and NFKC; the message names the field (for the admin's command line:
        the registration form does not show it)."""
        alike = list(session.scalars(select(User.name).where(func.lower(User.name) == name_key(name))))
        if name in alike:
            raise Conflict(f"name: {name!r} exists")
        if alike:
            raise Conflict(f"name: {name!r} is too like the existing name {alike[0]!r}")
        if self.find(session, email) is not None:
            raise Conflict(f"email: {email.strip()!r} is already registered")

    def _insert(self, session: Session, user: User) -> None:
        """Add ``user``; another request that made the same name or e-mail just before is a Conflict."""
        try:
            with session.begin_nested():
                session.add(user)
                session.flush()
        except IntegrityError:
            raise Conflict("name or email: registered at the same moment by another request") from None

    def get(self, session: Session, name: str) -> User:
        user = self.find(session, name)
        if user is None:
            raise NotFound(f"no user {name!r}")
        return user

    def all(self, session: Session, state: State | None = None) -> list[User]:
        query = select(User).order_by(User.created_at, User.id)
        if state is not None:
            query = query.where(User.state == state.value)
        return list(session.scalars(query))

    def changes(self, session: Session, user: User) -> list[StateChange]:
        """What happened to the account, oldest first: states, rights, tokens, passwords."""
        query = select(StateChange).where(StateChange.user_id == user.id).order_by(StateChange.at, StateChange.id)
        return list(session.scalars(query))

    def register(
        self, session: Session, name: str, email: str, affiliation: str, abstract: str, password: str
    ) -> User:
        """A new pending account; every field checked, with a message naming it."""
        if not _NAME.match(name):
            raise BadParameter("name: 2-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
        if not _EMAIL.match(email.strip()):
            raise BadParameter("email: not an e-mail address")
        if len(abstract.strip()) < MIN_ABSTRACT:
            raise BadParameter(
                f"abstract: describe your research in at least {MIN_ABSTRACT} characters "
                f"({len(abstract.strip())} given)"
            )
        if not affiliation.strip():
            raise BadParameter("affiliation: name your institution")
        try:
            hashed = hash_password(password)
        except WeakPassword as exc:
            raise BadParameter(f"password: {exc}") from None
        self._taken(session, name, email)
        user = User(name=name, email=email.strip(), email_key=email_key(email), affiliation=affiliation.strip(),
                    abstract=abstract.strip(), password_hash=hashed, role=Role.USER.value, state=State.PENDING.value,
                    api_bulk=False)
        self._insert(session, user)
        record(session, user, "registered (pending)", name, "")
        return user

    def add(self, session: Session, name: str, email: str, actor: str, admin: bool = False) -> tuple[User, str]:
        """An approved account made by an admin, with a one-time password (returned, never stored)."""
        if not _NAME.match(name):
            raise BadParameter("name: 2-64 letters, digits, '.', '_' or '-', starting with a letter or digit")
        if not _EMAIL.match(email.strip()):
            raise BadParameter("email: not an e-mail address")
        self._taken(session, name, email)
        password = secrets.token_urlsafe(15)
        user = User(name=name, email=email.strip(), email_key=email_key(email), affiliation="", abstract="",
                    password_hash=hash_password(password), role=(Role.ADMIN if admin else Role.USER).value,
                    state=State.APPROVED.value, api_bulk=False)
        self._insert(session, user)
        record(session, user, f"added as {user.role} (approved)", actor, "")
        return user, password

    def decide(self, session: Session, user: User, state: State, actor: str, reason: str) -> None:
        """Move ``user`` to ``state`` (approve, deny, suspend, reinstate), with the reason recorded."""
        old = State(user.state)
        if state == old:
            raise NotAllowed(f"{user.name} is already {state.value}")
        if old not in TRANSITIONS.get(state, set()):
            raise NotAllowed(f"{user.name} is {old.value}: it cannot become {state.value}")
        if state in (State.DENIED, State.SUSPENDED) and not reason.strip():
            raise BadParameter(f"reason: say why {user.name} is {state.value}")
        user.state = state.value
        if state is not State.APPROVED:
            self.browser_sessions.revoke_all(session, user)
        record(session, user, f"state: {old.value} -> {state.value}", actor, reason)

    def set_password(self, session: Session, user: User, password: str, actor: str) -> None:
        """A new password; every browser session of the user ends, their API tokens keep working."""
        try:
            user.password_hash = hash_password(password)
        except WeakPassword as exc:
            raise BadParameter(f"password: {exc}") from None
        user.password_changed_at = now()
        self.browser_sessions.revoke_all(session, user)
        record(session, user, "password changed", actor, "")

    def grant(self, session: Session, user: User, right: str, actor: str, reason: str = "") -> None:
        """``api_bulk``, ``admin`` or ``group:NAME``."""
        self._change_right(session, user, right, True, actor, reason)

    def revoke(self, session: Session, user: User, right: str, actor: str, reason: str = "") -> None:
        self._change_right(session, user, right, False, actor, reason)

    def has_right(self, user: User, right: str) -> bool:
        """Whether ``user`` holds ``right`` (``api_bulk``, ``admin`` or ``group:NAME``, checked)."""
        _check_right(right)
        if right == "api_bulk":
            return user.api_bulk
        if right == "admin":
            return user.is_admin
        return right[6:] in user.group_names

    def _change_right(self, session: Session, user: User, right: str, on: bool, actor: str, reason: str) -> None:
        sign = "+" if on else "-"
        _check_right(right)
        if right == "api_bulk":
            user.api_bulk = on
        elif right == "admin":
            user.role = (Role.ADMIN if on else Role.USER).value
        else:
            name = right[6:]
            group = session.scalar(select(Group).where(Group.name == name))
            if group is None:
                group = Group(name=name)
                session.add(group)
                session.flush()
            if on and group not in user.groups:
                user.groups.append(group)
            elif not on and group in user.groups:
                user.groups.remove(group)
        record(session, user, f"{sign}{right}", actor, reason)

    def authenticate(self, session: Session, login: str, password: str) -> User | None:
        """The user whose name or e-mail and password these are (in any state), or None. The same
        work is done for an unknown login as for a known one."""
        return self.check_password(self.find(session, login) if normal_login(login) else None, password)

    def check_password(self, user: User | None, password: str) -> User | None:
        """``user`` if ``password`` is theirs, else None; as much work for no user as for one."""
        if not verify_password(user.password_hash if user else None, password) or user is None:
            return None
        if needs_rehash(user.password_hash):
            user.password_hash = hash_password(password)
        return user

    def last_decision(self, session: Session, user: User) -> StateChange | None:
        """The latest change of the user's state (shown to them when they log in)."""
        query = (select(StateChange).where(StateChange.user_id == user.id, StateChange.what.like("state:%"))
                 .order_by(StateChange.at.desc(), StateChange.id.desc()))
        return session.scalars(query).first()


class Tokens:
    """A user's API tokens: made (shown once), imported, listed, revoked, looked up by secret."""

    def create(self, session: Session, user: User, name: str) -> NewToken:
        name = name.strip()
        if not name or len(name) > 100:
            raise BadParameter("name: give the token a name of at most 100 characters")
        taken = session.scalar(select(ApiToken).where(ApiToken.user_id == user.id, ApiToken.name == name))
        if taken is not None:
            raise Conflict(f"a token named {name!r} exists; revoke it or choose another name")
        secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
        session.add(ApiToken(user_id=user.id, name=name, digest=digest(secret), prefix=secret[:10]))
        record(session, user, f"token +{name}", user.name, "")
        return NewToken(name, secret, secret[:10])

    def import_secret(self, session: Session, user: User, name: str, secret: str, actor: str = "cli") -> bool:
        """An existing token (from the old api_tokens_file) kept working for ``user``; False if known.
        A token shorter than ``MIN_IMPORTED_TOKEN`` characters is refused: it is too easy to guess."""
        if len(secret) < MIN_IMPORTED_TOKEN:
            raise BadParameter(f"token {name}: {len(secret)} characters; a token has at least {MIN_IMPORTED_TOKEN} "
                               "(a short one is easy to guess): make a new one on /account instead")
        if session.scalar(select(ApiToken).where(ApiToken.digest == digest(secret))) is not None:
            return False
        shown = secret[:min(10, len(secret) // 4)]  # a quarter at most: enough to tell tokens apart, not to guess one
        session.add(ApiToken(user_id=user.id, name=name, digest=digest(secret), prefix=shown))
        record(session, user, f"token +{name} (imported)", actor, "")
        return True

    def of(self, session: Session, user: User) -> list[ApiToken]:
        query = select(ApiToken).where(ApiToken.user_id == user.id).order_by(ApiToken.created_at, ApiToken.id)
        return list(session.scalars(query))

    def revoke(self, session: Session, user: User, name: str) -> None:
        token = session.scalar(select(ApiToken).where(ApiToken.user_id == user.id, ApiToken.name == name))
        if token is None or token.revoked_at is not None:
            raise NotFound(f"{user.name} has no active token named {name!r}")
        token.revoked_at = now()
        record(session, user, f"token -{name}", user.name, "")

    def revoke_all(self, session: Session, user: User, actor: str) -> int:
        """Revoke every active API token of ``user`` (all at once: a password that may have leaked,
        a lost laptop); how many were active."""
        live = [token for token in self.of(session, user) if token.revoked_at is None]
        for token in live:
            token.revoked_at = now()
        if live:
            record(session, user, f"every token revoked ({len(live)})", actor, "")
        return len(live)

    def user_for(self, session: Session, secret: str) -> User | None:
        """The approved user a token belongs to, or None (unknown, revoked, or the user not approved)."""
        token = session.scalar(select(ApiToken).where(ApiToken.digest == digest(secret)))
        if token is None or token.revoked_at is not None or not token.user.active:
            return None
        stamp = now()
        if token.last_used_at is None or _aware(token.last_used_at) < stamp - datetime.timedelta(minutes=1):
            token.last_used_at = stamp
        return token.user


class Secrets:
    """The installation's own secrets (the session cookies' signing key), kept in the database."""

    def get(self, session: Session, name: str) -> str:
        """An installation secret, made on first use (another process may make it at the same time)."""
        found = session.get(AppSecret, name)
        if found is not None:
            return found.value
        try:
            with session.begin_nested():
                session.add(AppSecret(name=name, value=secrets.token_urlsafe(48)))
        except IntegrityError:
            pass
        found = session.get(AppSecret, name)
        assert found is not None
        return found.value


class SearchHistory:
    """A user's recent browser searches (the newest ``HISTORY_SIZE``)."""

    def __init__(self, users: Users) -> None:
        self.users = users

    def remember(self, session: Session, name: str, corpus: str, q: str, syntax: str, ignore_case: bool,
                 filters: list[str], total: int) -> None:
        """Record a browser search; only the newest ``HISTORY_SIZE`` of a user are kept."""
        user = self.users.find(session, name)
        if user is None:
            return
        session.add(Search(user_id=user.id, corpus=corpus, q=q, syntax=syntax, ignore_case=ignore_case,
                           filters=json.dumps(filters, ensure_ascii=False), total=total))
        session.flush()
        old = select(Search.id).where(Search.user_id == user.id).order_by(Search.at.desc(), Search.id.desc())
        for stale in list(session.scalars(old.offset(HISTORY_SIZE))):
            session.delete(session.get(Search, stale))

    def of(self, session: Session, name: str) -> list[Search]:
        user = self.users.find(session, name)
        if user is None:
            return []
        query = select(Search).where(Search.user_id == user.id).order_by(Search.at.desc(), Search.id.desc())
        return list(session.scalars(query.limit(HISTORY_SIZE)))


class SavedSearches:
    """Searches users named and kept, each with a share link's slug."""

    def __init__(self, users: Users) -> None:
        self.users = users

    def save(self, session: Session, name: str, title: str, corpus: str, url: str) -> SavedSearch:
        """Keep a search under ``title`` (a search of the same title is replaced, its link kept)."""
        user = self.users.find(session, name)
        if user is None:
            raise NotFound(f"no user {name!r}")
        found = session.scalars(select(SavedSearch).where(SavedSearch.user_id == user.id,
                                                          SavedSearch.name == title)).first()
        if found is not None:
            found.corpus, found.url, found.at = corpus, url, now()
            session.flush()
            return found
        held = session.scalar(select(func.count()).select_from(SavedSearch).where(SavedSearch.user_id == user.id))
        if (held or 0) >= SAVED_SIZE:
            raise Conflict(f"you keep {SAVED_SIZE} saved searches already: delete some first")
        saved = SavedSearch(slug=secrets.token_urlsafe(9), user_id=user.id, name=title, corpus=corpus, url=url)
        session.add(saved)
        session.flush()
        return saved

    def of(self, session: Session, name: str) -> list[SavedSearch]:
        user = self.users.find(session, name)
        if user is None:
            return []
        query = select(SavedSearch).where(SavedSearch.user_id == user.id).order_by(SavedSearch.name)
        return list(session.scalars(query))

    def find(self, session: Session, slug: str) -> SavedSearch | None:
        """The saved search of a share link; None if there is none, or its owner is no longer approved
        (a suspended user's links stop working)."""
        found = session.scalars(select(SavedSearch).where(SavedSearch.slug == slug)).first()
        if found is None:
            return None
        owner = session.get(User, found.user_id)
        return found if owner is not None and owner.active else None

    def owned(self, session: Session, name: str, slug: str) -> SavedSearch:
        """One of the user's saved searches (another user's is not found)."""
        user = self.users.find(session, name)
        found = self.find(session, slug)
        if user is None or found is None or found.user_id != user.id:
            raise NotFound(f"you have no saved search {slug!r}")
        return found

    def delete(self, session: Session, name: str, slug: str) -> None:
        """Delete one of the user's saved searches, and its lines' categories."""
        found = self.owned(session, name, slug)
        session.execute(delete(LineCategory).where(LineCategory.saved_id == found.id))
        session.delete(found)

    def categories(self, session: Session, name: str, slug: str) -> tuple[SavedSearch, list[LineCategory]]:
        """A saved search of the user's and its categorised lines, in corpus order."""
        found = self.owned(session, name, slug)
        lines = select(LineCategory).where(LineCategory.saved_id == found.id).order_by(
            LineCategory.position, LineCategory.matchend)
        return found, list(session.scalars(lines))

    def categorise(self, session: Session, name: str, slug: str, position: int, matchend: int, category: int,
                   size_of: Callable[[str], int | None] | None = None) -> None:
        """Give a line (a hit's global positions) a category 1-9, or with 0 take its category away;
        ``size_of`` gives the tokens of the saved search's corpus (a line must lie inside it)."""
        if not 0 <= category <= CATEGORIES:
            raise BadParameter(f"category: {category}; give 1 to {CATEGORIES}, or 0 to take a line's category away")
        if not 0 <= position <= matchend:
            raise BadParameter(f"position {position}, matchend {matchend}: not a hit's positions")
        found = self.owned(session, name, slug)
        size = size_of(found.corpus) if size_of is not None else None
        if size is not None and matchend >= size:
            raise BadParameter(f"position {position}, matchend {matchend}: outside the corpus {found.corpus} "
                               f"({size:,} tokens)")
        line = session.scalars(select(LineCategory).where(
            LineCategory.saved_id == found.id, LineCategory.position == position,
            LineCategory.matchend == matchend)).first()
        if category == 0:
            if line is not None:
                session.delete(line)
            return
        if line is None:
            held = session.scalar(select(func.count()).select_from(LineCategory).where(
                LineCategory.saved_id == found.id)) or 0
            if held >= CATEGORISED_LINES:
                raise Conflict(f"a saved search keeps the categories of {CATEGORISED_LINES:,} lines at most")
            session.add(LineCategory(saved_id=found.id, position=position, matchend=matchend, category=category))
        else:
            line.category = category
        session.flush()

    def name_categories(self, session: Session, name: str, slug: str, labels: list[str]) -> list[str]:
        """Name the categories 1-9 of a saved search (missing names are empty)."""
        if len(labels) > CATEGORIES:
            raise BadParameter(f"labels: {len(labels)} names; there are {CATEGORIES} categories")
        cleaned = [" ".join(label.split())[:60] for label in labels]
        cleaned += [""] * (CATEGORIES - len(cleaned))
        found = self.owned(session, name, slug)
        found.labels = json.dumps(cleaned, ensure_ascii=False)
        session.flush()
        return cleaned


class Subcorpora:
    """Subcorpora users defined by metadata, each seen by its owner and, when shared, by the members of
    its group."""

    def __init__(self, users: Users) -> None:
        self.users = users

    def _user(self, session: Session, name: str) -> User:
        user = self.users.find(session, name)
        if user is None:
            raise NotFound(f"no user {name!r}")
        return user

    def save(self, session: Session, name: str, title: str, corpus: str, filters: list[str], tokens: int,
             texts: int | None, group: str | None) -> Subcorpus:
        """Keep a subcorpus under ``title`` (one of the same title is replaced, its ID kept), shared with
        ``group`` (one the user belongs to) or with nobody."""
        user = self._user(session, name)
        shared: Group | None = None
        if group:
            shared = next((g for g in user.groups if g.name == group), None)
            if shared is None:
                held = ", ".join(user.group_names) or "none"
                raise BadParameter(f"group: you are not in group {group!r}, so cannot share with it (yours: {held})")
        found = session.scalars(select(Subcorpus).where(Subcorpus.user_id == user.id, Subcorpus.name == title)).first()
        if found is None:
            held_count = session.scalar(select(func.count()).select_from(Subcorpus).where(Subcorpus.user_id == user.id))
            if (held_count or 0) >= SUBCORPORA_SIZE:
                raise Conflict(f"you keep {SUBCORPORA_SIZE} subcorpora already: delete some first")
            found = Subcorpus(slug=secrets.token_urlsafe(9), user_id=user.id, name=title)
            session.add(found)
        found.corpus, found.filters, found.tokens, found.texts = corpus, json.dumps(filters, ensure_ascii=False), \
            tokens, texts
        found.group_id, found.at = shared.id if shared is not None else None, now()
        session.flush()
        session.refresh(found)
        return found

    @staticmethod
    def _usable(found: Subcorpus, name: str, groups: frozenset[str], readable: Callable[[str], bool]) -> bool:
        """Whether the user may use a subcorpus: theirs; or shared with a group of theirs by an owner who
        is still an approved member of it, over a corpus the user may read (else its name, filters and
        size would tell of a corpus kept from them)."""
        if found.owner.name == name:
            return True
        group = found.group
        return (group is not None and group.name in groups and found.owner.active
                and group.name in found.owner.group_names and readable(found.corpus))

    def visible(self, session: Session, name: str, groups: frozenset[str],
                readable: Callable[[str], bool] = lambda corpus: True) -> list[Subcorpus]:
        """The user's subcorpora and those shared with a group of theirs (``_usable``), by name."""
        user = self.users.find(session, name)
        if user is None:
            return []
        shared = select(Group.id).where(Group.name.in_(sorted(groups)))
        query = select(Subcorpus).where((Subcorpus.user_id == user.id) | Subcorpus.group_id.in_(shared)).order_by(
            Subcorpus.name, Subcorpus.id)
        return [s for s in session.scalars(query).unique() if self._usable(s, name, groups, readable)]

    def find(self, session: Session, slug: str, name: str | None, groups: frozenset[str],
             readable: Callable[[str], bool] = lambda corpus: True) -> Subcorpus:
        """One subcorpus the user may use (``_usable``)."""
        found = session.scalars(select(Subcorpus).where(Subcorpus.slug == slug)).first()
        if found is not None and name is not None and self._usable(found, name, groups, readable):
            return found
        whose = "yours or shared with a group of yours" if name is not None else "log in to use saved subcorpora"
        raise NotFound(f"no subcorpus {slug!r} ({whose}): it was deleted, is not shared with you, or is mistyped")

    def delete(self, session: Session, name: str, slug: str) -> None:
        """Delete one of the user's subcorpora (one shared with them is not theirs to delete)."""
        user = self._user(session, name)
        found = session.scalars(select(Subcorpus).where(Subcorpus.slug == slug)).first()
        if found is None or found.user_id != user.id:
            raise NotFound(f"you have no subcorpus {slug!r} (only its owner deletes a shared one)")
        session.delete(found)


class Accounts:
    """The account database and its parts: ``users``, ``tokens``, ``browser_sessions``, ``secrets``
    ``searches`` (search history), ``saved`` (searches kept by name) and ``subcorpora``."""

    def __init__(self, database: Database) -> None:
        self.database = database
        self.browser_sessions = BrowserSessions()
        self.users = Users(self.browser_sessions)
        self.tokens = Tokens()
        self.secrets = Secrets()
        self.searches = SearchHistory(self.users)
        self.saved = SavedSearches(self.users)
        self.subcorpora = Subcorpora(self.users)


def rights(user: User) -> list[str]:
    """The rights ``user`` holds, as ``grant`` and ``revoke`` name them."""
    held = [right for right, on in (("admin", user.is_admin), ("api_bulk", user.api_bulk)) if on]
    return held + [f"group:{name}" for name in user.group_names]


def _check_right(right: str) -> None:
    if right in ("api_bulk", "admin"):
        return
    if not right.startswith("group:"):
        raise BadParameter(f"{right!r} is not a right: use api_bulk, admin or group:NAME")
    if not _GROUP.match(right[6:]):
        raise BadParameter(f"group name {right[6:]!r}: 1-64 letters, digits, '.', '_' or '-'")


def _aware(stamp: datetime.datetime) -> datetime.datetime:
    """SQLite returns naive datetimes for timezone-aware columns: they are UTC."""
    return stamp if stamp.tzinfo is not None else stamp.replace(tzinfo=datetime.UTC)
