"""Word sketches through the front end (``GET /api/v1/sketch``) over ``tests/fixtures/tricky.vrt`` (Penn
tags and lemmas, as EWT) in one partition and in five: the same answer both ways, each relation's
counts equal to its instances counted here from its query's hits, logDice recomputed here, every
collocate's concordance link finding exactly its instances, downloads as files, subcorpora and
errors that say what was wrong.
(The counts against real CQP: ``tests/engine/test_sketches.py``.)"""

from __future__ import annotations

import io
import math
from collections import Counter
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pandas as pd
import pytest

from cowbird.engines import QueryEngine
from cowbird.frontend import CorpusConfig, FrontendSettings
from cowbird.frontend.corpora import load_corpus
from cowbird.frontend.settings import NodeAccess
from cowbird.node import NodeSettings
from cowbird.node import create_app as create_node
from cowbird.query import parse_cqp
from cowbird.query.sketch_grammar import load_grammar
from cowbird.serving.config import ConfigError
from tests.frontend.conftest import NODE_TOKEN, Partitioned, api_account, engine, ewt_client, front_client
from tests.frontend.conftest import TRICKY as CORPUS
from tests.sketch_counts import contexts, similar

pytestmark = pytest.mark.anyio

HEADWORDS = ["house", "market", "go", "good", "see"]


@pytest.fixture
async def sketch_one(tricky_one: Partitioned) -> AsyncIterator[httpx.AsyncClient]:
    async for c in ewt_client(tricky_one, CORPUS, sketch_grammar="penn"):
        yield c


@pytest.fixture
async def sketch_five(tricky_five: Partitioned) -> AsyncIterator[httpx.AsyncClient]:
    async for c in ewt_client(tricky_five, CORPUS, sketch_grammar="penn"):
        yield c


async def sketch(client: httpx.AsyncClient, headword: str, **params: Any) -> dict[str, Any]:
    answer = await client.get("/api/v1/sketch", params={"corpus": CORPUS, "headword": headword, **params})
    assert answer.status_code == 200, answer.text
    found: dict[str, Any] = answer.json()
    return found


def rows_of(found: dict[str, Any]) -> dict[str, list[tuple[str, int, int, float]]]:
    relations = found["relations"]
    return {r["name"]: [(c["value"], c["f"], c["total"], c["log_dice"]) for c in r["rows"]] for r in relations}


@pytest.mark.slow  # 2.3 s here (make quick leaves it out)
async def test_a_sketch_is_the_same_over_one_and_five_partitions(sketch_one: httpx.AsyncClient,
                                                                 sketch_five: httpx.AsyncClient) -> None:
    listed = (await sketch_one.get("/api/v1/corpora")).json()["data"][0]
    assert listed["sketches"] == [view.name for view in load_grammar("penn").views]
    for headword in HEADWORDS:
        one, five = await sketch(sketch_one, headword, limit=1000), await sketch(sketch_five, headword, limit=1000)
        assert rows_of(one) == rows_of(five)
        assert one["frequency"] == five["frequency"] and isinstance(one["frequency"], int) and one["frequency"] > 0
        assert sum(len(rows) for rows in rows_of(one).values()) > 0, headword
        assert five["complete"] is True and len(five["partitions"]) == 5


def instances(parts: Partitioned, query: str, genre: str | None = None) -> Counter[tuple[str, str]]:
    """A relation query's instances by (headword, collocate) lemma, counted here from the engine's hits
    on the one-partition corpus (every match: the traditional strategy), in the texts of ``genre``."""
    [pid] = parts.ids
    found = engine(parts.registry, pid)
    hits = found.evaluate(parse_cqp(query), "traditional", 500)
    lemma = found.store.p_attribute("lemma")
    genres = found.store.s_attribute("text_genre")
    pairs = set()
    for match, target, keyword in zip(hits.match.tolist(), hits.target.tolist(), hits.keywords.tolist(), strict=True):
        if genre is None or genres.value(int(genres.region_numbers([match])[0])) == genre:
            pairs.add((target, keyword))
    return Counter((lemma.cpos2str(t), lemma.cpos2str(k)) for t, k in pairs)


@pytest.mark.slow  # 1.1 s here (make quick leaves it out)
async def test_counts_equal_the_relations_instances_and_logdice(sketch_five: httpx.AsyncClient,
                                                                tricky_one: Partitioned) -> None:
    """f(x, R, y), f(x, R) and f(R, y) over five partitions as counted here from the hits of each
    relation's query on one, and logDice recomputed from them."""
    grammar = load_grammar("penn")
    for name in ("modifier", "object", "noun_modifier", "subject"):
        [query] = grammar.view(name).relation.queries
        pairs = instances(tricky_one, query)
        for headword in HEADWORDS:
            found = await sketch(sketch_five, headword, relation=name, limit=100_000)
            [relation] = found["relations"]
            f_x = sum(f for (h, _), f in pairs.items() if h == headword)
            assert relation["head_total"] == f_x
            assert relation["instances"] == sum(pairs.values())
            expected = {}
            for (h, c), f in pairs.items():
                if h == headword:
                    total = sum(n for (_, other), n in pairs.items() if other == c)
                    expected[c] = (f, total, 14 + math.log2(2 * f / (f_x + total)))
            got = {row["value"]: (row["f"], row["total"], row["log_dice"]) for row in relation["rows"]}
            assert set(got) == set(expected), (name, headword)
            for value, (f, total, score) in expected.items():
                assert got[value][:2] == (f, total) and got[value][2] == pytest.approx(score, abs=1e-4)


@pytest.mark.slow  # 2.2 s here (make quick leaves it out)
async def test_each_collocate_links_to_its_instances(sketch_five: httpx.AsyncClient) -> None:
    found = await sketch(sketch_five, "house", limit=5)
    checked = 0
    for relation in found["relations"]:
        for row in relation["rows"]:
            link = parse_qs(urlsplit(row["concordance"]).query)
            assert link["corpus"] == [CORPUS] and link["syntax"] == ["cqp"]
            answer = await sketch_five.get("/api/v1/query", params={"corpus": CORPUS, "q": link["q"][0],
                                                                    "syntax": "cqp", "limit": 0})
            assert answer.status_code == 200, answer.text
            # the link runs under the sketch's own strategy ((?traditional) ...): every instance is a hit
            assert link["q"][0].startswith("(?traditional) ")
            assert answer.json()["total"] == row["f"], (relation["name"], row)
            checked += 1
    assert checked >= 5


async def test_a_subcorpus_sketch_counts_its_texts_only(sketch_five: httpx.AsyncClient,
                                                       tricky_one: Partitioned) -> None:
    whole = await sketch(sketch_five, "house", relation="modifier", limit=1000)
    genres = (await sketch_five.get("/api/v1/subcorpus", params={"corpus": CORPUS, "values": "text_genre"})).json()
    genre = genres["values"][0]["value"]
    part = await sketch(sketch_five, "house", relation="modifier", limit=1000, filter=f"text_genre~{genre}")
    pairs = instances(tricky_one, load_grammar("penn").view("modifier").relation.queries[0], genre)
    assert {v: f for v, f, _, _ in rows_of(part)["modifier"]} == {c: f for (h, c), f in pairs.items() if h == "house"}
    assert part["relations"][0]["instances"] == sum(pairs.values())
    assert part["relations"][0]["instances"] < whole["relations"][0]["instances"]
    assert part["filters"] == [f"text_genre~{genre}"] and part["saved"] is False


@pytest.mark.slow  # 1.2 s here (make quick leaves it out)
async def test_a_sketch_downloads_as_files_with_provenance(sketch_five: httpx.AsyncClient) -> None:
    answer_json = await sketch(sketch_five, "house", limit=100_000)
    expected = rows_of(answer_json)
    labels = {r["name"]: r["label"] for r in answer_json["relations"]}  # as users read them (issue 65)
    for format in ("tsv", "csv", "xlsx"):
        answer = await sketch_five.get("/api/v1/sketch", params={"corpus": CORPUS, "headword": "house",
                                                                 "format": format, "provenance": 1})
        assert answer.status_code == 200, answer.text
        if format == "xlsx":
            frame = pd.read_excel(io.BytesIO(answer.content), sheet_name=0, keep_default_na=False)
        else:
            text = answer.content.decode("utf-8")
            skip = [i for i, line in enumerate(text.splitlines()) if line.startswith("#")]
            assert any("word sketch" in text.splitlines()[i] for i in skip)
            frame = pd.read_csv(io.StringIO(text), sep="\t" if format == "tsv" else ",", skiprows=len(skip),
                                keep_default_na=False)  # RFC 4180 quoting, as the files are written
        got: dict[str, list[tuple[str, int, int, float]]] = {name: [] for name in expected}
        for relation, value, f, total, score in zip(frame["relation"], frame["collocate"], frame["f"], frame["total"],
                                                    frame["log_dice"], strict=True):
            got[str(relation)].append((str(value), int(f), int(total), float(score)))
        assert got == expected
        listed = {str(r): label for r, label in zip(frame["relation"], frame["label"], strict=True)}
        assert listed and listed.items() <= labels.items(), format  # each relation with rows, by its label


@pytest.mark.slow  # 1.5 s here (make quick leaves it out)
async def test_sketch_errors_say_what_was_wrong(sketch_five: httpx.AsyncClient, five: httpx.AsyncClient) -> None:
    answer = await sketch_five.get("/api/v1/sketch", params={"corpus": CORPUS, "headword": "house",
                                                             "relation": "objekt"})
    assert answer.status_code == 400 and "no such relation" in answer.json()["detail"]
    assert "object_of" in answer.json()["detail"]
    answer = await five.get("/api/v1/sketch", params={"corpus": CORPUS, "headword": "house"})
    assert answer.status_code == 404 and "no sketch_grammar" in answer.json()["detail"]
    unknown = await sketch(sketch_five, "Zyzzyva")
    assert unknown["frequency"] == 0 and all(not r["rows"] for r in unknown["relations"])
    answer = await sketch_five.get("/api/v1/sketch", params={"corpus": CORPUS})
    assert answer.status_code == 400 and "headword" in answer.text


def test_a_grammar_that_does_not_fit_the_corpus_stops_the_start(tricky_one: Partitioned, tmp_path: Path) -> None:
    grammar = tmp_path / "mine.wsdef"
    grammar.write_text("*STRUCTLIMIT s\n=modifier\n  2:[tag=\"JJ.*\"] 1:[pos=\"NN.*\"]\n", encoding="utf-8")
    config = CorpusConfig(name=CORPUS, manifest=tricky_one.manifest, nodes={p: ["http://n"] for p in tricky_one.ids},
                          sketch_grammar=str(grammar))
    with pytest.raises(ConfigError, match=r"mine.wsdef:3:1: relation modifier: corpus tricky has no attribute 'tag'"):
        load_corpus(config)
    grammar.write_text("=modifier\n  2:[pos=\"JJ.*\"] 1:[pos=\"NN.*\"\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"mine.wsdef:2:\d+: not a CQP query"):
        load_corpus(config)


@pytest.mark.slow  # 1.4 s here (make quick leaves it out)
async def test_a_sketch_difference_compares_two_sketches(sketch_five: httpx.AsyncClient) -> None:
    """Shared and exclusive collocates per relation, each with both words' counts and logDice as their
    own sketches give them, ordered by the difference; as a file too."""
    first = rows_of(await sketch(sketch_five, "house", limit=100_000))
    second = rows_of(await sketch(sketch_five, "market", limit=100_000))
    answer = await sketch_five.get("/api/v1/sketchdiff", params={"corpus": CORPUS, "headword": "house",
                                                                 "other": "market", "limit": 100_000})
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert found["frequency"] > 0 and found["other_frequency"] > 0
    compared = 0
    for relation in found["relations"]:
        mine = {v: (f, ld) for v, f, _, ld in first[relation["name"]]}
        theirs = {v: (f, ld) for v, f, _, ld in second[relation["name"]]}
        assert {r["value"] for r in relation["shared"]} == mine.keys() & theirs.keys()
        assert {r["value"] for r in relation["only_first"]} == mine.keys() - theirs.keys()
        assert {r["value"] for r in relation["only_second"]} == theirs.keys() - mine.keys()
        for group in ("shared", "only_first", "only_second"):
            for row in relation[group]:
                a, b = mine.get(row["value"], (0, None)), theirs.get(row["value"], (0, None))
                assert (row["f"], row["log_dice"], row["other_f"], row["other_log_dice"]) == (*a, *b)
                assert row["difference"] == pytest.approx((a[1] or 0) - (b[1] or 0), abs=1e-3)
                assert (row["concordance"] is None) == (a[1] is None)
                compared += 1
        differences = [r["difference"] for r in relation["shared"]]
        assert differences == sorted(differences, reverse=True)
    assert compared > 10
    answer = await sketch_five.get("/api/v1/sketchdiff", params={"corpus": CORPUS, "headword": "house",
                                                                 "other": "market", "format": "csv"})
    frame = pd.read_csv(io.StringIO(answer.text), keep_default_na=False)
    assert set(frame["group"]) == {"shared", "only_first", "only_second"} and len(frame) == compared
    same = await sketch_five.get("/api/v1/sketchdiff", params={"corpus": CORPUS, "headword": "house",
                                                               "other": "house"})
    assert same.status_code == 400 and "another word" in same.json()["detail"]


@pytest.mark.slow  # 1.3 s here (make quick leaves it out)
async def test_a_thesaurus_entry_lists_the_most_similar_words(sketch_five: httpx.AsyncClient,
                                                              tricky_one: Partitioned) -> None:
    """Over five partitions the words and scores a brute-force count gives on one (every word scored
    against every other from the relations' instances counted here), each linking to its sketch."""
    grammar = load_grammar("penn")
    # the relations of one query, not symmetric (all of them: tests/engine/test_sketches.py)
    single = [view for view in grammar.views if len(view.relation.queries) == 1 and not view.relation.symmetric]
    views = []
    for view in single:
        pairs = instances(tricky_one, view.relation.queries[0])
        views.append((view.name, Counter({(c, h): n for (h, c), n in pairs.items()}) if view.swapped else pairs))
    expected = similar(contexts(views), "house")
    answer = await sketch_five.get("/api/v1/thesaurus", params={"corpus": CORPUS, "headword": "house",
                                                                "relation": [v.name for v in single],
                                                                "limit": 10})
    assert answer.status_code == 200, answer.text
    found = answer.json()
    assert [(r["word"], r["shared"]) for r in found["rows"]] == [(w, n) for w, _, n in expected[:10]]
    assert [r["score"] for r in found["rows"]] == pytest.approx([s for _, s, _ in expected[:10]], abs=1e-6)
    assert found["candidates"] == len(expected) and 0 < found["rows"][0]["score"] < 1
    link = await sketch_five.get(found["rows"][0]["sketch"])
    assert link.status_code == 200 and link.json()["headword"] == found["rows"][0]["word"]
    assert [r["name"] for r in link.json()["relations"]] == [v.name for v in single]
    download = await sketch_five.get("/api/v1/thesaurus", params={"corpus": CORPUS, "headword": "house",
                                                                  "relation": [v.name for v in single],
                                                                  "format": "tsv"})
    frame = pd.read_csv(io.StringIO(download.text), sep="\t", quoting=3, keep_default_na=False)
    assert list(frame["word"])[:10] == [w for w, _, _ in expected[:10]]


def _liar(node: Any, lie: Callable[[dict[str, Any]], dict[str, Any]] | None,
          calls: list[tuple[str, str | None]] | None = None) -> httpx.MockTransport:
    """A node that answers every /v1/sketch call with ``lie`` applied to the real node's answer (None:
    as it is), noting each call's path and priority header in ``calls``."""

    async def handle(request: httpx.Request) -> httpx.Response:
        if calls is not None:
            calls.append((request.url.path, request.headers.get("x-cowbird-priority")))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=node), base_url="http://node") as inner:
            real = await inner.request(request.method, request.url.path, params=request.url.params,
                                       content=await request.aread(), headers=dict(request.headers))
        if lie is not None and request.url.path == "/v1/sketch" and real.status_code == 200:
            return httpx.Response(200, json=lie(real.json()))
        return httpx.Response(real.status_code, content=real.content, headers=real.headers)

    return httpx.MockTransport(handle)


def _front(parts: Partitioned, name: str, liar: str, lie: Callable[[dict[str, Any]], dict[str, Any]] | None,
           calls: list[tuple[str, str | None]] | None = None) -> AsyncIterator[httpx.AsyncClient]:
    """A front end over ``parts`` whose partition ``liar`` is served through :func:`_liar`."""
    engines: dict[str, QueryEngine] = {pid: engine(parts.registry, pid) for pid in parts.ids}
    node = create_node(NodeSettings(registry=parts.registry, token=NODE_TOKEN), engines=engines)
    corpus = CorpusConfig(name=CORPUS, title="Tricky", manifest=parts.manifest, sketch_grammar="penn",
                          nodes={pid: [f"http://node-{'liar' if pid == liar else 'a'}"] for pid in parts.ids})
    accounts: dict[str, Any] = {"database_file": api_account(parts.registry.parent / f"accounts-{name}.sqlite3")}
    settings = FrontendSettings(corpora=[corpus], nodes=NodeAccess(token=NODE_TOKEN), allowed_hosts=["front"],
                                **accounts)
    return front_client(settings, {"node-a": node}, {"node-liar": _liar(node, lie, calls)})


def _each_relation(change: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda answer: {**answer, "relations": [change(r) if r["values"] else r for r in answer["relations"]]}


SKETCH_LIES: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "counts multiplied": _each_relation(lambda r: {**r, "f": [f * 1000 for f in r["f"]],
                                                   "head_total": r["head_total"] * 1000}),
    "rows repeated": _each_relation(lambda r: {**r, "values": r["values"] * 2, "f": r["f"] * 2,
                                               "totals": r["totals"] * 2, "head_total": r["head_total"] * 2}),
    "a relation left out": lambda answer: {**answer, "relations": answer["relations"][1:]},
    "another partition": lambda answer: {**answer, "partition": "elsewhere"},
    "frequency beyond its size": lambda answer: {**answer, "frequency": answer["size"] + 1},
}


@pytest.mark.slow  # 4.1 s here (make quick leaves it out)
async def test_a_node_that_lies_about_a_sketch_is_a_failed_partition(tricky_five: Partitioned) -> None:
    """Impossible sketch rows from one node (counts beyond their totals, a collocate twice, a relation
    missing, another partition's answer): its partition is named as failed on the sketch, the sketch
    difference and the thesaurus, and no answer that says it is complete counts them."""
    liar = tricky_five.ids[2]
    telling: list[str] = []

    def lie(answer: dict[str, Any]) -> dict[str, Any]:
        return SKETCH_LIES[telling[-1]](answer)

    async for client in _front(tricky_five, "lies", liar, lie):
        for told in SKETCH_LIES:
            telling.append(told)
            for route, params in (("/api/v1/sketch", {"headword": "house"}),
                                  ("/api/v1/sketchdiff", {"headword": "house", "other": "market"}),
                                  ("/api/v1/thesaurus", {"headword": "house"})):
                answer = await client.get(route, params={"corpus": CORPUS, **params})
                assert answer.status_code == 200, (told, route, answer.text)
                body = answer.json()
                assert body["complete"] is False and body["failed"] == [liar], (told, route, body["failed"])
                [status] = [p for p in body["partitions"] if p["id"] == liar]
                assert status["status"] == "failed", (told, route)
                assert "refused" in status["error"] or "not a valid" in status["error"], (told, route, status)


@pytest.mark.slow  # 2.6 s here (make quick leaves it out)
async def test_sketches_are_background_work_beside_a_preview(tricky_five: Partitioned) -> None:
    """A sketch, a sketch difference and a thesaurus entry ask the nodes as background work (a
    preview's interactive turn is never theirs); a preview beside them is interactive."""
    calls: list[tuple[str, str | None]] = []
    async for client in _front(tricky_five, "priority", tricky_five.ids[0], None, calls):
        for route, params in (("/api/v1/sketch", {"headword": "house"}),
                              ("/api/v1/sketchdiff", {"headword": "house", "other": "market"}),
                              ("/api/v1/thesaurus", {"headword": "house"})):
            answer = await client.get(route, params={"corpus": CORPUS, **params})
            assert answer.status_code == 200, route
        assert {priority for path, priority in calls if path == "/v1/sketch"} == {"background"}
        before = len(calls)
        preview = await client.get("/api/v1/query", params={"corpus": CORPUS, "q": "house"})
        assert preview.status_code == 200 and len(calls) > before
        assert {priority for _, priority in calls[before:]} == {None}


async def test_a_headword_typed_decomposed_is_the_corpus_word(sketch_five: httpx.AsyncClient) -> None:
    # "Mu" + U+0308 (as a macOS clipboard or a PDF gives it) is the corpus's NFC "Müller", as in a query
    composed = await sketch(sketch_five, "M\u00fcller")
    decomposed = await sketch(sketch_five, "Mu\u0308ller")
    assert composed["frequency"] > 0 and composed["headword"] == "M\u00fcller"
    assert {k: v for k, v in decomposed.items() if k != "elapsed_ms"} == {
        k: v for k, v in composed.items() if k != "elapsed_ms"}
    both = ("Mu\u0308ller", "M\u00fcller")
    asked = [("/api/v1/sketchdiff", {"headword": "S\u00f8ren", "other": word}) for word in both]
    asked += [("/api/v1/thesaurus", {"headword": word}) for word in both]
    answers = [await sketch_five.get(path, params={"corpus": CORPUS, **params}) for path, params in asked]
    assert [a.status_code for a in answers] == [200] * 4, [a.text for a in answers]
    same = [{k: v for k, v in a.json().items() if k != "elapsed_ms"} for a in answers]
    assert same[0] == same[1] and same[2] == same[3] and same[1]["other"] == same[3]["headword"] == "M\u00fcller"
