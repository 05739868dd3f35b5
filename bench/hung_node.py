"""Preview latency while a node stands still (SIGSTOP), its partition replicated (issue 63).

The demo's processes (the generated web corpus in two partitions: node 1 serves ``web_p01`` first,
node 2 the rest and a replica of ``web_p01``; the front end with its default ``[nodes]`` settings).
``--clients`` clients send previews one after the other for ``--seconds`` s with all nodes well,
then node 1 is stopped (SIGSTOP) and they go on for ``--seconds`` s more; then it is resumed
(SIGCONT) and they go on for ``AFTER`` s. Printed: each phase's previews, how many were exact
(complete, the same total as with all nodes well), and their latency (p50, p95, max).

    .venv/bin/python bench/hung_node.py [--seconds 60] [--clients 4] [--tokens 300000] [--label after]

Run the code before a change with ``PYTHONPATH`` set to another work tree's package folders
(``query_lang:frontend_api:backend_node:tools/calf:web``); the processes inherit it.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import running_demo  # noqa: E402

QUERIES = ['[word="the"]', '[word="of"] [word="the"]', '[pos="JJ"] [pos="NN.*"]', '[word="a"] [pos="NN"]']
AFTER = 15.0
"""Seconds of previews after SIGCONT."""


def preview(url: str, k: int) -> tuple[int, bool, float]:
    """One preview: its total, whether it was complete, its seconds."""
    q = QUERIES[k % len(QUERIES)]
    started = time.monotonic()
    r = httpx.get(f"{url}/api/v1/query", params={"corpus": "web", "q": q, "syntax": "cqp"}, timeout=600)
    seconds = time.monotonic() - started
    body = r.json() if r.status_code == 200 else {}
    return body.get("total", -1), bool(body.get("complete")), seconds


def phase(url: str, clients: int, until: float, totals: dict[int, int] | None) -> list[tuple[bool, float]]:
    """Previews by ``clients`` clients until ``until`` (started before it): (exact, seconds) each."""
    done: list[tuple[bool, float]] = []
    lock = threading.Lock()

    def client(first: int) -> None:
        k = first
        while time.monotonic() < until:
            total, complete, seconds = preview(url, k)
            exact = complete and (totals is None or totals.get(k % len(QUERIES)) == total)
            with lock:
                done.append((exact, seconds))
            k += clients

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return done


def figures(label: str, done: list[tuple[bool, float]]) -> str:
    seconds = sorted(s for _, s in done)
    p95 = seconds[min(len(seconds) - 1, int(0.95 * len(seconds)))]
    exact = sum(1 for e, _ in done if e)
    return (f"| {label} | {len(done)} | {exact} | {statistics.median(seconds):.2f} | {p95:.2f} | "
            f"{max(seconds):.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--tokens", type=int, default=300_000)
    parser.add_argument("--label", default="after")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cowbird-hung-") as tmp, \
            running_demo(Path(tmp), generated=True, web_tokens=args.tokens,
                         settings={"anonymous_running_queries": 64}) as demo:
        node1 = demo.processes[0].pid
        totals = {k: preview(demo.url, k)[0] for k in range(len(QUERIES))}
        well = phase(demo.url, args.clients, time.monotonic() + args.seconds, None)
        os.kill(node1, signal.SIGSTOP)
        try:
            stopped = time.monotonic()
            hung = phase(demo.url, args.clients, stopped + args.seconds, totals)
        finally:
            os.kill(node1, signal.SIGCONT)
        after = phase(demo.url, args.clients, time.monotonic() + AFTER, totals)
    print(f"\n{args.label}: {args.clients} clients, previews of 4 queries, web corpus of {args.tokens:,} tokens\n")
    print("| phase | previews | exact | p50 s | p95 s | max s |")
    print("|---|---:|---:|---:|---:|---:|")
    print(figures(f"all nodes well ({args.seconds:g} s)", well))
    print(figures(f"node 1 stopped ({args.seconds:g} s)", hung))
    print(figures(f"after SIGCONT ({AFTER:g} s)", after))


if __name__ == "__main__":
    main()
