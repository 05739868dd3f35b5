"""Several corpora in one search (``corpus=tricky,sample``): ``tests/fixtures/tricky.vrt`` in five
partitions and the sample corpus in three, behind one node. Every figure of the union equals the
single corpora's — totals and rates per corpus, the KWIC (the first corpus's hits, then the
second's, each named with its own static link), frequency and distribution columns per corpus, the
export — and what one corpus lacks is named, never skipped."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

from cowbird.core.gdex import GdexRules
from cowbird.engines import QueryEngine
from cowbird.frontend import CorpusConfig, FrontendSettings
from cowbird.frontend.settings import NodeAccess
from cowbird.node import NodeSettings
from cowbird.node import create_app as create_node
from tests.frontend.conftest import NODE_TOKEN, TRICKY, Partitioned, api_account, engine, front_client

pytestmark = pytest.mark.anyio

BOTH = f"{TRICKY},sample"


@pytest.fixture
async def multi(tricky_five: Partitioned, sample_parts: Partitioned,
                tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    engines: dict[str, QueryEngine] = {pid: engine(tricky_five.registry, pid) for pid in tricky_five.ids}
    engines |= {pid: engine(sample_parts.registry, pid) for pid in sample_parts.ids}
    node = create_node(NodeSettings(registry=tricky_five.registry, token=NODE_TOKEN), engines=engines)
    accounts: dict[str, Any] = {"database_file": api_account(tmp_path / "accounts.sqlite3")}
    settings = FrontendSettings(
        corpora=[CorpusConfig(name=TRICKY, title="Tricky", manifest=tricky_five.manifest,
                              nodes={p: ["http://node-a"] for p in tricky_five.ids}),
                 CorpusConfig(name="sample", title="Sample", manifest=sample_parts.manifest,
                              nodes={p: ["http://node-a"] for p in sample_parts.ids})],
        nodes=NodeAccess(token=NODE_TOKEN), allowed_hosts=["front"], **accounts)
    async for client in front_client(settings, {"node-a": node}):
        yield client


async def get(client: httpx.AsyncClient, path: str, **params: Any) -> Any:
    answer = await client.get(path, params=params)
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.parametrize(("q", "syntax", "filters"), [
    ("the", "simple", []), ("house", "simple", ["text_genre~news"]), ('[pos="NN"] [pos="VBZ"] within s', "cqp", []),
])  # fmt: skip
@pytest.mark.slow  # 2.2 s here (make quick leaves it out)
async def test_totals_and_pages_equal_the_single_corpora(multi: httpx.AsyncClient, q: str, syntax: str,
                                                         filters: list[str]) -> None:
    params = {"q": q, "syntax": syntax, "filter": filters}
    alone = [await get(multi, "/api/v1/query", corpus=name, limit=100, **params) for name in (TRICKY, "sample")]
    both = await get(multi, "/api/v1/query", corpus=BOTH, limit=0, **params)
    assert both["total"] == alone[0]["total"] + alone[1]["total"] > 0
    assert [(c["corpus"], c["total"], c["tokens"], c["per_million"]) for c in both["corpora"]] == [
        (a["corpus"], a["total"], a["tokens"], a["per_million"]) for a in alone]
    # the pages run through the first corpus's hits, then the second's: across the seam too
    seam = alone[0]["total"]
    for offset in (0, max(0, seam - 3)):
        page = await get(multi, "/api/v1/query", corpus=BOTH, offset=offset, limit=6, **params)
        expected = []
        for k in range(offset, min(offset + 6, both["total"])):
            if k < seam:
                single = (await get(multi, "/api/v1/query", corpus=TRICKY, offset=k, limit=1, **params))["hits"][0]
            else:
                single = (await get(multi, "/api/v1/query", corpus="sample", offset=k - seam, limit=1,
                                    **params))["hits"][0]
            expected.append((single["corpus"], single["ref"], single["match"]))
        assert [(h["corpus"], h["ref"], h["match"]) for h in page["hits"]] == expected


async def test_frequency_and_distribution_have_a_column_per_corpus(multi: httpx.AsyncClient) -> None:
    params = {"q": '[pos="NN"]', "syntax": "cqp", "by": "lemma"}
    alone = [await get(multi, "/api/v1/frequency", corpus=name, limit=100_000, **params) for name in (TRICKY, "sample")]
    both = await get(multi, "/api/v1/frequency", corpus=BOTH, limit=100_000, **params)
    counts = [{r["value"]: r["frequency"] for r in a["rows"]} for a in alone]
    assert {r["value"]: r["frequency"] for r in both["rows"]} == {
        v: counts[0].get(v, 0) + counts[1].get(v, 0) for v in {*counts[0], *counts[1]}}
    assert all(r["corpora"] == {TRICKY: counts[0].get(r["value"], 0), "sample": counts[1].get(r["value"], 0)}
               for r in both["rows"])
    distribution = await get(multi, "/api/v1/distribution", corpus=BOTH, q="the", by="text_genre")
    single = [{r["value"]: (r["hits"], r["tokens"]) for r in
               (await get(multi, "/api/v1/distribution", corpus=name, q="the", by="text_genre"))["rows"]}
              for name in (TRICKY, "sample")]
    for row in distribution["rows"]:
        for name, values in zip((TRICKY, "sample"), single, strict=True):
            assert (row["corpora"][name]["hits"], row["corpora"][name]["tokens"]) == values.get(row["value"], (0, 0))
        assert row["hits"] == sum(row["corpora"][n]["hits"] for n in (TRICKY, "sample"))
    file = await multi.get("/api/v1/frequency", params={"corpus": BOTH, "format": "csv", **params})
    table = pd.read_csv(io.StringIO(file.text), keep_default_na=False)
    assert list(table.columns)[-4:] == [f"frequency_{TRICKY}", f"per_million_{TRICKY}", "frequency_sample",
                                        "per_million_sample"]  # each corpus's count and its rate (issue 65)
    assert (table["frequency"] == table[f"frequency_{TRICKY}"] + table["frequency_sample"]).all()


async def test_the_export_names_each_lines_corpus(multi: httpx.AsyncClient) -> None:
    total = (await get(multi, "/api/v1/query", corpus=BOTH, q="house", limit=0))["total"]
    answer = await multi.get("/api/v1/export", params={"corpus": BOTH, "q": "house", "format": "tsv",
                                                      "provenance": 1, "limit": 10_000})
    assert answer.status_code == 200, answer.text
    skip = int(answer.text.split("skiprows=")[1].split(";")[0].split(")")[0])
    table = pd.read_csv(io.StringIO(answer.text), sep="\t", skiprows=skip, keep_default_na=False)
    assert len(table) == total and list(table["corpus"].unique()) == [TRICKY, "sample"]
    assert all(ref.split("/ref/")[1].startswith(f"{corpus}/") for ref, corpus in zip(table["ref"], table["corpus"],
                                                                                     strict=True))
    assert '"corpora": ' in answer.text or "# corpora:" in answer.text


@pytest.mark.parametrize(("params", "status", "words"), [
    ({"q": '[upos="NOUN"]', "syntax": "cqp"}, 400, "which corpus sample lacks"),
    ({"q": "house", "filter": "text_date~2007.*"}, 400,
     "corpus sample has no s-attribute with values named 'text_date'"),
    ({"q": "house", "corpus": f"{TRICKY},nope"}, 404, "no corpus 'nope'"),
    ({"q": "house", "corpus": f"{TRICKY},{TRICKY}"}, 400, "name each corpus once"),
    ({"q": "house", "show": "upos"}, 400, "upos"),
])  # fmt: skip
async def test_what_one_corpus_lacks_is_named(multi: httpx.AsyncClient, params: dict[str, Any], status: int,
                                             words: str) -> None:
    answer = await multi.get("/api/v1/query", params={"corpus": BOTH, **params})
    assert answer.status_code == status, answer.text
    assert words in answer.json()["detail"]


async def test_good_examples_over_corpora_with_the_same_rules_and_refused_when_they_differ(
        tricky_five: Partitioned, sample_parts: Partitioned, tmp_path: Path) -> None:
    """sort=gdex over a union uses the members' rules when they agree (the order is then the one the
    union's common words give); members with different [corpora.gdex] rules are refused, named."""

    engines: dict[str, QueryEngine] = {pid: engine(tricky_five.registry, pid) for pid in tricky_five.ids}
    engines |= {pid: engine(sample_parts.registry, pid) for pid in sample_parts.ids}
    node = create_node(NodeSettings(registry=tricky_five.registry, token=NODE_TOKEN), engines=engines)
    accounts: dict[str, Any] = {"database_file": api_account(tmp_path / "accounts.sqlite3")}
    strict = GdexRules(min_length=5, max_length=12)
    settings = FrontendSettings(
        corpora=[CorpusConfig(name=TRICKY, manifest=tricky_five.manifest, gdex=strict,
                              nodes={p: ["http://node-a"] for p in tricky_five.ids}),
                 CorpusConfig(name="sample", manifest=sample_parts.manifest,
                              nodes={p: ["http://node-a"] for p in sample_parts.ids}),
                 CorpusConfig(name="sample2", manifest=sample_parts.manifest, gdex=strict,
                              nodes={p: ["http://node-a"] for p in sample_parts.ids})],
        nodes=NodeAccess(token=NODE_TOKEN), allowed_hosts=["front"], **accounts)
    async for client in front_client(settings, {"node-a": node}):
        refused = await client.get("/api/v1/query", params={"corpus": BOTH, "q": "the", "sort": "gdex"})
        assert refused.status_code == 400
        assert "rules ([corpora.gdex]) differ" in refused.json()["detail"] and "sample" in refused.json()["detail"]
        agreed = await client.get("/api/v1/query", params={"corpus": f"{TRICKY},sample2", "q": "the",
                                                            "sort": "gdex", "limit": 5})
        assert agreed.status_code == 200, agreed.text
        assert agreed.json()["sort"] == "gdex asc" and len(agreed.json()["hits"]) == 5
