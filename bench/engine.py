"""Engine benchmark: the preview workload of the 44 parity queries on BIG50, against real CQP.

Per query: the exact total plus the first 100 hits as KWIC lines with 10 tokens of context and
lemmas — what a preview costs a node. BIG50 is regenerated with make_shuffle_corpus.py and encoded
with ``cowbird encode`` (cached under bench/data). The corpus is opened and warmed once (as a node
does at start); each query then runs 3 times and the median is reported, next to real CQP's median
of 3 warm runs from ../shared/reference/cqp-timings-big50.tsv.

    .venv/bin/python bench/engine.py [--runs 3]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from backend_node.engines import Context
from backend_node.engines.native import NativeEngine
from bench.encode import DATA, FLAGS, REFERENCE, shuffle_corpus


def big50_registry() -> Path:
    target = DATA / "big50-encoded"
    if not (target / "registry" / "big50").exists():
        vrt = shuffle_corpus(50_000_000)
        subprocess.run([sys.executable, "-m", "cowbird", "encode", "-f", str(vrt), "-d", str(target / "data"),
                        "-R", str(target / "registry" / "big50"), *FLAGS], check=True, cwd=ROOT)
    return target / "registry"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--registry", type=Path, default=None, help="an encoded BIG50 registry (default: build)")
    args = parser.parse_args()
    cqp: dict[str, tuple[int, float]] = {}
    for line in (REFERENCE / "cqp-timings-big50.tsv").read_text().splitlines():
        if line.startswith("q"):
            qid, hits, ms = line.split("\t")
            cqp[qid] = (int(hits), float(ms))
    queries = [line.split("\t", 1) for line in (REFERENCE / "parity" / "queries.tsv").read_text().splitlines()
               if line.startswith("q")]
    engine = NativeEngine.open(args.registry or big50_registry(), "big50")
    started = time.perf_counter()
    engine.warm()
    warm_ms = (time.perf_counter() - started) * 1000
    table = Table(title=f"native engine vs CQP on BIG50 ({engine.size:,} tokens), preview workload, "
                  f"median of {args.runs}")
    for column in ("query", "hits", "cowbird ms", "CQP ms", "ratio", "hits = CQP"):
        table.add_column(column, justify="right")
    ratios = []
    for qid, query in queries:
        times = []
        for _ in range(args.runs):
            t0 = time.perf_counter()
            result = engine.run(query)
            result.kwic(0, 100, Context(10), ["lemma"], [])
            times.append((time.perf_counter() - t0) * 1000)
        ms = statistics.median(times)
        hits, cqp_ms = cqp[qid]
        ratio = ms / cqp_ms
        ratios.append(ratio)
        table.add_row(qid, f"{result.total:,}", f"{ms:.1f}", f"{cqp_ms:.1f}", f"{ratio:.2f}",
                      "yes" if result.total == hits else f"NO ({hits:,})")
    geomean = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
    console = Console()
    console.print(table)
    worst = max(zip(ratios, (q for q, _ in queries), strict=True))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    console.print(f"geometric mean ratio {geomean:.3f}; worst ratio {worst[0]:.2f} ({worst[1]}); "
                  f"q29 {ratios[28]:.3f} (1/{1 / ratios[28]:.0f}); warm-up {warm_ms:.0f} ms; "
                  f"peak RSS {peak:,.0f} MB; {platform.machine()}, {os.cpu_count()} cores, Python "
                  f"{platform.python_version()}")


if __name__ == "__main__":
    main()
