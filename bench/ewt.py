"""Real web text for the build benchmarks: the English Web Treebank's documents, read (not copied) from
``../shared/reference/ewt.vrt`` (``COWBIRD_REFERENCE``, where set)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

EWT = Path(os.environ.get("COWBIRD_REFERENCE")
           or Path(__file__).resolve().parents[1] / ".." / "shared" / "reference") / "ewt.vrt"


def ewt_documents(least: int, word: Callable[[str], str] = str,
                  keep: Callable[[str], object] | None = None) -> list[list[str]]:
    """The treebank's texts of at least ``least`` words, each as its words: every token's first column
    as ``word`` makes it, where ``keep`` takes it (by default all of them, as they are)."""
    documents: list[list[str]] = []
    current: list[str] = []
    with EWT.open(encoding="utf-8") as stream:
        for line in stream:
            if line.startswith("<text"):
                current = []
            elif line.startswith("</text"):
                if len(current) >= least:
                    documents.append(current)
            elif not line.startswith("<"):
                token = word(line.split("\t", 1)[0])
                if keep is None or keep(token):
                    current.append(token)
    return documents
