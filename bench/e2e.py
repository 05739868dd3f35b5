"""End-to-end benchmark on the demo: the generated 2-million-token web corpus in two partitions on
two node processes behind the front end, all on loopback, as `make demo` runs them.

1. Preview latency through the whole stack (HTTP → front end → both nodes → merged 100 hits)
   against the engine alone on the same corpus (one process, no HTTP), median of --rounds.
2. Throughput and latency percentiles with 8, 32 and 128 concurrent clients running a mix of
   previews.

    .venv/bin/python bench/e2e.py [--rounds 5] [--requests 400]
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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cowbird.commands.demo import DemoStack
from cowbird.engines import Context
from cowbird.engines.native import NativeEngine
from cowbird.query import translate
from cowbird.store import Manifest
from tests.support import free_ports

QUERIES = ["the 0-1 house", "^buy", "the new", "[pos=\"JJ\"] [pos=\"NNS\"]", "^child will", "house in ^city"]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def engine_alone(base: Path, rounds: int) -> dict[str, float]:
    """Milliseconds per preview with the engines of both partitions in this process, no HTTP."""
    manifest = Manifest.load(base / "data" / "web" / "web.manifest.json")
    engines = [(p, NativeEngine.open(base / "registry", p.id)) for p in manifest.partitions]
    times = {}
    for query in QUERIES:
        cqp = query if query.startswith("[") else translate(query)
        samples = []
        for round_ in range(rounds + 1):
            started = time.perf_counter()
            remaining = 100
            for _partition, engine in engines:
                result = engine.run(f"{cqp} cut {10**6 + round_}")
                if remaining:
                    lines = result.kwic(0, min(remaining, result.total), Context(10), ["lemma"], [])
                    remaining -= len(lines)
            samples.append((time.perf_counter() - started) * 1000)
        times[query] = statistics.median(samples[1:])
    return times


async def through_stack(url: str, rounds: int) -> dict[str, float]:
    times = {}
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        for query in QUERIES:
            samples = []
            cqp = query if query.startswith("[") else translate(query)
            for round_ in range(rounds + 1):
                # a cut no query reaches makes every round's text new: the nodes evaluate it again
                started = time.perf_counter()
                answer = await client.get("/api/v1/query", params={"corpus": "web", "q": f"{cqp} cut {10**6 + round_}",
                                                                   "syntax": "cqp", "show": "lemma"})
                answer.raise_for_status()
                samples.append((time.perf_counter() - started) * 1000)
            times[query] = statistics.median(samples[1:])
    return times


async def load(url: str, clients: int, requests: int) -> tuple[float, list[float], int]:
    latencies: list[float] = []
    errors = 0
    counter = iter(range(requests))

    async def worker() -> None:
        nonlocal errors
        async with httpx.AsyncClient(base_url=url, timeout=120) as client:
            for number in counter:
                query = QUERIES[number % len(QUERIES)]
                syntax = "cqp" if query.startswith("[") else "simple"
                started = time.perf_counter()
                answer = await client.get("/api/v1/query", params={"corpus": "web", "q": query, "syntax": syntax})
                latencies.append((time.perf_counter() - started) * 1000)
                errors += answer.status_code != 200

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(clients)))
    return requests / (time.perf_counter() - started), latencies, errors


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--requests", type=int, default=400)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cowbird-e2e-") as folder:
        front, n1, n2 = free_ports(3)
        stack = DemoStack(Path(folder), front, (n1, n2), generated=True, log_level="warning",
                          settings={"anonymous_running_queries": 10_000, "anonymous_rows_per_day": 10**12})
        stack.prepare()
        stack.start()
        try:
            alone = engine_alone(stack.base, args.rounds)
            stacked = asyncio.run(through_stack(stack.url, args.rounds))
            print("| query | engine alone ms | whole stack ms | overhead ms |")
            print("|---|---:|---:|---:|")
            for query in QUERIES:
                overhead = stacked[query] - alone[query]
                print(f"| `{query}` | {alone[query]:.1f} | {stacked[query]:.1f} | {overhead:.1f} |")
            print("\n| clients | requests | req/s | p50 ms | p95 ms | p99 ms | errors |")
            print("|---:|---:|---:|---:|---:|---:|---:|")
            for clients in (8, 32, 128):
                rate, latencies, errors = asyncio.run(load(stack.url, clients, args.requests))
                print(f"| {clients} | {args.requests} | {rate:.1f} | {percentile(latencies, 0.5):.0f} | "
                      f"{percentile(latencies, 0.95):.0f} | {percentile(latencies, 0.99):.0f} | {errors} |")
        finally:
            stack.stop()


if __name__ == "__main__":
    main()
