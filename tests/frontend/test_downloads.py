"""Downloads a linguist can trust: every format read back by the tools linguists use, with default
settings, gives exactly the rows and values of ``/api/v1/query``.

The in-repo corpus ``tests/fixtures/tricky.vrt`` in two partitions (no ``../shared`` needed); the query
matches the tokens that broke the old TSV (``"`` opened a quoted field in every reader) or were altered
by its spreadsheet guard (``-`` became ``'-``): ``"``, ``-``, ``=``, ``@``, ``+1`` and ``None``, and
the words pandas and R take for missing values or booleans (``NA``, ``nan``, ``TRUE``). Their contexts
carry every other token that breaks downloads in the wild (``tests.support.TRICKY_WORDS``: formulas,
``;`` ``,`` ``'`` inside tokens, decoded XML entities, German, Greek, emoji, backslashes), and their
texts empty metadata and a 2,000-character URL.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import openpyxl
import pandas as pd
import pytest

from cowbird.calf.rows import read_table
from tests.frontend.conftest import Partitioned, ewt_client
from tests.support import TRICKY_WORDS, read_tricky, unavailable

pytestmark = pytest.mark.anyio

CORPUS = "tricky"
QUERY = '[word="\\"|-|=|@|\\+1|None|NA|nan|TRUE"]'
MATCHED = {'"', "-", "=", "@", "+1", "None", "NA", "nan", "TRUE"}
HITS = 1_086
"""The tokens of tricky.vrt whose word is one of MATCHED (:func:`tests.support.read_tricky`, checked by
``test_the_expected_hits_are_those_of_the_vrt``)."""
PARAMS = {"corpus": CORPUS, "q": QUERY, "syntax": "cqp", "show": "lemma,upos", "meta": "text_genre,text_url",
          "context": "3"}  # fmt: skip
COLUMNS = ["corpus", "position", "matchend", "ref", "left", "match", "right", "lemma", "upos", "text_genre",
           "text_url"]  # fmt: skip


@pytest.fixture
async def client(tricky_parts: Partitioned, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    async for c in ewt_client(tricky_parts, CORPUS):
        yield c


def test_the_expected_hits_are_those_of_the_vrt() -> None:
    """HITS counted without cowbird, and every tricky word a token of the corpus."""
    tokens = read_tricky()
    assert sum(token.word in MATCHED for token in tokens) == HITS
    assert set(TRICKY_WORDS) <= {token.word for token in tokens}


def as_excel_shows(cell: str) -> str:
    """A cell as Excel shows it. OOXML spells a literal ``_x0041_`` ``_x005F_x0041_`` (else it is the
    escape of ``A``), and xlsxwriter does; but the inline strings of its constant-memory mode come out
    of openpyxl (and so of ``pandas.read_excel``) still escaped: decode ``_xHHHH_`` as Excel does."""
    return re.sub(r"_x([0-9A-Fa-f]{4})_", lambda m: chr(int(m[1], 16)), cell)


async def expected_rows(client: httpx.AsyncClient) -> list[list[str]]:
    """Every hit as /api/v1/query gives it, page by page, as the strings a file must hold."""
    rows: list[list[str]] = []
    offset = 0
    while True:
        page = (await client.get("/api/v1/query", params={**PARAMS, "offset": offset, "limit": 100})).json()
        for hit in page["hits"]:
            rows.append([CORPUS, str(hit["position"]), str(hit["matchend"]), "http://front" + hit["ref"], hit["left"],
                         hit["match"], hit["right"], hit["attributes"]["lemma"], hit["attributes"]["upos"],
                         hit["meta"]["text_genre"] or "", hit["meta"]["text_url"] or ""])
        offset += 100
        if offset >= page["total"]:
            return rows


async def download(client: httpx.AsyncClient, format: str, **extra: Any) -> httpx.Response:
    response = await client.get("/api/v1/export", params={**PARAMS, "format": format, **extra})
    assert response.status_code == 200, response.text
    return response


@pytest.mark.slow
async def test_every_format_reads_back_exactly(client: httpx.AsyncClient) -> None:
    expected = await expected_rows(client)
    assert {row[5] for row in expected} == MATCHED and len(expected) == HITS
    # every tricky word is in the files: in a match or a context of 3 tokens (as whole tokens)
    shown = "\n".join(f" {row[4]} {row[5]} {row[6]} " for row in expected)
    assert [word for word in TRICKY_WORDS if f" {word} " not in shown] == []
    # and the texts' metadata: an empty genre and url, a 2,000-character url with & and %
    genres, urls = {row[9] for row in expected}, {row[10] for row in expected}
    assert "" in genres and "" in urls and max(map(len, urls)) > 2000 and any("&" in url for url in urls)

    tsv = (await download(client, "tsv")).content
    csv_bytes = (await download(client, "csv")).content
    # Python's csv with default settings
    assert list(csv.reader(io.StringIO(tsv.decode("utf-8")), delimiter="\t")) == [COLUMNS, *expected]
    assert list(csv.reader(io.StringIO(csv_bytes.decode("utf-8")))) == [COLUMNS, *expected]
    # pandas: the defaults give every row; its default NA words (None) need keep_default_na=False
    for data, sep in ((tsv, "\t"), (csv_bytes, ",")):
        frame = pd.read_csv(io.BytesIO(data), sep=sep)
        assert frame.shape == (len(expected), len(COLUMNS)) and list(frame.columns) == COLUMNS
        exact = pd.read_csv(io.BytesIO(data), sep=sep, dtype=str, keep_default_na=False)
        assert exact.values.tolist() == expected
    # XLSX: every text a string cell, nothing evaluated; the positions numbers
    book = openpyxl.load_workbook(io.BytesIO((await download(client, "xlsx")).content), read_only=True)
    sheet = list(book["hits"].iter_rows(values_only=True))
    assert all(isinstance(row[1], int) and isinstance(row[2], int) for row in sheet[1:])
    sheet_rows = [[as_excel_shows(cell) if isinstance(cell, str) else "" if cell is None else str(cell) for cell in row]
                  for row in sheet]
    assert sheet_rows == [COLUMNS, *expected]
    # NDJSON: typed values
    lines = (await download(client, "ndjson")).text.splitlines()
    first = json.loads(lines[0])
    assert len(lines) == len(expected) and first["position"] == int(expected[0][1]) and first["match"] == expected[0][5]
    assert [str(json.loads(line)["match"]) for line in lines] == [row[5] for row in expected]


@pytest.mark.slow  # 1.3 s here (make quick leaves it out)
async def test_r_reads_tsv_and_csv(client: httpx.AsyncClient, tmp_path: Path) -> None:
    """R's read.delim and read.csv (Debian's r-base-core; .ci/run installs it)."""
    rscript = shutil.which("Rscript")
    if rscript is None:
        unavailable("Rscript is not installed (apt-get install r-base-core)")
    expected = await expected_rows(client)
    for name, format, reader in (("x.tsv", "tsv", "read.delim"), ("x.csv", "csv", "read.csv")):
        path = tmp_path / name
        path.write_bytes((await download(client, format)).content)
        out = tmp_path / f"{name}.out"
        script = (f'd <- {reader}("{path}", encoding="UTF-8", colClasses="character", na.strings=character(0)); '
                  f'stopifnot(nrow(d) == {len(expected)}); '
                  f'write.csv(d, "{out}", row.names=FALSE, fileEncoding="UTF-8")')
        subprocess.run([rscript, "-e", script], check=True, capture_output=True, timeout=120)
        back = list(csv.reader(io.StringIO(out.read_text(encoding="utf-8"))))
        assert back == [COLUMNS, *expected]


@pytest.mark.slow  # 1.3 s here (make quick leaves it out)
async def test_provenance_block_and_file_names(client: httpx.AsyncClient) -> None:
    response = await download(client, "csv", provenance="1", limit="10")
    name = response.headers["content-disposition"]
    total = int(response.headers["x-cowbird-total"])
    assert name.endswith(f'_first10of{total}.csv"') and name.startswith(f'attachment; filename="{CORPUS}_')
    text = response.text
    count = int(text.split("skiprows=")[1].split(";")[0])
    block = text.splitlines()[:count]
    assert all(line.startswith("#") for line in block)
    cells = list(csv.reader(block[1:]))  # two cells a line: "# key" and the value's JSON, quoted as CSV quotes
    assert all(len(pair) == 2 and pair[0].startswith("# ") for pair in cells) and "\\u002c" not in text
    about = {key[2:]: json.loads(value) for key, value in cells}
    assert about["query"] == QUERY and about["cqp"] == QUERY and about["total"] == total and about["rows"] == 10
    assert about["selection"] == f"hits 1 to 10 of {total:,}, in corpus order"  # its commas as they are
    assert about["truncated"] is True and about["complete"] is True and about["failed_partitions"] == []
    frame = pd.read_csv(io.StringIO(text), skiprows=count)
    assert list(frame.columns) == COLUMNS and len(frame) == 10
    # without provenance=1 the file is pure data
    plain = (await download(client, "csv", limit="10")).text
    assert plain.startswith("corpus,position,") and "#" not in plain.splitlines()[0]
    ndjson = (await download(client, "ndjson", provenance="1", limit="2")).text.splitlines()
    assert json.loads(ndjson[0])["metadata"]["rows"] == 2 and len(ndjson) == 3
    book = openpyxl.load_workbook(io.BytesIO((await download(client, "xlsx", provenance="1", limit="2")).content))
    assert book.sheetnames == ["hits", "metadata"]
    metadata = [list(row) for row in book["metadata"].iter_rows(values_only=True)]
    assert metadata[0] == ["field", "value"] and ["query", QUERY] in metadata
    first = [cell.value for cell in next(book["hits"].iter_rows(min_row=2, max_row=2))]
    assert isinstance(first[1], int) and isinstance(first[5], str)  # the position a number, the match text


async def test_export_takes_offset_sample_and_sentence_context(client: httpx.AsyncClient) -> None:
    expected = await expected_rows(client)
    page = (await download(client, "tsv", offset="150", limit="20")).text
    rows = list(csv.reader(io.StringIO(page), delimiter="\t"))[1:]
    assert rows == expected[150:170]
    past = await download(client, "tsv", offset=str(len(expected) + 5))
    assert past.text.splitlines() == ["\t".join(COLUMNS)] and past.headers["x-cowbird-rows"] == "0"
    sample = (await client.get("/api/v1/query", params={**PARAMS, "sample": 25, "seed": 7})).json()
    exported = list(csv.reader(io.StringIO((await download(client, "tsv", sample="25", seed="7")).text),
                               delimiter="\t"))[1:]
    assert [int(row[1]) for row in exported] == [hit["position"] for hit in sample["hits"]]
    sentence = list(csv.reader(io.StringIO((await download(client, "tsv", context="s", limit="5")).text),
                               delimiter="\t"))[1:]
    for row in sentence:  # the whole sentence around the match
        lines = (await client.get(f"/api/v1/ref/{CORPUS}/{row[1]}")).json()["sentence"]
        assert (row[4], row[5], row[6]) == (lines["left"], lines["match"], lines["right"])


async def test_bad_export_parameters_are_named(client: httpx.AsyncClient) -> None:
    cases = [({"format": "xls"}, "format"), ({"context": "9999"}, "context=9999"), ({"context": "para"}, "para"),
             ({"meta": "1"}, "provenance=1"), ({"ignorecase": "1"}, "did you mean ignore_case"),
             ({"sample": "5", "offset": "3"}, "offset and sample")]  # fmt: skip
    for extra, words in cases:
        response = await client.get("/api/v1/export", params={**PARAMS, **extra})
        assert response.status_code == 400, (extra, response.text)
        assert response.headers["content-type"].startswith("application/problem+json")
        assert words in response.text, (extra, response.text)


@pytest.mark.slow  # 1.2 s here (make quick leaves it out)
async def test_xlsx_over_the_sheet_limit_is_refused(client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("cowbird.frontend.routes.export.XLSX_MAX_ROWS", 10)
    refused = await client.get("/api/v1/export", params={**PARAMS, "format": "xlsx", "limit": 20})
    assert refused.status_code == 400 and "do not fit in a spreadsheet" in refused.json()["detail"]
    fits = await client.get("/api/v1/export", params={**PARAMS, "format": "xlsx", "limit": 9})
    assert fits.status_code == 200 and fits.headers["x-cowbird-rows"] == "9"


@pytest.mark.slow  # 1.9 s here (make quick leaves it out)
async def test_csv_metadata_reads_back_whole(client: httpx.AsyncClient, tmp_path: Path) -> None:
    """The CSV metadata block holds each value's commas as they are, in a quoted cell: pandas reads the
    data with ``skiprows=N`` (the docs' way) and with ``comment="#"``, ``csv.reader`` and Calf read
    the metadata back to the same values, and no ``\\u002c`` is left in the file."""
    genres = "text_genre~news|blog,review"
    response = await download(client, "csv", provenance="1", limit="5", filter=genres)
    text = response.text
    assert "\\u002c" not in text
    count = int(text.split("skiprows=")[1].split(";")[0])
    lines = text.splitlines()
    assert all(line.startswith("# ") for line in lines[:count]) and lines[count].startswith("corpus,")
    assert f'# filters,"[""{genres}""]"' in lines
    expected = pd.read_csv(io.StringIO(text), skiprows=count, dtype=str, keep_default_na=False)
    commented = pd.read_csv(io.StringIO(text), comment="#", dtype=str, keep_default_na=False)
    assert list(expected.columns) == COLUMNS and len(expected) == int(response.headers["x-cowbird-rows"])
    if not any("#" in cell for cell in expected.to_numpy().ravel()):  # comment= would cut a '#' inside a cell
        pd.testing.assert_frame_equal(commented, expected)
    metadata = {key[2:]: json.loads(value) for key, value in csv.reader(lines[1:count])}
    assert metadata["filters"] == [genres] and metadata["selection"].endswith(", in corpus order")
    saved = tmp_path / "export.csv"
    saved.write_bytes(response.content)
    table = read_table(saved)
    assert table.provenance["filters"] == [genres] and table.provenance["selection"] == metadata["selection"]
    assert table.header == COLUMNS and [r.values["match"] for r in table.rows] == list(expected["match"])
