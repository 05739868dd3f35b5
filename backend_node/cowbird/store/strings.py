"""Distinct-string tables of the encoder that stay within a memory budget.

cwb-encode numbers a p-attribute's strings in order of first occurrence (the lexicon) and stores
each distinct s-attribute value once (``.avs``, in order of first occurrence). Both need a table
from string to number that grows with the number of distinct strings: a web corpus's word forms,
and sentence or text ids, which are all distinct. A :class:`StringTable` is a dict while it is
small; when the tables of a process pass their :class:`Budget`, the largest one is written to disk
as a sorted run and starts again empty, handing out *provisional* numbers that keep counting. At
the end the runs are merged (k-way, in the order of CWB's ``lexicon.srt``), which finds every
string's first provisional number; final numbers follow from those, in the same order of first
occurrence as without spilling, so the files are byte for byte the same.
"""

from __future__ import annotations

import heapq
import os
import struct
from array import array
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from cowbird.store.cwbformat import BE_INT32, sorted_lexicon_ids, strcmp_key

BYTES_PER_ENTRY = 250
"""What one entry of a table costs at its largest: the dict slot, the bytes object and the int
(measured for strings of 5-20 bytes: 120-125 bytes), and as much again for the sorted copy that
``spill`` and ``finish`` make of a whole table (measured: 123 bytes an entry)."""

REMAP_CHUNK = 1 << 22  # provisional numbers renumbered at a time

RUN_BUFFER = 1 << 20  # bytes read from each run at a time while merging
PLACE_CHUNK = 1 << 20  # strings placed into the output at a time

_UNFLIP = bytes((b ^ 0x80) for b in range(256))  # strcmp_key's byte flip is its own inverse


def default_memory() -> int:
    """A quarter of the machine's memory."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 4
    except (ValueError, OSError):
        return 2 << 30


def parse_memory(text: str) -> int:
    """``2GB``, ``512MB``, ``1.5G``, ``800000000``: bytes."""
    value = text.strip().upper().removesuffix("B").removesuffix("I")
    factor = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(value[-1:], 1)
    number = value[:-1] if factor > 1 else value
    try:
        size = int(float(number) * factor)
    except ValueError:
        raise ValueError(f"{text!r} is not a memory size (write e.g. 2GB, 512MB)") from None
    if size < 1 << 20:
        raise ValueError(f"{text!r} is too small: give at least 1MB")
    return size


class Budget:
    """The memory the string tables of one process may use together."""

    def __init__(self, limit_bytes: int | None) -> None:
        self.limit = None if limit_bytes is None else max(1, limit_bytes // BYTES_PER_ENTRY)
        self.tables: list[StringTable] = []

    def check(self) -> None:
        """Spill the largest table while all of them together hold more entries than allowed."""
        if self.limit is None:
            return
        while sum(len(t.table) for t in self.tables) > self.limit:
            largest = max(self.tables, key=lambda t: len(t.table))
            if len(largest.table) == 0:
                return
            largest.spill()


@dataclass
class Finished:
    """What a table wrote: ``offsets[i]`` is where string ``i`` starts in the file (NUL-terminated
    strings in order of first occurrence); ``remap`` maps provisional to final numbers (None when
    nothing was spilled and they are the same); ``order`` holds the final numbers in the order of
    CWB's ``lexicon.srt`` when it was asked for."""

    count: int
    offsets: npt.NDArray[np.int64]
    remap: npt.NDArray[np.int32] | None
    order: npt.NDArray[np.int32] | None


class StringTable:
    """String -> number in order of first occurrence, spilled to sorted runs past the budget."""

    def __init__(self, scratch: Path, name: str, budget: Budget | None = None) -> None:
        self.scratch = scratch
        self.name = name
        self.table: dict[bytes, int] = {}
        self.given = 0  # provisional numbers handed out
        self.runs: list[Path] = []
        self.budget = budget
        if budget is not None:
            budget.tables.append(self)

    def numbers(self, values: list[bytes]) -> list[int]:
        """The number of each value; a value not in the table gets the next one."""
        table = self.table
        get = table.get
        found: list[int | None] = list(map(get, values))  # C speed; None marks values not in the table
        if None in found:
            i = found.index(None)
            while True:
                value = values[i]
                known = get(value)
                if known is None:
                    known = table[value] = self.given
                    self.given += 1
                found[i] = known
                try:
                    i = found.index(None, i + 1)
                except ValueError:
                    break
            if self.budget is not None:
                self.budget.check()
        return found  # type: ignore[return-value]  # every None was replaced

    def spill(self) -> None:
        """Write the table as a run sorted as ``lexicon.srt`` sorts (keys with their numbers) and empty it."""
        keys = sorted((strcmp_key(value), number) for value, number in self.table.items())
        self.table = {}
        path = self.scratch / f".{self.name}.run{len(self.runs)}"
        with open(path, "wb") as out:
            for key, number in keys:
                out.write(struct.pack("<qI", number, len(key)))
                out.write(key)
        self.runs.append(path)

    def finish(self, path: Path, sort_order: bool = False) -> Finished:
        """Write the distinct strings, NUL-terminated, in order of first occurrence to ``path``."""
        if not self.runs:
            strings = list(self.table)
            self.table = {}
            lengths = np.fromiter((len(s) + 1 for s in strings), dtype=np.int64, count=len(strings))
            offsets = np.zeros(len(strings), dtype=np.int64)
            np.cumsum(lengths[:-1], out=offsets[1:])
            with open(path, "wb") as out:
                out.write(b"\0".join(strings) + (b"\0" if strings else b""))
            return Finished(len(strings), offsets, None, sorted_lexicon_ids(strings) if sort_order else None)
        if self.table:
            self.spill()
        try:
            return self._merge(path, sort_order)
        finally:
            for run in self.runs:
                run.unlink(missing_ok=True)
            self.runs = []

    def _merge(self, path: Path, sort_order: bool) -> Finished:
        # per distinct string and per provisional number, a few bytes in arrays (not Python ints:
        # a 1-GT corpus has 65 M sentence ids, and a list of them alone took 2.6 GB)
        remap = np.arange(self.given, dtype=np.int32)  # provisional numbers are int32, as CWB's ids
        merged = self.scratch / f".{self.name}.merged"
        firsts = array("i")  # each distinct string's first provisional number, in sorted order
        sizes = array("i")
        previous, first = b"", -1  # no key is empty: strcmp_key appends a byte
        with open(merged, "wb") as out:
            for key, number in heapq.merge(*(_read_run(run) for run in self.runs)):
                if key == previous:
                    remap[number] = first  # a later occurrence: the first one's number
                    continue
                previous, first = key, number
                firsts.append(number)
                sizes.append(len(key))  # the string and its NUL (the key's extra byte)
                out.write(key[:-1].translate(_UNFLIP) + b"\0")
        sorted_firsts = np.frombuffer(firsts, dtype=np.int32)
        final_of = np.zeros(self.given, dtype=np.int32)
        final_of[sorted_firsts] = 1
        np.cumsum(final_of, dtype=np.int32, out=final_of)
        final_of -= 1  # each first occurrence's final number: first occurrences in provisional order
        for start in range(0, self.given, REMAP_CHUNK):  # in place, a chunk at a time
            part = remap[start : start + REMAP_CHUNK]
            part[:] = final_of[part]
        sorted_final = final_of[sorted_firsts]  # final numbers in sorted string order
        del final_of
        count = len(firsts)
        size_of = np.frombuffer(sizes, dtype=np.int32)
        offsets = np.zeros(count, dtype=np.int64)
        offsets[sorted_final] = size_of  # each string's size, at its final number
        total = int(offsets.sum())
        np.cumsum(offsets, out=offsets)
        offsets[sorted_final] -= size_of  # where each string starts: the sizes before it
        _place(merged, path, offsets[sorted_final], size_of.astype(np.int64), total)
        merged.unlink()
        order = sorted_final if sort_order else None
        return Finished(count, offsets, remap, order)


def _read_run(path: Path) -> Iterator[tuple[bytes, int]]:
    """(key, number) of a run, in its order, read a buffer at a time."""
    header = struct.Struct("<qI")
    with open(path, "rb", buffering=RUN_BUFFER) as handle:
        while True:
            head = handle.read(header.size)
            if not head:
                return
            number, size = header.unpack(head)
            yield handle.read(size), number


def _place(merged: Path, path: Path, starts: npt.NDArray[np.int64], sizes: npt.NDArray[np.int64], total: int) -> None:
    """Copy the strings of ``merged`` (in sorted order, NUL-terminated) to their ``starts`` in ``path``."""
    with open(path, "wb") as out:
        out.truncate(total)
    if total == 0:
        return
    target = np.memmap(path, dtype=np.uint8, mode="r+", shape=(total,))
    source = np.memmap(merged, dtype=np.uint8, mode="r")
    ends = np.cumsum(sizes)
    begin = 0
    for first in range(0, len(sizes), PLACE_CHUNK):
        last = min(first + PLACE_CHUNK, len(sizes))
        stop = int(ends[last - 1])
        size = sizes[first:last]
        shift = starts[first:last] - (ends[first:last] - size)  # where each string's bytes go, relative
        target[np.repeat(shift, size) + np.arange(begin, stop, dtype=np.int64)] = source[begin:stop]
        begin = stop
    target.flush()
    del target, source


def remap_file(
    path: Path, remap: npt.NDArray[np.int32] | npt.NDArray[np.int64], column: int | None = None, chunk: int = 1 << 22
) -> None:
    """Replace provisional numbers by final ones in a big-endian int32 file (in one column of a
    two-column file such as ``.avx``), a chunk at a time, read and written back (not mapped: the
    dirty pages of a mapped 4-GB file would count as the encoder's resident memory)."""
    size = path.stat().st_size // 4
    width = 1 if column is None else 2
    chunk -= chunk % width
    with open(path, "r+b") as handle:
        for start in range(0, size, chunk):
            handle.seek(start * 4)
            data = np.fromfile(handle, dtype=BE_INT32, count=min(chunk, size - start))
            view = data.reshape(-1, 2)[:, column] if column is not None else data
            view[:] = remap[view.astype(np.int64)]
            handle.seek(start * 4)
            data.tofile(handle)
