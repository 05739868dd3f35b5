"""Acceptance: the native engine returns exactly real CQP's hits for the 44 parity queries on EWT."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cowbird.core.wire import Strategy
from cowbird.engines.native import NativeEngine
from cowbird.query import parse_cqp
from tests.realcqp import RealCqp, real_cqp
from tests.support import parity_hits, parity_queries


@pytest.fixture(scope="module")
def ewt(reference: Path) -> NativeEngine:
    return NativeEngine.open(reference / "cwb" / "registry", "ewt")


@pytest.mark.parametrize(("query_id", "query"), parity_queries())
def test_same_hits_as_cqp(ewt: NativeEngine, query_id: str, query: str) -> None:
    expected = parity_hits(query_id)
    matches = ewt.evaluate(parse_cqp(query))
    assert list(zip(matches.match.tolist(), matches.matchend.tolist(), strict=True)) == expected


@pytest.fixture(scope="module")
def cqp() -> Iterator[RealCqp]:
    judge = real_cqp()
    yield judge
    judge.close()


def same_as_cqp(ewt: NativeEngine, cqp: RealCqp, query: str, strategy: Strategy = "standard",
                hard_boundary: int = 500) -> list[tuple[int, int]]:
    """The native engine's (match, matchend) pairs, after checking they are exactly real CQP's."""
    mine = ewt.evaluate(parse_cqp(query), strategy, hard_boundary)
    pairs = list(zip(mine.match.tolist(), mine.matchend.tolist(), strict=True))
    assert pairs == cqp.query(query, strategy, hard_boundary), (query, strategy, hard_boundary)
    return pairs


STRATEGIES: tuple[Strategy, ...] = ("standard", "shortest", "longest", "traditional")


@pytest.mark.parametrize("query", ['[pos="JJ.*"]+ [pos="NNS?"]', '[pos="NN"] []{0,3} [pos="NN"]'])
def test_matching_strategies_as_cqp_does(ewt: NativeEngine, cqp: RealCqp, query: str) -> None:
    counts = [len(same_as_cqp(ewt, cqp, query, strategy)) for strategy in STRATEGIES]
    assert len(set(counts)) > 1  # the strategies do differ on these queries


def test_strategies_on_nested_candidates(ewt: NativeEngine, cqp: RealCqp) -> None:
    pairs = {s: set(same_as_cqp(ewt, cqp, '[pos="JJ.*"]+ [pos="NNS?"]', s)) for s in STRATEGIES}
    assert (429, 431) in pairs["standard"] and (430, 431) not in pairs["standard"]
    assert (430, 431) in pairs["shortest"] and (429, 431) not in pairs["shortest"]
    assert (429, 431) in pairs["longest"]
    assert {(429, 431), (430, 431)} <= pairs["traditional"]


def test_optional_elements_under_standard_and_longest(ewt: NativeEngine, cqp: RealCqp) -> None:
    standard = set(same_as_cqp(ewt, cqp, '[pos="NN"] [pos="IN"]?'))
    longest = set(same_as_cqp(ewt, cqp, '[pos="NN"] [pos="IN"]?', "longest"))
    assert (37, 37) in standard and (37, 38) in longest
    assert len(same_as_cqp(ewt, cqp, '[pos="DT"]? [pos="NN"]')) < \
        len(same_as_cqp(ewt, cqp, '[pos="DT"]? [pos="NN"]', "traditional"))


def test_hard_boundary(ewt: NativeEngine, cqp: RealCqp) -> None:
    query = '[lemma="go"] []* [word="to"]'
    assert len(same_as_cqp(ewt, cqp, query, hard_boundary=50)) < len(same_as_cqp(ewt, cqp, query))
