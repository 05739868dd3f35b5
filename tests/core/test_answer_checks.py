"""The checks of node answers that need more than the answer alone: what a search learnt of a
partition before (``core/search/consistency.py:Consistent``), and what the query says of its hits'
lengths (``hit_length``, ``check_hit_tokens``)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from cowbird.core.operations import COOCCURRENCE, COUNT, FIRST, HITS, MARGINALS, ImpossibleAnswer
from cowbird.core.search.consistency import Consistent, InconsistentAnswer, check_hit_tokens, hit_length
from cowbird.core.search.partitions import PartitionFailure, PartitionRef
from cowbird.core.wire import (
    CooccurrenceResponse,
    CountRequest,
    CountResponse,
    FirstRequest,
    HitsRequest,
    HitsResponse,
    MarginalsRequest,
    MarginalsResponse,
)
from cowbird.query import parse_cqp

pytestmark = pytest.mark.anyio
Q = '[word="w7"]'


@dataclass(frozen=True)
class Part(PartitionRef):
    size: int = 1000
    offset: int = 0


class Scripted:
    """Partitions that answer the totals they are given, one after the other."""

    time_limit = 10.0
    export_time_limit = 10.0
    serial = False

    def __init__(self, *totals: int, exact: bool = True) -> None:
        self.totals = list(totals)
        self.exact = exact

    async def call(self, partition: Part, operation: Any, request: Any, limit: Any = None) -> Any:
        if operation is MARGINALS:
            return MarginalsResponse(partition=partition.id, frequencies=[])
        total = self.totals.pop(0)
        if operation is COUNT:
            return CountResponse(partition=partition.id, query=request.query, total=total, elapsed_ms=1)
        return HitsResponse(partition=partition.id, query=request.query, total=total, offset=0, data=[],
                            elapsed_ms=1, exact=self.exact or operation is not FIRST)

    def export(self, partition: Part, request: Any, expected: int, limit: Any = None) -> Any:
        raise NotImplementedError

    async def gather(self, calls: list[Callable[[], Awaitable[Any]]]) -> list[Any]:
        return list(await asyncio.gather(*(call() for call in calls)))


async def test_a_total_that_changes_within_a_search_fails_the_partition_from_then_on() -> None:
    consistent = Consistent(Scripted(41, 40, 41))
    part = Part("p1")
    count = CountRequest(partition="p1", query=Q)
    assert (await consistent.call(part, COUNT, count)).total == 41
    with pytest.raises(InconsistentAnswer, match="answered 40 hits to hits, 41 earlier in the same search"):
        await consistent.call(part, HITS, HitsRequest(partition="p1", query=Q))
    with pytest.raises(InconsistentAnswer, match="answered 40 hits"):  # however the partition answers next
        await consistent.call(part, COUNT, count)


async def test_other_queries_partitions_and_strategies_are_totals_of_their_own() -> None:
    consistent = Consistent(Scripted(41, 40, 39, 38))
    for request, part in ((CountRequest(partition="p1", query=Q), Part("p1")),
                          (CountRequest(partition="p2", query=Q), Part("p2")),
                          (CountRequest(partition="p1", query='[word="w8"]'), Part("p1")),
                          (CountRequest(partition="p1", query=Q, strategy="longest"), Part("p1"))):
        await consistent.call(part, COUNT, request)
    marginals = MarginalsRequest(partition="p1", attribute="word", values=[])  # no total: not held to one
    assert (await consistent.call(Part("p1"), MARGINALS, marginals)).frequencies == []


async def test_a_first_answer_is_at_least_so_many() -> None:
    part = Part("p1")
    first = FirstRequest(partition="p1", query=Q)
    fine = Consistent(Scripted(30, 41, exact=False))
    await fine.call(part, FIRST, first)
    assert (await fine.call(part, COUNT, CountRequest(partition="p1", query=Q))).total == 41
    fewer = Consistent(Scripted(30, 29, exact=False))
    await fewer.call(part, FIRST, first)
    with pytest.raises(InconsistentAnswer, match="answered 29 hits to count, at least 30"):
        await fewer.call(part, COUNT, CountRequest(partition="p1", query=Q))


async def test_gather_returns_a_contradiction_as_a_failed_partition() -> None:
    consistent = Consistent(Scripted(41, 40))
    part = Part("p1")
    await consistent.call(part, COUNT, CountRequest(partition="p1", query=Q))
    [answer] = await consistent.gather([lambda: consistent.call(part, COUNT, CountRequest(partition="p1", query=Q))])
    assert isinstance(answer, PartitionFailure) and answer.public() == (
        "p1: answered 40 hits to count, 41 earlier in the same search")


@pytest.mark.parametrize(("query", "length"), [
    (Q, 1), ('[pos="DT"] [pos="NN"]', 2), ('<s> [pos="DT"] [] </s>', 2), ('([pos="DT"] | [pos="PRP"]) []{2}', 3),
    ('[pos="DT"] [pos="JJ"]? [pos="NN"]', None), ('[pos="NN"]+', None), ('MU(meet [pos="DT"] [pos="NN"] 1 2)', None),
    ('[pos="NN"] expand to s', None), ('[pos="NN"] within s', 1),
])
def test_the_hits_length_known_from_the_query(query: str, length: int | None) -> None:
    assert hit_length(parse_cqp(query)) == length


def _tokens(total: int, node_tokens: int) -> CooccurrenceResponse:
    return CooccurrenceResponse(partition="p1", query=Q, total=total, context_tokens=0, node_tokens=node_tokens,
                                size=1000, truncated=False, values=[], f=[], marginal=[], in_nodes=[], elapsed_ms=1)


def test_hit_tokens_are_held_to_the_hits() -> None:
    check_hit_tokens("p1", _tokens(40, 40), 1)
    check_hit_tokens("p1", _tokens(40, 41), 2)  # all 40 in a row
    check_hit_tokens("p1", _tokens(40, 80), 2)  # none touching another
    check_hit_tokens("p1", _tokens(40, 41), None)  # lengths not known: not checked
    for total, tokens, length in ((41, 40, 1), (39, 40, 1), (40, 39, 2), (40, 81, 2)):
        with pytest.raises(InconsistentAnswer, match=f"gives {tokens} tokens inside {total} hits of {length}"):
            check_hit_tokens("p1", _tokens(total, tokens), length)


def test_cooccurrence_rows_add_up_to_the_positions() -> None:
    request = COOCCURRENCE.request(partition="p1", query=Q, attribute="word", left=1, right=1)
    honest = CooccurrenceResponse(partition="p1", query=Q, total=2, context_tokens=4, node_tokens=2, size=10,
                                  truncated=False, values=["a", "b", "w7"], f=[3, 1, 0], marginal=[5, 2, 2],
                                  in_nodes=[0, 0, 2], elapsed_ms=1)
    COOCCURRENCE.check(request, honest, 10)
    for lie in ({"context_tokens": 5}, {"node_tokens": 3}, {"f": [2, 1, 0]}):  # one position more, or less
        with pytest.raises(ImpossibleAnswer, match="summing to"):
            COOCCURRENCE.check(request, honest.model_copy(update=lie), 10)
    COOCCURRENCE.check(request, honest.model_copy(update={"f": [2, 1, 0], "truncated": True}), 10)


def test_a_searchs_time_limits_are_its_partitions_as_they_are_now() -> None:
    """A request classed background after its search was made waits longer from then on: the search's
    time limits follow its partitions' (a copy taken when the search was made cut every background
    preview's node calls at the interactive 90 s, and under load they came back partial)."""
    inner = Scripted()
    consistent = Consistent(inner)
    assert (consistent.time_limit, consistent.export_time_limit) == (10.0, 10.0)
    inner.time_limit, inner.export_time_limit = 50.0, 3600.0  # the request became background work
    assert (consistent.time_limit, consistent.export_time_limit) == (50.0, 3600.0)
