"""What a candidate remembers besides its active states: labels, anchors and entered regions.

The simulation (``simulate.py``) keeps every candidate as a row and every automaton state as a
column. Next to the boolean ``active`` matrix, each (row, state) may carry values that travel with
the run through the automaton: the corpus position a label was last assigned (``a:[...]``), the
anchors CQP calls target (``@[...]``) and keyword (``@1[...]``), and, under CQP's StrictRegions,
the last corpus position of each region the run entered at an opening tag (``<s>``). All are
int64 matrices of the same shape, -1 where unset.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cowbird.engines.results import Cpos

Grid = npt.NDArray[np.int64]
"""rows x states: a corpus position per candidate and automaton state, -1 where unset."""

Bools = npt.NDArray[np.bool_]
Rows = npt.NDArray[np.int64]


def _unset(rows: int, states: int) -> Grid:
    return np.full((rows, states), -1, dtype=np.int64)


@dataclass
class Registers:
    """Per row and state: label positions, anchors, and the ends of regions entered at a tag.

    ``labels`` maps a label name to its grid (only labels a global constraint reads are kept);
    ``anchors`` maps ``target`` and ``keyword`` to their grids, for those the query marks;
    ``region_ends`` maps an s-attribute whose opening and closing tags both occur in the query to
    the last cpos of the region entered.
    """

    labels: dict[str, Grid]
    anchors: dict[str, Grid]
    region_ends: dict[str, Grid]

    @classmethod
    def unset(
        cls, rows: int, states: int, labels: Sequence[str], anchors: Sequence[str], strict: Sequence[str]
    ) -> Registers:
        """Registers for ``rows`` fresh candidates, nothing assigned yet."""
        return cls(
            {name: _unset(rows, states) for name in labels},
            {name: _unset(rows, states) for name in anchors},
            {name: _unset(rows, states) for name in strict},
        )

    def _grids(self) -> Iterator[Grid]:
        """Every grid, in a fixed order (so two registers of one query pair up in ``zip``)."""
        yield from self.labels.values()
        yield from self.anchors.values()
        yield from self.region_ends.values()

    @property
    def empty(self) -> bool:
        """Whether nothing is tracked (then propagation is skipped altogether)."""
        return not self.labels and not self.anchors and not self.region_ends

    def select(self, rows: Rows) -> Registers:
        """The registers of the surviving ``rows`` only, in that order."""
        return Registers(
            {name: grid[rows] for name, grid in self.labels.items()},
            {name: grid[rows] for name, grid in self.anchors.items()},
            {name: grid[rows] for name, grid in self.region_ends.items()},
        )

    def cleared(self) -> Registers:
        """Registers of the same shape with nothing assigned (the next step's, before it is filled)."""
        return Registers(
            {name: np.full_like(grid, -1) for name, grid in self.labels.items()},
            {name: np.full_like(grid, -1) for name, grid in self.anchors.items()},
            {name: np.full_like(grid, -1) for name, grid in self.region_ends.items()},
        )

    def propagate(self, into: Registers, active: Bools, sources: Sequence[int], state: int, rows: Rows) -> None:
        """Values flow from the ``sources`` of ``state`` into ``state`` of ``into`` for ``rows``
        (those that reached it); among active sources, the first one in order wins."""
        if self.empty:
            return
        for source in reversed(sources):
            live = rows[active[rows, source]]
            for grid, target in zip(self._grids(), into._grids(), strict=True):
                target[live, state] = grid[live, source]

    def record(
        self, label: str | None, anchor: str | None, state: int, rows: Rows | slice, cursor: Cpos
    ) -> None:
        """A token state matched in ``rows`` at their ``cursor``: assign its label and anchor there
        (the gather ``cursor[rows]`` happens only when something is assigned)."""
        if label is not None and label in self.labels:
            self.labels[label][rows, state] = cursor[rows]
        if anchor is not None and anchor in self.anchors:
            self.anchors[anchor][rows, state] = cursor[rows]

    def inside_regions(self, active: Bools, cpos: Cpos, closing: str | None = None) -> Bools:
        """``active`` restricted to the states whose entered regions still contain ``cpos``
        (StrictRegions); a closing tag of attribute ``closing`` must end exactly its region."""
        allowed = active
        column = cpos[:, None]
        for name, end in self.region_ends.items():
            within = (column == end) if name == closing else (column <= end)
            allowed = allowed & ((end < 0) | within)
        return allowed
