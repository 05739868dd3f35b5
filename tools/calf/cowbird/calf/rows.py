"""Reading concordance exports: cowbird's TSV, CSV, XLSX and NDJSON (with or without the
provenance block), or another tool's table whose columns are named by options."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from cowbird.calf.core import core_of, texts_of

URL_COLUMNS = ("text_url", "url", "source_url")


class InputError(Exception):
    """The input cannot be read at all (not one bad row: those become ``bad_row``)."""


@dataclass(frozen=True)
class Columns:
    """Which columns hold what Calf needs: the page's URL and the line's text."""

    url: str | None = None  # None: the first of URL_COLUMNS, or any column ending in _url
    left: str = "left"
    match: str = "match"
    right: str = "right"
    sentence: str | None = None  # one column holding the whole line instead of left/match/right


@dataclass
class Row:
    line: int  # in the input file (1-based, header included), for messages
    values: dict[str, str]
    problem: str | None = None  # why the row is malformed


@dataclass
class Table:
    header: list[str]
    rows: list[Row]
    provenance: dict[str, object] = field(default_factory=dict)  # the export's metadata block, if it has one


def _provenance(lines: list[str], delimiter: str = "\t") -> tuple[dict[str, object], int]:
    """The ``# key: value`` lines before the header (values JSON, as cowbird writes them; other text
    kept as it is) and how many lines they take. In a CSV file cowbird writes each as two cells,
    ``# key`` and the JSON value quoted as a CSV cell."""
    first = 0
    found: dict[str, object] = {}
    while first < len(lines) and lines[first].startswith("#"):
        cells = next(csv.reader([lines[first]]), []) if delimiter == "," else []
        if len(cells) == 2:
            key, colon, value = cells[0][1:].strip(), ":", cells[1]
        else:
            key, colon, value = lines[first][1:].strip().partition(": ")
        if colon and not lines[first].startswith("# cowbird export:"):
            try:
                found[key] = json.loads(value)
            except json.JSONDecodeError:
                found[key] = value
        first += 1
    return found, first


def read_table(path: Path) -> Table:
    """The rows of an export in any of cowbird's formats (by extension: .tsv .csv .xlsx .ndjson)."""
    suffix = path.suffix.lower()
    try:
        if suffix == ".xlsx":
            return _read_xlsx(path)
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc
    if suffix in (".ndjson", ".jsonl"):
        return _read_ndjson(text)
    lines = text.splitlines(keepends=True)
    delimiter = "," if suffix == ".csv" else "\t"
    provenance, offset = _provenance(lines, delimiter)
    body = lines[offset:]
    reader = csv.reader(body, delimiter=delimiter)
    try:
        header = next(reader)
    except StopIteration as exc:
        raise InputError(f"{path} has no header row") from exc
    rows = []
    for record in reader:
        number = offset + reader.line_num
        if len(record) != len(header):
            rows.append(Row(number, {}, f"{len(record)} fields where the header has {len(header)}"))
        else:
            rows.append(Row(number, dict(zip(header, record, strict=True))))
    return Table(header, rows, provenance)


def _read_ndjson(text: str) -> Table:
    header: list[str] = []
    rows = []
    provenance: dict[str, object] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            rows.append(Row(number, {}, f"not JSON ({exc.msg})"))
            continue
        if not isinstance(value, dict):
            rows.append(Row(number, {}, "not a JSON object"))
            continue
        if "metadata" in value and len(value) == 1:
            if isinstance(value["metadata"], dict):
                provenance = value["metadata"]  # the provenance line
            continue
        for key in value:
            if key not in header:
                header.append(key)
        rows.append(Row(number, {k: "" if v is None else str(v) for k, v in value.items()}))
    return Table(header, rows, provenance)


def _read_xlsx(path: Path) -> Table:
    import openpyxl

    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    sheet = book["hits"] if "hits" in book.sheetnames else book.worksheets[0]
    records = sheet.iter_rows(values_only=True)
    first = next(records, None)
    if first is None:
        raise InputError(f"{path} has no header row")
    header = ["" if v is None else str(v) for v in first]
    rows = []
    for number, record in enumerate(records, start=2):
        values = ["" if v is None else str(v) for v in record]
        rows.append(Row(number, dict(zip(header, values + [""] * (len(header) - len(values)), strict=False))))
    provenance: dict[str, object] = {}
    if "metadata" in book.sheetnames:
        for key, value, *_ in book["metadata"].iter_rows(values_only=True):
            if key is not None:
                try:
                    provenance[str(key)] = json.loads(str(value)) if isinstance(value, str) else value
                except json.JSONDecodeError:
                    provenance[str(key)] = value
    book.close()
    return Table(header, rows, provenance)


def resolve_columns(header: list[str], columns: Columns) -> Columns:
    """The columns to use, checked against the header; ``InputError`` naming what is missing."""
    url = columns.url
    if url is None:
        url = next((c for c in URL_COLUMNS if c in header), None) or next(
            (c for c in header if c.endswith("_url")), None)
    if url is None or url not in header:
        raise InputError(f"no URL column (looked for {columns.url or ', '.join(URL_COLUMNS)} or *_url); "
                         f"the header has: {', '.join(header)}; name it with --url-column")
    needed = [columns.sentence] if columns.sentence else [columns.left, columns.match, columns.right]
    missing = [c for c in needed if c not in header]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}; the header has: {', '.join(header)}")
    return Columns(url, columns.left, columns.match, columns.right, columns.sentence)


def sentence_of(row: Row, columns: Columns) -> str:
    """The whole line: its sentence column, or left context, match and right context."""
    return texts_of_row(row, columns)[0]


def text_fields(row: Row, columns: Columns) -> list[str]:
    """The fields the line's text is read from, which this row must have."""
    return [columns.sentence] if columns.sentence else [columns.left, columns.match, columns.right]


def texts_of_row(row: Row, columns: Columns, context: object = None) -> list[str]:
    """What to look for: the line as the file holds it, then (when its context runs beyond the
    match's sentence) that sentence alone — unless the export says its context is a region
    (``context: "s"``): then the line is one sentence, whatever full stops it has inside."""
    if columns.sentence:
        return [row.values[columns.sentence]]
    texts = texts_of(row.values[columns.left], row.values[columns.match], row.values[columns.right])
    return texts[:1] if isinstance(context, str) else texts


def core_of_row(row: Row, columns: Columns, context: object) -> tuple[tuple[int, int] | None, bool]:
    """The match's tokens in the whole line (None with a sentence column), and whether its context
    may come from elsewhere: the export says its context was so many tokens (``context: 10`` in its
    provenance), or, an export that does not say, the line's context runs beyond the match's
    sentence — not a sentence (``context: "s"`` or another region)."""
    if columns.sentence:
        return None, False
    left, match, right = row.values[columns.left], row.values[columns.match], row.values[columns.right]
    if isinstance(context, bool) or isinstance(context, str):
        return core_of(left, match), False
    return core_of(left, match), isinstance(context, int) or len(texts_of(left, match, right)) > 1
