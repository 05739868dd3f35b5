"""Write s-attributes (``S.rng``, ``S.avx``, ``S.avs``) following cwb-encode's region rules.

A declared element (``-S s:0+id``) becomes several CWB s-attributes: the element itself, one per
embedding level (``s1``, ``s2``, ... for ``:n``) and one per key (``s_id``, ``s_id1``, ...). Regions
start at the position of the next token and end at the previous one; a region without tokens is
dropped; a flat element (no ``:n``) closes an open region when a new one starts; ``:n`` allows n
levels of embedding and drops deeper ones together with their end tags.

Well-formed input — start and end tags alternating — is handled a batch at a time with numpy; any
other sequence goes through the tag-by-tag state machine, which implements every rule.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from cowbird.store.batch import Tags
from cowbird.store.cwbformat import BE_INT32
from cowbird.store.registry import SAttributeDecl
from cowbird.store.strings import Budget, StringTable, remap_file
from cowbird.store.vrt import MAX_VALUE_BYTES, decode_entities, truncate_value

FLUSH_ENTRIES = 1 << 20

_NAME_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-") | frozenset(
    range(0x80, 0x100)
)
_NAME = rb"[A-Za-z0-9_\-\x80-\xff]+"
_PAIR = re.compile(rb"(" + _NAME + rb")[ \t]*=[ \t]*(?:\"([^\"]*)\"|'([^']*)')[ \t]*")
_WELL_FORMED = re.compile(rb"(?:" + _PAIR.pattern + rb")*")


class RegionWriter:
    """One CWB s-attribute: ranges, and annotation strings when it stores values."""

    def __init__(self, directory: Path, name: str, store_values: bool, budget: Budget | None = None) -> None:
        self.directory = directory
        self.name = name
        self.store_values = store_values
        self.count = 0
        self.start: int | None = None
        self.value = b""
        self._rng: BinaryIO = open(directory / f"{name}.rng", "wb")
        self._avx: BinaryIO | None = open(directory / f"{name}.avx", "wb") if store_values else None
        # the distinct values, numbered in order of first occurrence; .avx holds those numbers until
        # finish() writes .avs and turns them into offsets
        self._values = StringTable(directory, name, budget) if store_values else None
        self._ranges: list[npt.NDArray[np.int32]] = []
        self._index: list[npt.NDArray[np.int32]] = []
        self._buffered = 0

    @property
    def is_open(self) -> bool:
        return self.start is not None

    def open(self, start: int, value: bytes = b"") -> None:
        self.start = start
        self.value = value

    def close(self, end: int) -> None:
        start, self.start = self.start, None
        if start is not None:
            self.write(np.asarray([start]), np.asarray([end]), [self.value])

    def write(self, starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64], values: list[bytes]) -> None:
        """Append closed regions; those without tokens (end < start) are dropped, as in cwb-encode."""
        keep = ends >= starts
        if not keep.all():
            kept = np.flatnonzero(keep)
            starts, ends = starts[kept], ends[kept]
            values = [values[i] for i in kept.tolist()] if self.store_values else values
        n = len(starts)
        if n == 0:
            return
        pairs = np.empty((n, 2), dtype=np.int32)
        pairs[:, 0] = starts
        pairs[:, 1] = ends
        self._ranges.append(pairs)
        if self._values is not None:
            index = np.empty((n, 2), dtype=np.int32)
            index[:, 0] = np.arange(self.count, self.count + n)
            index[:, 1] = self._values.numbers(values)
            self._index.append(index)
        self.count += n
        self._buffered += n
        if self._buffered >= FLUSH_ENTRIES:
            self._flush()

    def _flush(self) -> None:
        if self._ranges:
            np.concatenate(self._ranges).astype(BE_INT32).tofile(self._rng)
        if self._avx is not None and self._index:
            np.concatenate(self._index).astype(BE_INT32).tofile(self._avx)
        self._ranges, self._index, self._buffered = [], [], 0

    def finish(self) -> None:
        """Write what is buffered, ``.avs``, and the values' offsets into ``.avx``."""
        self._flush()
        self.close_files()
        if self._values is not None:
            done = self._values.finish(self.directory / f"{self.name}.avs")
            offsets = done.offsets if done.remap is None else done.offsets[done.remap]
            remap_file(self.directory / f"{self.name}.avx", offsets, column=1)

    def close_files(self) -> None:
        for handle in (self._rng, self._avx):
            if handle is not None and not handle.closed:
                handle.close()


def parse_keys(annotation: bytes) -> tuple[dict[bytes, bytes], str | None]:
    """Key/value pairs of a start tag as cwb-encode reads them, and the syntax error that stopped it.

    The first value of a repeated key wins.
    """
    if _WELL_FORMED.fullmatch(annotation):
        values: dict[bytes, bytes] = {}
        for key, double, single in _PAIR.findall(annotation):
            values.setdefault(key, double if double or not single else single)
        return values, None
    return _parse_keys_strictly(annotation)


def _parse_keys_strictly(annotation: bytes) -> tuple[dict[bytes, bytes], str | None]:
    values: dict[bytes, bytes] = {}
    i, n = 0, len(annotation)
    while i < n:
        start = i
        while i < n and annotation[i] in _NAME_BYTES:
            i += 1
        if i == start:
            return values, "empty attribute name"
        key = annotation[start:i]
        while i < n and annotation[i] in b" \t":
            i += 1
        if i >= n or annotation[i] != ord("="):
            return values, "'=' not found"
        i += 1
        while i < n and annotation[i] in b" \t":
            i += 1
        if i < n and annotation[i] in b"\"'":
            end = annotation.find(annotation[i : i + 1], i + 1)
            if end < 0:
                return values, "value missing end quote"
            value, i = annotation[i + 1 : end], end + 1
        else:
            start = i
            while i < n and annotation[i] in _NAME_BYTES:
                i += 1
            if i == start:
                return values, f"attribute {key.decode('utf-8', 'replace')}= with empty value (not allowed)"
            value = annotation[start:i]
            i += 1  # cwb-encode consumes the character after an unquoted value
        values.setdefault(key, value)
        while i < n and annotation[i] in b" \t":
            i += 1
    return values, None


class ElementEncoder:
    """One declared element and the s-attributes it produces."""

    def __init__(self, directory: Path, decl: SAttributeDecl, strip_blanks: bool, warn: Callable[[str], None],
                 budget: Budget | None = None) -> None:
        self.decl = decl
        self.strip_blanks = strip_blanks
        self.warn = warn
        self.flat = decl.depth is None
        levels = 1 if decl.depth is None else decl.depth + 1
        suffixes = [""] + [str(i) for i in range(1, levels)]
        self.main = [RegionWriter(directory, f"{decl.name}{s}", decl.keep_all, budget) for s in suffixes]
        self.key_names = [key.encode("ascii") for key in decl.keys]
        self.keys = [[RegionWriter(directory, f"{decl.name}_{key}{s}", True, budget) for s in suffixes]
                     for key in decl.keys]
        self.level = 0
        self.dropped = 0
        self._warned: set[str] = set()
        self._fast = re.compile(b" ".join(re.escape(key) + rb'="([^"&]*)"' for key in self.key_names))

    def strip_blanks_needed(self, annotation: bytes) -> bool:
        """Whether a fast-path value could end in a blank (-B strips it) or be over-long."""
        return (self.strip_blanks and (b' "' in annotation or b'\t"' in annotation)) or len(
            annotation
        ) > MAX_VALUE_BYTES

    @property
    def is_open(self) -> bool:
        return self.main[0].is_open

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.warn(message)

    def _value(self, value: bytes, where: Callable[[], str]) -> bytes:
        if self.strip_blanks:
            value = value.rstrip(b" \t")
        if len(value) > MAX_VALUE_BYTES:
            self.warn(f"{where()}: value of <{self.decl.name}> longer than {MAX_VALUE_BYTES} bytes, truncated")
            value = truncate_value(value, True)
        return value

    def _values(
        self, annotation: bytes, source: str, lines: npt.NDArray[np.int64], i: int
    ) -> tuple[bytes, list[bytes]]:
        """The stored strings of start tag ``i``: the whole annotation (-V) and each key's value.

        Warnings name ``source`` and the tag's line, formatted only when there is one to give.
        """

        def where() -> str:
            return f"{source}:{int(lines[i])}"

        whole = self._value(annotation, where) if self.decl.keep_all else b""
        if not self.keys:
            if annotation and not self.decl.keep_all:
                self._warn_once(
                    "annotations",
                    f"{where()}: annotations of s-attribute <{self.decl.name}> not stored "
                    "(declare keys with -S name+key or use -V; warning issued only once)",
                )
            return whole, []
        fast = self._fast.fullmatch(annotation)
        if fast is not None and not self.strip_blanks_needed(annotation):
            # the common case: exactly the declared keys, in order, double-quoted, nothing to decode
            return whole, list(fast.groups())
        found, error = parse_keys(annotation)
        if error:
            self.warn(f"{where()}: attributes of <{self.decl.name} ...> after a syntax error ignored ({error})")
        if len(found) > len(self.key_names) or any(k not in self.key_names for k in found):
            for key in found:
                if key not in self.key_names:
                    name = key.decode("utf-8", "replace")
                    self._warn_once(
                        f"key:{name}",
                        f"{where()}: undeclared attribute <{self.decl.name} {name}=...> ignored "
                        "(warning issued only once)",
                    )
        values = []
        for key in self.key_names:
            raw = found.get(key, b"")
            values.append(self._value(decode_entities(raw) if b"&" in raw else raw, where))
        return whole, values

    # -- batches ---------------------------------------------------------------------------

    def feed(self, tags: Tags, offset: int, source: str) -> None:
        """Apply this element's tags of one batch; ``offset`` turns global into partition positions."""
        n = len(tags)
        if n == 0:
            return
        open_now = self.is_open
        simple = self.flat or self.level <= 1
        expected = (np.arange(n) % 2 == 0) == open_now  # True where an end tag is due
        if simple and np.array_equal(tags.closing, expected):
            self._feed_alternating(tags, offset, source)
            return
        for i in range(n):
            where = f"{source}:{int(tags.line[i])}"
            cpos = int(tags.cpos[i]) - offset
            if tags.closing[i]:
                self.end(cpos, where)
            else:
                self.start(tags.annotation[i], cpos, where)

    def _feed_alternating(self, tags: Tags, offset: int, source: str) -> None:
        closing = tags.closing
        cpos = tags.cpos - offset
        open_at = np.flatnonzero(~closing)
        close_at = np.flatnonzero(closing)
        lines = tags.line
        annotations = tags.annotation
        parsed = [self._values(annotations[i], source, lines, i) for i in open_at.tolist()]
        was_open = self.is_open
        starts = cpos[open_at]
        ends = cpos[close_at] - 1
        # region k ends at close k; it starts at the pending open region or at open k (shifted by one)
        n_closed = len(close_at)
        if was_open:
            pending_start = self.main[0].start
            assert pending_start is not None
            region_starts = np.concatenate((np.asarray([pending_start], dtype=np.int64), starts))[:n_closed]
            pending_whole = [self.main[0].value]
            pending_keys = [[writers[0].value] for writers in self.keys]
        else:
            region_starts = starts[:n_closed]
            pending_whole, pending_keys = [], [[] for _ in self.keys]
        wholes = pending_whole + [p[0] for p in parsed]
        self.main[0].start = None
        self.main[0].write(region_starts.astype(np.int64), ends.astype(np.int64), wholes[:n_closed])
        for k, writers in enumerate(self.keys):
            values = pending_keys[k] + [p[1][k] for p in parsed]
            writers[0].start = None
            writers[0].write(region_starts.astype(np.int64), ends.astype(np.int64), values[:n_closed])
        left_open = len(open_at) - (n_closed - (1 if was_open else 0))
        if left_open:
            last = int(starts[-1])
            self.main[0].open(last, wholes[-1])
            for k, writers in enumerate(self.keys):
                writers[0].open(last, parsed[-1][1][k])
        if not self.flat:
            self.level = 1 if left_open else 0

    # -- tag by tag --------------------------------------------------------------------------

    def _open_level(self, level: int, cpos: int, annotation: bytes, where: str) -> None:
        source, _, line = where.rpartition(":")
        whole, values = self._values(annotation, source, np.asarray([int(line)]), 0)
        self.main[level].open(cpos, whole)
        for writers, value in zip(self.keys, values, strict=True):
            writers[level].open(cpos, value)

    def _close_level(self, level: int, end: int) -> None:
        self.main[level].close(end)
        for writers in self.keys:
            writers[level].close(end)

    def start(self, annotation: bytes, cpos: int, where: str) -> None:
        """A start tag; ``cpos`` is the partition-local position of the next token."""
        if self.flat:
            if self.is_open:
                self._close_level(0, cpos - 1)
            self._open_level(0, cpos, annotation, where)
            return
        assert self.decl.depth is not None
        if self.level > self.decl.depth:
            self.dropped += 1
        else:
            self._open_level(self.level, cpos, annotation, where)
        self.level += 1

    def end(self, cpos: int, where: str) -> None:
        """An end tag; the region ends at the token before ``cpos``."""
        if self.flat:
            if not self.is_open:
                self.warn(f"{where}: closing tag </{self.decl.name}> without matching opening tag ignored")
                return
            self._close_level(0, cpos - 1)
            return
        assert self.decl.depth is not None
        self.level -= 1
        if self.level < 0:
            self.level = 0
            self.warn(f"{where}: closing tag </{self.decl.name}> without matching opening tag ignored")
        elif self.level <= self.decl.depth:
            self._close_level(self.level, cpos - 1)

    def finish(self, size: int, where: str) -> None:
        """Close what is still open at the last token, and write the files."""
        if self.flat and self.is_open:
            self.warn(f"{where}: missing </{self.decl.name}> tag inserted at end of input")
            self._close_level(0, size - 1)
        elif not self.flat and self.level > 0:
            missing = self.level
            plural = "s" if missing > 1 else ""
            self.warn(f"{where}: {missing} missing </{self.decl.name}> tag{plural} inserted at end of input")
            while self.level > 0:
                self.end(size, where)
        if self.dropped:
            self.warn(f"{self.dropped} <{self.decl.name}> regions dropped because of deep nesting")
        for writer in self.main + [w for ws in self.keys for w in ws]:
            writer.finish()

    def abort(self) -> None:
        """Close the files (encoding failed and they will be removed)."""
        for writer in self.main + [w for ws in self.keys for w in ws]:
            writer.close_files()
