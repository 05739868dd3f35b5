"""Stage 3b: merge the passes and apply CQP's matching strategy, ``cut`` and ``expand``.

The rules are those of CQP's ranges.c: the passes' matches are merged in (match, matchend) order
without exact duplicates (the first pass's target and keyword win); then

- ``traditional`` keeps everything;
- ``standard`` keeps, per start, the shortest match, then, per end, the earliest start;
- ``shortest`` drops every match that contains another one;
- ``longest`` (whose passes already took the longest end per start) drops every match contained
  in another one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import assert_never

import numpy as np

from cowbird.core.wire import Strategy
from cowbird.engines.native.corpus_state import RegionIndex
from cowbird.engines.results import Matches


def merge(passes: list[Matches]) -> Matches:
    """Union of the passes in corpus order, exact duplicates dropped (earlier pass first)."""
    passes = [p for p in passes if len(p)]
    if not passes:
        return Matches.empty()
    if len(passes) == 1:
        matches = passes[0]
        if len(matches) < 2 or bool(np.all(np.diff(matches.match) > 0)):
            return matches  # one pass gives one match per start; usually they are already in order
        order = np.argsort(matches.match, kind="stable")
        return matches.take(order)
    union = Matches.concatenate(passes)
    span = int((union.matchend - union.match).max()) + 1
    if int(union.match.max()) < (1 << 62) // span:
        # one key per hit, (match, matchend) in order; a stable sort keeps the earlier pass first among
        # equal keys, and timsort merges the passes' ascending runs instead of sorting from scratch
        order = np.argsort(union.match * span + (union.matchend - union.match), kind="stable")
    else:
        number = np.concatenate([np.full(len(p), k) for k, p in enumerate(passes)])
        order = np.lexsort((number, union.matchend, union.match))
    union = union.take(order)
    start, end = union.match, union.matchend
    keep = np.ones(len(start), dtype=np.bool_)
    keep[1:] = (start[1:] != start[:-1]) | (end[1:] != end[:-1])
    return union.take(keep)


def _first_per_start(matches: Matches) -> Matches:
    keep = np.ones(len(matches), dtype=np.bool_)
    keep[1:] = matches.match[1:] != matches.match[:-1]
    return matches if keep.all() else matches.take(keep)  # one match per start is the rule: no copy then


def apply_strategy(matches: Matches, strategy: Strategy) -> Matches:
    """Filter merged matches (sorted by start, end) as CQP's strategy does (the caller has checked
    ``strategy`` against ``STRATEGIES``)."""
    if strategy == "traditional" or len(matches) == 0:
        return matches
    if strategy == "standard":
        matches = _first_per_start(matches)
        if len(matches) < 2 or bool(np.all(np.diff(matches.matchend) > 0)):
            return matches  # ends strictly increasing: no two matches share an end
        # per end, the earliest start survives; starts are ascending, so it is the first of each end
        order = np.lexsort((matches.match, matches.matchend))
        ends = matches.matchend[order]
        first = np.ones(len(order), dtype=np.bool_)
        first[1:] = ends[1:] != ends[:-1]
        keep = np.zeros(len(matches), dtype=np.bool_)
        keep[order[first]] = True
        return matches.take(keep)
    if strategy == "shortest":
        matches = _first_per_start(matches)
        # a match contains a later one when some later start has an end not beyond its own
        later_min_end = np.minimum.accumulate(matches.matchend[::-1])[::-1]
        contains = np.zeros(len(matches), dtype=np.bool_)
        contains[:-1] = later_min_end[1:] <= matches.matchend[:-1]
        keep = ~contains
        return matches.take(keep)
    if strategy == "longest":
        order = np.lexsort((-matches.matchend, matches.match))
        matches = _first_per_start(matches.take(order))
        earlier_max_end = np.maximum.accumulate(matches.matchend)
        contained = np.zeros(len(matches), dtype=np.bool_)
        contained[1:] = earlier_max_end[:-1] >= matches.matchend[1:]
        keep = ~contained
        return matches.take(keep)
    assert_never(strategy)


def first(matches: Matches, count: int) -> Matches:
    return matches.take(slice(0, count))


@dataclass(frozen=True)
class Expansion:
    """CQP's ``expand [left|right] to N s`` (``regions``: the s-attribute's) or ``expand to N``
    (``regions`` None: tokens, in a corpus of ``size``)."""

    regions: RegionIndex | None
    count: int
    left: bool
    right: bool
    size: int


def expand(matches: Matches, how: Expansion) -> Matches:
    """Widen each match (CQP's expand_dataspace): by ``count`` tokens, or to its region and the
    ``count - 1`` regions beyond it, on the sides asked for; a side outside every region stays as it
    is; then adjacent duplicates merge (RUniq, anchors of the first)."""
    if how.count <= 0:
        return matches
    start, end = matches.match, matches.matchend
    if how.regions is None:
        if how.left:
            start = np.maximum(start - how.count, 0)
        if how.right:
            end = np.minimum(end + how.count, how.size - 1)
    else:
        regions, reach = how.regions, how.count - 1
        at_start = regions.containing(start) if how.left else None
        if how.left:
            assert at_start is not None
            first = np.maximum(at_start - reach, 0)
            start = np.where(at_start >= 0, regions.starts[np.maximum(first, 0)], start)
        if how.right:
            # one-token matches (the usual case): the region of the start is the region of the end
            same = at_start is not None and bool(np.array_equal(matches.match, end))
            number = at_start if same and at_start is not None else regions.containing(end)
            last = np.minimum(number + reach, len(regions) - 1)
            end = np.where(number >= 0, regions.ends[np.maximum(last, 0)], end)
    keep = np.ones(len(start), dtype=np.bool_)
    keep[1:] = (start[1:] != start[:-1]) | (end[1:] != end[:-1])
    kept = matches.take(keep)
    return Matches(start[keep], end[keep], kept.target, kept.keyword)


class StreamingStrategy:
    """The matching strategy applied range by range of start positions, with what each range must
    know of the ranges before it, so that the result equals ``apply_strategy`` on all at once.

    ``feed`` takes the merged matches of the starts in ``[lo, hi)`` and returns the matches that are
    final; ``finish`` returns what is still held back. Matches come out in corpus order.

    - ``standard``: a match is dropped when an earlier start has a match with the same end; the
      ends at or past ``hi`` are carried to the next range.
    - ``longest``: a match is dropped when an earlier start reaches at least as far; the furthest
      end so far is carried.
    - ``shortest``: a match is dropped when a later start ends no later; a match ending at or past
      ``hi`` is held back until a range starting beyond its end has been seen.
    """

    def __init__(self, strategy: Strategy) -> None:
        self.strategy = strategy
        self.ends = np.zeros(0, dtype=np.int64)  # standard: ends of earlier starts' matches, >= lo
        self.furthest = -1  # longest: the furthest end of any earlier start
        self.pending = Matches.empty()  # shortest: matches a later range may still drop

    def feed(self, merged: Matches, hi: int) -> Matches:
        if self.strategy == "traditional" or (len(merged) == 0 and len(self.pending) == 0):
            return merged
        if self.strategy == "standard":
            return self._standard(merged, hi)
        if self.strategy == "longest":
            return self._longest(merged)
        if self.strategy == "shortest":
            return self._shortest(merged, hi)
        assert_never(self.strategy)

    def finish(self) -> Matches:
        held, self.pending = self.pending, Matches.empty()
        return held

    def _standard(self, merged: Matches, hi: int) -> Matches:
        matches = _first_per_start(merged)
        if len(self.ends):
            seen = np.isin(matches.matchend, self.ends)
            if seen.any():
                matches = matches.take(~seen)
        self.ends = np.union1d(self.ends[self.ends >= hi], matches.matchend[matches.matchend >= hi])
        return apply_strategy(matches, "standard")

    def _longest(self, merged: Matches) -> Matches:
        order = np.lexsort((-merged.matchend, merged.match))
        matches = _first_per_start(merged.take(order))
        if len(matches) == 0:
            return matches
        reach = np.maximum.accumulate(np.concatenate(([self.furthest], matches.matchend)))
        self.furthest = int(reach[-1])
        return matches.take(reach[:-1] < matches.matchend)

    def _shortest(self, merged: Matches, hi: int) -> Matches:
        matches = _first_per_start(merged)
        pending = self.pending
        if len(matches) and len(pending):
            pending = pending.take(pending.matchend < int(matches.matchend.min()))
        kept = apply_strategy(matches, "shortest")
        final_pending = pending.matchend < hi
        final_kept = kept.matchend < hi
        self.pending = Matches.concatenate([pending.take(~final_pending), kept.take(~final_kept)])
        return Matches.concatenate([pending.take(final_pending), kept.take(final_kept)])


class StreamingExpand:
    """``expand`` range by range: a match widened to the same span as the last one given out is
    dropped, as ``expand`` merges adjacent duplicates."""

    def __init__(self, how: Expansion) -> None:
        self.how = how
        self.last: tuple[int, int] | None = None

    def feed(self, matches: Matches) -> Matches:
        widened = expand(matches, self.how)
        if len(widened) and self.last == (int(widened.match[0]), int(widened.matchend[0])):
            widened = widened.take(np.arange(1, len(widened)))
        if len(widened):
            self.last = (int(widened.match[-1]), int(widened.matchend[-1]))
        return widened
