"""Co-occurrence counts in windows around the hits, as cwb-ccc counts them, with each collocate's
marginal and in-hit frequencies; in a subcorpus (``Chosen``), every position counted is one of its
own, as CQPweb counts collocates within a subcorpus. What the windows read past the partition's edges
(``spill``) the front end adds once, so that collocations do not depend on where the corpus was cut."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from cowbird.engines.analyses.spans import CHUNK_POSITIONS, NO_DEADLINE, Ints
from cowbird.engines.analyses.subcorpus import Filters, chosen
from cowbird.engines.base import Deadline
from cowbird.engines.edges import around
from cowbird.engines.results import Matches
from cowbird.store import CwbCorpus, PositionalAttribute


@dataclass
class Cooccurrence:
    values: list[str]
    f: list[int]  # co-occurrences: positions in some hit's window with this value
    marginal: list[int]  # the value's frequency in the partition (in the subcorpus)
    in_nodes: list[int]  # the value's frequency inside the hits (match .. matchend)
    context_tokens: int  # positions in the windows (each once), hits excluded
    node_tokens: int  # positions inside hits (each once)
    size: int  # tokens in the partition (in the subcorpus)
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


def cooccurrence(deadline: Deadline, corpus: CwbCorpus, matches: Matches, attribute: str, left: int, right: int,
                 within: str | None, max_rows: int, filters: Filters = ()) -> Cooccurrence:
    """Co-occurrence counts in the windows around the hits, as cwb-ccc counts them: the windows'
    positions (``left`` tokens before each match, ``right`` after its matchend, within the region of
    ``within`` around it), each position once however many windows hold it, minus every position
    inside a hit; the marginal and in-hit frequency of each collocate come with it. In the subcorpus
    of ``filters``, the windows, the hits and the marginals hold its positions only (a window reaching
    past its texts counts nothing there), and the partition's size is its tokens."""
    subcorpus = chosen(corpus, filters)
    p = corpus.p_attribute(attribute)
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
    f, context_tokens = _count_ids(p, (subcorpus.kept(_outside(chunk, node_starts, node_ends))
                                       for chunk in _expanded(context_starts, context_ends)), deadline)
    in_nodes, node_tokens = _count_ids(p, (subcorpus.kept(chunk) for chunk in _expanded(node_starts, node_ends)),
                                       deadline)
    found = np.flatnonzero(f + in_nodes)  # in hits only: the front end needs their in-hit counts too
    truncated = len(found) > max_rows
    if truncated:
        found = found[np.argsort(-(f[found] + in_nodes[found]), kind="stable")[:max_rows]]
    strings = p.strings
    ids = found.tolist()
    return Cooccurrence(
        [strings[i] for i in ids], f[found].tolist(), subcorpus.frequencies(p, ids, deadline),
        in_nodes[found].tolist(), context_tokens, node_tokens, subcorpus.tokens, truncated,
    )


@dataclass
class Spill:
    """What a partition's windows read past its edges, and what they hold near them, as global
    positions: ``positions`` (with their ``values``) are window positions in the tokens before or after
    the partition (``cowbird.engines.edges``), which the partition does not count itself; ``occupied``
    are the positions near its edges (as far as another partition's windows can reach in) that its own
    windows or hits hold. The front end counts each spilled position once, and none that the
    partition holding it counted (``core.analysis_merge.spilled``)."""

    positions: list[int]
    values: list[str]
    occupied: list[int]


def spill(deadline: Deadline, corpus: CwbCorpus, matches: Matches, attribute: str, left: int, right: int,
          within: str | None, filters: list[tuple[str, bool, str]] | None = None) -> Spill:
    """The windows around the hits past the partition's first and last token (``left`` tokens before a
    match, ``right`` after a matchend, as :func:`cooccurrence` counts them inside it), over the tokens
    the partition carries of its neighbours; those outside the subcorpus of ``filters`` left out.
    Windows limited to a region (``within``) never leave the partition (it is cut between texts), and
    a partition without neighbours has none."""
    found = around(corpus)
    size = corpus.size
    if within is not None or found is None or not len(matches) or not size:
        return Spill([], [], [])
    deadline.check()
    match = np.asarray(matches.match, dtype=np.int64)
    matchend = np.asarray(matches.matchend, dtype=np.int64)
    head, tail = min(size, right), min(size, left)  # how far the neighbours' windows reach in
    near = (match < head + left) | (match < left) | (matchend >= size - tail - right) | (matchend + right >= size)
    match, matchend = match[near], matchend[near]
    starts = np.concatenate([np.maximum(match - left, found.first), matchend + 1])
    ends = np.concatenate([match - 1, np.minimum(matchend + right, found.stop - 1)])
    context_starts, context_ends = _union(starts, ends)
    outside = [int(p) for p in np.concatenate(list(_expanded(context_starts, context_ends)) or [np.zeros(0, np.int64)])
               if not 0 <= p < size]
    if outside and filters:
        outside = [p for p, ok in zip(outside, found.in_subcorpus(filters, outside), strict=True) if ok]
    edges = np.unique(np.concatenate([np.arange(head, dtype=np.int64), np.arange(size - tail, size, dtype=np.int64)]))
    node_starts, node_ends = _union(match, matchend)
    free = _outside(_outside(edges, context_starts, context_ends), node_starts, node_ends)
    occupied = np.setdiff1d(edges, free)
    offset = found.offset
    return Spill([offset + p for p in outside], found.values(attribute, outside), (occupied + offset).tolist())
