"""``downloads.Download``: the one object every file of the front end is written through — hits,
analyses, word and keyword lists, a subcorpus's values. Its name says what it holds and is the same
for the same request; its headers say how complete it is; its body is the format's writer's."""

from __future__ import annotations

import csv
import io

import openpyxl

from cowbird.frontend.downloads import XLSX_CELL, Download, stamp


def test_a_table_file_is_named_by_what_named_it_and_says_how_complete_it_is() -> None:
    named = repr(("frequency", "web", "[word='x']"))
    table = Download("csv", ["value", "frequency"], {"analysis": "frequency", **stamp()}, "web_frequency", named,
                     ["web-2"], "frequency")
    again = Download("csv", ["value", "frequency"], None, "web_frequency", named)
    other = Download("csv", ["value", "frequency"], None, "web_frequency", named + " ")
    assert table.filename == again.filename != other.filename
    assert table.filename.startswith("web_frequency_") and table.filename.endswith(".csv")
    response = table.whole([["a,b", 2], ["=1+1", 1]])
    assert response.headers["content-disposition"] == f'attachment; filename="{table.filename}"'
    assert response.headers["x-cowbird-rows"] == "2"
    assert response.headers["x-cowbird-complete"] == "false" and response.headers["x-cowbird-failed"] == "web-2"
    assert response.media_type == "text/csv; charset=utf-8"
    text = bytes(response.body).decode("utf-8")
    assert text.startswith("# cowbird export: 4 lines of metadata") and '# analysis,"""frequency"""' in text
    data = text.split("\n", 4)[4]  # pandas: skiprows=4, as the first line says
    assert list(csv.reader(io.StringIO(data))) == [["value", "frequency"], ["a,b", "2"], ["=1+1", "1"]]


def test_a_hits_file_names_its_selection_and_the_extra_headers_come_before_the_completeness() -> None:
    hits = Download("tsv", ["corpus", "position"], None, "web", "q", (), "hits", "_sample100of46555")
    assert hits.filename.endswith("_sample100of46555.tsv")
    headers = hits.headers(100, **{"X-Cowbird-Total": "46555"})
    assert list(headers) == ["Content-Disposition", "X-Cowbird-Rows", "X-Cowbird-Total", "X-Cowbird-Complete",
                             "X-Cowbird-Failed"]
    assert headers["X-Cowbird-Complete"] == "true" and headers["X-Cowbird-Failed"] == ""


def test_every_provenance_block_says_which_cowbird_wrote_it_and_when() -> None:
    made = stamp()
    assert set(made) == {"cowbird", "exported_at"} and made["exported_at"].endswith("+00:00")


def test_a_text_longer_than_an_excel_cell_says_it_was_cut_and_the_other_formats_keep_it() -> None:
    token = "ab" * 20_000  # 40,000 characters: a freak token of a web page (a data URL, say)
    rows = [["x", token, 1], ["y", "short", 2]]
    book = openpyxl.load_workbook(io.BytesIO(bytes(
        Download("xlsx", ["left", "match", "n"], {"analysis": "hits"}, "web", "q").whole(rows).body)))
    cut = book["rows"]["B2"].value
    assert len(cut) == XLSX_CELL and cut.startswith(token[:30_000])
    assert cut.endswith("[cut: 40,000 characters, an Excel cell holds 32,767; a TSV or CSV file has it whole]")
    assert book["rows"]["B3"].value == "short" and book["rows"]["C2"].value == 1
    assert {row[0]: row[1] for row in book["metadata"].iter_rows(values_only=True)}["cells_cut"] == "1"
    for kind in ("tsv", "csv"):
        text = bytes(Download(kind, ["left", "match", "n"], None, "web", "q").whole(rows).body).decode("utf-8")
        assert token in text
