"""Scale benchmark (issue 18): encoding, compression, and a node's open time, memory and queries at
50 and 200 million tokens (and 1,000 with ``--big``), side by side with real CWB in the same run.

Per size, with the shuffle corpus of ``../shared/reference/make_shuffle_corpus.py`` (cached in
``bench/data``):

1. ``cowbird encode`` and real ``cwb-encode`` + ``cwb-makeall`` of the same VRT: wall time, peak
   resident memory of the largest process, and whether every file is byte-identical;
2. ``cowbird compress`` of cowbird's corpus (in place) and real ``cwb-huffcode -A`` +
   ``cwb-compress-rdx -A`` of CWB's: time, peak memory, sizes, byte identity of the compressed files;
3. a node's native engine on the uncompressed and on the compressed corpus, each in a fresh process:
   open time, warm-up time, resident memory after warm-up and after the workload (``RssAnon`` is the
   process's own memory; ``RssFile`` the corpus pages the OS happens to have mapped in), and the
   preview workload of the 44 parity queries (exact total + 100 KWIC lines with lemmas, median of
   ``--runs`` after one warm-up run);
4. real CQP (a warm ``cqp -c`` child) on CWB's corpus, uncompressed and then compressed.

cowbird's side runs first; its files are recorded by SHA-256 and deleted before CWB encodes, so
only one uncompressed copy exists at a time besides the VRT (the VRT is kept in ``bench/data`` for
the next run: about 20 bytes a token). The table goes to stdout (``--markdown`` for RESULTS.md).
Each size's corpora are deleted after its measurements unless ``--keep``. Every step's figures are
written to ``bench/data/scaleN/journal.json`` as the step ends, with its clock time on the console;
a stopped run keeps its files, and ``--resume`` continues after the last recorded step (a side whose
files are half-written starts again). Disk while it runs:
about 12 GB at 200 MT and about 60 GB at 1,000 MT (20 GB of it the VRT), which is why 1,000 MT
needs ``--big`` — check ``df`` first. At 1,000 MT the whole run takes about four hours on a 2-core
machine; ``--cqp-on-ours`` leaves out real CWB's encoders and CQP on uncompressed data and lets real
CQP read cowbird's compressed files instead (byte-identical to CWB's, which the full run checks at
50 and 200 MT), which takes about two and a half hours. Per-query times go to stderr as they come.

    .venv/bin/python bench/scale.py [--sizes 50,200] [--big] [--runs 3] [--keep] [--resume]
                                    [--cqp-on-ours] [--markdown]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import SPEED_TEST  # noqa: E402
from bench.encode import DATA, FLAGS, run_sampled, shuffle_corpus, status_mb  # noqa: E402
from bench.engine import KWIC_LINES, CqpChild, find_cqp  # noqa: E402
from tests.support import REFERENCE  # noqa: E402


def parity_queries() -> list[tuple[str, str]]:
    lines = (REFERENCE / "parity" / "queries.tsv").read_text().splitlines()
    parity = [(qid, query) for qid, query in (line.split("\t", 1) for line in lines if line.startswith("q"))]
    return parity + SPEED_TEST  # rows ec1-ec4: English-Corpora.org's speed test


def run_measured(command: list[str]) -> tuple[float, float]:
    """Run a command; wall seconds and the peak resident memory (MB) of its largest process."""
    measured = run_sampled(command)
    return measured.seconds, measured.peak


COMPRESSED = (".huf", ".hcd", ".syn", ".crc", ".crx")


def digests(folder: Path, suffixes: tuple[str, ...] | None = None) -> dict[str, str]:
    """SHA-256 of every file in a folder (those with these suffixes), by name."""
    found = {}
    for path in sorted(folder.iterdir()):
        if suffixes is None or path.name.endswith(suffixes):
            with path.open("rb") as handle:
                found[path.name] = hashlib.file_digest(handle, "sha256").hexdigest()
    return found


def same_digests(ours: dict[str, str], theirs: dict[str, str]) -> str:
    """"yes" when both sides wrote the same files byte for byte."""
    if sorted(ours) != sorted(theirs):
        return f"NO (files only one side wrote: {', '.join(sorted(set(ours) ^ set(theirs))[:4])})"
    different = [name for name in sorted(ours) if ours[name] != theirs[name]]
    return "yes" if not different else f"NO ({', '.join(different[:4])})"


def folder_mb(path: Path, suffixes: tuple[str, ...]) -> float:
    return sum(p.stat().st_size for p in path.iterdir() if p.name.endswith(suffixes)) / 2**20


# ---------------------------------------------------------------- the node side, in its own process


def node_side(registry: Path, corpus: str, runs: int) -> None:
    """Open the corpus as a node does, warm it, run the workload; print JSON."""
    from cowbird.engines import Context
    from cowbird.engines.native import NativeEngine

    started = time.perf_counter()
    engine = NativeEngine.open(registry, corpus)
    opened = time.perf_counter()
    engine.warm()
    warmed = time.perf_counter()
    after_warm = status_mb()
    queries: dict[str, dict[str, float | int]] = {}
    for qid, query in parity_queries():
        times = []
        for run in range(runs + 1):
            t0 = time.perf_counter()
            result = engine.run(query)
            result.kwic(0, KWIC_LINES, Context(10), ["lemma"], [])
            if run:
                times.append((time.perf_counter() - t0) * 1000)
        queries[qid] = {"ms": statistics.median(times), "hits": result.total}
        print(f"  node {qid}: {queries[qid]['ms']:,.1f} ms, {result.total:,} hits", file=sys.stderr, flush=True)
    print(json.dumps({"open_ms": (opened - started) * 1000, "warm_ms": (warmed - opened) * 1000,
                      "after_warm": after_warm, "after_workload": status_mb(), "queries": queries,
                      "size": engine.size}))


def node(registry: Path, corpus: str, runs: int) -> dict[str, object]:
    done = subprocess.run([sys.executable, __file__, "--node", str(registry), corpus, "--runs", str(runs)],
                          stdout=subprocess.PIPE, text=True, cwd=ROOT)
    if done.returncode:
        sys.exit(f"node side failed on {registry} (its error is above)")
    answer: dict[str, object] = json.loads(done.stdout.splitlines()[-1])
    return answer


def cqp_side(binary: Path, registry: Path, corpus: str, runs: int) -> dict[str, object]:
    child = CqpChild(binary, registry, corpus)
    queries: dict[str, dict[str, float | int | None]] = {}
    for qid, query in parity_queries():
        times = []
        answer = None
        for run in range(runs + 1):
            elapsed, answer = child.preview(query)
            if run:
                times.append(elapsed)
        assert answer is not None
        queries[qid] = {"ms": statistics.median(times), "hits": answer.hits}
        print(f"  CQP {qid}: {queries[qid]['ms']:,.1f} ms, {answer.hits} hits", file=sys.stderr, flush=True)
    peak = child.peak_mb()
    child.close()
    return {"queries": queries, "peak_mb": peak}


# ---------------------------------------------------------------- one size


@dataclass
class SizeResult:
    tokens: int
    rows: dict[str, str] = field(default_factory=dict)
    began: str = ""


def geomean(values: list[float]) -> float:
    return math.exp(sum(math.log(v) for v in values) / len(values))


P_ATTRIBUTES = ["word", *(FLAGS[i + 1] for i, flag in enumerate(FLAGS) if flag == "-P")]
PLAIN = (".corpus", ".corpus.rev", ".corpus.rdx")


def state(data: Path) -> str:
    """"plain" when every p-attribute is uncompressed and nothing is compressed, "compressed" when
    every one is compressed and no uncompressed file is left, "partial" otherwise."""
    have = {path.name for path in data.iterdir()} if data.is_dir() else set()
    plain = [f"{a}{s}" in have for a in P_ATTRIBUTES for s in PLAIN]
    packed = [f"{a}{s}" in have for a in P_ATTRIBUTES for s in (".huf", ".hcd", ".huf.syn", ".crc", ".crx")]
    if all(plain) and not any(packed):
        return "plain"
    if all(packed) and not any(plain):
        return "compressed"
    return "plain+" if all(plain) else "partial"


class Journal:
    """Each step's measurements, written to ``journal.json`` as soon as the step ends, so a run that
    is stopped loses nothing it measured; ``--resume`` skips the steps recorded there."""

    def __init__(self, path: Path, millions: int, console: Console) -> None:
        self.path, self.millions, self.console = path, millions, console
        self.steps: dict[str, dict[str, object]] = json.loads(path.read_text()) if path.exists() else {}

    def step(self, name: str, run: Callable[[], dict[str, object]],
             needs: Callable[[], str | None] = lambda: None) -> dict[str, object]:
        if name in self.steps:
            self.console.print(f"[{self.millions} MT] {name}: recorded in {self.path}", highlight=False)
            return self.steps[name]
        missing = needs()
        if missing:
            raise Restart(missing)
        began, clock = time.perf_counter(), time.strftime("%Y-%m-%d %H:%M:%S %Z")
        self.console.print(f"[{self.millions} MT] {time.strftime('%H:%M:%S')} {name} ...", highlight=False)
        self.steps[name] = {**run(), "began": clock, "ended": time.strftime("%Y-%m-%d %H:%M:%S %Z")}
        self.console.print(f"[{self.millions} MT] {time.strftime('%H:%M:%S')} {name}: "
                           f"{time.perf_counter() - began:,.0f} s", highlight=False)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps(self.steps))
        temporary.replace(self.path)
        return self.steps[name]

    def forget(self, names: list[str]) -> None:
        for name in names:
            self.steps.pop(name, None)


class Restart(Exception):
    """A step to resume cannot run: the files it needs are gone or half-written."""


OURS_STEPS = ["cowbird encode", "node, uncompressed", "cowbird compress", "node, compressed"]
CWB_STEPS = ["cwb-encode + cwb-makeall", "real CQP, uncompressed", "cwb-huffcode + cwb-compress-rdx",
             "real CQP, compressed"]
CQP_ON_OURS = "real CQP on cowbird's compressed files"


def measure_size(millions: int, runs: int, binary: Path, keep: bool, resume: bool, cqp_on_ours: bool,
                 console: Console) -> SizeResult:
    """One size, lean on disk: cowbird's side first (encode, node, compress in place, node), its files
    recorded by digest and deleted, then CWB's side compared with those digests — so at most one
    uncompressed copy besides the VRT exists at a time (about 60 GB at 1,000 MT). Each step's figures
    go to ``journal.json`` in the size's folder as it ends; ``resume`` continues after the last one."""
    vrt = shuffle_corpus(millions * 1_000_000)
    corpus = f"big{millions}"
    base = DATA / f"scale{millions}"
    if not resume:
        shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True, exist_ok=True)
    ours, cwb = base / "ours", base / "cwb"
    tools = binary.parent
    journal = Journal(base / "journal.json", millions, console)

    def needs(folder: Path, wanted: str) -> Callable[[], str | None]:
        def check() -> str | None:
            found = state(folder / "data")
            ok = found == wanted or (wanted == "plain" and found == "plain+")
            return None if ok else f"{folder / 'data'} is {found}, not {wanted}"
        return check

    def encode_ours() -> dict[str, object]:
        shutil.rmtree(ours, ignore_errors=True)
        measured = run_sampled([sys.executable, "-m", "cowbird", "encode", "-f", str(vrt), "-d",
                                str(ours / "data"), "-R", str(ours / "registry" / corpus), *FLAGS])
        return {"seconds": measured.seconds, "peak": measured.peak, "own": measured.own, "mapped": measured.mapped,
                "together": measured.together, "digests": digests(ours / "data"), "mb": folder_mb(ours / "data", PLAIN)}

    def compress_ours() -> dict[str, object]:
        seconds, peak = run_measured([sys.executable, "-m", "cowbird", "compress", "-r", str(ours / "registry"),
                                      corpus])
        return {"seconds": seconds, "peak": peak, "digests": digests(ours / "data", COMPRESSED),
                "mb": folder_mb(ours / "data", COMPRESSED)}

    def encode_cwb() -> dict[str, object]:
        shutil.rmtree(cwb, ignore_errors=True)
        (cwb / "data").mkdir(parents=True)
        (cwb / "registry").mkdir()
        enc_s, enc_mb = run_measured([str(tools / "cwb-encode"), "-f", str(vrt), "-d", str(cwb / "data"), "-R",
                                      str(cwb / "registry" / corpus), *FLAGS])
        make_s, make_mb = run_measured([str(tools / "cwb-makeall"), "-r", str(cwb / "registry"), "-V",
                                        corpus.upper()])
        return {"seconds": enc_s + make_s, "peak": max(enc_mb, make_mb), "digests": digests(cwb / "data")}

    def compress_cwb() -> dict[str, object]:
        huff_s, huff_mb = run_measured([str(tools / "cwb-huffcode"), "-r", str(cwb / "registry"), "-A",
                                        corpus.upper()])
        rdx_s, rdx_mb = run_measured([str(tools / "cwb-compress-rdx"), "-r", str(cwb / "registry"), "-A",
                                      corpus.upper()])
        return {"seconds": huff_s + rdx_s, "peak": max(huff_mb, rdx_mb),
                "digests": digests(cwb / "data", COMPRESSED)}

    def run_side(names: list[str], steps: list[Callable[[], dict[str, object]]],
                 wants: list[Callable[[], str | None]]) -> list[dict[str, object]]:
        try:
            return [journal.step(name, step, want) for name, step, want in zip(names, steps, wants, strict=True)]
        except Restart as why:
            console.print(f"[{millions} MT] cannot resume ({why}): this side starts again", highlight=False)
            journal.forget(names)
            return [journal.step(name, step, want) for name, step, want in zip(names, steps, wants, strict=True)]

    try:
        encoded, plain, packed, zipped = run_side(
            OURS_STEPS,
            [encode_ours, lambda: node(ours / "registry", corpus, runs), compress_ours,
             lambda: node(ours / "registry", corpus, runs)],
            [lambda: None, needs(ours, "plain"), needs(ours, "plain"), needs(ours, "compressed")])
        if cqp_on_ours:  # the same bytes real CWB writes (tested at 50 and 200 MT): CQP reads them as they are
            cqp_zipped = journal.step(CQP_ON_OURS, lambda: cqp_side(binary, ours / "registry", corpus.upper(), runs),
                                      needs(ours, "compressed"))
            if not keep:
                shutil.rmtree(base, ignore_errors=True)
            result = table_rows(encoded, plain, packed, zipped, None, None, None, cqp_zipped)
            result.began = str(encoded["began"])
            return result
        if not keep:
            shutil.rmtree(ours, ignore_errors=True)

        def unlink_plain() -> dict[str, object]:  # as a CWB user would, once compressed
            for path in (cwb / "data").iterdir():
                if path.name.endswith(PLAIN):
                    path.unlink()
            return cqp_side(binary, cwb / "registry", corpus.upper(), runs)

        cwb_encoded, cqp_plain, cwb_packed, cqp_zipped = run_side(
            CWB_STEPS,
            [encode_cwb, lambda: cqp_side(binary, cwb / "registry", corpus.upper(), runs), compress_cwb,
             unlink_plain],
            [lambda: None, needs(cwb, "plain"), needs(cwb, "plain"),
             lambda: None if state(cwb / "data") in ("plain+", "compressed") else f"{cwb / 'data'} is not compressed"])
    except BaseException:
        console.print(f"[{millions} MT] stopped; what was measured is in {journal.path}, and "
                      f"`--resume` continues from there ({base} holds the files, delete it to start over)",
                      highlight=False)
        raise
    if not keep:
        shutil.rmtree(base, ignore_errors=True)
    result = table_rows(encoded, plain, packed, zipped, cwb_encoded, cqp_plain, cwb_packed, cqp_zipped)
    result.began = str(encoded["began"])
    return result


NOT_RUN = "not run (--cqp-on-ours)"


def table_rows(encoded: dict[str, Any], plain: dict[str, Any], packed: dict[str, Any], zipped: dict[str, Any],
               cwb_encoded: dict[str, Any] | None, cqp_plain: dict[str, Any] | None,
               cwb_packed: dict[str, Any] | None, cqp_zipped: dict[str, Any]) -> SizeResult:
    """The table's rows for one size; without the CWB side's encoders (``--cqp-on-ours``) their rows
    say so, and real CQP's figures are those on cowbird's compressed files."""
    result = SizeResult(int(plain["size"]))
    rows = result.rows
    rows["cowbird encode s / peak MB"] = f"{encoded['seconds']:,.0f} / {encoded['peak']:,.0f}"
    rows["cowbird encode peak MB: own / mapped (sampled)"] = (
        f"{encoded['own']:,.0f} / {encoded['mapped']:,.0f}" if "own" in encoded else "not sampled")
    rows["cowbird encode peak MB: own, all processes together (sampled)"] = (
        f"{encoded['together']:,.0f}" if "together" in encoded else "not sampled")
    rows["cowbird compress s / peak MB"] = f"{packed['seconds']:,.0f} / {packed['peak']:,.0f}"
    rows["token streams + indexes MB (plain -> compressed)"] = f"{encoded['mb']:,.0f} -> {packed['mb']:,.0f}"
    if cwb_encoded is None or cwb_packed is None:
        for label in ("cwb-encode + makeall s / peak MB", "encoded files identical",
                      "cwb-huffcode + compress-rdx s / peak MB", "compressed files identical"):
            rows[label] = NOT_RUN
    else:
        rows["cwb-encode + makeall s / peak MB"] = f"{cwb_encoded['seconds']:,.0f} / {cwb_encoded['peak']:,.0f}"
        rows["encoded files identical"] = same_digests(encoded["digests"], cwb_encoded["digests"])
        rows["cwb-huffcode + compress-rdx s / peak MB"] = (
            f"{cwb_packed['seconds']:,.0f} / {cwb_packed['peak']:,.0f}")
        rows["compressed files identical"] = same_digests(packed["digests"], cwb_packed["digests"])
    for label, side in (("uncompressed", plain), ("compressed", zipped)):
        warm, after = side["after_warm"], side["after_workload"]
        rows[f"node open / warm-up ms ({label})"] = f"{side['open_ms']:,.0f} / {side['warm_ms']:,.0f}"
        rows[f"node RSS MB after warm-up: own / mapped ({label})"] = f"{warm['RssAnon']:,.0f} / {warm['RssFile']:,.0f}"
        rows[f"node RSS MB after workload: own / mapped / peak ({label})"] = (
            f"{after['RssAnon']:,.0f} / {after['RssFile']:,.0f} / {after['VmHWM']:,.0f}")
    sides = {"cowbird": plain, "cowbird compressed": zipped, "CQP compressed": cqp_zipped}
    if cqp_plain is not None:
        sides["CQP"] = cqp_plain
    ms = {name: {qid: float(q["ms"]) for qid, q in side["queries"].items()}
          for name, side in sides.items()}
    hits = {name: {qid: q["hits"] for qid, q in side["queries"].items()}
            for name, side in sides.items()}
    qids = sorted(ms["cowbird"])
    for name in ("cowbird", "cowbird compressed", "CQP", "CQP compressed"):
        rows[f"workload geomean ms: {name}"] = f"{geomean([ms[name][q] for q in qids]):.1f}" if name in ms else NOT_RUN

    def ratio(a: str, b: str) -> str:
        values = [ms[a][q] / ms[b][q] for q in qids]
        worst = max(zip(values, qids, strict=True))
        return f"{geomean(values):.2f} (worst {worst[0]:.2f}, {worst[1]})"

    rows["compressed / uncompressed (cowbird)"] = ratio("cowbird compressed", "cowbird")
    rows["cowbird / CQP, uncompressed"] = ratio("cowbird", "CQP") if "CQP" in ms else NOT_RUN
    rows["cowbird / CQP, compressed"] = ratio("cowbird compressed", "CQP compressed")
    differ = [q for q in qids if len({hits[name][q] for name in sides}) > 1]
    rows["hits equal on every side"] = "yes, every query" if not differ else f"NO: {', '.join(differ)}"
    rows["CQP warm child peak MB (uncompressed / compressed)"] = (
        f"{'-' if cqp_plain is None else format(cqp_plain['peak_mb'] or 0, ',.0f')} / "
        f"{cqp_zipped['peak_mb'] or 0:,.0f}")
    return result


BYTES_PER_TOKEN = {"vrt": 20, "corpus": 45}  # measured at 200 MT (VRT; one encoded copy at its largest)


def check_disk(sizes: list[int]) -> None:
    """Stop before starting when the largest size cannot fit on this disk."""
    DATA.mkdir(parents=True, exist_ok=True)
    for millions in sizes:
        vrt = DATA / f"big{millions}.vrt"
        need = millions * 1e6 * (BYTES_PER_TOKEN["corpus"] + (0 if vrt.exists() else BYTES_PER_TOKEN["vrt"]))
        folder = DATA / f"scale{millions}"  # what a stopped run already wrote (--resume goes on with it)
        need -= sum(f.stat().st_size for f in folder.rglob("*") if f.is_file()) if folder.exists() else 0
        free = shutil.disk_usage(DATA).free
        if need > free * 0.95:
            sys.exit(f"{millions} MT needs about {need / 1e9:,.0f} GB of disk in {DATA}; "
                     f"{free / 1e9:,.0f} GB are free")


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--node":
        node_side(Path(sys.argv[2]), sys.argv[3], int(sys.argv[5]) if len(sys.argv) > 5 else 3)
        return
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="50,200", help="corpus sizes in millions of tokens, comma-separated")
    parser.add_argument("--big", action="store_true", help="also 1,000 MT (about 60 GB of disk while it runs)")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per query, after one warm-up run")
    parser.add_argument("--keep", action="store_true", help="keep the encoded corpora in bench/data")
    parser.add_argument("--resume", action="store_true",
                        help="continue a stopped run: skip the steps its journal.json recorded")
    parser.add_argument("--cqp", type=Path, default=None, help="the cqp binary (its folder has cwb-encode etc.)")
    parser.add_argument("--markdown", action="store_true", help="also print the table as markdown")
    parser.add_argument("--cqp-on-ours", action="store_true",
                        help="do not run real CWB's encoders nor CQP on uncompressed data: real CQP reads "
                             "cowbird's compressed files (the same bytes cwb-huffcode and cwb-compress-rdx write, "
                             "as the 50- and 200-MT runs check); how 1,000 MT fits in about two and a half hours")
    args = parser.parse_args()
    binary = find_cqp(args.cqp)
    if binary is None:
        sys.exit("real CWB is needed side by side: run ../shared/reference/build-cqp.sh or give --cqp")
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()] + ([1000] if args.big else [])
    check_disk(sizes)
    console = Console(width=shutil.get_terminal_size((160, 24)).columns)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped (SIGTERM)"))
    results = [measure_size(size, args.runs, binary, args.keep, args.resume, args.cqp_on_ours, console)
               for size in sizes]
    labels = list(results[0].rows)
    table = Table(title=f"scale: cowbird vs real CWB 3.4.16 ({binary}), same run, median of {args.runs} runs")
    table.add_column("")
    for result in results:
        table.add_column(f"{result.tokens / 1e6:,.0f} MT", justify="right")
    for label in labels:
        table.add_row(label, *(r.rows.get(label, "-") for r in results))
    console.print(table)
    if args.markdown:
        print("| | " + " | ".join(f"{r.tokens / 1e6:,.0f} MT" for r in results) + " |")
        print("|---|" + "---:|" * len(results))
        for label in labels:
            print(f"| {label} | " + " | ".join(r.rows.get(label, "-") for r in results) + " |")
    console.print(f"{platform.machine()}, {os.cpu_count()} cores, "
                  f"{os.sysconf('SC_PHYS_PAGES') * os.sysconf('SC_PAGE_SIZE') / 2**30:.0f} GB, "
                  f"Python {platform.python_version()}; {min(r.began for r in results)} (first step) to "
                  f"{time.strftime('%Y-%m-%d %H:%M:%S %Z')}", highlight=False)


if __name__ == "__main__":
    main()
