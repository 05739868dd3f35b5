"""The work folder of a build (``OUT/work/``): shards, phase markers, resume, atomic writes.

- ``OUT/build.json``: the inputs and the options that decide the output. A second ``cowbird build``
  into the same OUT with the same ones resumes; with another it stops and names the option.
- ``OUT/work/shards.tsv``: ``shard``, ``kind`` (``archive`` or ``html``), ``path``, ``root``: one line
  per input file, sorted by path (a folder's HTML files, found recursively, are grouped into shards of
  ``HTML_PER_SHARD`` files each: one line per file, the shard number repeated). Shard names are the
  numbers as five digits, ``00000``.
- every file is written to ``NAME.tmp`` and renamed (``os.replace``): a killed build never leaves a
  half file under a final name; a phase's marker (``SHARD.done``) is written last, so a shard without
  one is redone from its start and a shard with one never again.
"""

from __future__ import annotations

import gzip
import io
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from cowbird.build.inputs import html_files, is_archive

HTML_PER_SHARD = 1000
"""HTML files per shard when a folder is given: a shard is a task of a worker (or a SLURM array task)."""

PHASES = ("clean", "dedup", "annotate", "encode")


class BuildError(Exception):
    """A build that cannot start or go on: the message says what was wrong and where."""


@dataclass(frozen=True)
class ShardFile:
    shard: int
    kind: str  # "archive" or "html"
    path: Path
    root: Path


def shard_name(number: int) -> str:
    return f"{number:05d}"


def work_dir(out: Path) -> Path:
    return out / "work"


def write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (a ``.tmp`` beside it, then renamed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with temporary.open("wb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, path)


def write_text(path: Path, text: str) -> None:
    write_bytes(path, text.encode("utf-8"))


@contextmanager
def atomic_gzip(path: Path) -> Iterator[IO[str]]:
    """A text stream into ``path`` (gzip, no name and mtime 0 in the header: the same text gives the same
    bytes), renamed into place only when the block ends without an error."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    raw = temporary.open("wb")
    try:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=6) as packed, \
                io.TextIOWrapper(packed, encoding="utf-8", newline="\n") as text:
            yield text
        raw.flush()
        os.fsync(raw.fileno())
        raw.close()
        os.replace(temporary, path)
    except BaseException:
        raw.close()
        temporary.unlink(missing_ok=True)
        raise


def marker(out: Path, phase: str, shard: int | None = None) -> Path:
    """The marker that says a phase (of one shard) is finished."""
    if shard is None:
        return work_dir(out) / phase / "done"
    return work_dir(out) / phase / f"{shard_name(shard)}.done"


def is_done(out: Path, phase: str, shard: int | None = None) -> bool:
    return marker(out, phase, shard).exists()


def mark_done(out: Path, phase: str, shard: int | None = None, summary: dict[str, Any] | None = None) -> None:
    """Write the marker last; it holds the phase's counts for the report (JSON)."""
    write_text(marker(out, phase, shard), json.dumps(summary or {}, sort_keys=True) + "\n")


def read_marker(out: Path, phase: str, shard: int | None = None) -> dict[str, Any]:
    path = marker(out, phase, shard)
    try:
        value = json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError) as error:
        raise BuildError(f"{path}: cannot read this marker ({error}); delete it to redo that work") from error
    return value if isinstance(value, dict) else {}


def plan_shards(inputs: Sequence[Path]) -> list[ShardFile]:
    """Every input as shards: each WARC/ARC file one shard, a folder's HTML files in groups of
    HTML_PER_SHARD, a single HTML file one shard; sorted by path, numbered from 0."""
    archives: list[tuple[str, Path, Path]] = []
    htmls: list[tuple[str, Path, Path]] = []
    for given in inputs:
        path = given.resolve()
        if path.is_dir():
            found = html_files(path)
            pages = set(found)
            folder_archives = sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith(".")
                                     and p not in pages and is_archive(p))
            archives.extend((p.as_posix(), p, path) for p in folder_archives)
            htmls.extend((p.as_posix(), p, path) for p in found)
        elif path.is_file():
            (archives if is_archive(path) else htmls).append((path.as_posix(), path, path))
        else:
            raise BuildError(f"{given}: no such file or folder")
    shards: list[ShardFile] = []
    entries = sorted({key: (key, p, r) for key, p, r in archives}.values())
    number = 0
    for _, path, root in entries:
        shards.append(ShardFile(number, "archive", path, root))
        number += 1
    html_entries = sorted({key: (key, p, r) for key, p, r in htmls}.values())
    for start in range(0, len(html_entries), HTML_PER_SHARD):
        for _, path, root in html_entries[start : start + HTML_PER_SHARD]:
            shards.append(ShardFile(number, "html", path, root))
        number += 1
    if not shards:
        raise BuildError("no WARC, ARC or HTML files in " + ", ".join(str(p) for p in inputs))
    return shards


def write_shards(out: Path, shards: Sequence[ShardFile]) -> None:
    lines = ["shard\tkind\tpath\troot"] + [
        f"{shard_name(s.shard)}\t{s.kind}\t{s.path.as_posix()}\t{s.root.as_posix()}" for s in shards]
    write_text(work_dir(out) / "shards.tsv", "\n".join(lines) + "\n")


def read_shards(out: Path) -> list[ShardFile]:
    path = work_dir(out) / "shards.tsv"
    try:
        rows = path.read_text(encoding="utf-8").splitlines()[1:]
    except OSError as error:
        raise BuildError(f"{path}: no shard list ({error.strerror}); is {out} the output folder of a build?") \
            from error
    shards = []
    for number, row in enumerate(rows, start=2):
        fields = row.split("\t")
        if len(fields) != 4 or not fields[0].isdigit():
            raise BuildError(f"{path}, line {number}: expected shard, kind, path and root, got {row!r}")
        shards.append(ShardFile(int(fields[0]), fields[1], Path(fields[2]), Path(fields[3])))
    return shards


def shard_count(shards: Sequence[ShardFile]) -> int:
    return max(s.shard for s in shards) + 1 if shards else 0


def files_of(shards: Sequence[ShardFile], shard: int) -> list[ShardFile]:
    return [s for s in shards if s.shard == shard]


def load_settings(out: Path) -> dict[str, Any] | None:
    path = out / "build.json"
    if not path.exists():
        return None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BuildError(f"{path}: cannot read the build's settings ({error})") from error
    if not isinstance(value, dict):
        raise BuildError(f"{path}: not the settings of a cowbird build")
    return value


def save_settings(out: Path, settings: dict[str, Any]) -> None:
    write_text(out / "build.json", json.dumps(settings, indent=2, sort_keys=True) + "\n")


def differing(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """The keys whose values differ between two settings (either side missing counts as different)."""
    return sorted(key for key in set(old) | set(new) if old.get(key) != new.get(key))
