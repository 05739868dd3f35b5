"""CWB's compressed p-attributes: the Huffman-coded token stream and the Golomb-coded reverse index.

Real ``cwb-huffcode`` replaces ``ATT.corpus`` by ``ATT.huf`` (the codes, MSB first, padded to a
byte every 128 tokens), ``ATT.hcd`` (the code descriptor) and ``ATT.huf.syn`` (the byte offset of
each 128-token block); ``cwb-compress-rdx`` replaces ``ATT.corpus.rev``/``.rdx`` by ``ATT.crc``
(each id's positions as Golomb-coded gaps, byte-aligned per id) and ``ATT.crx`` (the byte offset of
each id). ``docs/cwb-compression.md`` describes the layout as CWB 3.4.16's ``cl/`` writes it; this
module reads and writes it byte for byte.

The bit-level loops (the exact in-place heap of CWB's Huffman construction, coding and decoding)
are compiled with numba: they are sequential by nature (a code starts where the previous one ends),
and numpy can only vectorise them across blocks at a cost of 10-40 times the work of a compiled
loop — too slow for a node that decodes at query time. Everything else is numpy.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

import numba
import numpy as np
import numpy.typing as npt

from cowbird.core.errors import CorpusFormatError
from cowbird.core.lru import Lru
from cowbird.store.cwbformat import BE_INT32

F = TypeVar("F", bound=Callable[..., Any])


def compiled(function: F) -> F:
    """``numba.njit``, with the machine code cached on disk (``__pycache__`` beside the module, else
    the user's cache folder, else ``NUMBA_CACHE_DIR``) where one of them can be written; a read-only
    installation without any (a container user without a home) compiles at first use instead."""
    try:
        return cast(F, numba.njit(cache=True)(function))
    except RuntimeError:  # numba: "cannot cache function ...: no locator available"
        return cast(F, numba.njit(function))


SYNC = 128
"""Tokens per block of ``.huf``: each block starts on a byte boundary, ``.huf.syn`` has its offset."""

MAX_CODELEN = 32
"""Entries of each table in ``.hcd`` (indexed by code length); codes must be shorter."""

MAX_OFFSET = 2**31 - 1
"""``.huf.syn`` and ``.crx`` hold byte offsets as int32: the coded files must stay below 2 GB."""

HCD_HEADER = 4 * (4 + 3 * MAX_CODELEN)
"""Bytes of ``.hcd`` before the symbols: four scalars and three tables."""

Ints = npt.NDArray[np.int64]


# ------------------------------------------------------------------ Huffman code (.hcd)


@compiled
def _sift(heap: Ints, size: int, node: int) -> None:
    """Restore the min-heap below ``node`` (slots numbered from 1; slot s holds a pointer at
    heap[s-1], its key is heap[heap[s-1]]); ties go left and never swap, as in cwb-huffcode."""
    child = node * 2
    while child <= size:
        if child < size and heap[heap[child]] < heap[heap[child - 1]]:
            child += 1
        if heap[heap[node - 1]] > heap[heap[child - 1]]:
            heap[child - 1], heap[node - 1] = heap[node - 1], heap[child - 1]
            node = child
            child = node * 2
        else:
            break


@compiled
def _code_lengths(frequencies: Ints) -> Ints:
    """Each id's code length, by cwb-huffcode's in-place heap over the weights frequency + 1 (the
    order of its comparisons decides between the many equally good codes)."""
    n = len(frequencies)
    heap = np.empty(2 * n, dtype=np.int64)
    for i in range(n):
        heap[i] = n + i
        heap[n + i] = frequencies[i] + 1
    h = n
    for i in range(n // 2, 0, -1):
        _sift(heap, h, i)
    while h > 1:
        h -= 1
        first = heap[0]
        heap[0] = heap[h]
        _sift(heap, h, 1)
        h -= 1
        second = heap[0]
        heap[0] = heap[h]
        _sift(heap, h, 1)
        heap[h] = h + 1
        heap[h + 1] = heap[first] + heap[second]
        heap[first] = h + 1
        heap[second] = h + 1
        h += 1
        current = h
        parent = current >> 1
        while parent > 0 and heap[heap[parent - 1]] > heap[heap[current - 1]]:
            heap[parent - 1], heap[current - 1] = heap[current - 1], heap[parent - 1]
            current = parent
            parent = current >> 1
    heap[0] = -1
    if n > 1:
        heap[1] = 0
    for i in range(2, 2 * n):
        heap[i] = heap[heap[i]] + 1
    lengths = np.empty(n, dtype=np.int64)
    for i in range(n):
        lengths[i] = heap[n + i] if n > 1 else 1  # a single type: the 1-bit code 0
    return lengths


@dataclass(frozen=True)
class HuffmanCode:
    """The code descriptor (``.hcd``): canonical codes, longer codes taking smaller values."""

    size: int  # lexicon ids
    length: int  # tokens
    min_len: int
    max_len: int
    lcount: Ints  # ids per code length (MAX_CODELEN entries)
    symindex: Ints  # first index in ``symbols`` of each length
    min_code: Ints  # smallest code of each length
    symbols: Ints  # ids ordered by (code length, id)

    @classmethod
    def build(cls, frequencies: npt.ArrayLike, tokens: int) -> HuffmanCode:
        freq = np.asarray(frequencies, dtype=np.int64)
        if len(freq) == 0:
            raise CorpusFormatError("an attribute with an empty lexicon cannot be Huffman-coded")
        lengths = _code_lengths(freq)
        min_len, max_len = int(lengths.min()), int(lengths.max())
        if max_len >= MAX_CODELEN:
            raise CorpusFormatError(f"Huffman codes would be {max_len} bits long (CWB allows up to 31)")
        lcount = np.bincount(lengths, minlength=MAX_CODELEN).astype(np.int64)
        min_code = np.zeros(MAX_CODELEN, dtype=np.int64)
        for length in range(max_len - 1, 0, -1):
            min_code[length] = (min_code[length + 1] + lcount[length + 1]) >> 1
        symindex = np.zeros(MAX_CODELEN, dtype=np.int64)
        for length in range(min_len + 1, max_len + 1):
            symindex[length] = symindex[length - 1] + lcount[length - 1]
        symbols = np.argsort(lengths, kind="stable").astype(np.int64)
        return cls(len(freq), tokens, min_len, max_len, lcount, symindex, min_code, symbols)

    @classmethod
    def read(cls, path: Path) -> HuffmanCode:
        raw = np.fromfile(path, dtype=BE_INT32).astype(np.int64)
        if len(raw) < HCD_HEADER // 4 or len(raw) != HCD_HEADER // 4 + raw[0]:
            raise CorpusFormatError(f"{path} is not a CWB Huffman code descriptor (wrong size)")
        tables = raw[4 : HCD_HEADER // 4].reshape(3, MAX_CODELEN)
        code = cls(int(raw[0]), int(raw[1]), int(raw[2]), int(raw[3]), tables[0], tables[1], tables[2],
                   raw[HCD_HEADER // 4 :])
        if not 1 <= code.min_len <= code.max_len < MAX_CODELEN:
            raise CorpusFormatError(f"{path}: code lengths {code.min_len}..{code.max_len} are out of range")
        return code

    def write(self, path: Path) -> None:
        head = np.asarray([self.size, self.length, self.min_len, self.max_len], dtype=np.int64)
        np.concatenate([head, self.lcount, self.symindex, self.min_code, self.symbols]).astype(BE_INT32).tofile(path)

    def codes(self) -> tuple[Ints, Ints]:
        """(code, length) of every id: the codes of one length are consecutive in id order."""
        lengths = np.zeros(self.size, dtype=np.int64)
        codes = np.zeros(self.size, dtype=np.int64)
        for length in range(self.min_len, self.max_len + 1):
            ids = self.symbols[self.symindex[length] : self.symindex[length] + self.lcount[length]]
            lengths[ids] = length
            codes[ids] = self.min_code[length] + np.arange(len(ids))
        return codes, lengths


# ------------------------------------------------------------------ bit output (MSB first)
# ``state`` holds (bytes written, bits pending, pending bits) between calls.


@compiled
def _put(out: npt.NDArray[np.uint8], state: Ints, value: int, width: int) -> None:
    """Append the low ``width`` bits of ``value`` (width <= 32), most significant first."""
    for shift in range(width - 1, -1, -1):
        state[2] = (state[2] << 1) | ((value >> shift) & 1)
        state[1] += 1
        if state[1] == 8:
            out[state[0]] = state[2]
            state[0] += 1
            state[1] = 0
            state[2] = 0


@compiled
def _pad(out: npt.NDArray[np.uint8], state: Ints) -> None:
    """Fill the pending byte with zero-bits and write it (nothing when no bit is pending)."""
    if state[1]:
        out[state[0]] = (state[2] << (8 - state[1])) & 0xFF
        state[0] += 1
        state[1] = 0
        state[2] = 0


# ------------------------------------------------------------------ token stream (.huf, .huf.syn)


@compiled
def _int32_at(raw: npt.NDArray[np.uint8], index: int) -> int:
    """Entry ``index`` of a mapped big-endian int32 file seen as bytes (numba knows no big-endian
    arrays, and converting a whole index would copy it into memory)."""
    at = index * 4
    return int((np.int64(raw[at]) << 24) | (np.int64(raw[at + 1]) << 16) | (np.int64(raw[at + 2]) << 8) | raw[at + 3])


@compiled
def _encode_stream(ids: Ints, codes: Ints, lengths: Ints, out: npt.NDArray[np.uint8], sync: Ints) -> int:
    """Write the codes of ``ids`` into ``out`` (zeroed), padding to a byte before every block of
    SYNC tokens; ``sync`` gets each block's byte offset. Returns the bytes written."""
    state = np.zeros(3, dtype=np.int64)
    for i in range(len(ids)):
        if i % SYNC == 0:
            _pad(out, state)
            sync[i // SYNC] = state[0]
        _put(out, state, codes[ids[i]], lengths[ids[i]])
    _pad(out, state)
    return int(state[0])


FAST_BITS = 10
"""Codes of up to this many bits are decoded with one table lookup (most tokens: frequent ids get
short codes)."""


@compiled
def _decode_block(
    data: npt.NDArray[np.uint8], sync: npt.NDArray[np.uint8], block: int, tokens: int,
    min_len: int, max_len: int, limits: Ints, min_code: Ints, symindex: Ints, symbols: Ints, fast: Ints,
    out: npt.NDArray[np.int32], at: int,
) -> None:
    """Decode one block into ``out[at:]`` (SYNC ids, fewer for the last block).

    The next bits wait left-aligned in a 64-bit buffer. A code of length l is the l bits read as v,
    the shortest l with ``v >= min_code[l]``: ``fast`` answers for the first FAST_BITS bits (the
    length and id packed, or -1 when the code is longer); otherwise ``limits[l]``, ``min_code[l]``
    shifted up to ``max_len`` bits, is compared with a peek of ``max_len`` bits."""
    size = len(data)
    byte = _int32_at(sync, block)
    count = min(SYNC, tokens - block * SYNC)
    buffer = np.uint64(0)
    held = 0  # bits in the buffer
    peek_shift = np.uint64(64 - max_len)
    fast_shift = np.uint64(64 - FAST_BITS)
    for t in range(count):
        while held <= 56:
            if byte < size:
                buffer |= np.uint64(data[byte]) << np.uint64(56 - held)
            byte += 1
            held += 8
        entry = fast[np.int64(buffer >> fast_shift)]
        if entry >= 0:
            length = entry >> 32
            out[at + t] = entry & 0xFFFFFFFF
        else:
            peek = np.int64(buffer >> peek_shift)
            length = FAST_BITS + 1 if FAST_BITS + 1 > min_len else min_len
            while peek < limits[length]:
                length += 1
            value = peek >> (max_len - length)
            out[at + t] = symbols[symindex[length] + value - min_code[length]]
        buffer <<= np.uint64(length)
        held -= length


@compiled
def _decode_blocks(
    data: npt.NDArray[np.uint8], sync: npt.NDArray[np.uint8], blocks: Ints, tokens: int,
    min_len: int, max_len: int, limits: Ints, min_code: Ints, symindex: Ints, symbols: Ints, fast: Ints,
    out: npt.NDArray[np.int32],
) -> None:
    """Decode whole blocks into ``out``, SYNC ids per block."""
    for b in range(len(blocks)):
        _decode_block(data, sync, blocks[b], tokens, min_len, max_len, limits, min_code, symindex, symbols, fast,
                      out, b * SYNC)


@compiled
def _gather(
    positions: Ints, data: npt.NDArray[np.uint8], sync: npt.NDArray[np.uint8], tokens: int,
    min_len: int, max_len: int, limits: Ints, min_code: Ints, symindex: Ints, symbols: Ints, fast: Ints,
    slot_of: npt.NDArray[np.int32], block_of: Ints, cache: npt.NDArray[np.int32], clock: Ints,
    out: npt.NDArray[np.int32],
) -> None:
    """The ids at ``positions``, through a cache of decoded blocks (``slot_of[block]`` is the
    block's slot or -1; slots are reused in turn, the oldest first)."""
    slots = len(block_of)
    for i in range(len(positions)):
        position = positions[i]
        block = position >> 7
        slot = slot_of[block]
        if slot < 0:
            slot = clock[0]
            clock[0] = (slot + 1) % slots
            if block_of[slot] >= 0:
                slot_of[block_of[slot]] = -1
            block_of[slot] = block
            slot_of[block] = slot
            _decode_block(data, sync, block, tokens, min_len, max_len, limits, min_code, symindex, symbols, fast,
                          cache, slot * SYNC)
        out[i] = cache[slot * SYNC + (position & (SYNC - 1))]


CACHE_BLOCKS = 1 << 16
"""Decoded blocks a stream keeps for gathers (8.4 M ids, 32 MB): the steps of a query look at the
positions after the previous step's, in the same blocks."""


class HuffmanStream:
    """A compressed token stream, decoded block by block on demand."""

    def __init__(self, prefix: str, code: HuffmanCode, data: npt.NDArray[np.uint8], sync: npt.NDArray[np.int32]):
        self.prefix = prefix
        self.code = code
        self.data = data
        self.sync = sync
        if len(sync) != -(-code.length // SYNC):
            raise CorpusFormatError(
                f"{prefix}.huf.syn has {len(sync)} entries, {-(-code.length // SYNC)} expected for {code.length} tokens"
            )
        limits = np.zeros(MAX_CODELEN + 1, dtype=np.int64)
        for length in range(code.min_len, code.max_len + 1):
            limits[length] = code.min_code[length] << (code.max_len - length)
        self._limits = limits
        # codes of at most FAST_BITS bits: every FAST_BITS-bit prefix that starts one gives its
        # length and id (longer codes take the smaller values: their prefixes stay -1)
        fast = np.full(1 << FAST_BITS, -1, dtype=np.int64)
        codes, lengths = code.codes()
        short = np.flatnonzero(lengths <= FAST_BITS)
        for i in short.tolist():
            spare = FAST_BITS - int(lengths[i])
            first = int(codes[i]) << spare
            fast[first : first + (1 << spare)] = (int(lengths[i]) << 32) | i
        self._fast = fast
        # the block cache (slot of each block, block of each slot, the decoded slots), made at the first
        # gather and set in one assignment: threads evaluating ranges of one query share it
        self._block_cache: tuple[npt.NDArray[np.int32], Ints, npt.NDArray[np.int32]] | None = None
        self._clock = np.zeros(1, dtype=np.int64)

    def __len__(self) -> int:
        return self.code.length

    def blocks(self, numbers: Ints) -> npt.NDArray[np.int32]:
        """The ids of these blocks, SYNC per block (a short last block is padded with zeros)."""
        out = np.zeros(len(numbers) * SYNC, dtype=np.int32)
        if len(numbers):
            c = self.code
            _decode_blocks(self.data, self.sync.view(np.uint8), np.asarray(numbers, dtype=np.int64), c.length,
                           c.min_len, c.max_len, self._limits, c.min_code, c.symindex, c.symbols, self._fast, out)
        return out

    def ids(self, cpos: npt.ArrayLike) -> npt.NDArray[np.int32]:
        """The ids at these positions (any shape), through the cache of decoded blocks."""
        positions = np.asarray(cpos, dtype=np.int64)
        out = np.empty(positions.shape, dtype=np.int32)
        if positions.size == 0:
            return out
        if positions.min() < 0 or positions.max() >= self.code.length:
            raise IndexError(f"corpus position out of range for {self.prefix} ({self.code.length} tokens)")
        cache = self._block_cache
        if cache is None:
            blocks = len(self.sync)
            block_of = np.full(min(blocks, CACHE_BLOCKS), -1, dtype=np.int64)
            cache = (np.full(blocks, -1, dtype=np.int32), block_of, np.zeros(len(block_of) * SYNC, dtype=np.int32))
            self._block_cache = cache
        slot_of, block_of, decoded = cache
        c = self.code
        _gather(np.ascontiguousarray(positions.ravel()), self.data, self.sync.view(np.uint8), c.length, c.min_len,
                c.max_len, self._limits, c.min_code, c.symindex, c.symbols, self._fast, slot_of, block_of,
                decoded, self._clock, out.reshape(-1))
        return out

    def range(self, start: int, stop: int) -> npt.NDArray[np.int32]:
        """The ids of positions ``start`` to ``stop`` (exclusive)."""
        if start >= stop:
            return np.zeros(0, dtype=np.int32)
        first, last = start // SYNC, (stop - 1) // SYNC
        decoded = self.blocks(np.arange(first, last + 1, dtype=np.int64))
        return decoded[start - first * SYNC : stop - first * SYNC]


def write_stream(prefix: Path, ids: npt.NDArray[np.int32], code: HuffmanCode, chunk: int = 1 << 23) -> None:
    """Write ``PREFIX.huf`` and ``PREFIX.huf.syn`` for this token stream (a mapped ``.corpus`` will
    do: it is read ``chunk`` tokens at a time, and since every block of SYNC tokens starts on a byte
    boundary, the chunks are coded independently)."""
    codes, lengths = code.codes()
    chunk -= chunk % SYNC
    with open(f"{prefix}.huf", "wb") as huf, open(f"{prefix}.huf.syn", "wb") as syn:
        base = 0
        for start in range(0, len(ids), chunk):
            part = np.asarray(ids[start : start + chunk], dtype=np.int64)
            bits = int(lengths[part].sum())
            out = np.zeros(bits // 8 + -(-len(part) // SYNC) + 1, dtype=np.uint8)  # + each block's padding
            sync = np.zeros(-(-len(part) // SYNC), dtype=np.int64)
            written = _encode_stream(part, codes, lengths, out, sync)
            _check_offset(prefix, ".huf", base + written)
            huf.write(out[:written].tobytes())
            syn.write((sync + base).astype(BE_INT32).tobytes())
            base += written


# ------------------------------------------------------------------ reverse index (.crc, .crx)


def golomb_parameters(frequencies: npt.ArrayLike, tokens: int) -> Ints:
    """Each id's Golomb parameter b = ceil(-ln(2 - p) / ln(1 - p)) with p = f / N, at least 2 (as
    cwb-compress-rdx computes it in doubles, with the C library's log, which ``math.log`` is)."""
    freq = np.asarray(frequencies, dtype=np.int64)
    distinct, where = np.unique(freq, return_inverse=True)
    values = np.empty(len(distinct), dtype=np.int64)
    for k, f in enumerate(distinct.tolist()):
        p = f / tokens
        if p >= 1.0:
            values[k] = 2  # log(0) is -inf in C: the quotient is 0
            continue
        b = math.ceil(-math.log(2.0 - p) / math.log(1.0 - p)) if p > 0 else 2
        values[k] = b if b > 1 else 2
    return values[where.reshape(freq.shape)]


@compiled
def _encode_index(
    rev: npt.NDArray[np.int32], frequencies: Ints, parameters: Ints, out: npt.NDArray[np.uint8], offsets: Ints
) -> int:
    """Golomb-code each id's positions (gaps, the first from 0) into ``out`` (zeroed), byte-aligned
    per id; ``offsets`` gets each id's byte offset. Returns the bytes written."""
    state = np.zeros(3, dtype=np.int64)
    position = 0
    for i in range(len(frequencies)):
        offsets[i] = state[0]
        b = parameters[i]
        ub = 0
        while (np.int64(1) << ub) < b:
            ub += 1
        short = (np.int64(1) << ub) - b
        previous = np.int64(0)
        for _ in range(frequencies[i]):
            gap = np.int64(rev[position]) - previous
            previous = np.int64(rev[position])
            position += 1
            q = gap // b
            r = gap - q * b
            while q > 0:  # q one-bits, then a zero-bit
                width = min(q, 32)
                _put(out, state, (np.int64(1) << width) - 1, width)
                q -= width
            _put(out, state, 0, 1)
            if r < short:  # truncated binary: r in ub - 1 bits, or r + short in ub bits
                _put(out, state, r, ub - 1)
            else:
                _put(out, state, r + short, ub)
        _pad(out, state)
    return int(state[0])


@compiled
def _decode_until(
    data: npt.NDArray[np.uint8], state: Ints, b: int, lo: int, hi: int, out: npt.NDArray[np.int32], at: int
) -> int:
    """Go on decoding one id from ``state`` (the next code's bit, the last position decoded, the
    positions left) up to the first position at or after ``hi``, which stays undecoded in ``state``;
    the positions in ``[lo, hi)`` go to ``out`` from ``at`` on. Returns where the next would go."""
    ub = 0
    while (np.int64(1) << ub) < b:
        ub += 1
    lb = ub - 1
    short = (np.int64(1) << ub) - b
    size = len(data)
    bit, previous, left = state[0], state[1], state[2]
    while left > 0:
        after = bit
        q = 0
        while after >> 3 < size and (data[after >> 3] >> (7 - (after & 7))) & 1:
            q += 1
            after += 1
        after += 1  # the zero-bit
        r = np.int64(0)
        for _ in range(lb):
            r = (r << 1) | ((data[after >> 3] >> (7 - (after & 7))) & 1)
            after += 1
        if r >= short:
            r = ((r << 1) | ((data[after >> 3] >> (7 - (after & 7))) & 1)) - short
            after += 1
        position = previous + q * b + r
        if position >= hi:
            break
        previous, bit = position, after
        left -= 1
        if position >= lo:
            out[at] = position
            at += 1
    state[0], state[1], state[2] = bit, previous, left
    return at


@compiled
def _decode_index(
    data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.uint8], ids: Ints, frequencies: Ints, parameters: Ints,
    out: npt.NDArray[np.int32],
) -> None:
    """Decode the positions of ``ids`` one after the other into ``out``."""
    state = np.zeros(3, dtype=np.int64)
    at = 0
    for k in range(len(ids)):
        state[0], state[1], state[2] = _int32_at(offsets, ids[k]) * 8, 0, frequencies[k]
        at = _decode_until(data, state, parameters[k], 0, EVERYWHERE, out, at)


EVERYWHERE = 1 << 62
"""A position beyond every corpus."""


class GolombIndex:
    """A compressed reverse index: each id's positions decoded on demand."""

    def __init__(self, prefix: str, data: npt.NDArray[np.uint8], offsets: npt.NDArray[np.int32],
                 frequencies: npt.NDArray[np.int32], tokens: int) -> None:
        if len(offsets) != len(frequencies):
            raise CorpusFormatError(f"{prefix}.crx has {len(offsets)} entries for {len(frequencies)} lexicon ids")
        self.prefix = prefix
        self.data = data
        self.offsets = offsets
        self.frequencies = np.asarray(frequencies, dtype=np.int64)
        self.parameters = golomb_parameters(self.frequencies, tokens)
        # the decoded positions of frequent ids, by their number (the newest kept even if more)
        self._kept: Lru[int, npt.NDArray[np.int32]] = Lru(POSITIONS_KEPT, len, keeps_newest=True)
        # per id, where the latest decodings of a range stopped (the most recent ids' first)
        self._cursors: Lru[int, list[tuple[int, Ints]]] = Lru(CURSORS_KEPT)
        self._lock = threading.Lock()  # an id's stops: read, then written back with one more

    def positions(self, ids: npt.ArrayLike) -> npt.NDArray[np.int32]:
        """The positions of every id, id after id (each id's ascending). The positions of a frequent
        id asked for alone are kept for the next query (``POSITIONS_KEPT`` in all)."""
        wanted = np.asarray(ids, dtype=np.int64).ravel()
        if len(wanted) == 1 and self.frequencies[wanted[0]] >= POSITIONS_CACHED_FROM:
            key = int(wanted[0])
            kept = self._kept.get(key)
            if kept is not None:
                return kept
            found = self._decode(wanted)
            found.flags.writeable = False  # shared between queries
            self._kept.put(key, found)
            return found
        return self._decode(wanted)

    def positions_between(self, lexicon_id: int, lo: int, hi: int) -> npt.NDArray[np.int32]:
        """The positions of one id in ``[lo, hi)``, ascending. Kept positions are sliced; others are
        decoded on from the latest place a call for this id stopped at or before ``lo`` (a query
        evaluated range by range decodes each id about once, whatever the number of ranges, also
        when threads ask for neighbouring ranges out of order), else from the id's first position;
        nothing outside the range is kept."""
        kept = self._kept.peek(lexicon_id)
        with self._lock:
            stops = self._cursors.peek(lexicon_id) or []
            # (where it stopped, [bit, last position, positions left]): the latest usable, copied, as
            # another thread may go on from it too
            usable = max((stop for stop in stops if stop[0] <= lo), default=None, key=lambda stop: stop[0])
            cursor = (usable[0], usable[1].copy()) if usable else None
        if kept is not None:  # (bounds of the array's own type: int64 ones would copy all of it to compare)
            bounds = np.asarray([min(lo, INT32_MAX), min(hi, INT32_MAX)], dtype=kept.dtype)
            a, b = np.searchsorted(kept, bounds)
            return kept[a:b]
        if cursor is None:
            first_bit = _int32_at(self.offsets.view(np.uint8), lexicon_id) * 8
            state = np.array([first_bit, 0, int(self.frequencies[lexicon_id])], dtype=np.int64)
        else:
            state = cursor[1]
        out = np.empty(max(0, min(int(state[2]), hi - lo)), dtype=np.int32)
        written = _decode_until(self.data, state, int(self.parameters[lexicon_id]), lo, hi, out, 0) if len(out) else 0
        with self._lock:
            # the latest stops, whatever their places (the next query starts again at the first range)
            self._cursors.put(lexicon_id, [*(self._cursors.peek(lexicon_id) or []), (hi, state)][-CURSORS_PER_ID:])
        return out[:written]

    def _decode(self, wanted: Ints) -> npt.NDArray[np.int32]:
        frequencies = self.frequencies[wanted]
        out = np.empty(int(frequencies.sum()), dtype=np.int32)
        if len(out):
            _decode_index(self.data, self.offsets.view(np.uint8), wanted, frequencies, self.parameters[wanted], out)
        return out


POSITIONS_CACHED_FROM = 1 << 14
"""Ids this frequent have their decoded positions kept (rarer ones decode in microseconds)."""

POSITIONS_KEPT = 1 << 24
"""Decoded positions kept per index (64 MB), the least recently used dropped first."""

INT32_MAX = 2**31 - 1
"""CWB's positions are int32."""

CURSORS_PER_ID = 4
"""Places per id where decoding stopped, kept to go on from (threads read neighbouring ranges)."""

CURSORS_KEPT = 4096
"""Ids whose decoding of a range, stopped where it ended, an index keeps to go on with (the most
recent ones; a small array each)."""


def write_index(prefix: Path, rev: npt.NDArray[np.int32], frequencies: npt.ArrayLike, tokens: int,
                chunk: int = 1 << 23) -> None:
    """Write ``PREFIX.crc`` and ``PREFIX.crx`` for this reverse index (positions grouped by id; a
    mapped ``.corpus.rev`` will do: ids are coded a group of about ``chunk`` positions at a time,
    each id starting on a byte boundary)."""
    freq = np.asarray(frequencies, dtype=np.int64)
    if len(freq) and freq.min() <= 0:
        first = int(np.flatnonzero(freq <= 0)[0])
        raise CorpusFormatError(f"lexicon id {first} of {prefix.name} has frequency 0: its reverse index cannot be "
                                "Golomb-coded (cwb-compress-rdx refuses it too)")
    parameters = golomb_parameters(freq, tokens)
    ends = np.cumsum(freq)
    with open(f"{prefix}.crc", "wb") as crc, open(f"{prefix}.crx", "wb") as crx:
        base, first = 0, 0
        while first < len(freq):
            # ids first..last-1 hold about ``chunk`` positions (at least one id)
            done = int(ends[first - 1]) if first else 0
            last = max(first + 1, int(np.searchsorted(ends, done + chunk, side="right")))
            f, b = freq[first:last], parameters[first:last]
            # a gap g costs g // b + 1 unary bits and at most ceil(log2 b) more; an id's gaps sum to < N
            bound = int((tokens // b + f * (2 + np.ceil(np.log2(b)).astype(np.int64))).sum()) // 8 + len(f) + 8
            out = np.zeros(bound, dtype=np.uint8)
            offsets = np.zeros(len(f), dtype=np.int64)
            positions = np.asarray(rev[done : int(ends[last - 1])], dtype=np.int32)
            written = _encode_index(positions, f, b, out, offsets)
            _check_offset(prefix, ".crc", base + written)
            crc.write(out[:written].tobytes())
            crx.write((offsets + base).astype(BE_INT32).tobytes())
            base += written
            first = last


def _check_offset(prefix: Path, suffix: str, size: int) -> None:
    if size > MAX_OFFSET:
        raise CorpusFormatError(f"{prefix}{suffix} would pass {MAX_OFFSET:,} bytes, the largest offset CWB's "
                                f"int32 index can hold: cut the corpus into smaller partitions")
