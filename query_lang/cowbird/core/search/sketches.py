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

The thesaurus (Rychlý and Kilgarriff 2007, "An efficient algorithm for building a distributional
thesaurus (and other Sketch Engine developments)", ACL demo session; Sketch Engine's thesaurus)
compares words by their contexts: a context of *w* is a relation and collocate (R, y) with
f(w, R, y) ≥ ``min_freq`` and a positive logDice A(w, R, y). The similarity of *x* and *w* is

    sum over the contexts both have of  A(x, R, y) + A(w, R, y) - (A(x, R, y) - A(w, R, y))² / 50
    ---------------------------------------------------------------------------------------------
    sum of A(x, R, y) over the contexts of x  +  sum of A(w, R, y) over the contexts of w

computed from the counts summed over every partition (never per partition).
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field, replace

from cowbird.core.off_loop import off_loop
from cowbird.core.operations import SKETCH
from cowbird.core.search.counts import Counts
from cowbird.core.search.partitions import P, PartitionFailure, PartitionStatus, Statuses, TimeLimit
from cowbird.core.search.query import CheckedQuery
from cowbird.core.wire import (
    MAX_SKETCH_RELATIONS,
    MAX_SKETCH_TABLES,
    SketchRelation,
    SketchRequest,
    SketchResponse,
    SketchTable,
    Strategy,
    json_pieces,
)
from cowbird.query.sketch_grammar import MATCHING_STRATEGY, View

STRATEGY: Strategy = "traditional"
assert STRATEGY == MATCHING_STRATEGY  # the relation queries' strategy (``sketch_grammar``), typed
REQUEST_BYTES = 40 * 1024
"""What one sketch request asks a partition at most, in bytes of JSON (its tables, relations and the
collocates whose totals it asks): a node takes request bodies of 64 KB by default."""
CANDIDATES_AT_ONCE = 25
"""Words a thesaurus scores in its first round (their whole sketches asked at once); each round after
scores as many as all the rounds before."""


def _agreement(mine: float, theirs: float) -> float:
    """A shared context's weight in the thesaurus: both scores, less their squared difference over 50."""
    return mine + theirs - (mine - theirs) ** 2 / 50


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


@dataclass(frozen=True)
class Similar:
    word: str
    score: float
    shared: int  # contexts both have


@dataclass
class Thesaurus:
    """The words most like the headword: ``contexts`` it has (with a positive logDice), their sum
    ``own``, the words that share one (``candidates``) and the most similar of them."""

    headword: str
    frequency: int
    contexts: int
    own: float
    similar: list[Similar]
    candidates: int


@dataclass(frozen=True)
class _Ask:
    """A relation asked of every partition: the table it reads (an index into the lookup's tables),
    whether the headword is the table's collocate, its headword (None: the lookup's)."""

    table: int
    swapped: bool
    headword: str | None = None


def _pieces(tables: list[SketchTable], items: list[tuple[_Ask, list[str]]], budget: int = REQUEST_BYTES,
            ) -> list[tuple[list[int], list[SketchRelation]]]:
    """The relations asked (each with the collocates whose totals it asks) in requests a node takes:
    at most ``budget`` bytes of JSON and ``MAX_SKETCH_RELATIONS`` relations each, every request naming
    only the tables its relations read, once each (their indices in ``tables``; the relations read them
    by their place in the request)."""
    pieces: list[tuple[list[int], list[SketchRelation]]] = []
    named: dict[int, int] = {}
    relations: list[SketchRelation] = []
    size = 0
    sizes = [len(table.model_dump_json()) + 2 for table in tables]
    for ask, totals_of in items:
        new_table = ask.table not in named
        # {"table":N,"swapped":false,"headword":...,"totals_of":[...]}, as JSON at most (escaped)
        cost = 60 + len(json.dumps(ask.headword)) + len(json.dumps(totals_of)) + (sizes[ask.table] if new_table else 0)
        if relations and (size + cost > budget or len(relations) == MAX_SKETCH_RELATIONS
                          or (new_table and len(named) == MAX_SKETCH_TABLES)):
            pieces.append((list(named), relations))
            if not new_table:
                cost += sizes[ask.table]
            named, relations, size = {}, [], 0
        if ask.table not in named:
            named[ask.table] = len(named)
        # made here from checked values: not validated again (the node validates the request it gets)
        relations.append(SketchRelation.model_construct(table=named[ask.table], swapped=ask.swapped,
                                                        headword=ask.headword, totals_of=totals_of))
        size += cost
    if relations:
        pieces.append((list(named), relations))
    return pieces


@dataclass
class _Sums:
    f: dict[str, int] = field(default_factory=dict)
    totals: dict[str, int] = field(default_factory=dict)
    head_total: int = 0
    instances: int = 0


class Sketches(Counts[P]):
    """Word sketches of headwords over the corpus's partitions; ``relations`` are the queries of each
    view (filters added: a subcorpus's sketch, whose headword frequency and size the nodes count in
    the subcorpus of the search's query's filters)."""

    async def sketch(self, headword: str, attribute: str, views: list[View], relations: list[list[CheckedQuery]],
                     min_freq: int = 1, limit: int | None = None) -> tuple[Statuses[P], WordSketch]:
        """The headword's sketch in the given views (``relations[i]``: view i's queries, checked, as the
        nodes run them: their text goes on the wire, nothing is parsed again)."""
        tables = _tables(views, relations)
        asks = [_Ask(index, view.swapped) for index, view in enumerate(views)]
        answered, sums = await self._lookups(attribute, tables, asks, headword)

        def merged() -> WordSketch:
            return _merged(headword, attribute, views, answered, sums, min_freq, limit)

        return [s for s, _ in answered], await off_loop(merged)

    async def thesaurus(self, headword: str, attribute: str, views: list[View], relations: list[list[CheckedQuery]],
                        min_freq: int = 1, limit: int = 25) -> tuple[Statuses[P], Thesaurus]:
        """The words whose sketches are most like the headword's (:func:`similarity`), the ``limit``
        most similar exactly. A candidate's score is at most its shared contexts' sum over the headword's
        own sum plus the candidate's logDice in those shared contexts (its own sum has them and more):
        candidates are scored (their whole sketches asked) in the order of that bound, until it cannot
        reach the last place any more."""
        statuses, mine = await self.sketch(headword, attribute, views, relations, min_freq)
        contexts = [(index, c) for index, r in enumerate(mine.relations) for c in r.collocates if c.log_dice > 0]
        own = sum(c.log_dice for _, c in contexts)
        # the words sharing a context (R, y): the headwords of y in R's other direction
        tables = _tables(views, relations)
        asks = [_Ask(index, not views[index].swapped, c.value) for index, c in contexts]
        _, sharing = await self._lookups(attribute, tables, asks) if asks else ([], [])
        shared: dict[str, list[float]] = {}  # word: [sum of the agreements, contexts, its logDice in them]
        for (_, c), summed in zip(contexts, sharing, strict=True):
            for word, f in summed.f.items():
                score = log_dice(f, summed.totals[word], summed.head_total) if f >= min_freq else 0.0
                if word != headword and score > 0:
                    shared.setdefault(word, [0.0, 0.0, 0.0])
                    shared[word][0] += _agreement(c.log_dice, score)
                    shared[word][1] += 1
                    shared[word][2] += score
        # (the candidate's logDice in the shared contexts, a little less: summed in another order than
        # its whole sketch's, the float sums may differ in their last bits)
        bounds = {word: sums[0] / (own + sums[2] * (1 - 1e-9)) for word, sums in shared.items()}
        ranked = sorted(shared.items(), key=lambda item: (-bounds[item[0]], item[0]))
        found: list[Similar] = []
        start = 0
        while start < len(ranked):
            if len(found) >= limit and bounds[ranked[start][0]] <= found[limit - 1].score:
                break  # no word left can score above the last place: its bound is below it
            batch = ranked[start : start + max(CANDIDATES_AT_ONCE, start)]  # at most twice as many each round
            if len(found) >= limit:  # only those whose bound still reaches the last place
                batch = [item for item in batch if bounds[item[0]] > found[limit - 1].score]
            start += len(batch)
            asks = [_Ask(index, view.swapped, word) for word, _ in batch for index, view in enumerate(views)]
            _, sums = await self._lookups(attribute, tables, asks)
            for number, (word, (sum_shared, contexts_shared, _)) in enumerate(batch):
                theirs = sums[number * len(views) : (number + 1) * len(views)]
                total = sum(score for summed in theirs for value, f in summed.f.items() if f >= min_freq
                            for score in [log_dice(f, summed.head_total, summed.totals[value])] if score > 0)
                found.append(Similar(word, sum_shared / (own + total), int(contexts_shared)))
            found.sort(key=lambda similar: (-similar.score, similar.word))
        return statuses, Thesaurus(headword, mine.frequency, len(contexts), own, found[:limit], len(ranked))

    async def _lookups(self, attribute: str, tables: list[SketchTable], asks: list[_Ask], headword: str | None = None,
                       ) -> tuple[list[tuple[PartitionStatus[P], SketchResponse | None]], list[_Sums]]:
        """Each relation asked, with its headword (``headword``, or the relation's own), on every partition,
        its counts summed: in requests a node takes, then the totals of collocates found elsewhere. Each
        partition's answer has the canonical queries of every table asked (``tables``)."""
        pieces = _pieces(tables, [(ask, []) for ask in asks])

        async def call(partition: P, time: TimeLimit) -> SketchResponse:
            answers = []
            for named, relations in pieces:
                request = SketchRequest(partition=partition.id, attribute=attribute, headword=headword,
                                        tables=[tables[index] for index in named], relations=relations,
                                        strategy=STRATEGY, hard_boundary=self.query.hard_boundary,
                                        filters=self.query.subcorpus)
                answers.append(await self.partitions.call(partition, SKETCH, request, time))
            canonical = [table.queries for table in tables]
            for (named, _), answer in zip(pieces, answers, strict=True):
                for index, texts in zip(named, answer.tables, strict=True):
                    canonical[index] = texts
            return SketchResponse(partition=partition.id, size=answers[0].size, frequency=answers[0].frequency,
                                  tables=canonical, relations=[rows for answer in answers for rows in answer.relations],
                                  elapsed_ms=sum(answer.elapsed_ms for answer in answers))

        answered = await self._each(call, self.time_limit())
        sums = [_Sums() for _ in asks]
        for _, answer in answered:
            if answer is None:
                continue
            for rows, summed in zip(answer.relations, sums, strict=True):
                for value, f in zip(rows.values, rows.f, strict=True):
                    summed.f[value] = summed.f.get(value, 0) + f
        await self._complete_totals(answered, tables, asks, attribute, sums)
        self._check_some_answered([status for status, _ in answered])
        return answered, sums

    async def _complete_totals(self, answered: list[tuple[PartitionStatus[P], SketchResponse | None]],
                               tables: list[SketchTable], asks: list[_Ask], attribute: str, sums: list[_Sums]) -> None:
        """Ask each partition the totals of the collocates other partitions found and it did not, in
        requests a node takes (its request bodies are limited)."""
        # (relation, some of its missing collocates) items, packed into requests a node takes
        requests: list[tuple[PartitionStatus[P], list[tuple[int, list[str]]], list[int], list[SketchRelation]]] = []
        for status, answer in answered:
            if answer is None:
                continue
            items = [(index, piece) for index, (rows, summed) in enumerate(zip(answer.relations, sums, strict=True))
                     if len(summed.f) > len(rows.values)  # else it found every collocate the others did
                     for piece in json_pieces(sorted(set(summed.f).difference(rows.values)), REQUEST_BYTES // 2)]
            asked = _pieces(tables, [(replace(asks[index], headword=None), values) for index, values in items])
            at = 0
            for named, relations in asked:
                requests.append((status, items[at : at + len(relations)], named, relations))
                at += len(relations)
        time = self.time_limit()

        async def ask(status: PartitionStatus[P], items: list[tuple[int, list[str]]], named: list[int],
                      relations: list[SketchRelation]) -> SketchResponse:
            request = SketchRequest(partition=status.partition.id, attribute=attribute, headword=None,
                                    tables=[tables[index] for index in named], relations=relations,
                                    strategy=STRATEGY, hard_boundary=self.query.hard_boundary,
                                    filters=self.query.subcorpus)
            return await self.partitions.call(status.partition, SKETCH, request, time)

        answers = await self.partitions.gather([functools.partial(ask, *request) for request in requests])
        extra: dict[tuple[int, int], dict[str, int]] = {}
        for (status, items, _, _), reply in zip(requests, answers, strict=True):
            if isinstance(reply, PartitionFailure):
                status.failure = reply  # without these totals none of its counts are in
                status.total = None
            elif status.failure is None:
                for (index, values), rows in zip(items, reply.relations, strict=True):
                    extra.setdefault((id(status), index), {}).update(zip(values, rows.asked, strict=True))
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
    queries = kept[0][1].tables if kept else []
    relations = []
    for index, (view, summed) in enumerate(zip(views, sums, strict=True)):
        rows = [Collocate(value, f, summed.totals[value], log_dice(f, summed.head_total, summed.totals[value]))
                for value, f in summed.f.items() if f >= min_freq]
        rows.sort(key=lambda c: (-c.log_dice, -c.f, c.value))
        relations.append(RelationSketch(
            view.name, summed.head_total, summed.instances, queries[index] if queries else [],
            rows[:limit] if limit is not None else rows, len(summed.f),
            summed.head_total / frequency if frequency else None))
    return WordSketch(headword, attribute, frequency, size, relations,
                      all(all(r.saved for r in answer.relations) for _, answer in kept),
                      [status.partition.id for status, _ in answered if status.failure is not None])


def _tables(views: list[View], relations: list[list[CheckedQuery]]) -> list[SketchTable]:
    """The table each view reads: its relation's queries as the nodes run them, and its symmetry."""
    return [SketchTable(queries=[checked.cqp for checked in queries], symmetric=view.relation.symmetric)
            for view, queries in zip(views, relations, strict=True)]
