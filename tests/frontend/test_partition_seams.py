"""Through the front end and the nodes: the tricky corpus in five partitions answers a query that looks
past a match's end, closes a region at its start or meets across a cut with the hits of the corpus in
one partition (each node's engine reads the partition's ``neighbours.json``)."""

from __future__ import annotations

import httpx
import pytest

pytestmark = pytest.mark.anyio

CORPUS = "tricky"

QUERIES = [
    '[word="\\."] [:word="[A-Z].*":]',
    '[word="[.!?]"] [:!(pos="NN.*"):]',
    "[] [:lbound(text):]",
    '[pos="\\."] [:_.text_genre="reviews":]',
    '</text> [pos="[A-Z].*"]',
    'MU(meet [pos="\\."] [pos="DT|PRP|NNP"] 1 2)',
    'MU(meet [pos="[A-Z]+"] [pos="\\."] -2 -1)',
]


async def positions(client: httpx.AsyncClient, query: str) -> list[tuple[int, str]]:
    """Each hit's position and first word, as the export lists them."""
    export = await client.get(
        "/api/v1/export", params={"corpus": CORPUS, "q": query, "syntax": "cqp", "format": "tsv", "limit": 10_000}
    )
    assert export.status_code == 200, export.text
    lines = export.text.splitlines()
    header = lines[0].split("\t")
    at, word = header.index("position"), header.index("match")
    return [(int(row[at]), row[word]) for row in (line.split("\t") for line in lines[1:])]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.slow  # 2.9 s here (make quick leaves it out)
async def test_five_partitions_answer_as_one(one: httpx.AsyncClient, five: httpx.AsyncClient, query: str) -> None:
    whole = await positions(one, query)
    assert len(whole) > 5, query
    assert await positions(five, query) == whole
