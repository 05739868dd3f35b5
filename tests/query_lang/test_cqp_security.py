"""Only one bounded query expression gets through, and the serializer cannot be made to emit more.

The front end forwards ``serialize(parse_cqp(user_text))`` to the nodes, never the user's text,
so the checks here are about two things: hostile text ends in a clean ``QueryError`` quickly, and
no AST serialises to text that CQP's own lexer would read differently.
"""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cowbird.query import (
    AttributeTest,
    Comparison,
    LabelRef,
    Query,
    QueryError,
    QuerySyntaxError,
    RegexValue,
    StructuralTag,
    TokenPattern,
    UnsupportedQueryError,
    parse_cqp,
    serialize,
)
from cowbird.query.cqp_lexical import flex_string_end, string_spans
from tests.query_lang.strategies import LITERALS, REGEXES, queries

INJECTIONS = [
    '[word="a"]; cat Last > "/tmp/x"',
    '[word="a"];',
    ";",
    'cat Last > "/tmp/x"',
    "set ExternalSort on",
    'set PrettyPrint off; [word="a"]',
    'define $x = "a"',
    'source "/etc/passwd"',
    'dump Last > "/tmp/x"',
    'undump X < "/tmp/x"',
    "exit",
    "sleep 100",
    "unlock 42",
    '[word="a"] > "/tmp/x"',
    '[word="a"] >> "/tmp/x"',
    '[word="a"] > "| rm -rf ~"',
    '[word="a"]\x00; cat',
    '[word="a"]\ncat Last',
    '[word="a"]\r\n',
    '[word="a\nb"]',
    '[word="a"]\t',
    '[word="unterminated',
    '[word="a\\"] ; cat Last',
    "/macro[]",
    '[word="a"] :OTHER_CORPUS [word="b"]',
    "Last",
    "A = Last",
    "x" * 1_000_000,
    "(" * 10_000 + "[]" + ")" * 10_000,
    "(" * 4_000 + "[]" + ")" * 4_000,
    "[" + "!" * 5_000 + 'a="b"]',
    "[" + "(" * 3_000 + 'a="b"' + ")" * 3_000 + "]",
    "[] :: " + "!(" * 2_000 + 'match.a="b"' + ")" * 2_000,
    '[pos="(((a{1000}){1000}){1000})"]',
    " ".join(['[w="a{1000}"]'] * 600),
]


@pytest.mark.parametrize("text", INJECTIONS, ids=lambda t: repr(t[:30]))
def test_injection_attempts_end_in_a_clean_error(text: str) -> None:
    with pytest.raises((QuerySyntaxError, UnsupportedQueryError)) as caught:
        parse_cqp(text)
    assert caught.value.offset is not None and 0 <= caught.value.offset <= len(text)
    assert caught.value.pretty()  # renders, even for megabytes or control characters


def test_semicolon_is_reported_where_it_is() -> None:
    with pytest.raises(UnsupportedQueryError) as caught:
        parse_cqp('[word="a"]; cat Last > "/tmp/x"')
    assert caught.value.offset == 10
    assert "';' is not allowed" in caught.value.message


def test_control_characters_are_positioned() -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        parse_cqp('[word="a"]\ncat Last')
    assert caught.value.offset == 10
    assert "U+000A" in caught.value.message


def test_strings_may_contain_what_would_be_dangerous_outside_them() -> None:
    query = parse_cqp("""[word=";" | word="cat Last > \\"/tmp/x\\"" | word='#'] within s""")
    assert serialize(query) == """[word=";" | word='cat Last > \\"/tmp/x\\"' | word="#"] within s"""


@pytest.mark.parametrize(
    "query",
    [
        Query(TokenPattern(AttributeTest("word", False, RegexValue("a\\")))),
        Query(TokenPattern(AttributeTest("word", False, RegexValue("a\nb")))),
        Query(TokenPattern(AttributeTest("word", False, RegexValue("a\x00")))),
        Query(TokenPattern(AttributeTest('word="x"] ; cat', False, RegexValue("a")))),
        Query(TokenPattern(AttributeTest("within", False, RegexValue("a")))),
        Query(TokenPattern(None, label="a:b")),
        Query(TokenPattern(None), within="s; cat Last"),
        Query(TokenPattern(None), expand="s > x"),
        Query(TokenPattern(None), cut=0),
        Query(TokenPattern(None), constraint=Comparison(LabelRef("a.b", "x"), False, RegexValue("y"))),
        Query(StructuralTag("s>; cat")),
        Query(StructuralTag("match")),
        Query(TokenPattern(AttributeTest("word", False, RegexValue("a", ignore_case=True, literal=True)))),
    ],
)
def test_serializer_refuses_what_it_cannot_write_safely(query: Query) -> None:
    with pytest.raises(QueryError):
        serialize(query)


def test_flex_emulation_sees_the_hazard_we_avoid() -> None:
    # The reason values ending in a quote are written in single quotes: flex would run on.
    naive = '[word="\\""] [pos="x"]'
    assert flex_string_end(naive, 6) == len('[word="\\""] [pos="')
    careful = serialize(parse_cqp(naive))
    assert careful == '[word=\'\\"\'] [pos="x"]'
    assert [flex_string_end(careful, start) for start, _ in string_spans(careful)] == [
        end for _, end in string_spans(careful)
    ]


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(queries())
def test_cqp_lexer_reads_every_serialized_string_as_we_wrote_it(query: Query) -> None:
    text = serialize(query)
    for start, end in string_spans(text):
        assert flex_string_end(text, start) == end, text


@settings(max_examples=200, deadline=None)
@given(REGEXES | LITERALS, st.sampled_from(["]", "%c]", "> []", " | a.b=match.c]", " within s"]))
def test_any_value_stays_inside_its_quotes(value: str, after: str) -> None:
    query = Query(TokenPattern(AttributeTest("word", False, RegexValue(value, literal=True))))
    text = serialize(query)
    [(start, end)] = string_spans(text)
    assert text[end:] == "%l]"
    assert flex_string_end(text + after, start) == end
    assert parse_cqp(text) == query


def test_a_value_ending_in_a_backslash_pair_is_written_only_where_cqp_reads_it_alike() -> None:
    # CQP's lexer reads "\\" as the regex \\ when no quote follows ...
    alone = '[word="\\\\"]'
    assert serialize(parse_cqp(alone)) == alone
    assert flex_string_end(alone, 6) == len(alone) - 1
    # ... but runs on to a later quote otherwise (a backslash may stand for itself): refused, not misread
    followed = '[word="\\\\" | word="x"]'
    assert flex_string_end(followed, 6) == len('[word="\\\\" | word="')
    with pytest.raises(QueryError, match="x5c"):
        serialize(parse_cqp(followed))
    assert serialize(parse_cqp('[word="\\x5c" | word="x"]')) == '[word="\\x5c" | word="x"]'


@pytest.mark.slow  # a wall-clock bound, generous: each is refused in milliseconds here; 10 s means a blow-up
def test_injection_attempts_are_refused_without_a_blow_up() -> None:
    for text in INJECTIONS:
        started = time.perf_counter()
        with pytest.raises((QuerySyntaxError, UnsupportedQueryError)):
            parse_cqp(text)  # a refusal is not cached (lru_cache keeps only what returns)
        assert time.perf_counter() - started < 10.0, repr(text[:30])
