"""``GET /api/v1/builder``: a query read into boxes and boxes written as CQP, over HTTP — the CQP the
boxes write finds the hits the same query typed finds, and what is wrong is said where it is."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.frontend.conftest import TRICKY

pytestmark = pytest.mark.anyio

BOXES = {"tokens": [{"tests": [{"attribute": "lemma", "operator": "is", "value": "go"}]},
                    {"tests": [], "min": 0, "max": 2},
                    {"tests": [{"attribute": "word", "operator": "is", "value": "to", "ignore_case": True}]}],
         "within": "s"}


async def test_boxes_become_cqp_and_cqp_becomes_boxes(one: httpx.AsyncClient) -> None:
    written = await one.get("/api/v1/builder", params={"boxes": json.dumps(BOXES), "corpus": TRICKY})
    assert written.status_code == 200, written.text
    cqp = written.json()["cqp"]
    assert cqp == '[lemma="go"] []{0,2} [word="to"%c] within s'
    read = await one.get("/api/v1/builder", params={"q": cqp})
    assert read.json()["fits"] and read.json()["boxes"]["tokens"][2]["tests"][0] == {
        "attribute": "word", "operator": "is", "value": "to", "ignore_case": True}
    typed = await one.get("/api/v1/query", params={"corpus": TRICKY, "q": '[lemma="go"] []{0,2} [word="to"%c] within s',
                                                   "syntax": "cqp", "limit": 0})
    built = await one.get("/api/v1/query", params={"corpus": TRICKY, "q": cqp, "syntax": "cqp", "limit": 0})
    assert typed.json()["total"] == built.json()["total"] > 0
    simple = await one.get("/api/v1/builder", params={"q": "the 0-2 ^house", "syntax": "simple"})
    assert simple.json()["fits"] and simple.json()["cqp"] == '[word="the"] []{0,2} [lemma="house"]'


async def test_what_does_not_fit_and_what_is_wrong(one: httpx.AsyncClient) -> None:
    alternation = await one.get("/api/v1/builder", params={"q": '[pos="JJ"] ([pos="NN"] | [pos="NNS"])'})
    assert alternation.status_code == 200
    assert not alternation.json()["fits"] and "alternatives" in alternation.json()["reason"]
    cases = [
        ({"q": "[pos="}, "query_syntax"),
        ({}, "give q"),
        ({"boxes": "{not json"}, "boxes"),
        ({"boxes": json.dumps({"tokens": [{"tests": [], "min": 3, "max": 1}]})}, "min is more than max"),
        ({"boxes": json.dumps({"tokens": [{"tests": [], "min": 0}]})}, "matches the empty string"),
        ({"boxes": json.dumps(BOXES | {"within": "chapter"}), "corpus": TRICKY}, "no s-attribute 'chapter'"),
        ({"boxes": json.dumps({"tokens": [{"tests": [{"attribute": "colour", "operator": "is", "value": "x"}]}]}),
          "corpus": TRICKY}, "no p-attribute 'colour'"),
        ({"boxes": json.dumps({"tokens": [{"tests": [{"attribute": "word", "operator": "regex", "value": "(a"}]}]})},
         "query_syntax"),
        ({"boxes": json.dumps({"tokens": [{"tests": [{"attribute": "word", "operator": "like", "value": "x"}]}]})},
         "operator"),
    ]
    for params, words in cases:
        answer = await one.get("/api/v1/builder", params=params)
        assert answer.status_code == 400, (params, answer.text)
        assert words in answer.text, (params, answer.text)
