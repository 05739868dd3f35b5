"""One rule for every view under filters (issue 64, item 1): counts, rates, expected frequencies and
reference sizes are those of the texts the filters choose, and each answer says how many tokens
that is. Each view (preview, frequency, distribution, dispersion, collocations, keywords, n-grams,
trend, compare, word sketches) is judged by counts made here in plain Python from the corpus's VRT
file with the same filters, no cowbird: ``tests/fixtures/tricky.vrt`` in five partitions, and EWT
(``../shared/reference``, which the tests skip without, or fail under CI) in two, so that the sums
over partitions are exercised, on data the feature was not built with too."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import httpx
import pytest

from cowbird.engines.analyses.subcorpus import chosen
from tests.frontend.conftest import TRICKY, Partitioned, engine, ewt_client
from tests.support import TRICKY_VRT, read_vrt_tokens, require_reference

pytestmark = pytest.mark.anyio


@dataclass(frozen=True)
class Token:
    word: str
    pos: str
    lemma: str
    text: dict[str, str]  # the attributes of its <text>
    s: dict[str, str]  # … and of its <s>
    text_number: int


@cache
def read_vrt(path: Path) -> tuple[Token, ...]:
    """Every token of a VRT file as cwb-encode ``-x -B`` reads it (:func:`read_vrt_tokens`; word, pos,
    upos, lemma), with its text's and sentence's attributes."""
    tokens: list[Token] = []
    for token in read_vrt_tokens(path):
        word, pos, _, lemma = token.fields
        tokens.append(Token(word, pos, lemma, token.text, token.s, token.text_number))
    return tuple(tokens)


def chooses(filters: list[str]) -> Callable[[Token], bool]:
    """Whether a token is in the subcorpus of ``filters`` (``text_genre~news``, ``s_id!~x.*``): the value
    of its text's (or sentence's) attribute matches every regex as a whole, or with ``!~`` does not."""
    tests = []
    for f in filters:
        attribute, negated, pattern = re.fullmatch(r"(\w+?)(!?)~(.*)", f).groups()  # type: ignore[union-attr]
        element, name = attribute.split("_", 1)
        tests.append((element, name, negated == "!", re.compile(pattern)))

    def chosen(token: Token) -> bool:
        return all(
            (regex.fullmatch((token.text if element == "text" else token.s).get(name, "")) is None) == negated
            for element, name, negated, regex in tests
        )

    return chosen


@dataclass
class Case:
    """A corpus behind a front end, its tokens read from its VRT, and the filters searched with."""

    client: httpx.AsyncClient
    corpus: str
    tokens: tuple[Token, ...]
    filters: list[str]
    other: list[str]  # the filters of a second subcorpus (a keyword list's reference, a comparison's other side)
    parts: Partitioned

    def inside(self, filters: list[str] | None = None) -> list[int]:
        """The positions of the subcorpus (of ``filters``, by default the case's)."""
        keep = chooses(self.filters if filters is None else filters)
        return [i for i, t in enumerate(self.tokens) if keep(t)]

    async def get(self, path: str, **params: Any) -> dict[str, Any]:
        answer = await self.client.get(path, params={"corpus": self.corpus, "filter": self.filters, **params})
        assert answer.status_code == 200, answer.text
        found: dict[str, Any] = answer.json()
        assert found.get("complete", True) is True
        return found


CASES: dict[str, tuple[str, Callable[[], Path], list[str], list[str]]] = {
    # name: (fixture, VRT, filters, the other subcorpus's filters)
    "tricky": ("tricky_five", lambda: TRICKY_VRT, ["text_genre~news"], ["text_genre~reviews"]),
    "tricky-two-filters": (
        "tricky_five",
        lambda: TRICKY_VRT,
        ["text_genre~news|reviews", "text_year!~2009"],
        ["text_genre~email|forum"],
    ),
    "ewt": (
        "ewt_parts",
        lambda: require_reference() / "ewt.vrt",
        ["text_genre~weblog|email"],
        ["text_genre~newsgroup"],
    ),
}


@pytest.fixture(params=list(CASES))
async def case(request: pytest.FixtureRequest) -> AsyncIterator[Case]:
    fixture, vrt, filters, other = CASES[request.param]
    parts: Partitioned = request.getfixturevalue(fixture)
    assert len(parts.ids) >= 2  # the sums over partitions are what is checked
    name = TRICKY if fixture.startswith("tricky") else "ewt"
    tokens = read_vrt(vrt())
    async for client in ewt_client(parts, name, sketch_grammar="penn"):
        yield Case(client, name, tokens, filters, other, parts)


def per_million(count: int, tokens: int) -> float:
    return count * 1e6 / tokens if tokens else 0.0


# -- the views ------------------------------------------------------------------------------------


@pytest.mark.slow  # 2.4 s here (make quick leaves it out)
async def test_the_preview_counts_and_rates_in_the_subcorpus(case: Case) -> None:
    inside = case.inside()
    hits = sum(case.tokens[i].pos == "NN" for i in inside)
    found = await case.get("/api/v1/query", q='[pos="NN"]', syntax="cqp", limit=0)
    assert (found["total"], found["tokens"]) == (hits, len(inside))
    assert found["per_million"] == pytest.approx(per_million(hits, len(inside)), rel=1e-12)
    assert len(inside) < len(case.tokens)


@pytest.mark.slow  # 3.9 s here (make quick leaves it out)
async def test_a_frequency_list_rates_in_the_subcorpus(case: Case) -> None:
    inside = case.inside()
    expected = Counter(case.tokens[i].lemma for i in inside if case.tokens[i].pos == "JJ")
    found = await case.get("/api/v1/frequency", q='[pos="JJ"]', syntax="cqp", by="lemma", limit=10_000)
    assert found["tokens"] == len(inside) and found["total"] == sum(expected.values())
    assert {r["value"]: r["frequency"] for r in found["rows"]} == dict(expected)
    for row in found["rows"]:
        assert row["per_million"] == pytest.approx(per_million(row["frequency"], len(inside)), rel=1e-12)


async def test_a_distribution_sizes_each_value_in_the_subcorpus(case: Case) -> None:
    """The finding: ``text_year`` under a genre filter divided by every text of the year."""
    inside = case.inside()
    tokens: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    texts: dict[str, set[int]] = {}
    for i in inside:
        token = case.tokens[i]
        year = token.text.get("year", "")
        tokens[year] += 1
        hits[year] += token.pos == "NN"
        texts.setdefault(year, set()).add(token.text_number)
    found = await case.get("/api/v1/distribution", q='[pos="NN"]', syntax="cqp", by="text_year")
    rows = {r["value"]: r for r in found["rows"]}
    assert set(rows) == set(tokens)  # the years of the texts searched, none else
    for year, row in rows.items():
        assert (row["hits"], row["tokens"], row["regions"]) == (hits[year], tokens[year], len(texts[year])), year
        assert row["per_million"] == pytest.approx(per_million(hits[year], tokens[year]), rel=1e-12)
    assert found["total"] == sum(hits.values())


async def test_dispersion_is_gries_dp_over_the_texts_searched(case: Case) -> None:
    inside = case.inside()
    sizes: Counter[int] = Counter(case.tokens[i].text_number for i in inside)
    per_text: Counter[int] = Counter(case.tokens[i].text_number for i in inside if case.tokens[i].pos == "NN")
    total, size = sum(per_text.values()), len(inside)
    dp = 0.5 * sum(abs(per_text[t] / total - n / size) for t, n in sizes.items())
    found = await case.get("/api/v1/dispersion", q='[pos="NN"]', syntax="cqp", bins=10)
    assert (found["tokens"], found["parts"], found["parts_with_hits"]) == (size, len(sizes), len(per_text))
    assert found["dp"] == pytest.approx(dp, abs=1e-12)
    assert found["dp_norm"] == pytest.approx(dp / (1 - min(sizes.values()) / size), abs=1e-12)
    offsets = [(p["id"], p["tokens"], p["hits"]) for p in found["partitions_hits"]]
    assert sum(t for _, t, _ in offsets) == size and sum(h for _, _, h in offsets) == total
    assert found["dp_partitions"] == pytest.approx(0.5 * sum(abs(h / total - t / size) for _, t, h in offsets))
    bins = [0] * 10
    for i in inside:
        if case.tokens[i].pos == "NN":
            bins[i * 10 // len(case.tokens)] += 1  # stretches of the whole corpus, where the hits are
    assert [b["hits"] for b in found["bins"]] == bins


@pytest.mark.slow  # 5.3 s here (make quick leaves it out)
async def test_collocations_count_windows_marginals_and_n_in_the_subcorpus(case: Case) -> None:
    """The finding: f2 and N of the whole corpus. Here every position counted is one of the texts
    searched (CQPweb's rule), the windows staying in the hit's text (``within=text``, the default), or
    with ``within=none`` running on across texts and the cuts between partitions."""
    for filters in (case.filters, [*case.filters, "s_id~.*[02468]"]):  # sentences: windows reach past them
        await _collocations(case, filters, "text")
    await _collocations(case, case.filters, "none")


async def _collocations(case: Case, filters: list[str], within: str) -> None:
    window = 3
    chosen = set(case.inside(filters))
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    for i, token in enumerate(case.tokens):
        first.setdefault(token.text_number if within == "text" else 0, i)
        last[token.text_number if within == "text" else 0] = i
    hits = [i for i in sorted(chosen) if case.tokens[i].pos == "NN"]
    context: set[int] = set()
    for p in hits:
        t = case.tokens[p].text_number if within == "text" else 0
        context.update(range(max(p - window, first[t]), p))
        context.update(range(p + 1, min(p + window, last[t]) + 1))
    context = (context - set(hits)) & chosen
    f = Counter(case.tokens[i].lemma for i in context)
    in_nodes = Counter(case.tokens[i].lemma for i in hits)
    marginal = Counter(case.tokens[i].lemma for i in chosen)
    answer = await case.client.get(
        "/api/v1/collocations",
        params={
            "corpus": case.corpus,
            "filter": filters,
            "q": '[pos="NN"]',
            "syntax": "cqp",
            "window": window,
            "within": within,
            "attribute": "lemma",
            "min_freq": 1,
            "limit": 100_000,
            "order": "f",
        },
    )
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert (found["tokens"], found["f1"], found["n"]) == (len(chosen), len(context), len(chosen) - len(hits))
    rows = {r["value"]: r for r in found["rows"]}
    assert {v: r["f"] for v, r in rows.items()} == dict(f)
    for value, row in rows.items():
        assert (row["marginal"], row["in_nodes"], row["f2"]) == (
            marginal[value],
            in_nodes[value],
            marginal[value] - in_nodes[value],
        ), value
        expected = len(context) * (marginal[value] - in_nodes[value]) / (len(chosen) - len(hits))
        assert row["expected"] == pytest.approx(expected, rel=1e-9), value


@pytest.mark.slow  # 1.8 s here (make quick leaves it out)
async def test_keywords_compare_the_two_subcorpora_counted_apart(case: Case) -> None:
    target, reference = case.inside(), case.inside(case.other)
    ours = Counter(case.tokens[i].lemma for i in target)
    theirs = Counter(case.tokens[i].lemma for i in reference)
    found = await case.get(
        "/api/v1/keywords", attribute="lemma", reference_filter=case.other, min=2, limit=1000, p=1.0, correction="none"
    )
    assert (found["tokens"], found["reference_tokens"]) == (len(target), len(reference))
    assert found["rows"]
    for row in found["rows"]:
        value = row["value"]
        assert (row["frequency"], row["reference_frequency"]) == (ours[value], theirs[value]), value
        assert row["per_million"] == pytest.approx(per_million(ours[value], len(target)), rel=1e-12)
        assert row["reference_per_million"] == pytest.approx(per_million(theirs[value], len(reference)), rel=1e-12)


async def test_an_ngram_list_counts_in_the_subcorpus(case: Case) -> None:
    inside = case.inside()
    chosen = set(inside)
    pairs = Counter(
        (case.tokens[i].word, case.tokens[i + 1].word)
        for i in inside
        if i + 1 in chosen and case.tokens[i + 1].text_number == case.tokens[i].text_number
    )
    found = await case.get("/api/v1/wordlist", attribute="word", n=2, limit=50)
    assert (found["tokens"], found["ngrams"]) == (len(inside), sum(pairs.values()))
    assert [r["frequency"] for r in found["rows"]] == sorted(pairs.values(), reverse=True)[:50]
    for row in found["rows"]:
        assert row["frequency"] == pairs[tuple(row["tokens"])]
        assert row["per_million"] == pytest.approx(per_million(row["frequency"], len(inside)), rel=1e-12)


async def test_a_trend_rates_each_year_in_the_subcorpus(case: Case) -> None:
    inside = case.inside()
    tokens: Counter[str] = Counter()
    hits: Counter[str] = Counter()
    for i in inside:
        year = case.tokens[i].text.get("year", "")
        tokens[year] += 1
        hits[year] += case.tokens[i].pos == "NN"
    found = await case.get("/api/v1/trend", q='[pos="NN"]', syntax="cqp", by="text_year")
    assert found["tokens"] == len(inside) and found["undated_tokens"] == tokens[""]
    [series] = found["series"]
    points = {p["period"]: p for p in series["points"] if p["tokens"]}
    assert set(points) == set(tokens) - {""}
    for year, point in points.items():
        assert (point["hits"], point["tokens"]) == (hits[year], tokens[year]), year
        assert point["per_million"] == pytest.approx(per_million(hits[year], tokens[year]), rel=1e-12)
    assert series["undated"] == hits[""]


async def test_a_comparison_of_two_subcorpora_counts_each_in_its_own(case: Case) -> None:
    first, second = case.inside(), case.inside(case.other)
    ours = Counter(case.tokens[i].lemma for i in first if case.tokens[i].pos == "JJ")
    theirs = Counter(case.tokens[i].lemma for i in second if case.tokens[i].pos == "JJ")
    found = await case.get(
        "/api/v1/compare",
        q='[pos="JJ"]',
        syntax="cqp",
        other_filter=case.other,
        by="lemma",
        min=1,
        p=1.0,
        correction="none",
    )
    assert (found["first"]["counted"], found["second"]["counted"]) == (sum(ours.values()), sum(theirs.values()))
    assert found["rows"]
    for row in found["rows"]:
        value = row["value"]
        assert (row["frequency"], row["other_frequency"]) == (ours[value], theirs[value]), value
        assert row["share"] == pytest.approx(ours[value] / sum(ours.values()), rel=1e-12)


async def test_a_word_sketch_counts_the_headword_in_the_subcorpus(case: Case) -> None:
    """The finding: the headword's ``frequency`` (and so each relation's ``share``) of the whole corpus."""
    inside = case.inside()
    nouns = Counter(case.tokens[i].lemma for i in inside if case.tokens[i].pos == "NN")
    lemmas = Counter(case.tokens[i].lemma for i in inside)
    headword, other = (word for word, _ in nouns.most_common(2))
    found = await case.get("/api/v1/sketch", headword=headword, relation=["modifier", "object_of"])
    assert (found["frequency"], found["tokens"]) == (lemmas[headword], len(inside))
    assert lemmas[headword] < sum(t.lemma == headword for t in case.tokens)  # not the corpus's
    for relation in found["relations"]:
        assert relation["share"] == round(relation["head_total"] / lemmas[headword], 6)
    assert any(relation["head_total"] for relation in found["relations"])
    difference = await case.get("/api/v1/sketchdiff", headword=headword, other=other, relation="modifier")
    assert (difference["frequency"], difference["other_frequency"]) == (lemmas[headword], lemmas[other])
    assert difference["tokens"] == len(inside)


# -- the node's counts in a subcorpus ---------------------------------------------------------------


def test_a_partition_counts_values_in_a_subcorpus_either_way(tricky_five: Partitioned) -> None:
    """``Chosen.frequencies`` reads the reverse index for a few values and the subcorpus's positions
    for many: both give each value's frequency in the partition's texts chosen, as counted here."""
    tokens = read_vrt(TRICKY_VRT)
    pid = tricky_five.ids[1]
    store = engine(tricky_five.registry, pid).store
    offset = next(p["offset"] for p in _partitions(tricky_five) if p["id"] == pid)
    mine = tokens[offset : offset + store.size]
    filters = [("text_genre", False, "news|reviews"), ("s_id", True, ".*1")]
    keep = chooses(["text_genre~news|reviews", "s_id!~.*1"])
    expected = Counter(t.lemma for t in mine if keep(t))
    searched = chosen(store, filters)
    assert searched.tokens == sum(expected.values()) > 0
    lemma = store.p_attribute("lemma")
    rare = [w for w, _ in expected.most_common()[-5:]] + ["no such lemma"]
    every = list(lemma.strings)
    for values in (rare, every):  # few: the index; every one: a pass over the subcorpus
        ids = [lemma.str2id(v) for v in values]
        assert searched.frequencies(lemma, ids) == [expected.get(v, 0) for v in values]


def _partitions(parts: Partitioned) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = json.loads(parts.manifest.read_text())["partitions"]
    return found
