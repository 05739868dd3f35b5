"""The CQP parser: ASTs of real queries, canonical forms, and positioned errors."""

from __future__ import annotations

import pytest

from cowbird.query import (
    Alternation,
    And,
    AttributeTest,
    Comparison,
    ConstraintAnd,
    ConstraintNot,
    ConstraintOr,
    LabelRef,
    Meet,
    Not,
    Or,
    Query,
    QueryError,
    QuerySyntaxError,
    RegexValue,
    Repetition,
    Sequence,
    StructuralTag,
    Tabular,
    TokenPattern,
    UnsupportedQueryError,
    ValueTest,
    canonical,
    parse_cqp,
    serialize,
)


def test(attribute: str, pattern: str, negated: bool = False, **flags: bool) -> TokenPattern:
    return TokenPattern(AttributeTest(attribute, negated, RegexValue(pattern, **flags)))


test.__test__ = False  # type: ignore[attr-defined]  # a helper, not a test


def test_bare_string_is_a_word_test() -> None:
    assert parse_cqp('"house"') == Query(test("word", "house"))
    assert parse_cqp("'house'%c") == Query(test("word", "house", ignore_case=True))


def test_sequence_quantifiers_and_within() -> None:
    assert parse_cqp('[lemma="make"] [pos="DT"]? [pos="JJ"]* [pos="NNS?"] within s') == Query(
        Sequence(
            (
                test("lemma", "make"),
                Repetition(test("pos", "DT"), 0, 1),
                Repetition(test("pos", "JJ"), 0, None),
                test("pos", "NNS?"),
            )
        ),
        within="s",
    )


def test_grouping_alternation_and_repetition() -> None:
    assert parse_cqp('[upos="NOUN"] ([upos="ADP"] [upos="DET"]? [upos="NOUN"])+') == Query(
        Sequence(
            (
                test("upos", "NOUN"),
                Repetition(
                    Sequence(
                        (test("upos", "ADP"), Repetition(test("upos", "DET"), 0, 1), test("upos", "NOUN"))
                    ),
                    1,
                    None,
                ),
            )
        )
    )
    assert parse_cqp('([pos="JJ"] | [pos="RB"]) [pos="NN"]').pattern == Sequence(
        (Alternation((test("pos", "JJ"), test("pos", "RB"))), test("pos", "NN"))
    )


def test_boolean_conditions_bind_like_cqp() -> None:
    # '!' binds tighter than '&', which binds tighter than '|'.
    a, b, c = (AttributeTest(x, False, RegexValue(x)) for x in "abc")
    assert parse_cqp('[!a="a" & b="b" | c="c"]').pattern == TokenPattern(Or((And((Not(a), b)), c)))
    assert parse_cqp('[a="a" & (b="b" | !(c="c"))]').pattern == TokenPattern(And((a, Or((b, Not(c))))))
    assert parse_cqp('[a="a" & (b="b" & c="c")]').pattern == TokenPattern(And((a, b, c)))
    assert parse_cqp('[upos="VERB" & lemma!="be|have|do"]').pattern == TokenPattern(
        And(
            (
                AttributeTest("upos", False, RegexValue("VERB")),
                AttributeTest("lemma", True, RegexValue("be|have|do")),
            )
        )
    )


def test_flags() -> None:
    assert parse_cqp('[word="caf.*"%cd]') == Query(
        test("word", "caf.*", ignore_case=True, ignore_diacritics=True)
    )
    assert parse_cqp('[word="caf.*" %dc]') == parse_cqp('[word="caf.*"%cd]')
    assert parse_cqp('[word="a.b"%l]') == Query(test("word", "a.b", literal=True))


def test_strings_follow_cqp_quoting() -> None:
    # Backslashes stay (the regex engine needs them); doubled quotes stand for one quote.
    assert parse_cqp('[word="\\$"]') == Query(test("word", "\\$"))
    assert parse_cqp('[word="\\""]') == Query(test("word", '\\"'))
    assert parse_cqp('[word="a""b"]') == Query(test("word", 'a"b'))
    assert parse_cqp("[word='it''s']") == Query(test("word", "it's"))
    assert parse_cqp("""[word='"']""") == Query(test("word", '"'))
    # a value may end with a backslash pair, as CQP's lexer allows: "\\\\" is the regex \\\\ (two backslashes)
    assert parse_cqp('[word="\\\\\\\\"]') == Query(test("word", "\\\\\\\\"))
    assert parse_cqp('[word="\\\\"%l]') == Query(test("word", "\\\\", literal=True))
    assert canonical('[word="a\\\\"]') == '[word="a\\\\"]'


def test_cut_0_is_no_cut_as_in_cqp() -> None:
    assert parse_cqp('[word="a"] cut 0') == Query(test("word", "a"))
    assert parse_cqp('[word="a"] cut 3').cut == 3


def test_labels_target_tags_and_global_constraint() -> None:
    query = parse_cqp(
        'a:[pos="JJ"] @[pos="NN"] <text_genre!="email"%c> </s> '
        ':: a.lemma="good" & !(match.text_genre="weblog" | a.word=matchend.word) '
        "within s cut 5 expand to s"
    )
    assert query == Query(
        Sequence(
            (
                TokenPattern(AttributeTest("pos", False, RegexValue("JJ")), label="a"),
                TokenPattern(AttributeTest("pos", False, RegexValue("NN")), target=True),
                StructuralTag("text_genre", test=ValueTest(True, RegexValue("email", ignore_case=True))),
                StructuralTag("s", closing=True),
            )
        ),
        within="s",
        constraint=ConstraintAnd(
            (
                Comparison(LabelRef("a", "lemma"), False, RegexValue("good")),
                ConstraintNot(
                    ConstraintOr(
                        (
                            Comparison(LabelRef("match", "text_genre"), False, RegexValue("weblog")),
                            Comparison(LabelRef("a", "word"), False, LabelRef("matchend", "word")),
                        )
                    )
                ),
            )
        ),
        cut=5,
        expand="s",
    )


def test_repetition_bounds() -> None:
    bounds = {
        "[]?": (0, 1), "[]*": (0, None), "[]+": (1, None), "[]{3}": (3, 3), "[]{2,}": (2, None),
        "[]{0,2}": (0, 2), "[]{,4}": (0, 4), "[]{1}": (1, 1),
    }  # fmt: skip
    for text, (low, high) in bounds.items():
        pattern = parse_cqp(f"{text} []").pattern  # alone, an optional token would match the empty string
        assert isinstance(pattern, Sequence)
        assert pattern.items[0] == Repetition(TokenPattern(None), low, high), text


@pytest.mark.parametrize(
    ("text", "canonical_text"),
    [
        ('"house"', '[word="house"]'),
        ('[word="not"|word="n\'t"]', '[word="not" | word="n\'t"]'),
        ('[word="\\(" ] []{1,5} [word="\\)"]', '[word="\\("] []{1,5} [word="\\)"]'),
        ('[word = "x" %c]', '[word="x"%c]'),
        ("[]{0,1} []{,4} []{1,} []{0,}", "[]? []{0,4} []+ []*"),
        ('(("a" "b") ("c")) | ("d" | "e")', '[word="a"] [word="b"] [word="c"] | [word="d"] | [word="e"]'),
        ('("a" | "b")* "c"', '([word="a"] | [word="b"])* [word="c"]'),
        ("(([]+))? []", "([]+)? []"),
        ('[(a="1" | b="2") & !(c="3" & d="4")]', '[(a="1" | b="2") & !(c="3" & d="4")]'),
        ("<text_genre = 'email' %c>", '<text_genre="email"%c>'),
        ("[word='it''s' & lemma=\"a\"\"b\"]", '[word="it\'s" & lemma="a""b"]'),
        ("@ a:[] :: a.word = 'x'", '@a:[] :: a.word="x"'),
        ("@[] []{0} @[]{0,0} []{,0}", "@[] []{0} @[]{0} []{0}"),
        ('[] :: (match.x="1")', '[] :: match.x="1"'),
        ('[word="the"]   cut   05', '[word="the"] cut 5'),
        # contexts: regions or tokens; within ignores a direction (as CQP does), expand keeps it
        ("[] within 1 s expand to 1 s", "[] within s expand to s"),
        ("[] within left 3 s expand right to 02 text", "[] within 3 s expand right to 2 text"),
        ("[] within 5 words expand left to 3 word", "[] within 5 expand left to 3"),
        ("[] within 0 cut 0", "[] within 0"),
        ('[_.text_year = "2010" & !(_.text_genre="email")]', '[_.text_year="2010" & !_.text_genre="email"]'),
        ("[word = lemma & !( lbound( s ) | rbound(text))]", "[word=lemma & !(lbound(s) | rbound(text))]"),
        ('[pos="JJ"] @a:[: pos = "NN" :] [::] :: a.word="x"', '[pos="JJ"] @a:[:pos="NN":] [::] :: a.word="x"'),
        ("a:[] b:[] :: distabs(a,b)>=1 & !(dist( match , 7 )<f(a.lemma)) | int(b.word)!=0",
         "a:[] b:[] :: distabs(a, b) >= 1 & !(dist(match, 7) < f(a.lemma)) | int(b.word) != 0"),
        # A value ending in a quote is written in single quotes (cqp_lexical.quote explains why).
        ('[word="\\""]', "[word='\\\"']"),
        ('[word=\'"\'] [pos="x"]', '[word=\'"\'] [pos="x"]'),
    ],
)
def test_canonical_form(text: str, canonical_text: str) -> None:
    assert canonical(text) == canonical_text
    assert canonical(canonical_text) == canonical_text


@pytest.mark.parametrize(
    ("text", "canonical_text"),
    [
        ("a:[] [lemma = a.lemma]", "a:[] [lemma=a.lemma]"),
        ('a:[pos="DT"] [a.pos = "DT" & pos != a.pos]', 'a:[pos="DT"] [a.pos="DT" & pos!=a.pos]'),
        ("a:[] [_.text_id != a.text_id]", "a:[] [_.text_id!=a.text_id]"),
        ("a:[] [_.word = a.word]", "a:[] [_.word=a.word]"),  # to CQP, "_" is a label and a bare name is not
        ("a:[] [a.pos = pos]", "a:[] [a.pos=pos]"),
        ("[word = match.word]", "[word=match.word]"),
        ("a:[] b:[] [: lemma = b.lemma :] :: a.word = b.word", "a:[] b:[] [:lemma=b.lemma :] :: a.word=b.word"),
    ],
)
def test_labels_read_inside_a_token(text: str, canonical_text: str) -> None:
    """CQP's label references inside a token: ``_`` (or a bare attribute) is the token itself."""
    assert canonical(text) == canonical_text
    assert parse_cqp(canonical_text) == parse_cqp(text)


@pytest.mark.parametrize(
    ("text", "canonical_text"),
    [
        ('MU(meet [lemma="a"] [lemma="b"] s)', 'MU (meet [lemma="a"] [lemma="b"] s)'),
        ('MU (meet [pos="JJ"] "house")', 'MU (meet [pos="JJ"] [word="house"] 1 1)'),
        ('MU (meet (union [pos="JJ"] [pos="RB"]) [pos="NN"] -2 3) cut 10',
         'MU (meet (union [pos="JJ"] [pos="RB"]) [pos="NN"] -2 3) cut 10'),
        ('MU "the"', 'MU (union [word="the"] [word="the"])'),  # CQP: the hits of "the"
        ('TAB [pos="DT"] [pos="NN"]', 'TAB [pos="DT"] [pos="NN"]'),
        ('TAB [pos="IN"] {1,5} [pos="DT"] * "house" ? [] within 2 s',
         'TAB [pos="IN"] {1,5} [pos="DT"] * [word="house"] ? [] within 2 s'),
        ('TAB [pos="DT"] {,2} [pos="NN"] + [pos="VB.*"] {3} "."',
         'TAB [pos="DT"] {0,2} [pos="NN"] + [pos="VB.*"] {3} [word="."]'),
        ('MUx:[] :: MUx.word = "a"', 'MUx:[] :: MUx.word="a"'),  # a label that starts like the keyword
    ],
)
def test_mu_and_tab_queries(text: str, canonical_text: str) -> None:
    assert canonical(text) == canonical_text
    assert parse_cqp(canonical_text) == parse_cqp(text)


def test_mu_and_tab_shapes() -> None:
    meet = parse_cqp('MU (meet [pos="JJ"] [pos="NN"] -2 3) cut 5')
    assert meet.pattern == Meet(test("pos", "JJ"), test("pos", "NN"), -2, 3)
    assert meet.cut == 5
    tab = parse_cqp('TAB [pos="DT"] {0,2} [pos="NN"] "." within s')
    assert tab.pattern == Tabular((test("pos", "DT"), test("pos", "NN"), test("word", ".")), ((0, 2), (0, 0)))
    assert tab.within == "s"


@pytest.mark.parametrize("text", [
    'MU (meet [pos="JJ"] [pos="NN"]) within s',  # CQP's MU takes only cut
    'TAB [pos="DT"] [pos="NN"] cut 3',  # and TAB only within
    'MU (meet a:[pos="JJ"] [pos="NN"])',  # plain tokens only
    'TAB [pos="DT"] [pos="NN"] :: match.word = "the"',
])
def test_mu_and_tab_take_only_their_clauses(text: str) -> None:
    with pytest.raises(QueryError):
        parse_cqp(text)


@pytest.mark.parametrize(
    ("text", "offset"),
    [
        ('[a.word="x"]', 1),  # no such label at all
        ("[lemma = a.lemma] a:[]", 9),  # set only after (CQP: used before it was defined)
        ("a:[] b:[a.pos = b.pos]", 16),  # its own label is set after its test
    ],
)
def test_a_token_reads_only_labels_set_before_it(text: str, offset: int) -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        parse_cqp(text)
    assert "is read before it is set" in caught.value.message
    assert caught.value.offset == offset


@pytest.mark.parametrize(
    ("text", "message", "offset"),
    [
        ('/np["x"]', "macros", 0),
        ('[word="a"] :EN [word="b"]', "alignment constraints", 11),
        ("show corpora", "the CQP command 'show'", 0),
        ('[word="a"] sort by word', "the CQP command 'sort'", 11),
        ("count Last by lemma", "the CQP command 'count'", 0),
        ("group Last match lemma", "the CQP command 'group'", 0),
        ("set ExternalSort on", "the CQP command 'set'", 0),
        ('A = [word="x"]', "assigning the result to a name", 0),
        ('[word contains "x"]', "the operators 'contains', 'matches' and 'not'", 6),
        ("a:[] [word=target.word]", "inside a token only '_' (the token itself), 'match' and labels", 11),
        ('[word="a"] :: strlen(match.word) < 3', "the function strlen() is not supported", 14),
        ('[word="a"] :: match.x < 3', "'<', '>', '<=' and '>=' compare numbers after '::'", 22),
        ('[word="a"] -> [word="b"]', "implication", 11),
        ("[lemma=RE($x)]", "variables", 10),
        ("<match> [] </match>", "anchor points such as <match>", 0),
        ('[word="a"] # comment', "comments", 11),
    ],
)
def test_unsupported_cqp(text: str, message: str, offset: int) -> None:
    with pytest.raises(UnsupportedQueryError) as caught:
        parse_cqp(text)
    assert message in caught.value.message, caught.value.message
    assert caught.value.offset == offset
    assert caught.value.code == "unsupported"


@pytest.mark.parametrize(
    ("text", "canonical_text", "strategy"),
    [
        ('(?longest) [pos="JJ"]+ "house"', '(?longest) [pos="JJ"]+ [word="house"]', "longest"),
        ('(?Traditional)[pos="JJ"]', '(?traditional) [pos="JJ"]', "traditional"),  # CQP ignores case
        ('(? shortest ) [] "a" within s', '(?shortest) [] [word="a"] within s', "shortest"),
        ('(?standard) a:[] [] :: a.word = "x"', '(?standard) a:[] [] :: a.word="x"', "standard"),
        ('[pos="JJ"]', '[pos="JJ"]', None),
    ],
)
def test_an_embedded_modifier_sets_the_strategy(text: str, canonical_text: str, strategy: str | None) -> None:
    """CQP's (?longest) before a standard query: the strategy for that query (parser.y EmbeddedModifier)."""
    query = parse_cqp(text)
    assert query.strategy == strategy
    assert serialize(query) == canonical_text
    assert parse_cqp(canonical_text) == query


