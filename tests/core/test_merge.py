"""The sort-key merge (``cowbird.core.search.merge``) against one global sort of every hit by (key,
partition base, rank): partitions' sorted line streams merged (``merge``), and a search's sorted
pages and sorted exports over partitions played by in-memory lists of sort keys that answer as a
node does (``Search.sorted``, ``Search.stream``: the pivots, the windows between them, the
selection), also when a partition fails on the way."""

from __future__ import annotations

import asyncio
import itertools
import random
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import TypeVar

from hypothesis import given, settings
from hypothesis import strategies as st

from cowbird.core.analysis_spec import SortKey, parse_sort
from cowbird.core.operations import COUNT, HITS, SORT_KEYS, Operation, Rq, Rs
from cowbird.core.search import CheckedQuery, PartitionFailure, PartitionRef, Search, TimeLimit
from cowbird.core.search.merge import merge
from cowbird.core.sort_select import DIRECT_KEYS
from cowbird.core.wire import ExportRequest, HitsRequest, Line, SortKeysRequest, SortValue
from cowbird.query import parse_cqp
from tests.core.fakes import Down
from tests.core.test_sort_select import Keys, brute, place, sorted_partition

T = TypeVar("T")


def line(rank: int, key: SortValue) -> Line:
    """A sorted hit, named by its rank in its partition."""
    return Line(match=rank, matchend=rank, left=[], keyword=[], right=[], sort_key=key)


WORDS = ["a", "b", "ba", "c", "Ä", "é", "zz", ""]
LEVELS: list[list[list[str]]] = [[], *([[w]] for w in WORDS),
                                 *([[w, v]] for w, v in zip(WORDS, WORDS[1:], strict=False))]
KEYS: dict[int, list[SortValue]] = {1: [[level] for level in LEVELS],
                                    2: [[first, second] for first in LEVELS[:8] for second in LEVELS[::3]]}


@st.composite
def corpora(draw: st.DrawFn) -> tuple[list[Keys], tuple[bool, ...]]:
    """Up to five partitions' sorted keys, many equal: one number each (a random order) or one or
    two levels of values (a level may be empty: no target), each level ascending or descending."""
    random_order = draw(st.booleans())
    levels = 1 if random_order else draw(st.integers(1, 2))
    descending = tuple(draw(st.booleans()) for _ in range(levels))
    pool: list[SortValue] = list(range(21)) if random_order else KEYS[levels]
    picks = draw(st.lists(st.lists(st.integers(0, len(pool) - 1), max_size=40), min_size=1, max_size=5))
    return [sorted_partition([pool[i] for i in picked], descending) for picked in picks], descending


def bases_of(partitions: list[Keys]) -> list[int]:
    return list(itertools.accumulate([0] + [len(keys) + 5 for keys in partitions[:-1]]))


def sort_for(partitions: list[Keys], descending: tuple[bool, ...]) -> SortKey:
    """The sort whose keys these are: random (one number each) or on one or two levels."""
    ways = ",".join("desc" if d else "asc" for d in descending)
    if any(isinstance(key, int) for keys in partitions for key in keys):
        return parse_sort("random", ways)
    return parse_sort(",".join(["match.word", "match.lemma"][:len(descending)]), ways)


# -- merge: sorted streams ----------------------------------------------------------------------------


async def stream(keys: Keys, closed: list[int] | None = None, k: int = 0) -> AsyncIterator[Line]:
    try:
        for rank, key in enumerate(keys):
            yield line(rank, key)
    finally:
        if closed is not None:
            closed.append(k)


@settings(max_examples=100, deadline=None)
@given(corpora())
def test_merged_streams_are_the_global_sort(corpus: tuple[list[Keys], tuple[bool, ...]]) -> None:
    partitions, descending = corpus

    async def merged() -> list[tuple[int, int]]:
        streams = [(k, stream(keys)) for k, keys in enumerate(partitions)]
        return [(k, found.match) async for k, found in merge(streams, descending)]

    assert asyncio.run(merged()) == brute(partitions, bases_of(partitions), descending)


def test_merged_streams_tie_in_partition_order_and_close_when_left() -> None:
    a: Keys = [[[["x"]]], [[["y"]]], [[["y"]]], [[["z"]]]]
    b: Keys = [[[["w"]]], [[["y"]]], [[["z"]]]]
    c: Keys = [[[["y"]]], [[["y"]]], [[["y"]]], [[["y"]]]]
    closed: list[int] = []

    async def first(n: int) -> list[tuple[int, int]]:
        merged = merge([(k, stream(keys, closed, k)) for k, keys in enumerate([a, b, c])], (False,))
        taken = [(k, found.match) for k, found in [await anext(merged) for _ in range(n)]]
        assert isinstance(merged, AsyncGenerator) and closed == []
        await merged.aclose()
        return taken

    assert asyncio.run(first(7)) == [(1, 0), (0, 0), (0, 1), (0, 2), (1, 1), (2, 0), (2, 1)]
    assert sorted(closed) == [0, 1, 2], "every partition's stream is closed when the reader leaves"
    descending = [(k, found.match) for k, found in asyncio.run(_all(merge(
        [(k, stream(list(reversed(keys)))) for k, keys in enumerate([a, b, c])], (True,))))]
    assert descending[:4] == [(0, 0), (1, 0), (0, 1), (0, 2)], "z first; equal keys still in partition order"


async def _all(merged: AsyncIterator[tuple[int, Line]]) -> list[tuple[int, Line]]:
    return [found async for found in merged]


# -- a search's sorted pages over partitions that answer as nodes do ----------------------------------


@dataclass
class Corpus:
    partitions: list[PartitionRef]
    name: str = "merged"
    p_attributes: list[str] = field(default_factory=lambda: ["word", "lemma"])
    s_attributes: list[str] = field(default_factory=list)
    meta: list[str] = field(default_factory=list)

    @property
    def parts(self) -> tuple[Corpus, ...]:
        return (self,)


class SortedLists:
    """Partitions whose hits are these sorted keys, answering count, sort keys, sorted hits and a
    sorted export as a node does (``NodeApi.sortkeys``: a bound is placed by (key, base, rank))."""

    time_limit = 60.0
    export_time_limit = 60.0
    serial = False

    def __init__(self, partitions: list[Keys], bases: list[int], descending: tuple[bool, ...],
                 failing: frozenset[str] = frozenset()) -> None:
        self.keys = {f"p{k}": keys for k, keys in enumerate(partitions)}
        self.bases = {f"p{k}": base for k, base in enumerate(bases)}
        self.descending = descending
        self.failing = failing
        self.asked: list[str] = []

    def corpus(self) -> Corpus:
        return Corpus([PartitionRef(pid, len(keys) + 5, self.bases[pid]) for pid, keys in self.keys.items()])

    async def call(self, partition: PartitionRef, operation: Operation[Rq, Rs], request: Rq,
                   limit: TimeLimit | None = None) -> Rs:
        keys = self.keys[partition.id]
        self.asked.append(operation.name)
        answer: dict[str, object] = {"partition": partition.id, "query": "q", "total": len(keys), "elapsed_ms": 0.0}
        if operation is SORT_KEYS and isinstance(request, SortKeysRequest):
            if partition.id in self.failing:
                raise Down(partition.id)
            assert request.sort.base == partition.offset
            if request.ranks is not None:
                first, ranks, end = 0, request.ranks, None
            else:
                first = place(keys, partition.offset, request.start, self.descending, request.offset)
                end = None if request.stop is None else place(keys, partition.offset, request.stop,
                                                              self.descending, len(keys))
                ranks = list(range(first, min(len(keys) if end is None else max(end, first), first + request.limit)))
            answer |= {"offset": first, "keys": [keys[r] for r in ranks], "end": end}
        elif operation is HITS and isinstance(request, HitsRequest):
            assert request.sort is not None and request.sort.base == partition.offset
            answer |= {"offset": request.offset, "data": list(self._lines(keys, request))}
        else:
            assert operation is COUNT
        return operation.response.model_validate(answer)

    @staticmethod
    def _lines(keys: Keys, request: HitsRequest) -> list[Line]:
        last = min(len(keys), request.offset + request.limit)
        return [line(rank, keys[rank]) for rank in range(request.offset, last)]

    async def export(self, partition: PartitionRef, request: ExportRequest, expected: int,
                     limit: TimeLimit | None = None) -> AsyncIterator[Line]:
        assert request.sort is not None and request.sort.base == partition.offset
        for found in self._lines(self.keys[partition.id], request):
            yield found

    async def gather(self, calls: list[Callable[[], Awaitable[T]]]) -> list[T | PartitionFailure]:
        answers: list[T | PartitionFailure] = []
        for call in calls:
            try:
                answers.append(await call())
            except PartitionFailure as failure:
                answers.append(failure)
        return answers


def searched(lists: SortedLists) -> Search[PartitionRef]:
    return Search(lists, lists.corpus(), CheckedQuery.of(parse_cqp('[word="a"]')))


def sorted_page(lists: SortedLists, sort: SortKey, offset: int, limit: int) -> list[tuple[int, int]]:
    async def page() -> list[tuple[int, int]]:
        _, hits = await searched(lists).sorted(sort, offset, limit)
        return [(int(hit.partition.id[1:]), hit.line.match) for hit in hits]

    return asyncio.run(page())


def sorted_export(lists: SortedLists, sort: SortKey, offset: int, limit: int) -> list[tuple[int, int]]:
    async def export() -> list[tuple[int, int]]:
        search = searched(lists)
        statuses = await search.count()
        return [(int(hit.partition.id[1:]), hit.line.match)
                async for hit in search.stream(statuses, offset, limit, sort=sort)]

    return asyncio.run(export())


@settings(max_examples=100, deadline=None)
@given(corpora(), st.integers(0, 220), st.integers(0, 30))
def test_a_sorted_page_and_export_are_the_global_sort(corpus: tuple[list[Keys], tuple[bool, ...]], offset: int,
                                                      limit: int) -> None:
    partitions, descending = corpus
    bases = bases_of(partitions)
    expected = brute(partitions, bases, descending)
    offset = min(offset, len(expected) + 3)
    sort = sort_for(partitions, descending)
    lists = SortedLists(partitions, bases, descending)
    assert sorted_page(lists, sort, offset, limit) == expected[offset:offset + limit]
    assert sorted_export(lists, sort, offset, limit) == expected[offset:offset + limit]


def test_a_deep_sorted_page_goes_through_pivots() -> None:
    """4,500 hits with many ties in three partitions (more keys than are asked directly): the page at
    any offset and a sorted export from deep in the order are the global sort's."""
    rng = random.Random(11)
    vocabulary = [f"w{k:02d}" for k in range(60)]
    descending = (True,)
    partitions = [sorted_partition([[[[rng.choice(vocabulary)]]] for _ in range(1500)], descending)
                  for _ in range(3)]
    bases = [0, 10_000, 20_000]
    expected = brute(partitions, bases, descending)
    sort = parse_sort("match.word", "desc")
    assert len(expected) > DIRECT_KEYS
    for offset in (0, 1234, 2999, 4470):
        lists = SortedLists(partitions, bases, descending)
        assert sorted_page(lists, sort, offset, 50) == expected[offset:offset + 50], offset
        assert lists.asked.count("sortkeys") <= 3 * 2, "samples, then each partition's window: two rounds"
    assert sorted_export(SortedLists(partitions, bases, descending), sort, 2500, 300) == expected[2500:2800]


def test_a_partition_failing_on_its_sort_keys_is_left_out_of_the_order() -> None:
    rng = random.Random(3)
    words = ["a", "b", "c", "d"]
    descending = (False, True)
    partitions = [sorted_partition([[[[rng.choice(words)]], [[rng.choice(words)]]] for _ in range(size)], descending)
                  for size in (40, 30, 50)]
    bases = bases_of(partitions)
    sort = parse_sort("match.word,match.lemma", "asc,desc")
    lists = SortedLists(partitions, bases, descending, failing=frozenset({"p1"}))

    async def page() -> tuple[list[str | None], list[tuple[int, int]]]:
        statuses, hits = await searched(lists).sorted(sort, 20, 40)
        return [s.error for s in statuses], [(int(hit.partition.id[1:]), hit.line.match) for hit in hits]

    errors, found = asyncio.run(page())
    assert errors == [None, "p1: down", None]
    others = [(k, rank) for k, rank in brute(partitions, bases, descending) if k != 1]
    assert found == others[20:60]
