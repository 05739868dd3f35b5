"""Relation labels over HTTP (issue 65): ``/api/v1/sketch`` and ``/api/v1/sketchdiff`` give each
relation its grammar's ``*LABEL`` beside its id, with the headword (both words, in a difference)
written in, and ``/api/v1/corpora`` lists the labels of the corpus's relations; over
``tests/fixtures/tricky.vrt`` with the ``penn`` grammar and with a grammar of one's own."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from cowbird.query.sketch_grammar import load_grammar
from tests.frontend.conftest import TRICKY as CORPUS
from tests.frontend.conftest import Partitioned, ewt_client

pytestmark = pytest.mark.anyio

MINE = """\
*STRUCTLIMIT s
*DEFAULTATTR pos
*DUAL
=modifier/modifies
*LABEL adjectives before "%w"
*LABEL nouns after the adjective "%w"
    2:"JJ.*" 1:"NN.*"
=next_noun
    1:"NN.*" 2:"NN.*"
"""


@pytest.fixture
async def penn(tricky_one: Partitioned) -> AsyncIterator[httpx.AsyncClient]:
    async for c in ewt_client(tricky_one, CORPUS, sketch_grammar="penn"):
        yield c


@pytest.fixture
async def mine(tricky_one: Partitioned, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    grammar = tmp_path / "mine.wsdef"
    grammar.write_text(MINE, encoding="utf-8")
    async for c in ewt_client(tricky_one, CORPUS, sketch_grammar=str(grammar)):
        yield c


async def got(client: httpx.AsyncClient, path: str, **params: str) -> dict[str, object]:
    answer = await client.get(path, params={"corpus": CORPUS, **params})
    assert answer.status_code == 200, answer.text
    body: dict[str, object] = answer.json()
    return body


async def test_a_sketch_names_each_relation_by_its_label_beside_its_id(penn: httpx.AsyncClient) -> None:
    found = await got(penn, "/api/v1/sketch", headword="house")
    relations = found["relations"]
    assert isinstance(relations, list)
    labels = {r["name"]: r["label"] for r in relations}
    assert labels["modifier"] == 'modifiers of "house"'
    assert labels["object_of"] == 'verbs with "house" as object'
    assert labels["pp_in"] == '"house" in …'
    assert labels["and/or"] == '"house" and/or …'
    expected = {view.name: view.shown("house") for view in load_grammar("penn").views}
    assert labels == expected and len(set(labels.values())) == len(labels) == 19
    one = (await got(penn, "/api/v1/sketch", headword="house", relation="object_of"))["relations"]
    assert isinstance(one, list)
    assert [(r["name"], r["label"]) for r in one] == [("object_of", 'verbs with "house" as object')]


async def test_a_sketch_difference_writes_both_words_into_the_label(penn: httpx.AsyncClient) -> None:
    found = await got(penn, "/api/v1/sketchdiff", headword="house", other="market")
    relations = found["relations"]
    assert isinstance(relations, list)
    labels = {r["name"]: r["label"] for r in relations}
    assert labels["modifier"] == 'modifiers of "house/market"'
    assert labels["object_of"] == 'verbs with "house/market" as object'


async def test_the_corpus_listing_gives_the_labels_of_its_relations(penn: httpx.AsyncClient) -> None:
    listing = await penn.get("/api/v1/corpora")
    assert listing.status_code == 200, listing.text
    [corpus] = [c for c in listing.json()["data"] if c["name"] == CORPUS]
    assert corpus["sketch_labels"]["object_of"] == 'verbs with "%w" as object'
    assert set(corpus["sketch_labels"]) == set(corpus["sketches"])


async def test_a_relation_without_a_label_is_named_by_its_id(mine: httpx.AsyncClient) -> None:
    found = await got(mine, "/api/v1/sketch", headword="house")
    relations = found["relations"]
    assert isinstance(relations, list)
    assert [(r["name"], r["label"]) for r in relations] == [
        ("modifier", 'adjectives before "house"'),
        ("modifies", 'nouns after the adjective "house"'),
        ("next_noun", "next_noun"),
    ]
    listing = (await mine.get("/api/v1/corpora")).json()["data"]
    [corpus] = [c for c in listing if c["name"] == CORPUS]
    assert corpus["sketch_labels"] == {
        "modifier": 'adjectives before "%w"',
        "modifies": 'nouns after the adjective "%w"',
    }
