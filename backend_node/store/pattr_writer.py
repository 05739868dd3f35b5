"""Write one positional attribute as cwb-encode and cwb-makeall do.

While encoding, each string gets the next free lexicon id on its first occurrence and the ids go
to ``ATT.corpus`` batch by batch. ``finish`` then writes the lexicon, its index and sort order,
the frequency list and the reverse index; memory stays bounded by the lexicon plus one chunk of
the corpus, whatever the corpus size.
"""

from __future__ import annotations

from pathlib import Path
from typing import BinaryIO

import numpy as np

from backend_node.store.cwbformat import BE_INT32, sorted_lexicon_ids, write_ints, write_lexicon

REV_CHUNK = 4 * 1024 * 1024
"""Corpus positions sorted into the reverse index at once (16 MiB of ids, about 100 MB of work arrays)."""


class PAttributeWriter:
    """Accumulates one p-attribute's token stream and writes its files."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory = directory
        self.name = name
        self.lexicon: dict[bytes, int] = {}
        self.size = 0
        self._corpus: BinaryIO | None = open(directory / f"{name}.corpus", "wb")

    def add(self, values: list[bytes]) -> None:
        """Append the next tokens' values; a new string gets the next id on its first occurrence."""
        lexicon = self.lexicon
        get = lexicon.get
        ids: list[int | None] = list(map(get, values))  # C speed; None marks strings not seen before
        if None in ids:
            i = ids.index(None)
            while True:
                value = values[i]
                known = get(value)
                if known is None:
                    known = lexicon[value] = len(lexicon)
                ids[i] = known
                try:
                    i = ids.index(None, i + 1)
                except ValueError:
                    break
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
        strings = write_lexicon(self.directory, self.name, self.lexicon)
        self.lexicon = {}
        write_ints(self.directory / f"{self.name}.lexicon.srt", sorted_lexicon_ids(strings))
        self._write_index(len(strings))

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
