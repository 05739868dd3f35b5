"""Write one positional attribute as cwb-encode and cwb-makeall do.

While encoding, each string gets the next free lexicon id on its first occurrence and the ids go
to ``ATT.corpus`` batch by batch. ``finish`` then writes the lexicon, its index and sort order,
the frequency list and the reverse index. The lexicon is a :class:`StringTable`: past the
process's memory budget it spills to sorted runs, and ``finish`` merges them and renumbers
``ATT.corpus`` in place, so memory stays bounded whatever the corpus size.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import numpy as np

from backend_node.store.cwbformat import BE_INT32, write_ints
from backend_node.store.strings import Budget, StringTable, remap_file

REV_CHUNK = 4 * 1024 * 1024
"""Corpus positions sorted into the reverse index at once (16 MiB of ids, about 100 MB of work arrays)."""


class PAttributeWriter:
    """Accumulates one p-attribute's token stream and writes its files."""

    def __init__(self, directory: Path, name: str, budget: Budget | None = None) -> None:
        self.directory = directory
        self.name = name
        self.lexicon = StringTable(directory, name, budget)
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
        corpus = np.memmap(self.directory / f"{self.name}.corpus", dtype=BE_INT32, mode="r") if self.size else None
        counts = np.zeros(lexicon_size, dtype=np.int64)
        if corpus is not None:
            for start in range(0, self.size, REV_CHUNK):
                counts += np.bincount(corpus[start : start + REV_CHUNK].astype(np.int32), minlength=lexicon_size)
        offsets = np.zeros(lexicon_size, dtype=np.int64)
        np.cumsum(counts[:-1], out=offsets[1:])
        write_ints(self.directory / f"{self.name}.corpus.cnt", counts)
        write_ints(self.directory / f"{self.name}.corpus.rdx", offsets)
        rev_path = self.directory / f"{self.name}.corpus.rev"
        if corpus is None:
            rev_path.write_bytes(b"")
            return
        rev = np.memmap(rev_path, dtype=BE_INT32, mode="w+", shape=(self.size,))
        # Counting sort, one chunk at a time: positions of each id land in its slot in corpus order.
        cursor = offsets.copy()
        for start in range(0, self.size, REV_CHUNK):
            chunk = corpus[start : start + REV_CHUNK].astype(np.int32)
            # numpy radix-sorts 16-bit keys: most tag sets (pos, upos) fit and sort in linear time
            keys = chunk.astype(np.int16) if lexicon_size <= 32767 else chunk
            order = np.argsort(keys, kind="stable")
            chunk_counts = np.bincount(chunk, minlength=lexicon_size)
            chunk_first = np.cumsum(chunk_counts) - chunk_counts
            sorted_ids = chunk[order]
            destination = cursor[sorted_ids] + (np.arange(len(chunk)) - chunk_first[sorted_ids])
            rev[destination] = order + start
            cursor += chunk_counts
        rev.flush()
        del rev
