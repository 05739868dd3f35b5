"""The worked example of a declared analysis (``cowbird.core.analyses.ttr``, docs/architecture.md,
*Adding an analysis*): the type/token ratio of the hits per text, through the front end and the
nodes — computed here from the VRT with plain Python (``tests.support.read_tricky``), the same on
one partition and on five, paged, as files, streamed, refused where a parameter names no attribute,
and a partition's impossible answer refused by the declaration's check."""

from __future__ import annotations

import io
import json
from typing import Any

import httpx
import pandas as pd
import pytest

from cowbird.core.analyses.ttr import TTR, TtrAnswer, TtrParameters, TtrPart
from cowbird.core.operations import ImpossibleAnswer
from tests.support import read_tricky

pytestmark = pytest.mark.anyio

CORPUS = "tricky"


def expected(test: Any, attribute: str) -> dict[str, tuple[int, int]]:
    """Per text id: (tokens, types) of the tokens ``test`` accepts, read from the VRT."""
    seen: dict[str, tuple[int, set[str]]] = {}
    for token in read_tricky():
        if test(token):
            count, kinds = seen.setdefault(token.text["id"], (0, set()))
            kinds.add(getattr(token, attribute))
            seen[token.text["id"]] = (count + 1, kinds)
    return {text: (count, len(kinds)) for text, (count, kinds) in seen.items()}


async def ttr(client: httpx.AsyncClient, **params: Any) -> dict[str, Any]:
    response = await client.get("/api/v1/ttr", params={"corpus": CORPUS, "syntax": "cqp", **params})
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    assert answer["complete"] is True
    return answer


@pytest.mark.parametrize(("query", "attribute", "test"), [
    ("[]", "word", lambda t: True),
    ('[pos="JJ.*"]', "lemma", lambda t: t.pos.startswith("JJ")),
    ('[pos="NN.*"]', "word", lambda t: t.pos.startswith("NN")),
])
async def test_ttr_per_text_is_the_vrts_on_one_partition_and_on_five(
        one: httpx.AsyncClient, five: httpx.AsyncClient, query: str, attribute: str, test: Any) -> None:
    want = expected(test, attribute)
    answers = [await ttr(client, q=query, attribute=attribute, label="text_id") for client in (one, five)]
    for answer in answers:
        got = {row["label"]: (row["tokens"], row["types"]) for row in answer["rows"]}
        assert got == want
        assert answer["rows_total"] == answer["parts_with_hits"] == len(want)
        assert all(row["ttr"] == row["types"] / row["tokens"] for row in answer["rows"])
        assert answer["mean_ttr"] == pytest.approx(sum(t / n for n, t in want.values()) / len(want))
        assert [row["start"] for row in answer["rows"]] == sorted(row["start"] for row in answer["rows"])
    assert [r["start"] for r in answers[0]["rows"]] == [r["start"] for r in answers[1]["rows"]]
    assert len(answers[1]["partitions"]) == 5


async def test_the_tokens_of_longer_hits_count_once_each(one: httpx.AsyncClient, five: httpx.AsyncClient) -> None:
    """Hits of several tokens: each token of each hit, once where hits overlap (``[] []`` covers every
    token twice: each text's own ratio, as ``[]``); adjectives before nouns in one sentence: the tokens
    of those pairs, read from the VRT."""
    tokens = read_tricky()
    pairs = {k for k, (a, b) in enumerate(zip(tokens, tokens[1:], strict=False))
             if a.pos.startswith("JJ") and b.pos.startswith("NN") and a.s == b.s}
    covered = pairs | {k + 1 for k in pairs}
    seen: dict[str, tuple[int, set[str]]] = {}
    for k in sorted(covered):
        count, kinds = seen.get(tokens[k].text["id"], (0, set()))
        seen[tokens[k].text["id"]] = (count + 1, kinds | {tokens[k].word})
    adjective_nouns = {text: (count, len(kinds)) for text, (count, kinds) in seen.items()}
    for query, want in (("[] []", expected(lambda t: True, "word")),
                        ('[pos="JJ.*"] [pos="NN.*"] within s', adjective_nouns)):
        for client in (one, five):
            answer = await ttr(client, q=query, label="text_id")
            assert {row["label"]: (row["tokens"], row["types"]) for row in answer["rows"]} == want, query


async def test_the_rows_are_ordered_paged_and_cut_by_min_size(five: httpx.AsyncClient) -> None:
    want = expected(lambda t: True, "word")
    by_ttr = await ttr(five, q="[]", label="text_id", order="ttr", min_size=300)
    kept = {text: (n, t) for text, (n, t) in want.items() if n >= 300}
    assert [row["label"] for row in by_ttr["rows"]] == sorted(kept, key=lambda text: kept[text][1] / kept[text][0])
    assert by_ttr["parts_with_hits"] == len(want) and by_ttr["rows_total"] == len(kept)
    page = await ttr(five, q="[]", label="text_id", order="tokens", offset=2, limit=3)
    most = sorted(want, key=lambda text: -want[text][0])
    assert [row["label"] for row in page["rows"]] == most[2:5] and page["offset"] == 2
    assert page["rows_total"] == len(want)


async def test_the_whole_table_as_a_file_with_its_metadata(five: httpx.AsyncClient) -> None:
    want = expected(lambda t: t.pos.startswith("JJ"), "lemma")
    response = await five.get("/api/v1/ttr", params={"corpus": CORPUS, "q": '[pos="JJ.*"]', "syntax": "cqp",
                                                      "attribute": "lemma", "label": "text_id", "format": "tsv",
                                                      "provenance": 1})
    assert response.status_code == 200, response.text
    text = response.text
    head = [line for line in text.splitlines() if line.startswith("#")]
    assert {'# analysis: "ttr"', '# attribute: "lemma"', '# label: "text_id"', "# complete: true"} <= set(head)
    mean = (await ttr(five, q='[pos="JJ.*"]', attribute="lemma"))["mean_ttr"]
    assert f"# mean_ttr: {json.dumps(mean)}" in head
    table = pd.read_csv(io.StringIO(text), sep="\t", skiprows=len(head), keep_default_na=False)
    assert list(table.columns) == ["start", "end", "label", "tokens", "types", "ttr"]
    assert dict(zip(table["label"], zip(table["tokens"], table["types"], strict=True), strict=True)) == want
    sheet = await five.get("/api/v1/ttr", params={"corpus": CORPUS, "q": "[]", "syntax": "cqp", "format": "xlsx"})
    assert len(pd.read_excel(io.BytesIO(sheet.content), sheet_name="ttr")) == len(expected(lambda t: True, "word"))


async def test_streamed_each_partition_then_the_result(five: httpx.AsyncClient) -> None:
    response = await five.get("/api/v1/ttr", params={"corpus": CORPUS, "q": "[]", "syntax": "cqp", "stream": 1})
    events = [json.loads(line) for line in response.text.splitlines()]
    assert [e["event"] for e in events] == ["started"] + ["partition"] * 5 + ["result"]
    assert events[-1]["rows_total"] == len(expected(lambda t: True, "word"))


@pytest.mark.parametrize(("params", "said"), [
    ({"attribute": "colour"}, "attribute=colour: corpus tricky has no p-attribute 'colour'"),
    ({"parts": "chapter"}, "parts=chapter: corpus tricky has no s-attribute 'chapter'"),
    ({"label": "text"}, "label=text: corpus tricky has no s-attribute with values named 'text'"),
    ({"order": "random"}, "order"),
    ({"min_size": 0}, "min_size"),
])
async def test_a_parameter_naming_nothing_is_refused_saying_which(five: httpx.AsyncClient, params: dict[str, Any],
                                                                  said: str) -> None:
    response = await five.get("/api/v1/ttr", params={"corpus": CORPUS, "q": "[]", "syntax": "cqp", **params})
    assert response.status_code in (400, 422), response.text
    assert said in response.json()["detail"]


def test_the_declarations_check_refuses_an_impossible_answer() -> None:
    operation = TTR.operation
    request = TTR.request(TtrParameters(), partition="p0", query="[]")
    honest = TtrPart(start=0, end=9, label=None, tokens=10, types=7)

    def answer(*parts: TtrPart) -> Any:
        return operation.response(partition="p0", query="[]", total=10, elapsed_ms=1.0,
                                  **dict(TtrAnswer(parts=list(parts), truncated=False)))

    operation.check(request, answer(honest), 100)
    for parts, said in [((honest.model_copy(update={"types": 11}),), "more types than tokens"),
                        ((honest.model_copy(update={"end": 100}),), "outside the partition"),
                        ((honest, honest), "out of order or twice")]:
        with pytest.raises(ImpossibleAnswer, match=said):
            operation.check(request, answer(*parts), 100)


def test_a_declaration_may_not_take_the_names_every_analysis_has() -> None:
    """A parameter or a result field named as one of every analysis's (``limit``, ``total``) is refused
    when the table is made, naming it, instead of being shadowed or clashing in the answer."""
    from pydantic import Field, create_model

    from cowbird.core.declared import HitAnalysis
    from cowbird.frontend.operations import _declared

    limited = create_model("LimitedParameters", __base__=TtrParameters, limit=(int, Field(3)))
    totalled = create_model("TotalledResult", __base__=TTR.result, total=(int, Field(0)))
    for parameters, result, said in ((limited, TTR.result, r"parameters \['limit'\]"),
                                     (TtrParameters, totalled, r"result's fields \['total'\]")):
        with pytest.raises(TypeError, match=said):
            _declared(HitAnalysis("bad", "Bad", "A bad one.", "as ttr", parameters, TtrAnswer, result, TTR.check,
                                  TTR.merge))
