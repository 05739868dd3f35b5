"""Encoding benchmark: BIG10 and BIG50 shuffle corpora through ``cowbird encode``.

Builds the corpora with ``../shared/reference/make_shuffle_corpus.py`` (cached in ``bench/data``),
encodes each in a fresh process with the reference README's flags, and prints a table of
tokens/second and peak resident memory. With ``--cwb`` real ``cwb-encode`` + ``cwb-makeall -V`` (on
PATH, else the ones ``../shared/reference/build-cqp.sh`` built) encode the same input with the same
flags in the same run, right after, and the last columns give their seconds and cowbird's ratio;
without it, the stored 73 s for BIG50 (60 s + 13 s, another day) is shown.

    .venv/bin/python bench/encode.py [--sizes 10000000,50000000] [--jobs 2] [--cwb]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import REFERENCE

DATA = ROOT / "bench" / "data"
FLAGS = ["-c", "utf8", "-xsB", "-P", "pos", "-P", "upos", "-P", "lemma",
         "-S", "text:0+id+host+tld+genre+year+lastmod+url", "-S", "s:0+id", "-q"]
CWB_SECONDS = {50_000_000: 73.0}


def shuffle_corpus(tokens: int) -> Path:
    """The deterministic shuffle corpus of this size (seed 1), built once."""
    DATA.mkdir(parents=True, exist_ok=True)
    path = DATA / f"big{tokens // 1_000_000}.vrt"
    if not path.exists():
        script = REFERENCE / "make_shuffle_corpus.py"
        if not script.exists():
            sys.exit(f"{script} not found: the benchmark needs ../shared/reference")
        print(f"building {path.name} ...", file=sys.stderr)
        subprocess.run([sys.executable, str(script), str(REFERENCE / "ewt.vrt"), str(tokens), str(path), "1"],
                       check=True)
    return path


@dataclass
class Measured:
    """A child process's wall seconds and memory: ``peak`` is the largest process's peak resident
    memory (the kernel's figure); ``own`` and ``mapped`` the largest ``RssAnon`` (the process's own
    memory) and ``RssFile`` (pages of files it has mapped: page cache the kernel can reclaim) seen by
    sampling every process of the tree ten times a second; ``together`` the largest sum of their
    ``RssAnon`` (what the machine must hold for the whole command at once)."""

    seconds: float
    peak: float
    own: float
    mapped: float
    together: float
    output: str


def _tree(pid: int) -> list[int]:
    found = [pid]
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return found
    for child in children:
        found += _tree(int(child))
    return found


def status_mb(pid: int | str = "self") -> dict[str, float]:
    """A process's VmRSS, RssAnon, RssFile and VmHWM in MB (none when it has ended)."""
    fields = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "VmHWM"):
                fields[key] = int(value.split()[0]) / 1024
    except OSError:
        pass
    return fields


def run_sampled(command: list[str], cwd: Path = ROOT) -> Measured:
    """Run a command; stop the benchmark with its error output if it fails."""
    started = time.perf_counter()
    own = mapped = together = 0.0
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, text=True, cwd=cwd)
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)  # this run's own peak, not the maximum so far
            if pid:
                break
            members = [status_mb(member) for member in _tree(process.pid)]
            for fields in members:
                own, mapped = max(own, fields.get("RssAnon", 0.0)), max(mapped, fields.get("RssFile", 0.0))
            together = max(together, sum(fields.get("RssAnon", 0.0) for fields in members))
            time.sleep(0.1)
        elapsed = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if status:
            sys.exit(f"{' '.join(command)} failed: {err.read()[-2000:]}")
        return Measured(elapsed, usage.ru_maxrss / 1024, own, mapped, together, out.read())


def encode(vrt: Path, jobs: int) -> tuple[Measured, str]:
    """Encode in a child process: its measurements and the first line it printed."""
    target = DATA / f"{vrt.stem}-encoded"
    shutil.rmtree(target, ignore_errors=True)
    command = [sys.executable, "-m", "cowbird", "encode", "--jobs", str(jobs),
               "-f", str(vrt), "-d", str(target / "data"), "-R", str(target / "registry" / vrt.stem), *FLAGS]
    measured = run_sampled(command)
    shutil.rmtree(target, ignore_errors=True)
    return measured, measured.output.splitlines()[0]


def cwb_tools() -> Path:
    """The folder of real cwb-encode and cwb-makeall: PATH, else build-cqp.sh's cache."""
    if found := shutil.which("cwb-encode"):
        return Path(found).parent
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    built = Path(os.environ.get("COWBIRD_REFERENCE_CWB") or cache / "cowbird-reference-cwb") / "bin"
    if not (built / "cwb-encode").exists():
        sys.exit("--cwb: cwb-encode is not on PATH and ../shared/reference/build-cqp.sh has not built it")
    return built


def encode_with_cwb(vrt: Path, tools: Path) -> float:
    """Seconds of real ``cwb-encode`` (the same flags) followed by ``cwb-makeall -V``."""
    target = DATA / f"{vrt.stem}-cwb"
    shutil.rmtree(target, ignore_errors=True)
    (target / "data").mkdir(parents=True)
    (target / "registry").mkdir()
    name = vrt.stem.lower()
    started = time.perf_counter()
    run_sampled([str(tools / "cwb-encode"), "-f", str(vrt), "-d", str(target / "data"),
                 "-R", str(target / "registry" / name), *FLAGS])
    run_sampled([str(tools / "cwb-makeall"), "-r", str(target / "registry"), "-V", name.upper()])
    elapsed = time.perf_counter() - started
    shutil.rmtree(target, ignore_errors=True)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000000,50000000", help="corpus sizes in tokens, comma-separated")
    parser.add_argument("--jobs", default="2,1", help="process counts to measure, comma-separated")
    parser.add_argument("--cwb", action="store_true", help="also run real cwb-encode + cwb-makeall on each input")
    args = parser.parse_args()
    tools = cwb_tools() if args.cwb else None
    table = Table(title="cowbird encode (VRT -> CWB, including what cwb-makeall writes)")
    for column in ("corpus", "jobs", "tokens", "seconds", "tokens/s", "peak RSS MB",
                   "own / mapped / all own MB (sampled)", "cwb-encode+makeall s", "cowbird / CWB"):
        table.add_column(column, justify="right")
    for size in (int(s) for s in args.sizes.split(",")):
        vrt = shuffle_corpus(size)
        cwb: float | None = None
        for jobs in (int(j) for j in args.jobs.split(",")):
            measured, line = encode(vrt, jobs)
            if tools is not None and cwb is None:
                cwb = encode_with_cwb(vrt, tools)
            shown = cwb if cwb is not None else CWB_SECONDS.get(size)
            tokens = int(line.split()[1].replace(",", ""))
            seconds = measured.seconds
            table.add_row(vrt.name, str(jobs), f"{tokens:,}", f"{seconds:.1f}", f"{tokens / seconds:,.0f}",
                          f"{measured.peak:,.0f}",
                          f"{measured.own:,.0f} / {measured.mapped:,.0f} / {measured.together:,.0f}",
                          f"{shown:.1f}{'' if cwb is not None else ' (stored)'}" if shown else "-",
                          f"{seconds / shown:.2f}" if shown else "-")
    Console().print(table)


if __name__ == "__main__":
    main()
