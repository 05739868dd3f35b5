"""The generated test pages (``tests/build/pages.py``) are what the other tests rely on them to be: the same
bytes from the same seed, text that the language identifier and texrex's badness take for connected English
or German, archives that warcio reads back record by record with their headers, and every charset
declaration decoding to the page's text."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from cowbird.build.language import BADNESS_LIMIT, badness, identify
from tests.build import pages


def test_the_same_seed_gives_the_same_pages_and_archive(tmp_path: Path) -> None:
    first = pages.write_warc(tmp_path / "a" / "crawl.warc.gz", pages.make_pages(5, 40))
    second = pages.write_warc(tmp_path / "b" / "crawl.warc.gz", pages.make_pages(5, 40))
    assert first.read_bytes() == second.read_bytes()
    assert pages.make_pages(6, 3)[0].html != pages.make_pages(5, 3)[0].html


def test_the_text_is_connected_english_or_german() -> None:
    rng = random.Random(1)
    for language in pages.LANGUAGES:
        for _ in range(20):
            html, main = pages.article(rng, language)
            text = " ".join(main)
            assert identify(text)[0] == language, text[:200]
            score = badness(text, language)
            assert score is not None and score < BADNESS_LIMIT, (score, text[:200])
            assert all(5 <= len(s.split()) <= 30 for s in (pages.sentence(rng, language) for _ in range(20)))
            assert all(p in html or p.replace("'", "&#x27;") in html for p in main)


def test_boilerplate_pages_have_little_or_no_main_text() -> None:
    rng = random.Random(2)
    assert pages.tag_cloud(rng, "de")[1] == []
    listing, main = pages.product_listing(rng, "en")
    assert len(main) <= 1 and "Add to cart" in listing
    forum, posts = pages.forum_thread(rng, "en")
    assert len(posts) >= 2 and 'class="signature"' in forum


def test_warc_records_read_back_with_their_headers(tmp_path: Path) -> None:
    batch = pages.make_pages(9, 30)
    for compressed in (True, False):
        path = pages.write_warc(tmp_path / f"x{compressed}.warc{'.gz' if compressed else ''}", batch, gzip=compressed)
        with path.open("rb") as stream:
            records = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.http_headers,
                        r.content_stream().read()) for r in ArchiveIterator(stream)]
        assert [t for t, *_ in records] == ["warcinfo"] + ["request", "response"] * 30
        responses = [r for r in records if r[0] == "response"]
        for page, (_, url, http, body) in zip(batch, responses, strict=True):
            assert url == page.url
            assert http.get_header("Content-Type") == page.payload()[1]
            assert http.get_header("Last-Modified") == page.last_modified
            assert body == page.payload()[0]  # content encoding undone by warcio
            assert (http.get_header("Content-Encoding") == "gzip") == (page.content_encoding == "gzip")


def test_arc_files_read_back(tmp_path: Path) -> None:
    batch = pages.make_pages(10, 12, charset_mix=False)
    for compressed in (False, True):
        path = pages.write_arc(tmp_path / f"x.arc{'.gz' if compressed else ''}", batch, gzip=compressed)
        with path.open("rb") as stream:
            found = [(r.rec_headers.get_header("WARC-Target-URI"), r.content_stream().read())
                     for r in ArchiveIterator(stream, arc2warc=True) if r.rec_type == "response"]
        assert found == [(p.url, p.payload()[0]) for p in batch]


def test_every_charset_declaration_decodes_to_the_text() -> None:
    rng = random.Random(3)
    html, main = pages.article(rng, "de")
    assert any(c in "".join(main) for c in "äöüß")
    for declare in pages.CHARSET_DECLARATIONS:
        for charset in ("utf-8", "windows-1252"):
            body, content_type = pages.page_bytes(html, charset, declare)
            if declare == "bom":
                assert body.startswith(b"\xef\xbb\xbf") and body[3:].decode("utf-8") == html
            elif declare == "misdeclared":
                assert content_type == "text/html; charset=utf-8" and body.decode("cp1252") == html
            else:
                text = body.decode("cp1252" if charset == "windows-1252" else "utf-8")
                assert all(p in text for p in main)
                if declare == "header":
                    assert content_type == f"text/html; charset={charset}"
                elif declare in ("meta", "http-equiv"):
                    assert f"charset={charset}" in text or f'charset="{charset}"' in text


def test_near_duplicates_change_the_share_of_words_asked() -> None:
    rng = random.Random(4)
    text = pages.paragraph(rng, "en", (8, 10))
    words = text.split()
    changed = pages.near_duplicate(text, rng, 0.05)
    assert changed != text
    assert abs(len(changed.split()) - len(words)) <= round(0.05 * len(words))


def test_html_folder_files(tmp_path: Path) -> None:
    batch = pages.make_pages(11, 10)
    files = pages.html_folder(tmp_path / "site", batch)
    assert [f.suffix for f in files[:5]] == [".html", ".html", ".htm", ".html", ".gz"]
    assert gzip.decompress(files[4].read_bytes()).startswith((b"<!DOCTYPE", b"\xef\xbb\xbf<!DOCTYPE"))
