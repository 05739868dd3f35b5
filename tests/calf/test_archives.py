"""Calf where the page is gone: captures from web archives on loopback (``tests/calf/archive_web.py``)
speaking each protocol as the real services do — a Wayback CDX server (the Internet Archive's JSON
table, pywb's JSON lines) with ``id_`` captures and toolbar-framed rewritten ones, a Memento TimeMap
and TimeGate, a Common Crawl index with real WARC files served to range requests — asked nearest
the text's crawl date first, politely, through a cache, never off the archives' hosts."""

from __future__ import annotations

import asyncio
import csv
import datetime as dt
import gzip
import io
import json
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest
from click.testing import CliRunner

from cowbird.calf.archives import (
    Archive,
    ArchiveCache,
    nearest_first,
    parse_cdx,
    parse_timemap,
    raw_memento,
    timemap_pages,
)
from cowbird.calf.cli import main
from cowbird.calf.core import Reconstructor
from cowbird.calf.fetching import Fetcher
from cowbird.core.archives import ArchiveConfigError, ArchiveSettings, load_archives, parse_date
from tests.calf.archive_web import TOOLBAR, LocalArchives, Stored
from tests.calf.web import AFTER, BEFORE, SENTENCE, LocalWeb, article, html

CRAWLED = dt.datetime(2013, 5, 17, tzinfo=dt.UTC)
REWRITTEN = html("<h1>New shop</h1><p>We sell garden furniture now. Visit our new store in the city centre.</p>")
SOFT_404 = html("<h1>Page not found</h1><p>Sorry, the page you are looking for does not exist any more.</p>")


def at(year: int, month: int = 6, day: int = 1) -> dt.datetime:
    return dt.datetime(year, month, day, 10, 20, 30, tzinfo=dt.UTC)


def cdx(archives: LocalArchives, **extra: Any) -> ArchiveSettings:
    return ArchiveSettings.model_validate({"name": "ia", "kind": "cdx", "cdx": f"{archives.url}/ia/cdx",
                                           "replay": f"{archives.url}/ia/web/", "rate": 50, **extra})


def pywb(archives: LocalArchives, **extra: Any) -> ArchiveSettings:
    return ArchiveSettings.model_validate({"name": "pywb", "kind": "cdx", "cdx": f"{archives.url}/pywb/cdx",
                                           "replay": f"{archives.url}/ia/web/", "rate": 50, **extra})


def memento(archives: LocalArchives, timemap: bool = True, **extra: Any) -> ArchiveSettings:
    where = {"timemap": f"{archives.url}/ia/web/timemap/link/"} if timemap else {"timegate": f"{archives.url}/ia/web/"}
    return ArchiveSettings.model_validate({"name": "memento", "kind": "memento", "rate": 50, **where, **extra})


def common_crawl(archives: LocalArchives, **extra: Any) -> ArchiveSettings:
    return ArchiveSettings.model_validate({"name": "cc", "kind": "commoncrawl", "index": f"{archives.url}/cc/",
                                           "data": f"{archives.url}/data/", "rate": 50, **extra})


async def reconstruct(url: str, settings: list[ArchiveSettings], when: dt.datetime | None = CRAWLED,
                      sentence: str = SENTENCE, cache: Path | None = None, prefer: bool = False,
                      window: int = 1095) -> Any:
    async with Fetcher(delay=0.0, timeout=2.0, retries=0, respect_robots=False) as fetch, \
            httpx.AsyncClient() as client:
        kept = ArchiveCache(cache) if cache else None
        found = [Archive(s, client, kept) for s in settings]
        calf = Reconstructor(fetch, None, client, context_chars=60, archives=found,
                             window=dt.timedelta(days=window), prefer_archive=prefer)
        return await calf.line(url, sentence, when=when)


# -------------------------------------------------------------------------------- Wayback CDX


@pytest.mark.anyio
async def test_a_gone_page_is_found_in_its_capture_nearest_the_crawl(web: LocalWeb, archives: LocalArchives) -> None:
    url = f"{web.url}/gone"  # the live web answers 404
    archives.capture(url, Stored(at(2009), SOFT_404.encode()))  # before the text was there
    archives.capture(url, Stored(at(2013, 4), article().encode()))  # the crawl's time
    archives.capture(url, Stored(at(2018), REWRITTEN.encode()))  # after the rewrite
    outcome = await reconstruct(url, [cdx(archives)])
    assert outcome.status == "found_archive" and outcome.score == 100.0
    assert (outcome.source, outcome.capture_date) == ("ia", "2013-04-01T10:20:30Z")
    assert outcome.capture_url == f"{archives.url}/ia/web/20130401102030id_/{url}"
    assert outcome.left.endswith("because the garden was lovely in spring.")
    assert outcome.right.startswith("The roof needs repairs")
    assert outcome.source_url == url
    # only original bytes were asked (id_), never the toolbar-framed page, and the CDX with the window
    replays = archives.asked("/ia/web/")
    assert replays and all("id_/" in path for path in replays)
    assert "from=20100518000000" in archives.asked("/ia/cdx")[0] and "to=20160516000000" in archives.asked(
        "/ia/cdx")[0]


@pytest.mark.anyio
async def test_the_capture_after_the_rewrite_is_passed_over_for_an_older_one(web: LocalWeb,
                                                                            archives: LocalArchives) -> None:
    web.page("/shop", REWRITTEN)  # live, but rewritten: the line is not on it
    url = f"{web.url}/shop"
    archives.capture(url, Stored(at(2013, 9), REWRITTEN.encode()))  # nearest, already rewritten
    archives.capture(url, Stored(at(2012, 1), gzip.compress(article().encode("cp1252")),
                                 content_type="text/html; charset=windows-1252",
                                 headers=(("Content-Encoding", "gzip"),)))
    outcome = await reconstruct(url, [cdx(archives)])
    assert outcome.status == "found_archive", outcome
    assert outcome.capture_date == "2012-01-01T10:20:30Z"
    assert [p.split("/ia/web/")[1][:14] for p in archives.asked("/ia/web/")] == ["20130901102030", "20120101102030"]


@pytest.mark.anyio
async def test_soft_404s_and_redirects_home_hold_no_line(web: LocalWeb, archives: LocalArchives) -> None:
    url = f"{web.url}/old"
    archives.capture(url, Stored(at(2013, 5), SOFT_404.encode()))
    archives.capture(url, Stored(at(2013, 6), b"", status=301, location=f"{web.url}/"))
    archives.capture(f"{web.url}/", Stored(at(2013, 6), html("<h1>Welcome</h1><p>Our home page.</p>").encode()))
    outcome = await reconstruct(url, [cdx(archives)])
    assert outcome.status == "not_found"  # (the live page 404, no capture holds the line)
    assert "ia: not in 2 captures (2013-06-01, 2013-05-01)" in outcome.detail, outcome.detail
    # the captured redirect was followed inside the archive (to the home page's capture), not live
    assert f"/ia/web/20130601102030id_/{web.url}/" in archives.asked("/ia/web/")
    assert web.requests == ["/old"]


@pytest.mark.anyio
async def test_a_captured_redirect_gives_its_targets_capture(web: LocalWeb, archives: LocalArchives) -> None:
    url, moved = f"{web.url}/old", f"{web.url}/archive/7"
    archives.capture(url, Stored(at(2013, 5), b"", status=301, location=moved))
    archives.capture(moved, Stored(at(2013, 5, 2), article().encode()))
    outcome = await reconstruct(url, [cdx(archives)])
    assert (outcome.status, outcome.capture_date) == ("found_archive", "2013-05-02T10:20:30Z")
    assert outcome.capture_url == f"{archives.url}/ia/web/20130502102030id_/{moved}"
    assert outcome.source_url == url and web.requests == ["/old"]


@pytest.mark.anyio
@pytest.mark.slow  # 1.2 s here (make quick leaves it out)
async def test_pywb_json_lines_and_no_capture_within_the_window(web: LocalWeb, archives: LocalArchives) -> None:
    url = f"{web.url}/gone"
    archives.capture(url, Stored(at(2013, 2), article().encode()))
    outcome = await reconstruct(url, [pywb(archives)])
    assert (outcome.status, outcome.source, outcome.capture_date) == ("found_archive", "pywb", "2013-02-01T10:20:30Z")
    far = await reconstruct(url, [pywb(archives)], when=at(2020), window=365)
    assert far.status == "fetch_error" and "pywb: no capture within 365 days of 2020-06-01" in far.detail


# -------------------------------------------------------------------------------- Memento


@pytest.mark.anyio
async def test_memento_timemap_and_timegate(web: LocalWeb, archives: LocalArchives) -> None:
    url = f"{web.url}/gone"
    archives.capture(url, Stored(at(2011), REWRITTEN.encode()))
    archives.capture(url, Stored(at(2013, 3), article().encode()))
    archives.capture(url, Stored(at(2016), REWRITTEN.encode()))
    by_map = await reconstruct(url, [memento(archives)])
    assert (by_map.status, by_map.source, by_map.capture_date) == ("found_archive", "memento", "2013-03-01T10:20:30Z")
    assert by_map.capture_url == f"{archives.url}/ia/web/20130301102030id_/{url}"
    archives.requests.clear()
    by_gate = await reconstruct(url, [memento(archives, timemap=False)])
    assert (by_gate.status, by_gate.capture_date) == ("found_archive", "2013-03-01T10:20:30Z")
    gate = [(path, headers) for _, path, headers in archives.requests if not path.split("/ia/web/")[1][:1].isdigit()]
    assert gate[0][1]["Accept-Datetime"] == "Fri, 17 May 2013 00:00:00 GMT"


@pytest.mark.anyio
@pytest.mark.slow  # 2.8 s here (make quick leaves it out)
async def test_a_paged_timemap_is_read_where_its_pages_reach_the_crawl_date(
    web: LocalWeb, archives: LocalArchives
) -> None:
    """An archive with many captures pages its TimeMap (RFC 7089 4.3): the first page links to the
    others with their ``from`` and ``until``. The capture near the crawl date is on a later page: that
    page is read, the pages far from the date are not."""
    url = f"{web.url}/gone"
    for year in range(2005, 2013):
        archives.capture(url, Stored(at(year, 1), REWRITTEN.encode()))
    archives.capture(url, Stored(at(2013, 3), article().encode()))
    for year in range(2014, 2021):
        archives.capture(url, Stored(at(year, 9), REWRITTEN.encode()))
    archives.timemap_page = 2  # 16 captures: 8 pages, the 2013 one on the fifth with a 2012 one
    found = await reconstruct(url, [memento(archives)], window=200)
    assert (found.status, found.capture_date) == ("found_archive", "2013-03-01T10:20:30Z")
    maps = [path.split("/timemap/")[1].split("/")[:2] for _, path, _ in archives.requests if "/timemap/" in path]
    assert maps == [["link", "http:"], ["page", "4"]]  # 2012-01 … 2013-03 reaches into 2012-10-29 … 2013-12-03
    archives.requests.clear()
    await reconstruct(url, [memento(archives)], when=None)  # no date: every page (TIMEMAP_PAGES at most)
    assert sum("/timemap/" in path for _, path, _ in archives.requests) == 8
    archives.fail("/ia/web/timemap/page/", 404, 1)  # a page gone since the first was made: the others count
    async with httpx.AsyncClient() as client:
        listed = await Archive(memento(archives, captures=20), client).captures(url, at(2013, 3),
                                                                                 dt.timedelta(days=2000))
    years = sorted(c.when.year for c in listed if c.when)  # the window: 2007-09 … 2018-08; page 1 (2007, 2008) gone
    assert years == [2009, 2010, 2011, 2012, 2013, 2014, 2015, 2016, 2017]


@pytest.mark.anyio
async def test_a_timegate_memento_without_a_timestamp_in_its_url_is_dated_by_its_header() -> None:
    """A TimeGate of an archive whose memento URLs carry no timestamp: the memento's own
    Memento-Datetime dates the capture."""
    from tests.calf.web import Answer

    with LocalWeb() as gate:
        url = "http://gone.example/page"
        gate.pages[f"/timegate/{url}"] = Answer(b"", 302, headers=(("Location", f"{gate.url}/memento/42"),))
        gate.pages["/memento/42"] = Answer(article().encode(), headers=(
            ("Memento-Datetime", "Thu, 16 May 2013 08:00:00 GMT"),))
        settings = ArchiveSettings(name="gate", kind="memento", timegate=f"{gate.url}/timegate/", raw="", rate=50)
        outcome = await reconstruct(url, [settings])  # its mementos are not under the TimeGate: refused
        assert outcome.status == "fetch_error" and gate.requests == [f"/timegate/{url}"]
        assert f"gate: the TimeGate's memento {gate.url}/memento/42 is outside the archive" in outcome.detail
        settings = ArchiveSettings(name="gate", kind="memento", timegate=f"{gate.url}/timegate/", raw="", rate=50,
                                   replay=f"{gate.url}/memento/")  # where they are, named
        outcome = await reconstruct(url, [settings])
        assert (outcome.status, outcome.capture_date, outcome.capture_url) == (
            "found_archive", "2013-05-16T08:00:00Z", f"{gate.url}/memento/42")


def test_paged_timemap_links() -> None:
    text = ('<http://a.example/>; rel="original",\n<http://arch.example/timemap/link/http://a.example/>; rel="self"; '
            'type="application/link-format"; from="Tue, 01 Jan 2013 00:00:00 GMT",\n'
            '<http://arch.example/timemap/2/http://a.example/>; rel="timemap"; type="application/link-format"; '
            'from="Wed, 01 Jan 2014 00:00:00 GMT"; until="Thu, 01 Jan 2015 00:00:00 GMT",\n'
            '<http://arch.example/timemap/3/http://a.example/>; rel="timemap"')
    assert timemap_pages(text) == [
        ("http://arch.example/timemap/2/http://a.example/", at(2014, 1, 1).replace(hour=0, minute=0, second=0),
         at(2015, 1, 1).replace(hour=0, minute=0, second=0)),
        ("http://arch.example/timemap/3/http://a.example/", None, None),
    ]


def test_timemap_link_format() -> None:
    text = ('<http://a.example/>; rel="original",\n<http://arch.example/timemap/link/http://a.example/>; rel="self"; '
            'type="application/link-format",\n<http://arch.example/20130101000000/http://a.example/>; '
            'rel="first memento"; datetime="Tue, 01 Jan 2013 00:00:00 GMT",\n'
            '<http://arch.example/20140101000000/http://a.example/>;rel="memento";'
            'datetime="Wed, 01 Jan 2014 00:00:00 GMT"')
    assert parse_timemap(text) == [("http://arch.example/20130101000000/http://a.example/", at(2013, 1, 1).replace(
        hour=0, minute=0, second=0)), ("http://arch.example/20140101000000/http://a.example/", dt.datetime(
            2014, 1, 1, tzinfo=dt.UTC))]
    assert raw_memento("http://arch.example/web/20130101000000/http://a.example/x", "id_") == \
        "http://arch.example/web/20130101000000id_/http://a.example/x"
    assert raw_memento("http://arch.example/web/20130101000000im_/http://a.example/", "id_") == \
        "http://arch.example/web/20130101000000id_/http://a.example/"


def test_cdx_answers_of_every_flavour() -> None:
    table = '[["urlkey","timestamp","original","mimetype","statuscode"],["k","20130101000000","http://a/","text/html","200"]]'
    lines = '{"urlkey": "k", "timestamp": "20130101000000", "url": "http://a/", "status": "200"}\n'
    plain = "k 20130101000000 http://a/ text/html 200 SHA1 123\n"
    assert parse_cdx(table)[0]["original"] == "http://a/" and parse_cdx(lines)[0]["url"] == "http://a/"
    assert parse_cdx(plain) == [{"urlkey": "k", "timestamp": "20130101000000", "original": "http://a/",
                                 "mimetype": "text/html", "statuscode": "200", "digest": "SHA1", "length": "123"}]
    assert parse_cdx("[]") == parse_cdx("") == []


# -------------------------------------------------------------------------------- Common Crawl


@pytest.mark.anyio
async def test_common_crawl_warc_records_by_range_request(web: LocalWeb, archives: LocalArchives) -> None:
    url = f"{web.url}/gone"
    early = archives.crawl("CC-MAIN-2013-20", at(2013, 5, 18))
    late = archives.crawl("CC-MAIN-2019-04", at(2019, 1, 15))
    archives.crawled(late, url, Stored(at(2019, 1, 20), REWRITTEN.encode()))
    archives.crawled(early, f"{web.url}/other", Stored(at(2013, 5, 19), html("<p>Another page.</p>").encode()))
    # gzip inside, chunked on the wire, windows-1252 declared only in the header
    body = gzip.compress(article("Nobody has lived there since 1999 – “really”.").encode("cp1252"))
    archives.crawled(early, url, Stored(at(2013, 5, 20), body, content_type="text/html; charset=windows-1252",
                                        headers=(("Content-Encoding", "gzip"),)), chunked=True)
    outcome = await reconstruct(url, [common_crawl(archives)], sentence="Nobody has lived there since 1999 – "
                                "“ really ” .")
    assert (outcome.status, outcome.source, outcome.capture_date) == ("found_archive", "cc", "2013-05-20T10:20:30Z")
    assert outcome.capture_url.startswith(f"{archives.url}/data/crawl-data/CC-MAIN-2013-20/")
    assert "#bytes=" in outcome.capture_url
    ranges = [headers.get("Range") for _, path, headers in archives.requests if path.startswith("/data/")]
    assert ranges and all(r and r.startswith("bytes=") for r in ranges)
    # the nearest crawl first: the 2019 crawl's index was not asked for a 2013 text (3 crawls at most)
    assert archives.asked("/cc/CC-MAIN-2013-20-index") and not archives.asked("/cc/CC-MAIN-2019-04-index")


@pytest.mark.anyio
async def test_common_crawl_redirect_is_looked_up_in_the_same_crawl(web: LocalWeb, archives: LocalArchives) -> None:
    url, target = f"{web.url}/old", f"{web.url}/new"
    crawl = archives.crawl("CC-MAIN-2013-20", at(2013, 5, 18))
    archives.crawled(crawl, url, Stored(at(2013, 5, 19), b"", status=301, location=target))
    archives.crawled(crawl, target, Stored(at(2013, 5, 19), article().encode()))
    outcome = await reconstruct(url, [common_crawl(archives)])
    assert outcome.status == "found_archive" and outcome.source == "cc"
    assert web.requests == ["/old"]  # the target was never fetched live


# -------------------------------------------------------------------------------- politeness, safety


@pytest.mark.anyio
@pytest.mark.slow  # 3.7 s here (make quick leaves it out)
async def test_an_archive_is_asked_no_faster_than_its_rate_and_waits_when_told(archives: LocalArchives) -> None:
    urls = [f"http://127.0.0.1:9/gone{k}" for k in range(4)]
    for url in urls:
        archives.capture(url, Stored(at(2013, 4), article().encode()))
    archives.fail("/ia/cdx", 429, 1, retry_after="1")
    async with httpx.AsyncClient() as client:
        archive = Archive(cdx(archives, rate=4, concurrency=2), client)
        found = await asyncio.gather(*(archive.captures(url, CRAWLED, dt.timedelta(days=1095)) for url in urls))
        pages = await asyncio.gather(*(archive.page(captures[0]) for captures in found))
    assert [len(c) for c in found] == [1] * 4 and all(SENTENCE.split()[0] in page.html for page, _ in pages)
    arrivals = sorted(t for t, _, _ in archives.requests)
    assert len(arrivals) == 9 == archive.asked  # 4 look-ups, the one told to wait again, 4 captures
    gaps = [round(b - a, 3) for a, b in zip(arrivals, arrivals[1:], strict=False)]
    assert min(gaps) >= 0.25 - 0.02, gaps  # rate 4: a quarter of a second apart at least, as the archive saw them
    # Retry-After: 1 held back every request after the 429 came back, those already waiting for a slot too
    told = arrivals[0]  # the first request was answered 429 at once
    assert not [t for t in arrivals if told + 0.05 < t < told + 1.0 - 0.02], gaps


@pytest.mark.anyio
async def test_a_capture_redirecting_out_of_the_archive_is_not_followed(web: LocalWeb, archives: LocalArchives) -> None:
    url = f"{web.url}/gone"
    outside = web.page("/elsewhere", article())  # holds the line, but is not in the archive
    archives.capture(url, Stored(at(2013, 5), b"", status=302, location=outside.replace("127.0.0.1", "localhost"),
                                 escape=True))
    outcome = await reconstruct(url, [cdx(archives)])
    assert outcome.status in ("fetch_error", "not_found")
    assert "redirects out of the archive" in outcome.detail
    assert "/elsewhere" not in web.requests


@pytest.mark.anyio
async def test_the_page_url_is_only_a_lookup_key(web: LocalWeb, archives: LocalArchives) -> None:
    """A CDX row naming another host as the original is still asked at the archive."""
    url = f"{web.url}/gone"
    archives.capture(url, Stored(at(2013, 5), article().encode()))
    async with httpx.AsyncClient() as client:
        archive = Archive(cdx(archives), client)
        found = await archive.captures(url, CRAWLED, dt.timedelta(days=100))
        assert found and all(c.url.startswith(f"{archives.url}/ia/web/") for c in found)
        from cowbird.calf.archives import ArchiveError

        with pytest.raises(ArchiveError, match="outside the archive .* is not one of its addresses"):
            await archive.request(f"http://localhost:{web.port}/gone")


def test_nearest_first_and_dates() -> None:
    def capture(when: dt.datetime | None, name: str) -> Any:
        from cowbird.calf.archives import Capture

        return Capture("a", when, f"http://arch/{name}", "http://page/")
    found = [capture(at(2009), "a"), capture(at(2013, 6), "b"), capture(at(2013, 4), "c"), capture(None, "d"),
             capture(at(2020), "e")]
    assert [c.url[-1] for c in nearest_first(found, CRAWLED, dt.timedelta(days=1095), 9)] == ["b", "c", "d"]
    assert [c.url[-1] for c in nearest_first(found, None, dt.timedelta(days=1), 3)] == ["a", "c", "b"]
    assert parse_date("2013") == dt.datetime(2013, 7, 1, tzinfo=dt.UTC)
    assert parse_date("Fri, 17 May 2013 10:42:33 GMT") == dt.datetime(2013, 5, 17, 10, 42, 33, tzinfo=dt.UTC)


def test_archive_files_are_checked(tmp_path: Path) -> None:
    written = ArchiveSettings(name="ia", kind="cdx", cdx="https://web.archive.org/cdx/search/cdx",
                              replay="https://web.archive.org/web")  # a prefix without its final slash
    assert (written.replay, written.cdx) == ("https://web.archive.org/web/", "https://web.archive.org/cdx/search/cdx")
    path = tmp_path / "archives.toml"
    path.write_text('[[archive]]\nname = "ia"\nkind = "cdx"\ncdx = "https://web.archive.org/cdx/search/cdx"\n',
                    encoding="utf-8")
    with pytest.raises(ArchiveConfigError, match=r"archives.toml: .*archive 'ia' \(cdx\) needs replay"):
        load_archives(path)
    path.write_text('[[archive]]\nname = "x"\nkind = "gopher"\n', encoding="utf-8")
    with pytest.raises(ArchiveConfigError, match="kind"):
        load_archives(path)
    path.write_text('[[archive]]\nname = "cc"\nkind = "commoncrawl"\nindex = "file:///etc/"\ndata = "https://d/"\n',
                    encoding="utf-8")
    with pytest.raises(ArchiveConfigError, match="not an http"):
        load_archives(path)


# -------------------------------------------------------------------------------- the command line


def write_export(path: Path, rows: list[dict[str, str]], provenance: dict[str, object]) -> None:
    lines = [f"# {key}: {json.dumps(value)}" for key, value in provenance.items()]
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n")
    writer.writerow(list(rows[0]))
    writer.writerows([list(r.values()) for r in rows])
    path.write_text(f"# cowbird export: {len(lines) + 1} lines\n" + "\n".join(lines) + "\n" + out.getvalue(),
                    encoding="utf-8")


def test_the_command_line_end_to_end_with_resume(web: LocalWeb, archives: LocalArchives, tmp_path: Path) -> None:
    left, right = BEFORE.replace(",", " ,").rstrip(".") + " .", AFTER.rstrip(".") + " ."
    gone, rewritten, live = f"{web.url}/gone", f"{web.url}/shop", web.page("/live", article())
    web.page("/shop", REWRITTEN)
    archives.capture(gone, Stored(at(2012, 11), article().encode()))
    archives.capture(rewritten, Stored(at(2013, 6, 2), article().encode()))
    archives.capture(rewritten, Stored(at(2017), REWRITTEN.encode()))
    rows = [{"url": u, "left": left, "match": "Nobody", "right": "has lived there since 1999 . " + right,
             "text_lastmod": day} for u, day in ((gone, "2013-05-02"), (rewritten, "2013-06"), (live, "2013"),
                                                 (f"{web.url}/never", "2013-05-02"))]
    export = tmp_path / "web_lines.tsv"
    write_export(export, rows, {"query": "Nobody", "context": "s", "corpus_version": "2013"})
    config = tmp_path / "archives.toml"
    config.write_text(f'window_days = 730\n\n[[archive]]\nname = "ia"\nkind = "cdx"\ncdx = "{archives.url}/ia/cdx"\n'
                      f'replay = "{archives.url}/ia/web/"\nrate = 20\n', encoding="utf-8")
    out = tmp_path / "out.tsv"
    result = CliRunner().invoke(main, [str(export), "-o", str(out), "--archives", str(config), "--delay", "0",
                                       "--ignore-robots", "--context-chars", "80"])
    assert result.exit_code == 0, result.output
    assert f"web archives asked: ia {len(archives.requests)} requests" in result.output
    table = pd.read_csv(out, sep="\t", comment="#", keep_default_na=False)
    assert list(table["calf_status"]) == ["found_archive", "found_archive", "found_url", "fetch_error"]
    assert list(table["calf_source"]) == ["ia", "ia", "live", ""]
    assert list(table["calf_capture_date"]) == ["2012-11-01T10:20:30Z", "2013-06-02T10:20:30Z", "", ""]
    assert table["calf_capture_url"][0] == f"{archives.url}/ia/web/20121101102030id_/{gone}"
    assert "ia: no capture within 730 days of 2013-05-02" in table["calf_detail"][3]
    about = out.read_text(encoding="utf-8")
    assert '# archives: [{"name": "ia", "kind": "cdx"' in about and "# archive_window_days: 730" in about
    assert (tmp_path / "out.tsv.archives").is_dir()  # the look-ups kept beside the output
    # a resumed run (the last line again, after the output lost it) asks the archive nothing new
    lines = out.read_text(encoding="utf-8").splitlines()
    out.write_text("\n".join(lines[:-1]) + "\n", encoding="utf-8")
    asked = len(archives.requests)
    again = CliRunner().invoke(main, [str(export), "-o", str(out), "--archives", str(config), "--delay", "0",
                                      "--ignore-robots", "--resume"])
    assert again.exit_code == 0, again.output
    assert len(archives.requests) == asked and "web archives asked: ia 0 requests" in again.output
    assert pd.read_csv(out, sep="\t", comment="#", keep_default_na=False)["calf_status"].tolist()[-1] == "fetch_error"


@pytest.mark.anyio
async def test_prefer_archive_takes_the_line_as_crawled(web: LocalWeb, archives: LocalArchives) -> None:
    url = web.page("/edited", article("Nobody has really lived there since 1999."))
    archives.capture(url, Stored(at(2013, 5), article().encode()))
    live = await reconstruct(url, [cdx(archives)])
    assert (live.status, live.source) == ("found_url", "live") and live.score < 100
    preferred = await reconstruct(url, [cdx(archives)], prefer=True)
    assert (preferred.status, preferred.source, preferred.score) == ("found_archive", "ia", 100.0)
    assert TOOLBAR not in preferred.left + preferred.right


def test_the_example_archives_file_is_valid() -> None:
    example = Path(__file__).resolve().parents[2] / "tools" / "calf" / "archives.example.toml"
    config = load_archives(example)
    assert [(a.name, a.kind) for a in config.archives] == [("ia", "cdx"), ("arquivo", "cdx"), ("memento", "memento"),
                                                           ("cc", "commoncrawl")]
    assert config.archives[2].allowed_hosts() >= {"timetravel.mementoweb.org", "web.archive.org"}
