"""What reading across the cuts between partitions costs (issue 64, item 2): EWT from
``../shared/reference`` cut at text boundaries into five partitions, each partition's node-side work
timed with its ``neighbours.json`` (n-grams completed across the cut, collocation windows spilling
past the edges, KWIC lines reading on) and without it (the same partitions, the files moved aside:
as a corpus encoded before), in the same run, with the same answers checked where they must agree.

Timed per call, summed over the five partitions, medians of ``--runs`` after one warm-up:
``ngram_table`` + ``ngram_rows`` (within=none, top 100), ``cooccurrence`` + ``spill`` (within none),
``build_lines`` of 100 hits at the partitions' first and last tokens (context 50; without the
neighbours those lines are shorter) and, for comparison, of 100 hits inside. Also the size of the
files. No front end, no HTTP: the node's functions as ``NodeApi`` calls them.

    .venv/bin/python bench/partition_edges.py [--runs 5]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import ewt_in_partitions
from bench.timing import median_ms
from cowbird.engines.analyses.cooccurrence import cooccurrence, spill
from cowbird.engines.analyses.ngrams import ngram_rows, ngram_table
from cowbird.engines.analyses.spans import NO_DEADLINE
from cowbird.engines.base import Context, Hit
from cowbird.engines.native import NativeEngine
from cowbird.engines.results import build_lines
from cowbird.store.neighbours import NEIGHBOURS_FILE

QUERIES = ['[upos="PROPN"]', '[upos="PUNCT"]', '[word="the"] [upos="NOUN"]']


def measure(registry: Path, ids: list[str], runs: int) -> dict[str, tuple[float, object]]:
    """Per case: the median of the summed time over the partitions, and what they answered."""
    engines = [NativeEngine.open(registry, pid) for pid in ids]  # fresh: the neighbours are read once each
    results: dict[str, tuple[float, object]] = {}
    for n in (2, 3):
        answers: list[object] = []

        def ngrams(n: int = n, answers: list[object] = answers) -> None:
            answers.clear()
            for e in engines:
                table = ngram_table(NO_DEADLINE, e.store, "word", n, None, [], 50_000_000)
                rows, _, _ = ngram_rows(NO_DEADLINE, table, None, False, None, 100, 500_000, [])
                answers.append((table.ngrams, len(table.strays)))

        results[f"{n}-grams, within=none, top 100"] = (median_ms(ngrams, runs), list(answers))
    for query in QUERIES:
        hits = [e.run(query).matches for e in engines]  # type: ignore[attr-defined]
        found: list[object] = []

        def collocations(hits: list[object] = hits, found: list[object] = found) -> None:
            found.clear()
            for e, m in zip(engines, hits, strict=True):
                counted = cooccurrence(NO_DEADLINE, e.store, m, "word", 5, 5, None, 500_000)  # type: ignore[arg-type]
                edge = spill(NO_DEADLINE, e.store, m, "word", 5, 5, None)  # type: ignore[arg-type]
                found.append((counted.context_tokens, len(edge.positions)))

        results[f"collocations of {query}, window 5"] = (median_ms(collocations, runs), list(found))

    def lines() -> None:
        for e in engines:
            size = e.store.size
            edge = [Hit(k, k) for k in [*range(50), *range(size - 50, size)]]
            build_lines(e.store, edge, Context(tokens=50), ["upos"], [])

    results["100 KWIC lines at the edges, context 50"] = (median_ms(lines, runs), None)

    def middle() -> None:  # lines of the same length where no edge is near: what any such line costs
        for e in engines:
            build_lines(e.store, [Hit(k, k) for k in range(1000, 1100)], Context(tokens=50), ["upos"], [])

    results["100 KWIC lines inside, context 50 (for comparison)"] = (median_ms(middle, runs), None)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with ewt_in_partitions("cowbird-edges-") as (base, result):
        ids = [p.id for p in result.partitions]
        files = sorted((base / "data").rglob(NEIGHBOURS_FILE))
        sizes = [f.stat().st_size for f in files]
        print(f"EWT in {len(ids)} partitions; {NEIGHBOURS_FILE}: {min(sizes):,}–{max(sizes):,} bytes each\n")
        carried = measure(base / "registry", ids, args.runs)
        for f in files:
            f.rename(f.with_name(f.name + ".aside"))
        bare = measure(base / "registry", ids, args.runs)
        print("| node work (5 partitions) | without neighbours | with neighbours | what the cuts add |")
        print("|---|---:|---:|---|")
        for case, (ms, answer) in carried.items():
            before, answered = bare[case]
            print(f"| {case} | {before:,.1f} ms | {ms:,.1f} ms | {added(answer, answered)} |")


def added(carried: object, bare: object) -> str:
    """What the partitions answered with their neighbours beyond what they answered without: n-grams
    (their count, those with a token only the next partition holds) or window positions past the edges."""
    if not isinstance(carried, list) or not isinstance(bare, list):
        return "—"
    more = sum(a[0] for a in carried) - sum(b[0] for b in bare)
    beyond = sum(a[1] for a in carried)
    if more:
        return f"+{more:,} n-grams across the cuts ({beyond:,} with a token of the next partition only)"
    return f"{beyond:,} window positions past the edges (before the front end's dedup)"

if __name__ == "__main__":
    main()
