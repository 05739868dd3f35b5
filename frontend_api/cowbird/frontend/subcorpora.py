"""Saved subcorpora in searches: ``subcorpus=ID`` (and a keyword list's ``reference_subcorpus=ID``)
stands for the filters the subcorpus was saved with. A route expands it before it checks anything, so
that the query, the analyses, the word lists and the downloads all see (and their provenance says)
the filters that chose the texts; the subcorpus must be the user's or shared with a group of theirs,
and be part of the corpus asked for."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, Self, TypeVar

from fastapi import Request
from fastapi.concurrency import run_in_threadpool

from cowbird.core.errors import BadParameter, CowbirdError
from cowbird.core.search import Partitions, PartitionStatus
from cowbird.core.subcorpus import subcorpus_sizes
from cowbird.frontend.accounts import Accounts
from cowbird.frontend.corpora import CorpusEntry, Partition
from cowbird.frontend.querying import region_filters
from cowbird.frontend.state import frontend_state
from cowbird.frontend.viewer import Viewer


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


class NamesSubcorpus(Protocol):
    """Request parameters that may name a saved subcorpus (``subcorpus=ID``) besides their filters."""

    @property
    def corpus(self) -> str | None: ...
    @property
    def filters(self) -> list[str]: ...
    @property
    def subcorpus(self) -> str | None: ...
    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self: ...


S = TypeVar("S", bound=NamesSubcorpus)


async def subcorpus_filters(request: Request, user: Viewer, slug: str, corpus: str | None, parameter: str
                            ) -> list[str]:
    """The filters of the saved subcorpus ``slug`` (named by ``parameter``), which must be part of ``corpus``."""
    found = await saved_subcorpus(request, user, slug)
    if corpus is not None and found.corpus != corpus:
        raise BadParameter(f"{parameter}={slug}: the subcorpus {found.name!r} is part of corpus {found.corpus}, not "
                           f"{corpus}")
    return found.filters


async def in_subcorpus(request: Request, user: Viewer, asked: S) -> S:
    """``asked`` with the filters of its saved subcorpus put before its own ``filter``s (and no subcorpus)."""
    if not asked.subcorpus:
        return asked
    filters = await subcorpus_filters(request, user, asked.subcorpus, asked.corpus, "subcorpus")
    return asked.model_copy(update={"filters": [*filters, *asked.filters], "subcorpus": None})


async def searched_tokens(nodes: Partitions[Any], target: CorpusEntry, filters: list[str],
                          statuses: Sequence[PartitionStatus[Partition]]) -> int | None:
    """Tokens of the texts a search looked in, in the partitions that answered: the subcorpus its
    ``filters`` choose (asked of the nodes once, then kept: ``corpora.Kept.searched``, the
    catalogue's), or those partitions whole. None when a node could not say (the rate is then not
    given, never one of the wrong size)."""
    answered = [s.partition for s in statuses if s.failure is None and s.total is not None]
    if not filters:
        return sum(p.size for p in answered)
    key = (target.name, target.config.version or "", tuple(filters), tuple(p.id for p in answered))
    kept = target.kept.searched.get(key)
    if kept is not None:
        return kept
    try:
        sizes = await subcorpus_sizes(nodes, target.name, answered, region_filters(filters, target, "filter"),
                                      None, None, None, False, nodes.time_limit)
    except CowbirdError:
        return None
    if any(s.failure is not None for s in sizes.statuses):
        return None
    target.kept.searched.put(key, sizes.tokens)
    return sizes.tokens
