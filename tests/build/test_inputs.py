"""Reading a build's inputs (``cowbird.build.inputs``): WARC (gzip per record, whole-file gzip, plain), ARC,
HTML files and folders; only successful HTML responses, encodings undone, bad records skipped with reasons."""

from __future__ import annotations

import gzip
import io
import random
from pathlib import Path

import brotli
import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from cowbird.build.inputs import html_files, is_archive, parse_size, read_input, size_text, sniffs_as_html
from cowbird.build.records import Page, Skip
from tests.build import pages

HTML = "<html><head><title>Otters</title></head><body><p>The otter swims in the river every day.</p></body></html>"


def generated(n: int = 4) -> list[pages.GenPage]:
    return pages.make_pages(7, n, charset_mix=False)


def kinds(items: list[Page | Skip]) -> list[str]:
    return [("page" if isinstance(item, Page) else f"skip: {item.reason}") for item in items]


@pytest.mark.parametrize("compressed", [True, False])
def test_a_warc_file_gives_its_html_responses_with_their_headers(tmp_path: Path, compressed: bool) -> None:
    made = generated()
    made[1].last_modified = "Sun, 24 Dec 2023 10:00:00 GMT"
    path = pages.write_warc(tmp_path / ("crawl.warc.gz" if compressed else "crawl.warc"), made, gzip=compressed)
    items = list(read_input(path, path))
    assert kinds(items) == ["page"] * 4
    first = items[1]
    assert isinstance(first, Page)
    assert first.url == made[1].url and first.source == path.name
    assert first.last_modified == "Sun, 24 Dec 2023 10:00:00 GMT"
    assert first.crawl_date == made[1].date
    assert first.content_type == "text/html; charset=utf-8"
    assert first.body == made[1].payload()[0]  # the body as sent, before any content encoding
    # warcinfo, request, response, request, response ...: the records' numbers in the file
    assert [item.index for item in items] == [2, 4, 6, 8]


def test_a_warc_gzipped_as_one_stream_is_read_whole_without_repeats(tmp_path: Path) -> None:
    made = generated(5)
    plain = pages.write_warc(tmp_path / "plain.warc", made, gzip=False)
    whole = tmp_path / "whole.warc.gz"
    whole.write_bytes(gzip.compress(plain.read_bytes()))
    items = list(read_input(whole, whole))
    assert [item.url for item in items] == [p.url for p in made]
    assert [i.body for i in items if isinstance(i, Page)] == [i.body for i in read_input(plain, plain)
                                                              if isinstance(i, Page)]


@pytest.mark.parametrize("compressed", [False, True])
def test_an_arc_file_is_read_as_warc_responses(tmp_path: Path, compressed: bool) -> None:
    made = generated(3)
    path = pages.write_arc(tmp_path / ("old.arc.gz" if compressed else "old.arc"), made, gzip=compressed)
    items = list(read_input(path, path))
    assert kinds(items) == ["page"] * 3
    assert [item.url for item in items] == [p.url for p in made]
    assert all(isinstance(i, Page) and b"<html" in i.body.lower() for i in items)


def test_responses_that_are_no_page_are_skipped_with_their_reason(tmp_path: Path) -> None:
    rng = random.Random(3)
    made = [
        pages.GenPage(url="https://example.org/report.pdf", body=pages.pdf_bytes(rng), content_type="application/pdf"),
        pages.GenPage(url="https://example.org/gone", html=HTML, status=404),
        pages.GenPage(url="https://example.org/moved", html=HTML, status=301),
        pages.GenPage(url="https://example.org/photo", body=pages.jpeg_bytes(rng), content_type=None),
        pages.GenPage(url="https://example.org/untyped", body=HTML.encode(), content_type=None),
        pages.GenPage(url="https://example.org/again", html=HTML, record_type="revisit"),
        pages.GenPage(url="https://example.org/zipped", html=HTML, content_encoding="gzip"),
        pages.GenPage(url="https://example.org/deflated", html=HTML, content_encoding="deflate"),
    ]
    path = pages.write_warc(tmp_path / "mixed.warc.gz", made)
    items = list(read_input(path, path))
    assert kinds(items) == ["skip: not HTML", "skip: HTTP 404", "skip: HTTP 301", "skip: not HTML", "page",
                            "skip: revisit record", "page", "page"]
    assert isinstance(items[0], Skip) and items[0].detail == "application/pdf" and items[0].stage == "read"
    assert items[0].url == "https://example.org/report.pdf"
    assert isinstance(items[3], Skip) and items[3].detail == "no Content-Type"
    assert items[4].url == "https://example.org/untyped"  # no Content-Type, but it sniffs as HTML
    assert isinstance(items[6], Page) and items[6].body == HTML.encode()  # gzip content encoding undone
    assert isinstance(items[7], Page) and items[7].body == HTML.encode()  # deflate too


def _response(writer: WARCWriter, url: str, body: bytes, headers: list[tuple[str, str]]) -> None:
    http = StatusAndHeaders("200 OK", [("Content-Type", "text/html"), *headers], protocol="HTTP/1.1")
    writer.write_record(writer.create_warc_record(url, "response", payload=io.BytesIO(body), length=len(body),
                                                  http_headers=http))


def test_brotli_and_chunked_transfer_encodings_are_undone(tmp_path: Path) -> None:
    body = HTML.encode()
    chunked = b"".join(f"{len(part):x}\r\n".encode() + part + b"\r\n" for part in (body[:40], body[40:])) + b"0\r\n\r\n"
    path = tmp_path / "encodings.warc.gz"
    with path.open("wb") as stream:
        writer = WARCWriter(stream, gzip=True)
        _response(writer, "https://example.org/br", brotli.compress(body), [("Content-Encoding", "br")])
        _response(writer, "https://example.org/chunked", chunked, [("Transfer-Encoding", "chunked")])
    items = list(read_input(path, path))
    assert [(i.url, i.body) for i in items if isinstance(i, Page)] == [
        ("https://example.org/br", body), ("https://example.org/chunked", body)]


def test_a_page_over_the_size_limit_is_skipped_and_the_next_one_read(tmp_path: Path) -> None:
    big = "<html><body>" + "<p>" + "word " * 300_000 + "</p></body></html>"  # 1.5 MB
    made = [pages.GenPage(url="https://example.org/big", html=big), *generated(1)]
    path = pages.write_warc(tmp_path / "big.warc.gz", made)
    items = list(read_input(path, path, max_page_size=1 << 20))
    assert kinds(items) == ["skip: page over 1 MB", "page"]
    assert items[1].url == made[1].url
    assert kinds(list(read_input(path, path, max_page_size=2 << 20))) == ["page", "page"]


@pytest.mark.parametrize("compressed", [True, False])
def test_a_truncated_record_ends_the_file_and_keeps_what_came_before(tmp_path: Path, compressed: bool) -> None:
    made = generated(6)
    whole = pages.write_warc(tmp_path / ("whole.warc.gz" if compressed else "whole.warc"), made, gzip=compressed)
    data = whole.read_bytes()
    complete = list(read_input(whole, whole))
    # cut inside the last response's payload
    cut = tmp_path / ("cut.warc.gz" if compressed else "cut.warc")
    cut.write_bytes(data[: len(data) - 2000])
    items = list(read_input(cut, cut))
    assert kinds(items) == ["page"] * 5 + ["skip: truncated record"]
    assert [i.body for i in items[:5] if isinstance(i, Page)] == [i.body for i in complete[:5] if isinstance(i, Page)]
    assert isinstance(items[-1], Skip) and items[-1].url == made[5].url and "missing" in items[-1].detail


def test_garbage_after_good_records_is_a_skip_not_an_error(tmp_path: Path) -> None:
    path = pages.write_warc(tmp_path / "tail.warc.gz", generated(2))
    with path.open("ab") as stream:
        stream.write(pages.garbage_bytes(random.Random(1), 3000))
    items = list(read_input(path, path))
    assert kinds(items) == ["page", "page", "skip: truncated record"]


def test_html_files_in_a_folder_recursively(tmp_path: Path) -> None:
    folder = tmp_path / "site"
    (folder / "b" / "c").mkdir(parents=True)
    (folder / "a.html").write_text(HTML, encoding="utf-8")
    (folder / "b" / "index.htm").write_text(HTML, encoding="utf-8")
    (folder / "b" / "c" / "page.xhtml.gz").write_bytes(gzip.compress(HTML.encode(), mtime=0))
    (folder / "b" / "notes.txt").write_text("not a page", encoding="utf-8")
    found = html_files(folder)
    assert [p.relative_to(folder).as_posix() for p in found] == ["a.html", "b/c/page.xhtml.gz", "b/index.htm"]
    items = [item for path in found for item in read_input(path, folder)]
    assert [i.url for i in items] == ["file:a.html", "file:b/c/page.xhtml.gz", "file:b/index.htm"]
    assert all(isinstance(i, Page) and i.body == HTML.encode() and i.content_type is None for i in items)
    assert all(isinstance(i, Page) and i.crawl_date and i.crawl_date.endswith("Z") for i in items)


def test_a_broken_gzip_html_file_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "broken.html.gz"
    path.write_bytes(gzip.compress(HTML.encode())[:30])
    (item,) = list(read_input(path, tmp_path))
    assert isinstance(item, Skip) and item.reason == "truncated file" and item.source == "broken.html.gz"


def test_archives_are_told_by_name_and_by_content(tmp_path: Path) -> None:
    named = pages.write_warc(tmp_path / "x.warc.gz", generated(1))
    odd = tmp_path / "crawl-data.bin"
    odd.write_bytes(named.read_bytes())
    page = tmp_path / "p.html"
    page.write_text(HTML, encoding="utf-8")
    assert is_archive(named) and is_archive(odd) and not is_archive(page)
    assert kinds(list(read_input(odd, odd))) == ["page"]


def test_sizes_and_sniffing() -> None:
    assert parse_size("8MB") == 8 << 20 and parse_size("512 KB") == 512 << 10 and parse_size("1000") == 1000
    assert parse_size("1.5M") == 3 << 19
    with pytest.raises(ValueError, match="not a size"):
        parse_size("lots")
    assert size_text(8 << 20) == "8 MB" and size_text(512) == "512 bytes"
    assert sniffs_as_html(b"\xef\xbb\xbf  <!DOCTYPE html><html>") and sniffs_as_html(b"<p>hello")
    assert not sniffs_as_html(b"%PDF-1.4") and not sniffs_as_html(b"\x89PNG\r\n")
