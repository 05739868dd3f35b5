"""What counting in the filters' subcorpus costs (issue 64, item 1): the analyses whose sizes, marginals
and frequencies the nodes now count in the subcorpus (distribution, dispersion, collocations, word
sketches), each without a filter and with ``text_genre~reviews`` (a sixth of the tokens), through the
real front end over two node processes (the shuffle corpus of ``--million`` million tokens, one
partition each). Each request is timed once new (the query evaluated: *first*), then again with its
hits in the nodes' cache, as when a user switches between the tabs of a search (*again*: medians of
``--runs``). Run it on another tree's code (the commit before, an archive of it) with that tree's
package folders on ``PYTHONPATH``. Then, in this process (CPU seconds, not the shared machine's
clock), what a node adds per partition: the subcorpus's stretches, a lexicon counted in them (once,
then kept) and a headword's frequency in them.

    unshare --net sh -c 'ip link set lo up && .venv/bin/python bench/filtered.py [--million 10] [--runs 5]'
"""

from __future__ import annotations

import functools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.cli import arguments  # noqa: E402
from bench.common import show, shuffle_stack  # noqa: E402
from bench.timing import timed_get  # noqa: E402
from cowbird.store.reader import CwbCorpus  # noqa: E402

FILTER = "text_genre~reviews"
"""The subcorpus timed: the shuffle corpus's reviews (EWT's genre with the most texts; a sixth of its tokens)."""

VIEWS: list[tuple[str, str, dict[str, str | int | list[str]]]] = [
    (
        'distribution of [word="the"] by text_year',
        "/api/v1/distribution",
        {"q": '[word="the"]', "syntax": "cqp", "by": "text_year"},
    ),
    ('dispersion of [word="the"] over texts', "/api/v1/dispersion", {"q": '[word="the"]', "syntax": "cqp"}),
    (
        'collocations of [lemma="go"], window 5, lemma',
        "/api/v1/collocations",
        {"q": '[lemma="go"]', "syntax": "cqp", "window": 5, "attribute": "lemma", "limit": 100},
    ),
    (
        'collocations of [word="the"], window 3, word',
        "/api/v1/collocations",
        {"q": '[word="the"]', "syntax": "cqp", "window": 3, "attribute": "word", "limit": 100},
    ),
    ("word sketch of time, modifier", "/api/v1/sketch", {"headword": "time", "relation": "modifier"}),
]


def cpu_ms(action: Callable[[], object], runs: int) -> float:
    """The median CPU time of ``action``, in ms."""
    times = []
    for _ in range(runs):
        started = time.process_time()
        action()
        times.append((time.process_time() - started) * 1000)
    return statistics.median(times)


def node_pass(registry: Path, partitions: list[str], runs: int) -> list[list[str]]:
    """Per partition, the CPU time of the node's counting in the subcorpus of ``FILTER`` (no rows when
    the code run has none: the commit before)."""
    try:
        from cowbird.engines.analyses.subcorpus import chosen
    except ImportError:
        return []
    attribute, _, pattern = FILTER.partition("~")
    filters = [(attribute, False, pattern)]
    rows = []
    for pid in partitions:
        corpus = CwbCorpus.open(registry, pid)
        lemma, word = corpus.p_attribute("lemma"), corpus.p_attribute("word")
        searched = chosen(corpus, filters)
        stretches = cpu_ms(functools.partial(chosen, corpus, filters), runs)
        first_lemma = cpu_ms(functools.partial(searched.counts, lemma), 1)
        first_word = cpu_ms(functools.partial(searched.counts, word), 1)
        kept = cpu_ms(functools.partial(searched.counts, word), runs)
        headword = cpu_ms(functools.partial(searched.frequencies, lemma, [lemma.str2id("time")]), runs)
        rows.append(
            [
                pid,
                f"{corpus.size:,}",
                f"{searched.tokens:,}",
                f"{stretches:,.1f}",
                f"{first_lemma:,.0f}",
                f"{first_word:,.0f}",
                f"{kept:,.3f}",
                f"{headword:,.2f}",
            ]
        )
    return rows


def main() -> None:
    args = arguments(__doc__, million=10, runs=5)
    console = Console(stderr=True)
    stack, _ = shuffle_stack("cowbird-bench-filtered-", {"node_timeout": 120.0, "deadline": 120.0}, args.million, 2)
    stack.prepare()  # (the demo's configuration: the penn sketch grammar)
    corpus = f"big{args.million}"
    rows = []
    stack.start()
    try:
        with httpx.Client(base_url=stack.url, timeout=300) as client:
            for name, path, params in VIEWS:
                cells = []
                for filters in ([], [FILTER]):
                    asked: dict[str, str | int | list[str]] = {"corpus": corpus, **params, "filter": filters}
                    first, found = timed_get(client, path, asked)  # the query evaluated, its hits kept
                    took = statistics.median(timed_get(client, path, asked)[0] for _ in range(args.runs))
                    size = found.get("tokens")
                    cells += [f"{first:,.0f}", f"{took:,.0f}", "-" if size is None else f"{size:,}"]
                rows.append([name, *cells])
        passes = node_pass(stack.base / "registry", stack.partitions, args.runs)
    finally:
        stack.stop()
    show(
        console,
        f"Analyses without and with filter={FILTER} on big{args.million} (two partitions), ms, medians of {args.runs}",
        ["view", "no filter: first", "again", "tokens", "filtered: first", "again", "tokens"],
        rows,
    )

    if passes:
        show(
            console,
            f"A node's counting in the subcorpus of {FILTER}, CPU ms per partition (medians of {args.runs})",
            [
                "partition",
                "tokens",
                "in the subcorpus",
                "stretches",
                "lemmas counted",
                "words counted",
                "words again (kept)",
                "frequency of time",
            ],
            passes,
        )


if __name__ == "__main__":
    main()
