"""Load benchmark: many clients at once, with and without heavy queries running, through real processes.

EWT in 4 partitions on 2 real node processes behind the real front end (as ``cowbird demo`` runs
them). Two runs of ``--clients`` concurrent clients each sending ``--requests`` previews of the
parity query mix: alone, and while three clients keep running heavy queries (long repetitions
over every position). Printed per run: throughput, p50 and p95 latency, how many answers were
incomplete or errors, and the latency of a cheap query (``[word="dog"]``, fresh each time thanks
to a changing filter) sent once a second during the run.

    .venv/bin/python bench/load.py [--clients 32] [--requests 320]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cowbird.demo import DemoStack
from tests.support import REFERENCE, ewt_options, free_ports

HEAVY = ['[] []{0,200} [word="zzzz"]', '[]{3,} [lemma="qqqq"]', '[pos="NN.*"] []{0,100} [word="xyzzy"]']


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else float("nan")


async def run(url: str, queries: list[str], clients: int, requests: int, heavy: bool) -> dict[str, object]:
    latencies: list[float] = []
    cheap: list[float] = []
    outcomes = {"complete": 0, "partial": 0, "error": 0}
    todo = [queries[i % len(queries)] for i in range(requests)]
    stop = asyncio.Event()
    async with httpx.AsyncClient(base_url=url, timeout=300, limits=httpx.Limits(max_connections=clients + 8)) as http:
        async def worker() -> None:
            while todo:
                query = todo.pop()
                started = time.perf_counter()
                response = await http.get("/api/v1/query", params={"corpus": "ewt", "q": query, "syntax": "cqp"})
                latencies.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    outcomes["error"] += 1
                else:
                    outcomes["complete" if response.json()["complete"] else "partial"] += 1

        async def heavy_loop(query: str) -> None:
            n = 0
            while not stop.is_set():
                n += 1  # a new filter each time: never answered from a cache
                await http.get("/api/v1/query", params={"corpus": "ewt", "q": query, "syntax": "cqp",
                                                        "filter": f"text_id!~x{n}"})

        async def cheap_probe() -> None:
            n = 0
            while not stop.is_set():
                n += 1
                started = time.perf_counter()
                await http.get("/api/v1/query", params={"corpus": "ewt", "q": '[word="dog"]', "syntax": "cqp",
                                                        "filter": f"text_id!~y{n}"})
                cheap.append((time.perf_counter() - started) * 1000)
                await asyncio.sleep(1.0)

        background = [asyncio.ensure_future(cheap_probe())]
        if heavy:
            background += [asyncio.ensure_future(heavy_loop(q)) for q in HEAVY]
            await asyncio.sleep(2.0)  # let the heavy queries take hold first
        started = time.perf_counter()
        await asyncio.gather(*(worker() for _ in range(clients)))
        elapsed = time.perf_counter() - started
        stop.set()
        for task in background:
            task.cancel()
        await asyncio.gather(*background, return_exceptions=True)
    return {"elapsed": elapsed, "latencies": latencies, "cheap": cheap, **outcomes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=320)
    args = parser.parse_args()
    queries = [line.split("\t", 1)[1] for line in (REFERENCE / "parity" / "queries.tsv").read_text().splitlines()
               if line.startswith("q")]
    base = Path(tempfile.mkdtemp(prefix="cowbird-load-"))
    front, n1, n2 = free_ports(3)
    stack = DemoStack(base, front, (n1, n2), ewt_options(base / "data" / "ewt", base / "registry" / "ewt",
                                                         partition_tokens=66_000), name="ewt")
    stack.prepare()
    stack.start()
    table = Table(title=f"{args.clients} concurrent clients, {args.requests} previews of the parity mix "
                        f"(EWT, {len(stack.partitions)} partitions, 2 nodes)")
    for column in ("run", "requests/s", "p50 ms", "p95 ms", "complete", "partial", "errors",
                   "cheap query p50 ms", "cheap query max ms"):
        table.add_column(column, justify="right")
    try:
        for heavy in (False, True):
            result = asyncio.run(run(stack.url, queries, args.clients, args.requests, heavy))
            latencies, cheap = result["latencies"], result["cheap"]
            assert isinstance(latencies, list) and isinstance(cheap, list)
            table.add_row("with 3 heavy queries" if heavy else "alone",
                          f"{len(latencies) / float(result['elapsed']):.1f}",  # type: ignore[arg-type]
                          f"{percentile(latencies, 0.5):.0f}", f"{percentile(latencies, 0.95):.0f}",
                          str(result["complete"]), str(result["partial"]), str(result["error"]),
                          f"{statistics.median(cheap):.0f}" if cheap else "-", f"{max(cheap):.0f}" if cheap else "-")
    finally:
        stack.stop()
    Console().print(table)


if __name__ == "__main__":
    main()
