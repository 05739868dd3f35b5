"""``cowbird build``: web pages to a corpus, on this machine (every core) or on a SLURM cluster.

``cowbird build INPUT... -o OUT`` runs the four phases (clean, dedup, annotate, encode; see
``cowbird.build.pipeline``); run again with the same OUT it resumes. ``cowbird build step PHASE OUT
[--shard K]`` runs one phase of one shard: the SLURM jobs call it, and the local build runs the same
steps in a process pool.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import click

from cowbird.build import slurm
from cowbird.build.inputs import MAX_PAGE_SIZE, parse_size, size_text
from cowbird.build.language import BADNESS_LIMIT
from cowbird.build.pipeline import (
    DEFAULT_PARTITION_TOKENS,
    BuildOptions,
    finished,
    load_options,
    pending,
    prepare,
    run_local,
    run_step,
)
from cowbird.build.work import BuildError, read_marker


class _BuildGroup(click.Group):
    """``cowbird build INPUT...`` runs the build (the ``run`` command); ``cowbird build step ...`` a step."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if not args or args[0] not in self.commands:
            args = ["run", *args]
        return super().parse_args(ctx, args)



class _RunCommand(click.Command):
    """The build itself; its usage line reads ``cowbird build [OPTIONS] INPUT...`` as a user types it."""

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        path = ctx.parent.command_path if ctx.parent is not None else ctx.command_path
        formatter.write_usage(path, " ".join(self.collect_usage_pieces(ctx)))


def _size(ctx: click.Context, param: click.Parameter, value: str) -> int:
    try:
        return parse_size(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from error


def _languages(ctx: click.Context, param: click.Parameter, value: str) -> tuple[str, ...]:
    codes = tuple(sorted({code.strip().lower() for code in value.split(",") if code.strip()}))
    if value.strip().lower() in ("all", "any", "*"):
        return ()
    bad = [code for code in codes if not (code.isalpha() and 2 <= len(code) <= 3)]
    if bad or not codes:
        raise click.BadParameter(f"{value!r}: give ISO 639-1 codes separated by commas, e.g. en or en,de")
    return codes


@click.group("build", cls=_BuildGroup, invoke_without_command=False, context_settings={"max_content_width": 110})
def build_command() -> None:
    """Build a corpus from web pages (WARC/ARC files, HTML folders): clean, deduplicate, tag, encode."""


@build_command.command("run", cls=_RunCommand)
@click.argument("inputs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path), metavar="INPUT...")
@click.option("-o", "--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder: the corpus (NAME.vrt.gz, data/, registry/, NAME.manifest.json), report.tsv, "
                   "report.html and the work folder a killed build resumes from.")
@click.option("--name", default="web", show_default=True, help="The corpus's name (its registry id, lowercase).")
@click.option("--language", "languages", default="en", show_default=True, callback=_languages,
              help="Keep documents in these languages (ISO 639-1, comma-separated, e.g. en,de; 'all': any).")
@click.option("-j", "--jobs", type=click.IntRange(min=1), default=None,
              help="Worker processes (default: every core).")
@click.option("--partition-tokens", type=click.IntRange(min=1), default=DEFAULT_PARTITION_TOKENS, show_default=True,
              help="Cut the encoded corpus into partitions of at most this many tokens (before a <text>).")
@click.option("--shuffle", type=int, default=None, metavar="SEED",
              help="COW's sentence shuffle, seeded: the blocks of each document and the sentences of each block "
                   "in a random order (the same SEED gives the same corpus).")
@click.option("--keep-boilerplate", is_flag=True,
              help="Keep boilerplate blocks too, marked bpc=\"boilerplate\" (default: main text only).")
@click.option("--max-badness", type=float, default=BADNESS_LIMIT, show_default=True,
              help="Leave out documents whose connected-text badness is higher.")
@click.option("--max-page-size", default=size_text(MAX_PAGE_SIZE).replace(" ", ""), show_default=True,
              callback=_size, help="Leave out pages larger than this (e.g. 8MB, 512KB).")
@click.option("--tagger", default="hanta", show_default=True,
              help="hanta (SoMaJo + HanTa, en and de), spacy:MODEL or treetagger:DIR.")
@click.option("--cluster", type=click.Choice(["local", "slurm"]), default="local", show_default=True,
              help="Where the phases run: this machine, or SLURM array jobs (the --slurm-* options).")
@slurm.slurm_click_options
def run_command(inputs: tuple[Path, ...], out: Path, name: str, languages: tuple[str, ...], jobs: int | None,
                partition_tokens: int, shuffle: int | None, keep_boilerplate: bool, max_badness: float,
                max_page_size: int, tagger: str, cluster: str, **slurm_values: Any) -> None:
    """Build a corpus from web pages: INPUT is a WARC or ARC file (gzip per record, whole-file gzip or
    plain; Common Crawl's as they are), an HTML file, or a folder of them (searched recursively).

    \b
    cowbird build crawl/*.warc.gz -o out --name web --language en
    cowbird node serve --registry out/registry --token-file node.token --host 127.0.0.1 --port 8701
    """
    options = BuildOptions(
        inputs=tuple(inputs), out=out.resolve(), name=name, languages=languages, partition_tokens=partition_tokens,
        shuffle=shuffle, keep_boilerplate=keep_boilerplate, max_badness=max_badness, max_page_size=max_page_size,
        tagger=tagger, jobs=jobs or os.cpu_count() or 1,
    )
    try:
        if cluster == "slurm":
            shards = prepare(options)
            submission = slurm.submit_build(
                options.out, shards, slurm.options_from_cli(**slurm_values), name=name,
                pending=pending(options.out, shards), finished=finished(options.out), echo=click.echo)
            if not submission.options.wait:
                click.echo(f"submitted; run the same command again to see what is left, or follow "
                           f"{slurm.slurm_folder(options.out) / 'logs'}")
                return
            summary = read_marker(options.out, "encode")
        else:
            summary = run_local(options)
    except (BuildError, slurm.SlurmError) as error:
        raise click.ClickException(str(error)) from error
    _built(options, summary)


def _built(options: BuildOptions, summary: dict[str, Any]) -> None:
    out = options.out
    tokens = int(summary.get("tokens", 0))
    parts = summary.get("partitions", [])
    click.echo(f"built {options.name}: {tokens:,} tokens in {len(parts)} partition{'s' if len(parts) != 1 else ''}"
               f" ({', '.join(str(p['name']) for p in parts)})")
    click.echo(f"  VRT:      {out / (options.name + '.vrt.gz')}")
    if tokens:
        click.echo(f"  manifest: {out / (options.name + '.manifest.json')}")
        click.echo(f"  registry: {out / 'registry'}   data: {out / 'data'}")
    click.echo(f"  report:   {out / 'report.tsv'}  {out / 'report.html'}")
    if not tokens:
        click.echo("warning: no document was kept, the corpus is empty; see the report for why", err=True)
        return
    click.echo("search it in the browser, beside the demo's corpora (docs/building-corpora.md):")
    click.echo(f"  cowbird demo --corpus {out / (options.name + '.manifest.json')}")
    click.echo("or serve it from a node of your own, and query it on the command line:")
    click.echo("  python -c 'import secrets; print(secrets.token_urlsafe(32))' > node.token")
    click.echo(f"  cowbird node serve --registry {out / 'registry'} --token-file node.token --host 127.0.0.1 "
               "--port 8701")
    click.echo(f"  cowbird query -r {out / 'registry'} --manifest {out / (options.name + '.manifest.json')} "
               "'[pos=\"NN\"]'")


@build_command.command("step")
@click.argument("phase", type=click.Choice(["clean", "dedup", "annotate", "encode"]))
@click.argument("out", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--shard", type=click.IntRange(min=0), default=None, help="The shard (clean and annotate).")
def step_command(phase: str, out: Path, shard: int | None) -> None:
    """Run one phase of a prepared build (one shard of clean or annotate): what SLURM's tasks run.
    A finished step (its marker in OUT/work/) does nothing."""
    try:
        load_options(out.resolve())
        summary = run_step(out.resolve(), phase, shard)
    except BuildError as error:
        raise click.ClickException(str(error)) from error
    counts = ", ".join(f"{k} {v}" for k, v in summary.items() if isinstance(v, int))
    print(f"{phase}{'' if shard is None else f' shard {shard:05d}'}: {counts or 'done'}", file=sys.stderr)
