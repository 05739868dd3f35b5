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


@pytest.mark.slow
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
    from cowbird.engines import QueryTooExpensive
    from cowbird.store import Encoder
    from tests.support import synthetic_options

    Encoder(synthetic_options(tmp_path)).run()
    engine = NativeEngine.open(tmp_path / "registry", "big", EngineOptions(work_seconds=0.5))
    # refused on what stepping would cost, not after running out of its 0.5 s (that is QueryTimeout)
    for query in ('[] []{0,400} [word="w7"] [word="w7"]', '[]{3,} [word="w7"] [word="w7"]'):
        with pytest.raises(QueryTooExpensive, match=r"would take at least [\d,]+ s \(the limit is 0.5 s\)"):
            engine.run(query)
    assert engine.run('[word="w1"] []{0,5} [pos="P2"]').total > 0  # short repetitions are fine
    # a fixed chain is not stepped (its candidates are its matches): no work to refuse
    assert engine.run("[]{500}").total == engine.size - 499
    for hopeless in ('[] []{0,400} [pos="P9"]', '[]{3,} [word="zzz"]', '[word="zzz"]? []{3,} <s> [pos="P9"]'):
        assert engine.run(hopeless).total == 0  # a test that holds nowhere on every path: no work at all
    assert engine.run('[word="w1"] []* [pos="P2"] within s').total > 0


@pytest.mark.parametrize("first_range", [1, 3, 16])
@pytest.mark.slow  # 1.8 s here (make quick leaves it out)
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


@pytest.mark.parametrize("first_range", [1, 3, 16])
def test_the_first_hits_are_the_first_hits_of_the_whole_evaluation(
    sample_registry: Path, first_range: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``NativeEngine.first`` reads the corpus from its start (a few positions, then twice as many each
    time) and stops once it has the hits wanted: they are exactly the first hits of the whole
    evaluation, and its total is a lower bound that says whether it is the count."""
    from cowbird.engines.native import engine as native

    monkeypatch.setattr(native, "FIRST_RANGE", first_range)
    monkeypatch.setattr(native, "FIRST_WHOLE", first_range)
    engine = NativeEngine.open(sample_registry, "sample", EngineOptions(chunk_positions=40))
    stopped = 0
    for query in SAMPLE_QUERIES:
        for strategy in STRATEGIES:
            whole = engine.run(query, strategy)
            for wanted in (1, 4, 30):
                first, exact = engine.first(query, wanted, strategy)
                held = first.hits(0, min(wanted, first.total))
                assert held == whole.hits(0, min(wanted, whole.total)), (query, strategy, wanted)
                assert min(wanted, whole.total) <= first.total <= whole.total
                if exact:
                    assert first.total == whole.total
                else:
                    stopped += 1
                    assert first.total >= wanted
    assert stopped > 20  # many of these stopped early: the test reads ranges, not whole evaluations


def test_the_first_hits_of_queries_not_read_in_ranges_are_counted_whole(sample_registry: Path) -> None:
    engine = NativeEngine.open(sample_registry, "sample", EngineOptions(chunk_positions=40))
    for query in ('[pos="DT"] cut 3', 'MU(meet [pos="DT"] [pos="NN"] s)', '[word="house"]'):
        first, exact = engine.first(query, 1)
        assert exact and first.total == engine.run(query).total, query


@pytest.mark.slow
@pytest.mark.parametrize(("query_id", "query"), parity_queries())
def test_the_first_hits_of_ewt_are_those_of_the_whole_evaluation(
    reference: Path, query_id: str, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cowbird.engines.native import engine as native

    monkeypatch.setattr(native, "FIRST_RANGE", 2_000)
    monkeypatch.setattr(native, "FIRST_WHOLE", 2_000)
    engine = NativeEngine.open(reference / "cwb" / "registry", "ewt", EngineOptions(chunk_positions=17_000))
    whole = engine.run(query)
    first, exact = engine.first(query, 100)
    assert first.hits(0, min(100, first.total)) == whole.hits(0, min(100, whole.total))
    assert first.total == whole.total if exact else 100 <= first.total <= whole.total


@pytest.mark.slow  # a wall-clock bound, generous: 10 s for an estimate that stops after ESTIMATE_SECONDS
def test_an_estimate_of_a_hopeless_query_stops_at_its_own_time(tmp_path: Path) -> None:
    """An estimate is asked before a query runs and as the user types: ``[]{3,} []{500}`` took the
    front end's whole tenth of the time limit (12 s) on a 20,000-token partition, which then failed.
    It stops after ESTIMATE_SECONDS with what it read by then — no hits at all when it read nothing
    (it did not before wide repetitions read only their live states' columns) — and a time of at
    least ESTIMATE_SECONDS."""
    import time

    from cowbird.engines.native.engine import ESTIMATE_SECONDS
    from cowbird.store import Encoder
    from tests.support import synthetic_options

    Encoder(synthetic_options(tmp_path)).run()
    engine = NativeEngine.open(tmp_path / "registry", "big")
    started = time.perf_counter()
    hopeless = engine.estimate("[]{3,} []{500}")
    took = time.perf_counter() - started
    assert not hopeless.exact
    assert hopeless.hits is None and hopeless.sampled == 0.0 or hopeless.hits is not None and 0 < hopeless.sampled < 1
    assert hopeless.seconds is not None and ESTIMATE_SECONDS <= hopeless.seconds and took < ESTIMATE_SECONDS + 10.0
    assert engine.estimate("[]{500}").hits == engine.size - 499  # a fixed chain is counted, not given up


def test_an_estimate_counts_cheap_queries_and_samples_the_others(
    sample_registry: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``NativeEngine.estimate``: a query with few candidates is counted outright (exact); others are
    evaluated on a few ranges spread over the partition and scaled up; a cut query is the query
    without it, stopped after its hits; MU and TAB are not estimated."""
    from cowbird.engines.native import engine as native

    engine = NativeEngine.open(sample_registry, "sample")
    cheap = engine.estimate('[word="house"]')
    assert (cheap.hits, cheap.exact, cheap.sampled) == (engine.run('[word="house"]').total, True, 1.0)
    assert cheap.seconds is not None and cheap.seconds >= 0
    few = engine.estimate('[word="house"] cut 1000')  # fewer hits than the cut: the query's own estimate
    assert (few.hits, few.exact) == (cheap.hits, True)
    monkeypatch.setattr(native, "ESTIMATE_RANGE", 8)
    monkeypatch.setattr(native, "ESTIMATE_WHOLE", 2)
    every = engine.estimate("[]")
    assert not every.exact and every.hits == engine.size
    assert every.sampled == (4 + 8 + 4 + 8) / engine.size  # ranges of half and whole width, taking turns
    nouns = engine.estimate('[pos="NN.*"]')
    real = engine.run('[pos="NN.*"]').total
    assert nouns.hits is not None and real / 3 <= nouns.hits <= real * 3 and nouns.candidates == real
    assert engine.estimate('MU(meet [pos="DT"] [pos="NN"] s)').hits is None
    cut = engine.estimate('[pos="DT"] cut 3')  # the query without the cut, stopped after 3 hits
    assert cut.hits == 3 and not cut.exact and cut.seconds is not None and cut.seconds >= 0


@pytest.mark.parametrize("chunk", [1, 7, 40])
@pytest.mark.slow  # 1.8 s here (make quick leaves it out)
def test_a_stream_gives_the_hits_in_pieces_each_with_a_floor(sample_registry: Path, chunk: int) -> None:
    """``stream``: the pieces joined are the whole evaluation's hits, and no piece holds a hit starting
    before an earlier piece's floor (what counting a sketch relation piece by piece relies on), under
    every strategy (shortest holds hits back past a range's end)."""
    whole = NativeEngine.open(sample_registry, "sample")
    ranged = NativeEngine.open(sample_registry, "sample", EngineOptions(chunk_positions=chunk))
    for query in SAMPLE_QUERIES:
        for strategy in STRATEGIES:
            ast = parse_cqp(query)
            pieces = list(ranged.stream(ast, strategy))
            joined = [hit for piece, _ in pieces for hit in pairs(piece)]
            assert sorted(joined) == pairs(whole.evaluate(ast, strategy)), (query, strategy)
            floor = 0
            for piece, next_floor in pieces:
                assert all(match >= floor for match in piece.match.tolist()), (query, strategy)
                assert next_floor >= floor
                floor = next_floor
            if pieces:
                assert pieces[-1][1] == ranged.size
    # the query's own modifier is its strategy here too
    modified = parse_cqp('(?longest) [pos="JJ.*"]* [pos="NN.*"]')
    assert sorted(hit for piece, _ in ranged.stream(modified) for hit in pairs(piece)) == pairs(
        whole.evaluate(modified, "longest"))


def test_a_repetition_of_a_thousand_tokens_is_planned_without_recursion(sample_registry: Path) -> None:
    """How far ahead a match may read is found over the automaton's states without recursion: a
    ``[]{1000}`` (the longest repetition the syntax allows) is a chain of 1,000 states, and the
    recursive walk raised RecursionError (a 500 to the user)."""
    engine = NativeEngine.open(sample_registry, "sample")
    assert engine.run("[]{3,} []{1000}").total == 0  # the sample's texts are shorter
    assert not engine.estimate("[]{3,} []{1000}").exact or engine.estimate("[]{3,} []{1000}").hits == 0
