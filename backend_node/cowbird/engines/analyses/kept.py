"""What a node's analyses keep for the next requests, over every partition the node serves.

One :class:`Kept` per node: made and held by its service (``PartitionService.kept``) and handed
to the analyses that keep something (their ``kept`` argument); an analysis called without one
(a test, a bench, ``cowbird query`` on one corpus) keeps nothing past its call. Each table is the
one cache type (``cowbird.core.lru.Lru``), keyed by the store's attribute objects themselves (held
while kept, so that no attribute opened later is taken for them, as an ``id()`` could be) and
bounded over the whole node, as before: one partition's tables would otherwise add up over many.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from cowbird.core.lru import Lru
from cowbird.engines.analyses.spans import Ints
from cowbird.store import PositionalAttribute, StructuralAttribute

FLAG_TABLES_KEPT = 8
"""GDEX word-form flag tables kept (one per partition and set of common words): a byte per word form."""
SENTENCE_TABLES_KEPT = 2
"""GDEX sentence tables kept (one per partition and set of common words; ``gdex.SENTENCES_KEPT``)."""
COUNTS_KEPT_BYTES = 64 * 1024 * 1024
"""Bytes of a node's lexicons counted in subcorpora it keeps (8 bytes an id; the least recently used
go first): the analyses of one search under one filter (its tabs, its pages) count them once."""

Filtered = tuple[tuple[str, bool, str], ...]
"""A subcorpus's filters as the key of what is counted in it: (s-attribute, negated, CQP regex) each."""


def _nbytes(counts: Ints) -> int:
    return int(counts.nbytes)


@dataclass
class Kept:
    """The node's tables for the next analyses: GDEX flags per word form and counts per sentence
    (``analyses/gdex.py``), and each lexicon id's frequency in a subcorpus (``analyses/subcorpus.py``)."""

    flags: Lru[tuple[PositionalAttribute, frozenset[str]], npt.NDArray[np.uint8]] = field(
        default_factory=lambda: Lru(FLAG_TABLES_KEPT))
    sentences: Lru[tuple[StructuralAttribute, frozenset[str]], dict[str, npt.NDArray[Any]]] = field(
        default_factory=lambda: Lru(SENTENCE_TABLES_KEPT))
    counts: Lru[tuple[PositionalAttribute, Filtered], Ints] = field(
        default_factory=lambda: Lru(COUNTS_KEPT_BYTES, _nbytes))
