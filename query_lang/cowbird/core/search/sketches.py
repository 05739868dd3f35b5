"""Word sketches over a corpus's partitions (:class:`Sketches`): each relation's counts summed over
the partitions before any score, so that a sketch is exact for the whole corpus.

For a headword *x*, a relation *R* and a collocate *y*: ``f(x, R, y)`` is the relation's instances
pairing them, ``f(x, R)`` the headword's instances in *R* (with any collocate), ``f(R, y)`` the
collocate's (with any headword). Each is the sum of the partitions' counts; a collocate one
partition found is asked of the others that did not, so that ``f(R, y)`` is the corpus's.

logDice (Rychlý 2008, "A Lexicographer-Friendly Association Score", RASLAN; Sketch Engine's
ranking of word sketches): ``14 + log2(2 f(x, R, y) / (f(x, R) + f(R, y)))`` — at most 14, where
headword and collocate occur in the relation only with each other; it is independent of the
corpus's size.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

from cowbird.core.off_loop import off_loop
from cowbird.core.operations import SKETCH
from cowbird.core.search.counts import Counts
from cowbird.core.search.partitions import P, PartitionFailure, PartitionStatus, Statuses, TimeLimit
from cowbird.core.wire import SketchRelation, SketchRequest, SketchResponse, Strategy, json_pieces
from cowbird.query.sketch_grammar import MATCHING_STRATEGY, View

STRATEGY: Strategy = "traditional"
assert STRATEGY == MATCHING_STRATEGY  # the relation queries' strategy (``sketch_grammar``), typed
TOTALS_BYTES = 32 * 1024
"""Collocates one request asks a partition's totals of, at most this many bytes of JSON."""


def log_dice(f_xy: int, f_x: int, f_y: int) -> float:
    """logDice of a pair seen ``f_xy`` times, its headword ``f_x`` and its collocate ``f_y`` times."""
    return 14.0 + math.log2(2.0 * f_xy / (f_x + f_y))


@dataclass(frozen=True)
class Collocate:
    value: str
    f: int  # f(x, R, y)
    total: int  # f(R, y)
    log_dice: float


@dataclass
class RelationSketch:
    """One relation of a sketch: the headword's instances in it, its share of the headword's
    occurrences, and the collocates, the most salient (logDice) first."""

    name: str
    head_total: int
    instances: int
    queries: list[str]
    collocates: list[Collocate]
    distinct: int  # collocates before ``min_freq`` and ``limit``
    share: float | None = None  # head_total / the headword's frequency


@dataclass
class WordSketch:
    headword: str
    attribute: str
    frequency: int  # the headword's frequency in the partitions that answered
    size: int  # their tokens
    relations: list[RelationSketch]
    saved: bool  # every partition read saved tables (none counted now)
    failed: list[str] = field(default_factory=list)


@dataclass
class _Sums:
    f: dict[str, int] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    head_total: int = 0
    instances: int = 0


class Sketches(Counts[P]):
    """Word sketches of headwords over the corpus's partitions; ``relations`` are the queries of each
    view (filters added: a subcorpus's sketch)."""

    async def sketch(self, headword: str, attribute: str, views: list[View], relations: list[list[str]],
                     min_freq: int = 1, limit: int | None = None) -> tuple[Statuses[P], WordSketch]:
        """The headword's sketch in the given views (``relations[i]``: view i's queries as the nodes run them)."""
        asks = [SketchRelation(queries=queries, symmetric=view.relation.symmetric, swapped=view.swapped)
                for view, queries in zip(views, relations, strict=True)]

        async def call(partition: P, time: TimeLimit) -> SketchResponse:
            request = SketchRequest(partition=partition.id, attribute=attribute, headword=headword, relations=asks,
                                    strategy=STRATEGY, hard_boundary=self.query.hard_boundary)
            return await self.partitions.call(partition, SKETCH, request, time)

        answered = await self._each(call, self.time_limit())
        sums = [_Sums() for _ in views]
        for _, answer in answered:
            if answer is None:
                continue
            for rows, summed in zip(answer.relations, sums, strict=True):
                for value, f in zip(rows.values, rows.f, strict=True):
                    summed.f[value] = summed.f.get(value, 0) + f
        await self._complete_totals(answered, asks, attribute, sums)
        self._check_some_answered([status for status, _ in answered])

        def merged() -> WordSketch:
            return _merged(headword, attribute, views, answered, sums, min_freq, limit)

        return [s for s, _ in answered], await off_loop(merged)

    async def _complete_totals(self, answered: list[tuple[PartitionStatus[P], SketchResponse | None]],
                               asks: list[SketchRelation], attribute: str, sums: list[_Sums]) -> None:
        """Ask each partition the totals of the collocates other partitions found and it did not, in
        pieces a node takes (its request bodies are limited)."""
        pieces: list[tuple[PartitionStatus[P], int, list[str]]] = []
        for status, answer in answered:
            if answer is None:
                continue
            for index, (rows, summed) in enumerate(zip(answer.relations, sums, strict=True)):
                missing = sorted(set(summed.f) - set(rows.values))
                pieces += [(status, index, piece) for piece in json_pieces(missing, TOTALS_BYTES)]
        time = self.time_limit()

        async def ask(status: PartitionStatus[P], index: int, values: list[str]) -> SketchResponse:
            relation = asks[index].model_copy(update={"totals_of": values})
            request = SketchRequest(partition=status.partition.id, attribute=attribute, headword=None,
                                    relations=[relation], strategy=STRATEGY,
                                    hard_boundary=self.query.hard_boundary)
            return await self.partitions.call(status.partition, SKETCH, request, time)

        answers = await self.partitions.gather([functools.partial(ask, *piece) for piece in pieces])
        extra: dict[tuple[int, int], dict[str, int]] = {}
        for (status, index, values), reply in zip(pieces, answers, strict=True):
            if isinstance(reply, PartitionFailure):
                status.failure = reply  # without these totals none of its counts are in
                status.total = None
            elif status.failure is None:
                extra.setdefault((id(status), index), {}).update(zip(values, reply.relations[0].asked, strict=True))
        for status, answer in answered:
            if answer is None or status.failure is not None:
                continue
            for index, (rows, summed) in enumerate(zip(answer.relations, sums, strict=True)):
                summed.head_total += rows.head_total
                summed.instances += rows.instances
                for value, total in [*zip(rows.values, rows.totals, strict=True),
                                     *extra.get((id(status), index), {}).items()]:
                    summed.totals[value] = summed.totals.get(value, 0) + total
        # the f of a partition that failed its totals are not in: count them again without it
        for summed in sums:
            summed.f.clear()
        for status, answer in answered:
            if answer is None or status.failure is not None:
                continue
            for rows, summed in zip(answer.relations, sums, strict=True):
                for value, f in zip(rows.values, rows.f, strict=True):
                    summed.f[value] = summed.f.get(value, 0) + f


def _merged(headword: str, attribute: str, views: list[View],
            answered: list[tuple[PartitionStatus[P], SketchResponse | None]], sums: list[_Sums], min_freq: int,
            limit: int | None) -> WordSketch:
    kept = [(status, answer) for status, answer in answered if answer is not None and status.failure is None]
    frequency = sum(answer.frequency for _, answer in kept)
    size = sum(answer.size for _, answer in kept)
    queries = kept[0][1].relations if kept else []
    relations = []
    for index, (view, summed) in enumerate(zip(views, sums, strict=True)):
        rows = [Collocate(value, f, summed.totals[value], log_dice(f, summed.head_total, summed.totals[value]))
                for value, f in summed.f.items() if f >= min_freq]
        rows.sort(key=lambda c: (-c.log_dice, -c.f, c.value))
        relations.append(RelationSketch(
            view.name, summed.head_total, summed.instances, queries[index].queries if queries else [],
            rows[:limit] if limit is not None else rows, len(summed.f),
            summed.head_total / frequency if frequency else None))
    return WordSketch(headword, attribute, frequency, size, relations,
                      all(all(r.saved for r in answer.relations) for _, answer in kept),
                      [status.partition.id for status, _ in answered if status.failure is not None])
