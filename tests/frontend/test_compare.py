"""Comparing two searches (``GET /api/v1/compare``) on ``tests/fixtures/tricky.vrt`` in one partition
and in five: the counts on each side made from the VRT with plain Python (``read_tricky``), the
keyness of each value recomputed from the papers' formulas as the keyword tests do
(``tests.frontend.test_keywords.expected_rows``), the significance filter from the chi-squared
tail, and each value's links finding exactly its hits on either side."""

from __future__ import annotations

import io
import re
from collections import Counter
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pandas as pd
import pytest

from tests.frontend.conftest import TRICKY
from tests.frontend.test_keywords import critical, expected_rows
from tests.support import read_tricky

pytestmark = pytest.mark.anyio


def counts(keep: Any, attribute: str, test: Any) -> Counter[str]:
    """The ``attribute`` of every token passing ``test`` in the texts ``keep`` chooses."""
    return Counter(getattr(t, attribute) for t in read_tricky() if keep(t.text) and test(t))


NEWS_AGAINST_BLOGS: dict[str, str | int | float] = {
    "corpus": TRICKY,
    "q": '[pos="NN.*"]',
    "syntax": "cqp",
    "filter": "text_genre~news",
    "other_filter": "text_genre~blog|forum",
    "by": "pos",
    "min": 1,
}
"""One query over two subcorpora: nouns of the news against those of blogs and forums, by tag."""


def news_and_blog_nouns() -> tuple[Counter[str], Counter[str]]:
    """``NEWS_AGAINST_BLOGS``'s two sides counted from the VRT: the tags of the nouns in each."""
    noun = re.compile("NN.*")
    a = counts(lambda text: text["genre"] == "news", "pos", lambda t: noun.fullmatch(t.pos))
    b = counts(lambda text: text["genre"] in ("blog", "forum"), "pos", lambda t: noun.fullmatch(t.pos))
    return a, b


async def compare(client: httpx.AsyncClient, **params: str | int) -> httpx.Response:
    """``GET /api/v1/compare`` on tricky, its queries in CQP."""
    return await client.get("/api/v1/compare", params={"corpus": TRICKY, "syntax": "cqp", **params})


def listed(body: dict[str, Any], a: Counter[str], b: Counter[str], least: int, p: float, order: str) -> None:
    """The rows are the values whose log-likelihood passes the (Bonferroni) critical value, each side's
    most distinctive first, with the expected counts and measures."""
    rows = expected_rows(a, b, least, order)
    threshold = 0.0 if p >= 1 else critical(p / len(rows))
    assert body["compared"] == len(rows)
    kept = [
        r
        for r in rows
        if abs(r["log_likelihood"]) >= threshold
        and r["frequency"] * sum(b.values()) != r["reference_frequency"] * sum(a.values())
    ]
    first = sorted((r for r in kept if r["log_likelihood"] > 0), key=lambda r: (-abs(r[order]), r["value"]))
    second = sorted((r for r in kept if r["log_likelihood"] < 0), key=lambda r: (-abs(r[order]), r["value"]))
    assert [r["value"] for r in body["rows"]] == [r["value"] for r in first + second]
    assert (body["preferred_first"], body["preferred_second"]) == (len(first), len(second))
    for mine, theirs in zip(body["rows"], first + second, strict=True):
        assert (mine["frequency"], mine["other_frequency"]) == (theirs["frequency"], theirs["reference_frequency"])
        assert mine["preferred"] == ("first" if theirs["log_likelihood"] > 0 else "second")
        for measure in ("log_likelihood", "log_ratio", "log_ratio_low", "log_ratio_high"):
            assert mine[measure] == pytest.approx(theirs[measure], abs=1e-4), (mine["value"], measure)
        assert mine["diff"] == pytest.approx(theirs["diff"], abs=0.01)
        assert mine["share"] == pytest.approx(theirs["frequency"] / sum(a.values()))


@pytest.mark.parametrize(("p", "order"), [(1.0, "log_likelihood"), (0.05, "log_ratio"), (0.01, "diff")])
@pytest.mark.slow  # 2.9 s here (make quick leaves it out)
async def test_one_query_over_two_subcorpora_equals_an_independent_count(
    one: httpx.AsyncClient,
    five: httpx.AsyncClient,
    p: float,
    order: str,
) -> None:
    a, b = news_and_blog_nouns()
    for client in (one, five):
        answer = await client.get("/api/v1/compare", params={**NEWS_AGAINST_BLOGS, "p": p, "order": order})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert body["complete"]
        assert (body["first"]["counted"], body["second"]["counted"]) == (sum(a.values()), sum(b.values()))
        listed(body, a, b, 1, p, order)


async def test_two_queries_by_lemma_and_their_links(five: httpx.AsyncClient) -> None:
    """Adjectives against nouns by word, cut at min 4: the values in one of them only are the most key."""
    a = counts(lambda text: True, "word", lambda t: t.pos == "JJ")
    b = counts(lambda text: True, "word", lambda t: t.pos.startswith("NN"))
    answer = await compare(five, q='[pos="JJ"]', other_q='[pos="NN.*"]', by="word", min=4, p=1, limit=1000)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    listed(body, a, b, 4, 1.0, "log_likelihood")
    for row in body["rows"][:3] + body["rows"][-3:]:
        for link, expected in ((row["hits"], row["frequency"]), (row["other_hits"], row["other_frequency"])):
            if not expected:
                assert link is None
                continue
            found = await five.get("/api/v1/query", params={**parse_qs(urlsplit(link).query), "limit": 0})
            assert found.json()["total"] == expected, (row["value"], link)


async def test_the_file_and_the_refusals(five: httpx.AsyncClient) -> None:
    answer = await compare(five, q='[pos="JJ"]', other_q='[pos="RB"]', by="lemma", p=1, format="csv", provenance=1)
    assert answer.status_code == 200, answer.text
    skip = int(re.search(r"skiprows=(\d+)", answer.text).group(1))  # type: ignore[union-attr]
    table = pd.read_csv(io.StringIO(answer.text), skiprows=skip, keep_default_na=False)
    assert list(table.columns)[:4] == ["value", "preferred", "frequency", "other_frequency"]
    assert set(table["preferred"]) == {"first", "second"} and len(table) > 10
    same = await five.get("/api/v1/compare", params={"corpus": TRICKY, "q": "go"})
    assert same.status_code == 400 and "the two searches are the same" in same.text
    bad = await five.get(
        "/api/v1/compare", params={"corpus": TRICKY, "q": '[lemma="go"]', "other_q": "[pos=", "syntax": "cqp"}
    )
    assert bad.status_code == 400 and "the second search" in bad.text
    attribute = await five.get(
        "/api/v1/compare", params={"corpus": TRICKY, "q": "go", "other_q": "come", "by": "colour"}
    )
    assert attribute.status_code == 400 and "colour" in attribute.text


def kept_at(a: Counter[str], b: Counter[str], least: int, p: float) -> int:
    """The rows a comparison lists at ``p`` (Bonferroni), counted from the formulas."""
    rows = expected_rows(a, b, least, "log_likelihood")
    threshold = 0.0 if p >= 1 else critical(p / len(rows))
    return sum(
        1
        for r in rows
        if abs(r["log_likelihood"]) >= threshold
        and r["frequency"] * sum(b.values()) != r["reference_frequency"] * sum(a.values())
    )


@pytest.mark.slow  # 1.7 s here (make quick leaves it out)
async def test_nothing_significant_names_the_setting_that_lists_rows(five: httpx.AsyncClient) -> None:
    """Nouns of the news against those of blogs and forums by tag: at p < 0.001 no tag passes, and the
    answer names the first looser p (0.01, 0.05, then 1: every value) that lists some, with how many;
    asked with it, the comparison lists exactly that many. A min no value reaches names min=1."""
    a, b = news_and_blog_nouns()
    assert kept_at(a, b, 1, 0.001) == 0  # the fixture's premise
    expected_p = next(p for p in (0.01, 0.05, 1.0) if kept_at(a, b, 1, p))
    params = NEWS_AGAINST_BLOGS
    body = (await five.get("/api/v1/compare", params={**params, "p": 0.001})).json()
    assert body["rows"] == [] and body["not_significant"] == body["compared"] == len(a | b)
    hint = body["next_setting"]
    assert (hint["parameter"], hint["value"], hint["rows"]) == ("p", expected_p, kept_at(a, b, 1, expected_p))
    assert f"none of the {len(a | b)} values compared" in hint["detail"] and "p < 0.001" in hint["detail"]
    again = (await five.get("/api/v1/compare", params={**params, "p": hint["value"]})).json()
    assert len(again["rows"]) == hint["rows"] and again["next_setting"] is None
    rare = (await five.get("/api/v1/compare", params={**params, "min": 10_000, "p": 1})).json()
    assert rare["compared"] == 0 and rare["rows"] == []
    assert (rare["next_setting"]["parameter"], rare["next_setting"]["value"]) == ("min", 1)
    assert rare["next_setting"]["rows"] == kept_at(a, b, 1, 1.0) > 0
