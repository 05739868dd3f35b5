"""The error classes: fields, positions and the caret picture."""

from __future__ import annotations

import pytest

from cowbird.query import QueryError, QuerySyntaxError, UnsupportedQueryError, parse_cqp


def test_hierarchy_and_codes() -> None:
    assert issubclass(QuerySyntaxError, QueryError) and issubclass(UnsupportedQueryError, QueryError)
    assert (QueryError.code, QuerySyntaxError.code, UnsupportedQueryError.code) == (
        "query_error",
        "query_syntax",
        "unsupported",
    )


def test_fields_and_dict() -> None:
    with pytest.raises(QuerySyntaxError) as caught:
        parse_cqp('[word="a" & ]')
    error = caught.value
    assert (error.offset, error.line, error.column, error.text) == (12, 1, 13, '[word="a" & ]')
    assert error.as_dict() == {
        "code": "query_syntax",
        "message": "unexpected ']'; expected an attribute test such as pos=\"NN\"",
        "offset": 12,
        "line": 1,
        "column": 13,
    }
    assert (
        str(error)
        == "query_syntax: unexpected ']'; expected an attribute test such as pos=\"NN\" (offset 12)"
    )


def test_pretty_points_at_the_problem() -> None:
    with pytest.raises(UnsupportedQueryError) as caught:
        parse_cqp('[word="a"] sort by word')
    assert caught.value.pretty().splitlines()[1:] == ['  [word="a"] sort by word', "             ^"]


@pytest.mark.slow  # 1.3 s here (make quick leaves it out)
def test_pretty_cuts_long_lines_around_the_offset() -> None:
    text = '[word="a"] ' * 100 + "]"
    with pytest.raises(QuerySyntaxError) as caught:
        parse_cqp(text)
    _, shown, caret = caught.value.pretty().splitlines()
    assert shown.startswith("  ...") and len(shown) < 90
    assert shown[caret.index("^")] == "]"


def test_pretty_keeps_the_caret_aligned_past_control_characters() -> None:
    error = QuerySyntaxError("bad", "a\x00b\tc", 4)
    _, shown, caret = error.pretty().splitlines()
    assert shown[caret.index("^")] == "c"


def test_line_and_column_count_newlines() -> None:
    error = QuerySyntaxError("bad", "ab\ncd", 4)
    assert (error.line, error.column) == (2, 2)
    assert error.pretty().splitlines()[1:] == ["  cd", "   ^"]


def test_error_without_position() -> None:
    error = QuerySyntaxError("cannot be written")
    assert (error.offset, error.line, error.column) == (None, None, None)
    assert error.pretty() == "query_syntax: cannot be written"


@pytest.mark.parametrize(
    ("query", "offset"),
    [('[word="(?R)"]', 7), ('[word="(?0)"]', 7), ('[word="((?1))"]', 8), ('[word="x*(?R)"]', 9),
     ('[word="(?&a)(?P<a>x)"]', 7), ('[lemma="a\\g<1>(x)"]', 9)],
)
def test_recursive_regexes_are_refused_where_they_are(query: str, offset: int) -> None:
    with pytest.raises(QuerySyntaxError, match="recursion and subroutine calls") as error:
        parse_cqp(query)
    assert error.value.offset == offset
