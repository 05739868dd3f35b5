"""A trend point's link (issue 65, item 4): ``text_year=2005`` (equals, readable) where every text of the
year has just the year as its value, the exact expression of the year's dates where some texts have a
date in it (``2006-03-01``) — over one partition and two, each link finding exactly the point's hits,
judged against counts of the VRT written here."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from cowbird.store import EncodeOptions, Encoder, parse_s_declaration
from tests.frontend.conftest import Partitioned, ewt_client

pytestmark = pytest.mark.anyio

TEXTS = [  # (id, year value, sentences of "word/lemma" tokens)
    ("a", "2005", ["The house stands .", "A house and a car ."]),
    ("b", "2005", ["Houses were built .", "No car here ."]),
    ("c", "2006", ["The house is old ."]),
    ("d", "2006-03-01", ["Their house and our house ."]),
    ("e", "2007-05-05", ["A car , a house ."]),
    ("f", "2007-11-30", ["The houses ."]),
    ("g", "undated", ["A house ."]),
]
"""2005: every text just the year; 2006: one text with a date in it; 2007: dates only; one text undated."""


def encode(base: Path, partition_tokens: int) -> Partitioned:
    lines = []
    for ident, year, sentences in TEXTS:
        lines.append(f'<text id="{ident}" year="{year}">')
        for sentence in sentences:
            lines.append("<s>")
            for word in sentence.split():
                lemma = "house" if word.lower().startswith("house") else word.lower()
                lines.append(f"{word}\tX\t{lemma}")
            lines.append("</s>")
        lines.append("</text>")
    vrt = base / "years.vrt"
    vrt.write_text("\n".join(lines) + "\n", encoding="utf-8")
    options = EncodeOptions(
        vrt,
        base / "data",
        base / "registry" / "years",
        ["word", "pos", "lemma"],
        [parse_s_declaration("text:0+id+year"), parse_s_declaration("s:0")],
        charset="utf8",
        xml=True,
        skip_blank=True,
        strip_blanks=True,
        partition_tokens=partition_tokens,
    )
    result = Encoder(options).run()
    assert result.manifest is not None
    return Partitioned(base / "registry", result.manifest, [p.id for p in result.partitions])


def house_hits(year: str) -> int:
    return sum(
        word.lower().startswith("house")
        for _, value, sentences in TEXTS
        if value[:4] == year
        for sentence in sentences
        for word in sentence.split()
    )


@pytest.mark.parametrize("partition_tokens", [1_000, 20])
@pytest.mark.slow  # 1.8 s here (make quick leaves it out)
async def test_a_year_of_plain_years_links_with_equals_and_one_with_dates_with_its_expression(
    tmp_path: Path, partition_tokens: int
) -> None:
    parts = encode(tmp_path, partition_tokens)
    assert (len(parts.ids) == 1) == (partition_tokens == 1_000)
    async for client in ewt_client(parts, "years"):
        answer = await client.get(
            "/api/v1/trend",
            params={"corpus": "years", "q": '[lemma="house"]', "syntax": "cqp", "by": "text_year", "sparse_below": 0},
        )
        assert answer.status_code == 200, answer.text
        points = {p["period"]: p for p in answer.json()["series"][0]["points"]}
        assert {year: p["hits"] for year, p in points.items()} == {y: house_hits(y) for y in ("2005", "2006", "2007")}
        filters = {year: parse_qs(urlsplit(p["concordance"]).query)["filter"] for year, p in points.items()}
        assert filters["2005"] == ["text_year=2005"]
        assert filters["2006"][0].startswith("text_year~2006(") and filters["2007"][0].startswith("text_year~2007(")
        for year, point in points.items():  # each link finds exactly the point's hits
            params = parse_qs(urlsplit(point["concordance"]).query)
            found = await client.get("/api/v1/query", params={**params, "limit": 0})
            assert found.status_code == 200, found.text
            assert found.json()["total"] == point["hits"] == house_hits(year), year
        # a subcorpus without 2005's second text: the year is still plain years only
        narrowed = await client.get(
            "/api/v1/trend",
            params={
                "corpus": "years",
                "q": '[lemma="house"]',
                "syntax": "cqp",
                "by": "text_year",
                "filter": "text_id!=b",
            },
        )
        assert narrowed.status_code == 200, narrowed.text
        first = narrowed.json()["series"][0]["points"][0]
        assert parse_qs(urlsplit(first["concordance"]).query)["filter"] == ["text_id!=b", "text_year=2005"]
        # per decade: no equals, the decade's expression
        decades = await client.get(
            "/api/v1/trend", params={"corpus": "years", "q": "house", "by": "text_year", "period": "decade"}
        )
        [decade] = decades.json()["series"][0]["points"]
        assert parse_qs(urlsplit(decade["concordance"]).query)["filter"][0].startswith("text_year~200[0-9]")
