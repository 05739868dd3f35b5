"""What explaining GDEX costs (issue 64, item 5): a GDEX-sorted preview (100 hits) and a GDEX-sorted
export on EWT (the reference corpus, encoded by cowbird in two partitions, one node process each,
behind a real front end), through the code before the change and after it, side by side. Since the
change, every hit of such an answer carries its score and rule values: the front end reads the same
sorted hits once more with their sentences and recomputes each score (``cowbird.frontend.gdex``).
Both stacks run at once on the same machine; their requests are interleaved (before, after, before,
…), after one warm-up request of each kind; medians of ``--runs``, in ms. The answers' hits must be
the same on both sides (``same hits``).

    git archive <commit before> | tar -x -C /tmp/before
    .venv/bin/python bench/gdex_explained.py --before /tmp/before [--runs 7]
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pandas as pd
from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import show  # noqa: E402
from cowbird.store import Encoder  # noqa: E402
from tests.cluster import Cluster  # noqa: E402
from tests.support import ewt_options  # noqa: E402

QUERIES: list[tuple[str, str, dict[str, str | int]]] = [
    ("preview", '[lemma="house|home"]', {"limit": 100}),
    ("preview", '[pos="NNS"]', {"limit": 100}),
    ("preview, offset 1,000", '[pos="NNS"]', {"limit": 100, "offset": 1_000}),
    ("export", '[lemma="house|home"]', {"format": "csv", "limit": 10_000}),
    ("export", '[pos="JJ"] [pos="NNS"]', {"format": "csv", "limit": 10_000}),
]
"""(view, query, parameters): each asked with sort=gdex."""
SOURCE_ROOTS = ["query_lang", "backend_node", "frontend_api", "web", "tools/calf"]
"""The folders of a tree whose ``cowbird`` packages a process imports (``PYTHONPATH``)."""


@contextmanager
def stack(base: Path, registry: Path, manifest: Path, ids: list[str], tree: Path | None) -> Iterator[str]:
    """A front end and two nodes over EWT, running the code of ``tree`` (None: this one)."""
    before = os.environ.pop("PYTHONPATH", None)
    if tree is not None:
        os.environ["PYTHONPATH"] = os.pathsep.join(str(tree / root) for root in SOURCE_ROOTS)
    try:
        cluster = Cluster(base, registry, manifest, "ewt", [[pid] for pid in ids]).start()
    finally:
        os.environ.pop("PYTHONPATH", None)
        if before is not None:
            os.environ["PYTHONPATH"] = before
    try:
        yield cluster.url
    finally:
        cluster.close()


def hits_of(view: str, answer: httpx.Response) -> list[tuple[int, int]]:
    assert answer.status_code == 200, answer.text
    if view == "export":
        table = pd.read_csv(io.StringIO(answer.text), keep_default_na=False)
        return list(zip(table["position"], table["matchend"], strict=True))
    return [(hit["position"], hit["matchend"]) for hit in answer.json()["hits"]]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="A tree of the code before (git archive).")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory(prefix="gdex-bench-") as folder:
        base = Path(folder)
        result = Encoder(ewt_options(base / "data", base / "registry" / "ewt", partition_tokens=130_000)).run()
        assert result.manifest is not None
        manifest = result.manifest
        ids = [p.id for p in result.partitions]
        (base / "old").mkdir()
        (base / "new").mkdir()
        with stack(base / "old", base / "registry", manifest, ids, args.before.resolve()) as old, \
                stack(base / "new", base / "registry", manifest, ids, None) as new:
            rows = []
            for view, q, extra in QUERIES:
                path = "/api/v1/export" if view == "export" else "/api/v1/query"
                params: dict[str, str | int] = {"corpus": "ewt", "q": q, "syntax": "cqp", "sort": "gdex", **extra}
                times: dict[str, list[float]] = {"before": [], "after": []}
                seen: dict[str, list[tuple[int, int]]] = {}
                with httpx.Client(timeout=300) as http:
                    for side, url in (("before", old), ("after", new)):  # warm-up: the nodes' caches
                        seen[side] = hits_of(view, http.get(url + path, params=params))
                    for _ in range(args.runs):
                        for side, url in (("before", old), ("after", new)):
                            started = time.perf_counter()
                            answer = http.get(url + path, params=params)
                            times[side].append((time.perf_counter() - started) * 1000)
                            assert hits_of(view, answer) == seen[side]
                before, after = statistics.median(times["before"]), statistics.median(times["after"])
                rows.append([view, f"`{q}`", f"{len(seen['after']):,}", f"{before:,.0f}", f"{after:,.0f}",
                             f"{after / before:.2f}", "yes" if seen["before"] == seen["after"] else "NO"])
    show(console, "GDEX-sorted answers, before and after each hit is explained (ms, medians)",
         ["view", "query", "hits", "before", "after", "after / before", "same hits"], rows)


if __name__ == "__main__":
    main()
