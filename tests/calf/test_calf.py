"""Calf against a local web: pages with the sentence verbatim, retyped, split across markup, gone,
moved (found through a stub search API), redirected, slow, huge, not HTML, in Latin-1; the
command line with every input format, --resume and a malformed row."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from cowbird.calf.cli import main
from cowbird.calf.core import Reconstructor
from cowbird.calf.fetching import Blocked, Fetcher, check_public
from cowbird.calf.search import SearxngSearch
from tests.calf.exports import write_xlsx
from tests.calf.web import SENTENCE, Answer, LocalWeb, article, html


@pytest.fixture
def web() -> Iterator[LocalWeb]:
    with LocalWeb() as local:
        local.pages["/robots.txt"] = Answer(b"User-agent: *\nDisallow: /private/\n", content_type="text/plain")
        yield local


async def reconstruct(web: LocalWeb, url: str, sentence: str = SENTENCE, search: bool = False,
                      **fetcher: object) -> object:
    options = {"delay": 0.0, "timeout": 30.0, "retries": 0} | fetcher  # generous: a loaded machine
    async with Fetcher(**options) as fetch:  # type: ignore[arg-type]
        import httpx

        async with httpx.AsyncClient() as client:
            provider = SearxngSearch(f"{web.url}/search") if search else None
            return await Reconstructor(fetch, provider, client, context_chars=40).line(url, sentence)


QUOTED = 'He said " nobody has lived there since 1999 " - and left .'


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("name", "body", "sentence", "low"),
    [
        ("verbatim", article(), SENTENCE, 100),
        ("whitespace", article("Nobody  has lived\nthere since&nbsp;1999."), SENTENCE, 100),
        ("quotes and dashes", article("He said “nobody has lived there since 1999” – and left."), QUOTED, 100),
        ("split across markup", article("Nobody <b>has lived</b> <a href='#'>there</a> since 19<i>99</i>."), SENTENCE,
         100),
        ("soft hyphens", article("No\u00adbody has lived there since 1999."), SENTENCE, 100),
        ("edited", article("Nobody has really lived there since 1999."), SENTENCE, 90),
    ],
)
async def test_found_on_its_page(web: LocalWeb, name: str, body: str, sentence: str, low: float) -> None:
    url = web.page("/house", body)
    outcome = await reconstruct(web, url, sentence)
    assert outcome.status == "found_url", (name, outcome)  # type: ignore[attr-defined]
    assert low <= outcome.score <= 100, (name, outcome.score)  # type: ignore[attr-defined]
    assert outcome.left.endswith("lovely in spring.") and outcome.right.startswith("The roof needs")  # type: ignore[attr-defined]
    assert len(outcome.left) <= 40 and len(outcome.right) <= 40  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_latin1_pages_and_redirects(web: LocalWeb) -> None:
    latin = article("Nobody has lived there since 1999, said José.").replace("utf-8", "latin-1")
    web.page("/latin", latin, encoding="latin-1", content_type="text/html; charset=iso-8859-1")
    outcome = await reconstruct(web, f"{web.url}/latin", "Nobody has lived there since 1999 , said José .")
    assert outcome.status == "found_url" and outcome.score == 100  # type: ignore[attr-defined]
    web.pages["/old"] = Answer(status=301, headers=(("Location", "/latin"),))
    moved = await reconstruct(web, f"{web.url}/old", "Nobody has lived there since 1999 , said José .")
    assert moved.status == "found_url" and moved.source_url == f"{web.url}/latin"  # type: ignore[attr-defined]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("answer", "detail"),
    [
        (Answer(b"gone", 404), "HTTP 404"),
        (Answer(b"%PDF-1.4 ...", content_type="application/pdf"), "not a text page (application/pdf)"),
        (Answer(b"<html>" + b"x" * 300_000 + b"</html>"), "too large"),
        pytest.param(Answer(article().encode(), delay=3.0), "timeout", marks=pytest.mark.slow),  # waits it out
    ],
)
async def test_pages_that_cannot_be_had(web: LocalWeb, answer: Answer, detail: str) -> None:
    web.pages["/page"] = answer
    outcome = await reconstruct(web, f"{web.url}/page", max_bytes=200_000, timeout=1.0)
    assert outcome.status == "fetch_error" and detail in outcome.detail  # type: ignore[attr-defined]
    assert outcome.score is None and outcome.left == ""  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_robots_txt_is_respected(web: LocalWeb) -> None:
    url = web.page("/private/house", article())
    outcome = await reconstruct(web, url)
    assert outcome.status == "fetch_error"  # type: ignore[attr-defined]
    assert outcome.detail == f"refused by robots.txt of {url.split('/')[2]}"  # type: ignore[attr-defined]
    assert "/private/house" not in web.requests


@pytest.mark.anyio
async def test_a_page_without_the_sentence_is_not_found(web: LocalWeb) -> None:
    url = web.page("/other", html("<p>" + "Completely different words about cooking pasta and sauces. " * 5 + "</p>"))
    outcome = await reconstruct(web, url)
    assert outcome.status == "not_found" and (outcome.score or 0) < 90  # type: ignore[attr-defined]


@pytest.mark.anyio
async def test_a_moved_page_is_found_through_the_search_engine(web: LocalWeb) -> None:
    new = web.page("/new-home", article())
    web.pages["/search"] = Answer(json.dumps({"results": [{"url": f"{web.url}/unrelated"}, {"url": new}]}).encode(),
                                  content_type="application/json")
    web.page("/unrelated", html("<p>Nothing to see here, only other words about weather.</p>"))
    outcome = await reconstruct(web, f"{web.url}/gone", search=True)
    assert outcome.status == "found_search" and outcome.source_url == new and outcome.score == 100  # type: ignore[attr-defined]
    query = next(r for r in web.requests if r.startswith("/search"))
    assert "format=json" in query and "Nobody" in query


def test_only_public_addresses_unless_allowed() -> None:
    for url in ("http://127.0.0.1/x", "http://10.1.2.3/", "http://169.254.169.254/latest/meta-data", "http://[::1]/"):
        with pytest.raises(Blocked):
            check_public(url, ())
    check_public("http://127.0.0.1/x", ("127.0.0.1",))  # allowed by name


# ------------------------------------------------------------------ the command line


def export_rows(web: LocalWeb) -> list[dict[str, str]]:
    web.page("/a", article())
    web.page("/b", article("Nobody has lived there since 1999."))
    return [
        {"corpus": "ewt", "position": "10", "left": "Nobody has lived", "match": "there", "right": "since 1999 .",
         "text_url": f"{web.url}/a"},
        {"corpus": "ewt", "position": "20", "left": "the roof needs", "match": "repairs", "right": "and the windows",
         "text_url": f"{web.url}/missing"},
        {"corpus": "ewt", "position": "30", "left": "has lived there", "match": "since", "right": "1999 .",
         "text_url": f"{web.url}/b"},
    ]


def write_tsv(path: Path, rows: list[dict[str, str]], provenance: bool = False) -> None:
    with path.open("w", encoding="utf-8", newline="") as out:
        if provenance:
            out.write("# cowbird export: 2 lines of metadata starting with '#' come before the header\r\n")
            out.write('# query: "x"\r\n')
        writer = csv.DictWriter(out, list(rows[0]), delimiter="\t", lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)


def read_output(path: Path) -> list[dict[str, str]]:
    """Calf's output as pandas reads it: the metadata block skipped (its first line says how long)."""
    text = path.read_text(encoding="utf-8")
    skip = int(text.split("skiprows=")[1].split(";")[0]) if text.startswith("# calf output:") else 0
    return list(csv.DictReader(io.StringIO("".join(text.splitlines(keepends=True)[skip:])), delimiter="\t"))


def test_the_command_reads_every_format_and_keeps_the_order(web: LocalWeb, tmp_path: Path) -> None:
    rows = export_rows(web)
    inputs: dict[str, Path] = {}
    write_tsv(inputs.setdefault("tsv", tmp_path / "in.tsv"), rows, provenance=True)
    with (csv_path := tmp_path / "in.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    inputs["csv"] = csv_path
    (ndjson := tmp_path / "in.ndjson").write_text(
        json.dumps({"metadata": {"query": "x"}}) + "\n" + "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    inputs["ndjson"] = ndjson
    write_xlsx(inputs.setdefault("xlsx", tmp_path / "in.xlsx"), rows)
    for name, path in inputs.items():
        out = tmp_path / f"out-{name}.tsv"
        result = CliRunner().invoke(main, [str(path), "-o", str(out), "--delay", "0", "--context-chars", "30",
                                           "--timeout", "30"])
        assert result.exit_code == 0, (name, result.output)
        written = read_output(out)
        assert [r["position"] for r in written] == ["10", "20", "30"], name
        assert [r["calf_status"] for r in written] == ["found_url", "fetch_error", "found_url"], name
        assert written[0]["calf_right"].startswith("The roof") and float(written[0]["calf_score"]) == 100
        assert "calf: 3 lines" in result.output and "2 found (67%)" in result.output
        assert "found_url 2, fetch_error 1" in result.output


def test_bad_rows_resume_and_other_tools_columns(web: LocalWeb, tmp_path: Path) -> None:
    rows = export_rows(web)
    source = tmp_path / "in.tsv"
    write_tsv(source, rows)
    text = source.read_text(encoding="utf-8").splitlines(keepends=True)
    text.insert(2, "just one field\r\n")  # a malformed line 3
    source.write_text("".join(text), encoding="utf-8")
    out = tmp_path / "out.tsv"
    first = CliRunner().invoke(main, [str(source), "-o", str(out), "--delay", "0", "--timeout", "30"])
    assert first.exit_code == 0 and "line 3: 1 fields where the header has 6 (bad_row)" in first.output
    assert [r["calf_status"] for r in read_output(out)] == ["found_url", "bad_row", "fetch_error", "found_url"]
    # an interrupted run: the output holds the first two rows; --resume does the rest
    written = out.read_text(encoding="utf-8")
    skip = int(written.split("skiprows=")[1].split(";")[0])
    out.write_text("".join(written.splitlines(keepends=True)[: skip + 3]), encoding="utf-8")
    requests = len(web.requests)
    again = CliRunner().invoke(main, [str(source), "-o", str(out), "--resume", "--delay", "0", "--timeout", "30"])
    assert again.exit_code == 0 and "(2 done before)" in again.output
    assert [r["calf_status"] for r in read_output(out)] == ["found_url", "bad_row", "fetch_error", "found_url"]
    assert not any(r == "/a" for r in web.requests[requests:])  # the done rows were not fetched again
    # another tool's export: one sentence column, the URL under another name
    other = tmp_path / "other.tsv"
    other.write_text(f"id\tline\tsource\n1\t{SENTENCE}\t{web.url}/a\n", encoding="utf-8")
    named = CliRunner().invoke(main, [str(other), "-o", str(tmp_path / "o.tsv"), "--sentence-column", "line",
                                      "--url-column", "source", "--delay", "0"])
    assert named.exit_code == 0 and read_output(tmp_path / "o.tsv")[0]["calf_status"] == "found_url"
    missing = CliRunner().invoke(main, [str(other), "-o", str(tmp_path / "p.tsv")])
    assert missing.exit_code == 1 and "no URL column" in missing.output


def test_pages_are_cached(web: LocalWeb, tmp_path: Path) -> None:
    rows = export_rows(web)[:1]
    source = tmp_path / "in.tsv"
    write_tsv(source, rows)
    for _ in range(2):
        result = CliRunner().invoke(main, [str(source), "-o", str(tmp_path / "out.tsv"), "--cache-dir",
                                           str(tmp_path / "cache"), "--delay", "0"])
        assert result.exit_code == 0
    assert web.requests.count("/a") == 1


def test_lines_of_one_page_share_one_fetch(web: LocalWeb, tmp_path: Path) -> None:
    rows = export_rows(web)
    same = [dict(rows[0], position=str(k)) for k in range(6)]  # six lines from the same page
    source = tmp_path / "in.tsv"
    write_tsv(source, same)
    result = CliRunner().invoke(main, [str(source), "-o", str(tmp_path / "out.tsv"), "--delay", "0",
                                       "--concurrency", "6"])
    assert result.exit_code == 0 and "6 found" in result.output
    assert web.requests.count("/a") == 1


@pytest.mark.e2e
def test_several_exports_at_once_as_a_shell_glob_gives_them(web: LocalWeb, tmp_path: Path) -> None:
    """``calf web_*.tsv -o out.tsv``: the shell passes every matching file; their lines go into one
    output, file after file, each with the file it came from (the command used to refuse a second file)."""
    import shutil
    import subprocess
    import sys

    rows = export_rows(web)
    write_tsv(tmp_path / "web_1.tsv", rows[:2], provenance=True)
    write_tsv(tmp_path / "web_2.tsv", rows[2:])
    calf = shutil.which("calf", path=str(Path(sys.executable).parent))
    assert calf is not None, "the calf command is installed next to this Python"
    done = subprocess.run(f"{calf} web_*.tsv -o out.tsv --delay 0 --timeout 30", shell=True, cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    written = read_output(tmp_path / "out.tsv")
    assert [(r["calf_input"], r["position"], r["calf_status"]) for r in written] == [
        ("web_1.tsv", "10", "found_url"), ("web_1.tsv", "20", "fetch_error"), ("web_2.tsv", "30", "found_url")]
    assert "calf: 3 lines" in done.stderr
    clash = subprocess.run([calf, "web_1.tsv", "web_2.tsv", "-o", "web_2.tsv"], cwd=tmp_path, capture_output=True,
                           text=True, timeout=60)
    assert clash.returncode == 1 and "web_2.tsv is one of the inputs" in clash.stderr
