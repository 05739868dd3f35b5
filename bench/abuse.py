"""Node memory under concurrent heavy queries, and what failed or abandoned work is charged (issue 47).

The demo's processes (the generated web corpus in two partitions on two node processes; the front
end), started twice: with the nodes' ``memory_budget`` as large as the machine (in effect none) and
with ``--budget`` MB. Each time ``--users`` clients send the heavy query at once (each its own
address's queries at once: ``anonymous_running_queries`` raised), and the nodes' own memory (resident
minus file-backed, as the budget counts it) is sampled every 50 ms: printed, the idle, the peak and
what is left once the nodes are still again, per node, and how the queries were answered. Then, with
the budget, what fair use charges (node seconds) for: an estimate, a query given up at the deadline,
a client that drops a streamed frequency after one second, and an export of 10,000 rows.

    .venv/bin/python bench/abuse.py [--tokens 2000000] [--users 4] [--budget 1024]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import memory_peaks, own_mb, running_demo

HEAVY = 'a:[] []{0,20} b:[] :: a.word=b.word & a.pos="NN"'


def settled(nodes: list[int], seconds: float = 60.0) -> list[int]:
    """The nodes' own memory once it no longer changes (stopped evaluations have unwound and the
    nodes have given freed memory back): three readings a second apart within 5 MB, at most ``seconds``."""
    readings: list[list[float]] = [[own_mb(p) for p in nodes]]
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(1.0)
        readings.append([own_mb(p) for p in nodes])
        last = readings[-3:]
        if len(last) == 3 and all(max(r[k] for r in last) - min(r[k] for r in last) <= 5 for k in range(len(nodes))):
            break
    return [round(m) for m in readings[-1]]


def memory_run(base: Path, tokens: int, users: int, budget_mb: int | None) -> str:
    os.environ["COWBIRD_NODE_MEMORY_BUDGET"] = str((budget_mb or 1 << 20) * 2**20)
    with running_demo(base, generated=True, web_tokens=tokens,
                      settings={"anonymous_running_queries": 64, "deadline": 300}) as demo:
        nodes = [p.pid for p in demo.processes[:2]]

        answers: list[str] = []

        def one() -> None:
            started = time.monotonic()
            r = httpx.get(f"{demo.url}/api/v1/query", params={"corpus": "web", "q": HEAVY, "syntax": "cqp"},
                          timeout=600)
            body = r.json()
            what = ("exact" if body.get("complete") else "partial") if r.status_code == 200 else body.get("code")
            answers.append(f"{what} {time.monotonic() - started:.0f} s")

        with memory_peaks(nodes, every=0.05) as memory:
            clients = [threading.Thread(target=one) for _ in range(users)]
            for c in clients:
                c.start()
            for c in clients:
                c.join()
        idle, peak = [round(m) for m in memory.idle], [round(m) for m in memory.peaks]
        after = settled(nodes)
        charges = charge_runs(demo.url) if budget_mb else ""
    label = f"{budget_mb:,} MB" if budget_mb else "none"
    row = (f"| {label} | {users} | {' / '.join(map(str, idle))} | {' / '.join(map(str, peak))} | "
           f"{' / '.join(map(str, after))} | {', '.join(sorted(answers))} |")
    return row + ("\n" + charges if charges else "")


def charge_runs(url: str) -> str:
    def seconds_left(client: str) -> float:
        r = httpx.get(f"{url}/api/v1/query", params={"corpus": "web", "q": "zzzz", "limit": 1},
                      headers={"X-Forwarded-For": client}, timeout=60)
        return float(r.headers["x-cowbird-node-seconds-left"])

    rows = []
    with httpx.Client(timeout=600) as http:
        cases: list[tuple[str, Callable[[], httpx.Response]]] = [
            ("an estimate of the heavy query", lambda: http.get(f"{url}/api/v1/estimate",
                                                               params={"corpus": "web", "q": HEAVY, "syntax": "cqp"})),
            ("the heavy query to its end", lambda: http.get(f"{url}/api/v1/query",
                                                            params={"corpus": "web", "q": HEAVY, "syntax": "cqp"})),
            ("an export of 10,000 rows", lambda: http.get(f"{url}/api/v1/export",
                                                          params={"corpus": "web", "q": "the", "limit": 10_000})),
        ]
        for name, call in cases:
            before = seconds_left("x")
            started = time.monotonic()
            answer = call()
            rows.append(f"| {name} | {answer.status_code} | {time.monotonic() - started:.1f} | "
                        f"{before - seconds_left('x'):.2f} |")
        before = seconds_left("x")
        started = time.monotonic()
        with http.stream("GET", f"{url}/api/v1/frequency", params={"corpus": "web", "q": HEAVY, "syntax": "cqp",
                                                                   "by": "word", "stream": 1}) as stream:
            next(stream.iter_lines())
            time.sleep(1.0)
        time.sleep(2.0)
        rows.append(f"| a streamed frequency dropped after 1 s | (dropped) | {time.monotonic() - started:.1f} | "
                    f"{before - seconds_left('x'):.2f} |")
    header = ("\n| with the budget: request | status | wall s | node seconds charged |\n|---|---|---|---|")
    return header + "\n" + "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tokens", type=int, default=2_000_000)
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--budget", type=int, default=1024, help="the nodes' memory budget in MB")
    args = parser.parse_args()
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; the demo corpus of {args.tokens:,} tokens, "
          f"{args.users} users sending `{HEAVY}` at once\n")
    print("| budget | users | idle MB (node 1 / 2) | peak MB | after MB | answers |\n|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for budget in (None, args.budget):
            print(memory_run(Path(folder) / "demo", args.tokens, args.users, budget), flush=True)


if __name__ == "__main__":
    main()
