"""Load benchmark: many clients at once, with and without heavy queries running, through real processes.

EWT in 4 partitions on 2 real node processes behind the real front end (as ``cowbird demo`` runs
them). Three runs of ``--clients`` concurrent clients sending ``--requests`` previews of the parity
query mix between them: back to back alone, back to back while three more clients keep running
heavy queries (long repetitions over every position), and with the heavy queries while each client
takes ``--pause`` seconds to read a preview before the next, as people at a browser do. Printed per
run: throughput, p50 and p95 latency, how many answers were incomplete or errors, the latency of a
cheap query (``[word="dog"]``, fresh each time thanks to a changing filter) sent once a second
during the run, and the CPU time the front end and the nodes spent per request.

Every client has a connection of its own, so the load generator costs the shared cores little.

    .venv/bin/python bench/load.py [--clients 32] [--requests 320] [--pause 1.0]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cowbird.commands.demo import DemoStack
from tests.support import REFERENCE, ewt_options, free_ports

# heavy: long repetitions over tokens that are there but never in this order (no hits, every start
# walked); the first is refused at once by the cost estimate, the others run for 8 and 36 s alone
HEAVY = ['[] []{0,200} [word="the"] [word="the"]', '[]{3,} [lemma="house"] [lemma="house"]',
         '[pos="NN.*"] []{0,100} [word="house"] [word="house"]']


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else float("nan")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time so far of a process and its living children (Linux ``/proc``): the
    front end's workers are children of the ``cowbird serve`` process."""
    total = 0.0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(stat.parent.name) == pid or int(fields[1]) == pid:
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


def connection(url: str) -> httpx.AsyncClient:
    return httpx.AsyncClient(base_url=url, timeout=300, limits=httpx.Limits(max_connections=1))


@dataclass
class Outcome:
    elapsed: float = 0.0
    latencies: list[float] = field(default_factory=list)
    cheap: list[float] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=lambda: {"complete": 0, "partial": 0, "error": 0})
    reasons: dict[str, int] = field(default_factory=dict)


async def run(url: str, queries: list[str], clients: int, requests: int, heavy: bool, pause: float) -> Outcome:
    outcome = Outcome()
    todo = [queries[i % len(queries)] for i in range(requests)]
    stop = asyncio.Event()

    async def worker() -> None:
        async with connection(url) as http:
            while todo:
                query = todo.pop()
                started = time.perf_counter()
                response = await http.get("/api/v1/query", params={"corpus": "ewt", "q": query, "syntax": "cqp"})
                outcome.latencies.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    outcome.counts["error"] += 1
                    why = f"{response.status_code} {response.text[:200]}"
                    outcome.reasons[why] = outcome.reasons.get(why, 0) + 1
                else:
                    body = response.json()
                    outcome.counts["complete" if body["complete"] else "partial"] += 1
                    for partition in body["partitions"]:
                        if partition["status"] != "ok":
                            why = f"{partition['id']}: {partition['error']}"
                            outcome.reasons[why] = outcome.reasons.get(why, 0) + 1
                await asyncio.sleep(pause)

    async def heavy_loop(query: str) -> None:
        async with connection(url) as http:
            n = 0
            while not stop.is_set():
                n += 1  # a new filter each time: never answered from a cache
                await http.get("/api/v1/query", params={"corpus": "ewt", "q": query, "syntax": "cqp",
                                                        "filter": f"text_id!~x{n}"})

    async def cheap_probe() -> None:
        async with connection(url) as http:
            n = 0
            while not stop.is_set():
                n += 1
                started = time.perf_counter()
                await http.get("/api/v1/query", params={"corpus": "ewt", "q": '[word="dog"]', "syntax": "cqp",
                                                        "filter": f"text_id!~y{n}"})
                outcome.cheap.append((time.perf_counter() - started) * 1000)
                await asyncio.sleep(1.0)

    background = [asyncio.ensure_future(cheap_probe())]
    if heavy:
        background += [asyncio.ensure_future(heavy_loop(q)) for q in HEAVY]
        await asyncio.sleep(2.0)  # let the heavy queries take hold first
    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    outcome.elapsed = time.perf_counter() - started
    stop.set()
    for task in background:
        task.cancel()
    await asyncio.gather(*background, return_exceptions=True)
    return outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--requests", type=int, default=320)
    parser.add_argument("--pause", type=float, default=1.0, help="Seconds a client reads a preview (third run).")
    args = parser.parse_args()
    queries = [line.split("\t", 1)[1] for line in (REFERENCE / "parity" / "queries.tsv").read_text().splitlines()
               if line.startswith("q")]
    base = Path(tempfile.mkdtemp(prefix="cowbird-load-"))
    front, n1, n2 = free_ports(3)
    stack = DemoStack(base, front, (n1, n2), ewt_options(base / "data" / "ewt", base / "registry" / "ewt",
                                                         partition_tokens=66_000), name="ewt",
                      # 32 clients on one address: measure the system, not the fair-use limits
                      settings={"anonymous_running_queries": 10_000, "anonymous_rows_per_day": 10**12},
                      log_level="warning")
    stack.prepare()
    stack.start()
    table = Table(title=f"{args.clients} concurrent clients, {args.requests} previews of the parity mix "
                        f"(EWT, {len(stack.partitions)} partitions, 2 nodes)")
    for column in ("run", "requests/s", "p50 ms", "p95 ms", "complete", "partial", "errors",
                   "cheap query p50 ms", "cheap query max ms", "front end CPU ms/request", "nodes CPU ms/request"):
        table.add_column(column, justify="right")
    runs = [("back to back", False, 0.0), ("back to back, 3 heavy queries", True, 0.0),
            (f"{args.pause:g} s to read, 3 heavy queries", True, args.pause)]
    front_pid, node_pids = stack.processes[-1].pid, [p.pid for p in stack.processes[:-1]]
    try:
        for name, heavy, pause in runs:
            before = cpu_seconds(front_pid), sum(cpu_seconds(pid) for pid in node_pids)
            result = asyncio.run(run(stack.url, queries, args.clients, args.requests, heavy, pause))
            front_cpu = cpu_seconds(front_pid) - before[0]
            nodes_cpu = sum(cpu_seconds(pid) for pid in node_pids) - before[1]
            done, cheap = len(result.latencies), result.cheap
            table.add_row(name, f"{done / result.elapsed:.1f}",
                          f"{percentile(result.latencies, 0.5):.0f}", f"{percentile(result.latencies, 0.95):.0f}",
                          *(str(result.counts[k]) for k in ("complete", "partial", "error")),
                          f"{statistics.median(cheap):.0f}" if cheap else "-", f"{max(cheap):.0f}" if cheap else "-",
                          f"{front_cpu / done * 1000:.1f}", f"{nodes_cpu / done * 1000:.1f}")
            for why, times in result.reasons.items():
                print(f"{name}: {times} x {why}")
    finally:
        stack.stop()
    Console(width=220).print(table)


if __name__ == "__main__":
    main()
