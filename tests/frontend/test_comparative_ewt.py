"""The comparative views on the real web corpus EWT (../shared/reference, two partitions), judged by
counts read from ``ewt.vrt`` with plain Python: the trend per year and per month (its years and
dates), the comparison of two genres, a search over EWT and tricky.vrt at once; and on GERMAPARL the
distribution over its sitting dates per year, judged by real CQP's ``group``."""

from __future__ import annotations

import asyncio
import re
import unicodedata
from collections import Counter
from collections.abc import AsyncIterator
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest

from cowbird.core.search import CheckedQuery, Search
from cowbird.engines import QueryEngine
from cowbird.frontend import CorpusConfig, FrontendSettings
from cowbird.frontend.settings import NodeAccess
from cowbird.node import NodeSettings
from cowbird.node import create_app as create_node
from cowbird.node.local import LocalCorpus, LocalPartitions
from cowbird.query import parse_cqp
from tests.frontend.conftest import NODE_TOKEN, TRICKY, Partitioned, api_account, engine, front_client
from tests.frontend.test_keywords import expected_rows
from tests.realcqp import RealCqp
from tests.support import read_tricky, reference_cqp, require_reference

pytestmark = pytest.mark.anyio


@cache
def ewt_tokens() -> tuple[tuple[str, str, dict[str, str]], ...]:
    """(pos, lemma, the text's attributes) of every token of ewt.vrt, read as cwb-encode -xsB reads it."""
    tokens: list[tuple[str, str, dict[str, str]]] = []
    text: dict[str, str] = {}
    for raw in (require_reference() / "ewt.vrt").read_text(encoding="utf-8").split("\n"):
        line = unicodedata.normalize("NFC", raw)
        if not line.strip() or line.startswith("<?"):
            continue
        if line.startswith("<text "):
            text = dict(re.findall(r'(\w+)="([^"]*)"', line))
        elif not line.startswith("<"):
            fields = [f.strip(" ") for f in line.split("\t")]
            tokens.append((fields[1], fields[3], text))
    return tuple(tokens)


@pytest.fixture
async def ewt(ewt_parts: Partitioned, tricky_five: Partitioned, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    engines: dict[str, QueryEngine] = {pid: engine(ewt_parts.registry, pid) for pid in ewt_parts.ids}
    engines |= {pid: engine(tricky_five.registry, pid) for pid in tricky_five.ids}
    node = create_node(NodeSettings(registry=ewt_parts.registry, token=NODE_TOKEN), engines=engines)
    accounts: dict[str, Any] = {"database_file": api_account(tmp_path / "accounts.sqlite3")}
    settings = FrontendSettings(
        corpora=[CorpusConfig(name="ewt", manifest=ewt_parts.manifest,
                              nodes={p: ["http://node-a"] for p in ewt_parts.ids}),
                 CorpusConfig(name=TRICKY, manifest=tricky_five.manifest,
                              nodes={p: ["http://node-a"] for p in tricky_five.ids})],
        nodes=NodeAccess(token=NODE_TOKEN), allowed_hosts=["front"], **accounts)
    async for client in front_client(settings, {"node-a": node}):
        yield client


@pytest.mark.parametrize(("by", "period", "cut"), [("text_year", "year", 4), ("text_date", "month", 7)])
@pytest.mark.slow  # 3.1 s here (make quick leaves it out)
async def test_the_trend_on_ewt_equals_counts_from_the_vrt(ewt: httpx.AsyncClient, by: str, period: str,
                                                           cut: int) -> None:
    answer = await ewt.get("/api/v1/trend", params={"corpus": "ewt", "q": ['[lemma="go"]', '[pos="UH"]'],
                                                    "syntax": "cqp", "by": by, "period": period})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    attribute = by.removeprefix("text_")

    def key(text: dict[str, str]) -> str:
        value = text.get(attribute, "")
        return value[:cut] if re.fullmatch(r"[0-9]{4}(-[0-9]{2}-[0-9]{2})?", value) and len(value) >= cut else ""

    tokens = ewt_tokens()
    size = Counter(key(t) for _, _, t in tokens)
    texts = Counter(key(t) for t in {id(t): t for _, _, t in tokens}.values())
    for series, wanted in zip(body["series"], (("lemma", "go"), ("pos", "UH")), strict=True):
        hits = Counter(key(t) for pos, lemma, t in tokens if (pos, lemma)[wanted[0] == "lemma"] == wanted[1])
        assert series["total"] == sum(hits.values()) > 0
        with_text = [p for p in series["points"] if p["tokens"]]
        assert {p["period"]: (p["hits"], p["tokens"], p["texts"]) for p in with_text} == {
            k: (hits[k], size[k], texts[k]) for k in size if k}
        assert series["undated"] == hits[""]
    assert body["undated_tokens"] == size[""]


@pytest.mark.slow  # 1.4 s here (make quick leaves it out)
async def test_two_genres_compared_on_ewt(ewt: httpx.AsyncClient) -> None:
    answer = await ewt.get("/api/v1/compare", params={
        "corpus": "ewt", "q": '[pos="JJ.*"]', "syntax": "cqp", "filter": "text_genre~reviews",
        "other_filter": "text_genre~email", "by": "lemma", "p": 1, "limit": 100_000})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    tokens = ewt_tokens()
    reviews = Counter(lemma for pos, lemma, t in tokens if pos.startswith("JJ") and t.get("genre") == "reviews")
    email = Counter(lemma for pos, lemma, t in tokens if pos.startswith("JJ") and t.get("genre") == "email")
    expected = {r["value"]: (r["frequency"], r["reference_frequency"], r["log_likelihood"])
                for r in expected_rows(reviews, email, 3, "log_likelihood")
                if r["frequency"] * sum(email.values()) != r["reference_frequency"] * sum(reviews.values())}
    assert body["compared"] == len(expected_rows(reviews, email, 3, "log_likelihood"))
    assert {r["value"]: (r["frequency"], r["other_frequency"]) for r in body["rows"]} == {
        v: (a, b) for v, (a, b, _) in expected.items()}
    for row in body["rows"]:
        assert row["log_likelihood"] == pytest.approx(expected[row["value"]][2], abs=1e-4)


async def test_ewt_and_tricky_at_once(ewt: httpx.AsyncClient) -> None:
    answer = await ewt.get("/api/v1/query", params={"corpus": f"ewt,{TRICKY}", "q": '[lemma="go"]', "syntax": "cqp",
                                                    "limit": 0})
    assert answer.status_code == 200, answer.text
    ewt_go = sum(1 for _, lemma, _ in ewt_tokens() if lemma == "go")
    tricky_go = sum(1 for t in read_tricky() if t.lemma == "go")
    assert [(c["corpus"], c["total"]) for c in answer.json()["corpora"]] == [("ewt", ewt_go), (TRICKY, tricky_go)]
    assert answer.json()["total"] == ewt_go + tricky_go


def test_germaparl_dates_per_year_equal_real_cqps_group() -> None:
    registry = require_reference() / "germaparl" / "registry"
    judge = RealCqp(reference_cqp(), registry, "GERMAPARL1386")
    try:
        out = judge.run('A = [pos="ADJA"]; group A match sitzung_date;')
    finally:
        judge.close()
    cqp_counts = {line.split("\t")[0].strip(): int(line.split("\t")[-1]) for line in out.splitlines()
                  if "\t" in line and line.split("\t")[-1].strip().isdigit()}
    partitions = LocalPartitions.open(registry, ["germaparl1386"])
    corpus = LocalCorpus.of_engine("germaparl1386", partitions.engine("germaparl1386"))
    search = Search(partitions, corpus, CheckedQuery.of(parse_cqp('[pos="ADJA"]')))
    _, table = asyncio.run(search.distribution("sitzung_date", "value", "year"))
    by_year: Counter[str] = Counter()
    for date, hits in cqp_counts.items():
        by_year[date[:4]] += hits
    assert {row.value: row.hits for row in table.rows} == dict(by_year) and sum(by_year.values()) > 0
    assert sum(row.tokens for row in table.rows) == sum(p.size for p in corpus.partitions)
