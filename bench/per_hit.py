"""The cost per hit of each estimated operation (issue 69's table of measured costs, ``per_hit`` in
``frontend/operations.py``): each operation is timed alone on the demo for queries of growing hit counts
(median of ``--repeat`` after a warm-up, the query's result cached on the nodes as it is when an
operation follows its preview), and the seconds per hit are the least-squares slope over the hits.

    .venv/bin/python bench/per_hit.py [--repeat 5] [--url URL --token TOKEN]

Without ``--url`` it starts the demo as ``make demo`` does (the generated 2-million-token web corpus).
Prints, as Markdown, each operation's time per query and its slope and intercept."""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

QUERIES = ["teacher", "good", "house", "^house"]
"""2,897 / 19,847 / 73,438 / 125,405 hits on the demo corpus."""
OPERATIONS: dict[str, tuple[str, dict[str, str | int]]] = {
    "frequency": ("/api/v1/frequency", {"by": "word", "on": "match[-3]..match[3]"}),
    "distribution": ("/api/v1/distribution", {"by": "s_id"}),
    "dispersion": ("/api/v1/dispersion", {}),
    "collocations": ("/api/v1/collocations", {"attribute": "lemma"}),
    "export": ("/api/v1/export", {"limit": 10_000}),
}


def timed(client: httpx.Client, path: str, params: dict[str, str | int], repeat: int) -> float:
    client.get(path, params=params).raise_for_status()  # warm: the query's result on the nodes
    took = []
    for _ in range(repeat):
        started = time.perf_counter()
        client.get(path, params=params).raise_for_status()
        took.append(time.perf_counter() - started)
    return statistics.median(took)


def slope(points: list[tuple[int, float]]) -> tuple[float, float]:
    mean_x = sum(x for x, _ in points) / len(points)
    mean_y = sum(y for _, y in points) / len(points)
    per = sum((x - mean_x) * (y - mean_y) for x, y in points) / sum((x - mean_x) ** 2 for x, _ in points)
    return per, mean_y - per * mean_x


def measure(url: str, token: str | None, repeat: int) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=url, headers=headers, timeout=300) as client:
        hits = {q: client.get("/api/v1/estimate", params={"corpus": "web", "q": q}).json()["hits"] for q in QUERIES}
        print("| operation | " + " | ".join(f"{q} ({hits[q]:,} hits)" for q in QUERIES) +
              " | per hit | fixed |")
        print("|---|" + "---:|" * (len(QUERIES) + 2))
        for name, (path, extra) in OPERATIONS.items():
            points = []
            for q in QUERIES:
                handled = min(hits[q], int(extra.get("limit", hits[q])))
                points.append((handled, timed(client, path, {"corpus": "web", "q": q, **extra}, repeat)))
            per, fixed = slope(points)
            print(f"| {name} | " + " | ".join(f"{s * 1000:,.0f} ms" for _, s in points) +
                  f" | {per * 1e6:.2f} µs | {fixed * 1000:,.0f} ms |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--url")
    parser.add_argument("--token")
    args = parser.parse_args()
    if args.url:
        measure(args.url, args.token, args.repeat)
        return
    from tests.support import running_demo

    with tempfile.TemporaryDirectory(prefix="cowbird-per-hit-") as folder, \
            running_demo(Path(folder), generated=True) as demo:
        measure(demo.url, None, args.repeat)


if __name__ == "__main__":
    main()
