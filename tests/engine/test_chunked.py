"""Evaluation range by range of start positions gives exactly the hits of evaluation all at once,
and a result larger than the engine keeps is still counted exactly."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowbird.core.wire import Strategy
from cowbird.engines import Context, EngineOptions, LimitExceeded
from cowbird.engines.native import NativeEngine
from cowbird.engines.results import Matches
from cowbird.query import parse_cqp
from tests.support import parity_queries

STRATEGIES: tuple[Strategy, ...] = ("standard", "shortest", "longest", "traditional")
SAMPLE_QUERIES = [
    '[pos="DT"]', '[pos="JJ.*"]* [pos="NN.*"]', '[pos="DT"]? [pos="NN"]', '[] [pos="NN"]', '[]{2,4}',
    '[pos="NN"] []{0,3} [pos="NN"]', '<s> []', '[] </s>', '<s> []{2,} </s>', '[pos="DT"] [] within s',
    'a:[pos="DT"] [] :: a.lemma="the"', '[pos="JJ"] @[pos="NN"]', '[pos="NN"] expand to s', '[]+ [word="\\."]',
    '[lemma="house"] | [pos="DT"] [pos="JJ"]', '[word="the"%c] []* [pos="NN"] within s',
]


def pairs(matches: Matches) -> list[tuple[int, int, int]]:
    return list(zip(matches.match.tolist(), matches.matchend.tolist(), matches.target.tolist(), strict=True))


@pytest.mark.parametrize("chunk", [1, 5, 13, 40])
def test_ranges_of_the_sample_corpus_give_the_same_hits(sample_registry: Path, chunk: int) -> None:
    whole = NativeEngine.open(sample_registry, "sample")
    ranged = NativeEngine.open(sample_registry, "sample", EngineOptions(chunk_positions=chunk))
    for query in SAMPLE_QUERIES:
        for strategy in STRATEGIES:
            ast = parse_cqp(query)
            assert pairs(ranged.evaluate(ast, strategy)) == pairs(whole.evaluate(ast, strategy)), (query, strategy)


@pytest.mark.slow
@pytest.mark.parametrize(("query_id", "query"), parity_queries())
def test_ranges_of_ewt_give_the_same_hits_as_a_whole(reference: Path, query_id: str, query: str) -> None:
    registry = reference / "cwb" / "registry"
    whole = NativeEngine.open(registry, "ewt")
    ranged = NativeEngine.open(registry, "ewt", EngineOptions(chunk_positions=17_000))
    ast = parse_cqp(query)
    for strategy in STRATEGIES:
        assert pairs(ranged.evaluate(ast, strategy)) == pairs(whole.evaluate(ast, strategy)), strategy


def test_more_hits_than_kept_are_counted_exactly(sample_registry: Path) -> None:
    engine = NativeEngine.open(sample_registry, "sample", EngineOptions(max_hits=10, chunk_positions=20))
    result = engine.run("[]")
    assert (result.total, result.held) == (93, 10)
    assert [hit.match for hit in result.hits(5, 5)] == [5, 6, 7, 8, 9]
    with pytest.raises(LimitExceeded, match="this query has 93 hits; the first 10 are kept"):
        result.hits(8, 5)
    with pytest.raises(LimitExceeded):
        result.kwic(50, 1, Context(), [], [])


def test_hopeless_work_is_refused_before_it_runs(tmp_path: Path) -> None:
    import time

    from cowbird.engines import QueryTooExpensive
    from cowbird.store import Encoder
    from tests.support import synthetic_options

    Encoder(synthetic_options(tmp_path)).run()
    engine = NativeEngine.open(tmp_path / "registry", "big", EngineOptions(work_seconds=0.5))
    started = time.perf_counter()
    for query in ("[]{500}", '[] []{0,400} [word="w7"] [word="w7"]', '[]{3,} [word="w7"] [word="w7"]'):
        with pytest.raises(QueryTooExpensive, match=r"would take at least [\d,]+ s \(the limit is 0.5 s\)"):
            engine.run(query)
    assert time.perf_counter() - started < 1.0
    assert engine.run('[word="w1"] []{0,5} [pos="P2"]').total > 0  # short repetitions are fine
    for hopeless in ('[] []{0,400} [pos="P9"]', '[]{3,} [word="zzz"]', '[word="zzz"]? []{3,} <s> [pos="P9"]'):
        assert engine.run(hopeless).total == 0  # a test that holds nowhere on every path: no work at all
    assert engine.run('[word="w1"] []* [pos="P2"] within s').total > 0


@pytest.mark.parametrize("first_range", [1, 3, 16])
def test_cut_read_range_by_range_gives_the_same_hits(
    sample_registry: Path, first_range: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cowbird.engines.native import engine as native_engine

    whole = NativeEngine.open(sample_registry, "sample")
    expected = {}
    for query in [q for q in SAMPLE_QUERIES if "expand" not in q]:  # cut comes before expand
        for cut in (1, 3, 7, 50):
            for strategy in STRATEGIES:
                expected[query, cut, strategy] = pairs(whole.evaluate(parse_cqp(f"{query} cut {cut}"), strategy))
    monkeypatch.setattr(native_engine, "CUT_FIRST_RANGE", first_range)
    for (query, cut, strategy), hits in expected.items():
        assert pairs(whole.evaluate(parse_cqp(f"{query} cut {cut}"), strategy)) == hits, (query, cut, strategy)
        assert len(hits) <= cut
