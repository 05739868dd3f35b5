"""What one request costs the front end and the nodes, each kind alone (issue 46).

The platform as ``make demo`` runs it (the generated 2-million-token web corpus in two partitions on
two node processes; the front end) answers, one request at a time with nothing else running, first
each kind of request of ``bench/mixed_load.py`` (``--each`` of them, 3 heavy ones: cheap previews with a fresh
filter, heavy queries, deep sorted pages, analyses, exports), then sorted pages of ``the`` (about
127,000 hits) at offsets from 0 to near the last hit. Each page is asked
``--repeat`` times (the nodes keep the sorted order after the first); printed per offset: the median
wall time, the front end's and the nodes' CPU per request (from /proc, the processes' user + system
time) (the node requests per page are
counted in tests/frontend/test_hardening.py: two rounds beyond the count, then the page's lines).

    .venv/bin/python bench/request_cpu.py [--each 20] [--repeat 5] [--query the] [--sort right1.word]
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

from bench.mixed_load import KINDS, one, process_cpu
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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cowbird-cpu-") as folder, \
            running_demo(Path(folder), generated=True) as demo:
        print(f"\nEach kind of bench/mixed_load.py alone, {args.each} requests each (CPU per request)\n")
        print("| kind | statuses | wall ms (median) | front end CPU ms | nodes CPU ms |")
        print("|---|---|---:|---:|---:|")
        for kind, _ in KINDS:
            count = 3 if kind == "heavy" else args.each  # a heavy query takes up to a minute alone
            cpu_before = process_cpu()
            statuses, walls = asyncio.run(kind_alone(demo.url, kind, count))
            cpu_after = process_cpu()
            front = (cpu_after.get("front end", 0) - cpu_before.get("front end", 0)) / count
            nodes = (cpu_after.get("node", 0) - cpu_before.get("node", 0)) / count
            shown = ", ".join(f"{s}: {statuses.count(s)}" for s in sorted(set(statuses)))
            print(f"| {kind} | {shown} | {statistics.median(walls) * 1000:,.0f} | {front * 1000:,.0f} | "
                  f"{nodes * 1000:,.0f} |")
        params = {"corpus": "web", "q": args.query, "sort": args.sort}
        first = httpx.get(f"{demo.url}/api/v1/query", params=params, timeout=300).json()
        total = first["total"]
        print(f"\n{args.query!r} sorted by {args.sort}: {total:,} hits; {args.repeat} requests per offset "
              f"(median wall time; CPU per request)\n")
        print("| offset | wall ms | front end CPU ms | nodes CPU ms |")
        print("|---:|---:|---:|---:|")
        for offset in (0, 1_000, 10_000, 50_000, 100_000, max(0, total - 100)):
            walls: list[float] = []
            cpu_before = process_cpu()
            for _ in range(args.repeat):
                started = time.perf_counter()
                answer = httpx.get(f"{demo.url}/api/v1/query", params={**params, "offset": offset}, timeout=300)
                walls.append(time.perf_counter() - started)
                assert answer.status_code == 200, answer.text
                assert len(answer.json()["hits"]) == min(100, total - offset)
            cpu_after = process_cpu()
            front = (cpu_after.get("front end", 0) - cpu_before.get("front end", 0)) / args.repeat
            nodes = (cpu_after.get("node", 0) - cpu_before.get("node", 0)) / args.repeat
            print(f"| {offset:,} | {statistics.median(walls) * 1000:,.0f} | {front * 1000:,.0f} | "
                  f"{nodes * 1000:,.0f} |")
        print(f"\n(CPU from /proc at {os.sysconf('SC_CLK_TCK')} ticks a second: 10-ms steps, averaged over "
              f"{args.repeat} requests)")


if __name__ == "__main__":
    main()
