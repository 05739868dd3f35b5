"""Write one positional attribute as cwb-encode and cwb-makeall do.

While encoding, each string gets the next free lexicon id on its first occurrence and the ids go
to ``ATT.corpus`` batch by batch. ``finish`` then writes the lexicon, its index and sort order,
the frequency list and the reverse index. The lexicon is a :class:`StringTable`: past the
process's memory budget it spills to sorted runs, and ``finish`` merges them and renumbers
``ATT.corpus`` in place, so memory stays bounded whatever the corpus size.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from cowbird.store.cwbformat import BE_INT32, write_ints
from cowbird.store.strings import BYTES_PER_ENTRY, Budget, StringTable, remap_file

REV_CHUNK = 4 * 1024 * 1024
"""Corpus positions sorted into the reverse index at once (16 MiB of ids, about 100 MB of work arrays)."""

REV_SLICE = 1 << 27
"""Reverse-index positions built in memory at once when the budget does not say (512 MB)."""


def _id_chunks(path: Path, size: int) -> Iterator[tuple[int, npt.NDArray[np.int32]]]:
    """``(start, ids)`` of a ``.corpus`` file, REV_CHUNK tokens at a time, read (not mapped: mapped
    pages of a 4-GB token stream would count as the encoder's resident memory)."""
    with open(path, "rb") as handle:
        for start in range(0, size, REV_CHUNK):
            yield start, np.fromfile(handle, dtype=BE_INT32, count=min(REV_CHUNK, size - start)).astype(np.int32)


def id_groups(counts: npt.NDArray[np.int64], slice_positions: int) -> list[tuple[int, int]]:
    """Consecutive id ranges ``[a, b)`` whose positions together fit in ``slice_positions`` (an id
    with more positions than that is a range of its own)."""
    ends = np.cumsum(counts)
    groups: list[tuple[int, int]] = []
    first, done = 0, 0
    while first < len(counts):
        last = max(int(np.searchsorted(ends, done + slice_positions, side="right")), first + 1)
        groups.append((first, last))
        first, done = last, int(ends[last - 1])
    return groups


class PAttributeWriter:
    """Accumulates one p-attribute's token stream and writes its files."""

    def __init__(self, directory: Path, name: str, budget: Budget | None = None) -> None:
        self.directory = directory
        self.name = name
        self.lexicon = StringTable(directory, name, budget)
        # the reverse index is built a slice at a time, in a quarter of the string tables' budget
        limit = budget.limit * BYTES_PER_ENTRY if budget is not None and budget.limit is not None else None
        self.slice_positions = max(REV_CHUNK, limit // 16) if limit is not None else REV_SLICE
        self.size = 0
        self._corpus: BinaryIO | None = open(directory / f"{name}.corpus", "wb")

    def add(self, values: list[bytes]) -> None:
        """Append the next tokens' values; a new string gets the next id on its first occurrence."""
        ids = self.lexicon.numbers(values)
        assert self._corpus is not None
        np.asarray(ids, dtype=np.int32).astype(BE_INT32).tofile(self._corpus)
        self.size += len(ids)

    def abort(self) -> None:
        """Close the output without finishing (the caller removes the directory)."""
        if self._corpus is not None:
            self._corpus.close()
            self._corpus = None

    def finish(self) -> None:
        """Write lexicon, lexicon.idx, lexicon.srt, corpus.cnt, corpus.rdx and corpus.rev."""
        assert self._corpus is not None
        self._corpus.close()
        self._corpus = None
        done = self.lexicon.finish(self.directory / f"{self.name}.lexicon", sort_order=True)
        write_ints(self.directory / f"{self.name}.lexicon.idx", done.offsets)
        assert done.order is not None
        write_ints(self.directory / f"{self.name}.lexicon.srt", done.order)
        if done.remap is not None:  # the lexicon was spilled: provisional ids become final ones
            remap_file(self.directory / f"{self.name}.corpus", done.remap)
        self._write_index(done.count)

    def _write_index(self, lexicon_size: int) -> None:
        """``corpus.cnt``, ``corpus.rdx`` and ``corpus.rev``. The reverse index holds each id's
        positions in corpus order, id after id; it is built for a group of consecutive ids at a time
        (one pass over the token stream each, as cwb-makeall does within its memory limit) and
        written out in order, so the encoder's memory does not grow with the corpus."""
        path = self.directory / f"{self.name}.corpus"
        counts = np.zeros(lexicon_size, dtype=np.int64)
        for _, chunk in _id_chunks(path, self.size):
            counts += np.bincount(chunk, minlength=lexicon_size)
        offsets = np.zeros(lexicon_size, dtype=np.int64)
        np.cumsum(counts[:-1], out=offsets[1:])
        write_ints(self.directory / f"{self.name}.corpus.cnt", counts)
        write_ints(self.directory / f"{self.name}.corpus.rdx", offsets)
        with open(self.directory / f"{self.name}.corpus.rev", "wb") as rev:
            for first, last in id_groups(counts, self.slice_positions) if self.size else []:
                part = self._rev_slice(path, counts, offsets, first, last)
                for start in range(0, len(part), REV_CHUNK):
                    part[start : start + REV_CHUNK].astype(BE_INT32).tofile(rev)

    def _rev_slice(self, path: Path, counts: npt.NDArray[np.int64], offsets: npt.NDArray[np.int64], first: int,
                   last: int) -> npt.NDArray[np.int32]:
        """The reverse index of ids ``first`` to ``last`` (exclusive): a counting sort, a chunk of
        the token stream at a time, positions of each id landing in its slot in corpus order."""
        base = int(offsets[first])
        out = np.empty(int(offsets[last - 1] + counts[last - 1]) - base, dtype=np.int32)
        cursor = offsets[first:last] - base
        width = last - first
        everything = first == 0 and last == len(counts)
        for start, chunk in _id_chunks(path, self.size):
            if everything:
                ids, where = chunk, None
            else:
                inside = (chunk >= first) & (chunk < last)
                where = np.flatnonzero(inside)
                ids = chunk[where] - first
            # numpy radix-sorts 16-bit keys: most tag sets (pos, upos) fit and sort in linear time
            order = np.argsort(ids.astype(np.int16) if width <= 32767 else ids, kind="stable")
            chunk_counts = np.bincount(ids, minlength=width)
            chunk_first = np.cumsum(chunk_counts) - chunk_counts
            sorted_ids = ids[order]
            destination = cursor[sorted_ids] + (np.arange(len(ids)) - chunk_first[sorted_ids])
            out[destination] = (order if where is None else where[order]) + start
            cursor += chunk_counts
        return out
