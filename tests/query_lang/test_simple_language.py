"""The simplified query language: translation to CQP and errors in the user's terms."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cowbird.query import (
    Distance,
    QuerySyntaxError,
    SimpleQuery,
    Term,
    canonical,
    parse_cqp,
    parse_simple,
    translate,
)


@pytest.mark.parametrize(
    ("simple", "ignore_case", "cqp"),
    [
        # The examples of issue #3 and the Colibri² paper.
        ("ohne 0-2 ^Beanstandung", True, '[word="ohne"%c] []{0,2} [lemma="Beanstandung"%c]'),
        ("Haus", False, '[word="Haus"]'),
        ("^geh* 3 nach", False, '[lemma="geh.*"] []{3} [word="nach"]'),
        ("3.5", False, '[word="3\\.5"]'),
        ("(", False, '[word="\\("]'),
        ('"3"', False, '[word="3"]'),
        # Distances: 0 is adjacency, 1 is one arbitrary token, 0-1 an optional one.
        ("a 0 b", False, '[word="a"] [word="b"]'),
        ("a 0-0 b", False, '[word="a"] [word="b"]'),
        ("a 1 b", False, '[word="a"] [] [word="b"]'),
        ("a 0-1 b", False, '[word="a"] []? [word="b"]'),
        ("a 2-2 b", False, '[word="a"] []{2} [word="b"]'),
        ("a 1-3 b 4 c", False, '[word="a"] []{1,3} [word="b"] []{4} [word="c"]'),
        # Quoting: literal asterisk, quoted lemma, escaped quote and backslash.
        ('"a*b" a*b', False, '[word="a\\*b"] [word="a.*b"]'),
        ('^"x y"', False, '[lemma="x y"]'),
        ('^"3"', True, '[lemma="3"%c]'),
        ('"say \\"hi"', False, '[word="say \\"hi"]'),
        ('"C:\\\\temp"', False, '[word="C:\\\\temp"]'),
        ('"a\\b"', False, '[word="a\\\\b"]'),
        # Everything regex-special is escaped; non-ASCII passes through.
        (
            "$5 [x] {y} a|b ^c+d?",
            False,
            '[word="\\$5"] [word="\\[x\\]"] [word="\\{y\\}"] [word="a\\|b"] [lemma="c\\+d\\?"]',
        ),
        ("Größe café 日本", True, '[word="Größe"%c] [word="café"%c] [word="日本"%c]'),
        ('don"t', False, '[word="don\\"t"]'),
        ("*", False, '[word=".*"]'),
        ("-3 3x", False, '[word="-3"] [word="3x"]'),
        # A final literal backslash cannot end a CQP string, so it is written \x5c.
        ("C:\\", False, '[word="C:\\x5c"]'),
        # A term ending with a quote needs single quotes in CQP (see cqp_lexical.quote).
        ('"\\""', False, "[word='\\\"']"),
        # Tabs and line breaks separate terms like spaces.
        ("a\tb\nc", False, '[word="a"] [word="b"] [word="c"]'),
        ("  padded  ", False, '[word="padded"]'),
    ],
)
def test_translation(simple: str, ignore_case: bool, cqp: str) -> None:
    assert translate(simple, ignore_case=ignore_case) == cqp


def test_parse_simple_ast() -> None:
    assert parse_simple('ohne 0-2 ^Beanst* "a*" ^"x"') == SimpleQuery(
        (
            Term("ohne"),
            Distance(0, 2),
            Term("Beanst*", lemma=True),
            Term("a*", wildcards=False),
            Term("x", lemma=True, wildcards=False),
        )
    )


def test_error_picture() -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        translate("ohne 3")
    assert caught.value.pretty().splitlines() == [
        "query_syntax: distance at the end of the query: 3 counts tokens between two terms; "
        'write "3" to search for the number (offset 5)',
        "  ohne 3",
        "       ^",
    ]
    assert (caught.value.line, caught.value.column) == (1, 6)


def test_translation_too_long_for_cqp_is_refused() -> None:
    with pytest.raises(QuerySyntaxError, match="too long once translated"):
        translate(" ".join(["a*b"] * 2000))


SIMPLE_ITEMS = st.one_of(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp")), min_size=1, max_size=5
    ),
    st.from_regex(r'\^?"([^"\\\x00-\x1f]|\\["\\])+"', fullmatch=True),
    st.from_regex(r"[0-9]{1,3}(-[0-9]{1,3})?", fullmatch=True),
)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(SIMPLE_ITEMS, min_size=1, max_size=6), st.booleans())
def test_translations_are_canonical_cqp(items: list[str], ignore_case: bool) -> None:
    text = " ".join(items)
    try:
        cqp = translate(text, ignore_case=ignore_case)
    except QuerySyntaxError:
        return
    assert canonical(cqp) == cqp
    assert parse_cqp(cqp).within is None
