"""Memory-mapped access to a CWB corpus, whoever encoded it (real cwb-encode or cowbird).

Files are mapped with ``np.memmap`` as big-endian int32 and never loaded whole; only the lexicon
strings of an attribute are decoded into a Python list, and only when asked for.
"""

from __future__ import annotations

import bisect
import mmap
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import CorpusFormatError, UnknownAttribute
from cowbird.store.compression import GolombIndex, HuffmanCode, HuffmanStream
from cowbird.store.cwbformat import BE_INT32, CHARSETS
from cowbird.store.registry import RegistryEntry, find_registry_file, parse_registry

IntArray = npt.NDArray[np.int32]


def map_ints(path: Path) -> npt.NDArray[np.int32]:
    """Map a big-endian int32 file; an empty file is an empty array (mmap cannot map 0 bytes)."""
    if not path.exists():
        raise CorpusFormatError(f"missing data file {path}")
    size = path.stat().st_size
    if size % 4:
        raise CorpusFormatError(f"data file {path} is truncated ({size} bytes is not a multiple of 4)")
    if size == 0:
        return np.zeros(0, dtype=BE_INT32)
    return np.memmap(path, dtype=BE_INT32, mode="r")


def release_pages(array: object) -> None:
    """Drop a memory-mapped array's resident pages from this process (the OS keeps them cached).

    Mapped pages count towards a process's resident memory; a long-running node releases them
    when it grows past its budget, and the next access maps them again from the page cache.
    """
    mapping = getattr(array, "_mmap", None)
    if mapping is not None and hasattr(mmap, "MADV_DONTNEED"):
        mapping.madvise(mmap.MADV_DONTNEED)


def read_ints(path: Path, start: int, count: int) -> npt.NDArray[np.int32]:
    """Read ``count`` ints from ``start`` without mapping them (scans stay out of resident memory)."""
    with open(path, "rb") as handle:
        handle.seek(start * 4)
        return np.fromfile(handle, dtype=BE_INT32, count=count)


def map_bytes(path: Path) -> npt.NDArray[np.uint8]:
    if not path.exists():
        raise CorpusFormatError(f"missing data file {path}")
    if path.stat().st_size == 0:
        return np.zeros(0, dtype=np.uint8)
    return np.memmap(path, dtype=np.uint8, mode="r")


def _mapped(suffix: str, doc: str) -> cached_property[IntArray]:
    """A data file of a p-attribute (``word.corpus.cnt``), mapped when first read."""

    def read(attribute: PositionalAttribute) -> IntArray:
        return map_ints(attribute._home / f"{attribute.name}.{suffix}")

    read.__doc__ = f"{doc} (``{suffix}``)."
    return cached_property(read)


class PositionalAttribute:
    """A p-attribute: token stream, lexicon, frequencies and reverse index.

    The token stream is ``ATT.corpus`` or, when ``cwb-huffcode`` wrote all three of ``ATT.huf``,
    ``ATT.hcd`` and ``ATT.huf.syn``, the Huffman-coded stream; the reverse index is
    ``ATT.corpus.rev``/``.rdx`` or, when ``cwb-compress-rdx`` wrote ``ATT.crc`` and ``ATT.crx``, the
    Golomb-coded one — each chosen as CWB's own library chooses (compressed files win when their
    whole set is there), so mixed corpora read as CQP reads them. Callers go through ``ids_at``,
    ``id_range``, ``positions`` and ``positions_of`` and never see which it is.
    """

    def __init__(self, home: Path, name: str, codec: str) -> None:
        self.name = name
        self.codec = codec
        self._home = home
        prefix = home / name
        self.stream: HuffmanStream | None = None
        self.corpus: npt.NDArray[np.int32] | None = None
        if all(Path(f"{prefix}{suffix}").exists() for suffix in (".huf", ".hcd", ".huf.syn")):
            self.stream = HuffmanStream(str(prefix), HuffmanCode.read(Path(f"{prefix}.hcd")),
                                        map_bytes(Path(f"{prefix}.huf")), map_ints(Path(f"{prefix}.huf.syn")))
            self.size = len(self.stream)
        elif Path(f"{prefix}.corpus").exists():
            self.corpus = map_ints(Path(f"{prefix}.corpus"))
            self.size = len(self.corpus)
        else:
            raise CorpusFormatError(f"p-attribute {name!r}: missing data file {prefix}.corpus (and no complete "
                                    f"compressed stream {name}.huf, .hcd, .huf.syn)")
        self.lexicon_bytes = map_bytes(Path(f"{prefix}.lexicon"))
        self.lexicon_index = map_ints(Path(f"{prefix}.lexicon.idx"))
        if self.stream is not None and self.stream.code.size != len(self.lexicon_index):
            raise CorpusFormatError(f"{prefix}.hcd codes {self.stream.code.size} ids, the lexicon has "
                                    f"{len(self.lexicon_index)}")

    @property
    def compressed(self) -> tuple[bool, bool]:
        """Whether (the token stream, the reverse index) are read from CWB's compressed files."""
        return self.stream is not None, self._golomb is not None

    @cached_property
    def _golomb(self) -> GolombIndex | None:
        prefix = self._home / self.name
        if Path(f"{prefix}.crc").exists() and Path(f"{prefix}.crx").exists():
            return GolombIndex(str(prefix), map_bytes(Path(f"{prefix}.crc")), map_ints(Path(f"{prefix}.crx")),
                               self.frequencies, self.size)
        return None

    def check_reverse_index(self) -> None:
        """Say now, not at the first query, when the attribute has no reverse index at all."""
        prefix = self._home / self.name
        if self._golomb is None and not Path(f"{prefix}.corpus.rev").exists():
            raise CorpusFormatError(f"p-attribute {self.name!r}: missing data file {prefix}.corpus.rev "
                                    f"(and no compressed index {self.name}.crc, .crx)")

    def __len__(self) -> int:
        return self.size

    def ids_at(self, cpos: npt.ArrayLike) -> npt.NDArray[np.int32]:
        """The lexicon ids at these positions (any shape), in native byte order."""
        if self.stream is not None:
            return self.stream.ids(cpos)
        assert self.corpus is not None
        return np.asarray(self.corpus[np.asarray(cpos)], dtype=np.int32)

    def id_range(self, start: int, stop: int) -> npt.NDArray[np.int32]:
        """The ids of positions ``start`` to ``stop`` (exclusive), read without mapping them (a scan
        of the whole stream stays out of resident memory)."""
        if self.stream is not None:
            return self.stream.range(start, stop)
        return read_ints(self._home / f"{self.name}.corpus", start, max(0, stop - start))

    def release(self) -> None:
        """Release the resident pages of the token stream and the reverse index."""
        release_pages(self.corpus if self.stream is None else self.stream.data)
        if "rev" in self.__dict__:
            release_pages(self.rev)
        if self.__dict__.get("_golomb") is not None:
            release_pages(self.__dict__["_golomb"].data)

    @property
    def lexicon_size(self) -> int:
        return len(self.lexicon_index)

    frequencies = _mapped("corpus.cnt", "Frequency of each lexicon id")
    rev_offsets = _mapped("corpus.rdx", "Start of each id's positions in the reverse index")
    rev = _mapped("corpus.rev", "Corpus positions grouped by id")
    sorted_ids = _mapped("lexicon.srt", "Lexicon ids in CWB's sort order")

    @cached_property
    def strings(self) -> list[str]:
        """All lexicon strings, decoded, indexed by id."""
        raw = bytes(self.lexicon_bytes)
        if not raw:
            return []
        parts = raw.split(b"\0")
        parts.pop()
        if len(parts) != self.lexicon_size:
            raise CorpusFormatError(f"lexicon of {self.name!r} has {len(parts)} strings, index {self.lexicon_size}")
        return [p.decode(self.codec, "replace") for p in parts]

    @cached_property
    def string_array(self) -> npt.NDArray[np.object_]:
        """The lexicon strings as a numpy object array: ``string_array[ids]`` decodes many at once."""
        array = np.empty(len(self.strings), dtype=object)
        array[:] = self.strings
        return array

    @cached_property
    def string_ids(self) -> dict[str, int]:
        """Each lexicon string's id (one map per attribute: the engine's lexicon index shares it)."""
        return {s: i for i, s in enumerate(self.strings)}

    def id2str(self, lexicon_id: int) -> str:
        if not 0 <= lexicon_id < self.lexicon_size:
            raise IndexError(f"lexicon id {lexicon_id} out of range for {self.name!r}")
        start = int(self.lexicon_index[lexicon_id])
        end = start
        data = self.lexicon_bytes
        # strings are short; scanning for the NUL beats decoding the whole lexicon for one lookup
        while data[end] != 0:
            end += 1
        return bytes(data[start:end]).decode(self.codec, "replace")

    def str2id(self, value: str) -> int | None:
        """The id of a string, or None when it does not occur."""
        return self.string_ids.get(value)

    def cpos2str(self, cpos: int) -> str:
        return self.strings[int(self.ids_at(np.asarray([cpos]))[0])]

    def frequency(self, lexicon_id: int) -> int:
        return int(self.frequencies[lexicon_id])

    def positions(self, lexicon_id: int) -> npt.NDArray[np.int32]:
        """Corpus positions of an id, ascending (a slice of the mapped reverse index, or decoded)."""
        if self._golomb is not None:
            return self._golomb.positions([lexicon_id])
        start = int(self.rev_offsets[lexicon_id])
        return self.rev[start : start + int(self.frequencies[lexicon_id])]

    def positions_between(self, lexicon_id: int, lo: int, hi: int) -> npt.NDArray[np.int32]:
        """Corpus positions of an id in ``[lo, hi)``, ascending (a compressed index decodes only up
        to ``hi``, going on from where its last call for the id stopped: see ``GolombIndex``)."""
        if self._golomb is not None:
            return self._golomb.positions_between(lexicon_id, lo, hi)
        positions = self.positions(lexicon_id)
        # a binary search of its own: numpy's would first convert the whole (big-endian, mapped) slice
        a, b = bisect.bisect_left(positions, lo), bisect.bisect_left(positions, hi)
        return positions[a:b]

    def positions_of(self, ids: npt.ArrayLike) -> npt.NDArray[np.int32]:
        """The positions of every id, id after id (each id's ascending), in native byte order."""
        wanted = np.asarray(ids, dtype=np.int64)
        if self._golomb is not None:
            return self._golomb.positions(wanted)
        starts = np.asarray(self.rev_offsets[wanted], dtype=np.int64)
        lengths = np.asarray(self.frequencies[wanted], dtype=np.int64)
        before = np.cumsum(lengths) - lengths
        index = np.repeat(starts - before, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
        return np.asarray(self.rev[index], dtype=np.int32)


@dataclass(frozen=True)
class Region:
    """One region of an s-attribute (end inclusive) and its annotation, if any."""

    number: int
    start: int
    end: int
    value: str | None


class StructuralAttribute:
    """An s-attribute: sorted ranges and, when annotated, a value per region."""

    def __init__(self, home: Path, name: str, codec: str, annotated: bool | None = None) -> None:
        self.name = name
        self.codec = codec
        ranges = map_ints(home / f"{name}.rng")
        self.ranges = ranges.reshape(-1, 2) if len(ranges) else np.zeros((0, 2), dtype=BE_INT32)
        avx_path = home / f"{name}.avx"
        self.has_values = avx_path.exists() if annotated is None else annotated and avx_path.exists()
        if self.has_values:
            avx = map_ints(avx_path)
            self.value_index = avx.reshape(-1, 2) if len(avx) else np.zeros((0, 2), dtype=BE_INT32)
            self.value_bytes = map_bytes(home / f"{name}.avs")

    def __len__(self) -> int:
        return len(self.ranges)

    @cached_property
    def starts(self) -> IntArray:
        return np.ascontiguousarray(self.ranges[:, 0], dtype=np.int32)

    @cached_property
    def ends(self) -> IntArray:
        return np.ascontiguousarray(self.ranges[:, 1], dtype=np.int32)

    def region_numbers(self, cpos: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Region number containing each position, -1 where none does."""
        positions = np.asarray(cpos)
        numbers = np.searchsorted(self.starts, positions, side="right") - 1
        inside = (numbers >= 0) & (self.ends[np.maximum(numbers, 0)] >= positions)
        return np.where(inside, numbers, -1)

    def region(self, number: int) -> Region:
        start, end = (int(x) for x in self.ranges[number])
        return Region(number, start, end, self.value(number) if self.has_values else None)

    def region_at(self, cpos: int) -> Region | None:
        number = int(self.region_numbers(np.asarray([cpos]))[0])
        return None if number < 0 else self.region(number)

    @cached_property
    def value_offsets(self) -> IntArray:
        """avs offset of each region's value (avx second column, in region order)."""
        return np.ascontiguousarray(self.value_index[:, 1], dtype=np.int32)

    def value_at_offset(self, offset: int) -> str:
        data, window = self.value_bytes, 256
        while True:  # read a window and look for the terminating NUL in it, widening as needed
            chunk = bytes(data[offset : offset + window])
            end = chunk.find(b"\0")
            if end >= 0 or offset + window >= len(data):
                return (chunk if end < 0 else chunk[:end]).decode(self.codec, "replace")
            window *= 4

    def value(self, number: int) -> str:
        if not self.has_values:
            raise CorpusFormatError(f"s-attribute {self.name!r} has no annotations")
        return self.value_at_offset(int(self.value_offsets[number]))

    @cached_property
    def distinct_values(self) -> dict[int, str]:
        """Every distinct annotation by its avs offset (regexes are evaluated on these, once each)."""
        raw = bytes(self.value_bytes)
        result: dict[int, str] = {}
        offset = 0
        for part in raw.split(b"\0")[:-1]:
            result[offset] = part.decode(self.codec, "replace")
            offset += len(part) + 1
        return result


class CwbCorpus:
    """A CWB corpus opened from its registry entry."""

    def __init__(self, entry: RegistryEntry) -> None:
        self.entry = entry
        self.corpus_id = entry.corpus_id
        self.codec = CHARSETS.get(entry.charset.lower(), "latin-1")
        if not entry.home.is_dir():
            raise CorpusFormatError(f"data directory {entry.home} of corpus {entry.corpus_id!r} does not exist")
        if not entry.p_attributes:
            raise CorpusFormatError(f"corpus {entry.corpus_id!r} declares no p-attributes")
        self._p: dict[str, PositionalAttribute] = {}
        self._s: dict[str, StructuralAttribute] = {}
        self.size = len(self.p_attribute(entry.p_attributes[0]))

    @classmethod
    def open(cls, registry_dir: Path, corpus_id: str) -> CwbCorpus:
        return cls(parse_registry(find_registry_file(registry_dir, corpus_id)))

    @property
    def p_attribute_names(self) -> list[str]:
        return list(self.entry.p_attributes)

    @property
    def s_attribute_names(self) -> list[str]:
        return list(self.entry.s_attributes)

    @property
    def meta_attribute_names(self) -> list[str]:
        """The s-attributes whose regions carry values (those with an ``avx`` file)."""
        return [name for name in self.entry.s_attributes if (self.entry.home / f"{name}.avx").exists()]

    def p_attribute(self, name: str) -> PositionalAttribute:
        if name not in self._p:
            if name not in self.entry.p_attributes:
                known = ", ".join(self.entry.p_attributes)
                raise UnknownAttribute(f"corpus {self.corpus_id} has no p-attribute {name!r} (it has: {known})")
            self._p[name] = PositionalAttribute(self.entry.home, name, self.codec)
        return self._p[name]

    def check_readable(self, reverse_index: bool) -> None:
        """Open every p-attribute now, so that a corpus cowbird cannot read fails at start with a
        message saying why (a compressed token stream; with ``reverse_index``, a compressed index)."""
        for name in self.entry.p_attributes:
            attribute = self.p_attribute(name)
            if reverse_index:
                attribute.check_reverse_index()

    def release(self) -> None:
        """Release the resident pages of every opened p-attribute's token stream and index."""
        for attribute in self._p.values():
            attribute.release()

    def s_attribute(self, name: str) -> StructuralAttribute:
        if name not in self._s:
            if name not in self.entry.s_attributes:
                known = ", ".join(self.entry.s_attributes) or "none"
                raise UnknownAttribute(f"corpus {self.corpus_id} has no s-attribute {name!r} (it has: {known})")
            self._s[name] = StructuralAttribute(self.entry.home, name, self.codec)
        return self._s[name]
