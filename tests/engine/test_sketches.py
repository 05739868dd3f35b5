"""Word sketches against independent counts: every relation of the shipped grammars run by real CQP
(``tabulate`` of each query's target and keyword: positions and lemmas), its instances (distinct
position pairs; in a symmetric relation pairs in either order, counted for both words, once when their
lemmas are the same) counted in plain Python here, and logDice
recomputed from those counts — compared with cowbird's sketches over EWT in one partition and in
five (counted from the queries, and read from tables ``cowbird sketches build`` saved), and over
GERMAPARL with the STTS grammar."""

from __future__ import annotations

import asyncio
import math
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from cowbird.core.manifest import Manifest
from cowbird.core.search import CheckedQuery, Search, WordSketch
from cowbird.engines import EngineOptions
from cowbird.engines.native import NativeEngine
from cowbird.node.local import LocalCorpus, LocalPartitions
from cowbird.node.sketch_cli import count_relation
from cowbird.query import parse_cqp
from cowbird.query.sketch_grammar import MATCHING_STRATEGY, SketchGrammar, load_grammar
from cowbird.store import Encoder
from tests.realcqp import RealCqp
from tests.sketch_counts import contexts, similar
from tests.support import ROOT, ewt_options, reference_cqp, require_reference

JUDGE_SECONDS = 120.0  # what a command of the judge (tests/engine/conftest.py) may take

HEADWORDS = {
    "penn": ["house", "make", "time", "good", "say", "people", "go"],
    "ud": ["house", "make", "time", "good"],
    "stts": ["Regierung", "Frage", "Antrag", "neu", "sagen", "Land"],
}
"""Headwords whose sketches are compared in full (every relation, every collocate)."""

Pairs = dict[str, Counter[tuple[str, str]]]
Expected = dict[str, dict[str, tuple[int, int, float]]]
"""Per relation as the sketch shows it, each collocate's (f, total, logDice)."""


COUNTED: dict[tuple[str, str], Pairs] = {}
"""CQP's counts by corpus and grammar, counted once for the tests of this module."""


def cqp_instances(judge: RealCqp, grammar: SketchGrammar) -> Pairs:
    """Each relation's instances by (headword, collocate) lemma, from real CQP's tabulate (every match:
the traditional strategy)."""
    known = COUNTED.get((judge.corpus, grammar.name))
    if known is not None:
        return known
    counted: Pairs = {}
    for relation in grammar.relations:
        pairs: dict[tuple[int, int], tuple[str, str]] = {}
        for query in relation.queries:
            out = judge.run(f"set MatchingStrategy {MATCHING_STRATEGY};\nA = {query};\n"
                            f"tabulate A target, keyword, target {grammar.attribute}, keyword {grammar.attribute};")
            for line in out.splitlines():
                head, coll, head_value, coll_value = line.split("\t")
                if int(head) < 0 or int(coll) < 0:
                    continue
                if relation.symmetric and int(coll) < int(head):  # one instance, whichever way round found
                    head, coll, head_value, coll_value = coll, head, coll_value, head_value
                pairs[(int(head), int(coll))] = (head_value, coll_value)
        counted[relation.name] = Counter(pairs.values())
        if relation.symmetric:  # each instance in both words' rows: one row, and once, when both are the same
            counted[relation.name] += Counter({(c, h): n for (h, c), n in counted[relation.name].items() if h != c})
    COUNTED[(judge.corpus, grammar.name)] = counted
    return counted


def expected_sketch(counted: Pairs, grammar: SketchGrammar, headword: str) -> Expected:
    """Per view, each collocate's (f, total, logDice) for ``headword``, computed here from CQP's counts."""
    sketch: Expected = {}
    for view in grammar.views:
        pairs = counted[view.relation.name]
        if view.swapped:
            pairs = Counter({(coll, head): n for (head, coll), n in pairs.items()})
        f_x = sum(n for (head, _), n in pairs.items() if head == headword)
        totals: Counter[str] = Counter()
        for (_, coll), n in pairs.items():
            totals[coll] += n
        sketch[view.name] = {coll: (n, totals[coll], 14 + math.log2(2 * n / (f_x + totals[coll])))
                             for (head, coll), n in pairs.items() if head == headword}
    return sketch


def cowbird_sketch(registry: Path, ids: list[str], corpus: LocalCorpus | None, grammar: SketchGrammar,
                   headword: str) -> WordSketch:
    partitions = LocalPartitions.open(registry, ids)
    if corpus is None:
        corpus = LocalCorpus.of_engine(ids[0], partitions.engine(ids[0]))
    views = list(grammar.views)
    relations = [[CheckedQuery.of(parse_cqp(query)) for query in view.relation.queries] for view in views]
    search = Search(partitions, corpus, relations[0][0])
    _, found = asyncio.run(search.sketch(headword, grammar.attribute, views, relations))
    return found


def assert_equal(found: WordSketch, expected: Expected, headword: str) -> None:
    assert [r.name for r in found.relations] == list(expected)
    for relation in found.relations:
        want = expected[relation.name]
        got = {c.value: (c.f, c.total, c.log_dice) for c in relation.collocates}
        assert set(got) == set(want), (headword, relation.name, set(got) ^ set(want))
        for value, (f, total, score) in want.items():
            assert got[value][:2] == (f, total), (headword, relation.name, value, got[value], want[value])
            assert got[value][2] == pytest.approx(score, abs=1e-9)
        assert relation.head_total == sum(f for f, _, _ in want.values())
        scores = [c.log_dice for c in relation.collocates]
        assert scores == sorted(scores, reverse=True)  # the most salient first


@pytest.fixture(scope="module")
def ewt_five(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """EWT in five partitions: the registry and the manifest."""
    base = tmp_path_factory.mktemp("ewt-five")
    result = Encoder(ewt_options(base / "data", base / "registry" / "ewt", partition_tokens=60_000)).run()
    assert result.manifest is not None and len(result.partitions) == 5
    return base / "registry", result.manifest


@pytest.mark.parametrize("grammar_name", ["penn", "ud"])
@pytest.mark.slow  # 10.7 s here (make quick leaves it out)
def test_word_sketches_on_ewt_equal_real_cqps_counts(judge: RealCqp, ewt_five: tuple[Path, Path],
                                                     grammar_name: str) -> None:
    """In one partition and in five, counted from the queries: every relation's collocates of each
    headword with the frequencies and totals real CQP's hits give, and logDice recomputed from them."""
    grammar = load_grammar(grammar_name)
    counted = cqp_instances(judge, grammar)
    assert sum(counted["modifier" if grammar_name == "penn" else "modifier"].values()) > 8000
    registry, manifest_file = ewt_five
    manifest = Manifest.load(manifest_file)
    spread = LocalCorpus.of_manifest(manifest)
    ids = [p.id for p in manifest.partitions]
    for headword in HEADWORDS[grammar_name]:
        expected = expected_sketch(counted, grammar, headword)
        assert sum(len(rows) for rows in expected.values()) > 3, headword  # a headword with a sketch
        one = cowbird_sketch(require_reference() / "cwb" / "registry", ["ewt"], None, grammar, headword)
        assert_equal(one, expected, headword)
        five = cowbird_sketch(registry, ids, spread, grammar, headword)
        assert_equal(five, expected, headword)
        assert five.frequency == one.frequency > 0 and not one.saved and not five.saved


@pytest.mark.slow  # 6.9 s here (make quick leaves it out)
def test_saved_tables_answer_as_the_queries_do(judge: RealCqp, ewt_five: tuple[Path, Path]) -> None:
    """``cowbird sketches build`` saves a table per relation and partition; a node then reads them
    (saved) and answers what it counted from the queries; a second build keeps them, and ``cowbird
    info`` lists them."""
    registry, manifest_file = ewt_five
    manifest = Manifest.load(manifest_file)
    grammar = load_grammar("penn")
    command = [sys.executable, "-m", "cowbird", "sketches", "build", "-r", str(registry), "--grammar", "penn",
               "--manifest", str(manifest_file)]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert f"built {5 * len(grammar.relations)} tables, kept 0" in done.stdout
    again = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    assert f"built 0 tables, kept {5 * len(grammar.relations)}" in again.stdout
    info = subprocess.run([sys.executable, "-m", "cowbird", "info", "-r", str(registry), manifest.partitions[0].id],
                          cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert f"word sketch tables: {len(grammar.relations)} (penn)" in info and "penn/modifier" in info
    counted = cqp_instances(judge, grammar)
    spread = LocalCorpus.of_manifest(manifest)
    for headword in ("house", "make"):
        found = cowbird_sketch(registry, [p.id for p in manifest.partitions], spread, grammar, headword)
        assert found.saved
        assert_equal(found, expected_sketch(counted, grammar, headword), headword)


@pytest.mark.slow  # 2.1 s here (make quick leaves it out)
def test_word_sketches_on_german_equal_real_cqps_counts() -> None:
    """The STTS grammar on GERMAPARL (German lemmas, umlauts in relation names and values)."""
    germaparl = require_reference() / "germaparl" / "registry"
    judge = RealCqp(reference_cqp(), germaparl, "GERMAPARL1386", 120)
    try:
        grammar = load_grammar("stts")
        counted = cqp_instances(judge, grammar)
    finally:
        judge.close()
    for headword in HEADWORDS["stts"]:
        expected = expected_sketch(counted, grammar, headword)
        assert sum(len(rows) for rows in expected.values()) > 3, headword
        assert_equal(cowbird_sketch(germaparl, ["germaparl1386"], None, grammar, headword), expected, headword)


def expected_thesaurus(counted: Pairs, grammar: SketchGrammar, headword: str, limit: int) -> list[tuple[str, float]]:
    """Every word's similarity to ``headword`` by brute force over all contexts, the ``limit`` most similar."""
    views = [(view.name, Counter({(c, h): n for (h, c), n in counted[view.relation.name].items()})
              if view.swapped else counted[view.relation.name]) for view in grammar.views]
    return [(word, score) for word, score, _ in similar(contexts(views), headword)[:limit]]


@pytest.mark.slow  # 9.2 s here (make quick leaves it out)
def test_the_thesaurus_equals_a_brute_force_count_from_real_cqp(judge: RealCqp,
                                                                ewt_five: tuple[Path, Path]) -> None:
    """The most similar words and their scores over five partitions, against every word's score
    computed here from real CQP's counts."""
    grammar = load_grammar("penn")
    counted = cqp_instances(judge, grammar)
    registry, manifest_file = ewt_five
    manifest = Manifest.load(manifest_file)
    partitions = LocalPartitions.open(registry, [p.id for p in manifest.partitions])
    views = list(grammar.views)
    relations = [[CheckedQuery.of(parse_cqp(query)) for query in view.relation.queries] for view in views]
    search = Search(partitions, LocalCorpus.of_manifest(manifest), relations[0][0])
    for headword in ("house", "car", "good", "time"):
        _, found = asyncio.run(search.thesaurus(headword, grammar.attribute, views, relations, limit=15))
        expected = expected_thesaurus(counted, grammar, headword, 15)
        assert [s.word for s in found.similar] == [w for w, _ in expected], headword
        assert [s.score for s in found.similar] == pytest.approx([score for _, score in expected], abs=1e-12)
        assert found.candidates > 15


def test_a_node_that_cannot_keep_a_relations_hits_says_to_build_the_tables(tmp_path: Path) -> None:
    from cowbird.core.errors import LimitExceeded
    from cowbird.node.local import command_line_settings

    registry = require_reference() / "cwb" / "registry"
    settings = command_line_settings(registry, "native").model_copy(update={"max_query_hits": 1000})
    partitions = LocalPartitions.open(registry, ["ewt"], settings=settings)
    grammar = load_grammar("penn")
    views = list(grammar.views)[:1]
    search = Search(partitions, LocalCorpus.of_engine("ewt", partitions.engine("ewt")),
                    CheckedQuery.of(parse_cqp(views[0].relation.queries[0])))
    with pytest.raises(LimitExceeded, match=r"10,103 hits on partition ewt.*cowbird sketches build"):
        asyncio.run(search.sketch("house", "lemma", views, [[CheckedQuery.of(parse_cqp(query))
                                                            for query in views[0].relation.queries]]))


@pytest.mark.slow  # 1.3 s here (make quick leaves it out)
def test_a_build_counted_in_small_pieces_equals_real_cqps_counts(judge: RealCqp) -> None:
    """``cowbird sketches build`` counts a relation piece by piece of its queries' hits (memory follows
    the table, not the hits): in pieces of 9,973 start positions over EWT (26 of them, the queries of a
    relation taken in turns, pairs found in two pieces counted once), every relation's table equals
    real CQP's instances by lemma pair."""
    engine = NativeEngine.open(require_reference() / "cwb" / "registry", "ewt", EngineOptions(chunk_positions=9_973))
    grammar = load_grammar("penn")
    counted = cqp_instances(judge, grammar)
    lemmas = engine.store.p_attribute(grammar.attribute)
    for relation in grammar.relations:
        table = count_relation(engine, [parse_cqp(q) for q in relation.queries], grammar.attribute,
                               relation.symmetric)
        names = lemmas.string_array
        got = Counter({(str(names[h]), str(names[c])): int(n)
                       for h, c, n in zip(table.heads.tolist(), table.colls.tolist(), table.counts.tolist(),
                                          strict=True)})
        assert got == counted[relation.name], relation.name
        assert table.instances == sum(counted[relation.name].values())
