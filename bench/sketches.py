"""Word sketch benchmark (issue 51): BIG50 in two partitions (two node processes) behind the front
end with the ``penn`` grammar — a word sketch of a frequent and of a rare lemma, a sketch difference
and a thesaurus entry. First without tables, once: the first sketch makes each node count every
relation from its queries (then it keeps them) and the others follow on the same nodes. Then after
``cowbird sketches build`` (tables mapped from disk), each request on freshly started nodes (the
first request) and again, medians of ``--runs``; and the build itself: its time beside the
encoder's for the same partitions, and its peak memory. Node calls may take ``[nodes] timeout``
(300 s here, and so is the deadline: counting every relation from the queries takes longer
than the default 60 s).

    .venv/bin/python bench/sketches.py [--runs 3] [--markdown] [--million 1000]

``--million N``: the shuffle corpus of N million tokens in one partition instead (the issue's 1-GT
figures: ``--million 1000``, about 20 GB of VRT kept in ``bench/data`` and 25 GB while it runs; about
an hour and a half on two cores): ``cowbird encode`` of it (time and peak memory), ``cowbird sketches
build`` (the same), then one node process serving it behind the front end, each request first and
again as above. No run without tables: on a partition this large the node refuses to count a
relation's hits on the fly and says to build the tables.
``--encoded REGISTRY`` (with ``--million``): the corpus encoded already in that registry (its encode not
timed again), its tables built anew (``--rebuild``), then served as above.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import ServedStack, big50_stack, show  # noqa: E402
from bench.encode import FLAGS, Measured, run_sampled, shuffle_corpus  # noqa: E402
from bench.timing import timed_get  # noqa: E402
from cowbird.commands.demo import DemoStack  # noqa: E402
from cowbird.store.reader import CwbCorpus  # noqa: E402


@dataclass(frozen=True)
class Case:
    name: str
    target_ms: float
    path: str
    params: dict[str, str | int]


def cases(rare: str, one_gt: bool = False) -> list[Case]:
    """The requests timed and their targets (at 1 GT a word sketch's is 2 s, the others as on BIG50)."""
    sketch_ms = (2000, 2000) if one_gt else (1000, 300)
    return [
        Case("word sketch of make (frequent)", sketch_ms[0], "/api/v1/sketch", {"headword": "make"}),
        Case("word sketch of time (frequent)", sketch_ms[0], "/api/v1/sketch", {"headword": "time"}),
        Case(f"word sketch of {rare} (rare)", sketch_ms[1], "/api/v1/sketch", {"headword": rare}),
        Case("sketch difference of house and home", 1500, "/api/v1/sketchdiff", {"headword": "house", "other": "home"}),
        Case("thesaurus entry of house", 1000, "/api/v1/thesaurus", {"headword": "house"}),
        Case("thesaurus entry of time", 1000, "/api/v1/thesaurus", {"headword": "time"}),
    ]


def rare_lemma(registry: Path, partition: str) -> str:
    """A lemma of about a hundred occurrences in 25 million tokens (two per million: a rare
    headword's sketch): 80 to 120 in a partition of BIG50, 3,200 to 4,800 in one of a billion."""
    corpus = CwbCorpus.open(registry, partition)
    lemma = corpus.p_attribute("lemma")
    scale = max(1.0, corpus.size / 25_000_000)
    low, high = 80 * scale, 120 * scale
    for i in range(lemma.lexicon_size):
        value = lemma.id2str(i)
        if low <= lemma.frequency(i) <= high and value.isalpha() and value.islower() and len(value) > 4:
            return value
    sys.exit(f"no lemma of {low:,.0f} to {high:,.0f} occurrences in {partition}: no rare headword to time")


def timed(client: httpx.Client, case: Case, corpus: str = "big50") -> tuple[float, dict[str, object]]:
    """The case on ``corpus``: the ms until its answer, and the answer (complete)."""
    took, body = timed_get(client, case.path, {"corpus": corpus, **case.params}, case.params)
    assert body["complete"], body
    return took, body


def measure(stack: DemoStack, case: Case, runs: int, corpus: str = "big50") -> tuple[float, float, dict[str, object]]:
    """The first request on freshly started nodes and the same again: medians over ``runs``."""
    first, again = [], []
    body: dict[str, object] = {}
    for _ in range(runs):
        stack.start()
        try:
            with httpx.Client(base_url=stack.url, timeout=600) as client:
                new, body = timed(client, case, corpus)
                second, _ = timed(client, case, corpus)
            first.append(new)
            again.append(second)
        finally:
            stack.stop()
    return statistics.median(first), statistics.median(again), body


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--markdown", action="store_true", help="also print the tables as Markdown")
    parser.add_argument("--million", type=int, default=None,
                        help="the shuffle corpus of this many million tokens in one partition (1000: the 1-GT run)")
    parser.add_argument("--encoded", type=Path, default=None,
                        help="with --million: the registry holding big<N> encoded already (its tables built anew)")
    args = parser.parse_args()
    console = Console(stderr=True)
    if args.million is not None:
        one_partition(console, args.million, args.runs, args.encoded)
        return
    stack, options = big50_stack("cowbird-bench-sketch-", {"node_timeout": 300.0, "deadline": 300.0})
    started = time.perf_counter()
    stack.prepare()  # encodes BIG50 into two partitions (the demo's configuration names the penn grammar)
    encoded = time.perf_counter() - started
    console.print(f"encoded BIG50 in {encoded:.1f} s")
    registry = options.registry_file.parent
    rare = rare_lemma(registry, stack.partitions[0])
    rows = []
    stack.start()  # without tables: the first request counts every relation, the rest read what was kept
    try:
        with httpx.Client(base_url=stack.url, timeout=900) as client:
            for case in cases(rare):
                took, _ = timed(client, case)
                console.print(f"{case.name} (no tables, nodes kept what they counted): {took:.0f} ms")
                rows.append([case.name, "no tables: counted from the queries on first use", f"{took:,.0f}", "-",
                             f"{case.target_ms:,.0f}", "-", "-"])
    finally:
        stack.stop()
    manifest = next(stack.base.rglob("*.manifest.json"))
    build = run_sampled([sys.executable, "-m", "cowbird", "sketches", "build", "-r", str(registry),
                         "--grammar", "penn", "--manifest", str(manifest)])
    console.print(f"built the tables in {build.seconds:.1f} s, peak {build.peak:,.0f} MB")
    for case in cases(rare):
        first, again, body = measure(stack, case, args.runs)
        what = body.get("rows", body.get("relations"))
        size = len(what) if isinstance(what, list) else 0
        console.print(f"{case.name} (tables): {first:.0f} / {again:.0f} ms")
        rows.append([case.name, "saved tables", f"{first:,.0f}", f"{again:,.0f}", f"{case.target_ms:,.0f}",
                     "yes" if first <= case.target_ms else "no", f"{size}"])
    show(console, "Word sketches on BIG50 (two partitions, two node processes, penn grammar)",
         ["request", "relations", "first request ms", "again ms", "target ms", "met", "rows/relations"], rows)
    show(console, "Building the tables", ["step", "seconds", "peak MB"],
         [["cowbird encode (two partitions)", f"{encoded:,.1f}", "-"],
          ["cowbird sketches build --grammar penn", f"{build.seconds:,.1f}", f"{build.peak:,.0f}"]])
    subprocess.run(["rm", "-rf", str(stack.base)], check=False)



def one_partition(console: Console, million: int, runs: int, encoded_registry: Path | None = None) -> None:
    """The shuffle corpus of ``million`` MT encoded into one partition, its tables built, one node
    process serving it behind the front end: each step's time and memory, each request first and
    again. ``encoded_registry``: a registry holding it encoded already (the encode is not timed again;
    the tables are built anew, ``--rebuild``)."""
    name = f"big{million}"
    base = Path(tempfile.mkdtemp(prefix="cowbird-bench-sketch-one-", dir=ROOT / "bench" / "data"))
    registry = encoded_registry or base / "registry"
    try:
        encoded = None
        if encoded_registry is None:
            vrt = shuffle_corpus(million * 1_000_000)
            encoded = run_sampled([sys.executable, "-m", "cowbird", "encode", "-f", str(vrt), "-d",
                                   str(base / "data"), "-R", str(registry / name), *FLAGS])
            console.print(f"encoded {vrt.name} in {encoded.seconds:.1f} s, {memory(encoded)}")
        built = run_sampled([sys.executable, "-m", "cowbird", "sketches", "build", "-r", str(registry),
                             "--grammar", "penn", "--rebuild", name])
        console.print(f"built the tables in {built.seconds:.1f} s, {memory(built)}")
        rare = rare_lemma(registry, name)
        stack = ServedStack(registry, name, {"node_timeout": 300.0, "deadline": 300.0}, sketch_grammar="penn")
        stack.prepare()
        rows = []
        for case in cases(rare, one_gt=million >= 1000):
            first, again, body = measure(stack, case, runs, name)
            what = body.get("rows", body.get("relations"))
            console.print(f"{case.name}: {first:.0f} / {again:.0f} ms")
            rows.append([case.name, f"{first:,.0f}", f"{again:,.0f}", f"{case.target_ms:,.0f}",
                         "yes" if first <= case.target_ms else "no", f"{len(what) if isinstance(what, list) else 0}"])
        show(console, f"Word sketches on {name} (one partition, one node process, penn grammar, saved tables)",
             ["request", "first request ms", "again ms", "target ms", "met", "rows/relations"], rows)
        steps = ([("cowbird encode", encoded)] if encoded is not None else []) + [
            ("cowbird sketches build --grammar penn", built)]
        show(console, f"Building the tables of {name}",
             ["step", "seconds", "peak MB (kernel: with mapped files)", "own MB (RssAnon)", "mapped MB (RssFile)"],
             [[step, f"{m.seconds:,.1f}", f"{m.peak:,.0f}", f"{m.own:,.0f}", f"{m.mapped:,.0f}"] for step, m in steps])
    finally:
        shutil.rmtree(base, ignore_errors=True)


def memory(measured: Measured) -> str:
    return (f"peak {measured.peak:,.0f} MB (own {measured.own:,.0f} MB, mapped files {measured.mapped:,.0f} MB: "
            "page cache the kernel reclaims)")


if __name__ == "__main__":
    main()
