"""Browser benchmark: the search page in Debian's Chromium, against EWT in 4 partitions on 2 real
node processes behind the real front end (loopback).

Prints the page weight, its load time (navigation loadEventEnd), and how long a preview of 100
hits takes: the API answer and the rendering after it (targets of the browser issue: < 200 KB,
< 300 ms load, < 100 ms render), median of --rounds.

    .venv/bin/python bench/browser.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright
from rich.console import Console
from rich.markup import escape
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cowbird.commands.demo import DemoStack
from tests.support import REFERENCE, ewt_options, free_ports

QUERIES = ["the", "^house", "the 0-2 ^time", "[pos=\"JJ\"] [pos=\"NNS\"]"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5, help="page loads and previews per query")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    if not (REFERENCE / "ewt.vrt").exists():
        sys.exit(f"the reference corpus is missing: {REFERENCE / 'ewt.vrt'}")
    with tempfile.TemporaryDirectory(prefix="cowbird-browser-bench-") as folder:
        base = Path(folder)
        front, n1, n2 = free_ports(3)
        encoding = ewt_options(base / "data" / "ewt", base / "registry" / "ewt", partition_tokens=66_000)
        stack = DemoStack(base, front, (n1, n2), encoding, name="ewt", log_level="warning")
        stack.prepare()
        stack.start()
        try:
            measure(stack, args.rounds, args.chromium)
        finally:
            stack.stop()


def measure(stack: DemoStack, rounds: int, chromium: str) -> None:
    console = Console()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        sizes: list[int] = []
        page.on("response", lambda response: sizes.append(len(response.body())) if response.ok else None)
        loads = []
        for _ in range(rounds):
            sizes.clear()
            page.goto(stack.url, wait_until="load")
            loads.append(page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
        weight = sum(sizes)
        table = Table(title=f"Search page, EWT, median of {rounds} (Chromium, loopback)")
        for column in ("query", "hits shown", "API answer ms", "render ms"):
            table.add_column(column, justify="right")
        for query in QUERIES:
            api, render, shown = [], [], 0
            syntax = "cqp" if query.startswith("[") else "simple"
            for _ in range(rounds):
                page.fill("#q", query)
                page.check(f'input[name="syntax"][value="{syntax}"]')
                page.press("#q", "Enter")
                page.wait_for_function("document.querySelector('#progress').hidden")
                api.append(float(page.evaluate("document.body.dataset.queryMs")))
                render.append(float(page.evaluate("document.body.dataset.renderMs")))
                shown = page.locator("#kwic tbody tr").count()
            medians = (f"{statistics.median(api):.0f}", f"{statistics.median(render):.0f}")
            table.add_row(escape(query), str(shown), *medians)
        browser.close()
    console.print(f"page weight {weight:,} bytes (target < 200 KB); load {statistics.median(loads):.0f} ms "
                  "(target < 300 ms)")
    console.print(table)


if __name__ == "__main__":
    main()
