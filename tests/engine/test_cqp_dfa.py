"""The native engine builds CQP's own DFA, state for state (``engines/native/dfa.py``).

CQP's simulation lets later transitions into a state overwrite earlier ones in state-number
order, so the native engine must number its states exactly as ``regex2dfa.c`` does. Real CQP
prints its automaton with ``set ShowDFA on``; every query here must give the same text.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cowbird.engines.native.dfa import DfaUnavailable, build_dfa, paths_may_meet, search_string
from cowbird.query import Meet, MuUnion, Pattern, QueryError, Tabular, parse_cqp
from tests.realcqp import RealCqp

pytestmark = pytest.mark.e2e  # a real cqp process prints its DFA

JUDGE_SECONDS = 20.0  # what a command of the judge (tests/engine/conftest.py) may take


def pattern_of(query: str) -> Pattern:
    """The pattern of a query that is one pattern, not MU or TAB (those have no automaton)."""
    pattern = parse_cqp(query).pattern
    assert not isinstance(pattern, Meet | MuUnion | Tabular), query
    return pattern


def native_dfa(query: str) -> str:
    return build_dfa(pattern_of(query)).describe()


FIXED = [
    '[] (</s> | []) []',
    '[] ([] [] | </s> [])',
    '([]? [word="[A-Z].*"]{2} <s>?)+',
    '<s> [pos="DT"] | [pos="NN"] </s>',
    '[pos="DT"] @[pos="JJ"]? [pos="JJ"]? [pos="NN"]',
    '@1[]* [upos="PRON"]? [upos="VERB"]',
    '"a" "b" "c" | "d" | "e" "f"*',
    '("a" | "b") ("c" | "d")+ "e"{2,4}',
    '"a"{3,} "b"',
    '([pos="IN"] [pos="DT"]? [pos="JJ.*"]* [pos="N.*"]+){3}',
    '[]{0,10} "x"',
    '("a" "b"?)* "c"',
    '<s> []* </s>',
    '"." (</s> <s>)+ []',
    '[:pos="NN":]+ []',
    'a:[]{0} [] :: a.word != "TIME"',
]


@pytest.mark.parametrize("query", FIXED)
def test_the_dfa_is_cqps(judge: RealCqp, query: str) -> None:
    assert native_dfa(query) == judge.automaton(query)


ITEMS = ['[pos="NN"]', '[]', '"the"', '<s>', '</s>', '<text>', '[:pos="DT":]', '@[pos="JJ"]']


@st.composite
def patterns(draw: st.DrawFn, depth: int = 0) -> str:
    parts = []
    for _ in range(draw(st.integers(1, 3))):
        if depth < 2 and draw(st.integers(0, 3)) == 0:
            inner = draw(patterns(depth + 1))
            if draw(st.booleans()):
                inner = f"{inner} | {draw(patterns(depth + 1))}"
            item = f"({inner})"
        else:
            item = draw(st.sampled_from(ITEMS))
        item += draw(st.sampled_from(["", "", "", "?", "*", "+", "{2}", "{1,3}", "{2,}", "{0,2}"]))
        parts.append(item)
    return " ".join(parts)


@given(query=patterns())
@settings(max_examples=150, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
def test_generated_dfas_are_cqps(judge: RealCqp, query: str) -> None:
    try:
        mine = native_dfa(query)
    except QueryError:
        return  # both refuse a query that matches the empty string
    except DfaUnavailable:
        return  # CQP dies on these (its parser's stack or a corrupt expression): nothing to compare
    assert mine == judge.automaton(query), query


def test_search_string_numbers_patterns_in_text_order() -> None:
    assert search_string(pattern_of('"a" ("b" | "c"){1,3} <s>?')).split() == [
        '"0"', '(', '"1"', '|', '"2"', ')', '[(', '"1"', '|', '"2"', ')', '[(', '"1"', '|', '"2"', ')', ']]',
        '[', '"3"', ']',
    ]


def test_cqp_has_no_automaton_for_an_empty_alternative() -> None:
    # CQP: "Corrupt expression" (the process exits); the native engine answers on its own automaton
    with pytest.raises(DfaUnavailable):
        native_dfa('("the" | "a"{0}) [pos="NN"]')


@pytest.mark.parametrize(("query", "meet"), [
    ('[pos="DT"] [pos="NN"]', False),
    ('[pos="DT"] [pos="JJ"]* [pos="NN"] within s', False),
    ('<s> [pos="DT"] [] </s>', False),
    ('[] (</s> | []) []', True),
    ('<s> [pos="DT"] | [pos="NN"] </s>', True),
    ('@[pos="JJ"] [pos="JJ"]* [pos="NN"]', False),
    ('@[pos="JJ"]* [pos="NN"]', True),  # under every strategy: paths through and around the anchor meet
    ('a:[]+ []+ :: a.lemma = matchend.lemma', True),
    ('[:pos="NN":]+ []', True),
])
def test_which_queries_need_cqps_automaton(query: str, meet: bool) -> None:
    assert paths_may_meet(pattern_of(query)) is meet
