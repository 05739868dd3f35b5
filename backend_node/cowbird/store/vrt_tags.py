"""Structural tags in VRT lines, classified as cwb-encode does.

A tag line of a declared element opens or closes a region (with its annotation); ``<?...?>`` and
``<!...>`` lines are skipped in XML mode; a tag of an undeclared element, or a malformed one, is
inserted literally as a token (with a warning), and a line that merely starts with ``<`` but has
the right number of tab-separated fields is a token.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

_NAME_RUN = re.compile(rb"[A-Za-z0-9_\-\x80-\xff]+")
"""cwb-encode's XML name characters: ASCII letters, digits, ``_``, ``-`` and any byte >= 0x80."""

_TAG_LINE = re.compile(
    rb"^<(/?)([A-Za-z0-9_\-\x80-\xff]+)(?:[ \t]+([^\n]*?))?/?>[ \t]*$", re.MULTILINE
)
"""A well-formed tag line: optional slash, name, annotation without a final ``/`` of an empty element."""

SKIP, TOKEN, LITERAL = -1, -2, -3
"""Tag classifications that are not a declared element: ignore the line, or encode it as a token."""


class TagParser:
    """Classifies the tag lines of one input file (``source`` names it in warnings).

    ``elements`` are the declared element names (tags refer to them by index); ``columns`` is the
    number of positional attributes, ``xml`` and ``strip_blanks`` are cwb-encode's -x and -B;
    ``warn`` reports every problem, ``warn_once`` those reported once per kind.
    """

    def __init__(
        self,
        source: str,
        elements: tuple[str, ...],
        columns: int,
        xml: bool,
        strip_blanks: bool,
        warn: Callable[[str], None],
        warn_once: Callable[[str, str], None],
    ) -> None:
        self.source = source
        self.columns = columns
        self.xml = xml
        self.strip_blanks = strip_blanks
        self.warn = warn
        self.warn_once = warn_once
        self._element_codes = {name.encode("ascii"): code for code, name in enumerate(elements)}
        self._tag_cache: dict[bytes, tuple[int, bool, bytes]] = {}

    def classify_lines(self, chunk: bytes, starts: npt.NDArray[np.int64], ends: npt.NDArray[np.int64],
                       lines: npt.NDArray[np.int64], line_base: int,
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
        strip = self.strip_blanks
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
        if self.xml and (raw.startswith(b"<?") or raw.startswith(b"<!")):
            return (SKIP, False, b"")
        closing = raw.startswith(b"</")
        k = 2 if closing else 1
        match = _NAME_RUN.match(raw, k)
        end = match.end() if match else k
        name = raw[k:end].decode("utf-8", "replace")
        separator = raw[end : end + 1]
        fields = raw.count(b"\t") + 1
        might_be_token = fields > 1 and fields == self.columns
        where = f"{self.source}:{line}"
        if end == k or separator not in (b" ", b"\t", b">", b"/"):
            if might_be_token:
                return (TOKEN, False, b"")
            text = raw.decode("utf-8", "replace")
            self.warn(f"{where}: malformed tag {text!r}, inserted literally as a token")
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
                self.warn(f"{where}: no annotations allowed on closing tag </{name} ...>, ignored")
            return (code, True, b"")
        if separator == b">":
            if rest[1:].strip(b" \t"):
                self.warn(f"{where}: extra material after tag <{name}> ignored")
            return (code, False, b"")
        body = rest.lstrip(b" \t")
        trimmed = body.rstrip(b" \t")
        if not trimmed.endswith(b">"):
            self.warn(f"{where}: malformed tag: missing > at end of line, annotations of <{name}> ignored")
            return (code, False, b"")
        annotation = body[: len(trimmed) - 1]
        if annotation.endswith(b"/"):  # an empty element <x a="1"/> opens a region like <x a="1">
            annotation = annotation[:-1]
        return (code, False, annotation)
