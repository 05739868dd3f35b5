"""Trends over time (``GET /api/v1/trend``) on ``tests/fixtures/tricky.vrt`` in one partition and in
five, judged by counts made from the VRT with plain Python (``tests.support.read_tricky``): hits and
tokens and texts per year of ``text_year``, per month of ``text_date``, in a subcorpus; the band
recomputed from the Wilson interval's quadratic; each point's link finding exactly its hits."""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections import Counter
from pathlib import Path
from statistics import NormalDist
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pandas as pd
import pytest

from cowbird.data import demo_corpus
from cowbird.store import EncodeOptions, Encoder, parse_s_declaration
from tests.frontend.conftest import TRICKY, Partitioned, ewt_client
from tests.support import TrickyToken, read_tricky

pytestmark = pytest.mark.anyio

GO = '[lemma="go"]'
JJ_NN = '[pos="JJ"] [pos="NN.*"] within s'


def period(value: str, kind: str) -> str:
    """The period of a date as the test reads it: ``YYYY`` or ``YYYY-MM-DD`` are the forms tricky.vrt holds."""
    if re.fullmatch(r"[0-9]{4}(-[0-9]{2}-[0-9]{2})?", value) is None:
        return ""
    return value[:7] if kind == "month" and len(value) > 4 else "" if kind == "month" else value[:4]


def hits_of(tokens: list[TrickyToken], q: str) -> list[TrickyToken]:
    """The first token of each hit of the two test queries, found by hand."""
    if q == GO:
        return [t for t in tokens if t.lemma == "go"]
    assert q == JJ_NN
    return [a for a, b in zip(tokens, tokens[1:], strict=False)
            if a.pos == "JJ" and re.fullmatch("NN.*", b.pos) and a.s == b.s]


def expected(q: str, by: str, kind: str, keep: Any = lambda t: True) -> dict[str, tuple[int, int, int]]:
    """(hits, tokens, texts) per period, from the VRT."""
    tokens = [t for t in read_tricky() if keep(t)]
    hits = Counter(period(t.text[by.removeprefix("text_")], kind) for t in hits_of(tokens, q))
    size = Counter(period(t.text[by.removeprefix("text_")], kind) for t in tokens)
    texts = Counter(period(text[by.removeprefix("text_")], kind)
                    for text in {t.text["id"]: t.text for t in tokens}.values())
    return {k: (hits[k], size[k], texts[k]) for k in size}


def band(hits: int, n: int) -> tuple[float, float]:
    """The Wilson interval as the roots of (hits/n - p)^2 = z^2 p (1 - p) / n, per million."""
    z = NormalDist().inv_cdf(0.975)
    a, b, c = n + z * z, -(2 * hits + z * z), hits * hits / n
    root = math.sqrt(b * b - 4 * a * c)
    return max(0.0, (-b - root) / (2 * a)) * 1e6, (-b + root) / (2 * a) * 1e6


def check_series(series: dict[str, Any], counts: dict[str, tuple[int, int, int]], sparse_below: int) -> None:
    dated = sorted(k for k in counts if k)
    assert series["points"][0]["period"] == dated[0] and series["points"][-1]["period"] == dated[-1]
    for point in series["points"]:
        hits, tokens, texts = counts.get(point["period"], (0, 0, 0))
        assert (point["hits"], point["tokens"], point["texts"]) == (hits, tokens, texts), point
        assert point["sparse"] == (tokens < sparse_below)
        if tokens:
            assert point["per_million"] == pytest.approx(hits / tokens * 1e6)
            low, high = band(hits, tokens)
            assert (point["low"], point["high"]) == (pytest.approx(low, abs=1e-6), pytest.approx(high))
        else:
            assert point["per_million"] is None and point["concordance"] is None
    assert series["undated"] == counts.get("", (0, 0, 0))[0]
    assert series["total"] == sum(h for h, _, _ in counts.values())


@pytest.mark.parametrize(("by", "kind"), [("text_year", "year"), ("text_date", "month"), ("text_date", "year")])
@pytest.mark.slow  # 1.4 s here (make quick leaves it out)
async def test_rates_per_period_equal_counts_from_the_vrt(one: httpx.AsyncClient, five: httpx.AsyncClient, by: str,
                                                          kind: str) -> None:
    answers = []
    for client in (one, five):
        answer = await client.get("/api/v1/trend", params={
            "corpus": TRICKY, "q": [GO, JJ_NN], "syntax": "cqp", "by": by, "period": kind, "sparse_below": 1000})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["complete"] and body["by"] == by and body["tokens"] == len(read_tricky())
        for series, q in zip(body["series"], (GO, JJ_NN), strict=True):
            assert series["q"] == q
            check_series(series, expected(q, by, kind), 1000)
        assert body["undated_tokens"] == expected(GO, by, kind).get("", (0, 0, 0))[1]
        answers.append(body)
    one_body, five_body = answers
    assert [s["points"] for s in one_body["series"]] == [s["points"] for s in five_body["series"]]
    assert len(five_body["series"][0]["partitions"]) == 5


@pytest.mark.slow  # 1.8 s here (make quick leaves it out)
async def test_a_month_without_text_is_a_gap_and_each_point_links_to_its_hits(five: httpx.AsyncClient) -> None:
    answer = await five.get("/api/v1/trend", params={"corpus": TRICKY, "q": GO, "syntax": "cqp", "by": "text_date",
                                                     "period": "month"})
    points = answer.json()["series"][0]["points"]
    gaps = [p for p in points if p["tokens"] == 0]
    assert gaps and all(p["per_million"] is None and p["sparse"] for p in gaps)
    for point in [p for p in points if p["tokens"]][:6]:
        params = parse_qs(urlsplit(point["concordance"]).query)
        found = await five.get("/api/v1/query", params={**params, "limit": 0})
        assert found.status_code == 200, found.text
        assert found.json()["total"] == point["hits"], point["period"]


async def test_a_subcorpus_counts_its_own_tokens_per_period(one: httpx.AsyncClient) -> None:
    answer = await one.get("/api/v1/trend", params={"corpus": TRICKY, "q": GO, "syntax": "cqp",
                                                    "filter": "text_genre~blog|forum", "sparse_below": 0})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    blogs = expected(GO, "text_year", "year", lambda t: t.text["genre"] in ("blog", "forum"))
    check_series(body["series"][0], blogs, 0)
    assert body["tokens"] == sum(n for _, n, _ in blogs.values())
    assert all("filter=text_genre~blog|forum" in p["concordance"].replace("%7C", "|")
               for p in body["series"][0]["points"] if p["concordance"])


async def test_the_file_has_a_row_per_query_and_period(five: httpx.AsyncClient) -> None:
    answer = await five.get("/api/v1/trend", params={"corpus": TRICKY, "q": [GO, JJ_NN], "syntax": "cqp",
                                                     "format": "csv", "provenance": 1})
    assert answer.status_code == 200, answer.text
    skip = int(re.search(r"skiprows=(\d+)", answer.text).group(1))  # type: ignore[union-attr]
    table = pd.read_csv(io.StringIO(answer.text), skiprows=skip, keep_default_na=False)
    assert list(table.columns) == ["query", "period", "hits", "tokens", "texts", "per_million", "low", "high",
                                   "sparse"]
    counts = expected(JJ_NN, "text_year", "year")
    rows = table[table["query"] == JJ_NN]
    assert {str(p): (h, n, t) for p, h, n, t in zip(rows["period"], rows["hits"], rows["tokens"], rows["texts"],
                                                    strict=True)} == {k: v for k, v in counts.items() if k}
    records = csv.reader(io.StringIO(answer.text))
    metadata = {row[0]: row[1] for row in records if len(row) == 2 and row[0].startswith("# ")}
    assert json.loads(metadata["# by"]) == "text_year" and "Wilson" in answer.text


@pytest.mark.parametrize(("params", "words"), [
    ({"by": "text_genre"}, "none of its values"),
    ({"by": "text_colour"}, "no s-attribute with values named 'text_colour'"),
    ({"q": ["go"] * 9}, "at most 8"),
    ({"period": "week"}, "'year', 'month' or 'decade'"),
    ({"q": '[lemma="go"] cut 3', "syntax": "cqp"}, "drop the query's cut"),
])  # fmt: skip
async def test_refusals_say_what_was_wrong(one: httpx.AsyncClient, params: dict[str, Any], words: str) -> None:
    answer = await one.get("/api/v1/trend", params={"corpus": TRICKY, "q": "go", **params})
    assert answer.status_code == 400, answer.text
    assert words in answer.json()["detail"]


@pytest.mark.slow  # 2.2 s here (make quick leaves it out)
async def test_the_demo_corpus_years_and_last_modified_months(tmp_path: Path) -> None:
    """The demo's generated web corpus (60,000 tokens, two partitions): hits of ``^house`` per year of
    ``text_year`` and per month of ``text_lastmod``, against counts read from its VRT."""
    vrt = tmp_path / "web.vrt"
    demo_corpus.write_vrt(vrt, 60_000)
    options = EncodeOptions(vrt, tmp_path / "data", tmp_path / "registry" / "web", ["word", "pos", "lemma"],
                            [parse_s_declaration("text:0+id+url+host+tld+genre+year+lastmod"),
                             parse_s_declaration("s:0+id")], charset="utf8", xml=True, skip_blank=True,
                            strip_blanks=True, partition_tokens=30_200)
    result = Encoder(options).run()
    assert result.manifest is not None and len(result.partitions) == 2
    parts = Partitioned(tmp_path / "registry", result.manifest, [p.id for p in result.partitions])
    meta: dict[str, str] = {}
    rows: list[tuple[str, dict[str, str]]] = []
    for line in vrt.read_text(encoding="utf-8").splitlines():
        if line.startswith("<text "):
            meta = dict(re.findall(r'(\w+)="([^"]*)"', line))
        elif not line.startswith("<"):
            rows.append((line.split("\t")[2], meta))
    async for client in ewt_client(parts, "web"):
        for by, period, cut in (("text_year", "year", 4), ("text_lastmod", "month", 7)):
            answer = await client.get("/api/v1/trend", params={"corpus": "web", "q": "^house", "by": by,
                                                               "period": period, "sparse_below": 0})
            assert answer.status_code == 200, answer.text
            attribute = by.removeprefix("text_")
            hits = Counter(m[attribute][:cut] for lemma, m in rows if lemma == "house")
            size = Counter(m[attribute][:cut] for _, m in rows)
            points = answer.json()["series"][0]["points"]
            assert {p["period"]: (p["hits"], p["tokens"]) for p in points if p["tokens"]} == {
                k: (hits[k], size[k]) for k in size}
