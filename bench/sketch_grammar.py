"""What the sentence's end costs a sketch grammar (issue 64): each shipped grammar's relations counted
as ``cowbird sketches build`` counts them (``count_relation``, the native engine) on the reference
corpora — penn and ud on EWT, stts on GERMAPARL — once with the queries as shipped, whose final
lookaheads are ``( [: … :] | </s> )``, and once with the bare ``[: … :]`` they had before; the
instances each form counts and the build's seconds (medians of ``--runs``, the two forms in turns,
after one run of each not timed), per grammar. ``--million N``: also penn and ud on the shuffle
corpus of N million tokens (EWT's sentences drawn at random, ``bench/encode.py``), encoded by
``cowbird encode`` into one partition in a temporary folder.

    .venv/bin/python bench/sketch_grammar.py [--runs 3] [--million 10]

Needs ``../shared/reference`` (EWT and GERMAPARL as real cwb-encode wrote them).
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import show  # noqa: E402
from bench.encode import FLAGS, shuffle_corpus  # noqa: E402
from cowbird.engines.native import NativeEngine  # noqa: E402
from cowbird.node.sketch_cli import count_relation  # noqa: E402
from cowbird.query import parse_cqp  # noqa: E402
from cowbird.query.sketch_grammar import SketchGrammar, parse_grammar, shipped_path  # noqa: E402
from tests.support import REFERENCE  # noqa: E402

CORPORA = {"penn": ("cwb", "ewt"), "ud": ("cwb", "ewt"), "stts": ("germaparl", "germaparl1386")}
"""Each grammar's corpus: the reference folder of its registry and the corpus's id."""
GUARDED = re.compile(r"\( (\[:[^\]\n]*:\]) \| </s> \)")
"""A final lookahead with the sentence's end as its alternative, as the shipped grammars write it."""


def forms(name: str) -> dict[str, SketchGrammar]:
    """The grammar as shipped ("sentence's end") and with its guarded lookaheads bare ("bare lookahead")."""
    text = shipped_path(name).read_text(encoding="utf-8")
    return {
        "sentence's end": parse_grammar(text, name),
        "bare lookahead": parse_grammar(GUARDED.sub(r"\1", text), name),
    }


def counted(engine: NativeEngine, grammar: SketchGrammar) -> tuple[int, float]:
    """Every relation's instances summed, and the seconds counting them took."""
    started = time.perf_counter()
    instances = 0
    for relation in grammar.relations:
        table = count_relation(engine, [parse_cqp(q) for q in relation.queries], grammar.attribute, relation.symmetric)
        instances += table.instances
    return instances, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--million", type=int, default=None, help="also the shuffle corpus of N million tokens")
    args = parser.parse_args()
    console = Console(stderr=True)
    rows = []
    with tempfile.TemporaryDirectory(prefix="cowbird-bench-grammar-") as scratch:
        cases = [(name, REFERENCE / folder / "registry", corpus) for name, (folder, corpus) in CORPORA.items()]
        if args.million:
            vrt = shuffle_corpus(args.million * 1_000_000)
            registry = Path(scratch) / "registry"
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "cowbird",
                    "encode",
                    "-f",
                    str(vrt),
                    "-d",
                    str(Path(scratch) / "data"),
                    "-R",
                    str(registry / "shuffle"),
                    *FLAGS,
                ],
                check=True,
            )
            cases += [("penn", registry, "shuffle"), ("ud", registry, "shuffle")]
        for name, registry, corpus in cases:
            engine = NativeEngine.open(registry, corpus)
            grammars = forms(name)
            for grammar in grammars.values():
                counted(engine, grammar)  # not timed: the corpus's files read once
            runs: dict[str, list[tuple[int, float]]] = {form: [] for form in grammars}
            for _ in range(args.runs):  # the forms in turns, so that a busy moment weighs on both
                for form, grammar in grammars.items():
                    runs[form].append(counted(engine, grammar))
            for form, timed in runs.items():
                instances = {n for n, _ in timed}
                assert len(instances) == 1, instances
                median = statistics.median(s for _, s in timed)
                rows.append([name, corpus, f"{engine.size:,}", form, f"{instances.pop():,}", f"{median:.2f}"])
    show(
        console,
        f"the shipped grammars' relations counted, sentence's end against bare lookahead (medians of {args.runs})",
        ["grammar", "corpus", "tokens", "final lookahead", "instances", "build s"],
        rows,
    )


if __name__ == "__main__":
    main()
