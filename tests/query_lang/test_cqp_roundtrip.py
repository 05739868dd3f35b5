"""``parse_cqp(serialize(ast)) == ast`` for generated ASTs, and the AST's own guarantees."""

from __future__ import annotations

import pytest
from hypothesis import given, settings

from cowbird.query import Query, QueryError, canonical, parse_cqp, serialize
from tests.query_lang.strategies import queries


@settings(max_examples=200, deadline=None)
@given(queries())
@pytest.mark.slow
def test_parse_of_serialize_is_identity(query: Query) -> None:
    text = serialize(query)
    assert parse_cqp(text) == query
    assert canonical(text) == text


@pytest.mark.slow
@settings(max_examples=50, deadline=None)
@given(queries())
def test_ast_is_hashable_and_frozen(query: Query) -> None:
    assert hash(query) == hash(parse_cqp(serialize(query)))
    try:
        query.cut = 3  # type: ignore[misc]
    except AttributeError:
        pass
    else:  # pragma: no cover - a mutable AST would be a bug
        raise AssertionError("Query is not frozen")


def test_no_lark_object_leaves_the_package() -> None:
    query = parse_cqp('a:[word="x"%c]+ <s> :: a.lemma="y" within s')
    seen, stack = [], [query]
    while stack:
        node = stack.pop()
        seen.append(type(node).__module__)
        if hasattr(node, "__dataclass_fields__"):
            stack.extend(getattr(node, name) for name in node.__dataclass_fields__)
        elif isinstance(node, tuple):
            stack.extend(node)
    assert not [module for module in seen if module.startswith("lark")]
    assert all(module in ("builtins", "cowbird.query.cqp_ast") for module in seen)


def test_errors_are_query_errors_not_lark_errors() -> None:
    for text in ['[word="a" &]', "]", '[word="a"] within', "<s", "@@[]"]:
        try:
            parse_cqp(text)
        except QueryError as error:
            assert type(error).__module__ == "cowbird.query.errors"
        else:  # pragma: no cover
            raise AssertionError(f"{text!r} was accepted")
