"""Calf's input as cowbird's export writes it: here the xlsx workbook (a ``hits`` sheet, and the
provenance in a ``metadata`` sheet)."""

from __future__ import annotations

import json
from pathlib import Path

import openpyxl


def write_xlsx(path: Path, rows: list[dict[str, str]], provenance: dict[str, object] | None = None) -> None:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "hits"
    sheet.append(list(rows[0]))
    for row in rows:
        sheet.append(list(row.values()))
    if provenance is not None:
        meta = book.create_sheet("metadata")
        for key, value in provenance.items():
            meta.append([key, value if isinstance(value, str) else json.dumps(value)])
    book.save(path)
