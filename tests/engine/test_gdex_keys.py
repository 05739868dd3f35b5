"""A node's GDEX keys (``cowbird.engines.analyses.gdex``: word-form flags, one compiled pass over the
sentences' tokens) against the rules written out one by one in plain Python (``cowbird.core.gdex``),
hit by hit: on sentences made to catch each rule's edge (brackets closed before they open, odd
quotes, punctuation after the last word, URLs, numbers, one-token and punctuation-only sentences) and
on every token of a third of EWT and many multi-token matches there."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from cowbird.core import gdex
from cowbird.engines.analyses import gdex as node_gdex
from cowbird.engines.base import Deadline
from cowbird.engines.native import NativeEngine
from cowbird.query import parse_cqp
from tests.store.helpers import encode_text
from tests.support import require_reference

EDGES = [
    "The committee approved the new budget for the coming year after a long debate .",
    ") The meeting ( began late but everyone stayed until the very end of it .",
    "He said ( quietly ) that the plan [ as written ] would work well for all of us .",
    'She called it " a good idea and then left the room without another word .',
    'They wrote " yes " and " no " on two cards and put them on the table again .',
    "See https://example.org/page for the whole list of the people who came here .",
    "In 2013 about 4,500 people paid $ 12 each for the tickets to the big show .",
    "the sentence starts in lower case and ends without a full stop or anything",
    "Short one .",
    "Wow",
    ". . . !",
    "Zyxwvut quorble fnarg blimp the plan went well after all in the end .",
    "A { curly } bracket and ] a closing square one before its [ opening one .",
    "It ends with a word and then two marks of punctuation at the very end ! ?",
    "What about ( nested [ brackets { of all three kinds } inside ] each other ) here ?",
    'Quotes " inside ( brackets " ) are counted by kind and not by their order in it .',
    "Then } one curly bracket closes before the { other one opens in this sentence .",
]


def vrt(sentences: list[str]) -> str:
    lines = ['<text id="t1">']
    for k, sentence in enumerate(sentences):
        lines.append(f'<s id="s{k}">')
        lines += [f"{word}\tX" for word in sentence.split()]
        lines.append("</s>")
    lines.append("</text>")
    return "\n".join(lines) + "\n"


def common_words(engine: NativeEngine, size: int) -> frozenset[str]:
    """The ``size`` most frequent word forms, lowercased (what the front end sends: a word list)."""
    p = engine.store.p_attribute("word")
    counted = Counter(p.strings[i] for i in np.asarray(p.ids_at(np.arange(engine.size)), dtype=np.int64).tolist())
    top = sorted(counted.items(), key=lambda item: (-item[1], item[0]))[:size]
    return frozenset(word.lower() for word, _ in top)


def assert_keys_follow_the_rules(engine: NativeEngine, query: str, rules: gdex.GdexRules,
                                 common: frozenset[str]) -> int:
    """Every hit's key equals the plain rules' key for its sentence; returns the hits checked."""
    store = engine.store
    matches = engine.evaluate(parse_cqp(query))
    spec = gdex.GdexSpec(rules=rules, common=tuple(sorted(common)))
    keys = node_gdex.gdex_keys(Deadline(), store, matches, spec).tolist()
    s = store.s_attribute(rules.region)
    words = store.p_attribute("word")
    numbers = s.region_numbers(np.asarray(matches.match, dtype=np.int64)).tolist()
    starts, ends = np.asarray(s.starts).tolist(), np.asarray(s.ends).tolist()
    sentences: dict[int, list[str]] = {}
    for k, (match, matchend, number) in enumerate(zip(matches.match.tolist(), matches.matchend.tolist(), numbers,
                                                      strict=True)):
        if number < 0:
            assert keys[k] == gdex.SCALE
            continue
        if number not in sentences:
            sentences[number] = [words.strings[i] for i in
                                 np.asarray(words.ids_at(np.arange(starts[number], ends[number] + 1))).tolist()]
        start = starts[number]
        expected = gdex.sort_key(gdex.score(sentences[number], match - start, matchend - start, rules, common))
        assert keys[k] == expected, (query, match, matchend, sentences[number])
    return len(keys)


@pytest.fixture(scope="module")
def edges(tmp_path_factory: pytest.TempPathFactory) -> NativeEngine:
    _, registry = encode_text(tmp_path_factory.mktemp("gdex-edges"), vrt(EDGES))
    return NativeEngine.open(registry, "test")


@pytest.mark.parametrize("query", ["[]", "[] []", "[]{3}", '[word="the|a|it"] []{0,4} [word="\\.|\\?|!"]'])
@pytest.mark.parametrize("common_size", [0, 5, 40])
def test_edge_sentences(edges: NativeEngine, query: str, common_size: int) -> None:
    rules = gdex.GdexRules(common_words=common_size, min_length=5, max_length=14, max_rare=2)
    assert assert_keys_follow_the_rules(edges, query, rules, common_words(edges, common_size)) > 5


def test_the_edge_sentences_score_as_their_rules_say(edges: NativeEngine) -> None:
    """What the edge sentences are for: the brackets rule and the last word, as the rules read them."""
    assert not gdex.balanced(EDGES[1].split())  # closed before opened
    assert gdex.balanced(EDGES[2].split())
    assert not gdex.balanced(EDGES[3].split())  # an odd quote
    assert not gdex.balanced(EDGES[12].split())  # ] before [
    assert not gdex.balanced(EDGES[16].split())  # } before {
    assert gdex.balanced(EDGES[14].split()) and gdex.balanced(EDGES[15].split())
    # a match on the last word before the final punctuation is at the edge: it scores lower
    rules = gdex.GdexRules()
    words = EDGES[13].split()
    assert gdex.score(words, 1, 1, rules, frozenset()) > gdex.score(words, len(words) - 3, len(words) - 3, rules,
                                                                     frozenset())


@pytest.fixture(scope="module")
def ewt() -> NativeEngine:
    return NativeEngine.open(require_reference() / "cwb" / "registry", "ewt")


@pytest.mark.timeout(300)
@pytest.mark.slow  # 21.2 s here (make quick leaves it out)
def test_the_tokens_of_some_texts_and_longer_matches_of_ewt(ewt: NativeEngine) -> None:
    rules = gdex.GdexRules()
    common = common_words(ewt, rules.common_words)
    some_texts = '[] :: match.text_genre = "email|weblog|newsgroup"'  # a third of the corpus: every token there
    assert assert_keys_follow_the_rules(ewt, some_texts, rules, common) > 60_000
    for query in ['[pos="DT"] []{0,3} [pos="NN.*"]', '[word="\\("] []{1,6} [word="\\)"]', '[pos="CD"]+']:
        assert assert_keys_follow_the_rules(ewt, query, rules, common) > 100

