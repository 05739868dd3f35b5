"""Acceptance: the native engine returns exactly real CQP's hits for the 44 parity queries on EWT."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowbird.core.wire import Strategy
from cowbird.engines.native import NativeEngine
from cowbird.query import parse_cqp
from tests.support import parity_hits, parity_queries


@pytest.fixture(scope="module")
def ewt(reference: Path) -> NativeEngine:
    return NativeEngine.open(reference / "cwb" / "registry", "ewt")


@pytest.mark.parametrize(("query_id", "query"), parity_queries())
def test_same_hits_as_cqp(ewt: NativeEngine, query_id: str, query: str) -> None:
    expected = parity_hits(query_id)
    matches = ewt.evaluate(parse_cqp(query))
    assert list(zip(matches.match.tolist(), matches.matchend.tolist(), strict=True)) == expected


@pytest.mark.parametrize(
    ("query", "counts"),
    [
        ('[pos="JJ.*"]+ [pos="NNS?"]', (8654, 8654, 8654, 9355)),
        ('[pos="NN"] []{0,3} [pos="NN"]', (14196, 14196, 12284, 14196)),
    ],
)
def test_matching_strategies_as_observed_in_cqp(ewt: NativeEngine, query: str, counts: tuple[int, ...]) -> None:
    strategies: tuple[Strategy, ...] = ("standard", "shortest", "longest", "traditional")
    assert tuple(len(ewt.evaluate(parse_cqp(query), s)) for s in strategies) == counts


def test_strategies_on_nested_candidates(ewt: NativeEngine) -> None:
    query = parse_cqp('[pos="JJ.*"]+ [pos="NNS?"]')
    pairs = {}
    for strategy in ("standard", "shortest", "longest", "traditional"):
        found = ewt.evaluate(query, strategy)
        pairs[strategy] = set(zip(found.match.tolist(), found.matchend.tolist(), strict=True))
    assert (429, 431) in pairs["standard"] and (430, 431) not in pairs["standard"]
    assert (430, 431) in pairs["shortest"] and (429, 431) not in pairs["shortest"]
    assert (429, 431) in pairs["longest"]
    assert {(429, 431), (430, 431)} <= pairs["traditional"]


def test_optional_elements_under_standard_and_longest(ewt: NativeEngine) -> None:
    standard = ewt.evaluate(parse_cqp('[pos="NN"] [pos="IN"]?'))
    longest = ewt.evaluate(parse_cqp('[pos="NN"] [pos="IN"]?'), "longest")
    assert (37, 37) in set(zip(standard.match.tolist(), standard.matchend.tolist(), strict=True))
    assert (37, 38) in set(zip(longest.match.tolist(), longest.matchend.tolist(), strict=True))
    assert len(ewt.evaluate(parse_cqp('[pos="DT"]? [pos="NN"]'))) == 33591
    assert len(ewt.evaluate(parse_cqp('[pos="DT"]? [pos="NN"]'), "traditional")) == 43724


def test_hard_boundary(ewt: NativeEngine) -> None:
    query = parse_cqp('[lemma="go"] []* [word="to"]')
    assert len(ewt.evaluate(query)) == 688
    assert len(ewt.evaluate(query, hard_boundary=50)) == 594
