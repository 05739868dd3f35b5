"""Focused against breadth-first crawling on the loopback web (tests/crawl/loopweb.py), issue 67.

For each page budget, crawls the same generated web from the same five seeds with ``--strategy focused``
and ``--strategy breadth`` (real ``cowbird crawl`` processes, ``--allow 127.0.0.0/8``) and reports the
good-document share, hosts, the wall time and the crawler's peak RSS, and the politeness violations found
in the server's log (must be 0). Runs itself inside a network namespace with only loopback.

    .venv/bin/python bench/crawl_focus.py --hosts 300 --budgets 300,600,1200
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--budgets", default="300,600,1200")
    parser.add_argument("--delay", type=float, default=0.2)
    args = parser.parse_args()
    from tests.loopback import reexec_in_loopback_namespace

    reexec_in_loopback_namespace()
    from tests.crawl.loopweb import LoopWeb

    web = LoopWeb(hosts=args.hosts, seed=args.seed)
    print("| pages | strategy | good share | good | hosts | wall | crawler peak RSS | violations |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory(prefix="crawl-focus-") as tmp, web.serve(Path(tmp)) as served:
        seeds = Path(tmp) / "seeds.txt"
        seeds.write_text("\n".join(served.seeds(5)) + "\n")
        for budget in (int(b) for b in args.budgets.split(",")):
            for strategy in ("focused", "breadth"):
                out = Path(tmp) / f"{strategy}-{budget}"
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
