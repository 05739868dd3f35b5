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

from backend_node.store.cwbformat import CHARSETS
from backend_node.store.errors import VrtError

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
_NAME_RUN = re.compile(rb"[A-Za-z0-9_\-\x80-\xff]+")
"""cwb-encode's XML name characters: ASCII letters, digits, ``_``, ``-`` and any byte >= 0x80."""

_TAG_LINE = re.compile(
    rb"^<(/?)([A-Za-z0-9_\-\x80-\xff]+)(?:[ \t]+([^\n]*?))?/?>[ \t]*$", re.MULTILINE
)
"""A well-formed tag line: optional slash, name, annotation without a final ``/`` of an empty element."""

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


SKIP, TOKEN, LITERAL = -1, -2, -3
"""Tag classifications that are not a declared element: ignore the line, or encode it as a token."""


@dataclass
class Tags:
    """The structural tags of a batch, column by column (millions of them: no object per tag).

    ``element[i]`` indexes the reader's declared element names; ``cpos[i]`` is the number of tokens
    before the tag; ``annotation[i]`` is the text between an opening tag's name and its ``>``.
    """

    cpos: npt.NDArray[np.int64]
    line: npt.NDArray[np.int64]
    element: npt.NDArray[np.int16]
    closing: npt.NDArray[np.bool_]
    annotation: list[bytes]

    def __len__(self) -> int:
        return len(self.annotation)

    def slice(self, first: int, last: int) -> Tags:
        return Tags(
            self.cpos[first:last],
            self.line[first:last],
            self.element[first:last],
            self.closing[first:last],
            self.annotation[first:last],
        )

    def take(self, indices: npt.NDArray[np.int64]) -> Tags:
        return Tags(
            self.cpos[indices],
            self.line[indices],
            self.element[indices],
            self.closing[indices],
            [self.annotation[i] for i in indices.tolist()],
        )

    @staticmethod
    def join(first: Tags, second: Tags) -> Tags:
        return Tags(
            np.concatenate((first.cpos, second.cpos)),
            np.concatenate((first.line, second.line)),
            np.concatenate((first.element, second.element)),
            np.concatenate((first.closing, second.closing)),
            first.annotation + second.annotation,
        )


@dataclass
class Batch:
    """Consecutive input: ``columns[k][i]`` is attribute k of token ``start + i``; tags in order."""

    start: int
    columns: list[list[bytes]]
    tags: Tags
    size: int = 0

    def slice(self, token_from: int, token_to: int, tag_from: int, tag_to: int) -> Batch:
        """Tokens ``[token_from, token_to)`` (batch-relative) and tags ``[tag_from, tag_to)``."""
        return Batch(
            self.start + token_from,
            [col[token_from:token_to] for col in self.columns],
            self.tags.slice(tag_from, tag_to),
            token_to - token_from,
        )

    @staticmethod
    def join(first: Batch, second: Batch) -> Batch:
        """Two adjacent batches as one."""
        return Batch(
            first.start,
            [a + b for a, b in zip(first.columns, second.columns, strict=True)],
            Tags.join(first.tags, second.tags),
            first.size + second.size,
        )


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
        self._tag_cache: dict[bytes, tuple[int, bool, bytes]] = {}
        self._element_codes = {name.encode("ascii"): code for code, name in enumerate(options.s_attributes)}
        self._warned: set[str] = set()

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
        data = np.frombuffer(chunk, dtype=np.uint8)
        ends = np.flatnonzero(data == 10)
        starts = np.empty_like(ends)
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
        lengths = ends - starts
        if lengths.max(initial=0) > MAX_LINE_BYTES:
            line = line_base + int(np.argmax(lengths > MAX_LINE_BYTES))
            raise VrtError(self.name, line, f"input line too long (max: {MAX_LINE_BYTES} bytes)")
        first = data[np.minimum(starts, len(data) - 1)]
        first[lengths == 0] = 0
        is_blank = lengths == 0
        is_tag = first == ord("<")
        literal: dict[int, bytes] = {}  # line index -> line to encode as a token with cwb-encode's padding
        if self.options.strip_blanks:
            # -B skips leading spaces of a line: it may then be empty or a tag
            for i in np.flatnonzero(first == ord(" ")).tolist():
                stripped = chunk[starts[i] : ends[i]].lstrip(b" ")
                is_blank[i] = not stripped
                is_tag[i] = stripped.startswith(b"<")
        if is_blank.any() and not self.options.skip_blank:
            for i in np.flatnonzero(is_blank).tolist():
                literal[i] = b""
        skip = is_blank.copy()
        tag_lines = np.flatnonzero(is_tag)
        codes, closing, annotations = self._tags(chunk, starts[tag_lines], ends[tag_lines], tag_lines, line_base)
        declared = codes >= 0
        skip[tag_lines[declared | (codes == SKIP)]] = True
        inserted = tag_lines[(codes == TOKEN) | (codes == LITERAL)]
        is_tag[inserted] = False
        for k in np.flatnonzero(codes == LITERAL).tolist():
            i = int(tag_lines[k])
            literal[i] = chunk[starts[i] : ends[i]]
        tag_index = tag_lines[declared]
        kept = np.flatnonzero(declared)
        tag_element = codes[declared]
        tag_closing = closing[declared]
        tag_annotation = annotations if len(kept) == len(annotations) else [annotations[k] for k in kept.tolist()]
        is_token = ~(is_tag | skip)
        for i in literal:
            is_token[i] = True
        tokens_before = np.cumsum(is_token) - is_token
        tags = Tags(
            cpos + tokens_before[tag_index].astype(np.int64),
            tag_index.astype(np.int64) + line_base,
            tag_element.astype(np.int16),
            tag_closing,
            tag_annotation,
        )
        regular = is_token.copy()
        for i in literal:
            regular[i] = False
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
        return Batch(cpos, columns, tags, int(is_token.sum()))

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

    # -- tags --------------------------------------------------------------------------------

    def _tags(
        self,
        chunk: bytes,
        starts: npt.NDArray[np.int64],
        ends: npt.NDArray[np.int64],
        lines: npt.NDArray[np.int64],
        line_base: int,
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_], list[bytes]]:
        """Classify tag lines: element index (or SKIP/TOKEN/LITERAL), closing flag, annotation.

        One regular expression over all tag lines of the chunk handles well-formed tags of declared
        elements; the rest (malformed, undeclared, odd) go through :meth:`_classify_tag` one by one.
        """
        n = len(lines)
        codes = np.full(n, SKIP, dtype=np.int64)
        closing = np.zeros(n, dtype=np.bool_)
        annotations: list[bytes] = [b""] * n
        if n == 0:
            return codes, closing, annotations
        texts = [chunk[a:b] for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]
        found = _TAG_LINE.findall(b"\n".join(texts))
        element_codes = self._element_codes
        if len(found) == n:
            slow = []
            for k, (slash, name, annotation) in enumerate(found):
                code = element_codes.get(name)
                if code is None or (slash and annotation):
                    slow.append(k)
                    continue
                codes[k] = code
                if slash:
                    closing[k] = True
                else:
                    annotations[k] = annotation
        else:
            slow = list(range(n))
        strip = self.options.strip_blanks
        for k in slow:
            raw = texts[k]
            line = line_base + int(lines[k])
            code, is_closing, annotation = self._classify_tag(raw.lstrip(b" ") if strip else raw, line)
            codes[k], closing[k], annotations[k] = code, is_closing, annotation
        return codes, closing, annotations

    def _classify_tag(self, raw: bytes, line: int) -> tuple[int, bool, bytes]:
        """(element index, closing, annotation) for a declared element, else (SKIP|TOKEN|LITERAL, ...)."""
        cached = self._tag_cache.get(raw)
        if cached is not None:
            return cached
        result = self._parse_tag(raw, line)
        # Opening tags with annotations are mostly unique (ids): caching them would only cost memory.
        # Literal insertions warn per line, so they are not cached either.
        if len(self._tag_cache) < 100_000 and not result[2] and result[0] != LITERAL:
            self._tag_cache[raw] = result
        return result

    def _parse_tag(self, raw: bytes, line: int) -> tuple[int, bool, bytes]:
        if self.options.xml and (raw.startswith(b"<?") or raw.startswith(b"<!")):
            return (SKIP, False, b"")
        closing = raw.startswith(b"</")
        k = 2 if closing else 1
        match = _NAME_RUN.match(raw, k)
        end = match.end() if match else k
        name = raw[k:end].decode("utf-8", "replace")
        separator = raw[end : end + 1]
        fields = raw.count(b"\t") + 1
        might_be_token = fields > 1 and fields == self.options.columns
        where = f"{self.name}:{line}"
        if end == k or separator not in (b" ", b"\t", b">", b"/"):
            if might_be_token:
                return (TOKEN, False, b"")
            text = raw.decode("utf-8", "replace")
            self.options.warn(f"{where}: malformed tag {text!r}, inserted literally as a token")
            return (LITERAL, False, b"")
        code = self._element_codes.get(name.encode("utf-8"))
        if code is None:
            if might_be_token:
                return (TOKEN, False, b"")
            self.warn_once(
                f"undeclared:{name}",
                f"{where}: s-attribute <{name}> not declared, inserted literally as a token "
                "(warning issued only once)",
            )
            return (LITERAL, False, b"")
        rest = raw[end:]
        if closing:
            if separator != b">":
                self.options.warn(f"{where}: no annotations allowed on closing tag </{name} ...>, ignored")
            return (code, True, b"")
        if separator == b">":
            if rest[1:].strip(b" \t"):
                self.options.warn(f"{where}: extra material after tag <{name}> ignored")
            return (code, False, b"")
        body = rest.lstrip(b" \t")
        trimmed = body.rstrip(b" \t")
        if not trimmed.endswith(b">"):
            self.options.warn(f"{where}: malformed tag: missing > at end of line, annotations of <{name}> ignored")
            return (code, False, b"")
        annotation = body[: len(trimmed) - 1]
        if annotation.endswith(b"/"):  # an empty element <x a="1"/> opens a region like <x a="1">
            annotation = annotation[:-1]
        return (code, False, annotation)
