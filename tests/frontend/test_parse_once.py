"""A request's query is parsed once on the front end, and once on each node however many calls of
the search reach it (the count, the page of hits, the analyses): counted at the parser itself,
Lark's ``parse``, which every parse of the simple language and of CQP goes through. ``parse_cqp``
keeps the last queries it parsed, per process: here the front end and the nodes run in one
process, so a CQP text is parsed once in all (on separate machines: once on each)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from lark import Lark

from cowbird.query import parse_cqp
from tests.frontend.conftest import TRICKY as CORPUS
from tests.frontend.test_sketches import sketch_five  # noqa: F401 (the fixture)
from tests.support import JsonObject

pytestmark = pytest.mark.anyio


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The texts Lark parses while the test runs (the real parser runs: this only notes them)."""
    seen: list[str] = []
    real = Lark.parse

    def noted(self: Lark, text: str, *args: Any, **kwargs: Any) -> Any:
        seen.append(text)
        return real(self, text, *args, **kwargs)

    monkeypatch.setattr(Lark, "parse", noted)
    parse_cqp.cache_clear()  # what other tests parsed in this process is not known to this one
    yield seen


async def _get(client: httpx.AsyncClient, path: str, **params: str) -> JsonObject:
    answer = await client.get(path, params=params)
    assert answer.status_code == 200, answer.text
    body: JsonObject = answer.json()
    return body


@pytest.mark.parametrize(("params", "front_end_parses"), [
    # the front end checks a query for a corpus once and keeps it (corpora.Kept.checked): the second
    # request parses nothing, simple or CQP, with the case switch and a filter or not
    ({"q": "the 0-1 house"}, []),  # simple: parsed by the first request, straight into the CQP AST
    ({"q": '[word="house"]', "syntax": "cqp", "ignore_case": "true", "filter": "text_genre!~x"}, []),
])
@pytest.mark.slow  # 2.0 s here (make quick leaves it out)
async def test_a_preview_parses_the_query_once_per_node(client: httpx.AsyncClient, parses: list[str],
                                                        params: dict[str, str], front_end_parses: list[str]) -> None:
    await _get(client, "/api/v1/query", corpus="sample", **params)  # the nodes see the text a first time
    parses.clear()
    body = await _get(client, "/api/v1/query", corpus="sample", **params, offset="1")
    assert body["complete"] is True and body["total"] > 1
    # the front end parsed what the user wrote on the first request; the nodes (two
    # here, for three partitions, each asked to count and then for its hits) parse the CQP sent once
    # each — on this second request not at all: they know the text already
    assert parses == front_end_parses


async def test_a_new_query_is_parsed_once_by_each_node(client: httpx.AsyncClient, parses: list[str]) -> None:
    query = '[lemma="house"] [pos="N.*"]?'  # already canonical: the front end sends it as it is
    body = await _get(client, "/api/v1/query", corpus="sample", q=query, syntax="cqp")
    assert body["total"] > 0 and body["cqp"] == query
    # once in all: the front end parses it, and node-a and node-b (in this process) find it parsed, for
    # the count and the hits of three partitions alike
    assert parses == [query]
    parses.clear()
    frequency = await _get(client, "/api/v1/frequency", corpus="sample", q=query, syntax="cqp", by="word")
    assert frequency["complete"] is True
    assert parses == []  # the analysis's request: the text is known to the front end and the nodes


async def test_a_warm_word_sketch_checks_no_query_again(sketch_five: httpx.AsyncClient,  # noqa: F811
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A word sketch runs its grammar's relation queries (23 in the Penn grammar) with the subcorpus's
    filters, and links each collocate to its instances: the queries are checked once for the corpus
    (``corpora.Kept.checked``) and each link is made from the checked query's AST — asked again,
    the sketch builds, parses and reads back no query at all, only writes the links' CQP."""
    from cowbird.frontend import querying
    from cowbird.query import cqp

    asked = {"corpus": CORPUS, "headword": "house", "filter": "text_genre!~nosuch"}
    first = await sketch_five.get("/api/v1/sketch", params=asked)
    assert first.status_code == 200, first.text
    built: list[str] = []
    parsed: list[str] = []
    real_built, real_parse = querying._built, cqp.parse_cqp

    def noted_built(q: str, *args: Any, **kwargs: Any) -> Any:
        built.append(q)
        return real_built(q, *args, **kwargs)

    def noted_parse(text: str) -> Any:
        parsed.append(text)
        return real_parse(text)

    monkeypatch.setattr(querying, "_built", noted_built)
    monkeypatch.setattr(querying, "parse_cqp", noted_parse)
    again = await sketch_five.get("/api/v1/sketch", params=asked)
    assert again.status_code == 200 and again.json()["relations"] == first.json()["relations"]
    links = [row["concordance"] for r in again.json()["relations"] for row in r["rows"]]
    assert len(links) > 20 and all(link for link in links)
    assert built == [] and parsed == []
