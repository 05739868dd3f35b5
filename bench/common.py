"""What several benchmarks share: BIG50 in two partitions behind the front end, an encoded corpus as it
is behind the front end, and the result table printed for the console and as Markdown for
``bench/RESULTS.md``."""

from __future__ import annotations

import json
import secrets
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from bench.encode import shuffle_corpus
from cowbird.commands.demo import DemoStack
from cowbird.core.manifest import Manifest, ManifestPartition
from cowbird.store import EncodeOptions, Encoder, EncodeResult, parse_s_declaration
from cowbird.store.reader import CwbCorpus
from cowbird.store.registry import find_registry_file, parse_registry
from tests.support import ewt_options, free_ports

SPEED_TEST = [
    ("ec1", '[pos="JJ.*"] [word="plans"]'), ("ec2", '[word="long"] [pos="NN.*"]'),
    ("ec3", '[word="I"] [pos="VB.*"] [word="whether"]'), ("ec4", '[word="never"] [word="really"] [pos="VB.*"]'),
]
"""The four queries English-Corpora.org publishes as its speed test (3.2–7.6 s on iWeb, 14 GT; 25–103 s
on Sketch Engine's enTenTen15, 13 GT), in this corpus's tags: rows ec1–ec4 after the parity queries."""


def big50_stack(prefix: str, settings: dict[str, object]) -> tuple[DemoStack, EncodeOptions]:
    """A demo stack (not prepared yet) serving BIG50 as ``big50`` in two partitions of ~25 MT, one node
    process each, in a fresh temporary folder named ``prefix``…"""
    return shuffle_stack(prefix, settings, 50, 2)


def shuffle_stack(prefix: str, settings: dict[str, object], million: int,
                  partitions: int) -> tuple[DemoStack, EncodeOptions]:
    """A demo stack (not prepared yet) serving the shuffle corpus of ``million`` million tokens as
    ``big<million>`` in ``partitions`` partitions (one: one node process serves it; two: one each), in
    a fresh temporary folder named ``prefix``…"""
    vrt = shuffle_corpus(million * 1_000_000)
    base = Path(tempfile.mkdtemp(prefix=prefix))
    name = f"big{million}"
    options = EncodeOptions(
        vrt, base / "data" / name, base / "registry" / name, ["word", "pos", "upos", "lemma"],
        [parse_s_declaration("text:0+id+host+tld+genre+year+lastmod+url"), parse_s_declaration("s:0+id")],
        charset="utf8", xml=True, skip_blank=True, strip_blanks=True,
        partition_tokens=million * 1_000_000 // partitions + 100_000,
    )
    front, n1, n2 = free_ports(3)
    stack = DemoStack(base, front, (n1, n2), options, name=name, settings=settings, log_level="warning",
                      replica=False)
    return stack, options


def generated_stack(prefix: str, tokens: int) -> DemoStack:
    """A demo stack, prepared (not started yet), serving the demo's generated web corpus of ``tokens``
    tokens and the sample corpus over two node processes, in a fresh temporary folder named ``prefix``…"""
    front, n1, n2 = free_ports(3)
    stack = DemoStack(Path(tempfile.mkdtemp(prefix=prefix)), front, (n1, n2), generated=True, web_tokens=tokens,
                      log_level="warning")
    stack.prepare()
    return stack


@contextmanager
def ewt_in_partitions(prefix: str) -> Iterator[tuple[Path, EncodeResult]]:
    """EWT from ``../shared/reference`` encoded, cut at text boundaries into five partitions (~55,000
    tokens each), in a temporary folder named ``prefix``… (its ``data`` and ``registry``), removed
    afterwards: the folder, and what the encoder answered (its partitions)."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        base = Path(folder)
        yield base, Encoder(ewt_options(base / "data", base / "registry" / "ewt", partition_tokens=55_000)).run()


class ServedStack(DemoStack):
    """A corpus encoded elsewhere (``bench/scale.py --keep``'s 1,000-MT partition), served as it is: one
    node process serving it as one partition, behind the front end, in a fresh temporary folder."""

    def __init__(self, registry: Path, corpus: str, settings: dict[str, object], sketch_grammar: str | None = None,
                 ) -> None:
        front, node = free_ports(2)
        super().__init__(Path(tempfile.mkdtemp(prefix="cowbird-bench-served-")), front, (node, node), name=corpus,
                         settings=settings, log_level="warning", replica=False)
        self.registry = registry.resolve()
        self.sketch_grammar = sketch_grammar  # the corpus's word sketch grammar, if it has one

    def prepare(self) -> None:
        """The corpus's manifest (one partition at offset 0), the node token and the configuration."""
        entry = parse_registry(find_registry_file(self.registry, self.name))
        size = CwbCorpus.open(self.registry, self.name).size
        manifest = self.base / f"{self.name}.manifest.json"
        Manifest(corpus=self.name, size=size, charset=entry.charset, p_attributes=entry.p_attributes,
                 s_attributes=entry.s_attributes, meta=[a for a in entry.s_attributes if a in entry.annotated],
                 registry=self.registry, partitions=[ManifestPartition(id=self.name, size=size, offset=0,
                                                                       data=entry.home)]).write(manifest)
        (self.base / "node.token").write_text(secrets.token_urlsafe(32) + "\n")
        self.partitions = [self.name]
        extra = "".join(f"{key} = {json.dumps(value)}\n" for key, value in self.settings.items())
        node = f"http://127.0.0.1:{self.node_ports[0]}"
        (self.base / "cowbird.toml").write_text(
            f'port = {self.port}\n{extra}\n[nodes]\ntoken_file = "node.token"\n\n[[corpora]]\nname = "{self.name}"\n'
            f'access = "public"\nmanifest = "{manifest}"\n'
            + (f'sketch_grammar = "{self.sketch_grammar}"\n' if self.sketch_grammar else "")
            + f'\n[corpora.nodes]\n{self.name} = ["{node}"]\n')

    def start(self) -> None:
        port = self.node_ports[0]
        started = [(["node", "serve", "--registry", str(self.registry), "--corpus", self.name, "--port", str(port),
                     "--token-file", "node.token", "--log-level", self.log_level], f"http://127.0.0.1:{port}/health"),
                   (["serve", "--config", "cowbird.toml", "--log-level", self.log_level], f"{self.url}/api/v1/corpora")]
        for args, health in started:  # the node first: the front end checks its nodes as it starts
            process = subprocess.Popen([sys.executable, "-m", "cowbird", *args], cwd=self.base)
            self.processes.append(process)
            self._await(process, args, health)


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
