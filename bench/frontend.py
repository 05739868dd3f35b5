"""Front-end benchmark: EWT in 4 partitions on 2 real node processes, behind the real front end.

Prints three tables:
1. HTTP overhead of a preview (total + 100 KWIC lines) over the engine alone, per parity query
   (target: median <= 25 ms);
2. an export of 10,000 hits as TSV (target <= 1.5 s);
3. 32 concurrent clients running a mix of the parity queries: throughput, p50, p95.

    .venv/bin/python bench/frontend.py [--rounds 3]
"""

from __future__ import annotations

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

from bench.cli import arguments
from cowbird.commands.demo import DemoStack
from cowbird.engines import Context
from cowbird.engines.native import NativeEngine
from tests.support import REFERENCE, ewt_options, free_ports


def main() -> None:
    args = arguments(__doc__, rounds=(3, "repetitions per query for medians"),
                     requests=(320, "requests in the concurrency test"))
    if not (REFERENCE / "ewt.vrt").exists():
        sys.exit(f"{REFERENCE}/ewt.vrt not found: the benchmark needs ../shared/reference")
    queries = [line.split("\t", 1) for line in (REFERENCE / "parity" / "queries.tsv").read_text().splitlines()
               if line.startswith("q")]
    base = Path(tempfile.mkdtemp(prefix="cowbird-bench-"))
    front, n1, n2 = free_ports(3)
    encoding = ewt_options(base / "data" / "ewt", base / "registry" / "ewt", partition_tokens=66_000)
    # 32 clients on one address: measure the system, not the fair-use limits
    stack = DemoStack(base, front, (n1, n2), encoding, name="ewt",
                      settings={"anonymous_running_queries": 10_000, "anonymous_rows_per_day": 10**12},
                      log_level="warning")
    stack.prepare()
    stack.start()
    console = Console()
    try:
        engine = NativeEngine.open(REFERENCE / "cwb" / "registry", "ewt")
        engine.warm()
        client = httpx.Client(base_url=stack.url, timeout=120)
        overhead = Table(title=f"preview over HTTP vs engine alone (EWT in {len(stack.partitions)} partitions, "
                         "2 nodes), median of rounds")
        for column in ("query", "hits", "engine ms", "HTTP ms", "overhead ms"):
            overhead.add_column(column, justify="right")
        overheads = []
        for qid, query in queries:
            engine_ms, http_ms = [], []
            for _ in range(args.rounds):
                t0 = time.perf_counter()
                engine.run(query).kwic(0, 100, Context(10), ["lemma"], [])
                engine_ms.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                body = client.get("/api/v1/query", params={"corpus": "ewt", "q": query, "syntax": "cqp",
                                                            "show": "lemma", "limit": 100}).json()
                http_ms.append((time.perf_counter() - t0) * 1000)
            e, h = statistics.median(engine_ms), statistics.median(http_ms)
            overheads.append(h - e)
            overhead.add_row(qid, f"{body['total']:,}", f"{e:.1f}", f"{h:.1f}", f"{h - e:.1f}")
        console.print(overhead)
        console.print(f"median overhead {statistics.median(overheads):.1f} ms (target <= 25 ms)")

        t0 = time.perf_counter()
        export = client.get("/api/v1/export", params={"corpus": "ewt", "q": "[]", "syntax": "cqp", "limit": 10_000,
                                                      "show": "lemma", "meta": "text_url"})
        seconds = time.perf_counter() - t0
        console.print(f"export of {int(export.headers['x-cowbird-rows']):,} rows as TSV: {seconds:.2f} s "
                      f"({len(export.content) / 1e6:.1f} MB; target <= 1.5 s)")

        async def load() -> tuple[float, list[float]]:
            latencies: list[float] = []
            todo = [queries[i % len(queries)][1] for i in range(args.requests)]
            async with httpx.AsyncClient(base_url=stack.url, timeout=120,
                                         limits=httpx.Limits(max_connections=32)) as http:
                async def worker() -> None:
                    while todo:
                        query = todo.pop()
                        t = time.perf_counter()
                        response = await http.get("/api/v1/query", params={"corpus": "ewt", "q": query,
                                                                            "syntax": "cqp", "limit": 100})
                        response.raise_for_status()
                        latencies.append((time.perf_counter() - t) * 1000)

                started = time.perf_counter()
                await asyncio.gather(*(worker() for _ in range(32)))
                return time.perf_counter() - started, latencies

        elapsed, latencies = asyncio.run(load())
        latencies.sort()
        table = Table(title="32 concurrent clients, parity query mix")
        for column in ("requests", "seconds", "requests/s", "p50 ms", "p95 ms"):
            table.add_column(column, justify="right")
        table.add_row(str(len(latencies)), f"{elapsed:.1f}", f"{len(latencies) / elapsed:.1f}",
                      f"{latencies[len(latencies) // 2]:.0f}", f"{latencies[int(len(latencies) * 0.95)]:.0f}")
        console.print(table)
    finally:
        stack.stop()


if __name__ == "__main__":
    main()
