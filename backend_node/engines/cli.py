"""``cowbird query``: run CQP on one corpus from the command line, as CQP's ``dump`` or a concordance."""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass
from pathlib import Path

import click

from backend_node.engines import (
    DEFAULT_HARD_BOUNDARY,
    ENGINES,
    STRATEGIES,
    Context,
    EngineName,
    KwicLine,
    QueryEngine,
    Strategy,
    open_engine,
)
from backend_node.store import Manifest, StoreError
from cowbird.errors import CowbirdError
from query_lang import QueryError, parse_cqp


def format_line(line: KwicLine, offset: int = 0) -> str:
    """``match: left <keyword> right`` with tokens as ``word/lemma/...`` (``offset``: of the partition)."""

    def tokens(values: list[list[str]]) -> str:
        return " ".join("/".join(token) for token in values)

    parts = [tokens(line.left), f"<{tokens(line.keyword)}>", tokens(line.right)]
    return f"{line.hit.match + offset:>9}: " + " ".join(p for p in parts if p)


@dataclass(frozen=True)
class Preview:
    """What one query run prints or builds: strategy, boundary, concordance shape."""

    strategy: Strategy
    hard_boundary: int
    kwic: int
    limit: int
    show: list[str]

    def run(self, engine: QueryEngine, query: str) -> tuple[int, list[KwicLine]]:
        """The exact total and the first ``limit`` concordance lines."""
        result = engine.run(query, self.strategy, self.hard_boundary)
        return result.total, result.kwic(0, self.limit, Context(self.kwic), self.show, [])


@click.command("query")
@click.option("-r", "--registry", "registry_dir", required=True, type=click.Path(path_type=Path),
              help="Registry directory.")
@click.option("-C", "--corpus", "corpus_id", default=None, help="Corpus (or partition) id.")
@click.option("--manifest", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A partitioned corpus's manifest: run over all its partitions in order, global positions.")
@click.option("--engine", type=click.Choice(ENGINES), default="native", show_default=True, help="Query engine.")
@click.option("--count", is_flag=True, help="Print only the number of hits.")
@click.option("--kwic", type=click.IntRange(0, 1000), default=None,
              help="Print the total, then concordance lines with this many tokens of context.")
@click.option("--show", multiple=True, help="Further p-attributes to show in concordance lines (repeatable).")
@click.option("--limit", type=click.IntRange(0), default=100, show_default=True,
              help="Concordance lines to print (--kwic, --batch).")
@click.option("--strategy", type=click.Choice(STRATEGIES), default="standard", show_default=True,
              help="CQP's MatchingStrategy.")
@click.option("--hard-boundary", type=click.IntRange(1), default=DEFAULT_HARD_BOUNDARY, show_default=True,
              help="CQP's HardBoundary: longest match, in tokens, when the query has no 'within'.")
@click.option("--batch", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Run every 'id<TAB>query' line of this file after opening the corpus once.")
@click.option("--timing", is_flag=True, help="With --batch: print id, hits and milliseconds per query.")
@click.argument("query", required=False)
def query_command(
    registry_dir: Path,
    corpus_id: str | None,
    manifest: Path | None,
    engine: EngineName,
    query: str | None,
    count: bool,
    kwic: int | None,
    show: tuple[str, ...],
    limit: int,
    strategy: Strategy,
    hard_boundary: int,
    batch: Path | None,
    timing: bool,
) -> None:
    """Run a CQP query on a corpus and print its hits as CQP's dump does (match<TAB>matchend).

    \b
    Examples:
      cowbird query -r registry -C ewt '[lemma="go"] []{0,2} [word="to"]'
      cowbird query -r registry --manifest ewt.manifest.json --count '"house"'
      cowbird query -r registry -C ewt --kwic 10 --show lemma '"house"'
      cowbird query -r registry -C ewt --batch queries.tsv --kwic 10 --show lemma --timing
    """
    if (query is None) == (batch is None):
        raise click.UsageError("give either a QUERY or --batch FILE")
    if (corpus_id is None) == (manifest is None):
        raise click.UsageError("give either -C CORPUS or --manifest FILE")
    preview = Preview(strategy, hard_boundary, kwic or 0, limit, list(show))
    if manifest is not None:
        if batch is not None:
            raise click.UsageError("--batch runs on one corpus (-C); with --manifest give a QUERY")
        assert query is not None
        _over_partitions(registry_dir, manifest, engine, query, count, kwic, preview)
        return
    assert corpus_id is not None
    try:
        corpus = open_engine(registry_dir, corpus_id, engine)
        if batch is not None:
            _batch(corpus, batch, preview, timing)
            return
        assert query is not None
        if kwic is not None:
            total, lines = preview.run(corpus, query)
            click.echo(total)
            for line in lines:
                click.echo(format_line(line))
            return
        result = corpus.run(query, strategy, hard_boundary)
        if count:
            click.echo(result.total)
            return
        out = sys.stdout
        for hit in result.hits():
            out.write(f"{hit.match}\t{hit.matchend}\n")
    except QueryError as exc:
        click.echo(exc.pretty(), err=True)
        sys.exit(1)
    except CowbirdError as exc:
        raise click.ClickException(exc.detail) from exc


def _over_partitions(registry_dir: Path, manifest_path: Path, engine: EngineName, query: str, count: bool,
                     kwic: int | None, preview: Preview) -> None:
    """The query over every partition of a manifest, in order, with global positions; a ``cut``
    applies to the whole corpus, as on the front end."""
    lines: list[str] = []
    total = 0
    try:
        manifest = Manifest.load(manifest_path)
        cut = parse_cqp(query).cut
        for partition in manifest.partitions:
            corpus = open_engine(registry_dir, partition.id, engine)
            result = corpus.run(query, preview.strategy, preview.hard_boundary)
            found = result.total if cut is None else min(result.total, cut - total)
            total += found
            if kwic is not None:
                room = max(0, min(found, preview.limit - len(lines)))
                lines += [format_line(kwic_line, partition.offset)
                          for kwic_line in result.kwic(0, room, Context(kwic), preview.show, [])]
            elif not count:
                for hit in result.hits(0, found):
                    sys.stdout.write(f"{hit.match + partition.offset}\t{hit.matchend + partition.offset}\n")
            if cut is not None and total >= cut:
                break
    except QueryError as exc:
        click.echo(exc.pretty(), err=True)
        sys.exit(1)
    except (CowbirdError, StoreError) as exc:
        raise click.ClickException(str(exc)) from exc
    if count or kwic is not None:
        click.echo(total)
    for text in lines:
        click.echo(text)


def _batch(engine: QueryEngine, path: Path, preview: Preview, timing: bool) -> None:
    """The preview workload for each query: exact total and the first lines built (not printed)."""
    failures = 0
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        query_id, _, text = line.partition("\t")
        if not text:
            raise click.ClickException(f"{path}:{number}: expected 'id<TAB>query'")
        started = time.perf_counter()
        try:
            total, _lines = preview.run(engine, text)
        except (QueryError, CowbirdError) as exc:
            failures += 1
            click.echo(f"{query_id}\terror\t{str(exc).splitlines()[0]}")
            continue
        elapsed = (time.perf_counter() - started) * 1000
        click.echo(f"{query_id}\t{total}\t{elapsed:.1f}" if timing else f"{query_id}\t{total}")
    if failures:
        sys.exit(1)
