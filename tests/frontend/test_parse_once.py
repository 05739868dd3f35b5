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
    ({"q": "the 0-1 house"}, ["the 0-1 house"]),  # simple: parsed once, straight into the CQP AST
    ({"q": '[word="house"]', "syntax": "cqp", "ignore_case": "true", "filter": "text_genre!~x"},
     []),  # CQP with the case switch and a filter: parsed by the first request, kept since
])
@pytest.mark.slow  # 2.0 s here (make quick leaves it out)
async def test_a_preview_parses_the_query_once_per_node(client: httpx.AsyncClient, parses: list[str],
                                                        params: dict[str, str], front_end_parses: list[str]) -> None:
    await _get(client, "/api/v1/query", corpus="sample", **params)  # the nodes see the text a first time
    parses.clear()
    body = await _get(client, "/api/v1/query", corpus="sample", **params, offset="1")
    assert body["complete"] is True and body["total"] > 1
    # the front end parses what the user wrote once (CQP it parsed before: not again); the nodes (two
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
