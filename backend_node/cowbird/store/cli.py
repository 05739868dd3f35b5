"""``cowbird encode``, ``cowbird compress``, ``cowbird info`` and ``cowbird partitions``: cwb-encode's flags,
cwb-huffcode's and cwb-compress-rdx's work, cwb-describe-corpus's report, the tokens around each partition."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeElapsedColumn

from cowbird.core.errors import StoreError
from cowbird.core.manifest import Manifest
from cowbird.store.compress import compress_corpus
from cowbird.store.encoder import DEFAULT_PARTITION_TOKENS, EncodeOptions, Encoder, EncodeResult
from cowbird.store.info import describe
from cowbird.store.neighbours import Neighbours, write_neighbours
from cowbird.store.reader import CwbCorpus
from cowbird.store.registry import RegistryEntry, find_registry_file, parse_registry, parse_s_declaration
from cowbird.store.sketch_tables import describe_tables, saved_tables
from cowbird.store.strings import parse_memory


class _OrderedDeclarations(click.Command):
    """Remembers the command-line order of -S and -V, which fixes the registry's order as in cwb-encode."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        order: list[tuple[str, str]] = []
        it = iter(args)
        for arg in it:
            if arg in ("-S", "-V"):
                order.append((arg, next(it, "")))
            elif len(arg) > 2 and arg[:2] in ("-S", "-V"):
                order.append((arg[:2], arg[2:]))
        ctx.meta["s_order"] = order
        return super().parse_args(ctx, args)


@click.command("encode", cls=_OrderedDeclarations)
@click.option("-f", "input_file", required=True, type=click.Path(path_type=Path), help="VRT input (.vrt or .vrt.gz).")
@click.option("-d", "data_dir", required=True, help="Directory for the corpus data files.")
@click.option("-R", "registry_file", required=True, type=click.Path(path_type=Path), help="Registry file to write.")
@click.option("--relative-home", is_flag=True,
              help="Write -d as typed into the registry's HOME (as cwb-encode does); it then works only from "
              "the directory that encoded it. Default: the absolute path.")
@click.option("-c", "charset", default="latin1", show_default=True, help="Character set: utf8, latin1 or ascii.")
@click.option("-x", "xml", is_flag=True, help="XML-aware: decode entities, skip <?...?> and <!...> lines.")
@click.option("-s", "skip_blank", is_flag=True, help="Skip empty lines.")
@click.option("-B", "strip_blanks", is_flag=True, help="Strip leading and trailing blanks of fields and values.")
@click.option(
    "-p", "default_attribute", default="word", show_default=True, help="Name of the first column ('-': none)."
)
@click.option("-P", "p_attributes", multiple=True, help="Declare a p-attribute (one per further column).")
@click.option("-S", "s_attributes", multiple=True, help="Declare an s-attribute: name[:depth][+key...].")
@click.option("-V", "v_attributes", multiple=True, help="Like -S, and keep the whole attribute string too.")
@click.option("-q", "quiet", is_flag=True, help="Do not print warnings.")
@click.option(
    "--partition-tokens",
    type=int,
    default=None,
    help=f"Cut into partitions of at most this many tokens (the paper's ~1 GT: {DEFAULT_PARTITION_TOKENS}).",
)
@click.option("--partition-at", default=None, help="Element to cut before (default: text, else the first -S).")
@click.option("-j", "--jobs", type=click.IntRange(1, 2), default=2, show_default=True,
              help="Processes: 2 reads the input twice and writes half of the p-attributes in each.")
@click.option("--manifest", type=click.Path(path_type=Path), default=None, help="Where to write the corpus manifest.")
@click.option("--memory", "memory", default=None, metavar="SIZE",
              help="Memory for the tables of distinct strings (lexicons, region values) and the sorted copy each "
              "needs while written out, e.g. 2GB; past it they spill to sorted runs on disk and are merged at the "
              "end (the same files). Default: a quarter of RAM.")
@click.option("--compress", is_flag=True,
              help="Then compress every p-attribute of every partition as cowbird compress does.")
@click.pass_context
def encode_command(ctx: click.Context, /, **kw: Any) -> None:
    """Encode a VRT file into CWB format, as cwb-encode followed by cwb-makeall would.

    \b
    Example:
      cowbird encode -f ewt.vrt -d data/ewt -R registry/ewt -c utf8 -xsB \\
        -P pos -P upos -P lemma -S text:0+id+genre+host+year+date+url -S p:0 -S s:0+id
    """
    try:
        options = _encode_options(ctx.meta["s_order"], kw)

        def warn(message: str) -> None:
            if not kw["quiet"]:
                click.echo(f"warning: {message}", err=True)

        total = options.input.stat().st_size if options.input.exists() and options.input.suffix != ".gz" else None
        started = time.perf_counter()
        with Progress(
            TextColumn("encoding"), BarColumn(), DownloadColumn(), TimeElapsedColumn(),
            transient=True, disable=not sys.stderr.isatty(),
        ) as progress:
            task = progress.add_task("encode", total=total)
            encoder = Encoder(
                options, warn=warn, progress=lambda done: progress.update(task, completed=done), jobs=kw["jobs"]
            )
            result = encoder.run()
        elapsed = time.perf_counter() - started
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:  # an output folder that cannot be created or written
        raise click.ClickException(f"{exc.filename or ''}: {exc.strerror or exc}") from exc
    _report(result, elapsed, options.input)
    if kw["compress"] and result.size:
        for registry in result.registry_files:
            _compress(parse_registry(registry), [], keep=False)


def _encode_options(s_order: list[tuple[str, str]], kw: dict[str, Any]) -> EncodeOptions:
    """The options of ``cowbird encode`` checked as cwb-encode checks them (no name declared twice)."""
    decls = [parse_s_declaration(value, keep_all=(flag == "-V")) for flag, value in s_order]
    names = [d.name for d in decls]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate:
        raise StoreError(f"s-attribute <{duplicate}> declared twice")
    p_attrs = ([] if kw["default_attribute"] == "-" else [kw["default_attribute"]]) + list(kw["p_attributes"])
    clash = set(p_attrs) & {n for d in decls for n in d.attribute_names}
    if clash or len(set(p_attrs)) != len(p_attrs):
        raise StoreError(f"attribute name declared twice: {', '.join(sorted(clash) or p_attrs)}")
    return EncodeOptions(
        input=kw["input_file"],
        data_dir=Path(kw["data_dir"]),
        registry_file=kw["registry_file"],
        p_attributes=p_attrs,
        s_attributes=decls,
        charset=kw["charset"].lower(),
        xml=kw["xml"],
        skip_blank=kw["skip_blank"],
        strip_blanks=kw["strip_blanks"],
        partition_tokens=kw["partition_tokens"],
        partition_at=kw["partition_at"],
        manifest=kw["manifest"],
        memory=_memory(kw.get("memory")),
        # HOME: absolute, so that a service started from any directory finds the data; -d as typed
        # (what cwb-encode writes) only with --relative-home
        data_dir_arg=kw["data_dir"] if kw.get("relative_home") else str(Path(kw["data_dir"]).resolve()),
    )


def _memory(text: str | None) -> int | None:
    if text is None:
        return None
    try:
        return parse_memory(text)
    except ValueError as exc:
        raise StoreError(f"--memory: {exc}") from exc


def _report(result: EncodeResult, elapsed: float, source: Path) -> None:
    if result.size == 0:
        click.echo(f"warning: {source} holds no tokens; the corpus is empty", err=True)
    rate = result.size / elapsed if elapsed > 0 else 0.0
    click.echo(f"encoded {result.size:,} tokens in {elapsed:.1f} s ({rate:,.0f} tokens/s)")
    for part in result.partitions:
        click.echo(f"  {part.id}: {part.size:,} tokens at offset {part.offset:,} -> {part.data}")
    for registry in result.registry_files:
        click.echo(f"  registry: {registry}")
    if result.manifest is not None:
        click.echo(f"  manifest: {result.manifest}")


@click.command("compress")
@click.option("-r", "--registry", "registry_dir", required=True, type=click.Path(path_type=Path),
              help="Registry directory.")
@click.option("-P", "attributes", multiple=True, help="Compress only this p-attribute (repeatable; default: all).")
@click.option("--keep", is_flag=True, help="Keep the uncompressed .corpus, .corpus.rev and .corpus.rdx files.")
@click.argument("corpus")
def compress_command(registry_dir: Path, corpus: str, attributes: tuple[str, ...], keep: bool) -> None:
    """Compress a corpus's p-attributes as cwb-huffcode -A then cwb-compress-rdx -A do (the same bytes).

    Each compressed file is decoded again and compared with the original before it is put in place;
    only then are the originals removed (--keep keeps them). Both engines and real CQP read the
    result.

    \b
    Example:
      cowbird compress -r registry ewt
      cowbird compress -r registry ewt -P word -P lemma --keep
    """
    try:
        _compress(parse_registry(find_registry_file(registry_dir, corpus)), list(attributes), keep)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
    except OSError as exc:
        raise click.ClickException(f"{exc.filename or ''}: {exc.strerror or exc}") from exc


def _compress(entry: RegistryEntry, attributes: list[str], keep: bool) -> None:
    started = time.perf_counter()
    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), transient=True,
                  disable=not sys.stderr.isatty()) as progress:
        names = attributes or list(entry.p_attributes)
        task = progress.add_task(f"compressing {entry.corpus_id}", total=len(names))

        def report(message: str) -> None:
            progress.update(task, description=f"{entry.corpus_id}: {message}", advance=0 if "compressing" in message
                            else 1)

        done = compress_corpus(entry, attributes, keep, report)
    before = after = 0
    for item in done:
        before += item.stream_before + item.index_before
        after += item.stream_after + item.index_after
        parts = []
        for what, old, new in (("stream", item.stream_before, item.stream_after),
                               ("index", item.index_before, item.index_after)):
            parts.append(f"{what} already compressed" if what in item.skipped else
                         f"{what} {_size(old)} -> {_size(new)} ({new / old:.0%})")
        click.echo(f"  {entry.corpus_id}.{item.name}: {', '.join(parts)}")
    ratio = f" ({after / before:.0%})" if before else ""
    click.echo(f"compressed {entry.corpus_id} in {time.perf_counter() - started:.1f} s: {_size(before)} -> "
               f"{_size(after)}{ratio}{'; originals kept' if keep else ''}")


def _size(count: int) -> str:
    return f"{count / 2**20:,.1f} MB"


@click.command("info")
@click.option("-r", "--registry", "registry_dir", required=True, type=click.Path(path_type=Path),
              help="Registry directory.")
@click.option("--manifest", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A partitioned corpus's manifest: describe the whole corpus and each partition.")
@click.argument("corpus", required=False)
def info_command(registry_dir: Path, corpus: str | None, manifest: Path | None) -> None:
    """Describe a corpus: size, attributes with type counts, regions (like cwb-describe-corpus -s)."""
    if (corpus is None) == (manifest is None):
        raise click.UsageError("give either CORPUS or --manifest FILE")
    try:
        if manifest is None:
            assert corpus is not None
            opened = CwbCorpus.open(registry_dir, corpus)
            click.echo(describe(opened), nl=False)
            click.echo("\n".join(describe_tables(opened)))
            return
        whole = Manifest.load(manifest)
        click.echo(f"corpus {whole.corpus}: {whole.size:,} tokens in {len(whole.partitions)} partitions "
                   f"({whole.charset})")
        click.echo(f"p-attributes: {', '.join(whole.p_attributes)}")
        click.echo(f"s-attributes: {', '.join(whole.s_attributes)}")
        click.echo("partition\tfirst position\ttokens\tword sketch tables\tneighbours")
        for partition in whole.partitions:
            opened = CwbCorpus.open(registry_dir, partition.id)  # each partition must open, or the corpus is broken
            tables = [t for t in saved_tables(opened) if t["current"]]
            neighbours = Neighbours.load(opened.entry.home)
            carried = ("no neighbours file (write it: cowbird partitions neighbours)" if neighbours is None else
                       f"{len(neighbours.before)} before, {len(neighbours.after)} after")
            click.echo(f"{partition.id}\t{partition.offset}\t{partition.size}\t{len(tables)}\t{carried}")
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc


@click.group("partitions")
def partitions_group() -> None:
    """The partitions of a corpus encoded with --partition-tokens."""


@partitions_group.command("neighbours")
@click.option("-r", "--registry", "registry_dir", required=True, type=click.Path(path_type=Path),
              help="Registry directory of the partitions.")
@click.option("--manifest", required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="The corpus manifest.")
def neighbours_command(registry_dir: Path, manifest: Path) -> None:
    """Write into each partition's home the 128 tokens before and after it (neighbours.json).

    cowbird encode --partition-tokens writes them; this writes them for a corpus encoded before, so
    that a lookahead at a partition's last token reads the next partition's first token, as CQP does
    over the corpus in one piece.

    \b
    Example:
      cowbird partitions neighbours -r registry --manifest data/ewt/ewt.manifest.json
    """
    try:
        whole = Manifest.load(manifest)
        started = time.perf_counter()
        opened = []
        for partition in whole.partitions:
            corpus = CwbCorpus.open(registry_dir, partition.id)
            if corpus.size != partition.size:
                raise StoreError(f"partition {partition.id} holds {corpus.size} tokens, but manifest {manifest} "
                                 f"says {partition.size}")
            opened.append(corpus)
        written = write_neighbours(opened)
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
    for path in written:
        click.echo(f"  {path}")
    click.echo(f"wrote the neighbours of {len(written)} partitions in {time.perf_counter() - started:.1f} s")
