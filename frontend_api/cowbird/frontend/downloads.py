"""The file formats of ``/api/v1/export``: TSV, CSV, XLSX and NDJSON, written row by row.

Data fidelity comes first: every value reaches the file exactly as the corpus has it.

- **TSV and CSV** are RFC 4180 style (Python's ``csv`` writer): a field holding the delimiter, a
  quote or a line break is quoted, quotes are doubled, lines end with CRLF, UTF-8 without a BOM.
  They load with default settings in Python's ``csv``, pandas ``read_csv`` (``sep="\\t"`` for TSV),
  R's ``read.delim``/``read.csv`` and LibreOffice. No cell is changed to defuse spreadsheet
  formulas (``-``, ``=``, ``@`` and ``+1`` are tokens, and frequency counts from the file must be
  right): open downloads in a spreadsheet as **XLSX**, where every text is a string cell and
  nothing is ever evaluated.
- **XLSX** (XlsxWriter in constant-memory mode: rows go to disk as they come) has the rows on a
  sheet named for what they are (``hits``, ``frequency``, ``keywords`` …) — text as text cells,
  never evaluated (a token ``=1+1`` or ``007`` stays what it is), counts, rates and positions as
  numbers — and, when asked, the provenance on a sheet ``metadata`` (a header row, then a field
  and its value per row). A text longer than an Excel cell holds (32,767 characters: a web
  corpus's freak token, a very long match) is the one thing XLSX cannot keep: its cell ends in
  ``[cut: N characters …]`` saying so, and the metadata's ``cells_cut`` counts them; the other
  formats have it whole.
- **NDJSON** has one JSON object per row (positions as numbers, metadata outside any region as
  null); the provenance, when asked, is the first line, ``{"metadata": {...}}``.

With ``provenance`` the TSV/CSV file starts with ``#`` lines, the first of which says how many
there are (``skiprows=N`` in pandas, ``skip=N`` in R). Without it the file is pure data.
"""

from __future__ import annotations

import contextlib
import csv
import datetime
import hashlib
import io
import json
import math
import os
import shutil
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

import xlsxwriter
from starlette.responses import Response

from cowbird.core.version import __version__

Format = Literal["tsv", "csv", "xlsx", "ndjson"]
FORMATS: tuple[Format, ...] = get_args(Format)
XLSX_MAX_ROWS = 1_048_576
"""Rows of an Excel sheet, the header row included."""
CHUNK = 1 << 16


def _text(value: object) -> str:
    return "" if value is None else str(value)


XLSX_CELL = 32_767
"""The most characters an Excel cell holds (XlsxWriter would cut a longer string without a word)."""


def _cut(text: str) -> str:
    said = f" [cut: {len(text):,} characters, an Excel cell holds {XLSX_CELL:,}; a TSV or CSV file has it whole]"
    return text[:XLSX_CELL - len(said)] + said


class Writer(ABC):
    """Bytes of one file, produced a piece at a time: ``start``, ``rows`` (any number of times), ``end``."""

    def __init__(self, columns: Sequence[str], provenance: dict[str, Any] | None) -> None:
        self.columns = list(columns)
        self.provenance = provenance
        self.aborted = False

    @abstractmethod
    def start(self) -> bytes:
        """The file's beginning: the provenance block (if any) and the header."""

    @abstractmethod
    def rows(self, rows: Sequence[Sequence[object]]) -> bytes:
        """The bytes of these rows (or nothing yet, for a format written at the end)."""

    def end(self) -> Iterator[bytes]:
        return iter(())

    def abort(self) -> None:
        """The export broke off: drop whatever the writer keeps; nothing more may be written."""
        self.aborted = True

    @abstractmethod
    def incomplete(self, reason: str) -> Iterator[bytes]:
        """The file's end when it broke off after its first byte: a last line saying that it is
        incomplete and why, in the format's own way (the connection is dropped after it)."""


class DelimitedWriter(Writer):
    def __init__(self, columns: Sequence[str], provenance: dict[str, Any] | None, delimiter: str) -> None:
        super().__init__(columns, provenance)
        self.buffer = io.StringIO()
        self.writer = csv.writer(self.buffer, delimiter=delimiter, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)

    def _metadata(self, key: str, value: object) -> None:
        '''A metadata line: ``# key: <JSON>`` in TSV (a tab inside a JSON string is ``\\t``); in CSV a
        record of two cells, ``# key`` and the JSON value, quoted as the ``csv`` module quotes any
        cell (``# selection,"""hits 1 to 100 of 4,467, in corpus order"""``): a spreadsheet or
        ``csv.reader`` reads the value whole, a cell never starts with a user's text (a filter
        ``x|,=1+1`` is inside the quoted JSON string), and the line starts with ``#``
        (pandas ``comment="#"``).'''
        text = json.dumps(value, ensure_ascii=False)
        if self.writer.dialect.delimiter == ",":
            self.writer.writerow([f"# {key}", text])
        else:
            self.buffer.write(f"# {key}: {text}\r\n")

    def _take(self) -> bytes:
        text = self.buffer.getvalue()
        self.buffer.seek(0)
        self.buffer.truncate()
        return text.encode("utf-8")

    def start(self) -> bytes:
        if self.provenance is not None:
            count = len(self.provenance) + 1
            self.buffer.write(
                f"# cowbird export: {count} lines of metadata starting with '#' come before the header "
                f"(pandas: skiprows={count}; R: skip={count})\r\n"
            )
            for key, value in self.provenance.items():
                self._metadata(key, value)
        self.writer.writerow(self.columns)
        return self._take()

    def rows(self, rows: Sequence[Sequence[object]]) -> bytes:
        self.writer.writerows([[_text(value) for value in row] for row in rows])
        return self._take()

    def incomplete(self, reason: str) -> Iterator[bytes]:
        """A last ``#`` line written as the metadata block's are (``# incomplete: "…"`` in TSV)."""
        self._metadata("incomplete", reason)
        yield self._take()


class NdjsonWriter(Writer):
    def start(self) -> bytes:
        if self.provenance is None:
            return b""
        return (json.dumps({"metadata": self.provenance}, ensure_ascii=False) + "\n").encode("utf-8")

    def rows(self, rows: Sequence[Sequence[object]]) -> bytes:
        lines = [json.dumps(dict(zip(self.columns, row, strict=True)), ensure_ascii=False) for row in rows]
        return "".join(line + "\n" for line in lines).encode("utf-8")

    def incomplete(self, reason: str) -> Iterator[bytes]:
        """A last object that is not a row: ``{"incomplete": true, "error": "…"}``."""
        yield (json.dumps({"incomplete": True, "error": reason}, ensure_ascii=False) + "\n").encode("utf-8")


class XlsxWriter(Writer):
    """Rows go to a temporary file as they come (constant memory); the finished file is streamed.
    The file and every temporary file of the writer live in a folder of the export's own, removed
    whole when the export ends, however it ends (a full disk leaves the writer's files half made)."""

    def __init__(self, columns: Sequence[str], provenance: dict[str, Any] | None, sheet: str = "hits") -> None:
        super().__init__(columns, provenance)
        self.folder = tempfile.mkdtemp(prefix="cowbird-export-")
        self.path = os.path.join(self.folder, "hits.xlsx")
        self.book = xlsxwriter.Workbook(
            self.path,
            {"constant_memory": True, "strings_to_numbers": False, "strings_to_formulas": False,
             "strings_to_urls": False, "tmpdir": self.folder},
        )  # fmt: skip
        self.sheet = self.book.add_worksheet(sheet)
        self.row = 0
        self.cells_cut = 0
        self.closed = False

    def _write(self, values: Sequence[object]) -> None:
        for column, value in enumerate(values):
            if isinstance(value, bool):
                self.sheet.write_boolean(self.row, column, value)
            elif isinstance(value, int | float) and math.isfinite(value) and abs(value) < 2**53:
                self.sheet.write_number(self.row, column, value)  # a count, a rate, a position: a number
            else:
                text = _text(value)
                if len(text) > XLSX_CELL:
                    text = _cut(text)
                    self.cells_cut += 1
                self.sheet.write_string(self.row, column, text)  # text is never evaluated
        self.row += 1

    def start(self) -> bytes:
        self._write(self.columns)
        return b""

    def rows(self, rows: Sequence[Sequence[object]]) -> bytes:
        for row in rows:
            self._write(row)
        return b""

    def incomplete(self, reason: str) -> Iterator[bytes]:
        """The file is written at its end: its last row says it is incomplete (``incomplete: …`` in its
        first cell), and a metadata sheet, when asked, too."""
        self._write([f"incomplete: {reason}"])
        if self.provenance is not None:
            self.provenance = {**self.provenance, "complete": False, "incomplete": reason}
        return self.end()

    def end(self) -> Iterator[bytes]:
        try:
            if self.provenance is not None:
                if self.cells_cut:
                    self.provenance = {**self.provenance, "cells_cut": self.cells_cut}
                sheet = self.book.add_worksheet("metadata")
                sheet.write_string(0, 0, "field")
                sheet.write_string(0, 1, "value")
                for number, (key, value) in enumerate(self.provenance.items(), start=1):
                    sheet.write_string(number, 0, key)
                    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
                    sheet.write_string(number, 1, _cut(text) if len(text) > XLSX_CELL else text)
            self.book.close()
            self.closed = True
            with open(self.path, "rb") as file:
                while chunk := file.read(CHUNK):
                    yield chunk
        finally:
            self.abort()

    def abort(self) -> None:
        super().abort()
        if not self.closed:
            self.closed = True
            with contextlib.suppress(Exception):
                self.book.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@dataclass(frozen=True)
class FileFormat:
    """A download format: its media type and how its writer is made."""

    media_type: str
    make: Callable[[Sequence[str], dict[str, Any] | None, str], Writer]


REGISTRY: dict[Format, FileFormat] = {
    "tsv": FileFormat("text/tab-separated-values; charset=utf-8",
                      lambda columns, provenance, _: DelimitedWriter(columns, provenance, "\t")),
    "csv": FileFormat("text/csv; charset=utf-8",
                      lambda columns, provenance, _: DelimitedWriter(columns, provenance, ",")),
    "xlsx": FileFormat("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", XlsxWriter),
    "ndjson": FileFormat("application/x-ndjson", lambda columns, provenance, _: NdjsonWriter(columns, provenance)),
}
"""Every format of ``/api/v1/export`` and of the analyses' files (a test checks each ``Format`` has one)."""

MEDIA_TYPES: dict[Format, str] = {name: entry.media_type for name, entry in REGISTRY.items()}


def writer(format: Format, columns: Sequence[str], provenance: dict[str, Any] | None, sheet: str = "hits") -> Writer:
    """The file's writer; ``sheet``: the name of an XLSX file's sheet of rows (what they are)."""
    return REGISTRY[format].make(columns, provenance, sheet)


def stamp() -> dict[str, str]:
    """What every provenance block says of its making: cowbird's version and when (UTC)."""
    return {"cowbird": __version__,
            "exported_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")}


TABLE_FORMATS: tuple[Format, ...] = ("tsv", "csv", "xlsx")
"""The formats of a table (an analysis, a word list, a subcorpus's values): every one but NDJSON."""

TABLE_FILES: dict[int | str, dict[str, Any]] = {
    200: {"content": {"application/json": {}, **{MEDIA_TYPES[f].split(";")[0]: {} for f in TABLE_FORMATS}},
          "description": "The answer as JSON, or with format=tsv|csv|xlsx as a file."}
}
"""The OpenAPI description of a route that answers JSON or, with ``format=``, a table as a file."""


@dataclass(frozen=True)
class Download:
    """One file the front end writes — hits (``/api/v1/export``) or a table (an analysis, a word or
    keyword list, a subcorpus's values): its format, columns and provenance block, its name (what it
    holds, and eight hex digits of what ``named`` it, so that the same request gives the same name)
    and the headers that say how complete it is. ``about`` is None when no provenance was asked."""

    format: Format
    columns: Sequence[str]
    about: dict[str, Any] | None
    stem: str
    named: str
    failed: Sequence[str] = ()
    sheet: str = "rows"
    suffix: str = ""

    @property
    def media_type(self) -> str:
        return MEDIA_TYPES[self.format]

    @property
    def filename(self) -> str:
        fingerprint = hashlib.sha256(self.named.encode("utf-8")).hexdigest()[:8]
        stem = self.stem.replace(",", "+")  # several corpora (web,sample): web+sample_….tsv
        return f"{stem}_{fingerprint}{self.suffix}.{self.format}"

    def headers(self, rows: int, **more: str) -> dict[str, str]:
        return {"Content-Disposition": f'attachment; filename="{self.filename}"', "X-Cowbird-Rows": str(rows),
                **more, "X-Cowbird-Complete": "false" if self.failed else "true",
                "X-Cowbird-Failed": ",".join(self.failed)}

    def writer(self) -> Writer:
        return writer(self.format, self.columns, self.about, self.sheet)

    def whole(self, rows: Sequence[Sequence[object]]) -> Response:
        """The file of a table, written at once."""
        out = self.writer()
        body = out.start() + out.rows(rows) + b"".join(out.end())
        return Response(body, media_type=self.media_type, headers=self.headers(len(rows)))
