"""Good examples first (``sort=gdex``) on ``tests/fixtures/tricky.vrt`` in one partition and in five:
every hit's place equals the order the rules give when written out one by one in plain Python
(``cowbird.core.gdex.score``) over the sentences read from the VRT, with the corpus's common words
counted there too — the same on any number of partitions, in previews, at any offset and in exports."""

from __future__ import annotations

import io
from collections import Counter
from typing import Any

import httpx
import pandas as pd
import pytest

from cowbird.core import gdex
from tests.frontend.conftest import TRICKY
from tests.support import read_tricky

pytestmark = pytest.mark.anyio


def expected_order(test: Any) -> list[tuple[int, int]]:
    """(key, position) of every one-token hit passing ``test``, best first, ties in corpus order (the
    default rules)."""
    rules = gdex.GdexRules()
    tokens = read_tricky()
    frequency = Counter(t.word for t in tokens)
    top = sorted(frequency.items(), key=lambda item: (-item[1], item[0]))[: rules.common_words]
    common = frozenset(word.lower() for word, _ in top)
    sentences: dict[int, list[int]] = {}
    for i, token in enumerate(tokens):
        sentences.setdefault(token.s, []).append(i)
    keyed = []
    for i, token in enumerate(tokens):
        if test(token):
            sentence = sentences[token.s]
            words = [tokens[j].word for j in sentence]
            at = i - sentence[0]
            keyed.append((gdex.sort_key(gdex.score(words, at, at, rules, common)), i))
    return sorted(keyed)


@pytest.mark.parametrize(("q", "test"), [
    ('[pos="NN"]', lambda t: t.pos == "NN"),
    ('[lemma="go"]', lambda t: t.lemma == "go"),
    ('[pos="CD"]', lambda t: t.pos == "CD"),
    ('[word="\\("]', lambda t: t.word == "("),
])  # fmt: skip
@pytest.mark.slow  # 8.5 s here (make quick leaves it out)
async def test_the_order_is_the_rules_order_on_any_partitions(one: httpx.AsyncClient, five: httpx.AsyncClient, q: str,
                                                              test: Any) -> None:
    expected = expected_order(test)
    assert len({key for key, _ in expected}) > 3 or len(expected) < 20  # the scores differ: the order says something
    for client in (one, five):
        positions: list[int] = []
        for offset in range(0, len(expected), 100):
            answer = await client.get("/api/v1/query", params={"corpus": TRICKY, "q": q, "syntax": "cqp",
                                                               "sort": "gdex", "offset": offset, "limit": 100})
            assert answer.status_code == 200, answer.text
            body = answer.json()
            assert body["sort"] == "gdex asc" and body["sort_cqp"] == "gdex asc"
            positions += [hit["position"] for hit in body["hits"]]
        assert positions == [position for _, position in expected]


@pytest.mark.slow  # 3.2 s here (make quick leaves it out)
async def test_worst_first_and_the_export(five: httpx.AsyncClient) -> None:
    expected = expected_order(lambda t: t.pos == "JJ")
    worst = sorted(expected, key=lambda item: (-item[0], item[1]))
    answer = await five.get("/api/v1/query", params={"corpus": TRICKY, "q": '[pos="JJ"]', "syntax": "cqp",
                                                     "sort": "gdex", "direction": "desc", "limit": 50})
    assert [hit["position"] for hit in answer.json()["hits"]] == [p for _, p in worst[:50]]
    exported = await five.get("/api/v1/export", params={"corpus": TRICKY, "q": '[pos="JJ"]', "syntax": "cqp",
                                                        "sort": "gdex", "format": "csv", "limit": 10_000})
    assert exported.status_code == 200, exported.text
    table = pd.read_csv(io.StringIO(exported.text), keep_default_na=False)
    assert list(table["position"]) == [p for _, p in expected]


async def test_refusals(five: httpx.AsyncClient) -> None:
    both = await five.get("/api/v1/query", params={"corpus": TRICKY, "q": "go", "sort": "gdex,match.word"})
    assert both.status_code == 400 and "gdex orders the hits alone" in both.text
    sample = await five.get("/api/v1/query", params={"corpus": TRICKY, "q": "go", "sort": "gdex", "sample": 5})
    assert sample.status_code == 400 and "sort and sample" in sample.text


def test_the_rules_one_by_one() -> None:
    rules, common = gdex.GdexRules(), frozenset({"the", "house", "is", "old", "a", "we", "saw"})
    good = "The house is old and we saw a garden there today , really .".split()
    assert gdex.score(good, 1, 1, rules, frozenset(good) | common) == 1.0
    values = {  # each rule broken alone: the score loses that rule's weight (of 9)
        "length": (["The", "house", "is", "old", "."], 1, 1, 2 * (1 - 5 / 10)),
        "whole": ([t.lower() for t in good], 1, 1, 1.0),
        "edge": (good, 0, 0, 1.0),
        "urls": (good[:-1] + ["www.example.com", "."], 1, 1, 1.0),  # (punctuation, not a word: nothing else)
        "brackets": (good[:-1] + ["(", "."], 1, 1, 1.0),
        "rare": (good[:-1] + ["zymurgy", "."], 1, 1, 2 * (1 / 3)),  # one rare word of max_rare 3
        "numbers": (good[:-1] + ["42", "."], 1, 1, 1 / 3),
    }
    for name, (sentence, start, end, lost) in values.items():
        expected = 1 - lost / 9
        assert gdex.score(sentence, start, end, rules, frozenset(good) | common) == pytest.approx(expected), name
