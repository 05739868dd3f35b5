"""Frequency breakdowns, distributions, collocations and sorted hits through the front end, judged
by real CQP (``count``, ``group``, ``sort``) and cwb-ccc (collocates), and exact across partitions:
the in-repo corpus ``tests/fixtures/tricky.vrt`` (12,762 tokens in EWT's shape, with non-ASCII
words, formulas and empty metadata) in one partition and in five give the same answers. The judges
read the one-partition encoding (cowbird writes CWB's format), so only real CQP and cwb-ccc are
needed, not ``../shared``. (Queries of several tokens say ``within s``: without it a match may run
from one text into the next, which partitions, cut between texts, never allow — the query's hits
themselves would differ.)

Counts hard-coded below were taken from ``tests.support.read_tricky`` (the VRT read by plain Python,
no cowbird) and are checked against it by ``test_the_expected_counts_are_those_of_the_vrt``."""

from __future__ import annotations

import io
import json
import math
import tempfile
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import numpy as np
import pandas as pd
import pytest

from tests.frontend.conftest import API_TOKEN, Partitioned
from tests.realcqp import RealCqp
from tests.support import (
    TRICKY_SENTENCES,
    TRICKY_TOKENS,
    Params,
    read_tricky,
    reference_cqp,
    unavailable,
)

pytestmark = pytest.mark.anyio


CORPUS = "tricky"
GENRES = {"blog", "email", "forum", "news", "reviews", ""}
"""The texts' genres (one text has none): ``{t.text["genre"] for t in read_tricky()}``."""
JJ_NN_WITHIN_S = 842
"""Hits of ``[pos="JJ"] [pos="NN.*"] within s``: adjacent tokens of one sentence, the first tagged JJ,
the second NN, NNS, NNP or NNPS."""
GO = 351
"""Hits of ``[lemma="go"]``."""
GO_COLLOCATES = 100
"""Lemmas at least twice within 5 tokens of a go in its text (the default window, min_freq 2): more than
100 (the default limit), so a default answer has 100 rows."""


@pytest.fixture(scope="module")
def cqp(tricky_one: Partitioned) -> Iterator[RealCqp]:
    """Real CQP on the one-partition encoding (skips, or fails under CI, without real CQP)."""
    judge = RealCqp(reference_cqp(), tricky_one.registry, tricky_one.ids[0].upper())
    yield judge
    judge.close()


def test_the_expected_counts_are_those_of_the_vrt() -> None:
    tokens = read_tricky()
    assert len(tokens) == TRICKY_TOKENS and len({(t.text["id"], t.s) for t in tokens}) == TRICKY_SENTENCES
    assert {t.text["genre"] for t in tokens} == GENRES
    nouns = ("NN", "NNS", "NNP", "NNPS")
    pairs = zip(tokens, tokens[1:], strict=False)
    assert sum(a.pos == "JJ" and b.pos in nouns and a.s == b.s for a, b in pairs) == JJ_NN_WITHIN_S
    go = [k for k, t in enumerate(tokens) if t.lemma == "go"]
    assert len(go) == GO
    near: dict[str, int] = {}
    for k in go:
        for j in range(k - 5, k + 6):
            if j != k and 0 <= j < len(tokens) and tokens[j].text is tokens[k].text:
                near[tokens[j].lemma] = near.get(tokens[j].lemma, 0) + 1
    assert sum(f >= 2 for f in near.values()) > GO_COLLOCATES


async def get(client: httpx.AsyncClient, path: str, **params: Any) -> dict[str, Any]:
    response = await client.get(path, params={"corpus": CORPUS, "syntax": "cqp", **params})
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    assert answer["complete"] is True
    return answer


def without_timing(answer: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k not in ("elapsed_ms", "partitions")}


# -- frequency -------------------------------------------------------------------------------------

FREQUENCY_CASES = [
    ('[pos="JJ"] [pos="NN.*"]', "lemma", None, ""),
    ('[word="the"]', "word", "matchend[1]", "c"),
    ('[lemma="go"]', "word", "match[-1]", "cd"),
    ('[pos="NN"] []{0,2} [pos="NN"] within s', "word", "match..matchend", ""),
    ('[pos="NN"] []{0,2} [pos="NN"] within s', "word", "matchend..match", "c"),
    ('[word="a"]', "lemma", "match[-3]..matchend[-1]", ""),
    ('@[pos="DT"] [pos="JJ"]? [pos="NNS"]', "lemma", "target", "c"),
    ('@1[pos="JJ.*"] @[pos="NN.*"]', "lemma", "keyword", ""),
    ('[pos="DT"] @1[pos="JJ"]? [pos="NNS"]', "word", "keyword[1]", "c"),
    ('[pos="IN"] [pos="DT"]', "upos", "matchend", ""),
]


def cqp_count(cqp: RealCqp, query: str, by: str, on: str | None, fold: str) -> dict[str, int]:
    span = f"on {on.replace('..', ' .. ')}" if on else ""
    out = cqp.run(f"A = {query};\ncount A by {by} {'%' + fold if fold else ''} {span};")
    counts = {}
    for line in out.splitlines():
        frequency, _first, value = line.split("\t")
        counts[value] = int(frequency)
    return counts


@pytest.mark.slow
@pytest.mark.parametrize(("query", "by", "on", "fold"), FREQUENCY_CASES)
async def test_frequency_equals_cqp_count_on_one_and_five_partitions(
    one: httpx.AsyncClient, five: httpx.AsyncClient, cqp: RealCqp, query: str, by: str, on: str | None, fold: str
) -> None:
    params = {"q": query, "by": by, "fold": fold, "limit": 100_000, **({"on": on} if on else {})}
    single, spread = await get(one, "/api/v1/frequency", **params), await get(five, "/api/v1/frequency", **params)
    # a span reaching past the match reads on across the cuts (each partition carries its neighbours' tokens)
    assert without_timing(single) == without_timing(spread)
    expected = cqp_count(cqp, query, by, on, fold)
    unset = spread["total"] - spread["counted"]
    if unset:
        # a hit without the anchor (no @1 token in it) is left out and counted as unset; CQP takes the
        # unset anchor (-1) plus the offset, clamped to the corpus: the value of its first token
        first = cqp_count(cqp, "[] cut 1", by, "match", fold)
        [value] = first
        expected[value] -= unset
        expected = {k: v for k, v in expected.items() if v}
    assert {row["value"]: row["frequency"] for row in spread["rows"]} == expected
    assert spread["counted"] == sum(expected.values()) == spread["total"] - unset
    frequencies = [row["frequency"] for row in spread["rows"]]
    assert frequencies == sorted(frequencies, reverse=True)
    top = spread["rows"][0]
    assert top["share"] == pytest.approx(top["frequency"] / spread["counted"])
    assert top["per_million"] == pytest.approx(top["frequency"] / TRICKY_TOKENS * 1e6)


async def test_frequency_paging_minimum_and_concordance_links(five: httpx.AsyncClient) -> None:
    every = await get(five, "/api/v1/frequency", q='[pos="NN"]', by="lemma", limit=100_000)
    page = await get(five, "/api/v1/frequency", q='[pos="NN"]', by="lemma", offset=10, limit=5, min=3)
    kept = [row for row in every["rows"] if row["frequency"] >= 3]
    assert page["rows"] == kept[10:15]
    link = page["rows"][0]["concordance"]
    assert link.startswith(f"/?corpus={CORPUS}&q=") and link.endswith("&syntax=cqp")
    cqp_text = parse_qs(urlsplit(link).query)["q"][0]
    hits = await get(five, "/api/v1/query", q=cqp_text, limit=0)
    assert hits["total"] == page["rows"][0]["frequency"]
    # several tokens per span: no single-token link
    wide = await get(five, "/api/v1/frequency", q='[pos="JJ"] [pos="NN"]', by="word", limit=1)
    assert wide["rows"][0]["concordance"] is None


@pytest.mark.slow
@pytest.mark.parametrize(("query", "on", "fold"), [
    ('[lemma="the"]', "matchend[1]", ""), ('[pos="JJ"] [pos="NN.*"]', "matchend[1]", ""),
    ('[pos="DT"] [pos="JJ"]* [pos="NN"] within s', "matchend[1]", "c"), ('[word="of"]', "match[1]", "c"),
])
async def test_the_token_after_the_match_links_to_exactly_its_hits(five: httpx.AsyncClient, query: str, on: str,
                                                                    fold: str) -> None:
    """A frequency of the token right after the match: each value links to the query with that token
    tested ahead (a lookahead), which finds exactly the hits counted, with the same matches."""
    table = await get(five, "/api/v1/frequency", q=query, by="word", on=on, fold=fold, limit=6)
    assert table["rows"]
    for row in table["rows"]:
        assert row["concordance"] is not None, row
        linked = parse_qs(urlsplit(row["concordance"]).query)["q"][0]
        assert "[:" in linked
        hits = await get(five, "/api/v1/query", q=linked, limit=100)
        assert hits["total"] == row["frequency"], (linked, row)
        export = await five.get("/api/v1/export", params={"corpus": CORPUS, "q": query, "syntax": "cqp",
                                                          "limit": 10_000})
        original = {int(line.split("\t")[1]): int(line.split("\t")[2]) for line in export.text.splitlines()[1:]}
        assert all(original.get(h["position"]) == h["matchend"] for h in hits["hits"])  # the hits as they were
    before = await get(five, "/api/v1/frequency", q='[lemma="the"]', by="word", on="match[-1]", limit=1)
    assert before["rows"][0]["concordance"] is None  # no lookbehind in CQP: no link that would be exact


async def test_frequency_errors_say_what_was_wrong(five: httpx.AsyncClient) -> None:
    cases = {
        ("by", "lemmas"): "no p-attribute 'lemmas'",
        ("on", "matchstart"): "an anchor is match, matchend, target or keyword",
        ("fold", "x"): "give c (fold case)",
    }
    for (name, value), message in cases.items():
        params = {"corpus": CORPUS, "q": "house", "by": "word", name: value}
        response = await five.get("/api/v1/frequency", params=params)
        assert response.status_code == 400, (name, value, response.text)
        assert message in response.json()["detail"]
    cut = await five.get("/api/v1/frequency", params={"corpus": CORPUS, "q": '"the" cut 5', "syntax": "cqp"})
    assert cut.status_code == 400 and "cut" in cut.json()["detail"]


BREAKDOWN_CASES = [
    ('[pos="JJ"] [pos="NN.*"]', "word,upos", "match[-1],matchend[1]", ""),
    ('[lemma="go"]', "lemma,pos", "matchend[1],matchend[2]", "c"),
    ('[pos="DT"] [pos="JJ"]', "word,word,pos", "match,matchend,matchend[1]", "c"),
]


def cqp_tabulate(cqp: RealCqp, query: str, by: str, on: str, fold: str) -> dict[str, int]:
    """Each hit's values at the positions, as CQP's ``tabulate`` writes them, counted by combination;
    hits with a position outside the corpus are left out (cowbird does not count them)."""
    attributes, positions = by.split(","), on.split(",")
    flag = f" %{fold}" if fold else ""
    columns = ", ".join(f"{where} {name}{flag}" for name, where in zip(attributes, positions, strict=True))
    wheres = ", ".join(positions)
    out = cqp.run(f"A = {query};\ntabulate A {wheres}, {columns};")
    counts: dict[str, int] = {}
    for line in out.splitlines():
        fields = line.split("\t")
        places, values = fields[: len(positions)], fields[len(positions):]
        if any(int(p) < 0 or int(p) >= TRICKY_TOKENS for p in places):
            continue
        key = "\t".join(values)
        counts[key] = counts.get(key, 0) + 1
    return counts


@pytest.mark.parametrize(("query", "by", "on", "fold"), BREAKDOWN_CASES)
@pytest.mark.slow  # 1.9 s here (make quick leaves it out)
async def test_a_breakdown_by_several_keys_equals_cqp_tabulate(
    one: httpx.AsyncClient, five: httpx.AsyncClient, cqp: RealCqp, query: str, by: str, on: str, fold: str
) -> None:
    """by=word,upos&on=match[-1],matchend[1]: how often each combination of values occurs (CQPweb's and
    NoSketch Engine's multi-level frequency), exact over partitions, judged by CQP's tabulate."""
    params: dict[str, str | int] = {"q": query, "by": by, "on": on, "fold": fold, "limit": 100_000}
    single, spread = await get(one, "/api/v1/frequency", **params), await get(five, "/api/v1/frequency", **params)
    assert single["keys"] == [f"{where}.{name}" for name, where in zip(by.split(","), on.split(","), strict=True)]
    expected = cqp_tabulate(cqp, query, by, on, fold)
    assert {"\t".join(row["values"]): row["frequency"] for row in single["rows"]} == expected
    assert all(row["value"] == " / ".join(row["values"]) and row["concordance"] is None for row in single["rows"])
    if "[-" not in on:
        assert without_timing(single) == without_timing(spread)
    else:  # a position before the match is clamped at a partition's first token (see the frequency cases)
        assert abs(single["counted"] - spread["counted"]) < 5
    assert single["counted"] == sum(expected.values()) and single["total"] - single["counted"] == single["unset"]
    file = await one.get("/api/v1/frequency", params={"corpus": CORPUS, "syntax": "cqp", **params, "format": "tsv"})
    header = next(line for line in file.text.splitlines() if not line.startswith("#")).split("\t")
    assert header == [*single["keys"], "frequency", "share", "per_million"]


async def test_a_breakdown_says_what_it_cannot_count(one: httpx.AsyncClient) -> None:
    base = {"corpus": CORPUS, "syntax": "cqp", "q": '[pos="DT"]'}
    cases = [({"by": "word,pos", "on": "match,matchend,matchend[1]"}, "3 spans for the 2 attributes of by=word,pos"),
             ({"by": "word,pos,lemma,upos"}, "at most 3 keys at once"),
             ({"by": "word,tag"}, "has no p-attribute 'tag'"),
             ({"by": "word,"}, "name an attribute, or several separated by commas")]
    for params, detail in cases:
        answer = await one.get("/api/v1/frequency", params={**base, **params})
        assert answer.status_code == 400 and detail in answer.json()["detail"], (params, answer.text)


# -- distribution ----------------------------------------------------------------------------------

async def test_distribution_equals_cqp_group_with_exact_sizes(
    one: httpx.AsyncClient, five: httpx.AsyncClient, cqp: RealCqp
) -> None:
    for query, by in (('[pos="JJ"] [pos="NN.*"]', "text_genre"), ('[lemma="go"]', "text_year")):
        single = await get(one, "/api/v1/distribution", q=query, by=by)
        spread = await get(five, "/api/v1/distribution", q=query, by=by)
        assert without_timing(single) == without_timing(spread)
        grouped = {}
        for line in cqp.run(f"A = {query};\ngroup A match {by};").splitlines():
            value, frequency = line.split("\t")
            grouped[value] = int(frequency)
        assert {r["value"]: r["hits"] for r in spread["rows"] if r["hits"]} == grouped
        assert sum(r["hits"] for r in spread["rows"]) + spread["outside"] == spread["total"]
        for row in spread["rows"]:
            assert row["size_exact"] is True
            if row["value"]:  # the subcorpus size is the tokens of the regions with the value, as CQP counts them
                size = cqp.run(f'B = [] :: match.{by}="{row["value"]}";\nsize B;')
                assert row["tokens"] == int(size), row
            assert row["per_million"] == pytest.approx(row["hits"] / row["tokens"] * 1e6)
            assert 0 <= row["regions_with_hits"] <= row["regions"]
    years = await get(five, "/api/v1/distribution", q='[lemma="go"]', by="text_year")
    values = [r["value"] for r in years["rows"]]
    assert years["numeric"] is True and values[-1] == ""  # empty year last
    assert values[:-1] == sorted(values[:-1], key=float)
    genres = await get(five, "/api/v1/distribution", q='[lemma="go"]', by="text_genre")
    assert {r["value"] for r in genres["rows"]} == GENRES
    assert sum(r["tokens"] for r in genres["rows"]) == TRICKY_TOKENS


async def test_distribution_rows_link_to_their_hits(five: httpx.AsyncClient) -> None:
    genres = await get(five, "/api/v1/distribution", q="^go", syntax="simple", by="text_genre")
    for row in genres["rows"]:
        params = parse_qs(urlsplit(row["concordance"]).query)
        filtered = await five.get("/api/v1/query", params={**{k: v[0] for k, v in params.items() if k != "filter"},
                                                           "filter": params["filter"], "limit": 0})
        assert filtered.json()["total"] == row["hits"]
    refused = await five.get("/api/v1/distribution", params={"corpus": CORPUS, "q": "go", "by": "s"})
    assert refused.status_code == 400 and "no s-attribute with values named 's'" in refused.json()["detail"]


# -- dispersion ------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("query", ['[lemma="go"]', '[pos="JJ"] [pos="NN.*"]', '[word="the"]'])
async def test_dispersion_is_gries_dp_over_the_texts_computed_from_the_vrt(
    one: httpx.AsyncClient, five: httpx.AsyncClient, tricky_five: Partitioned, query: str
) -> None:
    """DP = ½ Σ |hits share − size share| over the texts (Gries 2008), its normalised form (Lijffijt and
    Gries 2012) and the hits in 10 stretches, computed here from the VRT and the hits' positions; the
    same on one and on five partitions, and DP over the five partitions from their sizes."""
    tokens = read_tricky()
    sizes: dict[int, int] = {}
    text_of = []
    for token in tokens:
        sizes[id(token.text)] = sizes.get(id(token.text), 0) + 1
        text_of.append(id(token.text))
    export = await one.get("/api/v1/export", params={"corpus": CORPUS, "q": query, "syntax": "cqp", "format": "tsv",
                                                     "limit": 10_000})
    lines = export.text.splitlines()
    header = lines[0].split("\t")
    hits = [int(line.split("\t")[header.index("position")]) for line in lines[1:]]
    n, total = len(tokens), len(hits)
    per_text: dict[int, int] = {}
    for position in hits:
        per_text[text_of[position]] = per_text.get(text_of[position], 0) + 1
    dp = 0.5 * sum(abs(per_text.get(t, 0) / total - size / n) for t, size in sizes.items())
    norm = dp / (1 - min(sizes.values()) / n)
    stretches = [0] * 10
    for position in hits:
        stretches[position * 10 // n] += 1
    single = await get(one, "/api/v1/dispersion", q=query, bins=10)
    spread = await get(five, "/api/v1/dispersion", q=query, bins=10)
    for answer in (single, spread):
        assert answer["parts"] == len(sizes) and answer["parts_with_hits"] == len(per_text)
        assert answer["dp"] == pytest.approx(dp, abs=1e-12) and answer["dp_norm"] == pytest.approx(norm, abs=1e-12)
        assert [b["hits"] for b in answer["bins"]] == stretches and answer["total"] == total
        assert answer["bins"][0]["start"] == 0 and answer["bins"][-1]["end"] == n - 1
        # each hit lies in the stretch whose start..end holds it, and the stretches tile the corpus
        assert [sum(b["start"] <= h <= b["end"] for h in hits) for b in answer["bins"]] == stretches
        assert all(a["end"] + 1 == b["start"] for a, b in zip(answer["bins"], answer["bins"][1:], strict=False))
    for bins in (7, 3, 100):  # sizes that do not divide the corpus
        odd = await get(five, "/api/v1/dispersion", q=query, bins=bins)
        assert [b["hits"] for b in odd["bins"]] == [sum(b["start"] <= h <= b["end"] for h in hits)
                                                    for b in odd["bins"]]
    manifest = json.loads(tricky_five.manifest.read_text())
    by_partition = [(p["size"], sum(p["offset"] <= h < p["offset"] + p["size"] for h in hits))
                    for p in manifest["partitions"]]
    assert [(p["tokens"], p["hits"]) for p in spread["partitions_hits"]] == by_partition
    assert spread["dp_partitions"] == pytest.approx(0.5 * sum(abs(h / total - s / n) for s, h in by_partition))
    assert single["dp_partitions"] == 0.0
    file = await five.get("/api/v1/dispersion", params={"corpus": CORPUS, "q": query, "syntax": "cqp", "bins": 10,
                                                        "format": "tsv", "provenance": 1})
    assert f"# dp: {json.dumps(spread['dp'])}" in file.text and "start\tend\thits" in file.text


# -- collocations ----------------------------------------------------------------------------------

def ccc_collocates(parts: Partitioned, query: str, window: int, within: str, attribute: str) -> pd.DataFrame:
    """cwb-ccc's collocates on the corpus of one partition ``parts``."""
    try:
        from ccc import Corpus
    except ImportError:
        unavailable("cwb-ccc is not installed: pip install -e '.[cwb]' with cwb-config on PATH")
    reference_cqp()  # skips (fails under CI) without real CQP
    corpus = Corpus(parts.ids[0].upper(), registry_dir=str(parts.registry), data_dir=tempfile.mkdtemp())
    frame: pd.DataFrame = corpus.query(query, context=window, context_break=within).collocates(
        p_query=[attribute], window=window, cut_off=None, min_freq=1, show_negative=True, order="O11")
    return frame


@pytest.mark.slow
@pytest.mark.parametrize(("query", "window", "within", "attribute"), [
    ('[lemma="go"]', 5, "s", "lemma"),
    ('[lemma="go"]', 3, "text", "word"),
    ('[pos="JJ"] [pos="NN.*"]', 4, "s", "lemma"),
])
async def test_collocations_equal_cwb_ccc(
    one: httpx.AsyncClient, five: httpx.AsyncClient, tricky_one: Partitioned, query: str, window: int, within: str,
    attribute: str,
) -> None:
    params = {"q": query, "window": window, "within": within, "attribute": attribute, "min_freq": 1,
              "limit": 100_000, "order": "f"}
    single, spread = await get(one, "/api/v1/collocations", **params), await get(five, "/api/v1/collocations", **params)
    assert without_timing(single) == without_timing(spread)
    assert spread["cqp"].endswith(f"within {within}")
    theirs = ccc_collocates(tricky_one, query, window, within, attribute)
    from association_measures import measures as am  # comes with cwb-ccc (checked just above)

    ours = {row["value"]: row for row in spread["rows"]}
    assert set(ours) == set(theirs.index)
    assert spread["f1"] == int(theirs["R1"].iloc[0]) and spread["n"] == int(theirs["N"].iloc[0])
    # scores recomputed by association-measures, unrounded, from cwb-ccc's own counts
    exact = am.score(theirs[["O11", "O12", "O21", "O22"]], digits=None)
    same = {"log_likelihood": "log_likelihood", "t_score": "t_score", "z_score": "z_score", "dice": "dice",
            "min_sensitivity": "min_sensitivity"}
    for value, row in ours.items():
        assert row["f"] == theirs.at[value, "O11"] and row["f2"] == theirs.at[value, "C1"]
        assert row["marginal"] == theirs.at[value, "marginal"] and row["in_nodes"] == theirs.at[value, "in_nodes"]
        assert row["expected"] == pytest.approx(exact.at[value, "E11"], rel=1e-9)
        for mine, name in same.items():
            assert row["scores"][mine] == pytest.approx(exact.at[value, name], rel=1e-9, abs=1e-12), (value, mine)
            assert row["scores"][mine] == pytest.approx(theirs.at[value, name], abs=5.1e-7)  # cwb-ccc rounds to 6
        # cwb-ccc's mutual information is log10; ours, as CQPweb's, log2
        assert row["scores"]["mi"] * math.log10(2) == pytest.approx(exact.at[value, "mutual_information"], rel=1e-9)
        o11, e11 = row["f"], row["expected"]
        assert row["scores"]["mi3"] == pytest.approx(math.log2(o11**3 / e11), rel=1e-9)
        assert row["scores"]["log_dice"] == pytest.approx(14 + math.log2(row["scores"]["dice"]), rel=1e-9)


async def test_collocations_order_measures_and_defaults(five: httpx.AsyncClient) -> None:
    answer = await get(five, "/api/v1/collocations", q="^go", syntax="simple", measures="mi,log_dice", order="mi")
    assert answer["within"] == "text" and answer["measures"] == ["mi", "log_dice"] and answer["min_freq"] == 2
    assert all(set(row["scores"]) == {"mi", "log_dice"} and row["f"] >= 2 for row in answer["rows"])
    scores = [row["scores"]["mi"] for row in answer["rows"]]
    assert scores == sorted(scores, reverse=True) and len(answer["rows"]) == 100 < answer["rows_total"]
    asymmetric = await get(five, "/api/v1/collocations", q="^go", syntax="simple", left=0, right=2, order="f")
    assert asymmetric["left"] == 0 and asymmetric["right"] == 2
    assert asymmetric["rows"][0]["value"] == "to"
    bad = await five.get("/api/v1/collocations", params={"corpus": CORPUS, "q": "go", "measures": "mi,pmi"})
    assert bad.status_code == 400 and "unknown pmi" in bad.json()["detail"]


async def test_collocation_rows_link_to_hits_with_the_collocate_nearby(five: httpx.AsyncClient) -> None:
    answer = await get(five, "/api/v1/collocations", q='[lemma="go"]', window=3, within="s", order="f", limit=3)
    for row in answer["rows"]:
        params = parse_qs(urlsplit(row["concordance"]).query)
        assert params["syntax"] == ["cqp"] and params["q"][0].endswith("within s")
        hits = await get(five, "/api/v1/query", q=params["q"][0], limit=100, show="lemma", context=0)
        assert hits["total"] > 0
        for hit in hits["hits"]:  # each match runs from a hit of go to the collocate, at most 3 tokens away
            lemmas = hit["attributes"]["lemma"].split(" ")
            assert 2 <= len(lemmas) <= 4 and "go" in (lemmas[0], lemmas[-1]), lemmas
            assert row["value"] == (lemmas[-1] if lemmas[0] == "go" else lemmas[0])
    right_only = await get(five, "/api/v1/collocations", q='[lemma="go"]', left=0, right=1, limit=1, order="f")
    only = parse_qs(urlsplit(right_only["rows"][0]["concordance"]).query)["q"][0]
    assert only == f'[lemma="go"] [lemma="{right_only["rows"][0]["value"]}"%l] within text'
    hits = await get(five, "/api/v1/query", q=only, limit=0)
    assert hits["total"] == right_only["rows"][0]["f"]  # one token right: one co-occurrence per hit


async def test_analyses_download_as_files_that_pandas_reads(five: httpx.AsyncClient) -> None:
    base = {"corpus": CORPUS, "q": '[lemma="go"]', "syntax": "cqp"}
    cases: list[tuple[str, Params, str, list[str]]] = [
        ("frequency", {"by": "word", "limit": 100_000}, "value", ["value", "frequency", "share", "per_million"]),
        ("distribution", {"by": "text_genre"}, "value",
         ["value", "hits", "tokens", "per_million", "regions", "regions_with_hits"]),
        ("collocations", {"window": 3, "measures": "log_likelihood,mi", "limit": 50}, "value",
         ["value", "f", "f2", "marginal", "in_nodes", "expected", "texts", "log_likelihood", "mi"]),
    ]
    for kind, params, key, columns in cases:
        data = await get(five, f"/api/v1/{kind}", **params, q=base["q"])
        answer = await five.get(f"/api/v1/{kind}", params={**base, **params, "format": "tsv", "provenance": 1})
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-type"].startswith("text/tab-separated-values")
        assert answer.headers["content-disposition"].startswith(f'attachment; filename="{CORPUS}_{kind}_')
        assert answer.headers["x-cowbird-rows"] == str(len(data["rows"]))
        skip = int(answer.text.split("skiprows=")[1].split(";")[0])
        frame = pd.read_csv(io.StringIO(answer.text), sep="\t", skiprows=skip, keep_default_na=False,
                            float_precision="round_trip", dtype={key: str})
        assert list(frame.columns) == columns
        assert list(frame[key]) == [row["value"] for row in data["rows"]]
        numbers = [c for c in columns[1:] if c not in ("mi", "log_likelihood")]
        for column in numbers:
            assert list(frame[column]) == [row[column] for row in data["rows"]]
        if kind == "collocations":
            assert list(frame["mi"]) == [row["scores"]["mi"] for row in data["rows"]]  # every digit kept
        assert f'# analysis: "{kind}"' in answer.text and '# cqp: "[lemma=\\"go\\"]' in answer.text
        plain = await five.get(f"/api/v1/{kind}", params={**base, **params, "format": "csv"})
        assert plain.text.startswith(",".join(columns) + "\r\n")  # without provenance: pure data
        # a spreadsheet: the rows on a sheet named for the analysis, numbers as numbers, the metadata
        # on its own sheet under a header row
        book = await five.get(f"/api/v1/{kind}", params={**base, **params, "format": "xlsx", "provenance": 1})
        assert book.status_code == 200 and book.headers["content-disposition"].endswith('.xlsx"')
        sheets = pd.read_excel(io.BytesIO(book.content), sheet_name=None, keep_default_na=False, dtype={key: str})
        assert list(sheets) == [kind, "metadata"]
        table = sheets[kind]
        assert list(table.columns) == columns and list(table[key]) == [row["value"] for row in data["rows"]]
        assert table[columns[1]].dtype.kind in "if"  # a count, not text
        for column in numbers:
            assert list(table[column]) == pytest.approx([row[column] for row in data["rows"]])
        assert list(sheets["metadata"].columns) == ["field", "value"]
        assert dict(zip(sheets["metadata"]["field"], sheets["metadata"]["value"], strict=True))["analysis"] == kind
    bad = await five.get("/api/v1/frequency", params={**base, "format": "ods"})
    assert bad.status_code == 400 and "format" in bad.text
    dispersion = await five.get("/api/v1/dispersion", params={**base, "format": "xlsx", "bins": 5})
    stretches = pd.read_excel(io.BytesIO(dispersion.content), sheet_name="dispersion")
    assert list(stretches.columns) == ["start", "end", "hits"] and len(stretches) == 5


# -- sorting ---------------------------------------------------------------------------------------

SORT_CASES = [
    ('[lemma="go"]', "right1.word", "asc", "sort A by word on matchend[1]"),
    ('[pos="JJ"] [pos="NN.*"]', "match..matchend.lemma", "asc", "sort A by lemma"),
    ('[pos="JJ"] [pos="NN.*"]', "match.lemma", "asc", "sort A by lemma on match"),
    ('[word="the"]', "left1.word%c", "asc", "sort A by word %c on match[-1]"),
    ('[pos="NN"] []{0,2} [pos="NN"] within s', "match..matchend.word", "desc", "sort A by word descending"),
    ('[pos="DT"] @1[pos="JJ"] [pos="NN.*"]', "keyword.word", "asc", "sort A by word on keyword"),
]


async def all_sorted(client: httpx.AsyncClient, query: str, sort: str, direction: str,
                     **extra: Any) -> list[list[int]]:
    """Every hit in sorted order, from a sorted export (API mode)."""
    answer = await client.get("/api/v1/export", params={
        "corpus": CORPUS, "q": query, "syntax": "cqp", "sort": sort, "direction": direction, "format": "ndjson",
        "limit": 100_000, "context": 0, "token": API_TOKEN, **extra})
    assert answer.status_code == 200, answer.text
    return [[row["position"], row["matchend"]] for row in map(json.loads, answer.text.splitlines())]


async def page(client: httpx.AsyncClient, query: str, sort: str, direction: str, offset: int,
               **extra: Any) -> list[list[int]]:
    answer = await get(client, "/api/v1/query", q=query, sort=sort, direction=direction, offset=offset, limit=100,
                       context=0, **extra)
    return [[h["position"], h["matchend"]] for h in answer["hits"]]


@pytest.mark.slow
@pytest.mark.parametrize(("query", "sort", "direction", "command"), SORT_CASES)
async def test_sorted_hits_follow_cqp_sort_and_page_exactly(
    one: httpx.AsyncClient, five: httpx.AsyncClient, cqp: RealCqp, query: str, sort: str, direction: str,
    command: str,
) -> None:
    single = await all_sorted(one, query, sort, direction)
    spread = await all_sorted(five, query, sort, direction)
    assert spread == single  # ties by position: one partition or five, the same order
    rows = np.fromstring(cqp.run(f"A = {query};\n{command};\ndump A;"), dtype=np.int64, sep=" ").reshape(-1, 4)
    theirs = rows[:, :2].tolist()
    assert sorted(map(tuple, theirs)) == sorted(map(tuple, spread))
    # CQP breaks ties arbitrarily: compare the keys in order, and our ties in corpus order
    key = await sort_keys(one, query, sort)
    assert [key[tuple(h)] for h in spread] == [key[tuple(h)] for h in theirs]
    plain = await sort_keys(one, query, sort.split("%")[0])  # %c: plain values break folded ties, as in CQP
    for first, second in zip(spread, spread[1:], strict=False):
        if plain[tuple(first)] == plain[tuple(second)]:
            assert first < second
    # previews at the start, deep inside and at the end, from five partitions, are those slices
    for offset in (0, len(spread) // 2 + 7, len(spread) - 30):
        assert await page(five, query, sort, direction, offset) == spread[offset : offset + 100]


async def sort_keys(client: httpx.AsyncClient, query: str, sort: str) -> dict[tuple[int, ...], str]:
    """Each hit's sort key as a string, from the export (word or lemma over the sort span)."""
    span, attribute = sort.rsplit(".", 1)
    attribute = attribute.split("%")[0]
    fold = "%c" in sort
    answer = await client.get("/api/v1/export", params={"corpus": CORPUS, "q": query, "syntax": "cqp",
                                                        "format": "ndjson", "limit": 100_000, "context": 2,
                                                        "show": attribute, "token": API_TOKEN})
    keys: dict[tuple[int, ...], str] = {}
    for line in answer.text.splitlines():
        hit = json.loads(line)
        left_words = hit["left"].split(" ")
        right_words = hit["right"].split(" ")
        if span == "right1":
            value = right_words[0]
        elif span == "left1":
            value = left_words[-1]
        elif span == "match":
            value = hit[attribute].split(" ")[0]
        elif span == "keyword":  # the cases mark the match's second token @1
            value = hit[attribute].split(" ")[1]
        else:
            value = hit[attribute]
        keys[(hit["position"], hit["matchend"])] = value.casefold() if fold else value
    return keys


async def test_sorted_export_at_an_offset_and_previews_agree(five: httpx.AsyncClient) -> None:
    query, sort = '[pos="JJ"] [pos="NN.*"] within s', "match..matchend.lemma"
    every = await all_sorted(five, query, sort, "desc")
    assert len(every) == JJ_NN_WITHIN_S
    for offset in (1, 345, len(every) - 10):  # limit 300: the middle one is a slice out of the middle
        assert await all_sorted(five, query, sort, "desc", offset=offset, limit=300) == every[offset : offset + 300]
        assert await page(five, query, sort, "desc", offset) == every[offset : offset + 100]
    described = await five.get("/api/v1/export", params={
        "corpus": CORPUS, "q": '[lemma="go"]', "syntax": "cqp", "sort": "right1.word", "direction": "desc",
        "provenance": 1, "limit": 5})
    assert '# sort: "right1.word desc"' in described.text  # as the user wrote it
    assert '# sort_cqp: "matchend[1].word desc"' in described.text  # and in CQP's terms


async def test_random_order_is_seeded_and_the_same_across_partitions(one: httpx.AsyncClient,
                                                                     five: httpx.AsyncClient) -> None:
    first = await all_sorted(five, '[lemma="go"]', "random", "asc")
    assert first == await all_sorted(one, '[lemma="go"]', "random", "asc")
    assert first[200:300] == await page(five, '[lemma="go"]', "random", "asc", 200)
    by_word = await all_sorted(five, '[lemma="go"]', "match.word", "asc")
    assert first != sorted(first) and sorted(first) == sorted(by_word)
    other = await page(five, '[lemma="go"]', "random", "asc", 0, seed=7)
    assert other != first[:100] and sorted(other) != sorted(first[:100])
    assert await all_sorted(five, '[lemma="go"]', "random", "desc") == first[::-1]


async def test_sort_errors(five: httpx.AsyncClient) -> None:
    cases = {
        (("sort", "match.lemmas"),): "no p-attribute 'lemmas'",
        (("sort", "lemma"),): "write SPAN.ATTRIBUTE",
        (("sort", "left0.word"),): "left and right count from 1",
        (("sort", "random"), ("sample", "10")): "sort and sample do not go together",
    }
    for pairs, message in cases.items():
        response = await five.get("/api/v1/query", params={"corpus": CORPUS, "q": "house", **dict(pairs)})
        assert response.status_code == 400, (pairs, response.text)
        assert message in response.json()["detail"]


@pytest.mark.slow
async def test_every_example_on_the_api_help_page_answers(five: httpx.AsyncClient) -> None:
    """The copyable GET examples of /help/api work as written (the token is the caller's)."""
    import html
    import re as regex

    page = await five.get("/help/api")
    assert page.status_code == 200
    urls = regex.findall(r"'(http[^']+)'", html.unescape(page.text))
    assert len(urls) >= 9
    for url in urls:
        answer = await five.get(url.replace(str(five.base_url), "").replace("http://testserver", ""),
                                headers={"Authorization": f"Bearer {API_TOKEN}"})
        assert answer.status_code == 200, (url, answer.text)


def test_a_value_ending_in_a_backslash_gets_a_link_and_one_no_cqp_string_can_hold_gets_none() -> None:
    """Web tokens such as ``C:\\`` end in a backslash, which a CQP string cannot end with safely:
    their links spell it ``\\x5c`` in a regex; a value with a control character gets no link, and
    every other row keeps its link."""
    import functools

    from cowbird.frontend.routes.analyses import _cqp_link, _with_collocate, _with_value
    from cowbird.query import parse_cqp

    query = parse_cqp('[pos="NN"] within text')

    def q(link: str | None) -> str:
        assert link is not None
        return parse_qs(urlsplit(link).query)["q"][0]

    by_value = q(_cqp_link("ewt", functools.partial(_with_value, query, "match", "word", "C:\\", "")))
    assert by_value == '[pos="NN"] :: match.word="C:\\x5c" within text'
    collocate = q(_cqp_link("ewt", functools.partial(_with_collocate, query, "word", "C:\\", 2, 2)))
    assert collocate == ('[pos="NN"] []? [word="C:\\x5c"] | [word="C:\\x5c"] []? [pos="NN"] within text')
    assert _cqp_link("ewt", functools.partial(_with_value, query, "match", "word", "a\x01", "")) is None
    link = _cqp_link("ewt", functools.partial(_with_value, query, "match", "word", 'say "hi"', ""))
    assert link is not None
    assert parse_qs(urlsplit(link).query)["q"] == ['[pos="NN"] :: match.word=\'say "hi"\'%l within text']
    folded = q(_cqp_link("ewt", functools.partial(_with_value, query, "match", "word", "C:\\", "c")))
    assert folded == '[pos="NN"] :: match.word="C:\\x5c"%c within text'


async def test_every_analysis_is_paged_and_says_how_many_rows_it_has(five: httpx.AsyncClient) -> None:
    """A distribution over an attribute with a value per sentence (16,622 on EWT; 1,199 here) used to
    be sent whole (the browser died on 42 MB of it); every analysis now answers a page — ``offset``
    and ``limit`` — with ``rows_total``, and a file has every row."""
    sentences = TRICKY_SENTENCES
    first = await get(five, "/api/v1/distribution", q='[lemma="go"]', by="s_id")
    assert first["rows_total"] == sentences and len(first["rows"]) == 1000 and first["offset"] == 0
    page = await get(five, "/api/v1/distribution", q='[lemma="go"]', by="s_id", offset=sentences - 22, limit=50)
    assert page["offset"] == sentences - 22 and len(page["rows"]) == 22 and page["rows_total"] == sentences
    ranked = await get(five, "/api/v1/distribution", q='[lemma="go"]', by="s_id", order="hits", limit=3)
    assert [r["hits"] for r in ranked["rows"]] == sorted((r["hits"] for r in ranked["rows"]), reverse=True)
    everything = await five.get("/api/v1/distribution", params={"corpus": CORPUS, "syntax": "cqp", "q": '[lemma="go"]',
                                                                 "by": "s_id", "format": "tsv"})
    assert everything.headers["x-cowbird-rows"] == str(sentences) and len(everything.text.splitlines()) == sentences + 1
    frequency = await get(five, "/api/v1/frequency", q='[pos="NN"]', by="lemma", min=2, offset=10, limit=5)
    whole = await get(five, "/api/v1/frequency", q='[pos="NN"]', by="lemma", min=2, limit=100_000)
    assert frequency["rows_total"] == len(whole["rows"]) < whole["distinct"]
    assert frequency["rows"] == whole["rows"][10:15]
    collocates = await get(five, "/api/v1/collocations", q='[lemma="go"]', offset=5, limit=5)
    all_collocates = await get(five, "/api/v1/collocations", q='[lemma="go"]', limit=10_000)
    assert collocates["rows_total"] == len(all_collocates["rows"])
    assert collocates["rows"] == all_collocates["rows"][5:10]
    too_many = await five.get("/api/v1/distribution", params={"corpus": CORPUS, "q": "go", "by": "s_id",
                                                              "limit": 100_001})
    assert too_many.status_code == 400 and "page with offset" in too_many.json()["detail"]


@pytest.mark.slow  # 1.2 s here (make quick leaves it out)
async def test_collocates_marginals_are_asked_in_pieces_a_node_takes(
    one: httpx.AsyncClient, tricky_five: Partitioned, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The collocates found on other partitions are counted on each partition too (their marginals):
    on a large corpus thousands of them, more than one request body a node takes (64 KB by default).
    They go in pieces — here 500 bytes to nodes taking 1 KB — and the table stays complete and exact."""
    from cowbird.core.search import analyses as core_search
    from cowbird.frontend import CorpusConfig, FrontendSettings
    from cowbird.frontend.settings import AccountSettings, NodeAccess
    from cowbird.node import NodeSettings
    from cowbird.node import create_app as create_node
    from tests.frontend.conftest import NODE_TOKEN, api_account, engine, front_client

    monkeypatch.setattr(core_search, "MARGINALS_BYTES", 500)
    node = create_node(NodeSettings(registry=tricky_five.registry, token=NODE_TOKEN, max_request_bytes=1024),
                       engines={pid: engine(tricky_five.registry, pid) for pid in tricky_five.ids})
    corpus = CorpusConfig(name=CORPUS, manifest=tricky_five.manifest, nodes={p: ["http://node-a"]
                                                                              for p in tricky_five.ids})
    accounts = AccountSettings(database_file=api_account(tricky_five.registry.parent / "small-bodies.sqlite3"))
    settings = FrontendSettings(corpora=[corpus], nodes=NodeAccess(token=NODE_TOKEN), allowed_hosts=["front"],
                                accounts=accounts)
    params = {"q": '[word="the"]', "window": 5, "attribute": "word", "min_freq": 1, "limit": 100_000, "order": "f"}
    async for small in front_client(settings, {"node-a": node}):
        spread = await get(small, "/api/v1/collocations", **params)
        single = await get(one, "/api/v1/collocations", **params)
        assert len(spread["rows"]) > 300 and without_timing(spread) == without_timing(single)
