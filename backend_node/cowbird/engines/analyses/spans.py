"""The hits' anchors and spans as corpus positions, as CQP takes them (``cqp/ranges.c``): clamped to
the corpus, a span backwards when its second anchor comes first; and the limits every analysis of
spans keeps. A partition is not the corpus: past its edges an anchor reads the tokens it carries of
its neighbours (``reach``, ``strings_at``; ``cowbird.engines.edges``), and is clamped where they end,
which at the corpus's own ends is where CQP clamps it."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt

from cowbird.core.analysis_spec import Anchor, Span
from cowbird.engines.base import Deadline
from cowbird.engines.edges import around
from cowbird.engines.results import Matches
from cowbird.store import CwbCorpus, PositionalAttribute

Ints = npt.NDArray[np.int64]

CHUNK_POSITIONS = 4 * 1024 * 1024
"""Positions expanded at once when windows or matches are counted (bounds the memory of a count)."""

MAX_SORT_CELLS = 64 * 1024 * 1024
"""Hits × tokens a sort key may span (the key table's cells, 8 bytes each); a frequency breakdown's
spans may hold as many tokens."""

NO_DEADLINE = Deadline()
"""For callers without a time budget (the command line): checks that never stop anything."""


def reach(corpus: CwbCorpus) -> tuple[int, int]:
    """The first and last local position an anchor of a partition's hit may take: the partition's own,
    and past its edges the tokens it carries of its neighbours (none at the corpus's ends)."""
    found = around(corpus)
    return (found.first, found.stop - 1) if found is not None else (0, max(corpus.size - 1, 0))


def strings_at(corpus: CwbCorpus, attribute: str, positions: Sequence[int]) -> list[str]:
    """The values of a p-attribute at local positions, those past the partition's edges from its
    neighbours' tokens (a few: the hits at the edges)."""
    p = corpus.p_attribute(attribute)
    found = around(corpus)
    outside = [k for k in positions if not 0 <= k < corpus.size]
    values = dict(zip(outside, found.values(attribute, outside), strict=True)) if found is not None else {}
    return [values[k] if k in values else p.cpos2str(k) for k in positions]


def anchor_positions(matches: Matches, anchor: Anchor, size: int,
                     bounds: tuple[int, int] | None = None) -> tuple[Ints, npt.NDArray[np.bool_]]:
    """Each hit's position for ``anchor``, clamped to the corpus as CQP does (to ``bounds``, the
    partition's ``reach``, when given), and whether it is set (a hit without a target or keyword has
    no such position)."""
    base = {
        "match": matches.match, "matchend": matches.matchend, "target": matches.target, "keyword": matches.keywords
    }[anchor.name]
    base = np.asarray(base, dtype=np.int64)
    valid = base >= 0
    low, high = bounds if bounds is not None else (0, max(size - 1, 0))
    return np.clip(base + anchor.offset, low, high), valid


def span_positions(matches: Matches, span: Span, size: int,
                   bounds: tuple[int, int] | None = None) -> tuple[Ints, Ints, npt.NDArray[np.bool_]]:
    start, valid_start = anchor_positions(matches, span.start, size, bounds)
    end, valid_end = anchor_positions(matches, span.end, size, bounds)
    return start, end, valid_start & valid_end


def past_edges(start: Ints, end: Ints, size: int) -> npt.NDArray[np.bool_]:
    """Which spans reach past the partition's edges (into its neighbours' tokens)."""
    return (np.minimum(start, end) < 0) | (np.maximum(start, end) >= size)


def span_strings(corpus: CwbCorpus, attribute: str, start: int, end: int) -> list[str]:
    """The values of a p-attribute over one span (backwards when ``end`` comes first), past the
    partition's edges too."""
    step = 1 if end >= start else -1
    return strings_at(corpus, attribute, range(start, end + step, step))


def sequences(start: Ints, end: Ints) -> Iterator[tuple[Ints, npt.NDArray[np.int64]]]:  # (n, length)
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


def value_bytes(p: PositionalAttribute, lengths: Ints, rows: int) -> int:
    """What the distinct values of spans of these lengths take at most, about: as many values as
    hits (at most ``rows``, and for one token at most the lexicon), each its tokens' average length."""
    if not len(lengths):
        return 0
    average = len(p.lexicon_bytes) / max(1, p.lexicon_size)  # a token's string with its terminating byte
    values = min(len(lengths), rows, p.lexicon_size if int(lengths.max()) == 1 else len(lengths))
    return int(values * float(lengths.mean()) * average)
