"""The type/token ratio of the hits per part (``cowbird.core.analyses.ttr``) on one partition: every
token of every hit (``match`` to ``matchend``, each position once where hits overlap), the part it
lies in, and the distinct values of the attribute per part — counted on lexicon ids, in numpy."""

from __future__ import annotations

import numpy as np

from cowbird.core.analyses.ttr import TTR, TtrAnswer, TtrParameters, TtrPart
from cowbird.core.errors import LimitExceeded
from cowbird.engines.analyses.declared import computes
from cowbird.engines.analyses.spans import MAX_SORT_CELLS
from cowbird.engines.base import Deadline
from cowbird.engines.results import Matches
from cowbird.store import CwbCorpus
from cowbird.store.regions import check_attributes, with_values


@computes(TTR)
def ttr(deadline: Deadline, corpus: CwbCorpus, matches: Matches, asked: TtrParameters, max_rows: int) -> TtrAnswer:
    check_attributes(corpus, p_attribute=asked.attribute, s_attribute=asked.parts)
    start = np.asarray(matches.match, dtype=np.int64)
    lengths = np.asarray(matches.matchend, dtype=np.int64) - start + 1
    cells = int(lengths.sum())
    if cells > MAX_SORT_CELLS:
        raise LimitExceeded(f"the {len(start):,} hits hold {cells:,} tokens, more than a node counts at once "
                            f"({MAX_SORT_CELLS:,}); narrow the query")
    deadline.check()
    if cells == len(start):  # hits of one token each (q=[]): their positions, sorted and once each already
        positions = start
    else:  # each token of each hit: its hit's start less the tokens before it, plus its running number
        first = np.repeat(start - np.cumsum(lengths) + lengths, lengths)
        positions = np.unique(first + np.arange(cells, dtype=np.int64))
    regions = corpus.s_attribute(asked.parts)
    numbers = regions.region_numbers(positions)
    inside = numbers >= 0
    positions, numbers = positions[inside], numbers[inside]
    deadline.check()
    p = corpus.p_attribute(asked.attribute)
    ids = p.ids_at(positions).astype(np.int64)
    kinds = max(1, p.lexicon_size)
    pairs = np.unique(numbers * kinds + ids)  # (part, type) once each
    deadline.check()
    parts, tokens = np.unique(numbers, return_counts=True)
    _, types = np.unique(pairs // kinds, return_counts=True)  # the same parts, in the same order
    truncated = len(parts) > max_rows
    labels = with_values(corpus, asked.label, "label") if asked.label is not None else None
    rows = []
    for number, count, kind in zip(parts[:max_rows].tolist(), tokens[:max_rows].tolist(), types[:max_rows].tolist(),
                                   strict=True):
        region = regions.region(number)
        at = labels.region_at(region.start) if labels is not None else None
        rows.append(TtrPart(start=region.start, end=region.end, label=at.value if at is not None else None,
                            tokens=count, types=kind))
    return TtrAnswer(parts=rows, truncated=truncated)
