"""Analyses of one partition's hits: frequency breakdowns, distributions, co-occurrence counts, sort orders.

Both engines hold a query's hits as arrays (``Matches``) over the same memory-mapped store, so
every analysis here serves both. Each returns counts that add up across partitions — values with
their frequencies, regions with their sizes, collocates with their marginals — so the front end's
sums are the whole corpus's numbers (``cowbird.core.analysis_merge``).

CQP's rules are kept where CQP has them (``cqp/ranges.c``): a span runs from its first anchor to
its second, backwards if the second comes first; positions past the corpus's edges are clamped to
its first or last token; ``%c`` is GLib's case folding and ``%d`` strips combining marks (NFD,
marks dropped, NFC) before it; values compare as code points (``strcmp`` on UTF-8); a longer
sequence sorts after its own prefix.
"""

from __future__ import annotations

import bisect
import threading
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from cowbird.core.analysis_merge import MergeKey
from cowbird.core.analysis_spec import LEVEL_SEPARATOR, Anchor, Fold, SortKey, SortLevel, Span
from cowbird.core.errors import LimitExceeded, UnknownAttribute
from cowbird.engines import Deadline
from cowbird.engines.native.lexicon import LexiconIndex, match_table, strip_diacritics
from cowbird.engines.results import Matches
from cowbird.query import RegexValue
from cowbird.query.pcre import compile_pcre
from cowbird.store import CwbCorpus, PositionalAttribute, StructuralAttribute

Ints = npt.NDArray[np.int64]

CHUNK_POSITIONS = 4 * 1024 * 1024
"""Positions expanded at once when windows or matches are counted (bounds the memory of a count)."""

MAX_SORT_CELLS = 64 * 1024 * 1024
"""Hits × tokens a sort key may span (the key table's cells, 8 bytes each); a frequency breakdown's
spans may hold as many tokens."""

NO_DEADLINE = Deadline()
"""For callers without a time budget (the command line): checks that never stop anything."""


def fold_text(text: str, fold: Fold) -> str:
    """A value as CQP's flags see it: ``d`` strips combining marks first, then ``c`` case-folds."""
    if "d" in fold:
        text = strip_diacritics(text)
    if "c" in fold:
        text = text.casefold()
    return text


# -- per-attribute tables, computed once per opened attribute ---------------------------------------

@dataclass(frozen=True)
class Groups:
    """Lexicon ids grouped by their folded string: ``of_id[id]`` is the group, ``names[group]`` its string;
    ``rank[group]`` orders the groups by their string (code points)."""

    of_id: npt.NDArray[np.int32]
    names: list[str]
    rank: npt.NDArray[np.int32]


_TABLES: weakref.WeakKeyDictionary[object, dict[object, object]] = weakref.WeakKeyDictionary()
_TABLES_LOCK = threading.Lock()


def _tables(owner: object) -> dict[object, object]:
    with _TABLES_LOCK:
        tables = _TABLES.get(owner)
        if tables is None:
            tables = _TABLES[owner] = {}
        return tables


def groups(attribute: PositionalAttribute, fold: Fold) -> Groups:
    """The attribute's lexicon grouped by folded string (no fold: one group per id)."""
    tables = _tables(attribute)
    cached = tables.get(("groups", fold))
    if isinstance(cached, Groups):
        return cached
    strings = attribute.strings
    if fold:
        index: dict[str, int] = {}
        of_id = np.fromiter((index.setdefault(fold_text(s, fold), len(index)) for s in strings),
                            dtype=np.int32, count=len(strings))
        names = list(index)
    else:
        of_id = np.arange(len(strings), dtype=np.int32)
        names = strings
    order = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), dtype=np.int32)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(names), dtype=np.int32)
    result = Groups(of_id, names, rank)
    tables[("groups", fold)] = result
    return result


@dataclass(frozen=True)
class ValueTable:
    """An s-attribute's regions grouped by value: ``of_region[r]``, ``names[g]``, and per value its size
    in tokens and number of regions."""

    of_region: npt.NDArray[np.int64]
    names: list[str]
    tokens: Ints
    regions: Ints


def value_table(attribute: StructuralAttribute) -> ValueTable:
    tables = _tables(attribute)
    cached = tables.get("values")
    if isinstance(cached, ValueTable):
        return cached
    offsets = np.asarray(attribute.value_offsets, dtype=np.int64)
    distinct, inverse = np.unique(offsets, return_inverse=True)
    index: dict[str, int] = {}  # two offsets with the same string are one value
    remap = np.fromiter((index.setdefault(attribute.value_at_offset(int(o)), len(index)) for o in distinct),
                        dtype=np.int64, count=len(distinct))
    of_region = remap[inverse] if len(offsets) else np.zeros(0, dtype=np.int64)
    lengths = np.asarray(attribute.ends, dtype=np.int64) - np.asarray(attribute.starts, dtype=np.int64) + 1
    tokens = np.bincount(of_region, weights=lengths, minlength=len(index)).round().astype(np.int64)
    regions = np.bincount(of_region, minlength=len(index)).astype(np.int64)
    result = ValueTable(of_region, list(index), tokens, regions)
    tables["values"] = result
    return result


# -- positions -------------------------------------------------------------------------------------

def _p(corpus: CwbCorpus, name: str) -> PositionalAttribute:
    return corpus.p_attribute(name)


def _s_with_values(corpus: CwbCorpus, name: str, parameter: str) -> StructuralAttribute:
    attribute = corpus.s_attribute(name)
    if not attribute.has_values:
        with_values = ", ".join(corpus.meta_attribute_names) or "none"
        raise UnknownAttribute(f"{parameter}={name}: the regions of {name!r} carry no values; "
                               f"give one that does ({with_values})")
    return attribute


def anchor_positions(matches: Matches, anchor: Anchor, size: int) -> tuple[Ints, npt.NDArray[np.bool_]]:
    """Each hit's position for ``anchor``, clamped to the corpus as CQP does, and whether it is set
    (a hit without a target or keyword has no such position)."""
    base = {
        "match": matches.match, "matchend": matches.matchend, "target": matches.target, "keyword": matches.keywords
    }[anchor.name]
    base = np.asarray(base, dtype=np.int64)
    valid = base >= 0
    return np.clip(base + anchor.offset, 0, max(size - 1, 0)), valid


def span_positions(matches: Matches, span: Span, size: int) -> tuple[Ints, Ints, npt.NDArray[np.bool_]]:
    start, valid_start = anchor_positions(matches, span.start, size)
    end, valid_end = anchor_positions(matches, span.end, size)
    return start, end, valid_start & valid_end


def _sequences(start: Ints, end: Ints) -> Iterator[tuple[Ints, npt.NDArray[np.int64]]]:  # (n, length)
    """(hit indices, positions matrix) per distinct span length, at most ``CHUNK_POSITIONS`` positions
    at a time: row i holds the span of hit i in order."""
    step = np.where(end >= start, 1, -1).astype(np.int64)
    lengths = np.abs(end - start) + 1
    for length in np.unique(lengths).tolist():
        every = np.flatnonzero(lengths == length)
        rows = max(1, CHUNK_POSITIONS // length)
        for at in range(0, len(every), rows):
            which = every[at:at + rows]
            positions = start[which, None] + step[which, None] * np.arange(length, dtype=np.int64)[None, :]
            yield which, positions


def _value_bytes(p: PositionalAttribute, lengths: Ints, rows: int) -> int:
    """What the distinct values of spans of these lengths take at most, about: as many values as
    hits (at most ``rows``, and for one token at most the lexicon), each its tokens' average length."""
    if not len(lengths):
        return 0
    average = len(p.lexicon_bytes) / max(1, p.lexicon_size)  # a token's string with its terminating byte
    values = min(len(lengths), rows, p.lexicon_size if int(lengths.max()) == 1 else len(lengths))
    return int(values * float(lengths.mean()) * average)


# -- frequency -------------------------------------------------------------------------------------

@dataclass
class Frequencies:
    values: list[str]
    counts: list[int]
    hits: int  # hits counted (those with the span set)
    unset: int  # hits without a value (no target)
    distinct: int
    truncated: bool


def frequency(corpus: CwbCorpus, matches: Matches, attribute: str, span: Span, fold: Fold,
              max_rows: int, max_bytes: int = 1 << 62, deadline: Deadline = NO_DEADLINE) -> Frequencies:
    """How often each value (or sequence of values, joined by spaces) of ``attribute`` occurs over
    ``span`` of the hits — CQP's ``count A by ATT on SPAN %FOLD``. Bounded before it starts: the
    spans may hold as many tokens as a sort's, and their values are estimated to take at most
    ``max_bytes``; and while it runs, by those bytes and the ``deadline``."""
    p = _p(corpus, attribute)
    start, end, valid = span_positions(matches, span, corpus.size)
    start, end = start[valid], end[valid]
    lengths = np.abs(end - start) + 1
    cells = int(lengths.sum())
    if cells > MAX_SORT_CELLS:
        raise LimitExceeded(f"on={span}: the spans of the {len(start):,} hits hold {cells:,} tokens, more than a "
                            f"node counts at once ({MAX_SORT_CELLS:,}, as for sorting); count a narrower span or "
                            "narrow the query")
    estimate = _value_bytes(p, lengths, max_rows)
    if estimate > max_bytes:
        raise LimitExceeded(f"on={span}: the values of {len(start):,} hits over spans of up to "
                            f"{int(lengths.max())} tokens would take about {estimate / 2**20:,.0f} MB, more than a "
                            f"node answers ({max_bytes / 2**20:,.0f} MB); count a narrower span or narrow the query")
    table = groups(p, fold)
    counts: dict[str, int] = {}
    size = 0
    for _which, positions in _sequences(start, end):
        deadline.check()
        ids = table.of_id[np.asarray(p.ids_at(positions.ravel()), dtype=np.int64)].reshape(positions.shape)
        if positions.shape[-1] == 1:
            found = np.bincount(ids[:, 0], minlength=len(table.names))
            for group in np.flatnonzero(found).tolist():
                name = table.names[group]
                counts[name] = counts.get(name, 0) + int(found[group])
            continue
        rows, row_counts = np.unique(ids, axis=0, return_counts=True)
        for row, count in zip(rows.tolist(), row_counts.tolist(), strict=True):
            name = " ".join(table.names[g] for g in row)
            if name not in counts:
                size += len(name) + 16
                if size > max_bytes:
                    raise LimitExceeded(f"on={span}: the values of this breakdown take more than a node answers "
                                        f"({max_bytes / 2**20:,.0f} MB); count a narrower span or narrow the query")
            counts[name] = counts.get(name, 0) + int(count)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    kept = ordered[:max_rows]
    return Frequencies([v for v, _ in kept], [c for _, c in kept], int(len(start)), int((~valid).sum()),
                       len(ordered), len(ordered) > max_rows)


def frequency_levels(corpus: CwbCorpus, matches: Matches, levels: list[tuple[str, Span]], fold: Fold,
                     max_rows: int, max_bytes: int = 1 << 62, deadline: Deadline = NO_DEADLINE) -> Frequencies:
    """How often each combination of values occurs, one value per level (an attribute over a span:
    ``left1.word`` and ``right1.pos``), tab-joined — a breakdown by several keys at once. A hit counts
    when every level's span is set. One level is ``frequency``."""
    if len(levels) == 1:
        [(attribute, span)] = levels
        return frequency(corpus, matches, attribute, span, fold, max_rows, max_bytes, deadline)
    n = len(matches)
    valid = np.ones(n, dtype=bool)
    spans = []
    for attribute, span in levels:
        start, end, ok = span_positions(matches, span, corpus.size)
        valid &= ok
        spans.append((attribute, span, start, end))
    rows_set = np.flatnonzero(valid)
    codes: list[npt.NDArray[np.int64]] = []
    names: list[list[str]] = []
    estimate = 0
    for attribute, span, start, end in spans:
        p = _p(corpus, attribute)
        start, end = start[valid], end[valid]
        lengths = np.abs(end - start) + 1
        cells = int(lengths.sum())
        if cells > MAX_SORT_CELLS:
            raise LimitExceeded(f"on={span}: the spans of the {len(start):,} hits hold {cells:,} tokens, more than a "
                                f"node counts at once ({MAX_SORT_CELLS:,}); count a narrower span or narrow the query")
        estimate += _value_bytes(p, lengths, max_rows)
        if estimate > max_bytes:
            raise LimitExceeded(f"the values of {len(start):,} hits by {len(levels)} keys would take about "
                                f"{estimate / 2**20:,.0f} MB, more than a node answers ({max_bytes / 2**20:,.0f} MB); "
                                "count narrower spans or narrow the query")
        table = groups(p, fold)
        width = max(int(lengths.max()) if len(lengths) else 0, 1)
        matrix = np.full((len(rows_set), width), -1, dtype=np.int64)  # -1: the span has ended
        for which, positions in _sequences(start, end):
            deadline.check()
            ids = table.of_id[np.asarray(p.ids_at(positions.ravel()), dtype=np.int64)].reshape(positions.shape)
            matrix[which, : positions.shape[1]] = ids
        distinct, inverse = np.unique(matrix, axis=0, return_inverse=True)
        codes.append(np.asarray(inverse, dtype=np.int64).reshape(-1))
        names.append([" ".join(table.names[g] for g in row if g >= 0) for row in distinct.tolist()])
    deadline.check()
    if len(rows_set):
        combined, counts = np.unique(np.stack(codes, axis=1), axis=0, return_counts=True)
    else:
        combined, counts = np.zeros((0, len(levels)), dtype=np.int64), np.zeros(0, dtype=np.int64)
    found = [(LEVEL_SEPARATOR.join(names[k][code] for k, code in enumerate(row)), int(count))
             for row, count in zip(combined.tolist(), counts.tolist(), strict=True)]
    found.sort(key=lambda item: (-item[1], item[0]))
    kept = found[:max_rows]
    return Frequencies([v for v, _ in kept], [c for _, c in kept], int(len(rows_set)), int(n - len(rows_set)),
                       len(found), len(found) > max_rows)


# -- dispersion ------------------------------------------------------------------------------------

@dataclass
class PartDispersion:
    parts: int
    parts_with_hits: int
    smallest_part: int
    dp_sum: float
    bins: list[int]


def dispersion(corpus: CwbCorpus, matches: Matches, attribute: str, hits: int, corpus_size: int, base: int,
               bins: int, deadline: Deadline = NO_DEADLINE) -> PartDispersion:
    """This partition's share of Gries' DP over the regions of ``attribute`` (its tokens outside any
    region are one more part): the sum of |hits share - size share| over its parts, the shares being
    of the corpus's ``hits`` and ``corpus_size``; and its hits (by where they start) in ``bins``
    equal stretches of the corpus."""
    check_attributes(corpus, s_attribute=attribute)
    deadline.check()
    regions = corpus.s_attribute(attribute)
    starts, ends = np.asarray(regions.starts, dtype=np.int64), np.asarray(regions.ends, dtype=np.int64)
    sizes = ends - starts + 1
    positions = np.asarray(matches.match, dtype=np.int64)
    numbers = regions.region_numbers(positions)
    inside = numbers >= 0
    per_part = np.bincount(numbers[inside], minlength=len(sizes)) if len(sizes) else np.zeros(0, dtype=np.int64)
    outside_tokens = corpus.size - int(sizes.sum())
    outside_hits = int((~inside).sum())
    total = float(np.abs(per_part / hits - sizes / corpus_size).sum())
    if outside_tokens or outside_hits:
        total += abs(outside_hits / hits - outside_tokens / corpus_size)
    smallest = [int(sizes.min())] if len(sizes) else []
    if outside_tokens:
        smallest.append(outside_tokens)
    deadline.check()
    where = (positions + base) * bins // corpus_size
    counts = np.bincount(np.minimum(where, bins - 1), minlength=bins)
    return PartDispersion(len(sizes) + (1 if outside_tokens else 0), int((per_part > 0).sum()) + (1 if outside_hits
                          else 0), min(smallest, default=0), total, [int(c) for c in counts.tolist()])


# -- distribution ----------------------------------------------------------------------------------

@dataclass
class Distribution:
    values: list[str]
    hits: list[int]
    regions_with_hits: list[int]
    tokens: list[int]
    regions: list[int]
    outside: int  # hits outside every region of the attribute
    all_values: bool  # every value of the attribute is listed (else: those with hits)
    truncated: bool


ALL_VALUES_UP_TO = 10_000  # an attribute with more values (an id) lists only those with hits


def distribution(corpus: CwbCorpus, matches: Matches, attribute: str, max_rows: int,
                 deadline: Deadline = NO_DEADLINE) -> Distribution:
    """Hits per value of an s-attribute at the match, with each value's size (tokens, regions) and
    the regions with at least one hit — CQP's ``group A match ATT``. Every value is listed, also
    those without hits, when the attribute has at most ``ALL_VALUES_UP_TO`` (genres, years);
    an attribute with more (sentence or text ids) lists the values with hits, as CQP does."""
    deadline.check()
    s = _s_with_values(corpus, attribute, "by")
    table = value_table(s)
    numbers = s.region_numbers(np.asarray(matches.match, dtype=s.starts.dtype)) if len(s) else \
        np.full(len(matches), -1, dtype=np.int64)
    inside = numbers[numbers >= 0]
    hits = np.bincount(table.of_region[inside], minlength=len(table.names))
    hit_regions = np.unique(inside)
    regions_with_hits = np.bincount(table.of_region[hit_regions], minlength=len(table.names))
    all_values = len(table.names) <= min(max_rows, ALL_VALUES_UP_TO)  # a text type, not an id
    chosen = np.arange(len(table.names)) if all_values else np.flatnonzero(hits)
    truncated = len(chosen) > max_rows
    if truncated:
        chosen = chosen[np.argsort(-hits[chosen], kind="stable")[:max_rows]]
    return Distribution(
        [table.names[g] for g in chosen.tolist()], hits[chosen].tolist(), regions_with_hits[chosen].tolist(),
        table.tokens[chosen].tolist(), table.regions[chosen].tolist(), int(len(numbers) - len(inside)),
        all_values, truncated,
    )


# -- co-occurrence ---------------------------------------------------------------------------------

@dataclass
class Cooccurrence:
    values: list[str]
    f: list[int]  # co-occurrences: positions in some hit's window with this value
    marginal: list[int]  # the value's frequency in the partition
    in_nodes: list[int]  # the value's frequency inside the hits (match .. matchend)
    context_tokens: int  # positions in the windows (each once), hits excluded
    node_tokens: int  # positions inside hits (each once)
    size: int  # tokens in the partition
    truncated: bool


def _union(starts: Ints, ends: Ints) -> tuple[Ints, Ints]:
    """The union of intervals (ends included) as sorted, disjoint, non-adjacent intervals."""
    keep = ends >= starts
    starts, ends = starts[keep], ends[keep]
    if not len(starts):
        return starts, ends
    order = np.argsort(starts, kind="stable")
    starts, ends = starts[order], ends[order]
    reach = np.maximum.accumulate(ends)
    new = np.empty(len(starts), dtype=bool)
    new[0] = True
    new[1:] = starts[1:] > reach[:-1] + 1
    first = np.flatnonzero(new)
    last = np.append(first[1:] - 1, len(starts) - 1)
    return starts[first], reach[last]


def _expanded(starts: Ints, ends: Ints) -> Iterator[Ints]:
    """The positions of disjoint intervals, a chunk at a time."""
    lengths = ends - starts + 1
    at = 0
    while at < len(starts):
        stop = at + max(1, int(np.searchsorted(np.cumsum(lengths[at:]), CHUNK_POSITIONS, side="right")))
        chunk_lengths = lengths[at:stop]
        offsets = np.cumsum(chunk_lengths) - chunk_lengths
        total = int(chunk_lengths.sum())
        yield np.repeat(starts[at:stop] - offsets, chunk_lengths) + np.arange(total, dtype=np.int64)
        at = stop


def _outside(positions: Ints, starts: Ints, ends: Ints) -> Ints:
    """The positions not inside any of the disjoint intervals."""
    if not len(starts):
        return positions
    number = np.searchsorted(starts, positions, side="right") - 1
    inside = (number >= 0) & (ends[np.maximum(number, 0)] >= positions)
    return positions[~inside]


def _count_ids(p: PositionalAttribute, chunks: Iterator[Ints], deadline: Deadline = NO_DEADLINE) -> tuple[Ints, int]:
    totals = np.zeros(p.lexicon_size, dtype=np.int64)
    seen = 0
    for positions in chunks:
        deadline.check()
        if len(positions):
            totals += np.bincount(np.asarray(p.ids_at(positions), dtype=np.int64), minlength=p.lexicon_size)
            seen += len(positions)
    return totals, seen


def cooccurrence(corpus: CwbCorpus, matches: Matches, attribute: str, left: int, right: int,
                 within: str | None, max_rows: int, deadline: Deadline = NO_DEADLINE) -> Cooccurrence:
    """Co-occurrence counts in the windows around the hits, as cwb-ccc counts them: the windows'
    positions (``left`` tokens before each match, ``right`` after its matchend, within the region of
    ``within`` around it), each position once however many windows hold it, minus every position
    inside a hit; the marginal and in-hit frequency of each collocate come with it."""
    p = _p(corpus, attribute)
    match = np.asarray(matches.match, dtype=np.int64)
    matchend = np.asarray(matches.matchend, dtype=np.int64)
    low = np.zeros(len(match), dtype=np.int64)
    high = np.full(len(match), corpus.size - 1, dtype=np.int64)
    if within is not None:
        s = corpus.s_attribute(within)
        if len(s):
            at_start = s.region_numbers(np.asarray(match, dtype=s.starts.dtype))
            at_end = s.region_numbers(np.asarray(matchend, dtype=s.starts.dtype))
            starts, ends = np.asarray(s.starts, dtype=np.int64), np.asarray(s.ends, dtype=np.int64)
            low = np.where(at_start >= 0, starts[np.maximum(at_start, 0)], match)
            high = np.where(at_end >= 0, ends[np.maximum(at_end, 0)], matchend)
        else:
            low, high = match, matchend
    window_starts = np.concatenate([np.maximum(match - left, low), matchend + 1])
    window_ends = np.concatenate([match - 1, np.minimum(matchend + right, high)])
    context_starts, context_ends = _union(window_starts, window_ends)
    node_starts, node_ends = _union(match, matchend)
    f, context_tokens = _count_ids(
        p, (_outside(chunk, node_starts, node_ends) for chunk in _expanded(context_starts, context_ends)), deadline)
    in_nodes, node_tokens = _count_ids(p, _expanded(node_starts, node_ends), deadline)
    found = np.flatnonzero(f + in_nodes)  # in hits only: the front end needs their in-hit counts too
    truncated = len(found) > max_rows
    if truncated:
        found = found[np.argsort(-(f[found] + in_nodes[found]), kind="stable")[:max_rows]]
    strings = p.strings
    marginals = np.asarray(p.frequencies, dtype=np.int64)
    return Cooccurrence(
        [strings[i] for i in found.tolist()], f[found].tolist(), marginals[found].tolist(),
        in_nodes[found].tolist(), context_tokens, node_tokens, corpus.size, truncated,
    )


# -- sorting ---------------------------------------------------------------------------------------

SortValue = list[list[list[str]]] | int
"""A hit's sort key as it travels: for each level, the folded then the plain values over its span
(lists of strings; an empty list where the span is outside the corpus or the anchor unset), or a
random number."""


@dataclass
class SortOrder:
    """A partition's hits in sorted order: ``order[k]`` is the hit at rank ``k``."""

    key: SortKey
    order: Ints
    base: int  # global position of the partition's first token (random keys depend on it)
    matches: Matches
    corpus: CwbCorpus

    def keys(self, ranks: list[int]) -> list[SortValue]:
        """The sort keys of the hits at these ranks, as the front end compares them across partitions."""
        hits = self.order[np.asarray(ranks, dtype=np.int64)] if ranks else np.zeros(0, dtype=np.int64)
        if self.key.random:
            return [int(v) for v in random_keys(self.matches.match[hits] + self.base, self.key.seed).tolist()]
        picked = self.matches.take(hits)
        values: list[list[list[list[str]]]] = [[] for _ in range(len(hits))]
        for level in self.key.levels:
            start, end, valid = span_positions(picked, level.span, self.corpus.size)
            p = _p(self.corpus, level.attribute)
            folded = groups(p, level.fold) if level.fold else None
            for value, a, b, ok in zip(values, start.tolist(), end.tolist(), valid.tolist(), strict=True):
                if not ok:
                    value.append([])
                    continue
                step = 1 if b >= a else -1
                ids = np.asarray(p.ids_at(np.arange(a, b + step, step, dtype=np.int64)), dtype=np.int64)
                plain = [p.strings[i] for i in ids.tolist()]
                value.append([[folded.names[g] for g in folded.of_id[ids].tolist()], plain] if folded else [plain])
        return list(values)

    def place(self, key: SortValue, base: int, rank: int) -> int:
        """How many of the partition's sorted hits come before the place (``key``, ``base``, ``rank``)
        in the order of all partitions (sort key, then partition base, then rank): a binary search
        that builds the keys of about log2(hits) ranks."""
        n = len(self.order)
        if base == self.base:
            return min(rank, n)
        bound = MergeKey(key, self.key.descending)
        # hits with this very key come before the place when this partition comes first in the corpus
        if base > self.base:
            return bisect.bisect_right(range(n), bound, key=lambda r: MergeKey(self.keys([r])[0], self.key.descending))
        return bisect.bisect_left(range(n), bound, key=lambda r: MergeKey(self.keys([r])[0], self.key.descending))


_MASK = (1 << 64) - 1


def random_keys(positions: Ints, seed: int) -> npt.NDArray[np.uint64]:
    """A random number per global position for ``seed`` (splitmix64): the same hit gets the same
    number on any node, so a random order merges across partitions."""
    with np.errstate(over="ignore"):
        z = positions.astype(np.uint64) + np.uint64((seed * 0x9E3779B97F4A7C15) & _MASK)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return np.asarray(z ^ (z >> np.uint64(31)), dtype=np.uint64)


def sort_order(corpus: CwbCorpus, matches: Matches, key: SortKey, base: int,
               deadline: Deadline = NO_DEADLINE) -> SortOrder:
    """The hits ordered by ``key``; equal keys keep corpus order (in either direction)."""
    deadline.check()
    n = len(matches)
    tie = np.arange(n, dtype=np.int64)
    if key.random:
        numbers = random_keys(np.asarray(matches.match, dtype=np.int64) + base, key.seed)
        order = np.lexsort((tie, ~numbers if key.random_direction == "desc" else numbers))
        return SortOrder(key, order.astype(np.int64), base, matches, corpus)
    primary_first: list[npt.NDArray[np.int64]] = []  # level by level: the first level is the primary key
    for level in key.levels:
        primary_first += _level_columns(corpus, matches, level, deadline)
    deadline.check()
    order = np.lexsort([tie, *primary_first[::-1]])  # lexsort: the last key is the primary one
    return SortOrder(key, order.astype(np.int64), base, matches, corpus)


def _level_columns(corpus: CwbCorpus, matches: Matches, level: SortLevel,
                   deadline: Deadline) -> list[npt.NDArray[np.int64]]:
    """The columns one level of a sort orders the hits by, most significant first: hits without a
    value (the span outside the corpus, an unset anchor) last, then the folded values' ranks token
    by token (with ``fold``), then the plain values' (which break the folded ties)."""
    n = len(matches)
    p = _p(corpus, level.attribute)
    start, end, valid = span_positions(matches, level.span, corpus.size)
    lengths = np.where(valid, np.abs(end - start) + 1, 0)
    width = max(int(lengths.max()) if n else 0, 1)
    if n * width > MAX_SORT_CELLS:
        raise LimitExceeded(f"sorting {n:,} hits on spans of up to {width} tokens is more than a node sorts at "
                            "once; sort on fewer tokens (e.g. match.lemma or left1.word) or narrow the query")
    rows_set = np.flatnonzero(valid)
    columns: list[npt.NDArray[np.int64]] = [(~valid).astype(np.int64)]
    passes = ([groups(p, level.fold)] if level.fold else []) + [groups(p, "")]
    for table in passes:
        matrix = np.full((n, width), -1, dtype=np.int64)  # -1: the span has ended (a prefix sorts first)
        for which, positions in _sequences(start[valid], end[valid]):
            deadline.check()
            ids = np.asarray(p.ids_at(positions.ravel()), dtype=np.int64)
            matrix[rows_set[which], : positions.shape[1]] = table.rank[table.of_id[ids]].reshape(positions.shape)
        if level.direction == "desc":  # all reversed, as CQP negates the comparison: a span now sorts before its prefix
            matrix = np.where(matrix >= 0, -matrix, 1)
        columns += [matrix[:, k] for k in range(width)]
    return columns


def check_attributes(corpus: CwbCorpus, p_attribute: str | None = None, s_attribute: str | None = None) -> None:
    if p_attribute is not None and p_attribute not in corpus.entry.p_attributes:
        raise UnknownAttribute(f"the corpus has no p-attribute {p_attribute!r} "
                               f"(it has: {', '.join(corpus.entry.p_attributes)})")
    if s_attribute is not None and s_attribute not in corpus.entry.s_attributes:
        raise UnknownAttribute(f"the corpus has no s-attribute {s_attribute!r} "
                           f"(it has: {', '.join(corpus.entry.s_attributes) or 'none'})")


def marginals(corpus: CwbCorpus, attribute: str, values: list[str]) -> list[int]:
    """The frequency of each value of ``attribute`` in the corpus (0 where it does not occur)."""
    p = _p(corpus, attribute)
    ids = [p.str2id(value) for value in values]
    return [0 if i is None else p.frequency(i) for i in ids]


# -- word lists and n-grams --------------------------------------------------------------------------

NGRAM_CHUNK = 1 << 22
"""Start positions whose n-grams are counted at once."""
TALLY_BITS = 22
"""N-grams whose packed ids take at most this many bits are counted in an array of a count per possible
key (4M counts, 32 MB) instead of sorted."""


@dataclass
class NgramTable:
    """Every n-gram of a partition (or of its part in a subcorpus) with its count: ``keys`` ascending,
    each n-gram's ids packed into one int64 (``bits`` per id) or, when they do not fit, an (n,) row
    of big-endian int32 ids seen as one opaque value (so that the bytes order as the ids do);
    ``tokens`` of the subcorpus, ``ngrams`` occurrences counted."""

    attribute: PositionalAttribute
    n: int
    bits: int  # 0: keys are rows
    keys: npt.NDArray[Any]
    counts: Ints
    tokens: int
    ngrams: int

    def ids(self, rows: Ints) -> npt.NDArray[np.int64]:
        """The ids of the n-grams at these rows of the table, (len(rows), n)."""
        if self.bits:
            return _unpacked(self.keys[rows], self.n, self.bits)
        return np.asarray(self.keys[rows].view(ROW_ID).reshape(len(rows), self.n), dtype=np.int64)


ROW_ID = np.dtype(">i4")
"""An id in a row key: big-endian, so that rows compared byte by byte order as their ids do."""


def _packed(ids: Ints, starts: Ints, n: int, bits: int) -> Ints:
    """The ids at ``starts`` .. ``starts + n - 1`` packed into one int64 each (``bits`` per id)."""
    key = ids[starts].copy()
    for k in range(1, n):
        key = (key << bits) | ids[starts + k]
    return key


def _unpacked(keys: Ints, count: int, bits: int) -> npt.NDArray[np.int64]:
    """The ``count`` ids packed into each key, (len(keys), count)."""
    shifts = np.arange(count - 1, -1, -1, dtype=np.int64) * bits
    return np.asarray((np.asarray(keys, dtype=np.int64)[:, None] >> shifts) & ((1 << bits) - 1), dtype=np.int64)


def _void(n: int) -> np.dtype[Any]:
    return np.dtype((np.void, 4 * n))


def _filter_regions(corpus: CwbCorpus, attribute: str, negated: bool, pattern: str) -> tuple[Ints, Ints]:
    """The regions of ``attribute`` whose value matches the CQP regex (the whole value; with ``negated``:
    does not), as sorted starts and ends."""
    s = _s_with_values(corpus, attribute, "filter")
    table = value_table(s)
    search = compile_pcre(pattern).search
    passing = np.fromiter((search(name) is not None for name in table.names), dtype=np.bool_, count=len(table.names))
    keep = passing[table.of_region] != negated if len(table.of_region) else np.zeros(0, dtype=np.bool_)
    return np.asarray(s.starts, dtype=np.int64)[keep], np.asarray(s.ends, dtype=np.int64)[keep]


def _painted(starts: npt.NDArray[np.integer[Any]], ends: npt.NDArray[np.integer[Any]], lo: int,
             hi: int) -> tuple[npt.NDArray[np.bool_], Ints]:
    """For the positions ``lo`` .. ``hi - 1`` and sorted regions without overlaps: whether each lies in
    a region, and how many regions begin at or before it (two positions inside regions lie in the same
    one when that count is the same). Painted from the regions in the stretch, not searched for each
    position: linear in the stretch's length."""
    length = hi - lo
    first = int(np.searchsorted(ends, lo, side="left"))  # regions ending at lo or later
    last = int(np.searchsorted(starts, hi, side="left"))  # … and starting before hi
    begin = np.maximum(np.asarray(starts[first:last], dtype=np.int64), lo) - lo
    stop = np.minimum(np.asarray(ends[first:last], dtype=np.int64) + 1, hi) - lo
    begun = np.bincount(begin, minlength=length + 1)
    cover = np.cumsum(begun[:length] - np.bincount(stop, minlength=length + 1)[:length])
    return cover > 0, np.cumsum(begun[:length])


def ngram_table(corpus: CwbCorpus, attribute: str, n: int, within: str | None,
                filters: list[tuple[str, bool, str]], max_types: int, match: str | None = None,
                ignore_case: bool = False, deadline: Deadline = NO_DEADLINE) -> NgramTable:
    """Count the n-grams of ``attribute`` in the partition: n consecutive tokens within one region of
    ``within`` (when given) and all inside the subcorpus (the tokens every filter lets through); with
    ``match``, only those with a token matching it are kept (and sorted: a few of the partition's
    millions), though ``ngrams`` counts them all, as the table without ``match`` does."""
    check_attributes(corpus, attribute, within)
    p = _p(corpus, attribute)
    size = corpus.size
    regions = [_filter_regions(corpus, a, negated, pattern) for a, negated, pattern in filters]
    bounds = corpus.s_attribute(within) if within else None
    bits = max(1, (max(1, p.lexicon_size) - 1).bit_length())
    packed = bits * n <= 63
    if n == 1 and not regions:  # the whole partition's word list: its lexicon frequencies
        counts = np.asarray(p.frequencies, dtype=np.int64)
        keys = np.flatnonzero(counts).astype(np.int64)
        return NgramTable(p, 1, bits, keys, counts[keys], size, size)
    token_ok = _matching(p, match, ignore_case) if match is not None else None
    # one count per possible key, when there are few (a word list, n-grams of a small tagset): no sorting
    tallied = n == 1 or bits * n <= TALLY_BITS
    tally = np.zeros(p.lexicon_size if n == 1 else (1 << (bits * n)) if tallied else 0, dtype=np.int64)
    parts_keys: list[npt.NDArray[Any]] = []
    parts_counts: list[Ints] = []
    tokens = ngrams = 0
    held = 0
    for lo in range(0, size, NGRAM_CHUNK):
        deadline.check()
        hi = min(size, lo + NGRAM_CHUNK)
        stop = min(size, hi + n - 1)
        ids = np.asarray(p.id_range(lo, stop), dtype=np.int64)
        allowed = np.ones(stop - lo, dtype=np.bool_)
        for starts, ends in regions:
            allowed &= _painted(starts, ends, lo, stop)[0]
        tokens += int(allowed[: hi - lo].sum())
        count = max(0, stop - n + 1 - lo)  # starts whose n-gram lies in the partition
        if count == 0:
            continue
        valid = allowed[:count].copy()
        for k in range(1, n):
            valid &= allowed[k : k + count]
        if bounds is not None:  # its first and last token inside one region of `within`
            inside, begun = _painted(bounds.starts, bounds.ends, lo, stop)
            valid &= inside[:count] & inside[n - 1 : n - 1 + count] & (begun[:count] == begun[n - 1 : n - 1 + count])
        if token_ok is not None:
            ngrams += int(valid.sum())
            ok = token_ok[ids]
            wanted = ok[:count].copy()
            for k in range(1, n):
                wanted |= ok[k : k + count]
            valid &= wanted
        starts_at = np.flatnonzero(valid)
        if token_ok is None:
            ngrams += len(starts_at)
        if not len(starts_at):
            continue
        if tallied:  # a count per lexicon id, or per packed key
            key = ids[starts_at] if n == 1 else _packed(ids, starts_at, n, bits)
            tally += np.bincount(key, minlength=len(tally))
            continue
        if packed:
            found, counted = np.unique(_packed(ids, starts_at, n, bits), return_counts=True)
        else:  # rows of ids
            rows = np.stack([ids[starts_at + k] for k in range(n)], axis=1).astype(ROW_ID)
            found, counted = np.unique(np.ascontiguousarray(rows).view(_void(n)).ravel(), return_counts=True)
        parts_keys.append(found)
        parts_counts.append(counted.astype(np.int64))
        held += len(found)
        if held > 2 * max_types:  # fold the chunks' counts before they outgrow the limit
            merged = _merge_counts(parts_keys, parts_counts)
            parts_keys, parts_counts, held = [merged[0]], [merged[1]], len(merged[0])
            if held > max_types:
                raise LimitExceeded(f"more than {max_types:,} distinct {n}-grams on this partition: narrow the "
                                    "subcorpus down or count shorter n-grams")
    if tallied:
        keys = np.flatnonzero(tally).astype(np.int64)
        return NgramTable(p, n, bits, keys, tally[keys], tokens, ngrams)
    keys, counts = _merge_counts(parts_keys, parts_counts) if parts_keys else (
        np.zeros(0, dtype=np.int64 if packed else _void(n)), np.zeros(0, dtype=np.int64))
    if len(keys) > max_types:
        raise LimitExceeded(f"{len(keys):,} distinct {n}-grams on this partition, more than {max_types:,}: narrow "
                            "the subcorpus down or count shorter n-grams")
    return NgramTable(p, n, bits if packed else 0, keys, counts, tokens, ngrams)


def _merge_counts(keys: list[npt.NDArray[Any]], counts: list[Ints]) -> tuple[npt.NDArray[Any], Ints]:
    """One ascending key per n-gram with the sum of its counts."""
    if len(keys) == 1:
        return keys[0], counts[0]
    found, inverse = np.unique(np.concatenate(keys), return_inverse=True)
    return found, np.bincount(inverse.ravel(), weights=np.concatenate(counts), minlength=len(found)).round().astype(
        np.int64)


def _matching(p: PositionalAttribute, match: str, ignore_case: bool) -> npt.NDArray[np.bool_]:
    """Which lexicon ids match the CQP regex (the whole token)."""
    tables = _tables(p)
    index = tables.get("lexicon_index")
    if not isinstance(index, LexiconIndex):
        index = tables["lexicon_index"] = LexiconIndex(p.strings)
    return np.asarray(match_table(index, RegexValue(match, ignore_case), 5.0), dtype=np.bool_)


def ngram_rows(table: NgramTable, match: str | None, ignore_case: bool, threshold: int | None, top: int,
               max_rows: int, values: list[list[str]],
               deadline: Deadline = NO_DEADLINE) -> tuple[list[tuple[list[str], int]], list[int], int]:
    """The rows with at least ``threshold`` occurrences and the ``top`` most frequent (the most frequent
    first), of the n-grams with a token matching ``match``; the counts of ``values`` (0 where an
    n-gram does not occur or does not pass ``match``); and how many n-grams pass ``match``."""
    p = table.attribute
    passing = None
    if match is not None:
        token_ok = _matching(p, match, ignore_case)
        ids = table.ids(np.arange(len(table.counts)))
        passing = token_ok[ids].any(axis=1)
    deadline.check()
    counts = table.counts if passing is None else np.where(passing, table.counts, 0)
    types = len(counts) if passing is None else int(passing.sum())
    chosen = np.zeros(0, dtype=np.int64)
    if threshold is not None:
        chosen = np.flatnonzero(counts >= threshold)
    if top:
        best = np.argsort(-counts, kind="stable")[:top]
        best = best[counts[best] > 0]
        if len(best) == top:  # ties at the last count: the first by their tokens, as the list is ordered
            last = counts[best[-1]]
            tied = np.flatnonzero(counts == last)
            if len(tied) > 1:
                strings = [tuple(row) for row in p.string_array[table.ids(tied)].tolist()]
                room = top - int((counts > last).sum())
                ordered = sorted(range(len(tied)), key=strings.__getitem__)[:room]
                best = np.concatenate([np.flatnonzero(counts > last), tied[ordered]])
        chosen = np.union1d(chosen, best)
    if len(chosen) > max_rows:
        raise LimitExceeded(f"{len(chosen):,} n-grams to send from this partition, more than {max_rows:,}: raise "
                            "the minimum frequency or narrow the subcorpus down")
    chosen = chosen[np.argsort(-counts[chosen], kind="stable")]
    ids = table.ids(chosen)
    rows = list(zip(p.string_array[ids].tolist() if len(ids) else [], counts[chosen].tolist(), strict=True))
    return rows, _counts_of(table, counts, values), types


def _counts_of(table: NgramTable, counts: Ints, values: list[list[str]]) -> list[int]:
    """The counts of these n-grams (0 where one does not occur), looked up all at once."""
    p = table.attribute
    found = [[p.str2id(token) for token in value] if len(value) == table.n else [None] for value in values]
    known = [k for k, ids in enumerate(found) if all(i is not None for i in ids)]
    asked = np.zeros(len(values), dtype=np.int64)
    if not known or not len(table.keys):
        return asked.tolist()
    ids = np.asarray([found[k] for k in known], dtype=np.int64)
    if table.bits:
        keys: npt.NDArray[Any] = _packed(ids.ravel(), np.arange(len(known), dtype=np.int64) * table.n, table.n,
                                         table.bits)
    else:
        keys = np.ascontiguousarray(ids.astype(ROW_ID)).view(table.keys.dtype).ravel()
    at = np.minimum(np.searchsorted(table.keys, keys), len(table.keys) - 1)
    hit = table.keys[at] == keys
    asked[np.asarray(known, dtype=np.int64)[hit]] = counts[at[hit]]
    return asked.tolist()



# -- subcorpora ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class SubcorpusSize:
    """A partition's part in a subcorpus: its tokens, the texts it touches, and an s-attribute's values
    in it (those with tokens there) with their tokens and regions there."""

    tokens: int
    texts: int | None
    all_texts: int | None
    values: list[str]
    value_tokens: list[int]
    value_regions: list[int]


def _intersection(sets: list[tuple[Ints, Ints]], size: int) -> tuple[Ints, Ints]:
    """The positions in every set of regions (each set sorted and without overlaps), as sorted starts
    and ends; no sets: the whole partition."""
    if not sets:
        whole = np.asarray([0] if size else [], dtype=np.int64)
        return whole, whole + size - 1
    points = np.concatenate([s for s, _ in sets] + [e + 1 for _, e in sets])
    deltas = np.concatenate([np.ones(len(s), dtype=np.int64) for s, _ in sets]
                            + [-np.ones(len(e), dtype=np.int64) for _, e in sets])
    at, where = np.unique(points, return_inverse=True)
    cover = np.cumsum(np.bincount(where, weights=deltas, minlength=len(at)).round().astype(np.int64))
    inside = np.flatnonzero(cover[:-1] == len(sets)) if len(at) > 1 else np.zeros(0, dtype=np.int64)
    return at[inside], at[inside + 1] - 1


def _covered_before(starts: Ints, ends: Ints) -> Callable[[Ints], Ints]:
    """For sorted regions without overlaps: a function giving, for each position x, how many of the
    regions' positions lie before x."""
    lengths = ends - starts + 1
    before = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(lengths)])

    def count(x: Ints) -> Ints:
        if not len(starts):
            return np.zeros_like(x)
        k = np.searchsorted(starts, x, side="left")  # regions starting before x: all but the last end before it
        last = np.maximum(k - 1, 0)
        partial = np.minimum(lengths[last], np.maximum(x - starts[last], 0))
        return np.asarray(np.where(k > 0, before[last] + partial, 0), dtype=np.int64)

    return count


def _tokens_in(count: Callable[[Ints], Ints], attribute: StructuralAttribute) -> Ints:
    """Each region's tokens in the subcorpus."""
    starts = np.asarray(attribute.starts, dtype=np.int64)
    ends = np.asarray(attribute.ends, dtype=np.int64)
    return count(ends + 1) - count(starts)


def subcorpus(corpus: CwbCorpus, filters: list[tuple[str, bool, str]], texts: str | None, attribute: str | None,
              match: str | None, ignore_case: bool, max_values: int) -> SubcorpusSize:
    """The partition's part in the subcorpus the filters choose (the tokens in regions whose value
    matches every filter): its size, and with ``attribute`` that attribute's values in it."""
    check_attributes(corpus, None, texts)
    starts, ends = _intersection([_filter_regions(corpus, a, negated, pattern) for a, negated, pattern in filters],
                                 corpus.size)
    count = _covered_before(starts, ends)
    tokens = int((ends - starts + 1).sum())
    text_regions = _tokens_in(count, corpus.s_attribute(texts)) if texts else None
    text_count = None if text_regions is None else int((text_regions > 0).sum())
    all_texts = None if text_regions is None else len(text_regions)
    if attribute is None:
        return SubcorpusSize(tokens, text_count, all_texts, [], [], [])
    s = _s_with_values(corpus, attribute, "values")
    table = value_table(s)
    per_region = _tokens_in(count, s)
    value_tokens = np.bincount(table.of_region, weights=per_region, minlength=len(table.names)).round().astype(np.int64)
    value_regions = np.bincount(table.of_region, weights=per_region > 0, minlength=len(table.names)).round().astype(
        np.int64)
    chosen = np.flatnonzero(value_regions > 0)
    if match is not None:
        search = compile_pcre(match, ignore_case).search
        chosen = chosen[np.fromiter((search(table.names[i]) is not None for i in chosen), dtype=np.bool_,
                                    count=len(chosen))]
    if len(chosen) > max_values:
        raise LimitExceeded(f"values={attribute}: {len(chosen):,} values on this partition, more than {max_values:,} "
                            "listed at once; choose some with match (a regular expression)")
    return SubcorpusSize(tokens, text_count, all_texts, [table.names[i] for i in chosen], value_tokens[chosen].tolist(),
                         value_regions[chosen].tolist())
