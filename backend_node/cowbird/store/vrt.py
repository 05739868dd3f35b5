"""Streaming VRT reader: token lines and structural tags, in batches of a few million lines.

VRT is one token per line with tab-separated positional attributes, and XML-style structural tags
(``<s id="1">``, ``</s>``) on lines of their own. The reader follows cwb-encode's rules (the README
lists them) and works on large byte chunks with numpy — line
classification, field splitting, locating the rare fields that need work — so Python only touches
tags, fields with entities, blanks or excess length, and lines in error.

Where cwb-encode would stop, the reader raises :class:`VrtError` naming file and line; where it
would insert a line literally or repair it, the reader does the same and warns with file and line.
"""

from __future__ import annotations

import gzip
import re
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import VrtError
from cowbird.store.batch import Batch, Tags
from cowbird.store.cwbformat import CHARSETS
from cowbird.store.vrt_tags import LITERAL, SKIP, TOKEN, TagParser

CHUNK_BYTES = 8 * 1024 * 1024
"""How much input one batch reads: large enough for numpy to pay off, small enough for memory."""

MAX_LINE_BYTES = 65534
"""cwb-encode's input line limit (the newline included it must stay below 65535 bytes)."""

MAX_VALUE_BYTES = 4095
"""Longest string CWB stores; longer values are cut to 4094 bytes plus ``$`` as cwb-encode does."""

UNDEF = b"__UNDEF__"
"""What cwb-encode stores for an empty field."""

_ENTITY = re.compile(rb"&(?:#x([0-9A-Fa-f]+)|#([0-9]+)|(lt|gt|amp|quot|apos));")
_NAMED = {b"lt": b"<", b"gt": b">", b"amp": b"&", b"quot": b'"', b"apos": b"'"}

def decode_entities(value: bytes) -> bytes:
    """Decode ``&lt; &gt; &amp; &quot; &apos;`` and numeric references in one left-to-right pass."""

    def replace(match: re.Match[bytes]) -> bytes:
        hex_code, dec_code, name = match.groups()
        if name:
            return _NAMED[name]
        try:
            return chr(int(hex_code, 16) if hex_code else int(dec_code)).encode("utf-8")
        except (ValueError, OverflowError):
            return match.group(0)

    return _ENTITY.sub(replace, value)


def truncate_value(value: bytes, utf8: bool) -> bytes:
    """Cut an over-long value the way cwb-encode does: 4094 bytes, then ``$``, never half a character."""
    head = value[: MAX_VALUE_BYTES - 1]
    if utf8:
        try:
            head.decode("utf-8")
        except UnicodeDecodeError as exc:
            head = head[: exc.start]
    return head + b"$"


@dataclass
class VrtOptions:
    """The cwb-encode flags that change how lines are read."""

    columns: int  # number of positional attributes (word included)
    s_attributes: tuple[str, ...] = ()  # declared element names; tags refer to them by index
    charset: str = "utf8"
    xml: bool = True  # -x: decode entities, skip <?...?> and <!...> lines
    skip_blank: bool = True  # -s: skip empty lines
    strip_blanks: bool = True  # -B: strip leading and trailing spaces of fields
    warn: Callable[[str], None] = lambda message: None


def open_input(path: Path) -> BinaryIO:
    """Open a VRT file, transparently decompressing ``.gz``."""
    try:
        raw = open(path, "rb")
    except OSError as exc:
        raise VrtError(str(path), 0, f"cannot open input: {exc.strerror}") from exc
    if path.suffix == ".gz":
        return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
    return raw


class VrtReader:
    """Iterate over a VRT file in batches; ``bytes_read`` tells progress."""

    def __init__(self, path: Path, options: VrtOptions, chunk_bytes: int = CHUNK_BYTES) -> None:
        if options.charset not in CHARSETS:
            known = ", ".join(CHARSETS)
            raise VrtError(str(path), 0, f"character set {options.charset!r} is not supported (use one of {known})")
        self.path = path
        self.options = options
        self.codec = CHARSETS[options.charset]
        self.chunk_bytes = chunk_bytes
        self.name = str(path)
        self.bytes_read = 0
        self._warned: set[str] = set()
        self.tag_parser = TagParser(self.name, options.s_attributes, options.columns, options.xml,
                                    options.strip_blanks, options.warn, self.warn_once)

    def __iter__(self) -> Iterator[Batch]:
        cpos = 0
        line_base = 1
        carry = b""
        with open_input(self.path) as stream:
            while True:
                try:
                    data = stream.read(self.chunk_bytes)
                except (OSError, EOFError, gzip.BadGzipFile) as exc:
                    raise VrtError(self.name, line_base, f"cannot read input: {exc}") from exc
                self.bytes_read += len(data)
                if line_base == 1 and not carry and data.startswith(b"\xef\xbb\xbf") and self.codec == "utf-8":
                    data = data[3:]  # a byte-order mark, dropped as cwb-encode does
                if not data:
                    if carry:
                        yield self._batch(carry + b"\n", cpos, line_base)
                    return
                buffer = carry + data
                cut = buffer.rfind(b"\n") + 1
                carry = buffer[cut:]
                if len(carry) > MAX_LINE_BYTES:
                    line = line_base + buffer.count(b"\n", 0, cut)
                    raise VrtError(self.name, line, f"input line too long (max: {MAX_LINE_BYTES} bytes)")
                if cut == 0:
                    continue
                chunk = buffer[:cut]
                batch = self._batch(chunk, cpos, line_base)
                line_base += chunk.count(b"\n")
                cpos += batch.size
                yield batch

    def warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.options.warn(message)

    # -- one chunk ---------------------------------------------------------------------------

    def _batch(self, chunk: bytes, cpos: int, line_base: int) -> Batch:
        chunk = self._decode_check(chunk, line_base)
        starts, ends = self._line_bounds(chunk, line_base)
        is_blank, is_tag = self._blank_and_tag_lines(chunk, starts, ends)
        literal: dict[int, bytes] = {}  # line index -> line to encode as a token with cwb-encode's padding
        if is_blank.any() and not self.options.skip_blank:
            literal.update((i, b"") for i in np.flatnonzero(is_blank).tolist())
        skip = is_blank.copy()
        tag_lines = np.flatnonzero(is_tag)
        codes, closing, annotations = self.tag_parser.classify_lines(
            chunk, starts[tag_lines], ends[tag_lines], tag_lines, line_base
        )
        declared = codes >= 0
        skip[tag_lines[declared | (codes == SKIP)]] = True
        is_tag[tag_lines[(codes == TOKEN) | (codes == LITERAL)]] = False
        for k in np.flatnonzero(codes == LITERAL).tolist():
            i = int(tag_lines[k])
            literal[i] = chunk[starts[i] : ends[i]]
        tag_index = tag_lines[declared]
        kept = np.flatnonzero(declared)
        is_token = ~(is_tag | skip)
        is_token[list(literal)] = True
        tokens_before: npt.NDArray[np.int64] = np.cumsum(is_token, dtype=np.int64) - is_token
        tags = Tags(
            cpos + tokens_before[tag_index].astype(np.int64),
            tag_index.astype(np.int64) + line_base,
            codes[declared].astype(np.int16),
            closing[declared],
            annotations if len(kept) == len(annotations) else [annotations[k] for k in kept.tolist()],
        )
        columns = self._columns(chunk, starts, ends, is_token, literal, tokens_before, line_base)
        return Batch(cpos, columns, tags, int(is_token.sum()))

    def _line_bounds(self, chunk: bytes, line_base: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """Start and end (the newline) of every line; a line over cwb-encode's limit is an error."""
        ends = np.flatnonzero(np.frombuffer(chunk, dtype=np.uint8) == 10)
        starts = np.empty_like(ends)
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
        lengths = ends - starts
        if lengths.max(initial=0) > MAX_LINE_BYTES:
            line = line_base + int(np.argmax(lengths > MAX_LINE_BYTES))
            raise VrtError(self.name, line, f"input line too long (max: {MAX_LINE_BYTES} bytes)")
        return starts, ends

    def _blank_and_tag_lines(
        self, chunk: bytes, starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64]
    ) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.bool_]]:
        """Which lines are empty and which start with ``<`` (after leading spaces, with -B)."""
        data = np.frombuffer(chunk, dtype=np.uint8)
        lengths = ends - starts
        first = data[np.minimum(starts, len(data) - 1)]
        first[lengths == 0] = 0
        is_blank = lengths == 0
        is_tag = first == ord("<")
        if self.options.strip_blanks:
            # -B skips leading spaces of a line: it may then be empty or a tag
            for i in np.flatnonzero(first == ord(" ")).tolist():
                stripped = chunk[starts[i] : ends[i]].lstrip(b" ")
                is_blank[i] = not stripped
                is_tag[i] = stripped.startswith(b"<")
        return is_blank, is_tag

    def _columns(
        self,
        chunk: bytes,
        starts: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
        is_token: npt.NDArray[np.bool_],
        literal: dict[int, bytes],
        tokens_before: npt.NDArray[np.int64],
        line_base: int,
    ) -> list[list[bytes]]:
        """The token lines split into one list of values per positional attribute."""
        regular = is_token.copy()
        regular[list(literal)] = False
        token_lines = np.flatnonzero(regular)
        columns: list[list[bytes]] = [[] for _ in range(self.options.columns)]
        if len(token_lines):
            body = chunk if len(token_lines) == len(ends) else self._join_lines(chunk, starts, ends, regular)
            columns = self._split(body, token_lines, line_base)
        for i in sorted(literal):
            at = int(tokens_before[i])
            values = self._literal_fields(literal[i])
            for k, column in enumerate(columns):
                column.insert(at, values[k])
        return columns

    def _decode_check(self, chunk: bytes, line_base: int) -> bytes:
        try:
            text = chunk.decode(self.codec)
        except UnicodeDecodeError as exc:
            line = line_base + chunk.count(b"\n", 0, exc.start)
            bad = chunk[exc.start : exc.start + 4].hex(" ")
            raise VrtError(
                self.name, line, f"invalid {self.options.charset} input (bytes {bad}); cwb-encode refuses it too"
            ) from exc
        if self.codec == "latin-1" and re.search(rb"[\x80-\x9f]", chunk):
            at = re.search(rb"[\x80-\x9f]", chunk)
            assert at is not None
            raise VrtError(self.name, line_base + chunk.count(b"\n", 0, at.start()), "invalid latin1 byte 0x80-0x9f")
        if b"\r" in chunk:
            chunk = re.sub(rb"\r+\n", b"\n", chunk)
        if self.codec == "utf-8" and not text.isascii() and not unicodedata.is_normalized("NFC", text):
            # cwb-encode normalises every line to NFC in utf8 mode
            chunk = unicodedata.normalize("NFC", text).encode("utf-8").replace(b"\r\n", b"\n")
        return chunk

    @staticmethod
    def _join_lines(
        chunk: bytes, starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64], keep: npt.NDArray[np.bool_]
    ) -> bytes:
        """Concatenate the kept lines (each with its newline), run by run."""
        edges = np.diff(np.concatenate(([0], keep.astype(np.int8), [0])))
        run_starts = np.flatnonzero(edges == 1)
        run_ends = np.flatnonzero(edges == -1) - 1
        return b"".join(chunk[starts[a] : ends[b] + 1] for a, b in zip(run_starts, run_ends, strict=True))

    def _fix_field(self, value: bytes) -> bytes:
        """cwb-encode's per-field steps: strip spaces, empty → __UNDEF__, entities, length limit."""
        if self.options.strip_blanks:
            value = value.strip(b" ")
        if not value:
            return UNDEF
        if self.options.xml and b"&" in value:
            value = decode_entities(value)
        if len(value) > MAX_VALUE_BYTES:
            self.warn_once("long-value", f"{self.name}: values longer than {MAX_VALUE_BYTES} bytes are truncated")
            value = truncate_value(value, self.codec == "utf-8")
        return value

    def _literal_fields(self, line: bytes) -> list[bytes]:
        fields = line.split(b"\t")[: self.options.columns]
        fields += [b""] * (self.options.columns - len(fields))
        return [self._fix_field(f) for f in fields]

    def _split(self, body: bytes, token_lines: npt.NDArray[np.int64], line_base: int) -> list[list[bytes]]:
        n = self.options.columns
        if n == 0:
            return []
        fields = body.replace(b"\n", b"\t").split(b"\t")
        fields.pop()  # the empty string after the last newline
        if len(fields) != len(token_lines) * n:
            self._column_error(body, token_lines, line_base)
        data = np.frombuffer(body, dtype=np.uint8)
        separators = np.flatnonzero((data == 9) | (data == 10))
        field_lengths = np.diff(separators, prepend=-1) - 1
        # Fields that need more than a lookup: empty, too long, with an entity or an edge space.
        suspects = (field_lengths == 0) | (field_lengths > MAX_VALUE_BYTES)
        if self.options.xml and b"&" in body:
            suspects[np.searchsorted(separators, np.flatnonzero(data == ord("&")))] = True
        if self.options.strip_blanks and b" " in body:
            spaces = np.flatnonzero(data == 32)
            previous = np.where(spaces > 0, data[np.maximum(spaces - 1, 0)], 10)
            following = data[spaces + 1]  # the body ends with a newline, so this exists
            at_edge = (previous == 9) | (previous == 10) | (following == 9) | (following == 10)
            suspects[np.searchsorted(separators, spaces[at_edge])] = True
        for f in np.flatnonzero(suspects):
            fields[f] = self._fix_field(fields[f])
        return [fields[k::n] for k in range(n)]

    def _column_error(self, body: bytes, token_lines: npt.NDArray[np.int64], line_base: int) -> None:
        data = np.frombuffer(body, dtype=np.uint8)
        newlines = np.flatnonzero(data == 10)
        tabs = np.flatnonzero(data == 9)
        per_line = np.bincount(np.searchsorted(newlines, tabs), minlength=len(newlines)) + 1
        bad = int(np.flatnonzero(per_line != self.options.columns)[0])
        found = int(per_line[bad])
        raise VrtError(
            self.name,
            line_base + int(token_lines[bad]),
            f"token line has {found} column{'s' if found != 1 else ''}, expected {self.options.columns} "
            "(one per positional attribute, separated by tabs)",
        )
