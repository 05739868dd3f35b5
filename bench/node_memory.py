"""Node memory under the query that once took a node down, and under a burst of heavy label queries
(issue 63, finding 1).

The demo's processes (the generated web corpus in two partitions on two node processes; the front
end), the nodes' ``memory_budget`` ``--budget`` MB and their ``memory_limit`` (RLIMIT_DATA, set by
``cowbird node serve``) ``--limit`` MB. First the query relating three labels over two ``[]{0,60}``,
and the milder one relating two, one at a time; then ``--users`` clients at once, each with its own
heavy label query. The nodes' own memory (resident minus file-backed, as the budget counts it) is
sampled every 50 ms; printed per case: the answers (status, and why), the time, each node's idle and
peak own memory, and whether both node processes are still the ones started.

Run it from the tree to measure; for the code before a change, from a worktree of it (its own
``bench/``, or this file with ``PYTHONPATH`` set to the worktree's source folders). Under the old code
a lone evaluation is never stopped: bound the processes yourself (``ulimit -d``) on a shared machine.

    .venv/bin/python bench/node_memory.py [--tokens 1000000] [--users 4] [--budget 1024] [--limit 2048]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import os
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import memory_peaks, running_demo

OOM = "a:[] []{0,60} b:[] []{0,60} c:[] :: a.word = c.word & b.word = a.word"
MILDER = "a:[] []{0,60} b:[] :: a.word = b.word"
BURST = [f'a:[] []{{0,10}} b:[] :: a.word=b.word & a.pos="{pos}"' for pos in ("NN", "IN", "DT", "JJ", "VB", "RB")]


def outcome(answer: httpx.Response | Exception) -> str:
    if isinstance(answer, Exception):
        return f"error: {type(answer).__name__}"
    body = answer.json()
    if answer.status_code == 200:
        return f"200 ({body['total']:,} hits{'' if body['complete'] else ', incomplete'})"
    detail = str(body.get("detail", ""))
    why = ("not estimated in time" if "could not be estimated" in detail
           else "estimated too slow" if "estimated to take" in detail
           else "memory" if "memory" in detail else detail[:60])
    return f"{answer.status_code} {body.get('code')} ({why})"


def ask(url: str, query: str) -> httpx.Response | Exception:
    try:
        return httpx.get(f"{url}/api/v1/query", params={"corpus": "web", "q": query, "syntax": "cqp"}, timeout=900)
    except httpx.HTTPError as exc:
        return exc


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tokens", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--budget", type=int, default=1024, help="memory_budget, MB")
    parser.add_argument("--limit", type=int, default=2048, help="memory_limit, MB (0: none)")
    args = parser.parse_args()
    os.environ["COWBIRD_NODE_MEMORY_BUDGET"] = str(args.budget * 2**20)
    os.environ["COWBIRD_NODE_MEMORY_LIMIT"] = str(args.limit * 2**20)
    print(f"{args.tokens:,} tokens, memory_budget {args.budget} MB, memory_limit {args.limit} MB, "
          f"{args.users} users; own memory in MB (idle -> peak) per node")
    with tempfile.TemporaryDirectory() as folder, running_demo(
            Path(folder), generated=True, web_tokens=args.tokens,
            settings={"anonymous_running_queries": args.users}) as demo:
        nodes = [process.pid for process in demo.processes[:2]]
        cases: list[tuple[str, list[str]]] = [("the OOM query", [OOM]), ("the milder query", [MILDER]),
                                             (f"{args.users}-user burst", BURST[:args.users])]
        for name, queries in cases:
            started = time.monotonic()
            with memory_peaks(nodes, every=0.05) as memory, \
                    concurrent.futures.ThreadPoolExecutor(len(queries)) as pool:
                answers = list(pool.map(lambda q: ask(demo.url, q), queries))
            took = time.monotonic() - started
            alive = all(process.poll() is None for process in demo.processes[:2])
            memory_text = ", ".join(f"{i:.0f} -> {p:.0f}" for i, p in zip(memory.idle, memory.peaks, strict=True))
            print(f"| {name} | {'; '.join(outcome(a) for a in answers)} | {took:.1f} s | {memory_text} | "
                  f"{'yes' if alive else 'NO'} |", flush=True)
            if not alive:
                break
            time.sleep(5)  # the nodes give freed memory back


if __name__ == "__main__":
    main()
