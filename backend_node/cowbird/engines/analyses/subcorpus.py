"""A partition's part in a subcorpus: its tokens and texts in the regions every filter chooses, and
an s-attribute's values in it with their sizes (summed over partitions by ``cowbird.core.subcorpus``);
and the subcorpus as the analyses count in it (``Chosen``): which positions are in it, and how often
given values of a p-attribute occur there (a collocate's marginal, a headword's frequency)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import LimitExceeded
from cowbird.core.periods import Period, period_of
from cowbird.engines.analyses.kept import Filtered, Kept
from cowbird.engines.analyses.spans import CHUNK_POSITIONS, NO_DEADLINE, Ints
from cowbird.engines.base import Deadline
from cowbird.query.pcre import compile_pcre
from cowbird.store import CwbCorpus, PositionalAttribute, StructuralAttribute
from cowbird.store.regions import (
    check_attributes,
    covered_before,
    filter_regions,
    intersection,
    painted,
    tokens_in,
    value_table,
    with_values,
)

Filters = Sequence[tuple[str, bool, str]]
"""A subcorpus as a node takes it: (s-attribute, negated, CQP regex of the whole value) each."""


@dataclass(frozen=True)
class Chosen:
    """The stretches of a partition a subcorpus holds (sorted, disjoint, ends included), or the whole
    partition (``starts`` None: no filters); what is counted in it is kept in ``tables`` (the node's,
    ``kept.Kept.counts``; None: not kept)."""

    size: int
    starts: Ints | None = None
    ends: Ints | None = None
    filters: Filtered = ()  # what chose them: the key of the counts kept
    tables: Kept | None = field(default=None, compare=False, repr=False)

    @property
    def whole(self) -> bool:
        return self.starts is None

    @property
    def tokens(self) -> int:
        if self.starts is None or self.ends is None:
            return self.size
        return int((self.ends - self.starts + 1).sum())

    def inside(self, positions: npt.NDArray[np.integer[Any]]) -> npt.NDArray[np.bool_]:
        """Whether each position lies in the subcorpus."""
        if self.starts is None or self.ends is None:
            return np.ones(len(positions), dtype=np.bool_)
        at = np.asarray(positions, dtype=np.int64)
        number = np.searchsorted(self.starts, at, side="right") - 1
        return (number >= 0) & (self.ends[np.maximum(number, 0)] >= at)

    def kept(self, positions: Ints) -> Ints:
        """The positions in the subcorpus, in their order."""
        return positions if self.whole else positions[self.inside(positions)]

    def frequencies(self, p: PositionalAttribute, ids: Sequence[int | None],
                    deadline: Deadline = NO_DEADLINE) -> list[int]:
        """How often each lexicon id occurs in the subcorpus (0 for None: a value the partition lacks).
        Whole: the lexicon's frequencies. Else the cheaper of two exact ways: the ids' positions in
        the reverse index tested against the stretches (as many as the ids occur), or the subcorpus's
        positions read once and counted (as many as it holds)."""
        known = np.asarray([-1 if i is None else i for i in ids], dtype=np.int64)
        found = known >= 0
        frequencies = np.asarray(p.frequencies, dtype=np.int64)
        counts = np.zeros(len(known), dtype=np.int64)
        if self.starts is None or self.ends is None:
            counts[found] = frequencies[known[found]]
            return [int(c) for c in counts.tolist()]
        wanted = known[found]
        if int(frequencies[wanted].sum()) <= self.tokens:
            lengths = frequencies[wanted]
            positions = np.asarray(p.positions_of(wanted), dtype=np.int64)
            deadline.check()
            inside = self.inside(positions).astype(np.int64)
            ends = np.cumsum(lengths)
            sums = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(inside)])
            counts[found] = sums[ends] - sums[ends - lengths]
        else:
            every = self.counts(p, deadline)
            counts[found] = every[wanted]
        return [int(c) for c in counts.tolist()]

    def counts(self, p: PositionalAttribute, deadline: Deadline = NO_DEADLINE) -> Ints:
        """Each lexicon id's frequency in the subcorpus: the partition read in order, a chunk of
        ``CHUNK_POSITIONS`` at a time (those the subcorpus touches), its positions in the stretches
        counted (a subcorpus of many short texts is read as one stream, not a read per text); kept
        for the next analysis under the same filters (``kept.COUNTS_KEPT_BYTES`` over the node)."""
        key = (p, self.filters)
        kept = self.tables.counts.get(key) if self.tables is not None else None
        if kept is not None:
            return kept
        totals = np.zeros(max(p.lexicon_size, 1), dtype=np.int64)
        assert self.starts is not None and self.ends is not None
        if not len(self.starts):
            return totals
        first, stop = int(self.starts[0]), int(self.ends[-1]) + 1
        for lo in range(first, stop, CHUNK_POSITIONS):
            hi = min(lo + CHUNK_POSITIONS, stop)
            deadline.check()
            inside, _ = painted(self.starts, self.ends, lo, hi)
            if inside.any():
                ids = np.asarray(p.id_range(lo, hi), dtype=np.int64)[inside]
                totals += np.bincount(ids, minlength=len(totals))
        totals.flags.writeable = False  # shared by the analyses that read it
        if self.tables is not None:
            self.tables.counts.put(key, totals)
        return totals

    def region_tokens(self, attribute: StructuralAttribute) -> Ints:
        """Each region's tokens in the subcorpus."""
        if self.starts is None or self.ends is None:
            return np.asarray(attribute.ends, dtype=np.int64) - np.asarray(attribute.starts, dtype=np.int64) + 1
        return tokens_in(covered_before(self.starts, self.ends), attribute)


def chosen(corpus: CwbCorpus, filters: Filters, kept: Kept | None = None) -> Chosen:
    """The partition's stretches in the subcorpus the filters choose (every filter's regions), or the
    whole partition without filters; what is counted in it kept in ``kept`` (the node's)."""
    if not filters:
        return Chosen(corpus.size)
    starts, ends = intersection([filter_regions(corpus, a, negated, pattern) for a, negated, pattern in filters],
                                corpus.size)
    return Chosen(corpus.size, starts, ends, tuple(filters), kept)


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


def subcorpus(corpus: CwbCorpus, filters: list[tuple[str, bool, str]], texts: str | None, attribute: str | None,
              match: str | None, ignore_case: bool, max_values: int, period: Period | None = None) -> SubcorpusSize:
    """The partition's part in the subcorpus the filters choose (the tokens in regions whose value
    matches every filter): its size, and with ``attribute`` that attribute's values in it (with a
    ``period``: the periods of the dates they hold, ``cowbird.core.periods``)."""
    check_attributes(corpus, None, texts)
    starts, ends = intersection([filter_regions(corpus, a, negated, pattern) for a, negated, pattern in filters],
                                corpus.size)
    count = covered_before(starts, ends)
    tokens = int((ends - starts + 1).sum())
    text_regions = tokens_in(count, corpus.s_attribute(texts)) if texts else None
    text_count = None if text_regions is None else int((text_regions > 0).sum())
    all_texts = None if text_regions is None else len(text_regions)
    if attribute is None:
        return SubcorpusSize(tokens, text_count, all_texts, [], [], [])
    s = with_values(corpus, attribute, "values")
    table = value_table(s)
    per_region = tokens_in(count, s)
    value_tokens = np.bincount(table.of_region, weights=per_region, minlength=len(table.names)).round().astype(np.int64)
    value_regions = np.bincount(table.of_region, weights=per_region > 0, minlength=len(table.names)).round().astype(
        np.int64)
    chosen = np.flatnonzero(value_regions > 0)
    if match is not None:
        search = compile_pcre(match, ignore_case).search
        chosen = chosen[np.fromiter((search(table.names[i]) is not None for i in chosen), dtype=np.bool_,
                                    count=len(chosen))]
    if period is not None:
        keys = [period_of(table.names[i], period) for i in chosen.tolist()]
        tokens_of: dict[str, int] = {}
        regions_of: dict[str, int] = {}
        for key, t, r in zip(keys, value_tokens[chosen].tolist(), value_regions[chosen].tolist(), strict=True):
            tokens_of[key] = tokens_of.get(key, 0) + t
            regions_of[key] = regions_of.get(key, 0) + r
        names = sorted(tokens_of, key=lambda k: (k == "", k))
        return SubcorpusSize(tokens, text_count, all_texts, names, [tokens_of[k] for k in names],
                             [regions_of[k] for k in names])
    if len(chosen) > max_values:
        raise LimitExceeded(f"values={attribute}: {len(chosen):,} values on this partition, more than {max_values:,} "
                            "listed at once; choose some with match (a regular expression)")
    return SubcorpusSize(tokens, text_count, all_texts, [table.names[i] for i in chosen], value_tokens[chosen].tolist(),
                         value_regions[chosen].tolist())
