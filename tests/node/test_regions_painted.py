"""The word lists' region test (``cowbird.store.regions.painted``), which paints a stretch of positions
from its regions instead of searching each position, against a plain per-position search, and the
subcorpus's intersection of filters against a plain set of positions."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from cowbird.store.regions import covered_before, intersection, painted


def regions(draw: st.DrawFn, size: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted regions without overlaps (adjacent ones allowed) in 0 .. size - 1."""
    cuts = sorted(set(draw(st.lists(st.integers(0, size), max_size=12))))
    starts, ends = [], []
    for a, b in zip(cuts, cuts[1:], strict=False):
        if draw(st.booleans()):
            starts.append(a)
            ends.append(b - 1)
    return np.asarray(starts, dtype=np.int64), np.asarray(ends, dtype=np.int64)


@st.composite
def stretch(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, int, int]:
    size = draw(st.integers(1, 60))
    starts, ends = regions(draw, size)
    lo = draw(st.integers(0, size - 1))
    hi = draw(st.integers(lo + 1, size))
    return starts, ends, lo, hi


@given(stretch())
def test_painting_finds_what_searching_finds(case: tuple[np.ndarray, np.ndarray, int, int]) -> None:
    starts, ends, lo, hi = case
    inside, begun = painted(starts, ends, lo, hi)
    number = [next((r for r, (s, e) in enumerate(zip(starts, ends, strict=True)) if s <= x <= e), -1)
              for x in range(lo, hi)]
    assert inside.tolist() == [k >= 0 for k in number]
    for a in range(hi - lo):
        for b in range(a, hi - lo):
            if number[a] >= 0 and number[b] >= 0:
                assert (begun[a] == begun[b]) == (number[a] == number[b])


@st.composite
def filters(draw: st.DrawFn) -> tuple[int, list[tuple[np.ndarray, np.ndarray]]]:
    size = draw(st.integers(1, 60))
    return size, [regions(draw, size) for _ in range(draw(st.integers(0, 3)))]


@given(filters())
def test_a_subcorpus_is_the_positions_every_filter_chooses(case: tuple[int, list[tuple[np.ndarray, np.ndarray]]]
                                                           ) -> None:
    size, sets = case
    chosen = set(range(size))
    for starts, ends in sets:
        chosen &= {x for s, e in zip(starts.tolist(), ends.tolist(), strict=True) for x in range(s, e + 1)}
    starts, ends = intersection(sets, size)
    assert {x for s, e in zip(starts.tolist(), ends.tolist(), strict=True) for x in range(s, e + 1)} == chosen
    count = covered_before(starts, ends)
    points = np.arange(size + 1, dtype=np.int64)
    assert count(points).tolist() == [sum(1 for x in chosen if x < p) for p in range(size + 1)]
