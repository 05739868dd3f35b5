"""Analyses benchmark: frequency, distribution, collocations and a sorted preview on BIG50 through
the real front end over two node processes (one 25-MT partition each), side by side with real CQP
(a warm ``cqp -c`` child on the same corpus in one partition) and cwb-ccc in the same run.

Each run starts the nodes afresh, loads the tables an analysis needs with another query, then times
the analysis as a new search (the query is evaluated, as CQP does for ``A = query; count A by
lemma;``) and once more (the hits are in the node's cache: what switching between the tabs of a search
costs). Medians of ``--runs``. Node memory is the larger peak resident set (VmHWM) of the two.

    .venv/bin/python bench/analyses.py [--runs 3] [--no-ccc]
"""

from __future__ import annotations

import argparse
import functools
import math
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import big50_stack, show
from bench.engine import CqpChild, big50_registry, find_cqp
from bench.timing import median_ms, peak_mb, timed_get
from cowbird.commands.demo import DemoStack

THE, GO, ONE_MILLION = '[word="the"]', '[lemma="go"]', '([pos="JJ"] | [pos="RB"]) [pos="NN"]'  # q01, -, q13


@dataclass(frozen=True)
class Case:
    name: str
    target_ms: float | None
    path: str
    params: dict[str, str | int]
    warm_up: str  # another query that loads the same tables (lexicon orders, the OS's page cache)
    cqp: str | None  # the same work for real CQP (None: CQP has no such command)


JJ_NN = '([pos="JJ"] | [pos="RB"]) [pos="NNS"]'
CASES = [
    Case('frequency by lemma of [word="the"]', 1000, "/api/v1/frequency",
         {"q": THE, "by": "lemma", "limit": 100_000}, '[word="a"]', f"A = {THE}; count A by lemma;"),
    Case('distribution of [word="the"] by text_genre', 500, "/api/v1/distribution",
         {"q": THE, "by": "text_genre"}, '[word="a"]', f"A = {THE}; group A match text_genre;"),
    Case('collocations of [lemma="go"], window 5, within text', 2000, "/api/v1/collocations",
         {"q": GO, "window": 5, "within": "text", "attribute": "lemma", "limit": 100}, '[lemma="come"]', None),
    Case("sorted preview (100 of 1.18 M hits) by right1.word", 2000, "/api/v1/query",
         {"q": ONE_MILLION, "sort": "right1.word", "limit": 100}, JJ_NN,
         f"A = {ONE_MILLION}; sort A by word on matchend[1]; cat A 0 99;"),
    Case("sorted preview (100 of 1.18 M hits) by match..matchend.lemma", 2000, "/api/v1/query",
         {"q": ONE_MILLION, "sort": "match..matchend.lemma", "limit": 100}, JJ_NN,
         f"A = {ONE_MILLION}; sort A by lemma; cat A 0 99;"),
    Case('frequency by word of match[-1]..matchend of [pos="NN.*"] (millions of values)', None, "/api/v1/frequency",
         {"q": '[pos="NN.*"]', "by": "word", "on": "match[-1]..matchend", "limit": 1000}, '[pos="JJ"]',
         'A = [pos="NN.*"]; count A by word on match[-1]..matchend;'),
]


@dataclass
class Timing:
    new: list[float]  # a new search: the query is not in the nodes' cache
    again: list[float]  # the same request again: the hits are cached (switching tabs, paging)
    hits: int = 0
    values: str = "-"
    peak_mb: float = 0.0
    answer: dict[str, object] | None = None  # the last answer, compared with real CQP's


def searched(client: httpx.Client, path: str, params: dict[str, str | int]) -> tuple[float, dict[str, object]]:
    """``path`` on BIG50 with a CQP query: the ms until its answer, and the answer (complete)."""
    took, body = timed_get(client, path, {"corpus": "big50", "syntax": "cqp", **params}, params)
    assert body["complete"], body
    return took, body


def measure(stack: DemoStack, case: Case, runs: int) -> Timing:
    """Each run on freshly started nodes: a warm-up query loads the tables the analysis uses, then
    the analysis runs as a new search (its query evaluated) and once more (its hits cached)."""
    timing = Timing([], [])
    for _ in range(runs):
        stack.start()
        try:
            with httpx.Client(base_url=stack.url, timeout=600) as client:
                searched(client, case.path, {**case.params, "q": case.warm_up})
                new, body = searched(client, case.path, case.params)
                again, _ = searched(client, case.path, case.params)
            timing.new.append(new)
            timing.again.append(again)
            timing.hits = int(str(body["total"]))
            timing.answer = body
            distinct = body.get("distinct", body.get("candidates", len(body.get("rows", []))))  # type: ignore[arg-type]
            if "hits" not in body:
                timing.values = f"{distinct:,}" + (" (truncated)" if body.get("truncated") else "")
            timing.peak_mb = max(timing.peak_mb, *(peak_mb(p.pid) or math.nan for p in stack.processes[:2]))
        finally:
            stack.stop()
    return timing


def cqp_timings(runs: int) -> tuple[dict[str, float | None], dict[str, list[str]]]:
    """Real CQP's median milliseconds per case and what it answered (for sorts: ``dump`` of the
    first 100 hits, run untimed after the timed ``cat``)."""
    binary = find_cqp(None)
    if binary is None:
        return {}, {}
    child = CqpChild(binary, big50_registry())
    timings: dict[str, float | None] = {}
    answers: dict[str, list[str]] = {}
    try:
        check(child.timed("set PrettyPrint off;"))  # count: frequency, first hit, value; group: value, hits
        for case in CASES:
            if case.cqp is None:
                timings[case.name] = None
                continue
            timings[case.name] = median_ms(functools.partial(lambda text: check(child.timed(text)), case.cqp), runs)
            command = case.cqp.replace("cat A 0 99;", "dump A 0 99;")
            answers[case.name] = check(child.timed(command))
    finally:
        child.close()
    return timings, answers


def check(answer: tuple[float, list[str], str]) -> list[str]:
    if answer[2].strip():
        sys.exit(f"real CQP: {answer[2].strip()}")
    return answer[1]


def same_as_cqp(case: Case, answer: dict[str, object] | None, lines: list[str] | None) -> str:
    """Whether cowbird's answer is real CQP's: every frequency row's count (``count``: frequency,
    first hit, value), every value's hits (``group``: value, hits), or the positions of the 100
    sorted hits (``dump``: match, matchend, target, keyword)."""
    if lines is None or answer is None:
        return "-"
    try:
        return "yes" if _same(case, answer, lines) else "NO"
    except ValueError as error:
        return f"unreadable CQP output: {error}"


def _same(case: Case, answer: dict[str, object], lines: list[str]) -> bool:
    rows = answer["rows"] if "rows" in answer else answer.get("hits")
    assert isinstance(rows, list)
    if case.path == "/api/v1/frequency":
        theirs = {value: int(count) for count, _first, value in (line.split("\t") for line in lines)}
        same = all(theirs.get(r["value"]) == r["frequency"] for r in rows) and (
            len(rows) == len(theirs) or len(rows) == case.params.get("limit"))
    elif case.path == "/api/v1/distribution":
        theirs = {value: int(count) for value, count in (line.split("\t") for line in lines)}
        same = {r["value"]: r["hits"] for r in rows if r["hits"]} == theirs
    else:
        theirs_positions = [[int(n) for n in line.split()[:2]] for line in lines]
        same = [[h["position"], h["matchend"]] for h in rows] == theirs_positions
    return same


def ccc_collocations(runs: int) -> float | None:
    """cwb-ccc's collocates of [lemma="go"] (window 5, within text) on BIG50, as a second yardstick."""
    try:
        from ccc import Corpus
    except ImportError:
        return None
    data = tempfile.mkdtemp(prefix="cowbird-bench-ccc-")
    corpus = Corpus("BIG50", registry_dir=str(big50_registry()), data_dir=data)

    def run() -> None:
        corpus.query(GO, context=5, context_break="text").collocates(p_query=["lemma"], window=5)

    return median_ms(run, runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="timed runs per case, after one warm-up")
    parser.add_argument("--no-ccc", action="store_true", help="leave cwb-ccc out")
    args = parser.parse_args()
    console = Console(width=200)
    settings: dict[str, object] = {"anonymous_running_queries": 100, "anonymous_rows_per_day": 10**12, "deadline": 600}
    stack, options = big50_stack("cowbird-bench-analyses-", settings)
    base, vrt = stack.base, options.input
    console.print(f"encoding {vrt.name} into partitions of 25 MT in {base} ...")
    started = time.perf_counter()
    stack.prepare()
    console.print(f"encoded {len(stack.partitions)} partitions in {time.perf_counter() - started:.0f} s")
    measured = {case.name: measure(stack, case, args.runs) for case in CASES}
    cqp, cqp_answers = cqp_timings(args.runs)
    ccc = None if args.no_ccc else ccc_collocations(args.runs)

    title = (f"Analyses on BIG50 ({options.input.name}: 2 partitions of ~25 MT, one node process each, the front "
             f"end over HTTP), medians of {args.runs} runs on freshly started nodes; real CQP 3.4.16 warm in the "
             "same run on the same corpus in one piece")
    columns = ["analysis", "hits", "values", "cowbird ms (new search)", "cowbird ms (again, hits cached)",
               "real CQP ms (warm)", "target ms", "met", "= CQP", "node peak MB"]
    rows = []
    for case in CASES:
        timing = measured[case.name]
        new, again = statistics.median(timing.new), statistics.median(timing.again)
        yardstick = cqp.get(case.name)
        if case.cqp is None:
            other = "-" if ccc is None else f"cwb-ccc: {ccc:,.0f}"
        else:
            other = "-" if yardstick is None else f"{yardstick:,.0f}"
        met = case.target_ms is None or new <= case.target_ms
        if yardstick is not None and case.path == "/api/v1/frequency":
            met = met and new <= yardstick  # and no slower than CQP's count
        rows.append([case.name, f"{timing.hits:,}", timing.values, f"{new:,.0f}", f"{again:,.0f}", other,
                     f"{case.target_ms:,.0f}" if case.target_ms else "-", "yes" if met else "NO",
                     same_as_cqp(case, timing.answer, cqp_answers.get(case.name)), f"{timing.peak_mb:,.0f}"])
    show(console, title, columns, rows)


if __name__ == "__main__":
    main()
