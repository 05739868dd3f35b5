"""How often each value of a p-attribute occurs over a span of the hits — CQP's ``count A by ATT on
SPAN %FOLD`` — and breakdowns by several keys at once. A span past the partition's edges
(``matchend[1]`` of its last token) reads its neighbours' tokens, as CQP reads the next token of the
corpus in one piece."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cowbird.core.analysis_spec import LEVEL_SEPARATOR, Fold, Span
from cowbird.core.errors import LimitExceeded
from cowbird.engines.analyses import spans
from cowbird.engines.analyses.spans import past_edges, reach, sequences, span_positions, span_strings, value_bytes
from cowbird.engines.base import Deadline
from cowbird.engines.results import Matches
from cowbird.store import CwbCorpus
from cowbird.store.lexicon import fold_text, groups


@dataclass
class Frequencies:
    values: list[str]
    counts: list[int]
    hits: int  # hits counted (those with the span set)
    unset: int  # hits without a value (no target)
    distinct: int
    truncated: bool


def _span_lengths(span: Span, start: spans.Ints, end: spans.Ints, aside: str = "") -> spans.Ints:
    """The tokens in each hit's span; refused when together they are more than a node counts at once."""
    lengths: spans.Ints = np.abs(end - start) + 1
    cells = int(lengths.sum())
    if cells > spans.MAX_SORT_CELLS:
        raise LimitExceeded(f"on={span}: the spans of the {len(start):,} hits hold {cells:,} tokens, more than a "
                            f"node counts at once ({spans.MAX_SORT_CELLS:,}{aside}); count a narrower span or narrow "
                            "the query")
    return lengths


def frequency(deadline: Deadline, corpus: CwbCorpus, matches: Matches, attribute: str, span: Span, fold: Fold,
              max_rows: int, max_bytes: int = 1 << 62) -> Frequencies:
    """How often each value (or sequence of values, joined by spaces) of ``attribute`` occurs over
    ``span`` of the hits — CQP's ``count A by ATT on SPAN %FOLD``. Bounded before it starts: the
    spans may hold as many tokens as a sort's, and their values are estimated to take at most
    ``max_bytes``; and while it runs, by those bytes and the ``deadline``."""
    p = corpus.p_attribute(attribute)
    start, end, valid = span_positions(matches, span, corpus.size, reach(corpus))
    start, end = start[valid], end[valid]
    lengths = _span_lengths(span, start, end, ", as for sorting")
    estimate = value_bytes(p, lengths, max_rows)
    if estimate > max_bytes:
        raise LimitExceeded(f"on={span}: the values of {len(start):,} hits over spans of up to "
                            f"{int(lengths.max())} tokens would take about {estimate / 2**20:,.0f} MB, more than a "
                            f"node answers ({max_bytes / 2**20:,.0f} MB); count a narrower span or narrow the query")
    table = groups(p, fold)
    counts: dict[str, int] = {}
    size = 0
    beyond = past_edges(start, end, corpus.size)
    for a, b in zip(start[beyond].tolist(), end[beyond].tolist(), strict=True):  # the hits at the edges
        name = " ".join(fold_text(value, fold) for value in span_strings(corpus, attribute, a, b))
        counts[name] = counts.get(name, 0) + 1
    for _which, positions in sequences(start[~beyond], end[~beyond]):
        deadline.check()
        ids = table.of_id[np.asarray(p.ids_at(positions.ravel()), dtype=np.int64)].reshape(positions.shape)
        if positions.shape[-1] == 1:
            found = np.bincount(ids[:, 0], minlength=len(table.names))
            for group in np.flatnonzero(found).tolist():
                name = table.names[group]
                counts[name] = counts.get(name, 0) + int(found[group])
            continue
        rows, row_counts = np.unique(ids, axis=0, return_counts=True)
        for row, count in zip(rows.tolist(), row_counts.tolist(), strict=True):
            name = " ".join(table.names[g] for g in row)
            if name not in counts:
                size += len(name) + 16
                if size > max_bytes:
                    raise LimitExceeded(f"on={span}: the values of this breakdown take more than a node answers "
                                        f"({max_bytes / 2**20:,.0f} MB); count a narrower span or narrow the query")
            counts[name] = counts.get(name, 0) + int(count)
    ordered = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    kept = ordered[:max_rows]
    return Frequencies([v for v, _ in kept], [c for _, c in kept], int(len(start)), int((~valid).sum()),
                       len(ordered), len(ordered) > max_rows)


def frequency_levels(deadline: Deadline, corpus: CwbCorpus, matches: Matches, levels: list[tuple[str, Span]],
                     fold: Fold, max_rows: int, max_bytes: int = 1 << 62) -> Frequencies:
    """How often each combination of values occurs, one value per level (an attribute over a span:
    ``left1.word`` and ``right1.pos``), tab-joined — a breakdown by several keys at once. A hit counts
    when every level's span is set. One level is ``frequency``."""
    if len(levels) == 1:
        [(attribute, span)] = levels
        return frequency(deadline, corpus, matches, attribute, span, fold, max_rows, max_bytes)
    n = len(matches)
    valid = np.ones(n, dtype=bool)
    level_spans = []
    bounds = reach(corpus)
    for attribute, span in levels:
        start, end, ok = span_positions(matches, span, corpus.size, bounds)
        valid &= ok
        level_spans.append((attribute, span, start, end))
    counted = int(valid.sum())
    edge: dict[str, int] = {}  # the hits at the edges, whose spans read on into the neighbours' tokens
    beyond = np.zeros(n, dtype=bool)
    for _, _, start, end in level_spans:
        beyond |= valid & past_edges(start, end, corpus.size)
    for k in np.flatnonzero(beyond).tolist():
        key = LEVEL_SEPARATOR.join(" ".join(fold_text(value, fold) for value in span_strings(
            corpus, attribute, int(start[k]), int(end[k]))) for attribute, _, start, end in level_spans)
        edge[key] = edge.get(key, 0) + 1
    valid &= ~beyond
    rows_set = np.flatnonzero(valid)
    codes: list[npt.NDArray[np.int64]] = []
    names: list[list[str]] = []
    estimate = 0
    for attribute, span, start, end in level_spans:
        p = corpus.p_attribute(attribute)
        start, end = start[valid], end[valid]
        lengths = _span_lengths(span, start, end)
        estimate += value_bytes(p, lengths, max_rows)
        if estimate > max_bytes:
            raise LimitExceeded(f"the values of {len(start):,} hits by {len(levels)} keys would take about "
                                f"{estimate / 2**20:,.0f} MB, more than a node answers ({max_bytes / 2**20:,.0f} MB); "
                                "count narrower spans or narrow the query")
        table = groups(p, fold)
        width = max(int(lengths.max()) if len(lengths) else 0, 1)
        matrix = np.full((len(rows_set), width), -1, dtype=np.int64)  # -1: the span has ended
        for which, positions in sequences(start, end):
            deadline.check()
            ids = table.of_id[np.asarray(p.ids_at(positions.ravel()), dtype=np.int64)].reshape(positions.shape)
            matrix[which, : positions.shape[1]] = ids
        distinct, inverse = np.unique(matrix, axis=0, return_inverse=True)
        codes.append(np.asarray(inverse, dtype=np.int64).reshape(-1))
        names.append([" ".join(table.names[g] for g in row if g >= 0) for row in distinct.tolist()])
    deadline.check()
    if len(rows_set):
        combined, counts = np.unique(np.stack(codes, axis=1), axis=0, return_counts=True)
    else:
        combined, counts = np.zeros((0, len(levels)), dtype=np.int64), np.zeros(0, dtype=np.int64)
    totals = dict(edge)
    for row, count in zip(combined.tolist(), counts.tolist(), strict=True):
        key = LEVEL_SEPARATOR.join(names[k][code] for k, code in enumerate(row))
        totals[key] = totals.get(key, 0) + int(count)
    found = sorted(totals.items(), key=lambda item: (-item[1], item[0]))
    kept = found[:max_rows]
    return Frequencies([v for v, _ in kept], [c for _, c in kept], counted, n - counted, len(found),
                       len(found) > max_rows)
