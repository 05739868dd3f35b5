"""Partitions' analyses added up into the whole corpus's: sums first, then shares, rates and scores.

Frequencies, region counts and co-occurrence counts are sums over partitions; association
measures are computed once, from the summed counts, so that they are those of the whole corpus
(never an average of partitions' scores). The front end and ``cowbird query`` use the same code.

Association measures, from the contingency table of a collocate (Evert 2008): ``O11`` = f
(co-occurrences), ``R1`` = f1 (tokens in the windows), ``C1`` = f2 (the collocate's frequency
outside the hits), ``N`` (corpus tokens outside the hits), ``E11 = R1·C1/N``:

- ``log_likelihood``: 2 Σ Oij ln(Oij/Eij), negative when O11 < E11 (as cwb-ccc's);
- ``mi``: log2(O11/E11) (cwb-ccc's ``mutual_information`` is the same in log10);
- ``mi3``: log2(O11³/E11);
- ``t_score``: (O11 − E11)/√O11; ``z_score``: (O11 − E11)/√E11;
- ``dice``: 2·O11/(R1 + C1); ``log_dice``: 14 + log2(dice) (Rychlý 2008);
- ``min_sensitivity``: min(O11/R1, O11/C1).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import total_ordering
from typing import Any, Literal, get_args

import numpy as np
import numpy.typing as npt

Measure = Literal["log_likelihood", "mi", "mi3", "t_score", "z_score", "dice", "log_dice", "min_sensitivity"]
MEASURES: tuple[Measure, ...] = get_args(Measure)
MEASURE_NAMES: dict[Measure, str] = {
    "log_likelihood": "Log-likelihood", "mi": "MI", "mi3": "MI³", "t_score": "t-score", "z_score": "z-score",
    "dice": "Dice", "log_dice": "logDice", "min_sensitivity": "Min. sensitivity",
}
"""How the search page names each measure (it gets them from the server, with the page)."""

Floats = npt.NDArray[np.float64]


def rate(count: int, tokens: int) -> float:
    """Occurrences per million tokens (0 in no tokens), unrounded (one hit in 20 GT is 0.00005):
    every view's rate."""
    return count * 1e6 / tokens if tokens else 0.0


def stretches(size: int, bins: int) -> list[tuple[int, int]]:
    """The first and last position of each of ``bins`` equal stretches of a corpus of ``size`` tokens,
    as the nodes count hits in them: position p is in stretch p * bins // size, which starts at
    ceil(k * size / bins)."""
    starts = [-(-k * size // bins) for k in range(bins + 1)]
    return [(starts[k], starts[k + 1] - 1) for k in range(bins)]


# -- frequency -------------------------------------------------------------------------------------

@dataclass
class FrequencyRow:
    value: str
    frequency: int
    share: float  # of the hits counted
    per_million: float  # per million tokens of the corpus


@dataclass
class FrequencyTable:
    rows: list[FrequencyRow]
    counted: int
    unset: int
    distinct: int  # distinct values after the sum (a lower bound when truncated)
    truncated: bool
    listed: int = 0  # values with at least the minimum frequency: the rows there are to page through


def merge_frequencies(parts: list[tuple[list[str], list[int]]]) -> list[tuple[str, int]]:
    """Values summed over partitions, most frequent first (ties: by value, in code point order)."""
    totals: dict[str, int] = {}
    for values, counts in parts:
        for value, count in zip(values, counts, strict=True):
            totals[value] = totals.get(value, 0) + count
    return sorted(totals.items(), key=lambda item: (-item[1], item[0]))


def frequency_table(ordered: list[tuple[str, int]], counted: int, unset: int, truncated: bool, corpus_size: int,
                    minimum: int, offset: int, limit: int | None) -> FrequencyTable:
    """The rows of a page: values with at least ``minimum`` hits, from ``offset``, at most ``limit``."""
    kept = [item for item in ordered if item[1] >= minimum]
    page = kept[offset:] if limit is None else kept[offset : offset + limit]
    rows = [FrequencyRow(value, count, count / counted if counted else 0.0,
                         count / corpus_size * 1e6 if corpus_size else 0.0) for value, count in page]
    return FrequencyTable(rows, counted, unset, len(ordered), truncated, len(kept))


# -- distribution ----------------------------------------------------------------------------------

_NUMBER = re.compile(r"^[+-]?\d+(\.\d+)?$")


@dataclass
class DistributionRow:
    value: str
    hits: int
    tokens: int  # size of the subcorpus with this value
    per_million: float  # hits per million tokens of that subcorpus
    regions: int
    regions_with_hits: int


@dataclass
class DistributionTable:
    rows: list[DistributionRow]
    outside: int
    numeric: bool  # values sorted as numbers
    all_values: bool
    truncated: bool


@dataclass
class DistributionSums:
    hits: dict[str, int] = field(default_factory=dict)
    regions_with_hits: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, int] = field(default_factory=dict)
    regions: dict[str, int] = field(default_factory=dict)

    def add(self, values: list[str], hits: list[int], regions_with_hits: list[int], tokens: list[int],
            regions: list[int]) -> None:
        for k, value in enumerate(values):
            self.hits[value] = self.hits.get(value, 0) + hits[k]
            self.regions_with_hits[value] = self.regions_with_hits.get(value, 0) + regions_with_hits[k]
            self.tokens[value] = self.tokens.get(value, 0) + tokens[k]
            self.regions[value] = self.regions.get(value, 0) + regions[k]


def value_order(values: list[str]) -> tuple[bool, Callable[[str], tuple[int, float, str]]]:
    """Whether the values look like numbers (years), and the sort key ordering them: as numbers if so,
    else as strings, empty values last."""
    numeric = bool(values) and all(_NUMBER.match(v) for v in values if v)

    def by_value(value: str) -> tuple[int, float, str]:
        if not value:
            return (1, 0.0, value)
        return (0, float(value), value) if numeric else (0, 0.0, value)

    return numeric, by_value


def distribution_table(sums: DistributionSums, outside: int, all_values: bool, truncated: bool,
                       order: Literal["value", "hits", "per_million"] = "value") -> DistributionTable:
    """One row per value; numeric-looking values (years) sort as numbers, empty values last."""
    values = list(sums.hits)
    numeric, by_value = value_order(values)
    rows = [DistributionRow(v, sums.hits[v], sums.tokens[v], sums.hits[v] / sums.tokens[v] * 1e6 if sums.tokens[v]
                            else 0.0, sums.regions[v], sums.regions_with_hits[v]) for v in values]
    rows.sort(key=lambda row: by_value(row.value))
    if order == "hits":
        rows.sort(key=lambda row: -row.hits)
    elif order == "per_million":
        rows.sort(key=lambda row: -row.per_million)
    return DistributionTable(rows, outside, numeric, all_values, truncated)


# -- collocations ----------------------------------------------------------------------------------

@dataclass
class CooccurrenceSums:
    f: dict[str, int] = field(default_factory=dict)
    marginal: dict[str, int] = field(default_factory=dict)
    in_nodes: dict[str, int] = field(default_factory=dict)
    context_tokens: int = 0
    node_tokens: int = 0
    size: int = 0
    truncated: bool = False

    def add(self, values: list[str], f: list[int], marginal: list[int], in_nodes: list[int]) -> None:
        for k, value in enumerate(values):
            self.f[value] = self.f.get(value, 0) + f[k]
            self.marginal[value] = self.marginal.get(value, 0) + marginal[k]
            self.in_nodes[value] = self.in_nodes.get(value, 0) + in_nodes[k]


def spilled(parts: list[tuple[list[int], list[str], list[int]]], failed: list[tuple[int, int]],
            kept: set[int] | None = None) -> dict[str, int]:
    """The co-occurrences that partitions' windows found past their edges, each position once: from each
    partition its ``(spilled positions, their values, occupied positions)`` (global), and the
    ``(first, last)`` positions of partitions that failed. A spilled position counts where no window
    or hit of the partition holding it holds it (that partition counted it, or it is inside a hit),
    and not in a partition that failed (whose windows and hits are not known)."""
    occupied = {position for _, _, held in parts for position in held}
    values: dict[int, str] = {}
    for positions, found, _ in parts:
        values.update(zip(positions, found, strict=True))
    counts: dict[str, int] = {}
    for position, value in values.items():
        if position in occupied or any(first <= position <= last for first, last in failed):
            continue
        counts[value] = counts.get(value, 0) + 1
        if kept is not None:
            kept.add(position)
    return counts


@dataclass(frozen=True)
class TextPart:
    """What one partition says of the texts its collocates co-occur in (``CooccurrenceResponse``): by
    value, the texts counted and those of them near its edges (region numbers); the spilled positions
    it found past its edges with their values and texts (counted from its edge); ``answered`` False for
    a partition that failed."""

    offset: int
    size: int
    answered: bool
    regions: int | None
    first_continued: bool
    last_continues: bool
    texts: dict[str, int]
    edge_texts: dict[str, list[int]]
    spilled: list[tuple[int, str, int]]  # (global position, value, text counted from the edge)


def collocate_texts(parts: list[TextPart], counted: set[int]) -> dict[str, int] | None:
    """The texts each collocate co-occurs in over the whole corpus, each text once (CQPweb's "in no.
    of texts"), from the partitions in corpus order and the spilled positions the merge counted
    (``counted``, those :func:`spilled` keeps). A text cut between partitions is one: a partition's
    first text that began in the one before is that one's last (a chain, when a text spans several).
    A spilled position's text is a region of the partition holding it, found from its count from the
    edge. None when the corpus has no ``text``."""
    if not any(part.answered and part.regions is not None for part in parts):
        return None
    by_offset = {part.offset: k for k, part in enumerate(parts)}

    def canonical(k: int, region: int) -> tuple[int, int]:
        while region == 0 and parts[k].first_continued and k > 0 and parts[k - 1].regions:
            k, region = k - 1, (parts[k - 1].regions or 1) - 1
        return k, region

    def holding(position: int) -> int | None:
        for k, part in enumerate(parts):
            if part.offset <= position < part.offset + part.size:
                return k
        return None

    totals: dict[str, int] = {}
    keys: dict[str, set[tuple[int, int]]] = {}
    for k, part in enumerate(parts):
        if not part.answered:
            continue
        for value, n in part.texts.items():
            totals[value] = totals.get(value, 0) + n
        for value, near in part.edge_texts.items():
            if near:  # counted once below, by their keys
                totals[value] -= len(near)
                keys.setdefault(value, set()).update(canonical(k, r) for r in near)
        for position, value, text in part.spilled:
            if text < 0 or position not in counted:
                continue
            q = holding(position)
            if q is None or not parts[q].answered or not parts[q].regions:
                continue
            held = parts[q]
            regions = held.regions or 0
            if position >= part.offset + part.size and by_offset.get(part.offset + part.size) == q:
                region = text - (0 if held.first_continued else 1)
            elif position < part.offset and q + 1 < len(parts) and parts[q + 1] is part:
                region = regions - 1 - text + (0 if held.last_continues else 1)
            else:  # a window past a whole partition shorter than it: that partition's own region count
                continue
            if 0 <= region < regions:
                keys.setdefault(value, set()).add(canonical(q, region))
    for value, found in keys.items():
        totals[value] = totals.get(value, 0) + len(found)
    return totals


@dataclass
class CollocateRow:
    value: str
    f: int  # O11
    f2: int  # C1: frequency outside the hits
    marginal: int
    in_nodes: int
    expected: float  # E11
    scores: dict[str, float]
    texts: int | None = None  # texts it co-occurs in (None: the corpus has no text)


@dataclass
class CollocationTable:
    rows: list[CollocateRow]
    f1: int  # R1: tokens in the windows
    n: int  # N: tokens outside the hits (of the subcorpus searched)
    candidates: int  # collocates before min_freq
    truncated: bool
    tokens: int = 0  # tokens of the (sub)corpus searched


@dataclass(frozen=True)
class Table2x2:
    """A collocate's contingency table (arrays over the collocates): observed and expected
    frequencies, the node's frequency ``r1``, the collocates' ``c1``, the corpus size ``n``."""

    o11: Floats
    o12: Floats
    o21: Floats
    o22: Floats
    e11: Floats
    e12: Floats
    e21: Floats
    e22: Floats
    r1: float
    c1: Floats


def _log_likelihood(t: Table2x2) -> Floats:
    terms = sum(np.where(o > 0, o * np.log(np.where(o > 0, o, 1) / e), 0.0)
                for o, e in ((t.o11, t.e11), (t.o12, t.e12), (t.o21, t.e21), (t.o22, t.e22)))
    return np.sign(t.o11 - t.e11) * 2 * terms


MEASURE_FUNCTIONS: dict[Measure, Callable[[Table2x2], Floats]] = {
    "log_likelihood": _log_likelihood,
    "mi": lambda t: np.log2(t.o11 / t.e11),
    "mi3": lambda t: np.log2(t.o11**3 / t.e11),
    "t_score": lambda t: (t.o11 - t.e11) / np.sqrt(t.o11),
    "z_score": lambda t: (t.o11 - t.e11) / np.sqrt(t.e11),
    "dice": lambda t: 2 * t.o11 / (t.r1 + t.c1),
    "log_dice": lambda t: 14 + np.log2(2 * t.o11 / (t.r1 + t.c1)),
    "min_sensitivity": lambda t: np.minimum(t.o11 / t.r1, t.o11 / t.c1),
}
"""Every association measure (a test checks each ``Measure`` has one), as in cwb-ccc and UCS."""


def scores(o11: Floats, r1: float, c1: Floats, n: float, measures: list[Measure]) -> tuple[Floats, dict[str, Floats]]:
    """E11 and the measures for each collocate (arrays), from the contingency tables."""
    o12, o21 = r1 - o11, c1 - o11
    o22 = n - r1 - c1 + o11
    r2, c2 = n - r1, n - c1
    table = Table2x2(o11, o12, o21, o22, r1 * c1 / n, r1 * c2 / n, r2 * c1 / n, r2 * c2 / n, r1, c1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: dict[str, Floats] = {measure: MEASURE_FUNCTIONS[measure](table) for measure in measures}
    return table.e11, out


def collocation_table(sums: CooccurrenceSums, measures: list[Measure], order: Measure | Literal["f"],
                      min_freq: int, texts: dict[str, int] | None = None) -> CollocationTable:
    """Collocates with at least ``min_freq`` co-occurrences, scored on the whole corpus's counts,
    best first by ``order`` (ties by value)."""
    values = [v for v, f in sums.f.items() if f >= min_freq]
    n = sums.size - sums.node_tokens
    o11 = np.asarray([sums.f[v] for v in values], dtype=np.float64)
    c1 = np.asarray([sums.marginal[v] - sums.in_nodes[v] for v in values], dtype=np.float64)
    wanted = list(dict.fromkeys([*measures, *([order] if order != "f" else [])]))
    e11, computed = scores(o11, float(sums.context_tokens), c1, float(n), wanted)
    rows = [
        CollocateRow(v, sums.f[v], sums.marginal[v] - sums.in_nodes[v], sums.marginal[v], sums.in_nodes[v],
                     float(e11[k]), {m: float(computed[m][k]) for m in measures},
                     None if texts is None else texts.get(v, 0))
        for k, v in enumerate(values)
    ]
    if order == "f":
        rows.sort(key=lambda row: (-row.f, row.value))
    else:
        key = {v: float(computed[order][k]) for k, v in enumerate(values)}
        rows.sort(key=lambda row: (-key[row.value], row.value))
    return CollocationTable(rows, sums.context_tokens, n, len(sums.f), sums.truncated, sums.size)


# -- sorted hits -----------------------------------------------------------------------------------

@total_ordering
@dataclass(frozen=True)
class MergeKey:
    """A hit's sort key (``engines/analyses/sort_order.py:SortOrder.keys``) as a merge of partitions
    compares it — the nodes' own order: level by level, hits without a value on the level (no
    target) last, then the level's values, reversed where that level is descending; a random key is
    one number."""

    key: Any  # per level: lists of strings (folded, then plain); or a random number
    descending: tuple[bool, ...]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MergeKey) and self.key == other.key

    def __lt__(self, other: MergeKey) -> bool:
        if isinstance(self.key, int):
            return bool(other.key < self.key) if self.descending[0] else bool(self.key < other.key)
        for mine, theirs, descending in zip(self.key, other.key, self.descending, strict=True):
            if mine == theirs:
                continue
            if (mine == []) != (theirs == []):
                return bool(theirs == [])
            return bool(theirs < mine) if descending else bool(mine < theirs)
        return False

    def __hash__(self) -> int:
        return hash(repr(self.key))
