"""Sorting on up to three keys, each with its own direction and folding, exact over every partition:
the order the API gives (pages deep in it, and the export) against the order computed here from the
hits' own tokens — the first key, its ties by the second, theirs by the third, then corpus order."""

from __future__ import annotations

import csv
import functools
import io

import httpx
import pytest

from tests.frontend.conftest import API_TOKEN

pytestmark = pytest.mark.anyio

QUERY = '[pos="P1"]'  # the synthetic corpus: over 10,000 hits in its three partitions


async def tokens_around(client: httpx.AsyncClient) -> list[dict[str, object]]:
    """Every hit in corpus order with the token before and after it (word/pos), as the export gives them."""
    answer = await client.get("/api/v1/export", params={"corpus": "big", "q": QUERY, "syntax": "cqp", "context": "1",
                                                        "inline": "pos", "format": "tsv", "limit": 100_000,
                                                        "token": API_TOKEN})
    assert answer.status_code == 200, answer.text
    rows = list(csv.DictReader(io.StringIO(answer.text), delimiter="\t"))
    hits = []
    for row in rows:
        left = row["left"].split(" ")[-1].split("/") if row["left"] else None
        right = row["right"].split(" ")[0].split("/") if row["right"] else None
        hits.append({"position": int(row["position"]), "match": row["match"].split("/"),
                     "left1": left, "right1": right})
    return hits


def expected(hits: list[dict[str, object]], levels: list[tuple[str, int, bool, bool]]) -> list[int]:
    """Positions sorted on (side, attribute index, descending, fold case) levels: a hit without the
    token (at a partition's edge) last on that level, then the values; corpus order breaks ties."""

    def compare(a: dict[str, object], b: dict[str, object]) -> int:
        for side, index, descending, fold in levels:
            x, y = a[side], b[side]
            if x == y:
                continue
            if x is None or y is None:
                return 1 if x is None else -1
            assert isinstance(x, list) and isinstance(y, list)
            u, v = (x[index].lower(), y[index].lower()) if fold else (x[index], y[index])
            if fold and u == v:
                u, v = x[index], y[index]  # plain values break folded ties
            if u == v:
                continue
            smaller = -1 if u < v else 1
            return -smaller if descending else smaller
        return -1 if int(str(a["position"])) < int(str(b["position"])) else 1

    return [int(str(h["position"])) for h in sorted(hits, key=functools.cmp_to_key(compare))]


@pytest.mark.slow
@pytest.mark.parametrize(("sort", "direction", "levels"), [
    ("right1.word,left1.pos,match.word", "asc,desc,asc", [("right1", 0, False, False), ("left1", 1, True, False),
                                                          ("match", 0, False, False)]),
    ("left1.pos,right1.pos%c", "desc", [("left1", 1, True, False), ("right1", 1, True, True)]),
    ("right1.pos", "asc", [("right1", 1, False, False)]),
])
async def test_hits_sort_on_several_keys_each_in_its_direction(client: httpx.AsyncClient, sort: str, direction: str,
                                                               levels: list[tuple[str, int, bool, bool]]) -> None:
    hits = await tokens_around(client)
    assert len(hits) > 10_000
    order = expected(hits, levels)
    asked = {"corpus": "big", "q": QUERY, "syntax": "cqp", "sort": sort, "direction": direction}
    for offset in (0, 100, len(hits) - 50):  # the first page, a deeper one and the last
        page = (await client.get("/api/v1/query", params={**asked, "offset": offset, "limit": 100})).json()
        assert [h["position"] for h in page["hits"]] == order[offset:offset + 100], (sort, offset)
        assert page["sort"] == f"{sort} {direction}" and page["sort_cqp"]  # the answer says which order it is in
    export = await client.get("/api/v1/export", params={**asked, "format": "tsv", "provenance": "1", "limit": 100_000,
                                                        "token": API_TOKEN})
    text = export.text
    skip = int(text.split("skiprows=")[1].split(";")[0]) if "skiprows=" in text else 0
    rows = list(csv.DictReader(io.StringIO("".join(text.splitlines(keepends=True)[skip:])), delimiter="\t"))
    assert [int(r["position"]) for r in rows] == order
    assert f"sorted by {sort} {direction}" in text  # the metadata block says which order the file is in


async def test_what_a_sort_cannot_be_is_said(client: httpx.AsyncClient) -> None:
    base = {"corpus": "big", "q": QUERY, "syntax": "cqp"}
    cases = [({"sort": "right1.word,left1.pos,match.word,right2.word"}, "at most 3 keys"),
             ({"sort": "right1.word,random"}, "random orders the hits alone"),
             ({"sort": "right1.word,left1.pos", "direction": "asc,desc,asc"}, "3 directions for the 2 keys"),
             ({"sort": "right1.word", "direction": "up"}, "direction=up: give asc or desc"),
             ({"sort": "right1.word,left1.tag"}, "corpus big has no p-attribute 'tag'")]
    for params, detail in cases:
        answer = await client.get("/api/v1/query", params={**base, **params})
        assert answer.status_code == 400 and detail in answer.json()["detail"], (params, answer.text)
