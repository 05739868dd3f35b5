"""``calf EXPORT... -o OUT.tsv``: add to each line of a concordance its context from the web.

Several exports (``calf web_*.tsv``) go into one output, file after file, with a ``calf_input`` column
naming the file of each line. Rows keep their order; a malformed row is reported with its file and
line number and marked ``bad_row``;
``--resume`` continues an interrupted run; fetched pages are cached with ``--cache-dir``. With
``--archives FILE``, a line whose page is gone or no longer holds it is looked up in web archives
(Wayback CDX servers, Memento TimeGates and TimeMaps, Common Crawl), nearest its text's crawl date.
"""

from __future__ import annotations

import asyncio
import csv
import datetime
import io
import json
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import click
import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

from cowbird.calf.archives import Archive, ArchiveCache
from cowbird.calf.core import FOUND, OUTPUT_COLUMNS, STATUSES, Outcome, Reconstructor
from cowbird.calf.fetching import Fetcher
from cowbird.calf.rows import (
    Columns,
    InputError,
    Row,
    core_of_row,
    read_table,
    resolve_columns,
    text_fields,
    texts_of_row,
)
from cowbird.calf.search import PROVIDERS, SearchProvider
from cowbird.core.archives import DATE_COLUMNS, ArchiveConfigError, ArchivesConfig, load_archives, parse_date
from cowbird.core.version import __version__


@click.command("calf", context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("exports", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="Where to write the lines with their context (TSV).")
@click.option("--context-chars", type=click.IntRange(0, 100_000), default=500, show_default=True,
              help="Characters of context each side (cut at word boundaries).")
@click.option("--concurrency", type=click.IntRange(1, 256), default=8, show_default=True,
              help="Lines worked on at once (each host is still asked one request at a time).")
@click.option("--min-score", type=click.FloatRange(0, 100), default=90.0, show_default=True,
              help="Lowest fuzzy-match score (0-100) that counts as found.")
@click.option("--search-url", default=None, help="A SearXNG-compatible search API (…/search), asked when the "
              "page is gone or the sentence is not on it.")
@click.option("--search-provider", type=click.Choice(sorted(PROVIDERS)), default="searxng", show_default=True)
@click.option("--cache-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Keep fetched pages here (and use them on the next run).")
@click.option("--resume", is_flag=True, help="Skip the rows already in OUTPUT and append the rest.")
@click.option("--url-column", default=None, help="Column with the page URL (default: text_url, url or *_url).")
@click.option("--left-column", default="left", show_default=True)
@click.option("--match-column", default="match", show_default=True)
@click.option("--right-column", default="right", show_default=True)
@click.option("--sentence-column", default=None, help="One column with the whole line, instead of left/match/right.")
@click.option("--delay", type=click.FloatRange(0), default=0.5, show_default=True,
              help="Seconds between two requests to the same host.")
@click.option("--timeout", type=click.FloatRange(0.1), default=15.0, show_default=True, help="Seconds per request.")
@click.option("--ignore-robots", is_flag=True, help="Do not read robots.txt (only for your own servers).")
@click.option("--public-only", is_flag=True, help="Fetch pages only from public addresses: a URL (or a redirect) "
              "to a loopback, private, link-local, CGNAT, multicast, reserved or unspecified address, or an IPv6 "
              "form of one (::ffff:10.0.0.1, ::ffff:0:10.0.0.1, 2002:a00:1::, 64:ff9b::a00:1, Teredo), is refused "
              "before connecting (fetch_error, 'refused: ...'); as the front end's \"find on the web\" always does.")
@click.option("--archives", "archives_file", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="A TOML file of web archives to ask when the page is gone or the line is not "
              "on it (see docs/calf.md).")
@click.option("--date-column", default=None, help="Column with the text's crawl date (default: the archives file's "
              "date_column, else text_crawl_date, text_lastmod, text_date, text_year ... whichever the file has).")
@click.option("--date", "default_date", default=None, help="The crawl date of lines without one (YYYY, YYYY-MM or "
              "YYYY-MM-DD; default: the export's corpus_version when it is a date).")
@click.option("--prefer-archive", is_flag=True, help="A line found with words changed on the live page is also "
              "looked up in the archives, and taken from there when a capture holds it with fewer changes.")
def main(exports: tuple[Path, ...], output: Path, context_chars: int, concurrency: int, min_score: float,
         search_url: str | None, search_provider: str, cache_dir: Path | None, resume: bool, url_column: str | None,
         left_column: str, match_column: str, right_column: str, sentence_column: str | None, delay: float,
         timeout: float, ignore_robots: bool, archives_file: Path | None, date_column: str | None,
         default_date: str | None, prefer_archive: bool, public_only: bool) -> None:
    """Re-find each line of the EXPORTS (cowbird's TSV, CSV, XLSX or NDJSON; several files go into one
    OUTPUT with a calf_input column) on its web page, or through a search engine, and write it with
    the context around it."""
    if any(path.resolve() == output.resolve() for path in exports):
        raise click.ClickException(f"{output} is one of the inputs: choose another output file")
    wanted = Columns(url_column, left_column, match_column, right_column, sentence_column)
    archives: ArchivesConfig | None = None
    if archives_file is not None:
        try:
            archives = load_archives(archives_file)
        except ArchiveConfigError as error:
            raise click.ClickException(str(error)) from error
    fallback = None
    if default_date is not None:
        fallback = parse_date(default_date)
        if fallback is None:
            raise click.ClickException(f"--date {default_date!r}: write a date as YYYY, YYYY-MM or YYYY-MM-DD")
    date_column = date_column or (archives.date_column if archives else None)
    items: list[Item] = []
    header: list[str] = []
    provenance: dict[str, object] = {}
    for path in exports:
        try:
            table = read_table(path)
            columns = resolve_columns(table.header, wanted)
        except InputError as exc:
            raise click.ClickException(f"{path}: {exc}" if len(exports) > 1 else str(exc)) from exc
        header += [name for name in table.header if name not in header]
        source = path.name if len(exports) > 1 else ""
        for key, value in table.provenance.items():  # the export's own block, kept in the output
            provenance[f"export[{path.name}].{key}" if len(exports) > 1 else f"export.{key}"] = value
        context = table.provenance.get("context")  # a number: tokens each side; "s": the sentence
        dated = _date_column(table.header, date_column, path) if archives else None
        corpus_date = fallback or parse_date(str(table.provenance.get("corpus_version") or ""))
        items += [Item(row, columns, source, context, dated, corpus_date) for row in table.rows]
    if len(exports) > 1:
        header.append(INPUT_COLUMN)
    done = _already_done(output, header) if resume else 0
    about: dict[str, object] = {
        "calf": __version__, "run_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "inputs": [path.name for path in exports], "lines": len(items), "min_score": min_score,
        "context_chars": context_chars, "search_url": search_url, "delay": delay, "timeout": timeout,
        "robots_txt": not ignore_robots, "public_only": public_only, **provenance,
    }  # fmt: skip
    if archives is not None:
        about.update({"archives": [a.described() for a in archives.archives],
                      "archive_window_days": archives.window_days, "date_column": date_column or "automatic",
                      "default_date": default_date, "prefer_archive": prefer_archive})
    fetcher = Fetcher(timeout=timeout, delay=delay, cache_dir=cache_dir, respect_robots=not ignore_robots,
                      public_only=public_only)
    search = PROVIDERS[search_provider](search_url) if search_url else None
    started = time.monotonic()
    mode = "a" if done else "w"
    with output.open(mode, encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        if not done:
            lines = [f"# {key}: {json.dumps(value, ensure_ascii=False)}" for key, value in about.items()]
            out.write(f"# calf output: {len(lines) + 1} lines of metadata starting with '#' come before the header "
                      f"(pandas: skiprows={len(lines) + 1}; R: skip={len(lines) + 1})\n")
            out.write("".join(line + "\n" for line in lines))
            writer.writerow([*header, *OUTPUT_COLUMNS])
        archive_cache = ArchiveCache(cache_dir / "archives" if cache_dir else output.with_name(
            output.name + ".archives")) if archives is not None else None
        counts = asyncio.run(_run(items[done:], header, fetcher, search, min_score, context_chars, concurrency,
                                  writer, out, Archiving(archives, archive_cache, prefer_archive)))
    _summary(counts, len(items) - done, done, time.monotonic() - started)


INPUT_COLUMN = "calf_input"
"""With several input files: the file each line comes from."""


@dataclass(frozen=True)
class Item:
    """A line to look for: its row, the columns of its file, and the file's name (several inputs)."""

    row: Row
    columns: Columns
    source: str = ""
    context: object = None  # what the export says its context is: tokens each side (a number), a region
    date_column: str | None = None  # the column with the text's crawl date
    default_date: datetime.datetime | None = None  # the date of a line without one

    def when(self) -> datetime.datetime | None:
        """The text's crawl date: its column's, else the default."""
        if self.date_column is not None:
            found = parse_date(self.row.values.get(self.date_column, ""))
            if found is not None:
                return found
        return self.default_date

    def where(self) -> str:
        return f"{self.source} line {self.row.line}" if self.source else f"line {self.row.line}"

    def values(self, header: list[str]) -> list[str]:
        return [self.source if name == INPUT_COLUMN else self.row.values.get(name, "") for name in header]


def _already_done(output: Path, header: list[str]) -> int:
    if not output.exists():
        return 0
    with output.open(encoding="utf-8", newline="") as existing:
        text = existing.read()
        reader = csv.reader(io.StringIO(text[_after_metadata(text):]), delimiter="\t")
        first = next(reader, None)
        if first != [*header, *OUTPUT_COLUMNS]:
            raise click.ClickException(f"{output} was not written for this input (its header differs): "
                                       "choose another output or leave out --resume")
        return sum(1 for _ in reader)


def _after_metadata(text: str) -> int:
    """Where the header starts: after the ``#`` lines of the metadata block."""
    at = 0
    while text.startswith("#", at):
        newline = text.find("\n", at)
        if newline < 0:
            return len(text)
        at = newline + 1
    return at


@dataclass(frozen=True)
class Archiving:
    """The archives a run asks, where it keeps their answers, and whether it prefers them."""

    config: ArchivesConfig | None = None
    cache: ArchiveCache | None = None
    prefer: bool = False


def _date_column(header: list[str], named: str | None, path: Path) -> str | None:
    """The column with the texts' crawl dates: the one named (which must be there), else the first of
    ``DATE_COLUMNS`` the file has; None (every line takes the default date) when it has none."""
    if named is not None:
        if named not in header:
            raise click.ClickException(f"{path}: no date column {named!r}; the header has: {', '.join(header)}")
        return named
    return next((name for name in DATE_COLUMNS if name in header), None)


async def _run(items: list[Item], header: list[str], fetcher: Fetcher, search: SearchProvider | None,
               min_score: float, context_chars: int, concurrency: int, writer: Any, out: IO[str],
               archiving: Archiving = Archiving()) -> Counter[str]:
    console = Console(stderr=True)
    counts: Counter[str] = Counter()
    results: dict[int, Outcome] = {}
    next_to_write = 0
    gate = asyncio.Semaphore(concurrency)
    async with fetcher, httpx.AsyncClient(timeout=fetcher.timeout) as search_client, \
            httpx.AsyncClient(follow_redirects=False, limits=httpx.Limits(max_connections=64)) as archive_client:
        config = archiving.config
        archives = [Archive(settings, archive_client, archiving.cache) for settings in config.archives] \
            if config is not None else []
        reconstructor = Reconstructor(fetcher, search, search_client, min_score, context_chars, archives,
                                      datetime.timedelta(days=config.window_days if config else 1095), archiving.prefer)

        async def work(index: int, item: Item) -> None:
            row, columns = item.row, item.columns
            if row.problem is not None:
                console.print(f"{item.where()}: {row.problem} (bad_row)", highlight=False)
                results[index] = Outcome("bad_row", detail=row.problem)
                return
            absent = [name for name in text_fields(row, columns) if name not in row.values]
            if absent:  # an NDJSON line may lack a key other lines have
                problem = "no " + ", ".join(repr(name) for name in absent)
                console.print(f"{item.where()}: {problem} (bad_row)", highlight=False)
                results[index] = Outcome("bad_row", detail=problem)
                return
            url = row.values.get(columns.url or "", "").strip()
            try:
                texts = texts_of_row(row, columns, item.context)
                if not any(text.strip() for text in texts):
                    console.print(f"{item.where()}: no text to look for (bad_row)", highlight=False)
                    results[index] = Outcome("bad_row", detail="no text")
                    return
                async with gate:
                    core, runs = core_of_row(row, columns, item.context)
                    results[index] = await reconstructor.line(url, *texts, core=core, runs=runs, when=item.when())
            except Exception as exc:  # one row's failure never stops the others: it gets a status
                console.print(f"{item.where()}: Calf failed on this row: {exc!r} (error)", highlight=False)
                results[index] = Outcome("error", source_url=url, detail=f"Calf failed: {exc!r}")

        with Progress(TextColumn("calf"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[found]} found"),
                      TextColumn("{task.fields[rate]} lines/s"), TimeRemainingColumn(), console=console,
                      disable=not sys.stderr.isatty(), transient=True) as progress:
            task = progress.add_task("calf", total=len(items), found=0, rate="0.0")
            started = time.monotonic()
            pending = {asyncio.ensure_future(work(i, item)) for i, item in enumerate(items)}
            while pending:
                finished, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for future in finished:
                    future.result()
                while next_to_write in results:  # rows keep their order; a resumed run continues here
                    outcome = results.pop(next_to_write)
                    writer.writerow([*items[next_to_write].values(header), *outcome.columns()])
                    counts[outcome.status] += 1
                    next_to_write += 1
                out.flush()
                rate = next_to_write / max(time.monotonic() - started, 1e-6)
                found = sum(counts[status] for status in FOUND)
                progress.update(task, completed=next_to_write, found=found, rate=f"{rate:.1f}")
        if archives:
            console.print("calf: web archives asked: " + ", ".join(
                f"{a.name} {a.asked} request{'s' if a.asked != 1 else ''}"
                + (f" ({a.refused} URL{'s' if a.refused != 1 else ''} its answers led to outside it refused)"
                   if a.refused else "")
                + (f" ({a.unreadable} unreadable CDX row{'s' if a.unreadable != 1 else ''} skipped)"
                   if a.unreadable else "") for a in archives)
                + " (look-ups and captures already kept are not asked again)", highlight=False)
    return counts


def _summary(counts: Counter[str], rows: int, skipped: int, seconds: float) -> None:
    console = Console(stderr=True)
    found = sum(counts[status] for status in FOUND)
    share = f" ({found / rows:.0%})" if rows else ""
    parts = ", ".join(f"{status} {counts[status]}" for status in STATUSES if counts[status])
    resumed = f" ({skipped} done before)" if skipped else ""
    console.print(f"calf: {rows} lines{resumed} in {seconds:.1f} s ({rows / max(seconds, 1e-6):.1f} lines/s): "
                  f"{found} found{share}; {parts or 'nothing to do'}", highlight=False)


if __name__ == "__main__":
    main()
