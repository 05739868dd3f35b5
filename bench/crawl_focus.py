"""Focused against breadth-first crawling on the loopback web (tests/crawl/loopweb.py), issue 67.

For each page budget, crawls the same generated web from the same five seeds with ``--strategy focused``
and ``--strategy breadth`` (real ``cowbird crawl`` processes, ``--allow 127.0.0.0/8``) and reports the
good-document share, hosts, the wall time and the crawler's peak RSS, and the politeness violations found
in the server's log (must be 0). Runs itself inside a network namespace with only loopback.

    .venv/bin/python bench/crawl_focus.py --hosts 300 --budgets 300,600,1200
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from bench.cli import arguments  # noqa: E402
from bench.loopweb import served_web  # noqa: E402


def main() -> None:
    args = arguments(__doc__, hosts=300, seed=7, budgets="300,600,1200", delay=0.2)
    with served_web(args.hosts, args.seed, "crawl-focus-") as (tmp, served, seeds):
        print("| pages | strategy | good share | good | hosts | wall | crawler peak RSS | violations |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|")
        for budget in (int(b) for b in args.budgets.split(",")):
            for strategy in ("focused", "breadth"):
                out = tmp / f"{strategy}-{budget}"
                before = len(served.requests())
                started = time.perf_counter()
                result = subprocess.run(
                    ["/usr/bin/time", "-f", "%M", sys.executable, "-m", "cowbird", "crawl", str(seeds), "-o", str(out),
                     "--allow", "127.0.0.0/8", "--delay", str(args.delay), "--pages", str(budget),
                     "--strategy", strategy, "-q"], capture_output=True, text=True, check=True)
                wall = time.perf_counter() - started
                rss = int(result.stderr.strip().splitlines()[-1])
                report = json.loads((out / "report.json").read_text())
                violations = served.violations(served.requests()[before:], args.delay)
                print(f"| {budget:,} | {strategy} | {100 * report['good_share']:.1f} % | {report['good']:,} | "
                      f"{report['hosts_fetched']:,} | {wall:.1f} s | {rss / 1024:.0f} MB | {len(violations)} |",
                      flush=True)


if __name__ == "__main__":
    main()
