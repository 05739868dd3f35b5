"""A corpus's regions as the analyses of hits read them: s-attributes' values grouped, regions chosen
by their values, and positions tested against sets of regions.

Everything here reads the store alone (``CwbCorpus``, ``StructuralAttribute``), so it serves either
engine: the word lists, the subcorpus sizes and the distributions of ``cowbird.engines.analyses``
choose and measure regions with it. A set of regions is a pair of sorted arrays, starts and ends
(ends included), without overlaps.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import UnknownAttribute
from cowbird.query.pcre import compile_pcre
from cowbird.store.reader import CwbCorpus, StructuralAttribute

Ints = npt.NDArray[np.int64]


def check_attributes(corpus: CwbCorpus, p_attribute: str | None = None, s_attribute: str | None = None) -> None:
    """Refuse a p- or s-attribute the corpus does not have (``UnknownAttribute``, naming those it has)."""
    if p_attribute is not None and p_attribute not in corpus.entry.p_attributes:
        raise UnknownAttribute(f"the corpus has no p-attribute {p_attribute!r} "
                               f"(it has: {', '.join(corpus.entry.p_attributes)})")
    if s_attribute is not None and s_attribute not in corpus.entry.s_attributes:
        raise UnknownAttribute(f"the corpus has no s-attribute {s_attribute!r} "
                           f"(it has: {', '.join(corpus.entry.s_attributes) or 'none'})")


def with_values(corpus: CwbCorpus, name: str, parameter: str) -> StructuralAttribute:
    """The s-attribute ``name``, which must carry values (``parameter`` names it in the refusal)."""
    attribute = corpus.s_attribute(name)
    if not attribute.has_values:
        valued = ", ".join(corpus.meta_attribute_names) or "none"
        raise UnknownAttribute(f"{parameter}={name}: the regions of {name!r} carry no values; "
                               f"give one that does ({valued})")
    return attribute


# -- values, grouped once per opened attribute -------------------------------------------------------

@dataclass(frozen=True)
class ValueTable:
    """An s-attribute's regions grouped by value: ``of_region[r]``, ``names[g]``, and per value its size
    in tokens and number of regions."""

    of_region: npt.NDArray[np.int64]
    names: list[str]
    tokens: Ints
    regions: Ints


_VALUES: weakref.WeakKeyDictionary[StructuralAttribute, ValueTable] = weakref.WeakKeyDictionary()
_VALUES_LOCK = threading.Lock()


def value_table(attribute: StructuralAttribute) -> ValueTable:
    """The attribute's regions grouped by value (two offsets with the same string are one value)."""
    with _VALUES_LOCK:
        cached = _VALUES.get(attribute)
    if cached is not None:
        return cached
    offsets = np.asarray(attribute.value_offsets, dtype=np.int64)
    distinct, inverse = np.unique(offsets, return_inverse=True)
    index: dict[str, int] = {}  # two offsets with the same string are one value
    remap = np.fromiter((index.setdefault(attribute.value_at_offset(int(o)), len(index)) for o in distinct),
                        dtype=np.int64, count=len(distinct))
    of_region = remap[inverse] if len(offsets) else np.zeros(0, dtype=np.int64)
    lengths = np.asarray(attribute.ends, dtype=np.int64) - np.asarray(attribute.starts, dtype=np.int64) + 1
    tokens = np.bincount(of_region, weights=lengths, minlength=len(index)).round().astype(np.int64)
    regions = np.bincount(of_region, minlength=len(index)).astype(np.int64)
    result = ValueTable(of_region, list(index), tokens, regions)
    with _VALUES_LOCK:
        _VALUES[attribute] = result
    return result


def filter_regions(corpus: CwbCorpus, attribute: str, negated: bool, pattern: str) -> tuple[Ints, Ints]:
    """The regions of ``attribute`` whose value matches the CQP regex (the whole value; with ``negated``:
    does not), as sorted starts and ends."""
    s = with_values(corpus, attribute, "filter")
    table = value_table(s)
    search = compile_pcre(pattern).search
    passing = np.fromiter((search(name) is not None for name in table.names), dtype=np.bool_, count=len(table.names))
    keep = passing[table.of_region] != negated if len(table.of_region) else np.zeros(0, dtype=np.bool_)
    return np.asarray(s.starts, dtype=np.int64)[keep], np.asarray(s.ends, dtype=np.int64)[keep]


# -- positions against sets of regions ---------------------------------------------------------------

def painted(starts: npt.NDArray[np.integer[Any]], ends: npt.NDArray[np.integer[Any]], lo: int,
            hi: int) -> tuple[npt.NDArray[np.bool_], Ints]:
    """For the positions ``lo`` .. ``hi - 1`` and sorted regions without overlaps: whether each lies in
    a region, and how many regions begin at or before it (two positions inside regions lie in the same
    one when that count is the same). Painted from the regions in the stretch, not searched for each
    position: linear in the stretch's length."""
    length = hi - lo
    first = int(np.searchsorted(ends, lo, side="left"))  # regions ending at lo or later
    last = int(np.searchsorted(starts, hi, side="left"))  # … and starting before hi
    begin = np.maximum(np.asarray(starts[first:last], dtype=np.int64), lo) - lo
    stop = np.minimum(np.asarray(ends[first:last], dtype=np.int64) + 1, hi) - lo
    begun = np.bincount(begin, minlength=length + 1)
    cover = np.cumsum(begun[:length] - np.bincount(stop, minlength=length + 1)[:length])
    return cover > 0, np.cumsum(begun[:length])


def intersection(sets: list[tuple[Ints, Ints]], size: int) -> tuple[Ints, Ints]:
    """The positions in every set of regions (each set sorted and without overlaps), as sorted starts
    and ends; no sets: the whole partition."""
    if not sets:
        whole = np.asarray([0] if size else [], dtype=np.int64)
        return whole, whole + size - 1
    points = np.concatenate([s for s, _ in sets] + [e + 1 for _, e in sets])
    deltas = np.concatenate([np.ones(len(s), dtype=np.int64) for s, _ in sets]
                            + [-np.ones(len(e), dtype=np.int64) for _, e in sets])
    at, where = np.unique(points, return_inverse=True)
    cover = np.cumsum(np.bincount(where, weights=deltas, minlength=len(at)).round().astype(np.int64))
    inside = np.flatnonzero(cover[:-1] == len(sets)) if len(at) > 1 else np.zeros(0, dtype=np.int64)
    return at[inside], at[inside + 1] - 1


def covered_before(starts: Ints, ends: Ints) -> Callable[[Ints], Ints]:
    """For sorted regions without overlaps: a function giving, for each position x, how many of the
    regions' positions lie before x."""
    lengths = ends - starts + 1
    before = np.concatenate([np.zeros(1, dtype=np.int64), np.cumsum(lengths)])

    def count(x: Ints) -> Ints:
        if not len(starts):
            return np.zeros_like(x)
        k = np.searchsorted(starts, x, side="left")  # regions starting before x: all but the last end before it
        last = np.maximum(k - 1, 0)
        partial = np.minimum(lengths[last], np.maximum(x - starts[last], 0))
        return np.asarray(np.where(k > 0, before[last] + partial, 0), dtype=np.int64)

    return count


def tokens_in(count: Callable[[Ints], Ints], attribute: StructuralAttribute) -> Ints:
    """Each region's tokens in the regions ``count`` measures (``covered_before``)."""
    starts = np.asarray(attribute.starts, dtype=np.int64)
    ends = np.asarray(attribute.ends, dtype=np.int64)
    return count(ends + 1) - count(starts)
