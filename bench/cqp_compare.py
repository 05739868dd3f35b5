"""Real CQP on a corpus ``bench/scale.py --keep`` left behind, for chosen workload queries, beside the
node's figures that the run's ``journal.json`` holds: when a whole CQP side (about an hour at 1,000
MT on this machine) does not fit, the queries where cowbird may be slowest are timed the same way
(a warm ``cqp -c`` child, the preview: size and 100 KWIC lines, one warm-up run, then the median of
``--runs``), on the same files.

    .venv/bin/python bench/cqp_compare.py --size 1000 --queries q05,q13,ec1 [--step "node, compressed"]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import show
from bench.encode import DATA
from bench.engine import CqpChild, find_cqp
from bench.scale import parity_queries


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=1000, help="the size (MT) of bench/data/scaleN")
    parser.add_argument("--queries", required=True, help="workload queries, comma-separated (q05,q13,ec1)")
    parser.add_argument("--step", default="node, compressed", help="the journal's node step to compare with")
    parser.add_argument("--runs", type=int, default=1, help="timed runs per query after a warm-up run")
    parser.add_argument("--cqp", type=Path, default=None, help="the cqp binary (default: PATH, then build-cqp's)")
    args = parser.parse_args()
    console = Console(width=200)
    base = DATA / f"scale{args.size}"
    journal = json.loads((base / "journal.json").read_text())
    ours = journal[args.step]["queries"]
    wanted = [q.strip() for q in args.queries.split(",") if q.strip()]
    queries = dict(parity_queries())
    unknown = [q for q in wanted if q not in queries]
    if unknown:
        parser.error(f"unknown queries {', '.join(unknown)}")
    binary = find_cqp(args.cqp)
    if binary is None:
        sys.exit("no cqp: give --cqp, put it on PATH, or build it with ../shared/reference/build-cqp.sh")
    child = CqpChild(binary, base / "ours" / "registry", f"BIG{args.size}")
    rows = []
    try:
        for qid in wanted:
            times = []
            for run in range(args.runs + 1):
                elapsed, answer = child.preview(queries[qid])
                if run:
                    times.append(elapsed)
            cqp_ms = statistics.median(times)
            mine = float(ours[qid]["ms"])
            same = answer.hits == ours[qid]["hits"]
            console.print(f"{qid}: cowbird {mine:,.1f} ms, CQP {cqp_ms:,.1f} ms, hits equal: {same}", markup=False)
            rows.append([qid, f"{ours[qid]['hits']:,}", f"{mine:,.1f}", f"{cqp_ms:,.1f}", f"{mine / cqp_ms:.2f}",
                         "yes" if same else "NO"])
    finally:
        child.close()
    show(console, f"cowbird ({args.step}, from the journal) and real CQP on the same {args.size}-MT files, ms",
         ["query", "hits", "cowbird ms", "CQP ms", "cowbird / CQP", "hits equal"], rows)


if __name__ == "__main__":
    main()
