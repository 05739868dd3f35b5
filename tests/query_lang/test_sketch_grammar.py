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


def grammar_mistake(text: str, where: str, message: str) -> SketchGrammarError:
    """The mistake ``parse_grammar`` finds in ``text`` (a grammar file ``bad.wsdef``), after checking
    that it names the place ``where`` (line:column) and says ``message``."""
    with pytest.raises(SketchGrammarError) as raised:
        parse_grammar(text, "bad", "bad.wsdef")
    assert raised.value.where == f"bad.wsdef:{where}"
    assert message in raised.value.message
    return raised.value


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
    # *LABEL, the name users read
    ('*LABEL x\n=rel\n  1:[] 2:[]\n', "1:1", "*LABEL before any relation"),
    ('=rel\n  1:[] 2:[]\n*LABEL x\n', "3:1", "*LABEL after the queries of relation rel"),
    ('=rel\n*LABEL x\n*LABEL y\n  1:[] 2:[]\n', "3:1", "relation rel has its label already"),
    ('*DUAL\n=a/b\n*LABEL x\n*LABEL y\n*LABEL z\n  1:[] 2:[]\n', "5:1", "relation a has both labels already"),
    ('=rel\n*LABEL\n  1:[] 2:[]\n', "2:1", "*LABEL takes the text users read"),
    ('=rel\n*LABEL ' + "x" * 81 + '\n  1:[] 2:[]\n', "2:1", "up to 80 printable characters"),
    ('=one\n*LABEL "%w" in …\n  1:[] 2:[]\n=two\n  *LABEL "%w" in …\n  1:[] 2:[]\n', "5:3",
     "*LABEL '\"%w\" in …' is not unique: line 2 gives it already"),
])  # fmt: skip
def test_every_mistake_is_named_with_its_line_and_column(text: str, where: str, message: str) -> None:
    mistake = grammar_mistake(text, where, message)
    if mistake.line:  # the line and a caret under the column
        picture = mistake.pretty().splitlines()
        assert picture[2].index("^") - 2 == mistake.column - 1


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


PAST_THE_LIMIT = """\
*STRUCTLIMIT s
*DEFAULTATTR pos
=ends_in_a_lookahead
    2:"NN.*" 1:"NN.*" [:pos!="NN.*":]
=a_lookahead_then_a_tag
    1:"VB.*" 2:"NN.*" [:pos!="NN.*":] </s>
=a_lookahead_before_an_optional_token
    1:"VB.*" 2:"NN.*" [:pos="IN":] [pos="DT"]?
=a_wider_within
    1:"NN.*" []{0,5} 2:"NN.*" within text
=guarded
    2:"NN.*" 1:"NN.*" ( [:pos!="NN.*":] | </s> )
=inside
    1:"VB.*" [:pos="DT":] [] 2:"NN.*"
=guarded_by_another_region
    2:"NN.*" 1:"NN.*" ( [:pos!="NN.*":] | </p> )
"""


def test_a_query_that_can_look_past_the_structlimit_is_warned_about() -> None:
    """A lookahead no token follows (on some path) reads the token after the match, the next
    sentence's first when the match ends its sentence; a ``within`` of its own lets tokens out of the
    sentence. ``( [: … :] | </s> )``, and lookaheads a token follows, are not warned about."""
    grammar = parse_grammar(PAST_THE_LIMIT, "past", "past.wsdef")
    warned = {w.relation: (w.line_number, w.message) for w in grammar.warnings}
    assert sorted(warned) == [
        "a_lookahead_before_an_optional_token",
        "a_lookahead_then_a_tag",
        "a_wider_within",
        "ends_in_a_lookahead",
        "guarded_by_another_region",
    ]
    assert len(grammar.warnings) == 5  # one each
    line, message = warned["ends_in_a_lookahead"]
    assert line == 4 and message.startswith('the lookahead [:pos!="NN.*":] can end the match')
    assert 'write ( [:pos!="NN.*":] | </s> )' in message
    assert str(grammar.warnings[0]) == f"past.wsdef:4: relation ends_in_a_lookahead: {message}"
    assert warned["a_lookahead_then_a_tag"][0] == 6
    assert '[:pos="IN":]' in warned["a_lookahead_before_an_optional_token"][1]
    assert warned["a_wider_within"] == (
        10,
        "it says within text, so its tokens can lie outside the s its match starts in "
        "(the grammar's *STRUCTLIMIT is s)",
    )
    # the queries are read all the same
    assert [len(r.queries) for r in grammar.relations] == [1] * 7


def test_without_a_structlimit_there_is_no_limit_to_look_past() -> None:
    grammar = parse_grammar('=rel\n  2:[pos="NN"] 1:[pos="NN"] [:pos!="NN":]\n', "none")
    assert grammar.warnings == ()


@pytest.mark.parametrize("name", SHIPPED)
def test_no_shipped_grammar_looks_past_its_sentence(name: str) -> None:
    """Every shipped grammar's lookaheads at the end are ``( [: … :] | </s> )``: none is warned about,
    and each of them has such lookaheads (so the rule has been applied to something)."""
    grammar = load_grammar(name)
    assert grammar.warnings == ()
    guarded = [q for r in grammar.relations for q in r.queries if "| </s>)" in q]
    assert len(guarded) >= 4, name
    assert not [q for r in grammar.relations for q in r.queries if ":]" in q and "| </s>)" not in q]
