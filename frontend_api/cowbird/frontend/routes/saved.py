"""Saved and shared searches: ``GET/POST /api/v1/saved``, ``DELETE /api/v1/saved/{id}``, the share
link ``/s/{id}``, and the categories of a saved search's concordance lines
(``GET/POST /api/v1/saved/{id}/categories``, ``POST /api/v1/saved/{id}/labels``). A saved search is
the search page's URL (query, corpus, filters, view, sort, tab) under a name; its share link answers
with that page, which runs it for whoever may read the corpus (and says so to whoever may not)."""

from __future__ import annotations

import datetime
import json
from collections.abc import Callable
from urllib.parse import parse_qs, urlencode, urlsplit

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import RedirectResponse
from sqlalchemy.orm import Session

from cowbird.core.errors import BadParameter, NotFound, Unauthorized
from cowbird.frontend.accounts import Accounts
from cowbird.frontend.accounts.models import LineCategory, SavedSearch
from cowbird.frontend.accounts.service import CATEGORIES
from cowbird.frontend.accounts.web import CsrfFailed
from cowbird.frontend.routes.deps import Corpora, CurrentUser
from cowbird.frontend.schemas import (
    CategoryLine,
    CategoryNames,
    LineCategories,
    SavedSearches,
    SavedSearchOut,
    SaveSearch,
)
from cowbird.frontend.state import frontend_state
from cowbird.frontend.viewer import Viewer

router = APIRouter(tags=["saved searches"])

CSRF_HEADER = "x-csrf-token"
"""A browser session's changes carry its CSRF token in this header (the page has it)."""


def account_owner(request: Request, user: Viewer, changes: bool = False) -> str:
    """The logged-in user; a change asked by a browser session must carry the session's CSRF token (an
    API token needs none: no other site can send it)."""
    if user.name is None:
        raise Unauthorized("saved searches belong to a logged-in user: log in first (or send your API token)")
    if changes and user.browser:
        signed = getattr(request.state, "signed_in", None)
        if signed is None or request.headers.get(CSRF_HEADER) != signed.csrf:
            raise CsrfFailed(f"this change needs the page's {CSRF_HEADER} header: reload the page and try again")
    return user.name


def _out(saved: SavedSearch) -> SavedSearchOut:
    at = saved.at if saved.at.tzinfo else saved.at.replace(tzinfo=datetime.UTC)  # SQLite: UTC
    return SavedSearchOut(id=saved.slug, name=saved.name, corpus=saved.corpus, url=saved.url, link=f"/s/{saved.slug}",
                          at=at.isoformat(timespec="seconds"))


@router.get("/api/v1/saved", response_model=SavedSearches)
async def saved_searches(request: Request, user: CurrentUser) -> SavedSearches:
    """Your saved searches, by name, each with the URL that runs it and its share link."""
    name = account_owner(request, user)
    accounts: Accounts = frontend_state(request).accounts

    def read() -> list[SavedSearchOut]:
        with accounts.database.session() as session:
            return [_out(s) for s in accounts.saved.of(session, name)]

    return SavedSearches(data=await run_in_threadpool(read))


@router.post("/api/v1/saved", response_model=SavedSearchOut)
async def save_search(request: Request, user: CurrentUser, catalogue: Corpora, asked: SaveSearch) -> SavedSearchOut:
    """Keep a search (the search page's URL) under a name; a search of the same name is replaced."""
    name = account_owner(request, user, changes=True)
    parts = urlsplit(asked.url)
    if parts.scheme or parts.netloc or parts.path not in ("", "/"):
        raise BadParameter(f"url: {asked.url[:80]!r} is not a search page of this site: give its /?corpus=…&q=… part")
    query = parse_qs(parts.query, keep_blank_values=True)
    corpus, q = query.get("corpus", [""])[0], query.get("q", [""])[0]
    if not corpus or not q.strip():
        raise BadParameter("url: a saved search names its corpus and its query (corpus= and q=)")
    target = catalogue.get(corpus, user)  # one the user may read (else 404 or 401, as a search would say)
    # an API token never goes into a saved URL (its share link would hand it to anyone)
    url = "/?" + urlencode([(k, v) for k, values in query.items() if k != "token" for v in values])
    accounts: Accounts = frontend_state(request).accounts
    title = " ".join(asked.name.split())
    if not title:
        raise BadParameter("name: give the search a name")

    def write() -> SavedSearchOut:
        with accounts.database.session() as session:
            return _out(accounts.saved.save(session, name, title, target.name, url))

    return await run_in_threadpool(write)


@router.delete("/api/v1/saved/{slug}", response_model=SavedSearches)
async def delete_saved(request: Request, user: CurrentUser, slug: str) -> SavedSearches:
    """Delete one of your saved searches (its share link stops working, its lines' categories go);
    answers with the saved searches you keep."""
    name = account_owner(request, user, changes=True)
    accounts: Accounts = frontend_state(request).accounts

    def delete() -> SavedSearches:
        with accounts.database.session() as session:
            accounts.saved.delete(session, name, slug)
        with accounts.database.session() as session:
            return SavedSearches(data=[_out(s) for s in accounts.saved.of(session, name)])

    return await run_in_threadpool(delete)


@router.get("/s/{slug}", include_in_schema=False)
async def shared(request: Request, slug: str) -> RedirectResponse:
    """A share link: the search page with the saved search (the page runs it, or says why it cannot)."""
    accounts: Accounts = frontend_state(request).accounts

    def find() -> str | None:
        with accounts.database.session() as session:
            found = accounts.saved.find(session, slug)
            return None if found is None else found.url

    url = await run_in_threadpool(find)
    if url is None:
        raise NotFound(f"no saved search {slug!r}: it was deleted, or the link is mistyped")
    return RedirectResponse(url, status_code=303)


def _categories(saved: SavedSearch, lines: list[LineCategory]) -> LineCategories:
    counts = [0] * CATEGORIES
    for line in lines:
        counts[line.category - 1] += 1
    return LineCategories(name=saved.name, corpus=saved.corpus, url=saved.url, labels=json.loads(saved.labels),
                          counts=counts, lines=[CategoryLine(position=x.position, matchend=x.matchend,
                                                             category=x.category) for x in lines])


async def _categories_after(request: Request, user: Viewer, slug: str,
                           change: Callable[[Session, str], object] | None = None) -> LineCategories:
    """A saved search's categories, after ``change`` (made by its owner, with the session's CSRF token)."""
    name = account_owner(request, user, changes=change is not None)
    accounts: Accounts = frontend_state(request).accounts

    def work() -> LineCategories:
        if change is not None:
            with accounts.database.session() as session:
                change(session, name)
        with accounts.database.session() as session:
            return _categories(*accounts.saved.categories(session, name, slug))

    return await run_in_threadpool(work)


@router.get("/api/v1/saved/{slug}/categories", response_model=LineCategories)
async def line_categories(request: Request, user: CurrentUser, slug: str) -> LineCategories:
    """The categories you gave lines of a saved search (each line named by its hit's global positions),
    with their names and counts; the concordance export adds them as a column (``categories=ID``)."""
    return await _categories_after(request, user, slug)


@router.post("/api/v1/saved/{slug}/categories", response_model=LineCategories)
async def categorise_line(request: Request, user: CurrentUser, slug: str, line: CategoryLine) -> LineCategories:
    """Give one line of a saved search a category 1-9 (0 takes it away); answers with all its categories."""
    accounts: Accounts = frontend_state(request).accounts
    corpora = frontend_state(request).corpora

    def size_of(corpus: str) -> int | None:
        entry = corpora.corpora.get(corpus)
        return None if entry is None else entry.size

    return await _categories_after(request, user, slug, lambda session, name: accounts.saved.categorise(
        session, name, slug, line.position, line.matchend, line.category, size_of))


@router.post("/api/v1/saved/{slug}/labels", response_model=LineCategories)
async def name_categories(request: Request, user: CurrentUser, slug: str, names: CategoryNames) -> LineCategories:
    """Name the categories of a saved search (literal, figurative …)."""
    accounts: Accounts = frontend_state(request).accounts
    return await _categories_after(request, user, slug, lambda session, name: accounts.saved.name_categories(
        session, name, slug, names.labels))
