"""What every part of a :class:`~cowbird.core.search.Search` builds on (:class:`Counts`): the corpus,
the query and the view, one call per partition (``_each``), the counts and the estimate."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from cowbird.core.operations import COUNT, ESTIMATE
from cowbird.core.search.consistency import Consistent
from cowbird.core.search.partitions import (
    CorpusRef,
    P,
    PartitionFailure,
    PartitionRef,
    Partitions,
    PartitionStatus,
    Progress,
    Statuses,
    TimeLimit,
    all_failed,
)
from cowbird.core.search.query import CheckedQuery, HitView
from cowbird.core.wire import CountRequest, EstimateResponse, QueryRequest

Q = TypeVar("Q", bound=QueryRequest)

COUNT_SHARE = 0.75
"""Share of a search's time limit the counts may use; the rest is for fetching the page of hits."""


def time_class(seconds: float) -> Literal["fast", "seconds", "minutes"]:
    """How long a query will take, in words: under a second, under a minute, longer."""
    return "fast" if seconds < 1.0 else "seconds" if seconds < 60.0 else "minutes"


@dataclass(frozen=True)
class CostEstimate:
    """What a search would find and cost before it runs (``Search.estimate``): the partitions'
    estimates summed (``hits`` None when a partition cannot tell), the time of the slowest
    partition (of all of them one after the other in serial mode), and the CPU time of all."""

    hits: int | None
    exact: bool
    seconds: float | None
    cpu_seconds: float | None
    statuses: Statuses[Any]

    @property
    def time_class(self) -> Literal["fast", "seconds", "minutes"] | None:
        return None if self.seconds is None else time_class(self.seconds)


class Counts(Generic[P]):
    """A query over a corpus's partitions, counted: the base of every other part of a search."""

    def __init__(self, partitions: Partitions[P], corpus: CorpusRef[P], query: CheckedQuery,
                 view: HitView | None = None, progress: Progress | None = None) -> None:
        # each partition's answers held to each other for the whole search (a refined one shares them)
        self.partitions: Partitions[P] = partitions if isinstance(partitions, Consistent) else Consistent(partitions)
        self.corpus = corpus
        self.query = query
        self.view = view or HitView()
        self.progress = progress  # told of each partition's answer as it comes

    @property
    def cqp(self) -> str:
        return self.query.cqp

    def time_limit(self) -> TimeLimit:
        return TimeLimit(self.partitions.time_limit)

    # -- counting --------------------------------------------------------------------------------

    async def _each(self, call: Callable[[P, TimeLimit], Awaitable[Any]],
                    limit: TimeLimit, reported: bool = True) -> list[tuple[PartitionStatus[P], Any]]:
        """One call per partition (as configured: parallel or serial), each answer with the
        partition's status; every partition failing fails the search. ``reported``: the answers are
        the search's own (told to ``progress``), not an estimate made before it."""
        if reported and self.progress is not None:  # somebody follows the answers (a streamed analysis)
            call = _reporting(call, self.progress)
        answers = await self.partitions.gather([functools.partial(call, p, limit) for p in self.corpus.partitions])
        answered: list[tuple[PartitionStatus[P], Any]] = []
        for partition, answer in zip(self.corpus.partitions, answers, strict=True):
            if isinstance(answer, PartitionFailure):
                answered.append((PartitionStatus(partition, None, answer), None))
            else:
                answered.append((PartitionStatus(partition, getattr(answer, "total", None)), answer))
        self._check_some_answered([status for status, _ in answered])
        return answered

    def _check_some_answered(self, statuses: Sequence[PartitionStatus[P]]) -> None:
        if all(s.failure is not None for s in statuses):
            raise all_failed(self.corpus.name, statuses)

    def asked(self, model: type[Q], partition: PartitionRef, **more: Any) -> Q:
        """A request about the query's hits on ``partition`` (the request model of any query operation;
        ``more``: its own fields)."""
        return model(partition=partition.id, query=self.cqp, strategy=self.query.strategy,
                     hard_boundary=self.query.hard_boundary, **more)

    def _count_request(self, partition: P) -> CountRequest:
        return self.asked(CountRequest, partition)

    async def count(self, limit: TimeLimit | None = None) -> Statuses[P]:
        """Totals per partition; with ``cut N`` in the query, the first N hits of the whole corpus.

        The counts may use three quarters of the time limit: a partition too slow for that is
        reported as failed, and the others' hits can still be fetched.
        """
        counting = (limit or self.time_limit()).part(COUNT_SHARE)
        answered = await self._each(lambda p, time: self.partitions.call(p, COUNT, self._count_request(p), time),
                                    counting)
        statuses = [status for status, _ in answered]
        if self.query.cut is not None:  # each partition cut its own hits; the corpus keeps its first `cut`
            remaining = self.query.cut
            for status in statuses:
                if status.total is not None:
                    status.total = min(status.total, remaining)
                    remaining -= status.total
        return statuses

    async def estimate(self) -> CostEstimate:
        """The hits and time the search would take, from each partition's plan and a small sample
        of it (the estimate operation), without running it; quickly (a tenth of the time limit)."""
        answered = await self._each(
            lambda p, time: self.partitions.call(p, ESTIMATE, self._count_request(p), time),
            self.time_limit().part(0.1), reported=False)  # an estimate is not the answer's progress
        answers: list[EstimateResponse] = [a for s, a in answered if s.failure is None]
        hits = None if any(a.hits is None for a in answers) else sum(a.hits or 0 for a in answers)
        if hits is not None and self.query.cut is not None:
            hits = min(hits, self.query.cut)  # each partition cut its own hits; the corpus keeps its first `cut`
        seconds = [a.seconds for a in answers if a.seconds is not None]
        known = len(seconds) == len(answers)
        return CostEstimate(
            hits=hits, exact=all(a.exact for a in answers) and len(answers) == len(answered),
            seconds=(sum(seconds) if self.partitions.serial else max(seconds, default=0.0)) if known else None,
            cpu_seconds=sum(seconds) if known else None, statuses=[s for s, _ in answered])


def _reporting(call: Callable[[P, TimeLimit], Awaitable[Any]],
               report: Callable[[PartitionStatus[Any]], None]) -> Callable[[P, TimeLimit], Awaitable[Any]]:
    async def reported(partition: P, limit: TimeLimit) -> Any:
        try:
            answer = await call(partition, limit)
        except PartitionFailure as failure:
            report(PartitionStatus(partition, None, failure))
            raise
        report(PartitionStatus(partition, getattr(answer, "total", None)))
        return answer

    return reported
