"""The stages wired (``cowbird.build.pipeline``), the VRT a document becomes (``vrt_out``) and the report."""

from __future__ import annotations

import gzip
import math
import random
from pathlib import Path

import pytest

from cowbird.build import annotate, blocks, pipeline, vrt_out
from cowbird.build.pipeline import BuildOptions, clean_page, day, document_from_json, document_json, host_of, tld_of
from cowbird.build.records import Block, Document, Page, Skip, Token
from cowbird.build.report import report_rows
from cowbird.build.work import BuildError
from tests.build import pages

rng = random.Random(66)
ENGLISH = " ".join(pages.paragraph(rng, "en", (6, 8)) for _ in range(3))
GERMAN = " ".join(pages.paragraph(rng, "de", (6, 8)) for _ in range(3))


def page(html: str, url: str = "https://Www.Example.org:8080/a/b.html", **fields: object) -> Page:
    values: dict[str, object] = {
        "url": url, "body": html.encode("utf-8"), "content_type": "text/html; charset=utf-8",
        "last_modified": "Sun, 24 Dec 2023 10:00:00 GMT", "crawl_date": "2024-03-01T12:00:00Z",
        "source": "crawl.warc.gz", "index": 4}
    values.update(fields)
    return Page(**values)  # type: ignore[arg-type]


def article(text: str, navigation: bool = True) -> str:
    menu = ("<nav><ul><li><a href='/'>Home</a></li><li><a href='/news'>News</a></li>"
            "<li><a href='/contact'>Contact</a></li></ul></nav>") if navigation else ""
    return (f"<html><head><title>A page</title></head><body>{menu}<h1>Otters and rivers</h1>"
            f"<p>{text}</p><p>{text}</p><footer><p>© 2024 Example · Imprint · Privacy</p></footer></body></html>")


OPTIONS = BuildOptions(inputs=(), out=Path("unused"), languages=("en",))


def test_metadata_host_tld_and_dates() -> None:
    assert host_of("https://Www.Example.org:8080/a") == "www.example.org"
    assert host_of("http://user:pw@news.example.co.uk./x") == "news.example.co.uk"
    assert host_of("file:site/a.html") == "" and host_of("http://[::1]:80/") == "::1"
    assert tld_of("www.example.org") == "org" and tld_of("example.co.uk") == "uk"
    assert tld_of("localhost") == "" and tld_of("192.0.2.1") == "" and tld_of("::1") == "" and tld_of("") == ""
    assert day("Sun, 24 Dec 2023 10:00:00 GMT") == "2023-12-24"
    assert day("Sunday, 24-Dec-23 10:00:00 GMT") == "2023-12-24"  # RFC 850
    assert day("Sun Dec 24 10:00:00 2023") == "2023-12-24"  # asctime
    assert day("2024-03-01T12:00:00Z") == "2024-03-01"  # WARC-Date
    assert day("yesterday") == "" and day(None) == "" and day("") == ""


def test_a_page_becomes_a_document_with_its_main_text_and_metadata() -> None:
    document = clean_page(page(article(ENGLISH)), OPTIONS, "00003-0000004")
    assert isinstance(document, Document)
    assert (document.id, document.url, document.host, document.tld) == (
        "00003-0000004", "https://Www.Example.org:8080/a/b.html", "www.example.org", "org")
    assert (document.crawl_date, document.last_modified) == ("2024-03-01", "2023-12-24")
    assert document.language == "en" and document.language_confidence > 0.9
    assert 0 <= document.badness < OPTIONS.max_badness
    texts = [b.text for b in document.blocks]
    assert texts.count(ENGLISH) == 1  # the repeated paragraph is left out
    assert "Home" not in texts and all(b.main for b in document.blocks)
    assert (document.source, document.index) == ("crawl.warc.gz", 4)


def test_boilerplate_is_kept_marked_when_asked() -> None:
    options = BuildOptions(inputs=(), out=Path("unused"), keep_boilerplate=True)
    document = clean_page(page(article(ENGLISH)), options)
    assert isinstance(document, Document)
    assert any(not b.main for b in document.blocks) and any(b.main for b in document.blocks)
    plain = clean_page(page(article(ENGLISH)), OPTIONS)
    assert isinstance(plain, Document) and len(plain.blocks) < len(document.blocks)
    assert document.language == plain.language and document.badness == plain.badness  # from main text only


def test_pages_left_out_say_where_and_why() -> None:
    german = clean_page(page(article(GERMAN)), OPTIONS)
    assert isinstance(german, Skip) and (german.stage, german.reason) == ("language", "language de")
    assert (german.source, german.index, german.url) == ("crawl.warc.gz", 4, "https://Www.Example.org:8080/a/b.html")
    both = BuildOptions(inputs=(), out=Path("unused"), languages=("de", "en"))
    assert isinstance(clean_page(page(article(GERMAN)), both), Document)
    binary = clean_page(page("", body=pages.garbage_bytes(random.Random(2))), OPTIONS)
    assert isinstance(binary, Skip) and (binary.stage, binary.reason) == ("decode", "not text")
    empty = clean_page(page("<html><body><nav><a href='/'>Home</a></nav></body></html>"), OPTIONS)
    assert isinstance(empty, Skip) and empty.stage == "boilerplate" and empty.reason == "no main text"
    cloud, _ = pages.tag_cloud(random.Random(4), "en")
    listing = clean_page(page(cloud), OPTIONS)  # no connected text: left out by boilerplate or badness
    assert isinstance(listing, Skip) and listing.stage in ("boilerplate", "badness")


def test_a_document_survives_its_json_line() -> None:
    document = clean_page(page(article(ENGLISH)), OPTIONS, "00000-0000001")
    assert isinstance(document, Document)
    assert document_from_json(document_json(document)) == document
    french = Document(id="x", url="u", host="", tld="", crawl_date="", last_modified="", language="xx",
                      language_confidence=0.5, badness=float("nan"), blocks=[Block("Un texte.", "p")])
    again = document_from_json(document_json(french))
    assert math.isnan(again.badness) and again.blocks == french.blocks


def document_with_tokens() -> Document:
    return Document(
        id="00000-0000007", url='https://example.org/?a=1&b="2"', host="example.org", tld="org",
        crawl_date="2024-03-01", last_modified="", language="en", language_confidence=0.987654,
        badness=1.23456,
        blocks=[Block("Tom & <Jerry>", "h", score=0.8), Block("", "p"), Block("Hi.", "p", 0.31, False)],
        sentences=[[[Token("Tom", "NNP", "Tom"), Token("&", "CC", "&"), Token("<Jerry>", "NNP", "<Jerry>")]], [],
                   [[Token("Hi", "UH", "hi"), Token(".", ".", ".")]]],
    )


def test_vrt_of_a_document_is_escaped_and_carries_cow_attributes() -> None:
    assert vrt_out.document_vrt(document_with_tokens()) == (
        '<text id="00000-0000007" url="https://example.org/?a=1&amp;b=&quot;2&quot;" host="example.org" tld="org" '
        'crawl_date="2024-03-01" last_modified="" lang="en" lang_conf="0.99" badness="1.23">\n'
        '<p kind="h" bpc="main" bpv="0.80">\n<s>\nTom\tNNP\tTom\n&amp;\tCC\t&amp;\n&lt;Jerry&gt;\tNNP\t&lt;Jerry&gt;\n'
        '</s>\n</p>\n'
        '<p kind="p" bpc="boilerplate" bpv="0.31">\n<s>\nHi\tUH\thi\n.\t.\t.\n</s>\n</p>\n</text>\n')
    assert vrt_out.token_count(document_with_tokens()) == 5
    assert vrt_out.token_field("a b\tc") == "a_b_c" and vrt_out.token_field("") == "_"
    nothing = document_with_tokens()
    nothing.sentences = [[], [], []]
    assert vrt_out.document_vrt(nothing) == ""


def test_the_sentence_shuffle_is_seeded_per_document() -> None:
    def shuffled(seed: int) -> list[list[str]]:
        document = document_with_tokens()
        document.blocks = [Block(f"b{i}", "p") for i in range(6)]
        document.sentences = [[[Token(f"w{i}.{j}", "NN", "w")] for j in range(5)] for i in range(6)]
        pipeline.shuffle_document(document, seed)
        return [[s[0].word for s in block] for block in document.sentences]

    first = shuffled(7)
    assert first == shuffled(7) and first != shuffled(8)
    assert sorted(w for block in first for w in block) == sorted(f"w{i}.{j}" for i in range(6) for j in range(5))
    assert all(len({w.split(".")[0] for w in block}) == 1 for block in first)  # sentences stay in their block
    assert [b[0].split(".")[0] for b in first] != [f"w{i}" for i in range(6)]


def test_the_report_adds_up(tmp_path: Path) -> None:
    inputs = tmp_path / "in"
    made = pages.make_pages(5, 12, languages=("en", "de"))
    made.append(pages.GenPage(url="https://example.org/x.pdf", body=b"%PDF-1.4\n" + bytes(range(256)) * 20,
                              content_type="application/pdf"))
    english = next(p for p in made if p.language == "en" and p.kind == "article")
    made.append(pages.GenPage(url=english.url + "?copy", html=english.html))  # an exact copy
    warc = pages.write_warc(inputs / "a.warc.gz", made)
    out = tmp_path / "out"
    options = BuildOptions(inputs=(warc,), out=out, name="t", jobs=1)
    pipeline.prepare(options)
    pipeline.run_clean_shard(out, 0)
    pipeline.run_dedup(out)
    rows = {(stage, reason): documents for stage, reason, documents, _ in report_rows(out)}
    assert rows[("read", "in")] == 14 and rows[("read", "not HTML")] == 1
    current = 14
    for stage in ("read", "decode", "blocks", "boilerplate", "language", "badness", "duplicates"):
        assert rows[(stage, "in")] == current
        lost = sum(n for (s, r), n in rows.items() if s == stage and r not in ("in", "out"))
        assert rows[(stage, "out")] == current - lost
        current -= lost
    assert rows[("duplicates", "exact duplicate")] == 1
    german = sum(1 for p in made if p.language == "de" and p.body is None)
    assert rows.get(("language", "language de"), 0) >= german - 2
    with gzip.open(out / "work" / "clean" / "00000.jsonl.gz", "rt", encoding="utf-8") as lines:
        assert sum(1 for _ in lines) == rows[("badness", "out")]


def test_run_step_says_what_a_phase_needs(tmp_path: Path) -> None:
    warc = pages.write_warc(tmp_path / "in" / "a.warc.gz", pages.make_pages(1, 2, languages=("en",)))
    out = tmp_path / "out"
    pipeline.prepare(BuildOptions(inputs=(warc,), out=out, jobs=1))
    with pytest.raises(BuildError, match="runs per shard: give --shard K"):
        pipeline.run_step(out, "clean")
    with pytest.raises(BuildError, match="dedup needs every shard cleaned; not yet: 00000"):
        pipeline.run_step(out, "dedup")
    with pytest.raises(BuildError, match="annotate needs the dedup phase finished first"):
        pipeline.run_step(out, "annotate", 0)
    with pytest.raises(BuildError, match="no phase 'tag'"):
        pipeline.run_step(out, "tag")


def test_a_stage_that_fails_on_one_page_skips_that_page(monkeypatch: pytest.MonkeyPatch) -> None:
    real = blocks.extract_blocks

    def fragile(html: str, url: str = "", language: object = None) -> list[Block]:
        if "Otters" in html:
            raise AttributeError("'NoneType' object has no attribute 'tag'")
        return real(html, url, language if isinstance(language, tuple) else None)

    monkeypatch.setattr(blocks, "extract_blocks", fragile)
    failed = clean_page(page(article(ENGLISH)), OPTIONS)
    assert isinstance(failed, Skip) and (failed.stage, failed.reason) == ("blocks", "error")
    assert failed.detail == "AttributeError: 'NoneType' object has no attribute 'tag'"
    fine = clean_page(page(article(ENGLISH).replace("Otters", "Beavers")), OPTIONS)
    assert isinstance(fine, Document)


def test_a_document_the_tagger_fails_on_is_left_out_and_counted(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    making = random.Random(8)
    made = [pages.make_page(making, n, "en", "article", charset_mix=False) for n in range(3)]
    warc = pages.write_warc(tmp_path / "in" / "a.warc.gz", made)
    out = tmp_path / "out"
    pipeline.prepare(BuildOptions(inputs=(warc,), out=out, name="t", jobs=1))
    pipeline.run_clean_shard(out, 0)
    pipeline.run_dedup(out)
    real = annotate.Annotator.annotate
    victim = made[1].main_paragraphs[0]

    def fragile(self: annotate.Annotator, texts: list[str]) -> list[list[list[Token]]]:
        if victim in texts:
            raise IndexError("list index out of range")
        return real(self, texts)

    monkeypatch.setattr(annotate.Annotator, "annotate", fragile)
    summary = pipeline.run_annotate_shard(out, 0)
    assert summary["failed"] == 1 and summary["documents"] == 2
    rows = (out / "work" / "annotate" / "00000.skips.tsv").read_text(encoding="utf-8").splitlines()
    assert len(rows) == 2 and rows[1].split("\t")[1:3] == ["annotate", "error"] and made[1].url in rows[1]
    table = {(s, r): n for s, r, n, _ in report_rows(out)}
    assert table[("annotate", "error")] == 1 and table[("annotate", "out")] == 2


def test_with_every_language_a_language_without_a_tagger_is_skipped() -> None:
    every = BuildOptions(inputs=(), out=Path("unused"), languages=())
    french = ("Le chat est sur la table et il regarde les oiseaux dans le jardin. " * 6).strip()
    skipped = clean_page(page(article(french)), every)
    assert isinstance(skipped, Skip) and skipped.reason == "language fr" and "no tagger" in skipped.detail
    assert isinstance(clean_page(page(article(GERMAN)), every), Document)
