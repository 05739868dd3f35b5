"""What a search runs on: a corpus's partitions as a search sees them, the :class:`Partitions` that
answers for them, the time a search has left, and how each partition answered."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from cowbird.core.analysis_spec import AttributeKind
from cowbird.core.errors import NodesUnavailable, QueryTooSlow
from cowbird.core.operations import Operation, Rq, Rs
from cowbird.core.wire import ExportRequest, Line

T = TypeVar("T")


class PartitionFailure(Exception):
    """A partition could not be served (by any of its nodes), and why.

    ``final``: another try would fail the same way (the query itself ran out of time);
    ``timed_out``: the partition did not answer in time.
    """

    partition: str
    final: bool
    timed_out: bool

    def public(self) -> str:
        """What clients may see: the partition and why (never where it is served)."""
        raise NotImplementedError


class TimeLimit:
    """The time a search has left: each partition call gets at most this (not a fair-use quota)."""

    def __init__(self, seconds: float) -> None:
        self.at = asyncio.get_running_loop().time() + seconds

    def remaining(self) -> float:
        return self.at - asyncio.get_running_loop().time()

    def part(self, share: float) -> TimeLimit:
        """A limit ending when ``share`` of the remaining time has passed (the rest is kept for what
        comes after, such as fetching the page of hits after the counts)."""
        return TimeLimit(max(0.0, self.remaining() * share))


@dataclass(frozen=True)
class PartitionRef:
    """A partition as a search sees it: its id, its size and its first token's global position (where
    its partitions are served is the caller's: a subclass adds it)."""

    id: str
    size: int
    offset: int


P = TypeVar("P", bound=PartitionRef)
P_co = TypeVar("P_co", bound=PartitionRef, covariant=True)
P_contra = TypeVar("P_contra", bound=PartitionRef, contravariant=True)


class CorpusRef(Protocol[P_co]):
    """A corpus as a search sees it: its partitions in order and its attributes."""

    @property
    def name(self) -> str: ...
    @property
    def partitions(self) -> Sequence[P_co]: ...
    @property
    def p_attributes(self) -> list[str]: ...
    @property
    def s_attributes(self) -> list[str]: ...
    @property
    def meta(self) -> list[str]: ...
    @property
    def parts(self) -> Sequence[CorpusRef[Any]]:
        """The corpora searched: a union's own corpora (``corpus=a,b``), or the corpus itself."""
        ...


_KINDS: dict[AttributeKind, str] = {"p": "p-attribute", "s": "s-attribute", "meta": "s-attribute with values named"}


def attributes_of(corpus: CorpusRef[Any], kind: AttributeKind) -> list[str]:
    """The corpus's attributes of that kind."""
    return {"p": corpus.p_attributes, "s": corpus.s_attributes, "meta": corpus.meta}[kind]


def no_attribute(corpus: CorpusRef[Any], kind: AttributeKind, name: str) -> str:
    """What a refusal says of an attribute ``name`` the corpus searched lacks, naming the corpus that
    lacks it — over several corpora (``corpus=ewt,gp``), the ones of them without it, with what the
    first of those has: ``corpus gp has no p-attribute 'upos' (it has: word, pos, lemma); search it
    apart, or leave it out of corpus=``."""
    lacking = [c for c in corpus.parts if name not in attributes_of(c, kind)] or [corpus]
    names = ", ".join(c.name for c in lacking)
    has = ", ".join(attributes_of(lacking[0], kind)) or "none"
    text = (f"corpus {names} has no {_KINDS[kind]} {name!r} "
            f"({'it' if len(lacking) == 1 else lacking[0].name} has: {has})")
    if len(lacking) < len(corpus.parts):
        them = "it" if len(lacking) == 1 else "them"
        text += f"; search {them} apart, or leave {them} out of corpus={corpus.name}"
    return text


class Partitions(Protocol[P_contra]):
    """The answers of a corpus's partitions, one call per partition (the node API, typed).

    A failure to serve a partition is a :class:`PartitionFailure`; ``gather`` runs one search's
    calls (in parallel or one after the other) and returns failures instead of raising them.
    """

    @property
    def time_limit(self) -> float: ...
    @property
    def export_time_limit(self) -> float: ...
    @property
    def serial(self) -> bool: ...

    async def call(self, partition: P_contra, operation: Operation[Rq, Rs], request: Rq,
                   limit: TimeLimit | None = None) -> Rs:
        """One operation of the node API (``cowbird.core.operations``) on one partition, its answer checked."""
        ...
    def export(self, partition: P_contra, request: ExportRequest, expected: int,
               limit: TimeLimit | None = None) -> AsyncIterator[Line]: ...
    async def gather(self, calls: list[Callable[[], Awaitable[T]]]) -> list[T | PartitionFailure]: ...


@dataclass
class PartitionStatus(Generic[P]):
    """How a partition answered so far: its total, or why it failed."""

    partition: P
    total: int | None = None
    failure: PartitionFailure | None = None

    @property
    def error(self) -> str | None:
        """Why the partition failed, as clients may see it."""
        return None if self.failure is None else self.failure.public()

    @property
    def answered(self) -> bool:
        return self.failure is None and self.total is not None


Statuses = list[PartitionStatus[P]]


def failed_partitions(statuses: Sequence[PartitionStatus[Any]]) -> list[str]:
    """The partitions that failed, each once (a keyword list asks a partition for the target and the reference)."""
    return list(dict.fromkeys(s.partition.id for s in statuses if s.failure is not None))


def answered_total(statuses: Sequence[PartitionStatus[Any]]) -> int:
    """Hits in the partitions that answered."""
    return sum(s.total or 0 for s in statuses if s.failure is None)


def all_failed(corpus: str, statuses: Sequence[PartitionStatus[Any]]) -> NodesUnavailable | QueryTooSlow:
    """No partition answered: the query was too slow everywhere, or the partitions are not served."""
    failures = [s.failure for s in statuses if s.failure is not None]
    reasons = "; ".join(f.public() for f in failures)
    if all(f.final or f.timed_out for f in failures):
        return QueryTooSlow(f"the query ran out of time on every partition of {corpus}: {reasons}")
    return NodesUnavailable(f"no node answered for corpus {corpus}: {reasons}", headers={"Retry-After": "10"})


Progress = Callable[[PartitionStatus[Any]], None]
"""Told of each partition's answer (or failure) to a search's calls as it comes (``Search(progress=)``:
a streamed analysis reports them, ``cowbird.frontend.routes.analyses``)."""
