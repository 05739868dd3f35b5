"""One ``cowbird build`` of 100,000 generated web pages, end to end, with its time and memory per phase
(issue 66's target: "one build of 100,000 generated pages end to end, with its time and memory per stage").

The pages come from ``tests/build/pages.py`` (English and German articles, forum threads, shop listings and
tag clouds with their navigation, cookie banners, sidebars and footers; charsets declared in the header,
in a meta tag, nowhere, by a BOM; a quarter gzip-encoded), written as WARC files of 5,000 pages each (gzip
per record). Then the real command runs as a user runs it::

    cowbird build IN/*.warc.gz -o OUT --name web100k --language en,de --jobs 2

while a thread samples, every half second, the resident memory of the build's process tree (the driver and
its workers: their sum and the largest single process) and which phase is running (from the phase markers
in ``OUT/work/``: clean per shard, dedup, annotate per shard, then encode until the command ends). It prints
a table per phase: seconds, documents or shards done, peak memory of the tree and of one process.

    .venv/bin/python bench/build_100k.py [--pages 100000] [--per-file 5000] [--dir /tmp/cowbird-build-100k]
                                         [--jobs 2] [--keep]

``--dir`` keeps the generated WARC files between runs (made again only when ``--pages``/``--per-file``
change); the build's output folder is made afresh each run unless ``--resume``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.build import pages  # noqa: E402 - after the checkout is on the path

SOURCE_ROOTS = ("query_lang", "frontend_api", "backend_node", "web", "tools/calf", "tools/build")
PHASES = ("clean", "dedup", "annotate", "encode")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")


@dataclass
class PhaseFigures:
    """What the sampler saw of one phase."""

    started: float | None = None
    ended: float | None = None
    tree_peak_mb: float = 0.0
    process_peak_mb: float = 0.0
    processes: int = 0


@dataclass
class Watch:
    """The sampler's state: figures per phase, and the phase it last saw."""

    phases: dict[str, PhaseFigures] = field(default_factory=lambda: {p: PhaseFigures() for p in PHASES})
    current: str = "clean"


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants, from /proc."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def rss_mb(pid: int) -> float:
    """A process's resident memory in MB (0 if it has ended)."""
    try:
        return int(Path(f"/proc/{pid}/statm").read_text().split()[1]) * PAGE_SIZE / 2**20
    except (OSError, IndexError, ValueError):
        return 0.0


def phase_now(out: Path, shards: int) -> str:
    """The phase the build is in, from its markers (a phase of shards is over when every shard's marker is
    there; dedup's marker is ``work/dedup/done``)."""
    work = out / "work"
    for phase in PHASES[:3]:
        folder = work / phase if phase != "annotate" else _annotate_folder(work)
        if phase == "dedup":
            if not (folder / "done").exists():
                return phase
        elif len(list(folder.glob("*.done"))) < shards:
            return phase
    return "encode"


def _annotate_folder(work: Path) -> Path:
    for name in ("annotate", "vrt"):
        if (work / name).is_dir():
            return work / name
    return work / "annotate"


def sample(process: subprocess.Popen[bytes], out: Path, shards: int, watch: Watch, every: float = 0.5) -> None:
    """Until ``process`` ends: the phase and the memory of its tree, every ``every`` seconds."""
    while process.poll() is None:
        now = time.perf_counter()
        phase = phase_now(out, shards)
        if phase != watch.current:
            for earlier in PHASES[PHASES.index(watch.current):PHASES.index(phase)]:
                watch.phases[earlier].ended = now
            watch.current = phase
        figures = watch.phases[phase]
        if figures.started is None:
            figures.started = now
        sizes = [rss_mb(pid) for pid in tree(process.pid)]
        figures.tree_peak_mb = max(figures.tree_peak_mb, sum(sizes))
        figures.process_peak_mb = max(figures.process_peak_mb, max(sizes, default=0.0))
        figures.processes = max(figures.processes, len(sizes))
        time.sleep(every)
    watch.phases[watch.current].ended = time.perf_counter()


def make_inputs(folder: Path, total: int, per_file: int) -> list[Path]:
    """The WARC files, made once for these sizes (a stamp says which)."""
    stamp = folder / "stamp.json"
    wanted = json.dumps({"pages": total, "per_file": per_file, "generator": 1})
    files = [folder / f"crawl-{k:03d}.warc.gz" for k in range((total + per_file - 1) // per_file)]
    if stamp.exists() and stamp.read_text() == wanted and all(f.exists() for f in files):
        return files
    folder.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    for k, path in enumerate(files):
        count = min(per_file, total - k * per_file)
        pages.write_warc(path, pages.make_pages(6600 + k, count, start=k * per_file))
        print(f"  wrote {path.name}: {count:,} pages ({time.perf_counter() - started:.0f} s)", flush=True)
    stamp.write_text(wanted)
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=100_000)
    parser.add_argument("--per-file", type=int, default=5_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/cowbird-build-100k"))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--resume", action="store_true", help="keep OUT and let the build resume")
    args = parser.parse_args()
    print(f"generating {args.pages:,} pages into {args.dir / 'in'} ...", flush=True)
    inputs = make_inputs(args.dir / "in", args.pages, args.per_file)
    size = sum(f.stat().st_size for f in inputs)
    out = args.dir / "out"
    if out.exists() and not args.resume:
        shutil.rmtree(out)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(str(ROOT / r) for r in SOURCE_ROOTS) + (
        os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    command = [sys.executable, "-P", "-m", "cowbird", "build", *map(str, inputs), "-o", str(out), "--name",
               "web100k", "--language", "en,de", "--jobs", str(args.jobs)]
    print(f"cowbird build: {len(inputs)} WARC files ({size / 2**20:,.0f} MB), --jobs {args.jobs} ...", flush=True)
    log = (args.dir / "build.log").open("wb")
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    watch = Watch()
    sampler = threading.Thread(target=sample, args=(process, out, len(inputs), watch), daemon=True)
    sampler.start()
    code = process.wait()
    sampler.join()
    total = time.perf_counter() - started
    log.close()
    print(f"exit status {code} after {total:,.0f} s (log: {args.dir / 'build.log'})")
    print(f"{'phase':<10} {'seconds':>9} {'tree peak MB':>13} {'one process MB':>15} {'processes':>10}")
    rows = {}
    for phase, figures in watch.phases.items():
        seconds = (figures.ended - figures.started) if figures.started is not None and figures.ended else 0.0
        rows[phase] = {"seconds": round(seconds, 1), "tree_peak_mb": round(figures.tree_peak_mb),
                       "process_peak_mb": round(figures.process_peak_mb), "processes": figures.processes}
        print(f"{phase:<10} {seconds:>9,.1f} {figures.tree_peak_mb:>13,.0f} {figures.process_peak_mb:>15,.0f} "
              f"{figures.processes:>10}")
    report = out / "report.tsv"
    summary = {"pages": args.pages, "files": len(inputs), "input_mb": round(size / 2**20), "jobs": args.jobs,
               "exit": code, "seconds": round(total, 1), "pages_per_second": round(args.pages / total, 1),
               "phases": rows}
    (args.dir / "result.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(json.dumps(summary))
    if report.exists():
        print(report.read_text(encoding="utf-8"))


if __name__ == "__main__":
    main()
