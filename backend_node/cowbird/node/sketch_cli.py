"""``cowbird sketches build``: build the word sketch tables of a corpus's partitions (``cowbird info``
lists them).

A table holds one relation's instances counted by (headword, collocate) on one partition
(``cowbird.engines.analyses.sketches``); a node reads the tables of the partitions it serves instead
of running the relation's queries for every sketch. The build runs the grammar's queries with the
engine a node runs, one relation at a time, its hits counted piece by piece as the engine finds them
(memory follows the table, not the hits), and saves each table as soon as it is counted: a build
that stops (or is stopped) resumes where it was, and tables already built are not counted again
(``--rebuild`` counts them anyway).

A grammar's queries that can look past its ``*STRUCTLIMIT`` (a lookahead reading the next sentence's
first token: ``cowbird.query.sketch_grammar.reads_past``) are warned about on stderr before the build
(``cowbird sketches check`` says the same without building), and each table built from such a query
keeps the warning, which ``cowbird info`` shows beside it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import click

from cowbird.core.errors import CowbirdError
from cowbird.core.manifest import Manifest
from cowbird.core.search.sketches import STRATEGY
from cowbird.engines import DEFAULT_HARD_BOUNDARY, ENGINES, Deadline, EngineName, QueryEngine, open_engine
from cowbird.engines.analyses import sketches
from cowbird.engines.analyses.sketches import RelationTable
from cowbird.engines.native import NativeEngine
from cowbird.engines.results import ArrayResultSet, Matches
from cowbird.node.local import command_line_settings
from cowbird.query import Query, parse_cqp, serialize
from cowbird.query.sketch_grammar import SHIPPED, SketchGrammar, SketchGrammarError, load_grammar

MAX_INSTANCES = 2_000_000_000
"""Hits of one relation's queries a build counts on one partition (the node's own limit is lower)."""


@click.group("sketches")
def sketches_group() -> None:
    """Word sketch tables: check a grammar, build its tables for a corpus's partitions (cowbird info lists them)."""


def _partitions(registry: Path, corpus: str | None, manifest: Path | None) -> list[str]:
    if (corpus is None) == (manifest is None):
        raise click.UsageError("give either CORPUS or --manifest FILE")
    if manifest is not None:
        try:
            return [p.id for p in Manifest.load(manifest).partitions]
        except CowbirdError as exc:
            raise click.ClickException(str(exc)) from exc
    assert corpus is not None
    return [corpus]


@sketches_group.command("build")
@click.option("-r", "--registry", "registry_dir", required=True, type=click.Path(path_type=Path),
              help="Registry directory.")
@click.option("--grammar", required=True, help=f"A shipped sketch grammar ({', '.join(SHIPPED)}) or a grammar file: "
              "the corpus's sketch_grammar in the front end's configuration.")
@click.option("--manifest", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Build every partition of this manifest.")
@click.option("--engine", type=click.Choice(ENGINES), default="native", show_default=True,
              help="The engine that runs the relations' queries (the node's).")
@click.option("--rebuild", is_flag=True, help="Count the tables already built again.")
@click.argument("corpus", required=False)
def build_command(registry_dir: Path, grammar: str, manifest: Path | None, engine: EngineName, rebuild: bool,
                  corpus: str | None) -> None:
    """Count every relation of GRAMMAR on CORPUS (or every partition of --manifest) and save the tables
    in each partition's home directory (sketches/)."""
    try:
        loaded = load_grammar(grammar)
    except SketchGrammarError as exc:
        raise click.ClickException(exc.pretty()) from exc
    _warn(loaded)
    started = time.perf_counter()
    built = kept = 0
    for pid in _partitions(registry_dir, corpus, manifest):
        try:
            made, known = build_tables(registry_dir, pid, loaded, engine, rebuild, click.echo)
        except SketchGrammarError as exc:
            raise click.ClickException(exc.pretty()) from exc
        except CowbirdError as exc:
            raise click.ClickException(str(exc)) from exc
        built, kept = built + made, kept + known
    click.echo(f"built {built} tables, kept {kept}, in {time.perf_counter() - started:.1f} s")


@sketches_group.command("check")
@click.argument("grammar")
def check_command(grammar: str) -> None:
    """Read GRAMMAR (a shipped grammar's name or a file) as the front end and the build do: its
    relations, their labels and queries as CQP, a warning for each query that can look past its
    *STRUCTLIMIT and one for each relation without a *LABEL (a label given twice is an error)."""
    try:
        loaded = load_grammar(grammar)
    except SketchGrammarError as exc:
        raise click.ClickException(exc.pretty()) from exc
    for relation in loaded.relations:
        shown = relation.name if relation.inverse is None else f"{relation.name}/{relation.inverse}"
        click.echo(f"{shown}{' (symmetric)' if relation.symmetric else ''}")
        labels = [label for label in (relation.label, relation.inverse_label) if label is not None]
        if labels:
            click.echo(f"  label: {' / '.join(labels)}")
        for query, line in zip(relation.queries, relation.lines, strict=True):
            click.echo(f"  {line}: {query}")
    _warn(loaded)
    for warning in loaded.unlabelled:
        click.echo(f"warning: {warning}", err=True)
    warned = len(loaded.warnings) + len(loaded.unlabelled)
    click.echo(f"{loaded.source}: {len(loaded.relations)} relations, {warned} warnings")


def _warn(grammar: SketchGrammar) -> None:
    """Each query of the grammar that can look past its *STRUCTLIMIT, on stderr."""
    for warning in grammar.warnings:
        click.echo(f"warning: {warning}", err=True)


def build_tables(registry_dir: Path, pid: str, grammar: SketchGrammar, engine: EngineName, rebuild: bool,
                 report: Callable[[str], None]) -> tuple[int, int]:
    """Count and save the table of each relation of ``grammar`` on one partition (those saved before
    are kept unless ``rebuild``), telling ``report`` about each; the tables built and kept."""
    settings = command_line_settings(registry_dir, engine)
    opened = open_engine(registry_dir, pid, engine, settings.engine_options())
    store = opened.store
    grammar.check(store.p_attribute_names, store.s_attribute_names, pid)
    relations = grammar.relations
    report(f"{pid}: {store.size:,} tokens, {len(relations)} relations of {grammar.name}")
    built = kept = 0
    for number, relation in enumerate(relations, start=1):
        texts = [serialize(parse_cqp(q)) for q in relation.queries]  # as the node names them
        key = sketches.table_key(grammar.attribute, tuple(texts), relation.symmetric, STRATEGY,
                                 DEFAULT_HARD_BOUNDARY)
        if not rebuild and sketches.saved(store, key) is not None:
            kept += 1
            report(f"  [{number}/{len(relations)}] {relation.name}: built before, kept")
            continue
        begun = time.perf_counter()
        table = count_relation(opened, [parse_cqp(text) for text in texts], grammar.attribute, relation.symmetric)
        warnings = [str(w) for w in grammar.warnings if w.relation == relation.name]
        sketches.save(store, key, table, {"grammar": grammar.name, "relation": relation.name, "order": number,
                                          "inverse": relation.inverse, "symmetric": relation.symmetric,
                                          "attribute": grammar.attribute, "queries": texts, "warnings": warnings})
        built += 1
        report(f"  [{number}/{len(relations)}] {relation.name}: {table.instances:,} instances, "
               f"{len(table.counts):,} pairs ({time.perf_counter() - begun:.1f} s)")
        del table
    return built, kept


def count_relation(opened: QueryEngine, queries: list[Query], attribute: str, symmetric: bool) -> RelationTable:
    """A relation's table on one partition, its queries' hits counted piece by piece as the native
    engine finds them (``NativeEngine.stream``): memory follows the table and a few ranges' hits. The
    queries' pieces are taken in turns; a pair is final once every query is past it. (The cwb engine
    answers each query whole.)"""
    deadline = Deadline()
    counter = sketches.TableCounter(opened.store, attribute, symmetric, MAX_INSTANCES)
    streams: list[Iterator[tuple[Matches, int]]] = []
    for query in queries:
        if isinstance(opened, NativeEngine):
            streams.append(opened.stream(query, STRATEGY, DEFAULT_HARD_BOUNDARY, deadline))
        else:
            result = opened.run(query, STRATEGY, DEFAULT_HARD_BOUNDARY, deadline)
            assert isinstance(result, ArrayResultSet)
            streams.append(iter([(result.matches, opened.size)]))
    floors = [0] * len(streams)
    while streams:
        pieces = []
        for index, stream in enumerate(streams):
            piece = next(stream, None)
            if piece is None:
                floors[index] = -1  # this query has no more hits
                continue
            pieces.append(piece[0])
            floors[index] = piece[1]
        streams = [stream for stream, floor in zip(streams, floors, strict=True) if floor >= 0]
        floors = [floor for floor in floors if floor >= 0]
        counter.add(deadline, pieces, min(floors) if floors else None)
    return counter.table()
