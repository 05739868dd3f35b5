"""What a numeric range filter costs (issue 65, item 9): ``text_n:FROM..TO`` on an s-attribute with
``--values`` distinct numbers (one text each), evaluated as a node does — the regex of the range
(``cowbird.query.numeric_range``) tested once per value of the attribute's lexicon (``filter_regions``),
and the query ``[] :: match.text_n="..."`` run by the native engine — against the alternation of every
value in the range (what listing the values would build). CPU seconds of this process, medians of
``--runs``.

    .venv/bin/python bench/filter_ranges.py [--values 200000] [--runs 5] [--listed-max 20000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path

from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import show  # noqa: E402
from cowbird.engines.native import NativeEngine  # noqa: E402
from cowbird.query import QueryError, parse_cqp  # noqa: E402
from cowbird.query.numeric_range import range_regex  # noqa: E402
from cowbird.store import CwbCorpus, EncodeOptions, Encoder, parse_s_declaration  # noqa: E402
from cowbird.store.regions import filter_regions  # noqa: E402


def encode(base: Path, values: int) -> tuple[Path, str]:
    """A corpus of ``values`` texts of two tokens, text i with ``n="i"`` (every fifth a decimal, i.5)."""
    vrt = base / "ranges.vrt"
    with vrt.open("w", encoding="utf-8") as out:
        for i in range(values):
            n = f"{i}.5" if i % 5 == 0 else str(i)
            out.write(f'<text id="t{i}" n="{n}">\n<s>\nw{i % 97}\nx\n</s>\n</text>\n')
    options = EncodeOptions(
        input=vrt, data_dir=base / "data", registry_file=base / "registry" / "ranges", p_attributes=["word"],
        s_attributes=[parse_s_declaration("text:0+id+n"), parse_s_declaration("s:0")], charset="utf8",
        xml=True, skip_blank=True, strip_blanks=True, partition_tokens=10 * values,
    )  # fmt: skip
    result = Encoder(options).run()
    return base / "registry", result.partitions[0].id


def cpu(run: Callable[[], object], runs: int) -> tuple[float, object]:
    times, answer = [], None
    for _ in range(runs):
        started = time.process_time()
        answer = run()
        times.append(time.process_time() - started)
    return statistics.median(times) * 1000, answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--values", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--listed-max", type=int, default=20_000, help="time the alternation of the values "
                        "in the range only up to this many")
    args = parser.parse_args()
    console = Console()
    with tempfile.TemporaryDirectory(prefix="cowbird-bench-ranges-") as folder:
        started = time.perf_counter()
        registry, partition = encode(Path(folder), args.values)
        console.print(f"encoded {args.values:,} texts in {time.perf_counter() - started:.1f} s")
        corpus = CwbCorpus.open(registry, partition)
        engine = NativeEngine.open(registry, partition)
        low, high = args.values // 4, 3 * args.values // 4
        every = [f"{i}.5" if i % 5 == 0 else str(i) for i in range(args.values)]
        inside = [v for v in every if low <= Decimal(v) <= high]
        listed = "(?:" + "|".join(v.replace(".", "\\.") for v in inside) + ")"
        cases = [
            (f"range {low:,}..{high:,}", range_regex(Decimal(low), Decimal(high))),
            (f"range {low:,}.. (open)", range_regex(Decimal(low), None)),
            ("range 10.25..99.75 (decimals)", range_regex(Decimal("10.25"), Decimal("99.75"))),
        ]
        if len(inside) <= args.listed_max:  # a regex of every value: minutes and gigabytes at 100,000 values
            cases.append((f"the {len(inside):,} values listed", listed))
        rows = []
        for name, pattern in cases:
            regions_ms, found = cpu(lambda p=pattern: filter_regions(corpus, "text_n", False, p), args.runs)  # type: ignore[misc]
            starts = found[0]  # type: ignore[index]
            try:
                query = parse_cqp(f'[word="x"] :: match.text_n="{pattern}"')
            except QueryError as error:  # as the front end refuses it: too long a query for the nodes
                rows.append([name, f"{len(pattern):,}", f"{len(starts):,}", f"{regions_ms:,.0f}", "refused",
                             str(error).split(" (offset")[0]])
                continue
            query_ms, total = cpu(lambda q=query: engine.run(q).total, args.runs)  # type: ignore[misc]
            rows.append([name, f"{len(pattern):,}", f"{len(starts):,}", f"{regions_ms:,.0f}", f"{total:,}",
                         f"{query_ms:,.0f}"])
        show(console, f"{args.values:,} distinct values of text_n, CPU ms (medians of {args.runs})",
             ["filter", "regex characters", "texts chosen", "filter_regions", "query hits", "query"], rows)


if __name__ == "__main__":
    main()
