"""``cowbird query``: run CQP on one corpus, or over every partition of a manifest, from the command
line — as CQP's ``dump``, a concordance or an analysis.

Every answer but ``--batch`` comes from a :class:`~cowbird.core.search.Search` over the partitions
opened in this process (:class:`~cowbird.node.local.LocalPartitions`): the same plans and merges as
the front end's over the nodes, so the two agree hit for hit and count for count. ``--batch`` times
the engine itself (the preview workload: exact total and the first lines), one query after another.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from cowbird.core import analysis_merge as merge
from cowbird.core.analysis_spec import parse_sort
from cowbird.core.errors import CowbirdError
from cowbird.core.manifest import Manifest
from cowbird.core.search import CheckedQuery, HitView, Search, answered_total
from cowbird.core.wire import Line
from cowbird.engines import (
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
from cowbird.node.local import LocalCorpus, LocalPartition, LocalPartitions
from cowbird.query import QueryError, parse_cqp

T = TypeVar("T")


def format_line(line: KwicLine | Line, offset: int = 0) -> str:
    """``match: left <keyword> right`` with tokens as ``word/lemma/...`` (``offset``: of the partition)."""

    def tokens(values: list[list[str]]) -> str:
        return " ".join("/".join(token) for token in values)

    match = line.hit.match if isinstance(line, KwicLine) else line.match
    parts = [tokens(line.left), f"<{tokens(line.keyword)}>", tokens(line.right)]
    return f"{match + offset:>9}: " + " ".join(p for p in parts if p)


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
@click.option("--frequency", "frequency_by", metavar="ATT", default=None,
              help="Print a frequency breakdown of the hits by this p-attribute (CQP's count A by ATT).")
@click.option("--on", "on", metavar="SPAN", default=None,
              help="With --frequency: match, matchend[1], match[-1], target, keyword, match..matchend "
                   "(default: the whole match).")
@click.option("--fold", type=click.Choice(["c", "d", "cd"]), default=None,
              help="With --frequency or --sort: fold case (c) and/or diacritics (d).")
@click.option("--distribution", "distribution_by", metavar="S_ATT", default=None,
              help="Print hits per value of this s-attribute with each value's size (CQP's group A match S_ATT).")
@click.option("--collocations", "collocations_by", metavar="ATT", default=None,
              help="Print collocates of the hits on this p-attribute with association measures.")
@click.option("--window", type=click.IntRange(1, 100), default=5, show_default=True,
              help="With --collocations: tokens each side.")
@click.option("--within", "within", metavar="S_ATT", default=None,
              help="With --collocations: windows stay inside this region (s, text).")
@click.option("--min-freq", type=click.IntRange(1), default=2, show_default=True,
              help="With --collocations: least co-occurrences.")
@click.option("--sort", "sort_by", metavar="KEY", default=None,
              help="Print the hits sorted: match.lemma, match..matchend.word, left1.word, right2.pos, random.")
@click.option("--descending", is_flag=True, help="With --sort: descending order.")
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
    frequency_by: str | None,
    on: str | None,
    fold: str | None,
    distribution_by: str | None,
    collocations_by: str | None,
    window: int,
    within: str | None,
    min_freq: int,
    sort_by: str | None,
    descending: bool,
) -> None:
    """Run a CQP query on a corpus and print its hits as CQP's dump does (match<TAB>matchend).

    \b
    Examples:
      cowbird query -r registry -C ewt '[lemma="go"] []{0,2} [word="to"]'
      cowbird query -r registry --manifest ewt.manifest.json --count '"house"'
      cowbird query -r registry -C ewt --kwic 10 --show lemma '"house"'
      cowbird query -r registry -C ewt --batch queries.tsv --kwic 10 --show lemma --timing
      cowbird query -r registry --manifest ewt.manifest.json --frequency lemma '[pos="JJ"]'
      cowbird query -r registry -C ewt --distribution text_genre '[lemma="go"]'
      cowbird query -r registry -C ewt --collocations lemma --window 5 --within s '[lemma="go"]'
      cowbird query -r registry -C ewt --sort right1.word '[lemma="go"]'
    """
    if (query is None) == (batch is None):
        raise click.UsageError("give either a QUERY or --batch FILE")
    if (corpus_id is None) == (manifest is None):
        raise click.UsageError("give either -C CORPUS or --manifest FILE")
    preview = Preview(strategy, hard_boundary, kwic or 0, limit, list(show))
    analysis = Analysis(frequency_by, on, fold or "", distribution_by, collocations_by, window, within, min_freq,
                        sort_by, descending)
    if analysis.wanted and query is None:
        raise click.UsageError("an analysis runs one QUERY (not --batch)")
    if batch is not None and manifest is not None:
        raise click.UsageError("--batch runs on one corpus (-C); with --manifest give a QUERY")
    try:
        if batch is not None:
            assert corpus_id is not None
            _batch(open_engine(registry_dir, corpus_id, engine), batch, preview, timing)
            return
        assert query is not None
        search = _search(registry_dir, corpus_id, manifest, engine, query, preview)
        if analysis.wanted:
            analysis.run(search)
        elif kwic is not None:
            _concordance(search, limit)
        else:
            _dump(search, count)
    except QueryError as exc:
        click.echo(exc.pretty(), err=True)
        sys.exit(1)
    except CowbirdError as exc:
        raise click.ClickException(exc.detail) from exc


def _search(registry: Path, corpus_id: str | None, manifest: Path | None, engine: EngineName, text: str,
            preview: Preview) -> Search[LocalPartition]:
    """The search of ``text`` over one corpus of the registry or every partition of a manifest."""
    parsed = parse_cqp(text)
    query = CheckedQuery.of(parsed, preview.strategy, preview.hard_boundary)
    view = HitView(preview.kwic, ["word", *preview.show], [])
    if manifest is not None:
        corpus = LocalCorpus.of_manifest(Manifest.load(manifest))
        partitions = LocalPartitions.open(registry, [p.id for p in corpus.partitions], engine)
    else:
        assert corpus_id is not None
        partitions = LocalPartitions.open(registry, [corpus_id], engine)
        corpus = LocalCorpus.of_engine(corpus_id, partitions.engine(corpus_id))
    return Search(partitions, corpus, query, view)


def _answer(work: Coroutine[Any, Any, T]) -> T:
    return asyncio.run(work)


def _concordance(search: Search[LocalPartition], limit: int) -> None:
    """The exact total, then the first ``limit`` concordance lines (a ``cut`` applies to the whole corpus)."""

    async def work() -> tuple[int, list[str]]:
        statuses, found = await search.window(0, limit)
        return answered_total(statuses), [format_line(f.line, f.partition.offset) for f in found]

    total, lines = _answer(work())
    click.echo(total)
    for text in lines:
        click.echo(text)


def _dump(search: Search[LocalPartition], count: bool) -> None:
    """The total (``--count``), or every hit as ``match<TAB>matchend`` with global positions."""

    async def work() -> None:
        statuses = await search.count()
        total = answered_total(statuses)
        if count:
            click.echo(total)
            return
        out = sys.stdout
        async for found in search.stream(statuses, 0, total):
            out.write(f"{found.position}\t{found.matchend}\n")

    _answer(work())


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


@dataclass(frozen=True)
class Analysis:
    """An analysis of the hits, over one corpus or every partition of a manifest, exactly as the front
    end makes it over the nodes, printed as TSV with a header."""

    frequency: str | None
    on: str | None
    fold: str
    distribution: str | None
    collocations: str | None
    window: int
    within: str | None
    min_freq: int
    sort: str | None
    descending: bool

    @property
    def wanted(self) -> bool:
        return any(x is not None for x in (self.frequency, self.distribution, self.collocations, self.sort))

    def run(self, search: Search[LocalPartition]) -> None:
        if sum(x is not None for x in (self.frequency, self.distribution, self.collocations, self.sort)) > 1:
            raise click.UsageError("give one of --frequency, --distribution, --collocations, --sort")
        out = sys.stdout
        if self.frequency is not None:
            _, table = _answer(search.frequency(self.frequency, self.on, self.fold, 1, 0, None))
            out.write("frequency\tvalue\n")
            out.writelines(f"{row.frequency}\t{row.value}\n" for row in table.rows)
        elif self.distribution is not None:
            _, found = _answer(search.distribution(self.distribution))
            out.write("value\thits\ttokens\tper_million\tregions\tregions_with_hits\n")
            for row in found.rows:
                out.write(f"{row.value}\t{row.hits}\t{row.tokens}\t{row.per_million:.6g}\t{row.regions}\t"
                          f"{row.regions_with_hits}\n")
            if found.outside:
                click.echo(f"{found.outside} hits outside every {self.distribution} region", err=True)
        elif self.collocations is not None:
            _, collocates = _answer(search.collocations(self.collocations, self.window, self.window, self.within,
                                                        list(merge.MEASURES), "log_likelihood", self.min_freq))
            out.write("\t".join(["value", "f", "f2", "expected", *merge.MEASURES]) + "\n")
            for c in collocates.rows:
                scores = "\t".join(f"{c.scores[m]:.6g}" for m in merge.MEASURES)
                out.write(f"{c.value}\t{c.f}\t{c.f2}\t{c.expected:.6g}\t{scores}\n")
        else:
            assert self.sort is not None
            key = parse_sort(self.sort + (f"%{self.fold}" if self.fold and "%" not in self.sort else ""),
                             "desc" if self.descending else "asc")
            search.check_sort(key, self.sort)
            plain = search.refined(search.query)
            plain.view = HitView(0, [], [])

            async def work() -> None:
                statuses = await plain.count()
                async for found in plain.stream(statuses, 0, answered_total(statuses), sort=key):
                    out.write(f"{found.position}\t{found.matchend}\n")

            _answer(work())
