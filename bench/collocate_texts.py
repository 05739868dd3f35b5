"""What counting each collocate's texts costs (issue 65, item 10): EWT from ``../shared/reference`` cut
at text boundaries into five partitions, each partition's ``cooccurrence`` + ``spill`` (the node's
work for ``/api/v1/collocations``) timed with the texts counted and without (``TEXT`` pointed at an
s-attribute the corpus does not have, as for a corpus without ``text``), in the same run, and the
front end's merge of the texts over the partitions (``collocate_texts``) on their answers.

Timed per call, summed over the five partitions, medians of ``--runs`` after one warm-up; windows of
5 each side, ``within`` none (windows spill past the cuts) and ``text``. No front end, no HTTP: the
node's functions as ``NodeApi`` calls them.

    .venv/bin/python bench/collocate_texts.py [--runs 5]
"""

from __future__ import annotations

import argparse
import functools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import ewt_in_partitions
from bench.timing import median_ms
from cowbird.core.analysis_merge import TextPart, collocate_texts, spilled
from cowbird.engines.analyses import cooccurrence as module
from cowbird.engines.analyses.spans import NO_DEADLINE
from cowbird.engines.native import NativeEngine

QUERIES = ['[upos="PROPN"]', '[upos="PUNCT"]', '[word="the"] [upos="NOUN"]']


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with ewt_in_partitions("cowbird-texts-") as (base, result):
        engines = [NativeEngine.open(base / "registry", p.id) for p in result.partitions]
        print(f"EWT in {len(engines)} partitions\n")
        print("| node work (5 partitions), window 5 | without texts | with texts | front end's merge of the texts |")
        print("|---|---:|---:|---:|")
        for query in QUERIES:
            hits = [e.run(query).matches for e in engines]  # type: ignore[attr-defined]
            for within in (None, "text"):
                answers: list[tuple[module.Cooccurrence, module.Spill]] = []

                def node(
                    hits: list[object] = hits,
                    within: str | None = within,
                    answers: list[tuple[module.Cooccurrence, module.Spill]] = answers,
                ) -> None:
                    answers.clear()
                    for e, m in zip(engines, hits, strict=True):
                        answers.append(
                            (
                                module.cooccurrence(NO_DEADLINE, e.store, m, "word", 5, 5, within, 500_000),  # type: ignore[arg-type]
                                module.spill(NO_DEADLINE, e.store, m, "word", 5, 5, within),  # type: ignore[arg-type]
                            )
                        )

                with_texts = median_ms(node, args.runs)
                parts = [
                    TextPart(
                        p.offset,
                        p.size,
                        True,
                        c.text_regions,
                        c.first_text_continued,
                        c.last_text_continues,
                        dict(zip(c.values, c.texts, strict=True)),
                        dict(zip(c.values, c.edge_texts, strict=True)),
                        list(zip(s.positions, s.values, s.texts, strict=True)),
                    )
                    for p, (c, s) in zip(result.partitions, answers, strict=True)
                ]
                kept: set[int] = set()
                spilled([(s.positions, s.values, s.occupied) for _, s in answers], [], kept)
                merge = median_ms(functools.partial(collocate_texts, parts, kept), args.runs)
                texts = module.TEXT
                module.TEXT = "no_such_attribute"
                try:
                    without = median_ms(node, args.runs)
                finally:
                    module.TEXT = texts
                print(
                    f"| collocations of {query}, within {within or 'none'} | {without:,.1f} ms | "
                    f"{with_texts:,.1f} ms | {merge:,.1f} ms |"
                )


if __name__ == "__main__":
    main()
