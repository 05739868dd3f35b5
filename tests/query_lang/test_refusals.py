"""What the query languages refuse, and that each refusal says what was wrong and where: the CQP
parser, the simple language's translator and the PCRE check of a CQP regular expression each give a
message and the offset it points at (what the search page underlines)."""

from __future__ import annotations

from typing import Literal

import pytest

from cowbird.query import QuerySyntaxError, parse_cqp, translate
from cowbird.query.pcre import compile_error

Language = Literal["cqp", "simple", "pcre"]

REFUSALS: list[tuple[Language, str, str, int]] = [
    # (the language, what is written, how its refusal starts (PCRE: the whole message), where it points)
    ("cqp", '[word="a" & ]', "unexpected ']'; expected an attribute test", 12),
    ("cqp", '[word="a"', "unexpected end of the query; expected ']', ')', '&' or '|'", 9),
    ("cqp", '([word="a"]', "unexpected end of the query; expected ')'", 11),
    ("cqp", '[word="a"] |', 'unexpected end of the query; expected a token such as [word="x"]', 12),
    ("cqp", '[word="a"] foo', "unexpected word 'foo'", 11),
    ("cqp", '[word "a"]', "unexpected string \"a\"; expected '=' or '!='", 6),
    ("cqp", '[word="a"] within s :: match.x="y"', "the global constraint '::' must come right after the pattern", 20),
    ("cqp", '[word="a"', "unexpected end of the query", 9),
    ("cqp", '[word="a"]]', "unexpected ']'", 10),
    ("cqp", '[word="a["]', "invalid regular expression: missing terminating ] for character class", 8),
    ("cqp", '[a="x" & word="(b"]', "invalid regular expression: missing )", 17),
    ("cqp", '[word="a\\"]', 'unterminated string: the closing " is missing (a backslash before a quote escapes it)', 6),
    ("cqp", "[word='a]", "unterminated string: the closing ' is missing", 6),
    ("cqp", '[word="x"%q]', "unknown flag '%q'", 10),
    ("cqp", '[word="x"%cq]', "unknown flag '%q'", 11),
    ("cqp", '[word="x"%lc]', "%l (literal) cannot be combined with %c or %d", 9),
    ("cqp", "[]{3,2}", "the upper bound of {n,m} must be between 3 and 1,000", 5),
    ("cqp", "[]{0}", "the query is vacuous", 0),
    ("cqp", "[]{1001}", "a repetition count must be between 0 and 1,000", 3),
    ("cqp", "[]{99999999999999999999999}", "a repetition count must be between 0 and 1,000", 3),
    ("cqp", '[pos="DT"]?', "the query matches the empty string", 0),
    ("cqp", '[pos="DT"]* (<s> | [pos="NN"]{0})', "the query matches the empty string", 0),
    ("cqp", '[within="x"]', "'within' is a CQP keyword and cannot be used as an attribute name", 1),
    ("cqp", "[] within cut", "'cut' is a CQP keyword and cannot be used as a structural attribute", 10),
    ("cqp", "match:[]", "'match' is a CQP keyword and cannot be used as a label", 0),
    ("cqp", '[word="a"] :: b.x="y"', "label 'b' is not set in the pattern", 14),
    ("cqp", '[] a:[word="x"]', "label 'a' is set but never read", 3),
    ("cqp", '[pos="NN"] :: target.upos="NOUN"', "'target' is not set in the pattern", 14),
    ("cqp", '[pos="((a{100}){100})"]', "counted repetitions in a regular expression may multiply to at most 1,000", 15),
    ("cqp", "(?fastest) []", "embedded modifier (?fastest) is not one CQP knows", 2),
    (
        "cqp",
        "[] (?longest) []",
        "a matching strategy such as (?longest) comes first in the query, before its pattern",
        3,
    ),
    (
        "cqp",
        "( ?longest) []",
        "a matching strategy such as (?longest) comes first in the query, before its pattern, written without "
        "spaces between '(' and '?'",
        0,
    ),
    (
        "cqp",
        '(?longest) MU (meet "a" "b")',
        "a matching strategy such as (?longest) comes only before a standard query, not an MU or TAB query",
        11,
    ),
    (
        "cqp",
        '(?longest) TAB [pos="DT"] [pos="NN"]',
        "a matching strategy such as (?longest) comes only before a standard query, not an MU or TAB query",
        11,
    ),
    ("cqp", "(?longest)", "unexpected end of the query", 10),
    ("simple", "ohne 3", "distance at the end of the query", 5),
    ("simple", "3 ohne", "distance at the start of the query", 0),
    ("simple", "3", "distance at the start of the query", 0),
    ("simple", "a 3 4 b", "two distances in a row", 4),
    ("simple", "a 2 0-1 b", "two distances in a row", 4),
    ("simple", "a 5-2 b", "in the distance 5-2 the second number must not be smaller than the first", 2),
    ("simple", "the 0-", "0- is not a distance: a range needs two numbers", 4),
    ("simple", "the 0- house", "0- is not a distance", 4),
    ("simple", "", "the query is empty", 0),
    ("simple", " \t ", "the query is empty", 0),
    ("simple", "^", "'^' must be followed directly by a lemma", 0),
    ("simple", "a ^ b", "'^' must be followed directly by a lemma", 2),
    ("simple", '"abc', 'unterminated quoted term: the closing " is missing', 0),
    ("simple", 'a ^"abc', 'unterminated quoted term: the closing " is missing', 3),
    ("simple", '"abc"def', "a quoted term must be followed by a space", 5),
    ("simple", '""', "empty quoted term", 0),
    ("simple", 'x ^""', "empty quoted term", 3),
    ("simple", "a 1001 b", "a distance can be at most 1,000 tokens", 2),
    ("simple", "a 123456789012345678901234567890 b", "a distance can be at most 1,000 tokens", 2),
    ("simple", "a\x00b", "control character U+0000", 1),
    ("simple", '"a\tb"', "a quoted term cannot contain a tab or line break", 2),
    ("simple", "x" * 10_001, "the query is too long", 10_000),
    ("pcre", "\\g1", "reference to non-existent subpattern", 0),
    ("pcre", "(?P<n>s)(?P<n>s)", "two named subpatterns have the same name", 8),
    ("pcre", "^*the", "nothing to repeat", 1),
    ("pcre", "a{2}{3}", "nothing to repeat", 4),
    ("pcre", "a+?+", "nothing to repeat", 3),
    ("pcre", "x(?x) *", "nothing to repeat", 6),
    ("pcre", "[a-\\d]", "invalid range in character class", 2),
    ("pcre", "[z-a]", "range out of order in character class", 2),
    ("pcre", "a[b", "missing terminating ] for character class", 1),
    ("pcre", "\\N{U+41}", "PCRE does not support \\N{name}", 0),
    ("pcre", "\\u0041", "PCRE does not support \\u", 0),
    ("pcre", "[[:foo:]]", "unknown POSIX class name 'foo'", 1),
    ("pcre", "\\p{Foo}", "unknown property name after \\P or \\p: 'Foo'", 0),
    ("pcre", "(a", "missing )", 2),
    ("pcre", "(?x)a # a comment runs to the line end, over CQP's )$", "missing )", 6),
]


def refusal(language: Language, text: str) -> tuple[str, int]:
    """The message and offset of the refusal of ``text`` in ``language``."""
    if language == "pcre":
        error = compile_error(text)
        assert error is not None, f"PCRE accepts {text!r}"
        return error.message, error.index
    with pytest.raises(QuerySyntaxError) as caught:
        (parse_cqp if language == "cqp" else translate)(text)
    assert caught.value.code == "query_syntax" and caught.value.offset is not None
    return caught.value.message, caught.value.offset


@pytest.mark.parametrize(("language", "text", "message", "offset"), REFUSALS)
def test_a_refusal_says_what_was_wrong_and_where(language: Language, text: str, message: str, offset: int) -> None:
    said, at = refusal(language, text)
    assert (said if language == "pcre" else said[: len(message)], at) == (message, offset), said
