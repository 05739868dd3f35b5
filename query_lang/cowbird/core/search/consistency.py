"""A partition's answers checked against each other within one search (:class:`Consistent`), and
against what the query says of its hits (:func:`check_hit_tokens`).

Each answer alone is checked by its operation's check (``cowbird.core.operations``: against the
request and the partition's size; a node that fails it is left for a replica). What one answer
cannot show, two can: a search that learns a partition's total twice — its count, then the total
its page of hits, its sort keys or an analysis comes with — believes neither when they differ. The
partition is then a failed one (:class:`InconsistentAnswer`, named with the reason), left out of
the numbering and the sums as any other failed partition, for the rest of the search.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Generic

from cowbird.core.operations import Operation, Rq, Rs
from cowbird.core.search.partitions import P, PartitionFailure, Partitions, T, TimeLimit
from cowbird.core.wire import CooccurrenceResponse, ExportRequest, HitsResponse, Line, QueryRequest
from cowbird.query.cqp_ast import Alternation, Query, Repetition, Sequence, StructuralTag, TokenPattern

Asked = tuple[str, str, str, int]
"""What a partition's total is the total of: the partition, the query, its strategy and hard boundary."""


@dataclass
class InconsistentAnswer(PartitionFailure):
    """A partition whose answers contradict each other (or what the query says of its hits)."""

    partition: str
    reason: str
    final: bool = False
    timed_out: bool = False

    def __str__(self) -> str:
        return f"{self.partition}: {self.reason}"

    def public(self) -> str:
        return f"{self.partition}: {self.reason}"


class Consistent(Generic[P]):
    """The :class:`Partitions` of one search, each answer's total held to the partition's earlier
    ones: the totals an answer gives (a count's; a page's, sort keys', an analysis's) must be one
    number per partition and query, and a ``first`` answer's (at least that many) no more than it."""

    def __init__(self, partitions: Partitions[P]) -> None:
        self.inner = partitions
        self.totals: dict[Asked, int] = {}
        self.floors: dict[Asked, int] = {}  # from first answers: at least this many
        self.broken: dict[Asked, str] = {}
        self.serial = partitions.serial

    @property
    def time_limit(self) -> float:
        """The inner partitions' limit as it is now (a request classed background after its search was
        made waits longer: a copy made then cut its background queries at the interactive limit)."""
        return self.inner.time_limit

    @property
    def export_time_limit(self) -> float:
        return self.inner.export_time_limit

    async def call(self, partition: P, operation: Operation[Rq, Rs], request: Rq,
                   limit: TimeLimit | None = None) -> Rs:
        if not isinstance(request, QueryRequest):
            return await self.inner.call(partition, operation, request, limit)
        asked = (partition.id, request.query, request.strategy, request.hard_boundary)
        if asked in self.broken:  # answered once, contradicted since: no later answer is believed either
            raise InconsistentAnswer(partition.id, self.broken[asked])
        answer = await self.inner.call(partition, operation, request, limit)
        total = getattr(answer, "total", None)
        if isinstance(total, int):
            self._held(asked, operation.name, total, not isinstance(answer, HitsResponse) or answer.exact)
        return answer

    def _held(self, asked: Asked, name: str, total: int, exact: bool) -> None:
        known, floor = self.totals.get(asked), self.floors.get(asked, 0)
        problem = None
        if exact and known is not None and known != total:
            problem = f"answered {total} hits to {name}, {known} earlier in the same search"
        elif exact and total < floor:
            problem = f"answered {total} hits to {name}, at least {floor} earlier in the same search"
        elif not exact and known is not None and total > known:
            problem = f"found at least {total} hits in answering {name}, {known} earlier in the same search"
        if problem is not None:
            self.broken[asked] = problem
            raise InconsistentAnswer(asked[0], problem)
        if exact:
            self.totals[asked] = total
        else:
            self.floors[asked] = max(floor, total)

    def export(self, partition: P, request: ExportRequest, expected: int,
               limit: TimeLimit | None = None) -> AsyncIterator[Line]:
        return self.inner.export(partition, request, expected, limit)

    async def gather(self, calls: list[Callable[[], Awaitable[T]]]) -> list[T | PartitionFailure]:
        """The calls as the partitions gather them, a contradiction returned as a failure like theirs."""

        def returning(call: Callable[[], Awaitable[T]]) -> Callable[[], Awaitable[T | PartitionFailure]]:
            async def called() -> T | PartitionFailure:
                try:
                    return await call()
                except InconsistentAnswer as failure:
                    return failure

            return called

        answers = await self.inner.gather([returning(call) for call in calls])
        return list(answers)


def hit_length(query: Query) -> int | None:
    """How many tokens every hit of the query holds, when that is one number (None: hits of several
    lengths, an MU or TAB query, or one that ``expand`` widens)."""
    if query.expand is not None or not isinstance(query.pattern, TokenPattern | StructuralTag | Sequence
                                                   | Alternation | Repetition):
        return None

    def lengths(node: object) -> tuple[int, int] | None:
        if isinstance(node, TokenPattern):
            return (0, 0) if node.lookahead else (1, 1)
        if isinstance(node, StructuralTag):
            return 0, 0
        if isinstance(node, Sequence | Alternation):
            parts = [lengths(item) for item in (node.items if isinstance(node, Sequence) else node.options)]
            if any(part is None for part in parts) or not parts:
                return None
            known = [part for part in parts if part is not None]
            if isinstance(node, Sequence):
                return sum(low for low, _ in known), sum(high for _, high in known)
            return min(low for low, _ in known), max(high for _, high in known)
        if isinstance(node, Repetition) and node.max is not None:
            inner = lengths(node.item)
            return None if inner is None else (inner[0] * node.min, inner[1] * node.max)
        return None

    found = lengths(query.pattern)
    return found[0] if found is not None and found[0] == found[1] and found[0] > 0 else None


def check_hit_tokens(partition: str, answer: CooccurrenceResponse, length: int | None) -> None:
    """A co-occurrence answer's hits and the tokens inside them, for a query whose hits all hold
    ``length`` tokens: distinct hits then start at distinct positions, so they cover at least one
    token per hit (and the length less one) and at most ``length`` tokens each."""
    if length is None or answer.total == 0:
        return
    fewest, most = answer.total + length - 1, answer.total * length
    if not fewest <= answer.node_tokens <= most:
        raise InconsistentAnswer(partition, f"answer refused: it gives {answer.node_tokens} tokens inside "
                                            f"{answer.total} hits of {length} tokens each")
