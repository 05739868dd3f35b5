"""What several corpora's per-corpus figures cost, and what the jump to a corpus's hits saves (issue 65, item 5):
``corpus=web,sample`` through the real front end over two node processes on the demo's generated web corpus
and the sample corpus. Times ``/api/v1/query`` (the first page: its ``corpora`` with totals, rates and
``first``), ``/api/v1/frequency`` by the word after the match (its rows with each corpus's count and, after
the change, its rate), with and without a filter, as medians of ``--runs`` requests after one warm-up; then
what it takes to reach ``sample``'s first hit: one request at ``offset=first`` against Next, page after page,
from the first page (timed once). Run it on a tree before the change and after (``PYTHONPATH`` naming the
other tree's source roots) to compare.

    .venv/bin/python bench/several_corpora.py [--tokens 300000] [--runs 9]
"""

from __future__ import annotations

import functools
import sys
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cli import arguments  # noqa: E402
from bench.common import generated_stack, show  # noqa: E402
from bench.timing import median_and_answer_ms  # noqa: E402

PAGE = 100
"""The search page's hits a page (``search-state.js``: ``PAGE``)."""
BOTH = "web,sample"


def main() -> None:
    args = arguments(__doc__, tokens=300_000, runs=9)
    console = Console(stderr=True)
    stack = generated_stack("cowbird-bench-corpora-", args.tokens)
    config = stack.base / "cowbird.toml"  # the sample corpus public too
    config.write_text(
        config.read_text(encoding="utf-8").replace('access = "login"', 'access = "public"'), encoding="utf-8"
    )
    stack.start()
    rows: list[list[str]] = []
    reach: list[list[str]] = []
    try:
        with httpx.Client(base_url=stack.url, timeout=120) as client:

            def get(path: str, **params: Any) -> Any:
                answer = client.get(path, params=params)
                answer.raise_for_status()
                return answer.json()

            for filters in ({}, {"filter": "text_genre~news"}):
                label = "filter text_genre~news" if filters else "no filter"
                ms, body = median_and_answer_ms(
                    functools.partial(get, "/api/v1/query", corpus=BOTH, q="house", limit=PAGE, **filters), args.runs
                )
                firsts = "yes" if all("first" in c for c in body["corpora"]) else "no"
                rows.append(["query, first page", label, f"{ms:.1f}", f"first: {firsts}"])
                ms, body = median_and_answer_ms(
                    functools.partial(
                        get, "/api/v1/frequency", corpus=BOTH, q="house", by="word", on="matchend[1]", **filters
                    ),
                    args.runs,
                )
                rates = "yes" if body["rows"] and "corpora_per_million" in body["rows"][0] else "no"
                rows.append(["frequency by word after", label, f"{ms:.1f}", f"per-corpus rates: {rates}"])
            both = get("/api/v1/query", corpus=BOTH, q="house", limit=0)
            web_total = both["corpora"][0]["total"]
            started = time.perf_counter()
            direct = get("/api/v1/query", corpus=BOTH, q="house", offset=web_total // PAGE * PAGE, limit=PAGE)
            jump = (time.perf_counter() - started) * 1000
            assert any(h["corpus"] == "sample" for h in direct["hits"])
            started, offset, pages = time.perf_counter(), 0, 0
            while True:  # Next, page after page, as the page offered before
                page = get("/api/v1/query", corpus=BOTH, q="house", offset=offset, limit=PAGE)
                pages += 1
                if any(h["corpus"] == "sample" for h in page["hits"]):
                    break
                offset += PAGE
            paging = (time.perf_counter() - started) * 1000
            reach = [
                ["one request at the page holding first", "1", f"{jump:.1f}"],
                ["Next from the first page", f"{pages:,}", f"{paging:,.0f}"],
            ]
    finally:
        stack.stop()
    show(
        console,
        f"corpus={BOTH}, q=house, web {args.tokens:,} tokens: medians of {args.runs} (ms)",
        ["request", "filters", "median", "answer"],
        rows,
    )
    show(console, f"Reaching sample's first hit after web's {web_total:,} (ms)", ["way", "requests", "ms"], reach)


if __name__ == "__main__":
    main()
