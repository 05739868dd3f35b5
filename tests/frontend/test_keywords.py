"""Keyword lists (``GET /api/v1/keywords``): the news texts of ``tests/fixtures/tricky.vrt`` against
its other texts, and against another corpus, judged by an independent computation from real CWB's
``cwb-scan-corpus`` counts (log-likelihood as Rayson and Garside 2000, Log Ratio and its interval as
Hardie 2014, %DIFF as Gabrielatos and Marchi 2012, written out here from the papers' formulas), on one
partition and on five."""

from __future__ import annotations

import io
import math
import subprocess
from collections import Counter
from typing import Any

import httpx
import pandas as pd
import pytest

from tests.frontend.conftest import TRICKY, Partitioned, assert_refused_saying
from tests.support import reference_cqp

pytestmark = pytest.mark.anyio


def scan(parts: Partitioned, attribute: str, *constraints: str) -> Counter[str]:
    binary = reference_cqp().parent / "cwb-scan-corpus"
    done = subprocess.run([str(binary), "-q", "-r", str(parts.registry), parts.ids[0].upper(), f"{attribute}+0",
                           *constraints], capture_output=True, text=True, check=True)
    counts: Counter[str] = Counter()
    for line in done.stdout.splitlines():
        frequency, value = line.split("\t")[:2]
        counts[value] += int(frequency)
    return counts


def critical(p: float) -> float:
    """The chi-squared value (one degree of freedom) whose upper tail is ``p``: P(X > x) = erfc(sqrt(x / 2)),
    solved by bisection (independent of the normal quantile cowbird uses)."""
    lo, hi = 0.0, 1000.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erfc(math.sqrt(mid / 2)) > p else (lo, mid)
    return lo


def expected_rows(target: Counter[str], reference: Counter[str], least: int, order: str,
                  smoothing: float = 1.0) -> list[dict[str, Any]]:
    n1, n2 = sum(target.values()), sum(reference.values())
    rows: list[dict[str, Any]] = []
    for value in set(target) | set(reference):
        a, b = target[value], reference[value]
        if a < least and b < least:
            continue
        e1, e2 = n1 * (a + b) / (n1 + n2), n2 * (a + b) / (n1 + n2)
        ll = 2 * ((a * math.log(a / e1) if a else 0) + (b * math.log(b / e2) if b else 0))
        if a / n1 < b / n2:
            ll = -ll
        a0, b0 = a or 0.5, b or 0.5
        ratio = math.log2((a0 / n1) / (b0 / n2))
        se = math.sqrt(1 / a0 + 1 / b0)
        diff = ((a0 / n1) - (b0 / n2)) * 100 / (b0 / n2)
        simple = (a / n1 * 1e6 + smoothing) / (b / n2 * 1e6 + smoothing)  # Kilgarriff 2009
        rows.append({"value": value, "frequency": a, "reference_frequency": b, "log_likelihood": ll,
                     "log_ratio": ratio, "log_ratio_low": ratio - 1.96 * se / math.log(2),
                     "log_ratio_high": ratio + 1.96 * se / math.log(2), "diff": diff, "simple_maths": simple})
    rows.sort(key=lambda r: (-float(r["frequency"] if order == "frequency" else r[order]), str(r["value"])))
    return rows


def same(got: list[dict[str, Any]], expected: list[dict[str, Any]]) -> None:
    assert [r["value"] for r in got] == [r["value"] for r in expected]
    for mine, theirs in zip(got, expected, strict=True):
        assert (mine["frequency"], mine["reference_frequency"]) == (theirs["frequency"], theirs["reference_frequency"])
        for measure in ("log_likelihood", "log_ratio", "log_ratio_low", "log_ratio_high"):
            assert mine[measure] == pytest.approx(theirs[measure], abs=1e-4), (mine["value"], measure)
        assert mine["diff"] == pytest.approx(theirs["diff"], abs=0.01)


@pytest.mark.slow
@pytest.mark.parametrize(("attribute", "least", "order"), [
    ("word", 5, "log_likelihood"), ("lemma", 3, "log_ratio"), ("pos", 1, "diff"), ("word", 10, "frequency"),
])
async def test_news_against_the_other_texts_equals_an_independent_computation(
    one: httpx.AsyncClient, five: httpx.AsyncClient, tricky_one: Partitioned, attribute: str, least: int,
    order: str,
) -> None:
    news = scan(tricky_one, attribute, "?text_genre+0=/news/")
    rest = scan(tricky_one, attribute, "?text_genre+0!=/news/")
    expected = expected_rows(news, rest, least, order)
    assert len(expected) > 30  # (the tagset: 35 tags or more)
    for client in (one, five):
        answer = await client.get("/api/v1/keywords", params={
            "corpus": TRICKY, "filter": "text_genre~news", "reference_filter": "text_genre!~news",
            "attribute": attribute, "min": least, "order": order, "limit": 60, "p": 1})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["complete"] and body["compared"] == len(expected)
        ids = sorted({p["id"] for p in body["partitions"]})  # the news and the other texts: the same partitions
        assert body["target_partitions"] == body["reference_partitions"] == ids
        assert (body["tokens"], body["reference_tokens"]) == (sum(news.values()), sum(rest.values()))
        same(body["rows"], expected[:60])
        negative = [r for r in body["rows"] if r["log_likelihood"] < 0]
        assert all("filter=text_genre~news" in r["hits"] for r in body["rows"] if r["frequency"])
        assert all(r["hits"] is None for r in body["rows"] if not r["frequency"])
        if order == "log_likelihood":
            assert not negative  # the most over-represented first: the under-represented come last


@pytest.mark.slow  # 4.9 s here (make quick leaves it out)
async def test_a_subcorpus_against_the_whole_corpus_and_files(five: httpx.AsyncClient, tricky_one: Partitioned) -> None:
    blogs = scan(tricky_one, "lemma", "?text_genre+0=/blog/")
    everything = scan(tricky_one, "lemma")
    expected = expected_rows(blogs, everything, 4, "log_likelihood")[:25]
    answer = await five.get("/api/v1/keywords", params={"corpus": TRICKY, "filter": "text_genre~blog",
                                                         "attribute": "lemma", "min": 4, "limit": 25, "p": 1})
    assert answer.status_code == 200, answer.text
    same(answer.json()["rows"], expected)
    assert answer.json()["reference"] == TRICKY and answer.json()["reference_tokens"] == 12_762
    for format in ("tsv", "xlsx"):
        got = await five.get("/api/v1/keywords", params={"corpus": TRICKY, "filter": "text_genre~blog",
                                                          "attribute": "lemma", "min": 4, "limit": 25,
                                                          "format": format, "provenance": 1, "p": 1})
        assert got.status_code == 200, got.text
        if format == "xlsx":
            frame = pd.read_excel(io.BytesIO(got.content), sheet_name=0, keep_default_na=False)
        else:
            text = got.content.decode("utf-8")
            skip = sum(1 for line in text.splitlines() if line.startswith("#"))
            assert "keywords" in text.splitlines()[1] or "keywords" in text
            frame = pd.read_csv(io.StringIO(text), sep="\t", skiprows=skip, keep_default_na=False, quoting=3)
        assert [str(v) for v in frame["value"]] == [r["value"] for r in expected]
        assert list(frame["log_likelihood"]) == pytest.approx([r["log_likelihood"] for r in expected], abs=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize(("p", "correction", "min_log_ratio"), [
    (0.05, "bonferroni", 0.0), (0.01, "none", 0.0), (0.05, "none", 1.0),
])
async def test_only_significant_keywords_are_listed_and_the_others_counted(
    one: httpx.AsyncClient, five: httpx.AsyncClient, tricky_one: Partitioned, p: float, correction: str,
    min_log_ratio: float,
) -> None:
    """By default only items whose log-likelihood is significant at p = 0.05 with the Bonferroni
    correction are listed (the critical value here from the chi-squared tail, independently); an
    effect-size minimum on |Log Ratio|; those left out are counted; the simple-maths score orders."""
    news = scan(tricky_one, "lemma", "?text_genre+0=/news/")
    rest = scan(tricky_one, "lemma", "?text_genre+0!=/news/")
    every = expected_rows(news, rest, 3, "simple_maths", smoothing=10.0)
    bound = critical(p / len(every) if correction == "bonferroni" else p)
    kept = [r for r in every if abs(r["log_likelihood"]) >= bound and abs(r["log_ratio"]) >= min_log_ratio]
    assert len(kept) < len(every) and (kept or correction == "bonferroni")  # (a small corpus: none survives it)
    for client in (one, five):
        body = (await client.get("/api/v1/keywords", params={
            "corpus": TRICKY, "filter": "text_genre~news", "reference_filter": "text_genre!~news", "attribute": "lemma",
            "min": 3, "order": "simple_maths", "smoothing": 10, "limit": 1000, "p": p, "correction": correction,
            "min_log_ratio": min_log_ratio})).json()
        assert body["critical_log_likelihood"] == pytest.approx(bound, abs=1e-3)
        assert body["not_significant"] == len(every) - len(kept) and body["listed"] == len(kept)
        same(body["rows"], kept)
        assert [r["simple_maths"] for r in body["rows"]] == pytest.approx([r["simple_maths"] for r in kept],
                                                                           abs=1e-4)
    default = (await five.get("/api/v1/keywords", params={"corpus": TRICKY, "filter": "text_genre~news",
                                                          "attribute": "word", "min": 3})).json()
    assert default["p"] == 0.05 and default["correction"] == "bonferroni" and default["not_significant"] > 0


async def test_keyword_errors_say_what_was_wrong(five: httpx.AsyncClient) -> None:
    await assert_refused_saying(five, "/api/v1/keywords", {"corpus": TRICKY, "filter": "text_genre~news"}, {
        (("attribute", "colour"),): "no p-attribute 'colour'",
        (("reference", "nowhere"),): "nowhere",
        (("order", "chi2"),): "order",
        (("reference_filter", "text_colour~x"),): "reference_filter",
    })
    itself = await five.get("/api/v1/keywords", params={"corpus": TRICKY})
    assert itself.status_code == 400 and "the reference is the target itself" in itself.text
