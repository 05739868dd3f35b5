"""What a trend's readable point links cost (issue 65, item 4): ``/api/v1/trend`` per year through the
real front end over two node processes on the demo's generated web corpus, by ``text_year`` (plain
years: each point links with ``text_year=2005``, which the front end finds out by asking the nodes
for the values that are a year and nothing more) and by ``text_lastmod`` (dates: the exact expression
of the year), for a rare and a frequent query. Medians of ``--runs`` requests after one warm-up each.
Run it on a tree before the change and after (``PYTHONPATH`` naming the other tree's source roots) to
compare.

    .venv/bin/python bench/trend_links.py [--tokens 2000000] [--runs 9]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

import httpx
from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cli import arguments  # noqa: E402
from bench.common import generated_stack, show  # noqa: E402

QUERIES = ["^house", "the"]
"""A query of about 6 % of the tokens' texts (``^house``, every form of house) and the most frequent word."""
ATTRIBUTES = ["text_year", "text_lastmod"]


def main() -> None:
    args = arguments(__doc__, tokens=2_000_000, runs=9)
    console = Console(stderr=True)
    stack = generated_stack("cowbird-bench-trend-", args.tokens)
    stack.start()
    rows = []
    try:
        with httpx.Client(base_url=stack.url, timeout=120) as client:
            for q in QUERIES:
                for by in ATTRIBUTES:
                    params = {"corpus": "web", "q": q, "by": by}
                    first = client.get("/api/v1/trend", params=params)
                    first.raise_for_status()
                    link = first.json()["series"][0]["points"][0]["concordance"]
                    times = []
                    for _ in range(args.runs):
                        started = time.perf_counter()
                        client.get("/api/v1/trend", params=params).raise_for_status()
                        times.append((time.perf_counter() - started) * 1000)
                    rows.append([q, by, f"{statistics.median(times):.1f}", f"{min(times):.1f}",
                                 "equals" if "%3D" in link.split("filter=")[1][:40] else "regex"])
    finally:
        stack.stop()
    show(console, f"/api/v1/trend per year, {args.tokens:,} tokens, medians of {args.runs} (ms)",
         ["q", "by", "median", "fastest", "point filter"], rows)


if __name__ == "__main__":
    main()
