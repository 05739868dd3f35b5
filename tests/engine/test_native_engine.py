"""The native engine on the sample corpus: expected hits written out, checked by eye."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cowbird.core.errors import OutOfRange, QueryTooExpensive, UnknownAttribute
from cowbird.core.wire import Strategy
from cowbird.engines import Context, Hit
from cowbird.engines.base import EngineOptions
from cowbird.engines.native import NativeEngine, dfa_simulate
from cowbird.engines.native.corpus_state import sorted_member
from cowbird.query import QueryError, RegexValue
from cowbird.query.pcre import compile_pcre
from cowbird.store import lexicon


@pytest.fixture(scope="module")
def sample(sample_registry: Path) -> NativeEngine:
    return NativeEngine.open(sample_registry, "sample")


def pairs(engine: NativeEngine, query: str, strategy: Strategy = "standard") -> list[tuple[int, int]]:
    return [(h.match, h.matchend) for h in engine.hits(query, strategy=strategy)]


def words(engine: NativeEngine, query: str) -> list[str]:
    lines = engine.run(query).kwic(0, 1000, Context(0), [], [])
    return [" ".join(t[0] for t in line.keyword) for line in lines]


def test_literals_regexes_and_flags(sample: NativeEngine) -> None:
    assert pairs(sample, '"house"') == [(2, 2), (19, 19), (81, 81)]
    assert words(sample, '[lemma="house"]') == ["house", "house", "houses", "House", "house"]
    assert words(sample, '[word="house"%c]') == ["house", "house", "House", "house"]
    assert words(sample, '[word="cafe"%d]') == ["café"]
    assert words(sample, '[word="3.5"]') == ["3.5"]  # a regex: the dot matches any character
    assert words(sample, '[word="^"]') == []  # a literal: no token is spelled ^
    assert words(sample, '[word="ho.*" & pos="NNS?"]') == ["house", "house", "houses", "house"]
    assert words(sample, '[word="\\("]') == ["("]
    assert words(sample, '[word="<3"]') == ["<3"]


def test_sequences_alternation_and_repetition(sample: NativeEngine) -> None:
    assert words(sample, '[pos="JJ"] [pos="NNS?"]') == ["old house", "new houses", "good coffee", "old house"]
    assert words(sample, '[word="very"]+ [pos="JJ"]') == ["very very expensive"]
    assert words(sample, '"the" []{0,1} "house"') == ["the house", "the old house"]
    assert words(sample, '("New" | "Nobody") []') == ["Nobody has", "New York"]
    assert words(sample, '[lemma="be"] [pos="RB"]? [pos="VBG"]') == ["are going", "are not falling"]


def test_structure_within_and_constraints(sample: NativeEngine) -> None:
    assert words(sample, '<s> [pos="PP"]') == ["We", "I", "We", "He"]
    assert words(sample, '[pos="SENT"] </s>')[:2] == [".", "."]
    assert words(sample, '<text_genre="blog"> []') == ["The"]
    assert words(sample, '[word="the"%c] :: match.text_genre="news"') == ["The", "the", "the", "the", "the", "the"]
    assert words(sample, '[pos="DT"] [] :: match.text_year="2009" & matchend.word="house"') == ["the house"]
    assert words(sample, 'a:[pos="JJ"] [] :: a.word="old"') == ["old house", "old house"]
    assert pairs(sample, "\"the\" []* \"house\" within s") == [(18, 19), (79, 81)]
    # "." is a regex (any one character), so "!" and "a" end these matches, as in CQP
    assert pairs(sample, '"We" []* "."') == [(15, 21), (62, 67)]


def test_target_cut_and_expand(sample: NativeEngine) -> None:
    hits = sample.hits('[lemma="be"] @[pos="RB"] [pos="VBG"]')
    assert hits == [Hit(72, 74, 73)]
    assert pairs(sample, '"the" cut 2') == [(5, 5), (18, 18)]
    assert pairs(sample, "\"house\" expand to s") == [(0, 7), (15, 21), (76, 87)]


def test_strategies_on_nested_matches(sample: NativeEngine) -> None:
    query = '[pos="RB"]+ [pos="JJ"]'
    assert pairs(sample, query, "standard") == [(28, 30)]
    assert pairs(sample, query, "shortest") == [(29, 30)]
    assert pairs(sample, query, "longest") == [(28, 30)]
    assert pairs(sample, query, "traditional") == [(28, 30), (29, 30)]


def test_zero_token_patterns_find_nothing(sample: NativeEngine) -> None:
    assert sample.count('[pos="XX"]* <s>') == 0  # matches of no token are dropped, as in CQP
    assert sample.count("<s>") == 0
    with pytest.raises(QueryError, match="matches the empty string"):
        sample.count('[pos="XX"]*')


def test_kwic_lines(sample: NativeEngine) -> None:
    line = sample.run('"coffee"').kwic(0, 1, Context(3), ["lemma"], ["text_genre", "s_id"])[0]
    assert line.left[-1] == ["good", "good"]
    assert [t[0] for t in line.left] == ["Haus", "serves", "good"]
    assert line.keyword == [["coffee", "coffee"]]
    assert [t[0] for t in line.right] == [".", "We", "are"]
    assert line.meta == {"text_genre": "blog", "s_id": "s7"}
    in_sentence = sample.run('"coffee"').kwic(0, 1, Context(10, "s"), [], [])[0]
    assert [t[0] for t in in_sentence.right] == ["."]
    assert [t[0] for t in in_sentence.left][0] == "The"


def test_context_at_corpus_edges(sample: NativeEngine) -> None:
    first = sample.context(0, Context(2), [], [])
    assert first.left == [] and [t[0] for t in first.right] == ["old", "house"]
    last = sample.context(sample.size - 1, Context(2), [], [])
    assert last.right == [] and [t[0] for t in last.left] == ["the", "note"]
    with pytest.raises(OutOfRange, match="outside the corpus"):
        sample.context(sample.size, Context(2), [], [])


def test_errors_name_the_problem(sample: NativeEngine) -> None:
    with pytest.raises(UnknownAttribute, match="no p-attribute 'tag'"):
        sample.count('[tag="NN"]')
    with pytest.raises(UnknownAttribute, match="no s-attribute 'chapter'"):
        sample.count('"the" within chapter')
    with pytest.raises(UnknownAttribute, match="no attribute 'genre'"):
        sample.count('"the" :: match.genre="news"')


def test_hostile_regex_is_bounded() -> None:
    index = lexicon.LexiconIndex(["a" * 40 + "c", "b"])
    with pytest.raises(QueryTooExpensive, match="takes too long"):
        lexicon.match_table(index, RegexValue("(a|a)+b"), seconds=0.3)
    assert lexicon.match_table(index, RegexValue("b|x"), seconds=0.3).tolist() == [False, True]


def test_strict_regions_keep_a_match_inside_the_region_it_entered(sample: NativeEngine) -> None:
    # without StrictRegions the 8-token first sentence would stretch to the end of the second
    assert pairs(sample, "<s> []{9,} </s>") == [(22, 31), (32, 40), (41, 52), (53, 61), (76, 87)]
    assert pairs(sample, "<s> []{1,5} </s>") == [(88, 92)]


LEXICON = ["the", "The", "THE", "e.g.", "$", "(", ")", "x\\y", "naïve", "naive", "Émile", "", "a b", "über",
           "2024", "co-op", "email", "EMAIL", "E-Mail", "verylongwordindeed", "ab", "abab", "x\u0301"]
PATTERNS = [".{5,}", "\\$", "\\(", "e\\.g\\.", "(?i)email", "[a-z]+", "[^a-z]+", "\\w+", "\\W", "\\s.*", ".*\\S",
            "[[:alpha:]]+", "\\p{Lu}.*", "t.e", "(ab)+", "a|b", "na.ve", "(?s).", "x\\\\y", "\\d{4}", ".*-.*",
            "^the$", "the|THE", "", ".*", "[A-Z]+", "\\x24", "(?i)É.*", "ü.*", "\\N+", "\\Q.\\E.*",
            "\\x{e9}.*", "[[:punct:]]", "\\p{Xan}+", "t)|(.*L", "(?x) t h e", "[\\w.]+", "[^\\W]+"]


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize(("ignore_case", "ignore_diacritics"), [(False, False), (True, False), (False, True)])
def test_one_scan_over_the_lexicon_matches_as_string_by_string(
    pattern: str, ignore_case: bool, ignore_diacritics: bool
) -> None:
    """The buffer scan and the escaped-literal lookup give exactly the per-string match table."""
    value = RegexValue(pattern, ignore_case=ignore_case, ignore_diacritics=ignore_diacritics)
    index = lexicon.LexiconIndex(list(LEXICON))
    strings = index.folded(ignore_diacritics)
    target = lexicon.strip_diacritics(pattern) if ignore_diacritics else pattern
    matcher = compile_pcre(target, ignore_case)
    expected = [matcher.search(s) is not None for s in strings]
    if lexicon.is_literal(value):
        expected = [s == pattern for s in LEXICON]
    assert lexicon.match_table(index, value, seconds=5).tolist() == expected


def test_a_repeated_tag_means_the_tag_once(sample: NativeEngine) -> None:
    # CQP stops these with "Infinite loop detected"; a tag repeated at one position is the tag once
    assert sample.count("<s>+ []") == sample.count("<s> []") > 0
    assert sample.count('[word="the"] (<s> | </s>)* []') == sample.count('[word="the"] []')


def test_sorted_membership_agrees_with_isin() -> None:
    """Which needles are in a sorted haystack: few needles in a long haystack, as many needles as
    haystack, repeated needles, needles beyond either end, and unsorted needles (the fallback)."""
    rng = np.random.default_rng(11)
    haystack = np.unique(rng.integers(0, 1_000_000, 200_000))
    for needles in (
        np.sort(rng.integers(-5, 1_000_005, 7)),
        np.sort(rng.integers(0, 1_000_000, 300_000)),
        np.repeat(haystack[[0, 17, 17, 199, -1]], 3),
        np.array([haystack[-1] + 1, haystack[-1] + 9]),
        rng.integers(0, 1_000_000, 1_000),
    ):
        assert sorted_member(haystack, needles).tolist() == np.isin(needles, haystack).tolist()
    assert sorted_member(haystack, np.array([haystack[5]])).tolist() == [True]
    assert sorted_member(haystack[:0], np.array([3])).tolist() == [False]


def test_both_simulations_agree_on_the_sample(sample_registry: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every query answers the same on CQP's DFA (``automaton="cqp"``) as by default, anchors
    included; the DFA steps its candidates in slices when there are many (here: 3 at a time)."""
    default = NativeEngine.open(sample_registry, "sample")
    on_dfa = NativeEngine.open(sample_registry, "sample", EngineOptions(automaton="cqp"))
    queries = ['[pos="DT"] [pos="JJ"]* [pos="NN"]', '@[pos="DT"] []? [pos="NN.*"] within s', '<s> [] | [] </s>',
               'a:[pos="DT"] [] :: a.word = "the"%c', '[pos="JJ"]+ [pos="NN"] cut 2', '"the" [] expand to s']
    for query in queries:
        for strategy in ("standard", "longest", "shortest", "traditional"):
            want = [(h.match, h.matchend, h.target) for h in default.hits(query, strategy=strategy)]
            assert [(h.match, h.matchend, h.target) for h in on_dfa.hits(query, strategy=strategy)] == want, query
    sliced = [(h.match, h.matchend) for h in on_dfa.hits("[] (</s> | []) []")]
    monkeypatch.setattr(dfa_simulate, "ROWS_AT_ONCE", 3)
    assert [(h.match, h.matchend) for h in on_dfa.hits("[] (</s> | []) []")] == sliced


def test_warm_up_builds_the_shared_state_and_runs_a_query_of_each_kind(sample_registry: Path) -> None:
    engine = NativeEngine.open(sample_registry, "sample")
    engine.warm()
    queries = engine._warm_queries()
    assert queries[0] == '[word="the"]' and len(queries) == 9  # the most frequent plain word; regions too
    assert any("expand to" in query for query in queries) and any("%cd" in query for query in queries)
    word = engine.corpus.lexicon("word")
    assert word._stripped is not None and set(word._buffers) == {False, True}  # small: %d views built too
    assert engine.run('[word="CAFE"%cd]').total == 1  # the folded views answer: café


def test_mapped_pages_are_released_only_past_the_resident_budget(sample_registry: Path) -> None:
    from cowbird.engines.native.corpus_state import resident_bytes

    held = resident_bytes()
    assert held is not None and held[0] >= held[1] > 0  # this process maps files (its libraries at least)
    spare = NativeEngine.open(sample_registry, "sample", EngineOptions(resident_budget=1 << 40))
    spare.run('[word="the"]')
    assert not spare.corpus.trim()
    tight = NativeEngine.open(sample_registry, "sample", EngineOptions(resident_budget=2 * held[1] // 3))
    tight.run('[word="the"]')
    assert tight.corpus.trim()  # over the budget, and more than half of the budget is mapped
