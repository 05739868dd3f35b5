"""Speed and memory of ``cowbird build`` per phase, on generated pages (tests/build/pages.py).

Writes ``--pages`` generated pages (English and German articles, forum threads, listings, tag clouds,
the test generator's charset mix) into ``--files`` WARC files, then runs the build's own steps
(``cowbird.build.pipeline``): each shard's clean and annotate step in a fresh worker process of its own
(so its peak RSS is that step's alone), dedup and encode once. Reports, per phase, the wall time
summed over the shards' steps, so that the rates are per core:

- clean + dedup: documents (pages read) per second per core (texrex: 25-40);
- annotate: tokens per second per core;
- encode: tokens per second;
- peak RSS of a worker per phase (``ru_maxrss`` of the step's own process).

    .venv/bin/python bench/build_speed.py --pages 2000 --files 4
    .venv/bin/python bench/build_speed.py --pages 100000 --files 50 --jobs 2 --end-to-end

``--end-to-end`` also times a whole ``run_local`` build of the same files with ``--jobs`` workers.
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tools" / "build")]

from cowbird.build import pipeline  # noqa: E402
from tests.build import pages  # noqa: E402


def _timed_step(out: Path, phase: str, shard: int | None) -> tuple[dict[str, Any], float, int]:
    started = time.perf_counter()
    summary = pipeline.run_step(out, phase, shard)
    seconds = time.perf_counter() - started
    return summary, seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def _in_fresh_process(out: Path, phase: str, shard: int | None) -> tuple[dict[str, Any], float, int]:
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        return pool.submit(_timed_step, out, phase, shard).result()


def _warm(out: Path, phase: str) -> float:
    """Seconds a fresh worker needs before its first page: importing and loading the models."""
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        started = time.perf_counter()
        pool.submit(_load, phase).result()
        return time.perf_counter() - started


def _load(phase: str) -> None:
    from cowbird.build import annotate, language

    language.identify("The otter swims in the river.")
    if phase == "annotate":
        for code in ("en", "de"):
            annotate.Annotator(code).annotate(["Ein Satz."])


def write_inputs(folder: Path, count: int, files: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    per = -(-count // files)
    written = []
    for k in range(files):
        n = min(per, count - k * per)
        if n <= 0:
            break
        written.append(pages.write_warc(folder / f"crawl-{k:03d}.warc.gz", pages.make_pages(1000 + k, n,
                                                                                             start=k * per)))
    return written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--end-to-end", action="store_true")
    parser.add_argument("--work", type=Path, default=None, help="folder for inputs and outputs (default: temporary)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(dir=args.work) as temporary:
        root = Path(temporary)
        started = time.perf_counter()
        inputs = write_inputs(root / "in", args.pages, args.files)
        print(f"generated {args.pages} pages in {len(inputs)} WARC files: {time.perf_counter() - started:.1f} s "
              f"({sum(p.stat().st_size for p in inputs) / 1e6:.1f} MB)")
        out = root / "out"
        options = pipeline.BuildOptions(inputs=tuple(inputs), out=out, name="bench", languages=("en", "de"),
                                        jobs=1)
        shards = pipeline.prepare(options)
        warm_clean, warm_annotate = _warm(out, "clean"), _warm(out, "annotate")
        rows: list[tuple[str, float, int, int, int]] = []  # phase, seconds, documents, tokens, peak RSS
        clean = [_in_fresh_process(out, "clean", k) for k in range(shards)]
        read = sum(int(s["read"]) for s, _, _ in clean)
        kept = sum(int(s["documents"]) for s, _, _ in clean)
        rows.append(("clean", sum(t for _, t, _ in clean), read, 0, max(r for _, _, r in clean)))
        dedup = _in_fresh_process(out, "dedup", None)
        rows.append(("dedup", dedup[1], kept, 0, dedup[2]))
        annotated = [_in_fresh_process(out, "annotate", k) for k in range(shards)]
        tokens = sum(int(s["tokens"]) for s, _, _ in annotated)
        rows.append(("annotate", sum(t for _, t, _ in annotated), sum(int(s["documents"]) for s, _, _ in annotated),
                     tokens, max(r for _, _, r in annotated)))
        encode = _in_fresh_process(out, "encode", None)
        rows.append(("encode", encode[1], 0, tokens, encode[2]))
        print(f"model loading per worker (not in the figures below): clean {warm_clean:.1f} s, "
              f"annotate {warm_annotate:.1f} s")
        print(f"{'phase':10} {'seconds':>9} {'documents':>10} {'tokens':>10} {'docs/s/core':>12} "
              f"{'tokens/s/core':>14} {'peak RSS':>9}")
        for phase, seconds, documents, count, rss in rows:
            print(f"{phase:10} {seconds:9.1f} {documents:10,} {count:10,} "
                  f"{documents / seconds if documents else 0:12.1f} {count / seconds if count else 0:14,.0f} "
                  f"{rss / 2**20:8.0f}M")
        both = rows[0][1] + rows[1][1]
        print(f"clean + dedup: {read / both:.1f} documents (pages read) per second per core; "
              f"{kept} of {read} kept, {shards} shards")
        if args.end_to_end:
            whole = root / "whole"
            started = time.perf_counter()
            pipeline.run_local(pipeline.BuildOptions(inputs=tuple(inputs), out=whole, name="bench",
                                                     languages=("en", "de"), jobs=args.jobs),
                               pipeline.Progress(enabled=False))
            print(f"end to end with --jobs {args.jobs}: {time.perf_counter() - started:.1f} s for {read} pages "
                  f"({read / (time.perf_counter() - started):.1f} pages/s)")


if __name__ == "__main__":
    main()
