"""``cowbird build`` end to end: WARC, ARC and HTML folders to an encoded corpus; bad input skipped with its
reason and nothing else lost; the same bytes with any number of workers; settings kept; the step entry."""

from __future__ import annotations

import gzip
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cowbird.build.cli import build_command
from cowbird.build.records import Page
from tests.build import pages

REPO = Path(__file__).resolve().parents[2]


def inputs(folder: Path) -> list[Path]:
    """Two WARC files (gzip per record and plain), an ARC file and an HTML folder of English pages."""
    folder.mkdir(parents=True)
    return [
        pages.write_warc(folder / "a.warc.gz", pages.make_pages(11, 8, languages=("en",))),
        pages.write_warc(folder / "b.warc", pages.make_pages(12, 6, languages=("en",), start=100), gzip=False),
        pages.write_arc(folder / "c.arc.gz", pages.make_pages(13, 4, languages=("en",), start=200), gzip=True),
        *[folder / "site"] * bool(pages.html_folder(folder / "site", pages.make_pages(14, 5, languages=("en",),
                                                                                     start=300))),
    ]


def build(*argv: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(build_command, [str(a) for a in argv], catch_exceptions=False)
    return result.exit_code, result.output


def report(out: Path) -> dict[tuple[str, str], int]:
    rows = (out / "report.tsv").read_text(encoding="utf-8").splitlines()
    assert rows[0] == "stage\treason\tdocuments\ttokens"
    table: dict[tuple[str, str], int] = {}
    for row in rows[1:]:
        stage, reason, documents, tokens = row.split("\t")
        table[(stage, reason)] = int(tokens) if stage == "partition" else int(documents)
    return table


def vrt_texts(out: Path, name: str) -> list[str]:
    with gzip.open(out / f"{name}.vrt.gz", "rt", encoding="utf-8") as vrt:
        return [line for line in vrt if line.startswith("<text ")]


def outputs(out: Path) -> dict[str, bytes]:
    """The corpus files with the output folder's own path taken out (two builds live in two folders)."""
    return {p.relative_to(out).as_posix(): p.read_bytes().replace(str(out).encode(), b"OUT")
            for p in sorted(out.rglob("*")) if p.is_file() and not p.relative_to(out).as_posix().startswith("work/")
            and p.name not in ("build.json", "report.html")}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_a_build_is_the_same_bytes_with_one_and_two_workers(tmp_path: Path) -> None:
    given = inputs(tmp_path / "in")
    code, output = build(*given, "-o", tmp_path / "one", "--name", "Web", "--jobs", "1")
    assert code == 0, output
    assert "built Web: " in output and "cowbird node serve --registry" in output
    code, output = build(*given, "-o", tmp_path / "two", "--name", "Web", "--jobs", "2")
    assert code == 0, output
    one, two = outputs(tmp_path / "one"), outputs(tmp_path / "two")
    assert "Web.vrt.gz" in one and "Web.manifest.json" in one and "registry/web_p01" in one
    assert sorted(one) == sorted(two)
    for name in one:
        assert one[name] == two[name], f"{name} differs between --jobs 1 and --jobs 2"
    table = report(tmp_path / "one")
    assert table[("read", "in")] == 8 + 6 + 4 + 5
    texts = vrt_texts(tmp_path / "one", "Web")
    assert len(texts) == table[("annotate", "out")] > 10
    ids = [line.split('"')[1] for line in texts]
    assert ids == sorted(ids) and ids[0].startswith("00000-")  # shards in order: a.warc.gz first
    assert any('url="file:' in line for line in texts) and any('host="' in line and 'tld="' in line for line in texts)
    manifest = json.loads((tmp_path / "one" / "Web.manifest.json").read_text())
    assert sum(p["size"] for p in manifest["partitions"]) == table[("partition", "web_p01")]


def bad_inputs(folder: Path, big: int) -> tuple[list[Path], list[pages.GenPage]]:
    """A WARC file of good English pages among bad records, and a second one that is cut off."""
    rng = random.Random(5)
    making = random.Random(21)
    good = [pages.make_page(making, n, "en", "article", charset_mix=False) for n in range(6)]
    huge = "<html><body><p>" + "All work and no play makes Jack a dull boy. " * (big // 44 + 1) + "</p></body></html>"
    bad = [
        pages.GenPage(url="https://example.org/huge.html", html=huge),
        pages.GenPage(url="https://example.org/noise.html", body=pages.garbage_bytes(rng), content_type="text/html"),
        pages.GenPage(url="https://example.org/paper.pdf", body=pages.pdf_bytes(rng), content_type="application/pdf"),
        pages.GenPage(url="https://example.org/missing", html="<p>gone</p>", status=404),
        pages.GenPage(url="https://example.de/deutsch.html", html=pages.article(rng, "de")[0], language="de"),
    ]
    mixed = [good[0], bad[0], good[1], bad[1], good[2], bad[2], bad[3], good[3], bad[4]]
    folder.mkdir(parents=True)
    first = pages.write_warc(folder / "mixed.warc.gz", mixed)
    whole = pages.write_warc(folder / "whole.warc.gz", good[4:])
    cut = folder / "cut.warc.gz"
    data = whole.read_bytes()
    cut.write_bytes(data[: len(data) - 1500])  # the last page is cut short
    whole.unlink()
    return [first, cut], good


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_bad_input_is_skipped_with_its_reason_and_every_good_page_kept(tmp_path: Path) -> None:
    given, good = bad_inputs(tmp_path / "in", big=50 << 20)
    out = tmp_path / "out"
    code, output = build(*given, "-o", out, "--name", "bad", "--jobs", "2")
    assert code == 0, output
    table = report(out)
    assert table[("read", "page over 8 MB")] == 1
    assert table[("decode", "not text")] == 1
    assert table[("read", "not HTML")] == 1
    assert table[("read", "HTTP 404")] == 1
    assert table[("read", "truncated record")] == 1
    assert table[("language", "language de")] == 1
    urls = [line.split('url="')[1].split('"')[0] for line in vrt_texts(out, "bad")]
    # every good page but the one cut short (the last of cut.warc.gz, shard 00000: sorted by path)
    assert urls == [good[4].url] + [p.url for p in good[:4]]
    skips = (out / "work" / "clean" / "00001.skips.tsv").read_text(encoding="utf-8").splitlines()
    assert any("\thttps://example.org/huge.html\t" in row and "page over 8 MB" in row for row in skips)


def test_a_page_limit_can_be_set_and_is_named_in_the_reason(tmp_path: Path) -> None:
    given, good = bad_inputs(tmp_path / "in", big=3 << 20)
    out = tmp_path / "out"
    code, output = build(given[0], "-o", out, "--name", "lim", "--max-page-size", "2MB", "--jobs", "1")
    assert code == 0, output
    assert report(out)[("read", "page over 2 MB")] == 1


def test_a_second_build_with_other_options_names_them(tmp_path: Path) -> None:
    given = [pages.write_warc(tmp_path / "in" / "a.warc.gz", pages.make_pages(31, 3, languages=("en",)))]
    out = tmp_path / "out"
    code, output = build(*given, "-o", out, "--name", "one", "--jobs", "1")
    assert code == 0, output
    before = {p: p.stat().st_mtime_ns for p in (out / "work").rglob("*done")}
    code, output = build(*given, "-o", out, "--name", "one", "--jobs", "2")  # --jobs may differ: nothing to do
    assert code == 0, output
    assert {p: p.stat().st_mtime_ns for p in (out / "work").rglob("*done")} == before
    code, output = build(*given, "-o", out, "--name", "one", "--shuffle", "3", "--max-badness", "9")
    assert code == 1
    assert "other settings (--max-badness, --shuffle differ" in output and "--shuffle was None, now 3" in output
    stray = tmp_path / "stray"
    stray.mkdir()
    (stray / "notes.txt").write_text("mine", encoding="utf-8")
    code, output = build(*given, "-o", stray)
    assert code == 1 and "is not empty and holds no cowbird build" in output
    code, output = build(*given, "-o", tmp_path / "x", "--language", "en,xx-1")
    assert code == 2 and "give ISO 639-1 codes" in output


def test_a_language_without_a_tagger_stops_the_build_at_once(tmp_path: Path) -> None:
    given = [pages.write_warc(tmp_path / "in" / "a.warc.gz", pages.make_pages(31, 1, languages=("en",)))]
    code, output = build(*given, "-o", tmp_path / "out", "--language", "fr")
    assert code == 1 and "--language fr --tagger hanta: no tagger model for 'fr'" in output
    assert not (tmp_path / "out").exists()


def test_a_folder_of_nothing_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    code, output = build(tmp_path / "empty", "-o", tmp_path / "out")
    assert code == 1 and "no WARC, ARC or HTML files in" in output


def test_the_shuffle_keeps_every_token_and_is_the_same_for_a_seed(tmp_path: Path) -> None:
    given = [pages.write_warc(tmp_path / "in" / "a.warc.gz", pages.make_pages(41, 4, languages=("en",)))]
    for name, seed in (("a", "5"), ("b", "5"), ("c", "6")):
        code, output = build(*given, "-o", tmp_path / name, "--name", "s", "--shuffle", seed, "--jobs", "1")
        assert code == 0, output
    code, output = build(*given, "-o", tmp_path / "plain", "--name", "s", "--jobs", "1")
    assert code == 0, output

    def vrt(name: str) -> bytes:
        return gzip.decompress((tmp_path / name / "s.vrt.gz").read_bytes())

    assert vrt("a") == vrt("b") != vrt("c") != vrt("plain")
    assert sorted(vrt("a").splitlines()) == sorted(vrt("plain").splitlines())


def test_the_step_entry_runs_one_phase(tmp_path: Path) -> None:
    given = [pages.write_warc(tmp_path / "in" / "a.warc.gz", pages.make_pages(51, 2, languages=("en",)))]
    out = tmp_path / "out"
    code, output = build(*given, "-o", out, "--jobs", "1")
    assert code == 0, output
    code, output = build("step", "dedup", out)  # finished: does nothing
    assert code == 0, output
    code, output = build("step", "clean", out)
    assert code == 1 and "runs per shard: give --shard K" in output
    code, output = build("step", "clean", tmp_path)
    assert code == 1 and "build.json: not found" in output


def test_an_input_gone_before_its_step_fails_that_step_by_name(tmp_path: Path) -> None:
    given = [pages.write_warc(tmp_path / "in" / "a.warc.gz", pages.make_pages(51, 2, languages=("en",)))]
    out = tmp_path / "out"
    from cowbird.build import pipeline

    pipeline.prepare(pipeline.BuildOptions(inputs=tuple(given), out=out, jobs=1))
    given[0].unlink()
    code, output = build("step", "clean", out, "--shard", "0")
    assert code == 1 and f"shard 00000: input {given[0]} is gone" in output
    assert not (out / "work" / "clean" / "00000.done").exists()


@pytest.mark.e2e
@pytest.mark.timeout(300)
def test_cowbird_build_as_a_user_runs_it(tmp_path: Path) -> None:
    given = [pages.write_warc(tmp_path / "in" / "a.warc.gz", pages.make_pages(61, 3, languages=("en",)))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "tools" / "build"), str(REPO)])}
    done = subprocess.run([sys.executable, "-m", "cowbird", "build", *map(str, given), "-o", str(tmp_path / "out"),
                           "--name", "demo"], capture_output=True, text=True, env=env, timeout=280,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    assert "clean: shard 00000" in done.stderr  # not a terminal: one line per finished shard
    query = subprocess.run([sys.executable, "-m", "cowbird", "query", "-r", str(tmp_path / "out" / "registry"),
                            "--manifest", str(tmp_path / "out" / "demo.manifest.json"), '[pos="DT"] [pos="NNS?"]'],
                           capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL)
    assert query.returncode == 0, query.stderr
    assert len(query.stdout.splitlines()) > 10
    help_text = subprocess.run([sys.executable, "-m", "cowbird", "build", "--help"], capture_output=True, text=True,
                               env=env, timeout=60).stdout
    assert "--partition-tokens" in help_text and "--cluster" in help_text


def test_read_pages_are_pages() -> None:
    assert Page.__dataclass_fields__.keys() >= {"url", "body", "content_type", "crawl_date"}


def test_kept_boilerplate_is_marked_and_the_report_page_is_plain_html(tmp_path: Path) -> None:
    making = random.Random(71)
    made = [pages.make_page(making, n, "en", "article", charset_mix=False) for n in range(2)]
    made[0].url = 'https://example.org/<script>alert("x")</script>'
    given = [pages.write_warc(tmp_path / "in" / "a.warc.gz", made)]
    out = tmp_path / "out"
    code, output = build(*given, "-o", out, "--name", "kb", "--keep-boilerplate", "--jobs", "1")
    assert code == 0, output
    with gzip.open(out / "kb.vrt.gz", "rt", encoding="utf-8") as vrt:
        text = vrt.read()
    assert 'bpc="boilerplate"' in text and 'bpc="main"' in text
    assert 'url="https://example.org/&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"' in text
    page = (out / "report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<table>" in page and "<script" not in page
    assert "<td>out</td><td>2</td>" in page
