"""Sketch grammars (``cowbird.query.sketch_grammar``): Sketch Engine's notation read into CQP, and
every mistake named with its file, line and column."""

from __future__ import annotations

import pytest

from cowbird.query.sketch_grammar import SHIPPED, SketchGrammarError, load_grammar, parse_grammar

GRAMMAR = """\
# adjectives and nouns
*STRUCTLIMIT s
*DEFAULTATTR pos
*DUAL
=modifier/modifies
    2:"JJ.*" [pos="JJ.*|,"]{0,3} 1:"NN.*"   # a comment after a query
*SYMMETRIC
=and/or
    1:"NN.*" [word="and|or" & lemma!="#1:"] 2:"NN.*"
=same_lemma
    1:[pos="NN.*"] []{0,2} 2:[pos="NN.*"] :: 1.lemma = 2.lemma within text
"""


def test_a_grammar_reads_into_cqp_with_anchors() -> None:
    grammar = parse_grammar(GRAMMAR, "mine")
    assert grammar.attribute == "lemma"
    modifier, coordination, same = grammar.relations
    assert modifier.queries == ('@1 [pos="JJ.*"] [pos="JJ.*|,"]{0,3} @[pos="NN.*"] within s',)
    assert modifier.inverse == "modifies" and not modifier.symmetric and modifier.lines == (6,)
    # "#1:" inside a string is neither a comment nor a label
    assert coordination.queries == ('@[pos="NN.*"] [word="and|or" & lemma!="#1:"] @1 [pos="NN.*"] within s',)
    assert coordination.symmetric and coordination.inverse is None
    assert same.queries == ('@[pos="NN.*"] []{0,2} @1 [pos="NN.*"] :: target.lemma=keyword.lemma within text',)
    assert [(v.name, v.swapped) for v in grammar.views] == [
        ("modifier", False), ("modifies", True), ("and/or", False), ("same_lemma", False)]


@pytest.mark.parametrize(("text", "where", "message"), [
    ("=rel\n  1:[pos=\"NN\"] 2:[pos=\"JJ\"\n", "2:27", "not a CQP query"),
    ("=rel\n  1:[pos=\"NN\"] [pos=\"JJ\"]\n", "2:3", "no 2: (the collocate)"),
    ("=rel\n  1:[] 2:[] 3:[]\n", "2:13", "label 3: a relation has the headword 1: and the collocate 2:"),
    ("=rel\n  1:[] 1:[]\n", "2:8", "label 1: is set twice"),
    ("  1:[] 2:[]\n", "1:3", "a query before any relation"),
    ("*DUAL\n=rel\n  1:[] 2:[]\n", "2:1", "needs two names"),
    ("*UNARY\n=rel\n  1:[]\n", "1:1", "unary relations (no collocate) are not supported"),
    ("*FOO bar\n", "1:1", "unknown directive *FOO"),
    ("=rel\n  1:[] 2:[]\n*STRUCTLIMIT s\n", "3:1", "belongs before the first relation"),
    ("=rel\n=other\n  1:[] 2:[]\n", "1:1", "relation rel has no query under it"),
    ("=rel\n  1:[] 2:[]\n=rel\n  1:[] 2:[]\n", "3:2", "relation 'rel' is named twice"),
    ("# nothing\n", "1:1", "the grammar has no relation"),
    ("=rel\n  1:[] 2:[]\n*SYMMETRIC\n", "3:1", "*SYMMETRIC at the end"),
])  # fmt: skip
def test_every_mistake_is_named_with_its_line_and_column(text: str, where: str, message: str) -> None:
    with pytest.raises(SketchGrammarError) as raised:
        parse_grammar(text, "bad", "bad.wsdef")
    assert raised.value.where == f"bad.wsdef:{where}"
    assert message in raised.value.message
    if raised.value.line:  # the line and a caret under the column
        picture = raised.value.pretty().splitlines()
        assert picture[2].index("^") - 2 == raised.value.column - 1


def test_the_shipped_grammars_load_and_fit_their_corpora() -> None:
    for name in SHIPPED:
        grammar = load_grammar(name)
        assert grammar.name == name and len(grammar.relations) >= 8
        attribute = "upos" if name == "ud" else "pos"
        grammar.check(["word", attribute, "lemma"], ["s", "text"], "corpus")
    with pytest.raises(SketchGrammarError, match="corpus corpus has no attribute 'pos'"):
        load_grammar("penn").check(["word", "lemma"], ["s"], "corpus")
    with pytest.raises(SketchGrammarError, match="no such sketch grammar"):
        load_grammar("klingon")
