"""What carrying the neighbours costs (issue 64, item 2): writing ``neighbours.json`` after a partitioned
encode, and query time with and without the files.

EWT (``../shared/reference/ewt.vrt``) is encoded into each number of partitions asked for; the encode
is timed whole, then ``write_neighbours`` alone on the encoded partitions (what the encoder adds, and
what ``cowbird partitions neighbours`` does); then the property test's generated queries
(``tests/engine/test_partition_property.py``) run over all partitions with the files in place and
again with them removed (the engine as it behaved before: each partition's ends are corpus ends),
best of ``--repeat`` runs each, after one warm-up run.

    .venv/bin/python bench/seams.py [--cuts 2,7,23,49] [--queries 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rich.console import Console

from bench.common import show
from cowbird.engines.native import NativeEngine
from cowbird.query import parse_cqp
from cowbird.store import CwbCorpus
from cowbird.store.neighbours import NEIGHBOURS_FILE, write_neighbours
from tests.engine.test_partition_property import SEED, generated
from tests.support import ewt_cut, require_reference


def queries_seconds(registry: Path, ids: list[str], queries: list[str], repeat: int) -> tuple[float, int]:
    """Best wall seconds of running every query on every partition (fresh engines, one warm-up run)."""
    engines = [NativeEngine.open(registry, pid) for pid in ids]
    parsed = [parse_cqp(q) for q in queries]
    best, hits = float("inf"), 0
    for run in range(repeat + 1):
        started = time.perf_counter()
        hits = sum(len(engine.evaluate(query)) for query in parsed for engine in engines)
        if run:  # the first run reads the lexicons and builds the tables: a warm-up
            best = min(best, time.perf_counter() - started)
    return best, hits


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cuts", default="2,7,23,49", help="numbers of partitions to aim at")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    size = (require_reference() / "cwb" / "data" / "ewt" / "word.corpus").stat().st_size // 4
    queries = generated(args.queries, SEED)
    rows = []
    base = Path(tempfile.mkdtemp(prefix="cowbird-seams-"))
    try:
        for aim in (int(x) for x in args.cuts.split(",")):
            where = base / f"cut{aim}"
            started = time.perf_counter()
            result = ewt_cut(where, aim)
            encode = time.perf_counter() - started
            registry = where / "registry"
            ids = [p.id for p in result.partitions]
            started = time.perf_counter()
            written = write_neighbours([CwbCorpus.open(registry, pid) for pid in ids])
            neighbours = time.perf_counter() - started
            file_bytes = sum(path.stat().st_size for path in written) / len(written)
            with_files, hits_with = queries_seconds(registry, ids, queries, args.repeat)
            kept = {path: path.read_bytes() for path in written}
            for path in written:
                path.unlink()
            without, hits_without = queries_seconds(registry, ids, queries, args.repeat)
            for path, data in kept.items():
                path.write_bytes(data)
            assert all((p.data / NEIGHBOURS_FILE).exists() for p in result.partitions)
            rows.append([str(len(ids)), f"{encode:.1f} s", f"{neighbours:.2f} s ({neighbours / encode:.1%})",
                         f"{file_bytes / 1024:.0f} KB", f"{with_files:.2f} s ({hits_with:,})",
                         f"{without:.2f} s ({hits_without:,})", f"{with_files / without - 1:+.1%}"])
    finally:
        shutil.rmtree(base, ignore_errors=True)
    show(Console(stderr=True), f"EWT ({size:,} tokens), {len(queries)} generated queries, best of {args.repeat}",
         ["partitions", "encode", "of which neighbours", "neighbours.json", "queries with files (hits)",
          "without files (hits)", "query time"], rows)


if __name__ == "__main__":
    main()
