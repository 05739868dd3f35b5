"""The node operations, declared once: each one's name, request model, response model and the check
of its answer against the request and the partition's size.

Everything else follows from this table: a node serves each operation at ``POST /v1/<name>``
(``cowbird.node.routes.operations`` makes the routes from it, ``cowbird.node.api.NodeApi`` answers
each), ``Partitions.call`` is how the core asks a partition for one (over HTTP by the front end's
``NodeClient``, in-process by ``cowbird.node.local.LocalPartitions``), and the front end checks
every answer with the operation's ``check`` before believing it. Only the export stream and a hit's
context are not in the table: one streams lines (each checked as it comes, :func:`check_lines`),
the other is a GET of one line.

A check raises :class:`ImpossibleAnswer` saying what is wrong with the answer; the front end then
counts the node as failed for that partition and asks a replica.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, Literal, Protocol, TypeVar

from pydantic import BaseModel

from cowbird.core import wire
from cowbird.core.analysis_merge import MergeKey

Rq = TypeVar("Rq", bound=BaseModel)
Rs = TypeVar("Rs", bound=BaseModel)


class ImpossibleAnswer(Exception):
    """A node's answer that cannot be true of the request it answers (or of the partition)."""


def expect(condition: bool, problem: str) -> None:
    """Refuse the answer unless ``condition`` holds: ``problem`` says what the answer does wrong."""
    if not condition:
        raise ImpossibleAnswer(f"answer refused: it {problem}")


@dataclass(frozen=True, eq=False)
class Operation(Generic[Rq, Rs]):
    """One operation of the node API. ``size`` in ``check`` is the partition's tokens (from the
    manifest, not from the node)."""

    name: str
    request: type[Rq]
    response: type[Rs]
    check: Callable[[Rq, Rs, int], None]
    summary: str
    kind: Literal["queries", "analyses"] = "analyses"
    counts_hits: bool = False  # the answer's ``total`` is the partition's hits (the node logs it)

    def __repr__(self) -> str:
        return f"Operation({self.name})"


# -- the checks -------------------------------------------------------------------------------------


def check_lines(lines: Iterable[wire.Line], size: int) -> None:
    """Hits inside the partition; region boundaries inside their lines, in order."""
    for line in lines:
        expect(0 <= line.match <= line.matchend < size,
               f"gives a hit at {line.match}-{line.matchend}, outside the partition")
        length = len(line.left) + len(line.keyword) + len(line.right)
        for name, at in line.breaks.items():
            expect(all(0 < k < length for k in at) and at == sorted(set(at)),
                   f"marks {name} boundaries outside its line or out of order")


def check_in_order(lines: list[wire.Line]) -> None:
    """Lines of hits in corpus order: each after the one before, none twice."""
    for before, after in zip(lines, lines[1:], strict=False):
        expect((before.match, before.matchend) < (after.match, after.matchend),
               f"sent hits out of order or twice ({before.match}-{before.matchend} then "
               f"{after.match}-{after.matchend})")


def check_sorted(lines: list[wire.Line], sort: wire.SortSpec) -> None:
    """Lines of sorted hits: each with its sort key, the keys in the order asked for (never one
    after a key it sorts before), each hit once."""
    expect(all(line.sort_key is not None for line in lines), "sent sorted hits without their sort keys")
    descending = tuple(d == "desc" for d in sort.direction.split(","))
    keys = [MergeKey(line.sort_key, descending) for line in lines]
    for k, (before, after) in enumerate(zip(keys, keys[1:], strict=False)):
        expect(not after < before, f"sent sorted hits out of order (line {k + 2} sorts before line {k + 1})")
    seen: dict[tuple[int, int], int] = {}
    for k, line in enumerate(lines):
        first = seen.setdefault((line.match, line.matchend), k)
        expect(first == k, f"sent the hit at {line.match}-{line.matchend} twice (lines {first + 1} and {k + 1})")


class _Answered(Protocol):
    """A request or an answer of a query on a partition."""

    @property
    def partition(self) -> str: ...
    @property
    def query(self) -> str: ...


def _same_query(request: _Answered, answer: _Answered) -> None:
    expect(answer.partition == request.partition and answer.query == request.query, "answered another request")


def _total(total: int, size: int) -> None:
    expect(0 <= total <= size, f"claims {total} hits")


def _count(request: wire.CountRequest, answer: wire.CountResponse, size: int) -> None:
    _same_query(request, answer)
    _total(answer.total, size)


def _estimate(request: wire.CountRequest, answer: wire.EstimateResponse, size: int) -> None:
    _same_query(request, answer)
    expect(answer.hits is None or 0 <= answer.hits <= size, f"estimates {answer.hits} hits")


def _page(request: wire.FirstRequest, answer: wire.HitsResponse, size: int) -> None:
    expect(answer.partition == request.partition and answer.query == request.query
           and answer.offset == request.offset, "answered another request")
    _total(answer.total, size)
    indices = request.indices if isinstance(request, wire.HitsRequest) else None
    wanted = len(indices) if indices is not None else max(0, min(request.limit, answer.total - request.offset))
    expect(len(answer.data) == wanted, f"sent {len(answer.data)} lines instead of {wanted}")
    check_lines(answer.data, size)
    if not isinstance(request, wire.HitsRequest) or request.sort is None:  # corpus order, each once
        check_in_order(answer.data)
    else:
        check_sorted(answer.data, request.sort)


_MATCH_SPAN = re.compile(r"(match|matchend)(\.\.(match|matchend))?")
"""A frequency span that every hit has (no target, keyword or offset that may fall outside the corpus)."""


def _frequency(request: wire.FrequencyRequest, answer: wire.FrequencyResponse, size: int) -> None:
    """Counts that add up: every count positive, values once, their sum the hits counted, counted
    and unset hits the total."""
    _same_query(request, answer)
    _total(answer.total, size)
    expect(len(answer.values) == len(answer.counts), "gives values and counts of different lengths")
    expect(all(c > 0 for c in answer.counts), "gives counts that are not positive")
    expect(len(set(answer.values)) == len(answer.values), "gives a value twice")
    expect(answer.counted >= 0 and answer.unset >= 0 and answer.counted + answer.unset == answer.total,
           f"counts {answer.counted} + {answer.unset} hits of {answer.total}")
    listed = sum(answer.counts)
    expect(listed == answer.counted if not answer.truncated else listed <= answer.counted,
           f"gives counts summing to {listed} for {answer.counted} hits counted")
    expect(answer.distinct >= len(answer.values) and (answer.truncated or answer.distinct == len(answer.values)),
           "gives a wrong number of distinct values")
    spans = (request.on or "match..matchend").replace(" ", "").split(",")
    if all(_MATCH_SPAN.fullmatch(span) for span in spans):  # every hit has its match and matchend
        expect(answer.unset == 0, f"counts {answer.unset} hits without the match they all have")


def _distribution(request: wire.DistributionRequest, answer: wire.DistributionResponse, size: int) -> None:
    """Hits per value that add up to the total, subcorpora inside the partition."""
    _same_query(request, answer)
    _total(answer.total, size)
    columns = (answer.hits, answer.regions_with_hits, answer.tokens, answer.regions)
    expect(all(len(c) == len(answer.values) for c in columns), "gives columns of different lengths")
    expect(len(set(answer.values)) == len(answer.values), "gives a value twice")
    expect(all(v >= 0 for c in columns for v in c) and answer.outside >= 0, "gives negative counts")
    listed = sum(answer.hits) + answer.outside
    expect(listed == answer.total if not answer.truncated else listed <= answer.total,
           f"gives hits summing to {listed} of {answer.total}")
    expect(all(h <= t and w <= r <= t for h, w, t, r in zip(answer.hits, answer.regions_with_hits, answer.tokens,
                                                             answer.regions, strict=True)),
           "gives more hits or regions than its subcorpus holds")
    expect(sum(answer.tokens) <= size, "gives subcorpora larger than the partition")


def _cooccurrence(request: wire.CooccurrenceRequest, answer: wire.CooccurrenceResponse, size: int) -> None:
    """Co-occurrences inside the windows, marginals inside the partition."""
    _same_query(request, answer)
    _total(answer.total, size)
    columns = (answer.f, answer.marginal, answer.in_nodes)
    expect(all(len(c) == len(answer.values) for c in columns), "gives columns of different lengths")
    expect(len(set(answer.values)) == len(answer.values), "gives a value twice")
    expect(answer.size == size if not request.filters else 0 <= answer.size <= size,
           f"gives the partition {answer.size} tokens")
    expect(0 <= answer.context_tokens <= answer.size and 0 <= answer.node_tokens <= answer.size,
           "gives windows larger than the partition")
    expect(all(f >= 0 and i >= 0 and f + i <= m <= answer.size
               for f, m, i in zip(answer.f, answer.marginal, answer.in_nodes, strict=True)),
           "gives co-occurrences beyond the collocates' frequencies")
    in_windows, in_hits = sum(answer.f), sum(answer.in_nodes)
    expect(in_windows <= answer.context_tokens and in_hits <= answer.node_tokens,
           "gives more co-occurrences than its windows hold")
    # each position of a window or a hit has one value: untruncated, the rows add up to the positions
    expect(answer.truncated or (in_windows == answer.context_tokens and in_hits == answer.node_tokens),
           f"gives co-occurrences summing to {in_windows} in {answer.context_tokens} window positions and "
           f"{in_hits} in {answer.node_tokens} hit positions")
    expect(all(f + i > 0 for f, i in zip(answer.f, answer.in_nodes, strict=True)), "lists a value it never found")
    expect(sum(answer.marginal) <= answer.size, "gives marginals summing to more than the partition")
    expect((answer.total == 0) == (answer.node_tokens == 0),
           f"gives {answer.node_tokens} tokens in {answer.total} hits")
    expect(answer.context_tokens <= answer.total * (request.left + request.right),
           f"gives {answer.context_tokens} window positions around {answer.total} hits")
    expect(answer.context_tokens + answer.node_tokens <= answer.size, "gives windows larger than the partition")
    regions = answer.text_regions
    expect(not answer.texts or (len(answer.texts) == len(answer.edge_texts) == len(answer.values)
                                and regions is not None), "gives texts not one a value")
    expect(all(0 <= t <= min(f, regions or 0) and len(e) <= t and all(0 <= r < (regions or 0) for r in e)
               for t, e, f in zip(answer.texts, answer.edge_texts, answer.f, strict=False)),
           "gives a value more texts than its co-occurrences or the partition hold")
    expect(not answer.spilled_texts or len(answer.spilled_texts) == len(answer.spilled),
           "gives texts not one a spilled position")


def _dispersion(request: wire.DispersionRequest, answer: wire.DispersionResponse, size: int) -> None:
    _same_query(request, answer)
    _total(answer.total, size)
    expect(len(answer.bins) == request.bins and sum(answer.bins) == answer.total
           and all(b >= 0 for b in answer.bins)
           and 0 <= answer.parts_with_hits <= min(answer.parts, answer.total)
           and 0 <= answer.parts <= size and 0 <= answer.smallest_part <= size
           and 0 <= answer.dp_sum <= 2.0 + 1e-9,  # shares of the corpus: at most 1 + 1
           "gives an impossible dispersion")


def _before(hit: tuple[MergeKey, int], bound: wire.SortBound, descending: tuple[bool, ...]) -> bool:
    """Whether a hit (its key, its partition's base) of another partition than the bound's sorts before it."""
    key = MergeKey(bound.key, descending)
    return hit[0] < key or (hit[0] == key and hit[1] < bound.base)


def _sort_keys(request: wire.SortKeysRequest, answer: wire.SortKeysResponse, size: int) -> None:
    """As many keys as asked for, in the order asked for (a partition's keys merge with the others'),
    within the bounds asked for."""
    _same_query(request, answer)
    _total(answer.total, size)
    if request.ranks is not None:
        expect(answer.offset == 0 and answer.end is None and len(answer.keys) == len(request.ranks),
               f"sent {len(answer.keys)} sort keys instead of {len(request.ranks)}")
    else:
        end = answer.total if answer.end is None else answer.end
        expect((answer.end is None) == (request.stop is None) and 0 <= answer.offset <= answer.total
               and 0 <= end <= answer.total, "placed a bound outside its hits")
        expect(request.start is not None or answer.offset == request.offset, "answered from another offset")
        expected = max(0, min(request.limit, end - answer.offset))
        expect(len(answer.keys) == expected, f"sent {len(answer.keys)} sort keys instead of {expected}")
    descending = tuple(d == "desc" for d in request.sort.direction.split(","))
    keys = [MergeKey(key, descending) for key in answer.keys]
    expect(all(not after < before for before, after in zip(keys, keys[1:], strict=False)),
           "sent sort keys out of order")
    base = request.sort.base
    if keys and request.start is not None and request.start.base != base:  # the first key is not before start
        expect(not _before((keys[0], base), request.start, descending), "sent keys before its start")
    if keys and request.stop is not None and request.stop.base != base:  # the last key is before stop
        expect(_before((keys[-1], base), request.stop, descending), "sent keys past its stop")


def _marginals(request: wire.MarginalsRequest, answer: wire.MarginalsResponse, size: int) -> None:
    expect(answer.partition == request.partition and len(answer.frequencies) == len(request.values),
           "answered another request")
    expect(all(0 <= f <= size for f in answer.frequencies), "claims impossible frequencies")


def _ngrams(request: wire.NgramRequest, answer: wire.NgramResponse, size: int) -> None:
    rows = [tuple(t) for t in answer.row_tokens]
    expect(answer.partition == request.partition and len(answer.counts) == len(request.values)
           and 0 <= answer.ngrams <= answer.tokens <= size
           and len(rows) <= answer.types <= answer.ngrams
           and len(rows) == len(answer.row_counts) and len(set(rows)) == len(rows)
           and all(len(t) == request.n for t in rows)
           and all(0 < c <= answer.ngrams for c in answer.row_counts)
           and sum(answer.row_counts) <= answer.ngrams
           and all(answer.row_counts[i] >= answer.row_counts[i + 1] for i in range(len(rows) - 1))
           and all(0 <= c <= answer.ngrams for c in answer.counts), "gives an impossible word list")


def _subcorpus(request: wire.SubcorpusRequest, answer: wire.SubcorpusResponse, size: int) -> None:
    expect(answer.partition == request.partition and 0 <= answer.tokens <= size
           and len(answer.values) == len(answer.value_tokens) == len(answer.value_regions)
           and len(set(answer.values)) == len(answer.values)
           and all(0 < t <= answer.tokens for t in answer.value_tokens)
           and sum(answer.value_tokens) <= answer.tokens  # one attribute's regions do not overlap
           and all(1 <= r <= t for r, t in zip(answer.value_regions, answer.value_tokens, strict=True))
           and (answer.texts is None) == (answer.all_texts is None) == (request.texts is None)
           and 0 <= (answer.texts or 0) <= min(answer.tokens, answer.all_texts or 0)
           and (answer.all_texts or 0) <= size,
           "gives an impossible subcorpus size")


def _sketch(request: wire.SketchRequest, answer: wire.SketchResponse, size: int) -> None:
    """One answer per relation, rows that add up: no count above the relation's instances, none
    negative, each collocate once, the headword's rows within its total."""
    expect(answer.partition == request.partition and len(answer.relations) == len(request.relations)
           and (answer.size == size if not request.filters else 0 <= answer.size <= size)
           and 0 <= answer.frequency <= answer.size
           and [len(q) for q in answer.tables] == [len(t.queries) for t in request.tables], "answered another request")
    for asked, rows in zip(request.relations, answer.relations, strict=True):
        expect(len(rows.asked) == len(asked.totals_of)
               and len(rows.values) == len(rows.f) == len(rows.totals)
               and len(set(rows.values)) == len(rows.values)
               and 0 <= rows.instances <= 2 * size * size
               and all(0 < f <= t <= rows.instances for f, t in zip(rows.f, rows.totals, strict=True))
               and sum(rows.f) == rows.head_total <= rows.instances
               and ((asked.headword or request.headword) is not None or not rows.values)
               and all(0 <= t <= rows.instances for t in rows.asked),
               "gives an impossible word sketch")


# -- the table --------------------------------------------------------------------------------------

COUNT = Operation("count", wire.CountRequest, wire.CountResponse, _count, "The query's hits on the partition.",
                  kind="queries", counts_hits=True)
ESTIMATE = Operation("estimate", wire.CountRequest, wire.EstimateResponse, _estimate,
                     "What the query would find and cost on the partition, from its plan and a small sample of it.",
                     kind="queries")
FIRST = Operation("first", wire.FirstRequest, wire.HitsResponse, _page,
                  "The first hits of a partition before the rest is counted (the front end's progressive preview).",
                  kind="queries", counts_hits=True)
HITS = Operation("hits", wire.HitsRequest, wire.HitsResponse, _page,
                 "The hits offset .. offset + limit (or at indices), in corpus order or sorted, with the total.",
                 kind="queries")
FREQUENCY = Operation("frequency", wire.FrequencyRequest, wire.FrequencyResponse, _frequency,
                      "How often each value of a p-attribute occurs over a span of the hits (CQP's count A by ATT).")
DISPERSION = Operation("dispersion", wire.DispersionRequest, wire.DispersionResponse, _dispersion,
                       "This partition's part of Gries' DP over the regions of an s-attribute, and its hits in "
                       "equal stretches of the corpus.")
DISTRIBUTION = Operation("distribution", wire.DistributionRequest, wire.DistributionResponse, _distribution,
                         "Hits per value of an s-attribute, with each value's size (CQP's group A match ATT).")
COOCCURRENCE = Operation("cooccurrence", wire.CooccurrenceRequest, wire.CooccurrenceResponse, _cooccurrence,
                         "Co-occurrence counts in windows around the hits, with each collocate's marginal "
                         "frequencies.")
MARGINALS = Operation("marginals", wire.MarginalsRequest, wire.MarginalsResponse, _marginals,
                      "Frequencies of values of a p-attribute in the partition: collocates' marginals where they "
                      "do not co-occur (their sum over partitions is the corpus's frequency).")
SORT_KEYS = Operation("sortkeys", wire.SortKeysRequest, wire.SortKeysResponse, _sort_keys,
                      "The sort keys of the hits at sorted ranks offset .. offset + limit: what the front end "
                      "needs to merge partitions' sorted hits and page at any offset.")
NGRAMS = Operation("ngrams", wire.NgramRequest, wire.NgramResponse, _ngrams,
                   "A word list or n-gram list of the partition or of its part in a subcorpus (counted once, kept "
                   "for the requests that follow): the frequent rows, the top rows, and the counts of given n-grams.")
SUBCORPUS = Operation("subcorpus", wire.SubcorpusRequest, wire.SubcorpusResponse, _subcorpus,
                      "The partition's part in a subcorpus (the regions its filters choose): its tokens and texts, "
                      "and an s-attribute's values in it with their tokens and regions (the subcorpus picker's "
                      "list).")
SKETCH = Operation("sketch", wire.SketchRequest, wire.SketchResponse, _sketch,
                   "A headword's collocates in grammatical relations (a word sketch's counts on the partition), "
                   "from the relation tables cowbird sketches build saved, or counted from the relations' "
                   "queries; and the totals of given collocates.")

OPERATIONS: tuple[Operation[Any, Any], ...] = (
    COUNT, ESTIMATE, FIRST, HITS, FREQUENCY, DISPERSION, DISTRIBUTION, COOCCURRENCE, MARGINALS, SORT_KEYS,
    NGRAMS, SUBCORPUS, SKETCH,
)
"""Every operation of the table, in the order the node's API documentation lists them."""
