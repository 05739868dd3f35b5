"""CQP's two other kinds of query: MU (``meet``, ``union``) and TAB, over single-token patterns.

Both start from the sorted positions where each token pattern holds (CQP's initial match
lists; ``[]`` gives none) and combine them without an automaton, as ``eval.c`` does:

- ``(meet A B lw rw)`` keeps the positions of A that have a position of B in the window from
  ``lw`` to ``rw`` tokens away (``meet_mu``; with an s-attribute, the region around A). The window
  follows CQP's ``cl_cpos_offset``: an offset past the corpus end makes a minimum distance
  impossible and is clamped as a maximum, while a negative one is not clamped at the corpus
  start, so a window reaching before position 0 finds nothing; ``(union A B)`` merges A and B.
  Every hit is one token. On a partition that carries its neighbours (``cowbird.store.neighbours``)
  the lists also hold the neighbour tokens where a pattern holds (before the partition: negative
  positions; after it: from its size on), so a window across the cut finds what it finds over the
  corpus in one piece, and only the real corpus start and end are the ends above (exact for windows
  of up to ``NEIGHBOUR_TOKENS`` tokens beyond the cut).
- ``TAB A {n,m} B ...`` goes greedily from each position of the first column to the nearest
  position of the next column at the allowed distance, column by column, within the start's
  boundary (``within``, else the HardBoundary, which also bounds an open distance); a match nested
  in the one before (the same end) is dropped (``cqp_run_tab_query``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import QueryFailed, UnknownAttribute
from cowbird.engines.native.compile import PredicateCompiler, holds_on
from cowbird.engines.native.corpus_state import NativeCorpus
from cowbird.engines.native.plan import SearchSpace, TokenTests, boundaries
from cowbird.engines.results import Cpos, Matches
from cowbird.query import Meet, MuTerm, MuUnion, Query, Tabular, TokenPattern


def cooccurrences(corpus: NativeCorpus, query: Query, hard_boundary: int) -> Matches:
    """All matches of an MU or TAB query, in corpus order (``cut`` applied to MU, as CQP does)."""
    evaluator = _Lists(corpus)
    pattern = query.pattern
    if isinstance(pattern, Tabular):
        return _tabular(corpus, evaluator, pattern, SearchSpace.of(query), hard_boundary)
    assert isinstance(pattern, Meet | MuUnion)
    found = evaluator.term(pattern)
    found = found[(found >= 0) & (found < corpus.size)]  # the neighbours' own positions are not hits
    if query.cut is not None:
        found = found[: query.cut]
    return Matches(found, found.copy(), np.full(len(found), -1, dtype=np.int64), None)


class _Lists:
    """The sorted positions of each token pattern, and of meets and unions of them."""

    def __init__(self, corpus: NativeCorpus) -> None:
        self.corpus = corpus
        self.predicates = PredicateCompiler(corpus)
        self.tests = TokenTests(corpus)
        neighbours = corpus.neighbours
        self.before = [] if neighbours is None else neighbours.before
        self.after = [] if neighbours is None else neighbours.after
        # the corpus's first position and one past the last known, in this partition's positions
        self.first = 0 if neighbours is None else -(neighbours.before_offset + len(self.before))
        self.end = corpus.size + len(self.after)

    def token(self, token: TokenPattern) -> Cpos:
        if token.condition is None:
            return np.zeros(0, dtype=np.int64)  # CQP: [] gives an empty initial list here
        predicate = self.predicates.compile(token.condition)
        found = self.tests.cpos_where(predicate)
        if not self.before and not self.after:
            return found
        before = np.flatnonzero(holds_on(predicate, self.before)) - len(self.before)
        after = np.flatnonzero(holds_on(predicate, self.after)) + self.corpus.size
        return np.concatenate((before.astype(np.int64), np.asarray(found, dtype=np.int64), after.astype(np.int64)))

    def term(self, term: MuTerm) -> Cpos:
        if isinstance(term, TokenPattern):
            return self.token(term)
        left, right = self.term(term.left), self.term(term.right)
        if isinstance(term, MuUnion):
            return np.union1d(left, right).astype(np.int64)
        return self._meet(left, right, term)

    def _meet(self, a: Cpos, b: Cpos, meet: Meet) -> Cpos:
        if len(a) == 0 or len(b) == 0:
            return a[:0]
        if meet.region is not None:
            if not self.corpus.has_s_attribute(meet.region):
                raise UnknownAttribute(f"the corpus has no s-attribute {meet.region!r} (in meet)")
            regions = self.corpus.regions(meet.region)
            number = regions.containing(a)
            valid = number >= 0
            start = np.where(valid, regions.starts[np.maximum(number, 0)], -1)
            end = np.where(valid, regions.ends[np.maximum(number, 0)], -1)
        else:
            start, valid_start = _offset(a, meet.low, self.first, self.end, clamp=meet.low <= 0)
            end, valid_end = _offset(a, meet.high, self.first, self.end, clamp=meet.high >= 0)
            valid = valid_start & valid_end
        first = np.searchsorted(b, start, side="left")
        inside = first < len(b)
        hit = np.zeros(len(a), dtype=np.bool_)
        hit[inside] = b[first[inside]] <= end[inside]
        return a[valid & hit]


def _offset(cpos: Cpos, offset: int, first: int, end: int, clamp: bool) -> tuple[Cpos, npt.NDArray[np.bool_]]:
    """CQP's ``cl_cpos_offset``: ``cpos + offset``, clamped to the corpus or invalid past its end; a
    negative offset is only checked against the corpus size, not against its start (``first``),
    and a window starting before that finds nothing. Returns the positions and which are valid;
    ``first`` and ``end`` are the corpus's first position and one past its last."""
    everywhere = np.ones(len(cpos), dtype=np.bool_)
    if offset > 0:
        beyond = end - cpos <= offset
        return np.where(beyond, end - 1, cpos + offset), everywhere if clamp else ~beyond
    if offset < 0:
        if end - first + offset < 0:
            return np.full(len(cpos), first, dtype=np.int64), everywhere if clamp else ~everywhere
        shifted = cpos + offset
        return shifted, shifted >= first  # before the corpus start: CQP finds no window here
    return cpos, everywhere


def _tabular(corpus: NativeCorpus, lists: _Lists, tab: Tabular, within: SearchSpace, hard_boundary: int) -> Matches:
    for number, column in enumerate(tab.columns, start=1):
        if column.condition is None:
            raise QueryFailed(f"[] (any token) is not allowed in a TAB query (column {number}): CQP refuses it too")
    # a TAB match spans its columns' tokens: one across a cut is the documented exception, so the
    # neighbour tokens' positions (before 0, from the size on) take no part
    columns = [found[(found >= 0) & (found < corpus.size)] for found in (lists.token(c) for c in tab.columns)]
    starts, bound = boundaries(corpus, within, hard_boundary, columns[0])
    current = starts.copy()
    ok = np.ones(len(starts), dtype=np.bool_)
    for (low, high), positions in zip(tab.gaps, columns[1:], strict=True):
        nearest = current + low + 1  # l_pos: the first position the next column may take
        ok &= nearest <= bound
        reach = hard_boundary if high is None else high + 1
        last = np.minimum(current + reach, bound)  # r_pos
        index = np.searchsorted(positions, nearest, side="left")
        found = index < len(positions)
        following = np.full(len(current), np.iinfo(np.int64).max, dtype=np.int64)
        following[found] = positions[index[found]]
        ok &= following <= last
        current = np.where(ok, following, current)
    starts, ends = starts[ok], current[ok]
    if len(ends):
        before = np.concatenate(([-1], np.maximum.accumulate(ends)[:-1]))
        keep = ends > before  # a match whose end is an earlier match's is nested in it
        starts, ends = starts[keep], ends[keep]
    return Matches(starts, ends, np.full(len(starts), -1, dtype=np.int64), None)
