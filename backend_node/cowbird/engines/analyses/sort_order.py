"""A partition's hits in sorted order, their sort keys as the front end merges them across
partitions, and where a key from another partition falls in the order (``SortOrder.place``). A key
past the partition's edges (``right1.word`` of its last token) reads its neighbours' tokens, as CQP
reads the next token of the corpus in one piece."""

from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cowbird.core.analysis_merge import MergeKey
from cowbird.core.analysis_spec import Fold, SortKey, SortLevel
from cowbird.core.errors import LimitExceeded
from cowbird.engines.analyses import spans
from cowbird.engines.analyses.gdex import gdex_keys
from cowbird.engines.analyses.kept import Kept
from cowbird.engines.analyses.spans import Ints, past_edges, reach, sequences, span_positions, span_strings
from cowbird.engines.base import Deadline
from cowbird.engines.results import Matches
from cowbird.store import CwbCorpus
from cowbird.store.lexicon import Groups, fold_text, groups

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
    scores: Ints | None = None  # GDEX: each hit's key (cowbird.core.gdex.sort_key of its score)

    def keys(self, ranks: list[int]) -> list[SortValue]:
        """The sort keys of the hits at these ranks, as the front end compares them across partitions."""
        hits = self.order[np.asarray(ranks, dtype=np.int64)] if ranks else np.zeros(0, dtype=np.int64)
        if self.scores is not None:
            return [int(v) for v in self.scores[hits].tolist()]
        if self.key.random:
            return [int(v) for v in random_keys(self.matches.match[hits] + self.base, self.key.seed).tolist()]
        picked = self.matches.take(hits)
        values: list[list[list[list[str]]]] = [[] for _ in range(len(hits))]
        size = self.corpus.size
        for level in self.key.levels:
            start, end, valid = span_positions(picked, level.span, size, reach(self.corpus))
            p = self.corpus.p_attribute(level.attribute)
            folded = groups(p, level.fold) if level.fold else None
            for value, a, b, ok in zip(values, start.tolist(), end.tolist(), valid.tolist(), strict=True):
                if not ok:
                    value.append([])
                    continue
                if min(a, b) < 0 or max(a, b) >= size:  # read on into the neighbours' tokens
                    strings = span_strings(self.corpus, level.attribute, a, b)
                    value.append([[fold_text(v, level.fold) for v in strings], strings] if folded else [strings])
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


def sort_order(deadline: Deadline, corpus: CwbCorpus, matches: Matches, key: SortKey, base: int,
               kept: Kept | None = None) -> SortOrder:
    """The hits ordered by ``key``; equal keys keep corpus order (in either direction); a GDEX sort
    keeps its tables in ``kept`` (the node's)."""
    deadline.check()
    n = len(matches)
    tie = np.arange(n, dtype=np.int64)
    if key.gdex is not None:
        scores = gdex_keys(deadline, corpus, matches, key.gdex, kept)
        order = np.lexsort((tie, -scores if key.random_direction == "desc" else scores))
        return SortOrder(key, order.astype(np.int64), base, matches, corpus, scores)
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
    p = corpus.p_attribute(level.attribute)
    start, end, valid = span_positions(matches, level.span, corpus.size, reach(corpus))
    beyond = valid & past_edges(start, end, corpus.size)
    lengths = np.where(valid, np.abs(end - start) + 1, 0)
    width = max(int(lengths.max()) if n else 0, 1)
    if n * width > spans.MAX_SORT_CELLS:
        raise LimitExceeded(f"sorting {n:,} hits on spans of up to {width} tokens is more than a node sorts at "
                            "once; sort on fewer tokens (e.g. match.lemma or left1.word) or narrow the query")
    inner = valid & ~beyond
    rows_set = np.flatnonzero(inner)
    columns: list[npt.NDArray[np.int64]] = [(~valid).astype(np.int64)]
    plain: Fold = ""
    passes = ([(groups(p, level.fold), level.fold)] if level.fold else []) + [(groups(p, plain), plain)]
    for table, fold in passes:
        # a group's rank r is 2r + 1, so that a value past the edges the lexicon lacks fits between (2r)
        matrix = np.full((n, width), -1, dtype=np.int64)  # -1: the span has ended (a prefix sorts first)
        for which, positions in sequences(start[inner], end[inner]):
            deadline.check()
            ids = np.asarray(p.ids_at(positions.ravel()), dtype=np.int64)
            ranks = np.asarray(table.rank[table.of_id[ids]], dtype=np.int64).reshape(positions.shape)
            matrix[rows_set[which], : positions.shape[1]] = 2 * ranks + 1
        if beyond.any():
            _rank_beyond(corpus, level.attribute, table, fold, matrix, np.flatnonzero(beyond), start, end)
        if level.direction == "desc":  # all reversed, as CQP negates the comparison: a span now sorts before its prefix
            matrix = np.where(matrix >= 0, -matrix, 1)
        columns += [matrix[:, k] for k in range(width)]
    return columns


def _rank_beyond(corpus: CwbCorpus, attribute: str, table: Groups, fold: Fold, matrix: npt.NDArray[np.int64],
                 rows: Ints, start: Ints, end: Ints) -> None:
    """The ranks of the spans of the hits at the partition's edges (a few), read on into its
    neighbours' tokens: a value's place among the lexicon's groups by binary search, ``2r + 1`` for
    the group of rank r, ``2r`` for a value that sorts just before it and is in no group here."""
    order = np.empty(len(table.names), dtype=np.int64)
    order[np.asarray(table.rank, dtype=np.int64)] = np.arange(len(table.names), dtype=np.int64)
    names = table.names
    for row in rows.tolist():
        for k, value in enumerate(span_strings(corpus, attribute, int(start[row]), int(end[row]))):
            folded = fold_text(value, fold)
            at = bisect.bisect_left(range(len(names)), folded, key=lambda r: names[int(order[r])])
            matrix[row, k] = 2 * at + 1 if at < len(names) and names[int(order[at])] == folded else 2 * at
