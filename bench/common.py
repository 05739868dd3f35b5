"""What several benchmarks share: BIG50 in two partitions behind the front end, and the result table
printed for the console and as Markdown for ``bench/RESULTS.md``."""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bench.encode import shuffle_corpus
from cowbird.demo import DemoStack
from cowbird.store import EncodeOptions, parse_s_declaration
from tests.support import free_ports

SPEED_TEST = [
    ("ec1", '[pos="JJ.*"] [word="plans"]'), ("ec2", '[word="long"] [pos="NN.*"]'),
    ("ec3", '[word="I"] [pos="VB.*"] [word="whether"]'), ("ec4", '[word="never"] [word="really"] [pos="VB.*"]'),
]
"""The four queries English-Corpora.org publishes as its speed test (3.2–7.6 s on iWeb, 14 GT; 25–103 s
on Sketch Engine's enTenTen15, 13 GT), in this corpus's tags: rows ec1–ec4 after the parity queries."""


def big50_stack(prefix: str, settings: dict[str, object]) -> tuple[DemoStack, EncodeOptions]:
    """A demo stack (not prepared yet) serving BIG50 as ``big50`` in two partitions of ~25 MT, one node
    process each, in a fresh temporary folder named ``prefix``…"""
    vrt = shuffle_corpus(50_000_000)
    base = Path(tempfile.mkdtemp(prefix=prefix))
    options = EncodeOptions(
        vrt, base / "data" / "big50", base / "registry" / "big50", ["word", "pos", "upos", "lemma"],
        [parse_s_declaration("text:0+id+host+tld+genre+year+lastmod+url"), parse_s_declaration("s:0+id")],
        charset="utf8", xml=True, skip_blank=True, strip_blanks=True, partition_tokens=25_100_000,
    )
    front, n1, n2 = free_ports(3)
    stack = DemoStack(base, front, (n1, n2), options, name="big50", settings=settings, log_level="warning",
                      replica=False)
    return stack, options


def show(console: Console, title: str, columns: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """The table on the console, then as Markdown (a ``###`` title and a pipe table) on stdout."""
    table = Table(title=title)
    for column in columns:
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    console.print(table)
    print(f"\n### {title}\n")
    print("| " + " | ".join(columns) + " |")
    print("|" + "---|" * len(columns))
    for row in rows:
        print("| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |")
