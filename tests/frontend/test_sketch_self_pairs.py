"""A symmetric relation's counts and its concordance links agree (``GET /api/v1/sketch``): each
instance of *and/or* counts once for each of its two words — once only for *time and time*, whose
link finds one hit — so that every row's link finds exactly ``f`` hits. On six sentences written
here (counted by hand) and on EWT, where real CQP 3.4.16 runs each link's query as well. Also: the
front end starts with a grammar whose query can look past its sentence, and logs the warning."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from cowbird.frontend import CorpusConfig
from cowbird.frontend.corpora import load_corpus
from cowbird.store import EncodeOptions, Encoder, parse_s_declaration
from tests.frontend.conftest import Partitioned, ewt_client
from tests.realcqp import real_cqp

pytestmark = pytest.mark.anyio

SENTENCES = [
    "time/NN and/CC time/NN again/RB",
    "time/NN or/CC money/NN",
    "money/NN and/CC time/NN",
    "house/NN and/CC home/NN",
    "home/NN and/CC house/NN",
    "good/JJ and/CC good/JJ",
]
"""word/tag; the lemma is the word."""

EXPECTED = {
    "time": {"time": 1, "money": 2},
    "money": {"time": 2},
    "house": {"home": 2},
    "home": {"house": 2},
    "good": {"good": 1},
}
"""Each headword's and/or rows, counted by hand from :data:`SENTENCES`: *time and time* is one
instance of *time* with *time*; *time or money* and *money and time* count once for each word."""


@pytest.fixture(scope="module")
def pairs(tmp_path_factory: pytest.TempPathFactory) -> Partitioned:
    base = tmp_path_factory.mktemp("self-pairs")
    lines = ['<text id="t">']
    for sentence in SENTENCES:
        lines += ["<s>", *(f"{w}\t{t}\t{w}" for w, t in (token.split("/") for token in sentence.split())), "</s>"]
    (base / "pairs.vrt").write_text("\n".join([*lines, "</text>"]) + "\n", encoding="utf-8")
    options = EncodeOptions(
        input=base / "pairs.vrt", data_dir=base / "data", registry_file=base / "registry" / "pairs",
        p_attributes=["word", "pos", "lemma"], s_attributes=[parse_s_declaration("text:0+id"),
                                                             parse_s_declaration("s:0")],
        charset="utf8", xml=True, skip_blank=True, strip_blanks=True, partition_tokens=1_000,
    )  # fmt: skip
    result = Encoder(options).run()
    assert result.manifest is not None
    return Partitioned(base / "registry", result.manifest, [p.id for p in result.partitions])


@pytest.fixture
async def pairs_client(pairs: Partitioned) -> AsyncIterator[httpx.AsyncClient]:
    async for c in ewt_client(pairs, "pairs", sketch_grammar="penn"):
        yield c


async def and_or(client: httpx.AsyncClient, corpus: str, headword: str) -> dict[str, Any]:
    answer = await client.get(
        "/api/v1/sketch", params={"corpus": corpus, "headword": headword, "relation": "and/or", "limit": 1000}
    )
    assert answer.status_code == 200, answer.text
    [relation] = answer.json()["relations"]
    assert isinstance(relation, dict)
    return relation


async def link_hits(client: httpx.AsyncClient, corpus: str, row: dict[str, Any]) -> tuple[str, int]:
    """The row's concordance link's CQP and the hits the search finds with it."""
    [query] = parse_qs(urlsplit(row["concordance"]).query)["q"]
    answer = await client.get("/api/v1/query", params={"corpus": corpus, "q": query, "syntax": "cqp", "limit": 0})
    assert answer.status_code == 200, answer.text
    total = answer.json()["total"]
    assert isinstance(total, int)
    return query, total


async def test_every_and_or_row_links_to_exactly_its_f_hits(pairs_client: httpx.AsyncClient) -> None:
    for headword, rows in EXPECTED.items():
        relation = await and_or(pairs_client, "pairs", headword)
        assert {row["value"]: row["f"] for row in relation["rows"]} == rows, headword
        assert relation["head_total"] == sum(rows.values())
        for row in relation["rows"]:
            _, total = await link_hits(pairs_client, "pairs", row)
            assert total == row["f"], (headword, row)
    # the relation's rows summed: 6 pairs of positions, 4 of two lemmas (in both words' rows), 2 of one lemma
    assert (await and_or(pairs_client, "pairs", "time"))["instances"] == 4 * 2 + 2


@pytest.fixture
async def ewt(ewt_parts: Partitioned) -> AsyncIterator[httpx.AsyncClient]:
    async for c in ewt_client(ewt_parts, "ewt", sketch_grammar="penn"):
        yield c


@pytest.mark.slow  # 2.0 s here (make quick leaves it out)
async def test_on_ewt_a_self_pairs_f_is_the_hits_its_link_finds_in_real_cqp(ewt: httpx.AsyncClient) -> None:
    """EWT in two partitions: *time and time*, *PaineWebber and PaineWebber*, *more and more* — each
    self-pair row's f, and every other and/or row of these words, equal the hits of its link on the
    search page and the matches real CQP finds for the link's query over the whole corpus."""
    judge = real_cqp(timeout=120)
    try:
        selves = {}
        for headword in ("time", "PaineWebber", "more", "house"):
            relation = await and_or(ewt, "ewt", headword)
            for row in relation["rows"]:
                query, total = await link_hits(ewt, "ewt", row)
                assert query.startswith("(?traditional) ")
                cqp = judge.query(query.removeprefix("(?traditional) "), strategy="traditional")
                assert isinstance(cqp, list), cqp
                assert row["f"] == total == len(cqp), (headword, row["value"], row["f"], total, len(cqp))
                if row["value"] == headword:
                    selves[headword] = row["f"]
        assert selves == {"time": 1, "PaineWebber": 3, "more": 2}
    finally:
        judge.close()


def test_the_front_end_logs_a_grammar_that_looks_past_the_sentence(
    pairs: Partitioned, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    grammar = tmp_path / "bare.wsdef"
    grammar.write_text('*STRUCTLIMIT s\n=noun_modifier\n  2:[pos="NN"] 1:[pos="NN"] [:pos!="NN":]\n', encoding="utf-8")
    config = CorpusConfig(
        name="pairs", manifest=pairs.manifest, nodes={p: ["http://n"] for p in pairs.ids}, sketch_grammar=str(grammar)
    )
    with caplog.at_level(logging.WARNING, logger="cowbird.frontend"):
        entry = load_corpus(config)
    assert entry.grammar is not None and [r.name for r in entry.grammar.relations] == ["noun_modifier"]
    [record] = [r for r in caplog.records if r.name == "cowbird.frontend"]
    assert record.getMessage() == (
        f'corpus pairs: sketch_grammar: {grammar}:3: relation noun_modifier: the lookahead [:pos!="NN":] can end '
        "the match, so it reads the token after the match: the first token of the next s when the match ends its "
        's; write ( [:pos!="NN":] | </s> ) for the s\'s end to answer there'
    )
