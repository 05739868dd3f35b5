"""Registers: what a candidate row carries per automaton state besides being active."""

from __future__ import annotations

import numpy as np

from cowbird.engines.native.registers import Registers


def test_propagation_first_active_source_wins_and_selection_keeps_rows() -> None:
    registers = Registers.unset(3, 3, ["a"], anchors=["keyword", "target"], strict=["s"])
    registers.record("a", "target", 0, slice(None), np.array([10, 20, 30]))
    registers.record("a", "keyword", 1, np.array([0, 2]), np.array([11, 21, 31]))
    active = np.array([[True, True, False], [True, False, False], [False, True, False]])
    new = registers.cleared()
    registers.propagate(new, active, [0, 1], 2, np.array([0, 1, 2]))
    # row 0: state 0 comes before state 1 (CQP's first winner: the path through the earlier item,
    # as @[pos="JJ"]? [pos="JJ"]? [pos="NN"] keeps the target on a DT-JJ-NN)
    assert new.labels["a"][:, 2].tolist() == [10, 20, 31]
    # the first active source wins even where it carries no value (row 0: state 0 has no keyword)
    assert new.anchors["target"][:, 2].tolist() == [10, 20, -1]
    assert new.anchors["keyword"][:, 2].tolist() == [-1, -1, 31]
    assert (new.labels["a"][:, :2] == -1).all() and (new.region_ends["s"] == -1).all()
    kept = new.select(np.array([2, 0]))
    assert kept.labels["a"][:, 2].tolist() == [31, 10]


def test_inside_regions_keeps_rows_within_the_region_they_entered() -> None:
    registers = Registers.unset(2, 2, [], anchors=[], strict=["s"])
    registers.region_ends["s"][:, 0] = [5, 9]  # both rows entered a region in state 0
    active = np.ones((2, 2), dtype=np.bool_)
    cpos = np.array([7, 7])
    assert registers.inside_regions(active, cpos).tolist() == [[False, True], [True, True]]
    # a closing </s> must close exactly the region entered: its last token is at the end
    assert registers.inside_regions(active, np.array([5, 7]), closing="s").tolist() == [[True, True], [False, True]]
    assert Registers.unset(2, 2, [], anchors=[], strict=[]).empty
