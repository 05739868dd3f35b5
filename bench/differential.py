"""A recorded differential run: generated queries on EWT, compressed EWT and GERMAPARL1386, each
compared hit by hit (match, matchend, target, keyword) with real CQP 3.4.16.

Runs the generators of ``tests/engine/test_differential.py`` with ``--examples`` queries per
corpus (the test suite runs 80 on EWT, 40 on each other corpus and 20 marked runs), and prints one
row per corpus: queries drawn, how many were compared, how many both engines refused, how many had
no verdict (CQP or the native engine gave up within its time limit), the time, and whether every
one agreed. Needs the reference
data (``../shared/reference``) and real CQP (``build-cqp.sh``).

    .venv/bin/python bench/differential.py [--examples 1000] [--corpus EWT --corpus GERMAPARL1386]
        [--cqp-seconds 20] [--seed N]

``--corpus`` (repeatable) runs only those corpora, so that several can run side by side.
``--seed`` fixes hypothesis's seed: runs with different seeds draw different queries, so that a long
run can be made of shorter ones. ``--cqp-seconds`` is how long real CQP may take for one query before
it counts as no verdict (the tests' 20 s by default); the columns after "no verdict" say why each had
none.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = {
    "EWT": ("test_native_engine_agrees_with_real_cqp", 1),
    "EWT, compressed": ("test_native_engine_on_a_compressed_corpus_agrees_with_real_cqp", 2),
    "GERMAPARL1386": ("test_native_engine_on_german_agrees_with_real_cqp", 2),
    "EWT, marked runs": ("test_anchors_and_labels_on_repeated_items_agree_with_real_cqp", 4),
}
"""Corpus: the test, and the factor its share of COWBIRD_DIFF_EXAMPLES is divided by."""


def run(test: str, examples: int, cqp_seconds: float, seed: int | None = None,
        ) -> tuple[bool, dict[str, int], float, str]:
    env = {**os.environ, "COWBIRD_DIFF_EXAMPLES": str(examples), "COWBIRD_DIFF_CQP_SECONDS": str(cqp_seconds),
           "COWBIRD_DIFF_BUDGET": "0",  # every example is run: the suite's time budget is for CI
           **({"COWBIRD_DIFF_SEEDED": "1"} if seed is not None else {})}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--hypothesis-show-statistics",
         *([f"--hypothesis-seed={seed}"] if seed is not None else []), f"tests/engine/test_differential.py::{test}"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )
    elapsed = time.perf_counter() - started
    events: dict[str, int] = {}
    calls = re.search(r"(\d+) passing, (\d+) failing, and (\d+) invalid", done.stdout)
    drawn = int(calls.group(1)) if calls else 0
    # hypothesis gives each event's share of every test case, the invalid ones (drawn and rejected) too
    cases = sum(int(n) for n in calls.groups()) if calls else 0
    for share, name in re.findall(r"\* ([\d.]+)%, (.+)", done.stdout):
        events[name.strip()] = round(float(share) * cases / 100)
    events["drawn"] = drawn
    failure = "" if done.returncode == 0 else "\n".join(
        line for line in done.stdout.splitlines()
        if line.startswith("E  ") or "Falsifying" in line or "Timeout" in line or line.startswith("FAILED")
    )[:2000] or done.stdout[-2000:]  # whatever ended it, never a silent "no"
    return done.returncode == 0, events, elapsed, failure


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=1000, help="generated queries per corpus")
    parser.add_argument("--corpus", action="append", choices=list(TESTS), help="run only this corpus (repeatable)")
    parser.add_argument("--cqp-seconds", type=float, default=20.0,
                        help="real CQP's time for one query before it is no verdict")
    parser.add_argument("--seed", type=int, default=None,
                        help="hypothesis's seed: runs with different seeds draw different queries, so that a "
                             "long run can be made of shorter ones (in different sessions)")
    args = parser.parse_args()
    print(f"real CQP's limit per query: {args.cqp_seconds:g} s" + (f"; seed {args.seed}" if args.seed is not None
                                                                     else ""))
    print("| corpus | queries | compared | both refuse | no verdict | CQP: infinite loop | CQP: over the limit "
          "| native: refused the work | seconds | all agree |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    failures = []
    for corpus, (test, factor) in TESTS.items():
        if args.corpus and corpus not in args.corpus:
            continue
        ok, events, elapsed, failure = run(test, args.examples * factor, args.cqp_seconds, args.seed)
        loops = events.get("no verdict: CQP aborted the query (infinite loop)", 0)
        late = sum(n for name, n in events.items() if name.startswith("no verdict: cqp gave no answer"))
        refused = events.get("no verdict: the native engine refused the work", 0)
        print(f"| {corpus} | {events['drawn']:,} | {events.get('compared', 0):,} | {events.get('both refuse', 0):,} | "
              f"{events['drawn'] - events.get('compared', 0) - events.get('both refuse', 0):,} | {loops:,} | "
              f"{late:,} | {refused:,} | {elapsed:.0f} | {'yes' if ok else '**no**'} |", flush=True)
        if failure:
            failures.append(f"{corpus}:\n{failure}")
    for failure in failures:
        print(f"\n{failure}")


if __name__ == "__main__":
    main()
