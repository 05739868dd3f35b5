"""Results shared by both engines: hits as arrays, and concordance lines built from the store.

The native engine computes ``Matches`` itself; the ``cwb`` engine reads them from CQP's ``dump``.
Either way an :class:`ArrayResultSet` holds just the arrays, and :func:`build_lines` decodes only
the lines a caller asks for, straight from the memory-mapped store corpus
(``cowbird.store.CwbCorpus``), so that this module, and the ``cwb`` engine with it, depends
on nothing of the native engine. The per-corpus caches it relies on live in the store: decoded
lexicon strings (``PositionalAttribute.strings``) and region start/end arrays
(``StructuralAttribute.starts`` / ``.ends``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import LimitExceeded, OutOfRange, UnknownAttribute
from cowbird.engines.base import Context, Hit, KwicLine, ResultSet
from cowbird.engines.edges import Around, around
from cowbird.store import CwbCorpus, PositionalAttribute, StructuralAttribute

Cpos = npt.NDArray[np.int64]
"""An array of corpus positions (cpos)."""


@dataclass
class Matches:
    """Hits as parallel arrays, sorted by (match, matchend); ``target`` is -1 where unset.

    ``keyword`` (CQP's second anchor, ``@1[...]``) is held only by queries that mark one: None
    otherwise, so that the hits of every other query take 24 bytes each, not 32.
    """

    match: Cpos
    matchend: Cpos
    target: Cpos
    keyword: Cpos | None = None

    def __len__(self) -> int:
        return len(self.match)

    @property
    def keywords(self) -> Cpos:
        """The keyword of each hit, -1 where unset (all of them when the query marks none)."""
        return self.keyword if self.keyword is not None else np.full(len(self.match), -1, dtype=np.int64)

    def take(self, which: npt.NDArray[np.bool_] | npt.NDArray[np.int64] | slice) -> Matches:
        """The hits selected by a mask, an index array or a slice, every anchor with them."""
        return Matches(
            self.match[which], self.matchend[which], self.target[which],
            None if self.keyword is None else self.keyword[which],
        )

    @staticmethod
    def empty() -> Matches:
        zero = np.zeros(0, dtype=np.int64)
        return Matches(zero, zero.copy(), zero.copy())

    @staticmethod
    def concatenate(parts: list[Matches]) -> Matches:
        """The parts one after the other (no sorting: callers merge or know the order)."""
        if not parts:
            return Matches.empty()
        keyword = any(p.keyword is not None for p in parts)
        return Matches(
            np.concatenate([p.match for p in parts]),
            np.concatenate([p.matchend for p in parts]),
            np.concatenate([p.target for p in parts]),
            np.concatenate([p.keywords for p in parts]) if keyword else None,
        )


class ArrayResultSet(ResultSet):
    """Hits held as arrays; lines are decoded only for the requested slice.

    ``total`` may be larger than the hits held (``matches``): a query with more hits than the
    engine keeps is counted exactly, and asking for a hit past those held is ``limit_exceeded``.
    """

    def __init__(self, corpus: CwbCorpus, matches: Matches, total: int | None = None) -> None:
        self.corpus = corpus
        self.matches = matches
        self._total = len(matches) if total is None else total

    @property
    def total(self) -> int:
        return self._total

    @property
    def held(self) -> int:
        """How many of the hits are held (the first ones, in corpus order)."""
        return len(self.matches)

    @property
    def weight(self) -> int:
        # a query marking a keyword holds a fourth array: 32 bytes per hit
        return self.held if self.matches.keyword is None else -(-self.held * 4 // 3)

    def hits(self, offset: int = 0, limit: int | None = None) -> list[Hit]:
        stop = min(self.total, offset + limit) if limit is not None else self.total
        if stop > self.held:
            raise LimitExceeded(
                f"this query has {self.total:,} hits; the first {self.held:,} are kept for reading and exports "
                f"(hit {stop:,} was asked for): narrow the query down"
            )
        m = self.matches.take(slice(offset, stop))
        return [
            Hit(a, b, t if t >= 0 else None, k if k >= 0 else None)
            for a, b, t, k in zip(
                m.match.tolist(), m.matchend.tolist(), m.target.tolist(), m.keywords.tolist(), strict=True
            )
        ]

    def kwic(self, offset: int, limit: int, context: Context, show: list[str], meta: list[str]) -> list[KwicLine]:
        return build_lines(self.corpus, self.hits(offset, limit), context, show, meta)


def _p(corpus: CwbCorpus, name: str) -> PositionalAttribute:
    """A p-attribute for ``show``; an unknown name is the caller's error (``UnknownAttribute``)."""
    if name not in corpus.entry.p_attributes:
        known = ", ".join(corpus.entry.p_attributes)
        raise UnknownAttribute(f"the corpus has no p-attribute {name!r} (it has: {known})")
    return corpus.p_attribute(name)


def _s(corpus: CwbCorpus, name: str) -> StructuralAttribute:
    """An s-attribute for ``meta`` or a context region; unknown names raise ``UnknownAttribute``."""
    if name not in corpus.entry.s_attributes:
        known = ", ".join(corpus.entry.s_attributes) or "none"
        raise UnknownAttribute(f"the corpus has no s-attribute {name!r} (it has: {known})")
    return corpus.s_attribute(name)


def _region(attribute: StructuralAttribute, cpos: int) -> int:
    """Number of the region containing ``cpos``, -1 where none does."""
    if len(attribute) == 0:
        return -1  # region_numbers would index an empty ends array
    # the position in the starts' own dtype, so searchsorted never converts the whole array
    return int(attribute.region_numbers(np.asarray([cpos], dtype=attribute.starts.dtype))[0])


def context_line(
    corpus: CwbCorpus, cpos: int, end: int | None, context: Context, show: list[str], meta: list[str]
) -> KwicLine:
    """The line around ``cpos`` .. ``end`` (default ``cpos``) as the keyword: a static link."""
    last = cpos if end is None else end
    if not 0 <= cpos <= last < corpus.size:
        raise OutOfRange(f"positions {cpos}..{last} are outside the corpus (0 to {corpus.size - 1})")
    return build_line(corpus, Hit(cpos, last), context, show, meta)


def _span(corpus: CwbCorpus, hit: Hit, context: Context) -> tuple[int, int]:
    """First and last cpos of the line: ``context.tokens`` each side, cut at the region's edges."""
    left_start = max(0, hit.match - context.tokens)
    right_end = min(corpus.size - 1, hit.matchend + context.tokens)
    if context.region is not None:
        regions = _s(corpus, context.region)
        number, end_number = _region(regions, hit.match), _region(regions, hit.matchend)
        if number >= 0:
            region_start = int(regions.starts[number])
            left_start = max(left_start, region_start) if context.tokens else region_start
        if end_number >= 0:
            region_end = int(regions.ends[end_number])
            right_end = min(right_end, region_end) if context.tokens else region_end
    return left_start, right_end


def _meta(corpus: CwbCorpus, positions: list[int], names: list[str]) -> list[dict[str, str | None]]:
    """Per position, per s-attribute, the value of the region containing it (its number when the
    regions carry no values; None outside any region): one search per attribute for all positions."""
    values: list[dict[str, str | None]] = [{} for _ in positions]
    for name in names:
        attribute = _s(corpus, name)
        if len(attribute) == 0:
            numbers = [-1] * len(positions)
        else:  # positions in the starts' own dtype, so searchsorted never converts the whole array
            numbers = attribute.region_numbers(np.asarray(positions, dtype=attribute.starts.dtype)).tolist()
        decoded: dict[int, str | None] = {-1: None}
        for line, number in zip(values, numbers, strict=True):
            value = decoded.get(number)
            if value is None and number >= 0:
                value = decoded[number] = attribute.value(number) if attribute.has_values else str(number)
            line[name] = value
    return values


def build_lines(
    corpus: CwbCorpus, hits: list[Hit], context: Context, show: list[str], meta: list[str]
) -> list[KwicLine]:
    """Concordance lines: left context, keyword, right context, structural values at the match.

    Tokens are value lists: the word (or the first p-attribute of a corpus without one), then
    ``show``. All lines are decoded together: one gather per attribute over every line's span.
    """
    names = corpus.entry.p_attributes
    first = "word" if "word" in names else names[0]
    attributes = [_p(corpus, name) for name in [first] + [a for a in show if a != first]]
    metas = _meta(corpus, [hit.match for hit in hits], meta)
    if not hits:
        return []
    beyond = around(corpus) if context.region is None else None
    if context.region is None:  # tokens each side, cut at the corpus's ends: for all lines at once
        # past the partition's edges, its neighbours' tokens (as far as they reach: NEIGHBOUR_TOKENS)
        lowest, highest = (beyond.first, beyond.stop - 1) if beyond is not None else (0, corpus.size - 1)
        matched = np.asarray([(hit.match, hit.matchend) for hit in hits], dtype=np.int64)
        starts = np.maximum(matched[:, 0] - context.tokens, lowest)
        stops = np.minimum(matched[:, 1] + context.tokens, highest)
        spans = list(zip(starts.tolist(), stops.tolist(), strict=True))
    else:
        spans = [_span(corpus, hit, context) for hit in hits]
        starts = np.asarray([a for a, _ in spans], dtype=np.int64)
        stops = np.asarray([b for _, b in spans], dtype=np.int64)
    lengths = stops - starts + 1
    line_starts = np.cumsum(lengths) - lengths
    positions = np.repeat(starts - line_starts, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
    outside = np.flatnonzero((positions < 0) | (positions >= corpus.size))
    if beyond is None or not len(outside):
        columns = [attribute.string_array[attribute.ids_at(positions)].tolist() for attribute in attributes]
        breaks = _breaks(corpus, context.marks, positions, line_starts)
    else:
        inside = np.flatnonzero((positions >= 0) & (positions < corpus.size))
        columns = []
        for attribute in attributes:
            column = np.empty(len(positions), dtype=object)
            column[inside] = attribute.string_array[attribute.ids_at(positions[inside])]
            column[outside] = beyond.values(attribute.name, positions[outside].tolist())
            columns.append(column.tolist())
        breaks = _breaks_beyond(corpus, beyond, context.marks, positions, line_starts)
    tokens = list(map(list, zip(*columns, strict=True)))  # a value list per token, made without a Python loop
    lines = []
    for k, (hit, (left_start, right_end), at, values) in enumerate(
            zip(hits, spans, line_starts.tolist(), metas, strict=True)):
        a, b = at + hit.match - left_start, at + hit.matchend - left_start + 1
        end = at + right_end - left_start + 1
        lines.append(KwicLine(hit, tokens[at:a], tokens[a:b], tokens[b:end], values, left_start,
                              {name: found[k] for name, found in breaks.items()}))
    return lines


def _breaks(corpus: CwbCorpus, names: tuple[str, ...], positions: np.ndarray,
            line_starts: np.ndarray) -> dict[str, list[list[int]]]:
    """Per s-attribute, per line: the tokens of the line (``positions``, the lines one after the
    other from ``line_starts``) that a boundary of its regions comes before — the region differs from
    the previous token's (a new one begins, or the last one ended)."""
    found: dict[str, list[list[int]]] = {}
    for name in names:
        regions = _s(corpus, name)
        typed = positions.astype(regions.starts.dtype) if len(regions) else positions
        numbers = regions.region_numbers(typed) if len(regions) else np.full(len(positions), -1)
        before = regions.region_numbers(np.maximum(typed - 1, 0)) if len(regions) else numbers
        changed = numbers != before
        changed[line_starts] = False  # a line's first token: what came before it is not shown
        cut = np.searchsorted(line_starts, np.flatnonzero(changed), side="right") - 1
        per_line: list[list[int]] = [[] for _ in line_starts]
        for line, index in zip(cut.tolist(), np.flatnonzero(changed).tolist(), strict=True):
            per_line[line].append(index - int(line_starts[line]))
        found[name] = per_line
    return found


def _breaks_beyond(corpus: CwbCorpus, beyond: Around, names: tuple[str, ...], positions: np.ndarray,
                   line_starts: np.ndarray) -> dict[str, list[list[int]]]:
    """:func:`_breaks` for lines that run past the partition's edges into its neighbours' tokens: a
    boundary comes before a token where one of the two lies in a region and the other not, where a
    region begins at it, or where one ends at the token before it."""
    found: dict[str, list[list[int]]] = {}
    inside = (positions >= 0) & (positions < corpus.size)
    outside = np.flatnonzero(~inside)
    for name in names:
        regions = _s(corpus, name)
        covered = np.zeros(len(positions), dtype=np.bool_)
        begins = np.zeros(len(positions), dtype=np.bool_)
        ends = np.zeros(len(positions), dtype=np.bool_)
        if len(regions) and inside.any():
            at = np.flatnonzero(inside)
            numbers = regions.region_numbers(positions[at].astype(regions.starts.dtype))
            held = numbers >= 0
            number = np.maximum(numbers, 0)
            covered[at] = held
            begins[at] = held & (np.asarray(regions.starts, dtype=np.int64)[number] == positions[at])
            ends[at] = held & (np.asarray(regions.ends, dtype=np.int64)[number] == positions[at])
        for k, mark in zip(outside.tolist(), beyond.regions(name, positions[outside].tolist()), strict=True):
            if mark is not None:
                covered[k], begins[k], ends[k] = True, mark[1], mark[2]
        changed = np.zeros(len(positions), dtype=np.bool_)
        changed[1:] = (covered[1:] != covered[:-1]) | (covered[1:] & begins[1:]) | (covered[:-1] & ends[:-1])
        changed[line_starts] = False  # a line's first token: what came before it is not shown
        per_line: list[list[int]] = [[] for _ in line_starts]
        for index in np.flatnonzero(changed).tolist():
            line = int(np.searchsorted(line_starts, index, side="right")) - 1
            per_line[line].append(index - int(line_starts[line]))
        found[name] = per_line
    return found


def build_line(corpus: CwbCorpus, hit: Hit, context: Context, show: list[str], meta: list[str]) -> KwicLine:
    """One concordance line (see :func:`build_lines`)."""
    return build_lines(corpus, [hit], context, show, meta)[0]
