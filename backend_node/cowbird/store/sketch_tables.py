"""Where a corpus's word sketch tables are saved (``<home>/sketches/<key>/``) and what each says of
itself: ``cowbird sketches build`` writes them (``cowbird.engines.analyses.sketches``), ``cowbird
info`` lists them, a node reads them mapped."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from cowbird.store.neighbours import NEIGHBOURS_FILE
from cowbird.store.reader import CwbCorpus

TABLES_DIRECTORY = "sketches"
"""Where in a corpus's home directory the relation tables are saved."""
FORMAT = 3
"""The tables' file format; a table of another format (or of another build of the corpus) is not read.
(2: the running sums are saved with the rows, so that a node maps them instead of computing them;
3: a symmetric relation's instance with the same value at both ends counts once, not twice.)"""


def tables_directory(corpus: CwbCorpus) -> Path:
    return Path(corpus.entry.home) / TABLES_DIRECTORY


def neighbours_stamp(corpus: CwbCorpus) -> str | None:
    """A digest of the partition's ``neighbours.json`` (None without one): a table counted with other
    neighbours (or none, before they were written) counted other instances at the partition's ends."""
    path = Path(corpus.entry.home) / NEIGHBOURS_FILE
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16] if path.is_file() else None


def current(corpus: CwbCorpus, described: dict[str, object]) -> bool:
    """Whether a saved table belongs to this build of the corpus (same format, same size, same neighbours)."""
    return (described.get("format") == FORMAT and described.get("size") == corpus.size
            and described.get("neighbours") == neighbours_stamp(corpus))


def saved_tables(corpus: CwbCorpus) -> list[dict[str, object]]:
    """What each saved table says of itself (its relation, grammar, queries, rows, when built) and
    whether it is ``current``, by grammar in the grammar's order."""
    root = tables_directory(corpus)
    found = []
    for meta in sorted(root.glob("*/table.json")) if root.is_dir() else []:
        described = json.loads(meta.read_text(encoding="utf-8"))
        described["current"] = current(corpus, described)
        found.append(described)
    return sorted(found, key=lambda d: (str(d.get("grammar", "")), int(str(d.get("order", 0)))))


def describe_tables(corpus: CwbCorpus) -> list[str]:
    """``cowbird info``'s lines about the saved word sketch tables."""
    tables = saved_tables(corpus)
    if not tables:
        return ["word sketch tables: none (cowbird sketches build)"]
    grammars = sorted({str(t.get("grammar", "?")) for t in tables})
    lines = [f"word sketch tables: {len(tables)} ({', '.join(grammars)}) in {tables_directory(corpus)}/"]
    for t in tables:
        state = "" if t["current"] else "  (stale: from another build of the corpus; not read)"
        lines.append(f"  {t.get('grammar', '?')}/{t.get('relation', '?'):<24} {int(str(t.get('instances', 0))):>12,} "
                     f"instances {int(str(t.get('rows', 0))):>10,} pairs  built {t.get('built', '?')}{state}")
        warnings = t.get("warnings")
        lines += [f"    warning: {w}" for w in warnings] if isinstance(warnings, list) else []
    return lines
