"""Korp's comparative views on BIG50 (issue 52): for each parity query whose preview answers in at most
100 ms alone, each view's time through the real front end over two node processes (one 25-MT
partition each) — several corpora at once (BIG50's two halves as two corpora, ``big50a,big50b``), the
trend per year of ``text_year``, the comparison of the query's hits in two genres by word, the query
read into the builder's boxes, and the preview sorted by GDEX (good examples first). Target: each
view at most 1 s. The view is asked right after the query's own preview (its hits in the nodes'
cache, as in the browser), once; medians of ``--runs`` separate runs.

    .venv/bin/python bench/comparative.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import httpx
from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import big50_stack, show  # noqa: E402
from bench.timing import timed_get  # noqa: E402
from cowbird.commands.demo import DemoStack  # noqa: E402
from cowbird.core.manifest import Manifest  # noqa: E402
from tests.support import PARITY_QUERIES  # noqa: E402

PREVIEW_MS = 100.0
"""The parity queries timed: those whose preview answers in at most this long alone."""
TARGET_MS = 1000.0


def halves(stack: DemoStack) -> None:
    """BIG50's two partitions also as two corpora of one partition each (``big50a``, ``big50b``)."""
    manifest = Manifest.load(next(stack.base.rglob("*.manifest.json")))
    config = stack.base / "cowbird.toml"
    text = config.read_text(encoding="utf-8")
    urls = {pid: f"http://127.0.0.1:{port}" for port, served in zip(stack.node_ports, stack.served, strict=True)
            for pid in served}
    for letter, partition in zip("ab", manifest.partitions, strict=True):
        half = manifest.model_copy(update={"corpus": f"big50{letter}", "size": partition.size, "partitions": [
            partition.model_copy(update={"offset": 0})]})
        path = stack.base / f"big50{letter}.manifest.json"
        half.write(path)
        text += (f'\n[[corpora]]\nname = "big50{letter}"\naccess = "public"\nmanifest = "{path}"\n\n'
                 f'[corpora.nodes]\n{partition.id} = {json.dumps([urls[partition.id]])}\n')
    config.write_text(text, encoding="utf-8")


def views(q: str) -> list[tuple[str, str, dict[str, str | int | list[str]]]]:
    search: dict[str, str | int | list[str]] = {"q": q, "syntax": "cqp"}
    return [
        ("two corpora", "/api/v1/query", {"corpus": "big50a,big50b", **search, "limit": 100}),
        ("trend per year", "/api/v1/trend", {"corpus": "big50", **search, "by": "text_year"}),
        ("compare two genres", "/api/v1/compare", {"corpus": "big50", **search, "filter": "text_genre~news",
                                                   "other_filter": "text_genre~weblog", "by": "word"}),
        ("builder", "/api/v1/builder", {"q": q}),
        ("GDEX sort", "/api/v1/query", {"corpus": "big50", **search, "sort": "gdex", "limit": 100}),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    console = Console(stderr=True)
    stack, _ = big50_stack("cowbird-bench-comparative-", {"node_timeout": 120.0, "deadline": 120.0})
    stack.prepare()
    halves(stack)
    queries = [line.split("\t", 1) for line in PARITY_QUERIES.read_text(encoding="utf-8").splitlines()
               if line.startswith("q")]
    previews: dict[str, list[float]] = {}
    times: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.runs):
        stack.start()
        try:
            with httpx.Client(base_url=stack.url, timeout=300) as client:
                timed_get(client, "/api/v1/query", {"corpus": "big50", "q": "the", "limit": 100})  # nodes warm
                for qid, q in queries:
                    asked = {"corpus": "big50", "q": q, "syntax": "cqp", "limit": 100}
                    previews.setdefault(qid, []).append(timed_get(client, "/api/v1/query", asked)[0])
                    if previews[qid][-1] > PREVIEW_MS * 3:
                        continue  # surely not one of the queries timed: spare the views
                    for name, path, params in views(q):
                        try:
                            times.setdefault((qid, name), []).append(timed_get(client, path, params)[0])
                        except RuntimeError as error:
                            console.print(f"{qid} {name}: {error}")
        finally:
            stack.stop()
    rows = []
    met = total = 0
    for qid, q in queries:
        preview = statistics.median(previews[qid])
        if preview > PREVIEW_MS:
            continue
        cells = []
        for name, _, _ in views(q):
            measured = times.get((qid, name))
            if not measured:
                cells.append("refused")
                continue
            ms = statistics.median(measured)
            total += 1
            met += ms <= TARGET_MS
            cells.append(f"{ms:,.0f}")
        rows.append([qid, q, f"{preview:,.0f}", *cells])
    show(console, f"Comparative views on BIG50 (two partitions), ms, medians of {args.runs} runs",
         ["query", "CQP", "preview alone", *(name for name, _, _ in views(""))], rows)
    print(f"\n{met} of {total} views within {TARGET_MS:,.0f} ms, over {len(rows)} parity queries whose preview "
          f"takes at most {PREVIEW_MS:,.0f} ms")


if __name__ == "__main__":
    main()
