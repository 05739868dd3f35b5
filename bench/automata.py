"""The native engine's two simulations side by side: the 44 parity queries (the BIG50 workload) on
the EWT reference corpus, each evaluated (all hits, exact total) with ``automaton="auto"`` — the
default, where only queries whose paths can meet run on CQP's DFA — and with ``automaton="cqp"``,
every query on CQP's DFA; plus which queries the default sends to the DFA, and what deciding that
costs per query. Prints a markdown table (median of ``--runs`` interleaved runs, milliseconds).

    .venv/bin/python bench/automata.py [--runs 3]
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cli import arguments
from cowbird.engines.base import EngineOptions
from cowbird.engines.native import NativeEngine
from cowbird.engines.native.dfa import paths_may_meet, reads_labels
from cowbird.query import Meet, MuUnion, Tabular, parse_cqp
from tests.support import parity_queries, require_reference


def main() -> None:
    args = arguments(__doc__, runs=(3, "timed runs per query and simulation"))
    registry = require_reference() / "cwb" / "registry"
    engines = {name: NativeEngine.open(registry, "ewt", EngineOptions(automaton=name)) for name in ("auto", "cqp")}
    for engine in engines.values():
        engine.warm()
    print("| query | hits | default: runs on | default ms | all on CQP's DFA ms | ratio |")
    print("|---|---:|---|---:|---:|---:|")
    totals = {name: 0.0 for name in engines}
    deciding: list[float] = []
    on_dfa = 0
    for param in parity_queries():
        query_id, text = param.values[0], param.values[1]
        assert isinstance(query_id, str) and isinstance(text, str)
        parsed = parse_cqp(text)
        pattern = parsed.pattern
        assert not isinstance(pattern, Meet | MuUnion | Tabular)
        started = time.perf_counter()
        dfa = reads_labels(pattern) or paths_may_meet(pattern)
        deciding.append(time.perf_counter() - started)
        on_dfa += dfa
        times: dict[str, list[float]] = {name: [] for name in engines}
        hits = 0
        for _ in range(args.runs + 1):  # the first run of each warms up
            for name, engine in engines.items():
                started = time.perf_counter()
                hits = len(engine.evaluate(parsed))
                times[name].append(time.perf_counter() - started)
        median = {name: statistics.median(values[1:]) * 1000 for name, values in times.items()}
        for name in engines:
            totals[name] += median[name]
        print(f"| {query_id} | {hits:,} | {'DFA' if dfa else 'glushkov'} | {median['auto']:.1f} | "
              f"{median['cqp']:.1f} | {median['cqp'] / max(median['auto'], 1e-6):.2f} |", flush=True)
    print(f"| **all 44** | | {on_dfa} on the DFA | {totals['auto']:.0f} | {totals['cqp']:.0f} | "
          f"{totals['cqp'] / totals['auto']:.2f} |")
    print(f"\nDeciding which simulation runs: median {statistics.median(deciding) * 1e6:.0f} µs per query.")


if __name__ == "__main__":
    main()
