"""A crawl killed (SIGKILL) several times and resumed: pages fetched twice, per the server's log (issue 67).

Crawls the loopback web (tests/crawl/loopweb.py) to ``--pages`` with a real ``cowbird crawl`` process,
kills it with SIGKILL each time its progress passes one of ``--kills`` pages, and resumes it with the same
command until the budget is reached. Reports, from the web server's request log: page requests, pages
requested more than once (a ``/flaky/`` page answering 503 once is asked again by design: counted apart),
robots.txt fetched more than once per host, the URLs the kills interrupted (never fetched again), and the
politeness violations. Runs itself inside a network namespace with only loopback.

    .venv/bin/python bench/crawl_resume.py --pages 1000 --kills 200,450,700
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT)]

from bench.cli import arguments  # noqa: E402
from bench.loopweb import served_web  # noqa: E402


def main() -> None:
    args = arguments(__doc__, hosts=300, pages=1000, kills="200,450,700", delay=0.2)
    with served_web(args.hosts, 7, "crawl-resume-") as (tmp, served, seeds):
        out = tmp / "crawl"
        command = [sys.executable, "-m", "cowbird", "crawl", str(seeds), "-o", str(out), "--allow", "127.0.0.0/8",
                   "--delay", str(args.delay), "--pages", str(args.pages), "-q"]
        started = time.perf_counter()
        for kill in (int(k) for k in args.kills.split(",")):
            process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            while process.poll() is None:
                progress = out / "progress.json"
                if progress.exists() and json.loads(progress.read_text())["pages"] >= kill:
                    process.send_signal(signal.SIGKILL)
                    break
                time.sleep(0.05)
            process.wait()
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        requests = served.requests()
        report = json.loads((out / "report.json").read_text())
    pages = Counter((r["host"], r["path"], r["query"]) for r in requests if r["path"] != "/robots.txt")
    robots = Counter(r["host"] for r in requests if r["path"] == "/robots.txt")
    twice = {k: n for k, n in pages.items() if n > 1}
    flaky = sum(1 for (_, path, _), n in twice.items() if path.startswith("/flaky/") and n == 2)
    print("| budget | kills (at pages) | page requests | pages asked twice (not /flaky/) | /flaky/ retries "
          "| robots.txt twice | interrupted by the kills | violations | pages in the report | wall |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    print(f"| {args.pages:,} | {args.kills} | {sum(pages.values()):,} | {len(twice) - flaky} | {flaky} | "
          f"{sum(1 for n in robots.values() if n > 1)} | {report['urls']['interrupted']} | "
          f"{len(served.violations(requests, args.delay))} | {report['pages']:,} | {wall:.1f} s |")


if __name__ == "__main__":
    main()
