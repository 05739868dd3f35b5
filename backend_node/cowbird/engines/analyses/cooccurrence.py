"""Co-occurrence counts in windows around the hits, as cwb-ccc counts them, with each collocate's
marginal and in-hit frequencies; in a subcorpus (``Chosen``), every position counted is one of its
own, as CQPweb counts collocates within a subcorpus. What the windows read past the partition's edges
(``spill``) the front end adds once, so that collocations do not depend on where the corpus was cut."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np

from cowbird.engines.analyses.kept import Kept
from cowbird.engines.analyses.spans import CHUNK_POSITIONS, NO_DEADLINE, Ints
from cowbird.engines.analyses.subcorpus import Filters, chosen
from cowbird.engines.base import Deadline
from cowbird.engines.edges import Around, around
from cowbird.engines.results import Matches
from cowbird.store import CwbCorpus, PositionalAttribute, StructuralAttribute


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
    texts: list[int] = field(default_factory=list)  # texts (regions of ``text``) with a co-occurrence of the value
    edge_texts: list[list[int]] = field(default_factory=list)  # of those, the ones another partition's windows reach
    text_regions: int | None = None  # regions of ``text`` in the partition; None: the corpus has no ``text``
    first_text_continued: bool = False  # its first text began in the partition before
    last_text_continues: bool = False  # its last text goes on in the partition after


TEXT = "text"
"""The s-attribute whose regions a collocate's texts are counted in (CQPweb's "in no. of texts")."""


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


def _count_ids(p: PositionalAttribute, chunks: Iterator[Ints], deadline: Deadline = NO_DEADLINE,
              texts: StructuralAttribute | None = None, pairs: list[Ints] | None = None) -> tuple[Ints, int]:
    """Each lexicon id's positions among ``chunks``, and how many positions; with ``texts``, the
    distinct ``(id, text region)`` pairs of the positions inside a text go to ``pairs`` (as
    ``id * regions + region``)."""
    totals = np.zeros(p.lexicon_size, dtype=np.int64)
    seen = 0
    for positions in chunks:
        deadline.check()
        if len(positions):
            ids = np.asarray(p.ids_at(positions), dtype=np.int64)
            totals += np.bincount(ids, minlength=p.lexicon_size)
            seen += len(positions)
            if texts is not None and pairs is not None:
                regions = np.asarray(texts.region_numbers(np.asarray(positions, dtype=texts.starts.dtype)),
                                     dtype=np.int64)
                inside = regions >= 0
                pairs.append(_distinct(ids[inside] * len(texts) + regions[inside]))
    return totals, seen


def _distinct(keys: Ints) -> Ints:
    """The distinct keys, sorted (a sort and a comparison: faster here than ``np.unique``'s hashing)."""
    keys = np.sort(keys)
    if len(keys) < 2:
        return keys
    keep = np.empty(len(keys), dtype=bool)
    keep[0] = True
    np.not_equal(keys[1:], keys[:-1], out=keep[1:])
    return keys[keep]


def _texts(texts: StructuralAttribute, pairs: list[Ints], ids: list[int], size: int, left: int,
           right: int) -> tuple[list[int], list[list[int]]]:
    """For each lexicon id of ``ids``: the number of texts its co-occurrences lie in, and which of
    them other partitions' windows or a cut can reach (those within ``right`` tokens of the first
    token, within ``left`` of the last, the first and the last text), by region number: the front end
    counts those once across partitions (``core.analysis_merge.collocate_texts``)."""
    regions = len(texts)
    found = _distinct(np.concatenate(pairs)) if pairs else np.zeros(0, dtype=np.int64)
    of_id, region = found // max(1, regions), found % max(1, regions)
    counts = np.bincount(of_id, minlength=max(ids, default=-1) + 1)
    starts, ends = np.asarray(texts.starts, dtype=np.int64), np.asarray(texts.ends, dtype=np.int64)
    edge = (starts < right) | (ends >= size - left)
    if regions:
        edge[0] = edge[-1] = True
    at_edge = edge[region] if regions else np.zeros(0, dtype=bool)
    near: dict[int, list[int]] = {}
    for i, r in zip(of_id[at_edge].tolist(), region[at_edge].tolist(), strict=True):
        near.setdefault(i, []).append(r)
    none: list[int] = []  # shared: most values are in no text near an edge
    return counts[np.asarray(ids, dtype=np.int64)].tolist(), [near.get(i, none) for i in ids]


def _cut_texts(corpus: CwbCorpus, texts: StructuralAttribute) -> tuple[bool, bool]:
    """Whether the partition's first text began in the partition before it and its last goes on in
    the one after: read from its neighbour tokens' regions (``cowbird.engines.edges``)."""
    found = around(corpus)
    if found is None or not len(texts):
        return False, False
    before = found.regions(TEXT, [-1]) if found.before else [None]
    after = found.regions(TEXT, [corpus.size]) if found.after else [None]
    first = before[0] is not None and not before[0][2] and int(texts.starts[0]) == 0
    last = after[0] is not None and not after[0][1] and int(texts.ends[-1]) == corpus.size - 1
    return first, last


def cooccurrence(deadline: Deadline, corpus: CwbCorpus, matches: Matches, attribute: str, left: int, right: int,
                 within: str | None, max_rows: int, filters: Filters = (), kept: Kept | None = None) -> Cooccurrence:
    """Co-occurrence counts in the windows around the hits, as cwb-ccc counts them: the windows'
    positions (``left`` tokens before each match, ``right`` after its matchend, within the region of
    ``within`` around it), each position once however many windows hold it, minus every position
    inside a hit; the marginal and in-hit frequency of each collocate come with it. In the subcorpus
    of ``filters``, the windows, the hits and the marginals hold its positions only (a window reaching
    past its texts counts nothing there), and the partition's size is its tokens; the subcorpus's
    counts are kept in ``kept`` (the node's)."""
    subcorpus = chosen(corpus, filters, kept)
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
    texts = corpus.s_attribute(TEXT) if TEXT in corpus.s_attribute_names else None
    pairs: list[Ints] = []
    f, context_tokens = _count_ids(p, (subcorpus.kept(_outside(chunk, node_starts, node_ends))
                                       for chunk in _expanded(context_starts, context_ends)), deadline, texts, pairs)
    in_nodes, node_tokens = _count_ids(p, (subcorpus.kept(chunk) for chunk in _expanded(node_starts, node_ends)),
                                       deadline)
    found = np.flatnonzero(f + in_nodes)  # in hits only: the front end needs their in-hit counts too
    truncated = len(found) > max_rows
    if truncated:
        found = found[np.argsort(-(f[found] + in_nodes[found]), kind="stable")[:max_rows]]
    strings = p.strings
    ids = found.tolist()
    counted = Cooccurrence(
        [strings[i] for i in ids], f[found].tolist(), subcorpus.frequencies(p, ids, deadline),
        in_nodes[found].tolist(), context_tokens, node_tokens, subcorpus.tokens, truncated,
    )
    if texts is not None:
        counted.texts, counted.edge_texts = _texts(texts, pairs, ids, corpus.size, left, right)
        counted.text_regions = len(texts)
        counted.first_text_continued, counted.last_text_continues = _cut_texts(corpus, texts)
    return counted


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
    texts: list[int] = field(default_factory=list)  # per position: where its text is among the neighbour's (-1: none)


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
    return Spill([offset + p for p in outside], found.values(attribute, outside), (occupied + offset).tolist(),
                 _spilled_texts(found, outside))


def _spilled_texts(found: Around, outside: list[int]) -> list[int]:
    """Which text each local position past the partition's edges lies in, as the neighbour tokens'
    regions of ``text`` say, counted from the edge: after the last token, how many texts start between
    the edge and the position (0: the text the partition's last goes on in); before the first, how
    many end between the position and the edge (0: the text the first began in); -1 outside every
    text. The front end turns these into the neighbouring partition's region numbers."""
    if not outside:
        return []
    stop = max(outside)
    first = min(min(outside), 0)
    after = found.regions(TEXT, list(range(found.size, max(found.size, stop + 1))))
    before = found.regions(TEXT, list(range(first, 0)))  # first .. -1
    starts_after = np.cumsum([1 if m is not None and m[1] else 0 for m in after], dtype=np.int64)
    ends_before = np.cumsum([1 if m is not None and m[2] else 0 for m in reversed(before)], dtype=np.int64)[::-1]
    texts = []
    for position in outside:
        if position >= found.size:
            k = position - found.size
            texts.append(-1 if after[k] is None else int(starts_after[k]))
        else:
            k = position - first
            texts.append(-1 if before[k] is None else int(ends_before[k]))
    return texts
