"""Cutting a corpus into partitions of at most N tokens, before the start tag of a boundary element.

The paper's partitions hold about 1 GT each (CWB positions are 32-bit ints). A partition ends
just before a ``<text>`` (or ``--partition-at`` element) start tag when the unit that tag opens would
overflow it; a unit is everything from one boundary start tag to the next, so no region is ever
split. Tokens and regions end up at the same global positions as without partitioning: partition
k starts at the sum of the sizes before it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

import numpy as np

from cowbird.core.errors import VrtError
from cowbird.store.batch import Batch


class PartitionWriter(Protocol):
    """What the partitioner needs of the writer of one partition."""

    @property
    def size(self) -> int: ...

    @property
    def offset(self) -> int: ...

    def add(self, batch: Batch) -> None: ...

    def open_elements(self) -> list[str]: ...

    def finish(self, where: str) -> None: ...


class Partitioner:
    """Feeds batches to one writer per partition; ``new_writer(offset)`` opens the next partition."""

    def __init__(
        self,
        limit: int,
        boundary: str,
        boundary_code: int,
        source: str,
        new_writer: Callable[[int], PartitionWriter],
    ) -> None:
        self.limit = limit
        self.boundary = boundary
        self.boundary_code = boundary_code  # the element's index among the declared s-attributes
        self.source = source
        self.new_writer = new_writer

    def run(self, batches: Iterable[Batch], report: Callable[[], None]) -> None:
        """Place every unit; the last unit of a batch waits until the next batch tells where it ends."""
        pending: tuple[Batch, int] | None = None
        current = self.new_writer(0)
        for batch in batches:
            merged = batch if pending is None else Batch.join(pending[0], batch)
            tags = merged.tags
            cuts = np.flatnonzero((tags.element == self.boundary_code) & ~tags.closing).tolist()
            if pending is None and (not cuts or cuts[0] != 0 or int(tags.cpos[0]) != merged.start):
                cuts = [-1] + cuts  # material before the first boundary: always goes to the current partition
            units = units_of(merged, cuts)
            pending = units.pop()
            for unit, line in units:
                current = self.place(unit, line, current)
            report()
        if pending is not None:
            current = self.place(*pending, current)
        current.finish(f"{self.source}:end of input")

    def place(self, unit: Batch, line: int, current: PartitionWriter) -> PartitionWriter:
        """Add a unit to the current partition, or finish it and start the next one first."""
        if unit.size > self.limit:
            raise VrtError(
                self.source, line,
                f"<{self.boundary}> region of {unit.size} tokens is larger than --partition-tokens {self.limit}",
            )
        if current.size and current.size + unit.size > self.limit:
            still_open = current.open_elements()
            if still_open:
                raise VrtError(
                    self.source, line,
                    f"cannot start a new partition before this <{self.boundary}>: <{still_open[0]}> is still "
                    "open (partition at the outermost element with --partition-at)",
                )
            current.finish(f"{self.source}:{line}")
            current = self.new_writer(current.offset + current.size)
        current.add(unit)
        return current


def units_of(merged: Batch, cuts: list[int]) -> list[tuple[Batch, int]]:
    """Split a batch before each tag index in ``cuts`` (-1: a lead-in before any boundary), with
    the input line of each unit's boundary tag."""
    units: list[tuple[Batch, int]] = []
    tags = merged.tags
    bounds = cuts + [len(tags)]
    for a, b in zip(bounds, bounds[1:], strict=False):
        tag_from = max(a, 0)
        token_from = int(tags.cpos[a]) - merged.start if a >= 0 else 0
        token_to = int(tags.cpos[b]) - merged.start if b < len(tags) else merged.size
        line = int(tags.line[a]) if a >= 0 else 0
        units.append((merged.slice(token_from, token_to, tag_from, b), line))
    return units
