"""Saved subcorpora in searches: ``subcorpus=ID`` (and a keyword list's ``reference_subcorpus=ID``)
stands for the filters the subcorpus was saved with. A route expands it before it checks anything, so
that the query, the analyses, the word lists and the downloads all see (and their provenance says)
the filters that chose the texts; the subcorpus must be the user's or shared with a group of theirs,
and be part of the corpus asked for."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from fastapi import Request
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel

from cowbird.core.errors import BadParameter
from cowbird.frontend.accounts import Accounts
from cowbird.frontend.state import frontend_state
from cowbird.frontend.viewer import Viewer

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class SavedSubcorpus:
    slug: str
    name: str
    corpus: str
    filters: list[str]


def readable(request: Request, user: Viewer) -> Callable[[str], bool]:
    """Whether the user may read a corpus (by name): one they may search."""
    corpora = frontend_state(request).corpora.corpora

    def may_read(name: str) -> bool:
        entry = corpora.get(name)
        return entry is not None and entry.visible_to(user)

    return may_read


async def saved_subcorpus(request: Request, user: Viewer, slug: str) -> SavedSubcorpus:
    """A subcorpus the user may use (404 otherwise, saying why it may be so)."""
    accounts: Accounts = frontend_state(request).accounts

    def find() -> SavedSubcorpus:
        with accounts.database.session() as session:
            found = accounts.subcorpora.find(session, slug.strip(), user.name, user.groups, readable(request, user))
            return SavedSubcorpus(found.slug, found.name, found.corpus, json.loads(found.filters))

    return await run_in_threadpool(find)


async def in_subcorpus(request: Request, user: Viewer, asked: M, field: str = "subcorpus",
                       filters_field: str = "filters", corpus_field: str = "corpus") -> M:
    """``asked`` with the filters of its saved subcorpus (``field``) put before its own ``filter``s."""
    slug = getattr(asked, field)
    if not slug:
        return asked
    found = await saved_subcorpus(request, user, slug)
    corpus = getattr(asked, corpus_field) or getattr(asked, "corpus", None)
    if corpus is not None and found.corpus != corpus:
        raise BadParameter(f"{field}={slug}: the subcorpus {found.name!r} is part of corpus {found.corpus}, not "
                           f"{corpus}")
    return asked.model_copy(update={filters_field: [*found.filters, *getattr(asked, filters_field)], field: None})
