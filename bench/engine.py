"""Engine benchmark: the preview workload of the 44 parity queries on BIG50, side by side with real CQP.

Per query: the exact total plus the first 100 hits as KWIC lines with 10 tokens of context and
lemmas — what a preview costs a node. BIG50 is regenerated with make_shuffle_corpus.py and encoded
with ``cowbird encode`` (cached under bench/data). The corpus is opened and warmed once (as a node
does at start). Real CQP runs the same workload in the same run, two ways:

- process: a whole ``cqp -r REG -D BIG50 -c`` per query (start, activate, query, ``size``,
  ``cat A 0 99`` with ``set Context 10 words; show +lemma;``, exit);
- warm: one ``cqp -c`` child answering the queries one after another, as a node wrapping CQP
  would (commands on stdin, answers read up to child mode's ``-::-EOL-::-`` marker).

The same engine with one thread (``EngineOptions.threads=1``) runs the workload too: the "1 thread"
column and the threads' speed-up (ranges of a query evaluated side by side).

Every query runs once on each side to warm up, then ``--runs`` times (the sides take turns)
and the median is reported. ``cqp`` is the ``--cqp`` binary, else ``cqp`` on PATH, else the one
``../shared/reference/build-cqp.sh`` built. Without it (or with ``--no-cqp``) the CQP figures come
from the stored ../shared/reference/cqp-timings-big50.tsv instead (another run, process only).

    .venv/bin/python bench/engine.py [--runs 3] [--queries q01,q02] [--cqp PATH] [--markdown]
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import SPEED_TEST
from bench.encode import DATA, FLAGS, shuffle_corpus
from bench.timing import peak_mb
from cowbird.engines import Context, EngineOptions
from cowbird.engines.native import NativeEngine
from tests.support import REFERENCE

CORPUS = "BIG50"
EOL = "-::-EOL-::-"  # what CQP's child mode prints for `.EOL.;`
SETTINGS = "set Context 10 words; show +lemma;"
KWIC_LINES = 100
STORED = REFERENCE / "cqp-timings-big50.tsv"
COLUMNS = ("query", "hits", "cowbird ms", "CQP process ms", "warm CQP ms", "ratio (process)", "ratio (warm)",
           "hits = CQP", "1 thread ms", "threads' speed-up")


def big50_registry() -> Path:
    target = DATA / "big50-encoded"
    if not (target / "registry" / "big50").exists():
        vrt = shuffle_corpus(50_000_000)
        subprocess.run([sys.executable, "-m", "cowbird", "encode", "-f", str(vrt), "-d", str(target / "data"),
                        "-R", str(target / "registry" / "big50"), *FLAGS], check=True, cwd=ROOT)
    return target / "registry"


def find_cqp(configured: Path | None) -> Path | None:
    """``--cqp``, else ``cqp`` on PATH, else the binary build-cqp.sh built (it is not built here)."""
    if configured is not None:
        if not os.access(configured, os.X_OK):
            sys.exit(f"--cqp {configured}: not an executable file")
        return configured
    if found := shutil.which("cqp"):
        return Path(found)
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    built = Path(os.environ.get("COWBIRD_REFERENCE_CWB") or cache / "cowbird-reference-cwb") / "bin" / "cqp"
    return built if os.access(built, os.X_OK) else None


def cqp_command(binary: Path, registry: Path, corpus: str = CORPUS) -> list[str]:
    """CQP in child mode with the corpus (BIG50) active. It runs in the project root: a relative
    registry HOME (as the reference README writes them) resolves from the working directory."""
    return [str(binary), "-r", str(registry), "-D", corpus, "-c"]


@dataclass(frozen=True)
class Answer:
    """What one side answered for one query: its total (None: CQP refused it) and KWIC lines."""

    hits: int | None
    lines: int
    error: str = ""


def preview_commands(query: str, name: str) -> str:
    """The CQP commands of the preview workload: the query, its size, then the first 100 KWIC lines."""
    return f"{name} = {query}; size {name}; .EOL.; cat {name} 0 {KWIC_LINES - 1}; .EOL.;\n"


def read_answer(size_block: Sequence[str], kwic_block: Sequence[str], errors: str) -> Answer:
    """The answer from the lines before the first and the second end marker and CQP's stderr."""
    problem = " ".join(line.strip() for line in errors.splitlines() if line.strip() not in ("", "CQP Error:"))
    sizes = [line for line in size_block if line.strip().isdigit()]
    if problem or not sizes:
        return Answer(None, 0, problem or f"no size in {list(size_block)!r}")
    return Answer(int(sizes[-1]), sum(1 for line in kwic_block if line.strip()))


def split_blocks(lines: Sequence[str]) -> list[list[str]]:
    """Lines grouped by the end markers between them (the text after the last marker is dropped)."""
    blocks: list[list[str]] = [[]]
    for line in lines:
        if line == EOL:
            blocks.append([])
        else:
            blocks[-1].append(line)
    return blocks[:-1]


class CqpProcess:
    """A whole ``cqp`` process per query."""

    def __init__(self, binary: Path, registry: Path) -> None:
        self.command = cqp_command(binary, registry)

    def run(self, script: str) -> tuple[float, str, str]:
        """Milliseconds from start to exit, stdout and stderr of one process reading ``script``."""
        started = time.perf_counter()
        done = subprocess.run(self.command, input=script, capture_output=True, text=True, cwd=ROOT)
        elapsed = (time.perf_counter() - started) * 1000
        if done.returncode:
            sys.exit(f"{' '.join(self.command)} failed ({done.returncode}): {done.stderr.strip()}")
        return elapsed, done.stdout, done.stderr

    def preview(self, query: str) -> tuple[float, Answer]:
        elapsed, out, errors = self.run(SETTINGS + " " + preview_commands(query, "A"))
        blocks = split_blocks(out.splitlines()) + [[], []]
        return elapsed, read_answer(blocks[0], blocks[1], errors)


class CqpChild:
    """One warm ``cqp -c`` child answering queries in turn, each under a fresh name discarded after it."""

    def __init__(self, binary: Path, registry: Path, corpus: str = CORPUS) -> None:
        self._errors: IO[bytes] = tempfile.TemporaryFile()
        self._process = subprocess.Popen(cqp_command(binary, registry, corpus), stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=self._errors, text=True, cwd=ROOT)
        self._count = 0
        self._exchange(f"{SETTINGS} .EOL.;\n", 1)  # also reads the version line child mode starts with

    def _exchange(self, commands: str, markers: int) -> list[list[str]]:
        """Send commands, read up to the given number of end markers; the blocks between them."""
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write(commands)
        self._process.stdin.flush()
        blocks: list[list[str]] = [[]]
        while len(blocks) <= markers:
            line = self._process.stdout.readline()
            if not line:
                sys.exit(f"warm cqp stopped: {self._stderr_since(0)}")
            if line.rstrip("\n") == EOL:
                blocks.append([])
            else:
                blocks[-1].append(line.rstrip("\n"))
        return blocks[:-1]

    def _stderr_size(self) -> int:
        return os.fstat(self._errors.fileno()).st_size

    def _stderr_since(self, offset: int) -> str:
        # pread: the child shares the file offset, which must stay at the end for its writes
        size = self._stderr_size()
        return os.pread(self._errors.fileno(), size - offset, offset).decode(errors="replace")

    def preview(self, query: str) -> tuple[float, Answer]:
        self._count += 1
        name = f"Q{self._count}"
        errors_from = self._stderr_size()
        started = time.perf_counter()
        size_block, kwic_block = self._exchange(preview_commands(query, name), 2)
        elapsed = (time.perf_counter() - started) * 1000
        answer = read_answer(size_block, kwic_block, self._stderr_since(errors_from))
        self._exchange(f"discard {name}; .EOL.;\n", 1)  # not timed: a node frees results later
        return elapsed, answer

    def timed(self, commands: str) -> tuple[float, list[str], str]:
        """Milliseconds for ``commands`` (their output read to the end), the output lines and any error."""
        errors_from = self._stderr_size()
        started = time.perf_counter()
        (lines,) = self._exchange(commands.rstrip() + " .EOL.;\n", 1)
        return (time.perf_counter() - started) * 1000, lines, self._stderr_since(errors_from)

    def peak_mb(self) -> float | None:
        """VmHWM of the child (peak resident set), from /proc."""
        return peak_mb(self._process.pid)

    def close(self) -> None:
        assert self._process.stdin is not None and self._process.stdout is not None
        self._process.stdin.write("exit;\n")
        self._process.stdin.close()
        self._process.stdout.read()
        self._process.stdout.close()
        self._process.wait()
        self._errors.close()


@dataclass(frozen=True)
class Row:
    qid: str
    hits: int
    cowbird_ms: float
    process_ms: float | None
    warm_ms: float | None
    cqp_hits: int | None
    cqp_error: str  # what CQP said when it refused the query (then cqp_hits is None)
    single_ms: float | None = None  # cowbird with one thread (EngineOptions.threads=1)

    @property
    def ratio_process(self) -> float | None:
        return self.cowbird_ms / self.process_ms if self.process_ms else None

    @property
    def ratio_warm(self) -> float | None:
        return self.cowbird_ms / self.warm_ms if self.warm_ms else None

    def cells(self) -> list[str]:
        def ms(value: float | None) -> str:
            return "-" if value is None else f"{value:.1f}"

        def ratio(value: float | None) -> str:
            return "-" if value is None else f"{value:.2f}"

        if self.cqp_hits is None:
            same = f"CQP error: {self.cqp_error}"
        elif self.cqp_hits == self.hits:
            same = "yes"
        else:
            same = f"NO (CQP {self.cqp_hits:,})"
        speed_up = self.single_ms / self.cowbird_ms if self.single_ms and self.cowbird_ms else None
        return [self.qid, f"{self.hits:,}", ms(self.cowbird_ms), ms(self.process_ms), ms(self.warm_ms),
                ratio(self.ratio_process), ratio(self.ratio_warm), same, ms(self.single_ms), ratio(speed_up)]


def geomean(values: Sequence[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


def load_stored() -> dict[str, tuple[int, float]]:
    stored: dict[str, tuple[int, float]] = {}
    for line in STORED.read_text().splitlines():
        if line.startswith(("q", "baseline")):
            qid, hits, ms = line.split("\t")
            stored[qid] = (int(hits) if hits.isdigit() else -1, float(ms))
    return stored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="timed runs per query and side, after one warm-up")
    parser.add_argument("--registry", type=Path, default=None, help="an encoded BIG50 registry (default: build)")
    parser.add_argument("--queries", default="", help="only these parity queries, comma-separated (q01,q02)")
    parser.add_argument("--cqp", type=Path, default=None, help="the cqp binary (default: PATH, then build-cqp's)")
    parser.add_argument("--no-cqp", action="store_true", help="use the stored CQP timings instead of running cqp")
    parser.add_argument("--markdown", action="store_true", help="also print the table as markdown rows")
    parser.add_argument("--threads", type=int, default=EngineOptions().threads,
                        help="the engine's threads (the '1 thread' column runs the same with one)")
    args = parser.parse_args()
    began = time.strftime("%Y-%m-%d %H:%M:%S %Z")
    queries = [(qid, query) for qid, query in (line.split("\t", 1) for line in
               (REFERENCE / "parity" / "queries.tsv").read_text().splitlines() if line.startswith("q"))]
    if not args.no_cqp:  # the speed-test queries have no stored CQP timings
        queries += SPEED_TEST
    if args.queries:
        wanted = {q.strip() for q in args.queries.split(",") if q.strip()}
        if unknown := wanted - {qid for qid, _ in queries}:
            sys.exit(f"unknown queries: {', '.join(sorted(unknown))}")
        queries = [(qid, query) for qid, query in queries if qid in wanted]
    registry = args.registry or big50_registry()
    binary = None if args.no_cqp else find_cqp(args.cqp)
    console = Console(width=shutil.get_terminal_size((140, 24)).columns)  # 140 when not on a terminal
    process: CqpProcess | None = None
    child: CqpChild | None = None
    notes: list[str] = []
    stored = load_stored() if binary is None else {}
    if binary is None:
        notes.append(f"cqp not {'used' if args.no_cqp else 'found'} (--cqp, PATH, ../shared/reference/build-cqp.sh):"
                     f" CQP process ms and hits are the STORED figures of {STORED.name} (another run and day);"
                     " no warm CQP")
    else:
        process = CqpProcess(binary, registry)
        process.run("")  # fails with CQP's message when it cannot activate the corpus
        child = CqpChild(binary, registry)
    engine = NativeEngine.open(registry, "big50", EngineOptions(threads=args.threads))
    started = time.perf_counter()
    engine.warm()
    warm_ms = (time.perf_counter() - started) * 1000
    options = {"cowbird": engine.options, "single": replace(engine.options, threads=1)}

    def preview(side: str) -> Callable[[str], tuple[float, Answer]]:
        def timed(query: str) -> tuple[float, Answer]:
            engine.options = options[side]  # one engine (one mapping of the corpus), threads as the side says
            t0 = time.perf_counter()
            result = engine.run(query)
            lines = result.kwic(0, KWIC_LINES, Context(10), ["lemma"], [])
            return (time.perf_counter() - t0) * 1000, Answer(result.total, len(lines))

        return timed

    sides: dict[str, Callable[[str], tuple[float, Answer]]] = {side: preview(side) for side in options}
    if process is not None and child is not None:
        sides["process"] = process.preview
        sides["warm"] = child.preview
    baseline = stored["baseline"][1] if "baseline" in stored else None
    if process is not None:
        starts = [process.run("")[0] for _ in range(args.runs + 1)][1:]
        baseline = statistics.median(starts)
    rows: list[Row] = []
    for qid, query in queries:
        times: dict[str, list[float]] = {side: [] for side in sides}
        answers: dict[str, list[Answer]] = {side: [] for side in sides}
        for run in range(args.runs + 1):  # run 0 warms up; the sides take turns so noise hits all alike
            for side, action in sides.items():
                elapsed, answer = action(query)
                answers[side].append(answer)
                if run:
                    times[side].append(elapsed)
        medians = {side: statistics.median(values) for side, values in times.items()}
        mine = answers["cowbird"][-1]
        assert mine.hits is not None
        if process is None:
            cqp_hits, cqp_ms = stored[qid]
            rows.append(Row(qid, mine.hits, medians["cowbird"], cqp_ms, None, cqp_hits, "", medians["single"]))
            continue
        if mine.lines != min(KWIC_LINES, mine.hits):
            notes.append(f"{qid}: cowbird built {mine.lines} KWIC lines for {mine.hits:,} hits")
        theirs = answers["warm"][-1]
        if len({(a.hits, a.lines) for side in ("process", "warm") for a in answers[side]}) > 1:
            notes.append(f"{qid}: CQP's answers differ between runs or ways: {answers['process'] + answers['warm']}")
        elif theirs.hits is not None and theirs.lines != min(KWIC_LINES, theirs.hits):
            notes.append(f"{qid}: CQP printed {theirs.lines} KWIC lines for {theirs.hits:,} hits")
        rows.append(Row(qid, mine.hits, medians["cowbird"], medians["process"], medians["warm"], theirs.hits,
                        theirs.error, medians["single"]))
        if answers["single"][-1] != mine:
            notes.append(f"{qid}: one thread answered {answers['single'][-1]}, {args.threads} threads {mine}")
    child_peak = child.peak_mb() if child is not None else None
    if child is not None:
        child.close()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    ended = time.strftime("%H:%M:%S %Z")

    how = "same run" if process is not None else "stored CQP timings"
    table = Table(title=f"native engine vs real CQP on BIG50 ({engine.size:,} tokens), preview workload, "
                  f"median of {args.runs} warm runs ({how})")
    for column in COLUMNS:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(*row.cells())
    console.print(table)
    if args.markdown:
        print("| " + " | ".join(COLUMNS) + " |")
        print("|---|" + "---:|" * (len(COLUMNS) - 1))
        for row in rows:
            print("| " + " | ".join(row.cells()) + " |")
        print()

    summary: list[str] = []
    for label, pairs in (("process", [(row.ratio_process, row.qid) for row in rows]),
                          ("warm", [(row.ratio_warm, row.qid) for row in rows])):
        ratios = [(ratio, qid) for ratio, qid in pairs if ratio is not None]
        if ratios:
            worst = max(ratios)
            summary.append(f"vs CQP {label}: geometric mean ratio {geomean([r for r, _ in ratios]):.3f}, "
                           f"worst {worst[0]:.2f} ({worst[1]})")
    by_id = {row.qid: row for row in rows}
    speed_ups = {row.qid: row.single_ms / row.cowbird_ms for row in rows if row.single_ms and row.cowbird_ms}
    if speed_ups:
        heavy = [qid for qid in ("q13", "q21", "q41", "q05", "q38") if qid in speed_ups]
        named = ", ".join(f"{qid} {speed_ups[qid]:.2f}x" for qid in heavy)
        summary.append(f"{args.threads} threads against 1: {named}; best {max(speed_ups.values()):.2f}x")
    if "q02" in by_id:
        summary.append(f"q02 (fixed cost of a tiny query) cowbird {by_id['q02'].cowbird_ms:.1f} ms")
    if (q29 := by_id.get("q29")) is not None:
        best = q29.ratio_warm or q29.ratio_process
        if best:
            summary.append(f"q29 ratio {best:.4f} (1/{1 / best:,.0f}) vs CQP {'warm' if q29.ratio_warm else 'process'}")
    summary.append(f"cowbird warm-up {warm_ms:,.0f} ms; peak RSS of this process (cowbird side) {peak:,.0f} MB")
    if process is not None:
        summary.append(f"CQP: {binary}; peak RSS of the warm child {child_peak or 0:,.0f} MB (VmHWM after all queries)")
    if baseline is not None:
        summary.append(f"CQP process start + activate {CORPUS} + exit: {baseline:.1f} ms "
                       f"({'median' if process is not None else 'stored'})")
        startup = [f"{row.qid} ({baseline / row.process_ms:.0%})" for row in rows
                   if row.process_ms and baseline >= 0.5 * row.process_ms]
        if startup:
            summary.append("queries whose CQP process time is at least half start-up: " + ", ".join(startup))
    summary.append(f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
                   f"{began} to {ended}")
    mismatches = [row.qid for row in rows if row.cqp_hits != row.hits]
    summary.append("hits equal for every query" if not mismatches else f"HITS DIFFER: {', '.join(mismatches)}")
    for line in summary + notes:
        console.print(line, highlight=False)


if __name__ == "__main__":
    main()
