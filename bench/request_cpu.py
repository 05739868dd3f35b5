"""What one request costs the front end and the nodes, each kind alone (issue 46).

The platform as ``make demo`` runs it (the generated 2-million-token web corpus in two partitions on
two node processes; the front end) answers, one request at a time with nothing else running, first
each kind of request of ``bench/mixed_load.py`` (``--each`` of them, 3 heavy ones: cheap previews
with a fresh filter, heavy queries, deep sorted pages, analyses, exports, then the comparative ones
apart: word sketches, thesaurus look-ups, trends, comparisons), then sorted pages of ``the`` (about
127,000 hits) at offsets from 0 to near the last hit. Each page is asked
``--repeat`` times (the nodes keep the sorted order after the first); printed per offset: the median
wall time, the front end's and the nodes' CPU per request (from /proc, the processes' user + system
time) (the node requests per page are
counted in tests/frontend/test_hardening.py: two rounds beyond the count, then the page's lines).

    .venv/bin/python bench/request_cpu.py [--each 20] [--repeat 5] [--query the] [--sort right1.word]
    .venv/bin/python bench/request_cpu.py --big50   # sorted pages to offset 1,000,000 on BIG50
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import big50_stack
from bench.mixed_load import COMPARATIVE, KINDS, one, process_cpu
from tests.support import running_demo


async def kind_alone(url: str, kind: str, count: int) -> tuple[list[int], list[float]]:
    """``count`` requests of one kind, one after another: their statuses and wall times."""
    rng = random.Random(11)
    statuses: list[int] = []
    walls: list[float] = []
    async with httpx.AsyncClient(base_url=url, timeout=300) as client:
        for _ in range(count):
            status, elapsed = await one(client, kind, rng)
            statuses.append(status)
            walls.append(elapsed)
    return statuses, walls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5, help="requests per offset of the sorted pages")
    parser.add_argument("--each", type=int, default=20, help="requests of each kind of the mixed load")
    parser.add_argument("--query", default="the")
    parser.add_argument("--sort", default="right1.word")
    parser.add_argument("--big50", action="store_true", help="only sorted pages, on BIG50 (encoded first: minutes)")
    args = parser.parse_args()
    if args.big50:
        big50(args)
        return
    with tempfile.TemporaryDirectory(prefix="cowbird-cpu-") as folder, \
            running_demo(Path(folder), generated=True) as demo:
        print(f"\nEach kind of bench/mixed_load.py alone, {args.each} requests each (CPU per request)\n")
        print("| kind | statuses | wall ms (median) | front end CPU ms | nodes CPU ms |")
        print("|---|---|---:|---:|---:|")
        for kind in [k for k, _ in KINDS if k != "comparative"] + COMPARATIVE:
            count = 3 if kind == "heavy" else args.each  # a heavy query takes up to a minute alone
            cpu_before = process_cpu()
            statuses, walls = asyncio.run(kind_alone(demo.url, kind, count))
            cpu_after = process_cpu()
            front = sum(v - cpu_before.get(k, 0) for k, v in cpu_after.items() if k.startswith("front end")) / count
            nodes = (cpu_after.get("node", 0) - cpu_before.get("node", 0)) / count
            shown = ", ".join(f"{s}: {statuses.count(s)}" for s in sorted(set(statuses)))
            print(f"| {kind} | {shown} | {statistics.median(walls) * 1000:,.0f} | {front * 1000:,.0f} | "
                  f"{nodes * 1000:,.0f} |")
        sorted_pages(demo.url, "web", args.query, args.sort, args.repeat, (0, 1_000, 10_000, 50_000, 100_000))


def sorted_pages(url: str, corpus: str, query: str, sort: str, repeat: int, offsets: tuple[int, ...]) -> None:
    """Sorted pages at these offsets (and near the last hit): wall time and CPU per request."""
    params = {"corpus": corpus, "q": query, "sort": sort}
    started = time.perf_counter()
    first = httpx.get(f"{url}/api/v1/query", params=params, timeout=600).json()
    total = first["total"]
    print(f"\n{corpus}: {query!r} sorted by {sort}: {total:,} hits (the first page, sorting on the nodes: "
          f"{time.perf_counter() - started:.1f} s); {repeat} requests per offset (median wall time; CPU per "
          "request)\n")
    print("| offset | wall ms | front end CPU ms | nodes CPU ms |")
    print("|---:|---:|---:|---:|")
    for offset in [o for o in offsets if o < total] + [max(0, total - 100)]:
        walls: list[float] = []
        cpu_before = process_cpu()
        for _ in range(repeat):
            started = time.perf_counter()
            answer = httpx.get(f"{url}/api/v1/query", params={**params, "offset": offset}, timeout=600)
            walls.append(time.perf_counter() - started)
            assert answer.status_code == 200, answer.text
            assert len(answer.json()["hits"]) == min(100, total - offset)
        cpu_after = process_cpu()
        front = sum(v - cpu_before.get(k, 0) for k, v in cpu_after.items() if k.startswith("front end")) / repeat
        nodes = (cpu_after.get("node", 0) - cpu_before.get("node", 0)) / repeat
        print(f"| {offset:,} | {statistics.median(walls) * 1000:,.0f} | {front * 1000:,.0f} | {nodes * 1000:,.0f} |")
    print(f"\n(CPU from /proc at {os.sysconf('SC_CLK_TCK')} ticks a second: 10-ms steps, averaged over "
          f"{repeat} requests)")


def big50(args: argparse.Namespace) -> None:
    """Sorted pages on BIG50 (50 MT in two partitions, as bench/workbench.py serves it)."""
    stack, _ = big50_stack("cowbird-bench-cpu-", {})
    stack.prepare()
    stack.start()
    try:
        sorted_pages(stack.url, "big50", args.query, args.sort, args.repeat, (0, 1_000, 100_000, 1_000_000))
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
