"""What the native engine keeps per opened corpus: lexicon helpers, region arrays, value tables.

Everything here is derived from the memory-mapped store on first use and cached for the life of
the corpus object (a node serves many queries on it); all caches are bounded by lexicon or region
counts, never by hits.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from functools import cached_property

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import UnknownAttribute
from cowbird.core.lru import Lru
from cowbird.engines.base import EngineOptions
from cowbird.engines.results import Cpos
from cowbird.query import RegexValue
from cowbird.store import CwbCorpus, PositionalAttribute, StructuralAttribute
from cowbird.store.compression import compiled
from cowbird.store.lexicon import LexiconIndex, match_table
from cowbird.store.neighbours import Neighbours, NeighbourToken
from cowbird.store.pattr_writer import id_groups

MATCH_TABLES_KEPT = 64 << 20
"""Bytes of regex match tables a corpus keeps for the next queries (a byte per lexicon id each)."""

SCAN_CHUNK = 1 << 22
"""Positions looked up at once when a test is evaluated over the whole corpus."""


class RegionIndex:
    """An s-attribute's ranges as native arrays, for vectorised position -> region lookups."""

    def __init__(self, attribute: StructuralAttribute) -> None:
        self.attribute = attribute
        self.starts = np.ascontiguousarray(attribute.ranges[:, 0], dtype=np.int64)
        self.ends = np.ascontiguousarray(attribute.ranges[:, 1], dtype=np.int64)

    def __len__(self) -> int:
        return len(self.starts)

    def containing(self, cpos: Cpos) -> npt.NDArray[np.int64]:
        """Region number containing each position, -1 where none does."""
        number = np.searchsorted(self.starts, cpos, side="right") - 1
        inside = number >= 0
        inside[inside] = self.ends[number[inside]] >= cpos[inside]
        return np.where(inside, number, -1)

    def starting_at(self, cpos: Cpos) -> npt.NDArray[np.int64]:
        """Region number starting exactly at each position, -1 elsewhere."""
        number = np.searchsorted(self.starts, cpos, side="left")
        ok = number < len(self.starts)
        ok[ok] = self.starts[number[ok]] == cpos[ok]
        return np.where(ok, number, -1)

    def ending_at(self, cpos: Cpos) -> npt.NDArray[np.int64]:
        """Region number ending exactly at each position, -1 elsewhere."""
        number = np.searchsorted(self.starts, cpos, side="right") - 1
        ok = number >= 0
        ok[ok] = self.ends[number[ok]] == cpos[ok]
        return np.where(ok, number, -1)


GATHER_IDS = 16
"""Above this many ids, their reverse-index slices are read with one gather."""

RANGE_SCAN_IDS = 1000
"""On a range of the corpus, more than one id per this many tokens is read from the tokens."""

MARK_POSITIONS = 1 << 24
"""Positions read from the reverse index at once when many ids are marked in a mask (a 16th of a
GT: 64 MB of positions, about 400 MB of work arrays on an uncompressed index)."""

INDEX_TEST_MIN = 4096
"""Fewer positions are always tested by gathering their ids (a handful of cached blocks)."""


@compiled
def _member_sorted(haystack: Cpos, needles: Cpos, out: npt.NDArray[np.bool_]) -> bool:
    """Mark the needles found in the sorted haystack, walking both in order; False (and nothing
    trustworthy in ``out``) when the needles turn out not to be sorted."""
    j = 0
    previous = -1
    for i in range(len(needles)):
        needle = needles[i]
        if needle < previous:
            return False
        previous = needle
        while j < len(haystack) and haystack[j] < needle:
            j += 1
        out[i] = j < len(haystack) and haystack[j] == needle
    return True


def sorted_member(haystack: Cpos, needles: Cpos) -> npt.NDArray[np.bool_]:
    """Which needles occur in the sorted haystack (a merge when the needles are sorted too)."""
    out = np.zeros(len(needles), dtype=np.bool_)
    if len(haystack) == 0 or len(needles) == 0:
        return out
    if _member_sorted(haystack, needles, out):
        return out
    at = np.minimum(np.searchsorted(haystack, needles), len(haystack) - 1)
    return np.asarray(haystack[at] == needles, dtype=np.bool_)


@compiled
def _set_bits(bits: npt.NDArray[np.uint8], positions: npt.NDArray[np.int32]) -> None:
    """Set the bit of each position (bit ``p % 8`` of byte ``p // 8``)."""
    for i in range(len(positions)):
        p = positions[i]
        bits[p >> 3] |= np.uint8(1 << (p & 7))


@compiled
def _bits_at(bits: npt.NDArray[np.uint8], cpos: Cpos, out: npt.NDArray[np.bool_]) -> None:
    """Whether the bit of each corpus position is set."""
    for i in range(len(cpos)):
        p = cpos[i]
        out[i] = (bits[p >> 3] >> (p & 7)) & 1


def bits_at(bits: npt.NDArray[np.uint8], cpos: Cpos) -> npt.NDArray[np.bool_]:
    """Whether the bit of each of ``cpos`` is set in a corpus bitmap (``NativeCorpus.bitmap``)."""
    out = np.zeros(len(cpos), dtype=np.bool_)
    if len(cpos):
        _bits_at(bits, np.asarray(cpos, dtype=np.int64), out)
    return out


PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def resident_bytes() -> tuple[int, int] | None:
    """Resident bytes of this process in all, and those of them that are shared — mapped file pages
    (and shared memory, which a node does not use): fields 2 and 3 of ``/proc/self/statm``, a cheap
    read after every query (``/proc/self/status`` took 0.2 ms); None where the system does not say."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            fields = statm.read().split()
        return int(fields[1]) * PAGE_BYTES, int(fields[2]) * PAGE_BYTES
    except (OSError, ValueError, IndexError):
        return None


NEIGHBOUR_VALUES_KEPT = 4096
"""Values whose answers on the neighbour tokens' strings are kept (a few hundred strings each, the
last asked for): a query asks each of its values of the same strings again on every range. As many
tables of values over the whole corpus's small lexicons (``whole_table``) are kept."""

WholeTable = tuple[int, npt.NDArray[np.bool_] | None, npt.NDArray[np.int64] | None]
"""The whole corpus's size, and a value's table over its small lexicon with the frequencies (``whole_table``)."""


class NativeCorpus:
    """A store corpus plus the derived indexes the native engine works with."""

    def __init__(self, corpus: CwbCorpus, options: EngineOptions | None = None) -> None:
        self.store = corpus
        self.options = options or EngineOptions()
        self.corpus_id = corpus.corpus_id
        self.size = corpus.size
        self._lexicons: dict[str, LexiconIndex] = {}
        self._frequencies: dict[str, npt.NDArray[np.int64]] = {}
        self._regions: dict[str, RegionIndex] = {}
        self._value_tables: dict[tuple[str, RegexValue], npt.NDArray[np.bool_]] = {}
        # the match tables of the last values asked for, by their bytes (the newest kept even if larger)
        self._match_tables: Lru[tuple[str, RegexValue], npt.NDArray[np.bool_]] = Lru(
            MATCH_TABLES_KEPT, lambda table: int(table.nbytes), keeps_newest=True)
        self._lock = threading.Lock()  # a value's answers on the neighbour tokens' strings, filled in
        self._whole_tables: Lru[tuple[str, RegexValue], WholeTable] = Lru(NEIGHBOUR_VALUES_KEPT)
        self._neighbour_matches: Lru[RegexValue, dict[str, bool]] = Lru(NEIGHBOUR_VALUES_KEPT)

    # -- p-attributes -----------------------------------------------------------------------

    def p(self, attribute: str) -> PositionalAttribute:
        if attribute not in self.store.entry.p_attributes:
            known = ", ".join(self.store.entry.p_attributes)
            raise UnknownAttribute(f"the corpus has no p-attribute {attribute!r} (it has: {known})")
        return self.store.p_attribute(attribute)

    def lexicon(self, attribute: str) -> LexiconIndex:
        if attribute not in self._lexicons:
            self._lexicons[attribute] = LexiconIndex(self.p(attribute).strings, self.p(attribute))
        return self._lexicons[attribute]

    def match_table(self, attribute: str, value: RegexValue) -> npt.NDArray[np.bool_]:
        """Which ids of ``attribute``'s lexicon ``value`` matches (``lexicon.match_table``), read-only;
        the tables of the last values asked for are kept (``MATCH_TABLES_KEPT`` bytes in all), so that a
        query checked, estimated, previewed and counted runs each regex over the lexicon once."""
        key = (attribute, value)
        kept = self._match_tables.get(key)
        if kept is not None:
            return kept
        table = match_table(self.lexicon(attribute), value, self.options.regex_seconds)
        table.flags.writeable = False  # shared by every query that asks for it
        self._match_tables.put(key, table)
        return table

    def frequencies(self, attribute: str) -> npt.NDArray[np.int64]:
        if attribute not in self._frequencies:
            self._frequencies[attribute] = np.asarray(self.p(attribute).frequencies, dtype=np.int64)
        return self._frequencies[attribute]

    def prefers_index(self, attribute: str, count: int, needles: int) -> bool:
        """Whether a test at ``needles`` positions is cheaper through the reverse index than by
        gathering ids: on a compressed token stream a gather decodes every block it touches, so a
        test that holds at not many more positions than are asked about reads the index instead."""
        if needles < INDEX_TEST_MIN or not self.p(attribute).compressed[0]:
            return False
        # a gather decodes up to 128 ids per block it touches (about 1 µs); the index costs about
        # 15-30 ns per position it holds
        return count <= 32 * min(needles, -(-self.size // 128))

    def member(self, attribute: str, table: npt.NDArray[np.bool_], count: int, cpos: Cpos) -> npt.NDArray[np.bool_]:
        """Whether the id at each of ``cpos`` is marked in ``table``, from the positions where it is."""
        return sorted_member(self.cpos_of(attribute, table, count), np.asarray(cpos, dtype=np.int64))

    def gather_costs_more(self, attribute: str, count: int, ids: int, needles: int, span: int) -> bool:
        """Whether testing an id table at ``needles`` positions per ``span`` tokens, over the whole
        corpus, costs more by gathering ids than by marking the table's ``count`` positions (of
        ``ids`` ids) in a bitmap once (``bitmap``): on a compressed token stream a gather decodes every
        block it touches (128 ids, about 0.6 µs), so dense tests decode the whole stream, while the
        compressed index costs about 17 ns a position and 10 µs an id (measured at 1 GT: one id's 38 M
        positions in 0.64 s, 112 M positions of 289 k ids in 4.9 s)."""
        if not self.p(attribute).compressed[0] or needles < INDEX_TEST_MIN:
            return False
        blocks = min(needles, span // 128 + 1) * max(1, self.size // max(1, span))
        return count * 17 + ids * 10_000 < blocks * 600

    def bitmap(self, attribute: str, table: npt.NDArray[np.bool_]) -> npt.NDArray[np.uint8]:
        """A bit per corpus position, set where the id is marked in ``table`` (``size / 8`` bytes: 125 MB
        at 1 GT), from the reverse index a group of ids at a time."""
        attr = self.p(attribute)
        bits = np.zeros(self.size // 8 + 1, dtype=np.uint8)
        ids = np.flatnonzero(table)
        for first, last in id_groups(self.frequencies(attribute)[ids], MARK_POSITIONS):
            _set_bits(bits, np.asarray(attr.positions_of(ids[first:last]), dtype=np.int32))
        return bits

    def ids(self, attribute: str, cpos: Cpos) -> npt.NDArray[np.int32]:
        """Lexicon ids at the given positions (one gather from the memory-mapped token stream)."""
        return self.p(attribute).ids_at(cpos)

    def cpos_of(
        self, attribute: str, table: npt.NDArray[np.bool_], count: int, lo: int = 0, hi: int | None = None
    ) -> Cpos:
        """Sorted corpus positions in ``[lo, hi)`` whose id is marked in ``table`` (``count`` of
        them in the whole corpus)."""
        hi = self.size if hi is None else min(hi, self.size)
        whole = lo <= 0 and hi >= self.size
        if count == 0 or lo >= hi:
            return np.zeros(0, dtype=np.int64)
        attr = self.p(attribute)
        ids = np.flatnonzero(table)
        if not whole and self._range_scan_pays(attr, len(ids), count, hi - lo):
            return self.scan(attribute, table, lo, hi)
        if len(ids) == 1 or count * 8 < self.size:  # few positions: the reverse-index slices, merged
            found = self._rev_slices(attr, ids, lo, hi, whole)
            if len(ids) > 1:  # ascending runs, id after id: timsort merges them (3x quicksort's speed at 20M)
                found.sort(kind="stable")
            return found
        if len(ids) * 4 < len(table):  # many positions, few ids: mark them in a mask of the range
            mask = np.zeros(hi - lo, dtype=np.bool_)
            if len(ids) <= GATHER_IDS:
                for part in self._rev_parts(attr, ids, lo, hi, whole):
                    mask[part - lo] = True
                return np.flatnonzero(mask) + lo
            # many ids: their positions read (or decoded) a group of ids at a time, not one call per id
            for first, last in id_groups(self.frequencies(attribute)[ids], MARK_POSITIONS):
                positions = attr.positions_of(ids[first:last])
                if not whole:
                    positions = positions[(positions >= lo) & (positions < hi)]
                mask[positions - lo] = True
            return np.flatnonzero(mask) + lo
        return self.scan(attribute, table, lo, hi)

    def _range_scan_pays(self, attr: PositionalAttribute, ids: int, count: int, span: int) -> bool:
        """Whether reading the tokens of a range (a query evaluated range by range) costs less than
        the reverse index: it does with many ids (each id's slice is a step of its own: about 2 µs,
        reading a token about 2 ns). On a compressed index, more than ``GATHER_IDS`` ids are decoded
        whole for every range: a scan pays when their positions outnumber the range's tokens; fewer
        ids are decoded a range at a time (each id once a query), and a scan pays only for very
        frequent ones (decoding a position costs 15-30 ns, a compressed token 5-20 ns)."""
        if ids * RANGE_SCAN_IDS > span:
            return True
        if not attr.compressed[1]:
            return False
        return count > span if ids > GATHER_IDS else count * 4 > self.size

    def _rev_parts(
        self, attr: PositionalAttribute, ids: npt.NDArray[np.int64], lo: int, hi: int, whole: bool
    ) -> list[npt.NDArray[np.int32]]:
        """Per id, its positions in ``[lo, hi)``, ascending each (slices of the memory-mapped
        reverse index, or of a compressed one decoded a range at a time)."""
        if whole:
            return [attr.positions(i) for i in ids.tolist()]
        return [attr.positions_between(i, lo, hi) for i in ids.tolist()]

    def _rev_slices(
        self, attr: PositionalAttribute, ids: npt.NDArray[np.int64], lo: int, hi: int, whole: bool
    ) -> Cpos:
        """The positions of every id, id after id (each id's ascending)."""
        if whole and (len(ids) > GATHER_IDS or attr.compressed[1]):  # one gather (or decoding) for all ids
            return attr.positions_of(ids).astype(np.int64)
        parts = self._rev_parts(attr, ids, lo, hi, whole)
        return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, dtype=np.int64)

    def scan(self, attribute: str, table: npt.NDArray[np.bool_], lo: int = 0, hi: int | None = None) -> Cpos:
        """Positions in ``[lo, hi)`` whose id is marked, reading the token stream in chunks (not mapped)."""
        attr = self.p(attribute)
        hi = self.size if hi is None else min(hi, self.size)
        found = [
            np.flatnonzero(table[attr.id_range(start, min(start + SCAN_CHUNK, hi))]) + start
            for start in range(lo, hi, SCAN_CHUNK)
        ]
        return np.concatenate(found).astype(np.int64) if found else np.zeros(0, dtype=np.int64)

    def trim(self) -> bool:
        """Release mapped pages when the process holds more than its resident budget and at least half
        of the budget is mapped file pages (the corpus's, and a few tens of MB of libraries); True if
        it did. Releasing the pages is all a release can
        do (the process's own memory stays): when the lexicons alone fill the budget, releasing every
        time made each next query read its pages in again."""
        held = resident_bytes()
        if held is None:
            return False
        resident, mapped = held
        if resident <= self.options.resident_budget or mapped <= self.options.resident_budget // 2:
            return False
        self.store.release()
        return True

    # -- s-attributes -----------------------------------------------------------------------

    @cached_property
    def neighbours(self) -> Neighbours | None:
        """The tokens around this partition (``neighbours.json``); None for a corpus without the file."""
        return Neighbours.load(self.store.entry.home)

    @property
    def next_token(self) -> NeighbourToken | None:
        """The token just past the last one (the next partition's first); None at the corpus end, or
        without neighbours, where CQP's past-the-end rule holds."""
        neighbours = self.neighbours
        return neighbours.after[0] if neighbours is not None and neighbours.after else None

    @property
    def previous_token(self) -> NeighbourToken | None:
        """The token just before the first one (the previous partition's last); None at the corpus start."""
        neighbours = self.neighbours
        return neighbours.before[-1] if neighbours is not None and neighbours.before else None

    def whole_table(self, attribute: str, value: RegexValue) -> WholeTable | None:
        """For a partition that carries them (``neighbours.json``): the whole corpus's size and, when
        the lexicon of ``attribute`` over the whole corpus has fewer than ``SMALL_LEXICON`` types,
        which of its strings ``value`` matches and their frequencies (else None, None); None for a
        corpus in one piece, which is its own whole. Kept per value: every query compiles it."""
        neighbours = self.neighbours
        if neighbours is None or neighbours.corpus_size is None or neighbours.small_lexicons is None:
            return None
        key = (attribute, value)
        kept = self._whole_tables.get(key)
        if kept is not None:
            return kept
        lexicon = neighbours.small_lexicon(attribute)
        if lexicon is None:
            found: WholeTable = (neighbours.corpus_size, None, None)
        else:
            table = match_table(LexiconIndex(list(lexicon)), value, self.options.regex_seconds)
            counts = np.fromiter(lexicon.values(), dtype=np.int64, count=len(lexicon))
            found = (neighbours.corpus_size, table, counts)
        self._whole_tables.put(key, found)
        return found

    def neighbour_matches(self, value: RegexValue, texts: Sequence[str]) -> npt.NDArray[np.bool_]:
        """Which of these strings of neighbour tokens ``value`` matches (as ``match_table`` on a lexicon),
        each string's answer kept per value: the same few hundred strings are asked for by every query."""
        known = self._neighbour_matches.get_or_put(value, dict)
        with self._lock:
            missing = [text for text in dict.fromkeys(texts) if text not in known]
        if missing:
            found = match_table(LexiconIndex(missing), value, self.options.regex_seconds).tolist()
            with self._lock:
                known.update(zip(missing, found, strict=True))
        return np.fromiter((known[text] for text in texts), dtype=np.bool_, count=len(texts))

    def has_s_attribute(self, attribute: str) -> bool:
        return attribute in self.store.entry.s_attributes

    def s(self, attribute: str) -> StructuralAttribute:
        if not self.has_s_attribute(attribute):
            known = ", ".join(self.store.entry.s_attributes) or "none"
            raise UnknownAttribute(f"the corpus has no s-attribute {attribute!r} (it has: {known})")
        return self.store.s_attribute(attribute)

    def regions(self, attribute: str) -> RegionIndex:
        if attribute not in self._regions:
            self._regions[attribute] = RegionIndex(self.s(attribute))
        return self._regions[attribute]

    def region_table(self, attribute: str, value: RegexValue | None) -> npt.NDArray[np.bool_] | None:
        """Per region of an annotated s-attribute: does its value match? (None: no annotations.)"""
        s_attr = self.s(attribute)
        if not s_attr.has_values:
            return None
        if value is None:
            return np.ones(len(s_attr), dtype=np.bool_)
        key = (attribute, value)
        if key not in self._value_tables:
            distinct = s_attr.distinct_values
            offsets = np.fromiter(distinct.keys(), dtype=np.int64, count=len(distinct))
            matched = match_table(LexiconIndex(list(distinct.values())), value, self.options.regex_seconds)
            self._value_tables[key] = np.isin(np.asarray(s_attr.value_offsets, dtype=np.int64), offsets[matched])
        return self._value_tables[key]

    @cached_property
    def p_attribute_names(self) -> list[str]:
        return list(self.store.entry.p_attributes)
