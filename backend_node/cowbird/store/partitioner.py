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
import numpy.typing as npt

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
        pending: Batch | None = None
        current = self.new_writer(0)
        for batch in batches:
            units = self.units(batch if pending is None else Batch.join(pending, batch))
            current = self.place(units, len(units) - 1, current)
            pending = units.batch(len(units) - 1, len(units))
            report()
        if pending is not None:
            units = self.units(pending)
            current = self.place(units, len(units), current)
        current.finish(f"{self.source}:end of input")

    def units(self, merged: Batch) -> Units:
        """The batch cut before each start tag of the boundary element; material before the first
        such tag is a unit of its own (it goes to the current partition)."""
        tags = merged.tags
        cuts = np.flatnonzero((tags.element == self.boundary_code) & ~tags.closing).tolist()
        if not cuts or cuts[0] != 0 or int(tags.cpos[0]) != merged.start:
            cuts = [-1] + cuts
        return Units.of(merged, cuts)

    def place(self, units: Units, count: int, current: PartitionWriter) -> PartitionWriter:
        """Add the first ``count`` units, as many at once as fit in the current partition; finish it
        and start the next one before a unit that would overflow it."""
        sizes = units.token_to[:count] - units.token_from[:count]
        over = np.flatnonzero(sizes > self.limit)
        usable = int(over[0]) if len(over) else count
        done = 0
        while done < count:
            if done == usable:
                raise VrtError(
                    self.source, int(units.line[done]),
                    f"<{self.boundary}> region of {int(sizes[done])} tokens is larger than --partition-tokens "
                    f"{self.limit}",
                )
            fit = int(np.searchsorted(np.cumsum(sizes[done:usable]), self.limit - current.size, side="right"))
            if fit == 0:  # the next unit overflows a partition that holds something (it fits an empty one)
                still_open = current.open_elements()
                if still_open:
                    raise VrtError(
                        self.source, int(units.line[done]),
                        f"cannot start a new partition before this <{self.boundary}>: <{still_open[0]}> is still "
                        "open (partition at the outermost element with --partition-at)",
                    )
                current.finish(f"{self.source}:{int(units.line[done])}")
                current = self.new_writer(current.offset + current.size)
                continue
            current.add(units.batch(done, done + fit))
            done += fit
        return current


class Units:
    """A batch cut before each boundary start tag: unit k is tokens ``[token_from[k], token_to[k])``
    (batch-relative) and tags ``[tag_from[k], tag_to[k])``, its boundary tag on input line ``line[k]``."""

    def __init__(self, merged: Batch, token_from: npt.NDArray[np.int64], token_to: npt.NDArray[np.int64],
                 tag_from: npt.NDArray[np.int64], tag_to: npt.NDArray[np.int64], line: npt.NDArray[np.int64]) -> None:
        self.merged = merged
        self.token_from, self.token_to = token_from, token_to
        self.tag_from, self.tag_to = tag_from, tag_to
        self.line = line

    def __len__(self) -> int:
        return len(self.token_from)

    @staticmethod
    def of(merged: Batch, cuts: list[int]) -> Units:
        """Cut before each tag index in ``cuts`` (-1: a lead-in before any boundary)."""
        tags = merged.tags
        starts = np.asarray(cuts, dtype=np.int64)
        ends = np.append(starts[1:], len(tags))
        cpos = tags.cpos.astype(np.int64)
        token_from = np.where(starts >= 0, cpos[np.maximum(starts, 0)] - merged.start, 0) if len(cpos) else \
            np.zeros(len(starts), dtype=np.int64)
        token_to = np.full(len(starts), merged.size, dtype=np.int64)
        inner = ends < len(tags)
        token_to[inner] = cpos[ends[inner]] - merged.start
        line = np.where(starts >= 0, tags.line.astype(np.int64)[np.maximum(starts, 0)], 0) if len(cpos) else \
            np.zeros(len(starts), dtype=np.int64)
        return Units(merged, token_from, token_to, np.maximum(starts, 0), ends, line)

    def batch(self, first: int, last: int) -> Batch:
        """Units ``[first, last)`` as one batch."""
        return self.merged.slice(int(self.token_from[first]), int(self.token_to[last - 1]),
                                 int(self.tag_from[first]), int(self.tag_to[last - 1]))
