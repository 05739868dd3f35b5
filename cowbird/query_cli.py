"""``cowbird query``: run CQP on one corpus from the command line, as CQP's ``dump`` or a concordance."""

from __future__ import annotations

import heapq
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import click

from cowbird.core import analysis_merge as merge
from cowbird.core.analysis_spec import parse_fold, parse_sort, parse_span
from cowbird.core.errors import CowbirdError
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
from cowbird.engines.results import ArrayResultSet
from cowbird.node import compute
from cowbird.query import QueryError, parse_cqp
from cowbird.store import Manifest, StoreError


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
    if analysis.wanted:
        if query is None:
            raise click.UsageError("an analysis runs one QUERY (not --batch)")
        try:
            partitions = [(corpus_id or "", 0)] if manifest is None else \
                [(p.id, p.offset) for p in Manifest.load(manifest).partitions]
            analysis.run(registry_dir, partitions, engine, query, preview)
        except QueryError as exc:
            click.echo(exc.pretty(), err=True)
            sys.exit(1)
        except (CowbirdError, StoreError) as exc:
            raise click.ClickException(str(exc)) from exc
        return
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


@dataclass(frozen=True)
class Analysis:
    """An analysis of the hits over one corpus or every partition of a manifest, summed as the front end
    sums them (``cowbird.core.analysis_merge``), printed as TSV with a header."""

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

    def run(self, registry: Path, partitions: list[tuple[str, int]], engine_name: EngineName, query: str,
            preview: Preview) -> None:
        if sum(x is not None for x in (self.frequency, self.distribution, self.collocations, self.sort)) > 1:
            raise click.UsageError("give one of --frequency, --distribution, --collocations, --sort")
        results = []
        for partition, offset in partitions:
            engine = open_engine(registry, partition, engine_name)
            result = engine.run(query, preview.strategy, preview.hard_boundary)
            if not isinstance(result, ArrayResultSet) or result.held < result.total:
                raise click.ClickException(f"{partition}: an analysis needs every hit; narrow the query down")
            results.append((result, offset))
        out = sys.stdout
        if self.frequency is not None:
            span, fold = parse_span(self.on), parse_fold(self.fold)
            parts = [compute.frequency(r.corpus, r.matches, self.frequency, span, fold, 10**9) for r, _ in results]
            ordered = merge.merge_frequencies([(p.values, p.counts) for p in parts])
            out.write("frequency\tvalue\n")
            out.writelines(f"{count}\t{value}\n" for value, count in ordered)
        elif self.distribution is not None:
            sums = merge.DistributionSums()
            outside = 0
            for r, _ in results:
                d = compute.distribution(r.corpus, r.matches, self.distribution, 10**9)
                sums.add(d.values, d.hits, d.regions_with_hits, d.tokens, d.regions)
                outside += d.outside
            out.write("value\thits\ttokens\tper_million\tregions\tregions_with_hits\n")
            for row in merge.distribution_table(sums, outside, True, False).rows:
                out.write(f"{row.value}\t{row.hits}\t{row.tokens}\t{row.per_million:.6g}\t{row.regions}\t"
                          f"{row.regions_with_hits}\n")
            if outside:
                click.echo(f"{outside} hits outside every {self.distribution} region", err=True)
        elif self.collocations is not None:
            self._collocations(results, out)
        else:
            assert self.sort is not None
            key = parse_sort(self.sort + (f"%{self.fold}" if self.fold and "%" not in self.sort else ""),
                             "desc" if self.descending else "asc")
            streams = []
            for k, (r, offset) in enumerate(results):
                order = compute.sort_order(r.corpus, r.matches, key, offset)
                keys = order.keys(list(range(len(order.order))))
                streams.append([(merge.MergeKey(value, self.descending), k, rank, order, offset)
                                for rank, value in enumerate(keys)])
            for _, _, rank, order, offset in heapq.merge(*streams, key=lambda item: item[:3]):
                hit = int(order.order[rank])
                out.write(f"{int(order.matches.match[hit]) + offset}\t{int(order.matches.matchend[hit]) + offset}\n")

    def _collocations(self, results: list[tuple[ArrayResultSet, int]], out: TextIO) -> None:
        sums = merge.CooccurrenceSums()
        parts = []
        assert self.collocations is not None
        for r, _ in results:
            c = compute.cooccurrence(r.corpus, r.matches, self.collocations, self.window, self.window, self.within,
                                     10**9)
            parts.append((r, c))
            sums.add(c.values, c.f, c.marginal, c.in_nodes)
            sums.context_tokens += c.context_tokens
            sums.node_tokens += c.node_tokens
            sums.size += c.size
        wanted = {v for v, f in sums.f.items() if f >= self.min_freq}
        for r, c in parts:  # marginals where a collocate does not co-occur
            absent = sorted(wanted - set(c.values))
            sums.add(absent, [0] * len(absent), compute.marginals(r.corpus, self.collocations, absent),
                     [0] * len(absent))
        table = merge.collocation_table(sums, list(merge.MEASURES), "log_likelihood", self.min_freq)
        out.write("\t".join(["value", "f", "f2", "expected", *merge.MEASURES]) + "\n")
        for row in table.rows:
            scores = "\t".join(f"{row.scores[m]:.6g}" for m in merge.MEASURES)
            out.write(f"{row.value}\t{row.f}\t{row.f2}\t{row.expected:.6g}\t{scores}\n")

