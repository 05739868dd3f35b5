"""``cowbird crawl SEEDS -o OUT``: seed URLs to WARC files for ``cowbird build`` (docs/crawling.md).

Run again with the same OUT, the crawl resumes where it stopped (SEEDS may then be left out); a budget is
the whole crawl's, over all its runs: raise ``--pages`` to crawl on.
"""

from __future__ import annotations

from pathlib import Path

import click

from cowbird.build.inputs import parse_size
from cowbird.crawl.crawler import DEFAULT_MIME, CrawlError, CrawlOptions, crawl, parse_allow, read_seeds


def _size(ctx: click.Context, param: click.Parameter, value: str | None) -> int | None:
    if value is None:
        return None
    try:
        return parse_size(value)
    except ValueError as error:
        raise click.BadParameter(str(error)) from error


def _duration(ctx: click.Context, param: click.Parameter, value: str | None) -> float | None:
    """Seconds, or a number with s, m, h or d."""
    if value is None:
        return None
    text = value.strip().lower()
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    scale = units.get(text[-1:], 1)
    number = text[:-1] if text[-1:] in units else text
    try:
        seconds = float(number) * scale
    except ValueError:
        raise click.BadParameter(f"{value!r}: give seconds, or a number with s, m, h or d (e.g. 90, 30m, 2h)") from None
    if seconds <= 0:
        raise click.BadParameter(f"{value!r}: must be more than 0")
    return seconds


def _language(ctx: click.Context, param: click.Parameter, value: str) -> str:
    code = value.strip().lower()
    if not (code.isalpha() and 2 <= len(code) <= 3):
        raise click.BadParameter(f"{value!r}: give one ISO 639-1 code, e.g. de")
    return code


@click.command("crawl", context_settings={"max_content_width": 110})
@click.argument("seeds", required=False, metavar="[SEEDS]")
@click.option("-o", "--out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Output folder: warc/crawl-NNNNN.warc.gz, crawl.sqlite3 (the frontier a stopped crawl resumes "
                   "from), progress.json, report.json and report.md.")
@click.option("--lang", "language", default="de", show_default=True, callback=_language,
              help="The target language: pages in it that cowbird build keeps are the good documents.")
@click.option("--strategy", type=click.Choice(["focused", "breadth"]), default="focused", show_default=True,
              help="focused: links of good pages and of hosts that gave good documents first; breadth: by depth.")
@click.option("--pages", type=click.IntRange(min=1), default=None, help="Stop after this many pages (the whole crawl).")
@click.option("--bytes", "size", default=None, callback=_size, help="Stop after this many bytes fetched (e.g. 2GB).")
@click.option("--time", "seconds", default=None, callback=_duration, help="Stop this run after this long (e.g. 30m).")
@click.option("--host-good-limit", type=click.IntRange(min=1), default=100, show_default=True,
              help="Good documents a host may give; then it is left (no host dominates the corpus).")
@click.option("--delay", type=click.FloatRange(min=0), default=1.0, show_default=True,
              help="Seconds between the end of a request to a host and the next (robots.txt's Crawl-delay if longer).")
@click.option("--ip-delay", type=click.FloatRange(min=0), default=None,
              help="The same for an IP address, over the hosts on it (default: --delay).")
@click.option("--allow", multiple=True, metavar="CIDR",
              help="Address ranges the crawler may connect to, e.g. 127.0.0.0/8 (repeatable; default: public "
                   "addresses only, never loopback or private ranges).")
@click.option("--max-depth", type=click.IntRange(min=0), default=10, show_default=True,
              help="Links from a seed, at most.")
@click.option("--max-url-length", type=click.IntRange(min=16), default=512, show_default=True)
@click.option("--page-bytes", default="5MB", show_default=True, callback=_size,
              help="Keep at most this much of a page (the WARC record is marked truncated).")
@click.option("--page-seconds", type=click.FloatRange(min=0.1), default=30.0, show_default=True,
              help="Time for one page, connection included.")
@click.option("--mime", default=",".join(DEFAULT_MIME), show_default=True,
              help="MIME types fetched (comma-separated); other answers are not read.")
@click.option("--retries", type=click.IntRange(min=0), default=2, show_default=True,
              help="Tries again after a 429, a 5xx or a network error, with a growing wait.")
@click.option("--max-redirects", type=click.IntRange(min=0), default=5, show_default=True)
@click.option("--concurrency", type=click.IntRange(min=1, max=1024), default=16, show_default=True,
              help="Requests at once (each to another host and IP).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines on stderr (progress.json is written anyway).")
def crawl_command(seeds: str | None, out: Path, language: str, strategy: str, pages: int | None, size: int | None,
                  seconds: float | None, host_good_limit: int, delay: float, ip_delay: float | None,
                  allow: tuple[str, ...], max_depth: int, max_url_length: int, page_bytes: int, page_seconds: float,
                  mime: str, retries: int, max_redirects: int, concurrency: int, quiet: bool) -> None:
    """Crawl the web from SEEDS to WARC files: SEEDS is a file of URLs (one a line), an earlier crawl's
    output folder (its frontier), or one URL. Polite (robots.txt, a delay per host and per IP), focused on
    good documents in --lang, and resumable: run it again with the same -o to go on.

    \b
    cowbird crawl seeds.txt -o crawl --lang de --pages 10000
    cowbird build crawl/warc/*.warc.gz -o corpus --name web --language de
    """
    try:
        types = tuple(t.strip().lower() for t in mime.split(",") if t.strip())
        if not types or any("/" not in t for t in types):
            raise click.BadParameter(f"{mime!r}: give MIME types such as text/html", param_hint="--mime")
        resuming = (out / "crawl.sqlite3").is_file()
        if seeds is None and not resuming:
            raise click.UsageError(f"give SEEDS: {out} holds no crawl to resume")
        options = CrawlOptions(
            out=out.resolve(), language=language, strategy=strategy, pages=pages, bytes=size, seconds=seconds,
            host_good_limit=host_good_limit, delay=delay, ip_delay=ip_delay, allow=parse_allow(allow),
            max_depth=max_depth, max_url_length=max_url_length, page_bytes=page_bytes, page_seconds=page_seconds,
            mime=types, retries=retries, max_redirects=max_redirects, concurrency=concurrency)
        result = crawl(options, read_seeds(seeds) if seeds else [], quiet=quiet)
    except CrawlError as error:
        raise click.ClickException(str(error)) from error
    if result["pages"] == 0:  # nothing to build from: say why, and fail (a script or the workshop sees it)
        reasons = ", ".join(f"{why} ({n:,})" for why, n in list(result["left_out"].items())[:4]) or "none recorded"
        hint = ("; the seeds' hosts are not public addresses: --allow CIDR lets the crawler reach others"
                if "host outside the allowed addresses" in result["left_out"] else "")
        raise click.ClickException(f"no page was fetched ({result['stop_reason']}): {reasons}{hint}")
    share = f" ({100 * result['good_share']:.1f} %)" if result["good_share"] is not None else ""
    click.echo(f"crawled {result['pages']:,} pages, {result['good']:,} good documents{share}, from "
               f"{result['hosts_fetched']:,} hosts: {result['stop_reason']}")
    click.echo(f"  WARC:    {options.out / 'warc'} ({len(result['warc_files'])} files)")
    click.echo(f"  report:  {options.out / 'report.md'}")
    click.echo(f"  next:    cowbird build {options.out / 'warc'} -o CORPUS --language {language}")
