"""The query builder's boxes: CQP for people who know none, and CQP read back into boxes.

A query in boxes is a row of tokens, each with its tests (attribute, operator, value, case; several
tests of one token must all hold), how often it may repeat (once, optional, one or more, …, or from
``min`` to ``max`` times), and the region the match stays within (``within s``). ``to_query``
writes the boxes as a query (the AST: the page shows its canonical CQP), ``from_query`` reads a
query back into boxes where it fits them — else ``DoesNotFit`` says what the boxes cannot show
(an alternation, a label, a global constraint …), and the page keeps the CQP as it is. Reading back
what the boxes wrote gives the same boxes, and writing what was read gives the same query
(``from_query`` refuses what it could not write back exactly).

Operators and the regular expressions they stand for (CQP matches a value whole):

============  =========================  ============
operator      value ``ab.c`` becomes      test
============  =========================  ============
is            ``ab\\.c``                  ``=``
is_not        ``ab\\.c``                  ``!=``
starts        ``ab\\.c.*``                ``=``
contains      ``.*ab\\.c.*``              ``=``
ends          ``.*ab\\.c``                ``=``
regex         ``ab.c`` (as written)      ``=``
not_regex     ``ab.c`` (as written)      ``!=``
============  =========================  ============

``ignore_case`` adds ``%c``. The literal forms escape each of ``\\ . ^ $ | ? * + ( ) [ ] { }`` with
a backslash and nothing else, so a pattern is read as a literal only when it is exactly that.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from cowbird.query.cqp_ast import (
    And,
    AttributeTest,
    Condition,
    Query,
    RegexValue,
    Repetition,
    Sequence,
    TokenPattern,
)
from cowbird.query.cqp_ast import Pattern as AstPattern
from cowbird.query.limits import nfc

Operator = Literal["is", "is_not", "starts", "contains", "ends", "regex", "not_regex"]
OPERATORS: tuple[Operator, ...] = get_args(Operator)
MAX_BOXES = 30
"""Tokens a query in boxes has at most."""

_META = "\\.^$|?*+()[]{}"
_LITERAL = re.compile(r"(?:[^\\.^$|?*+()\[\]{}]|\\[\\.^$|?*+()\[\]{}])*", re.DOTALL)


class DoesNotFit(ValueError):
    """The query cannot be shown in boxes (the reason says what in it cannot)."""


@dataclass(frozen=True)
class TokenTest:
    """One test of a token: ``attribute`` ``operator`` ``value`` (``ignore_case``: %c)."""

    attribute: str
    operator: Operator
    value: str
    ignore_case: bool = False


@dataclass(frozen=True)
class Box:
    """A token: its tests (none: any token), repeated from ``min`` to ``max`` times (None: no upper bound)."""

    tests: tuple[TokenTest, ...] = ()
    min: int = 1
    max: int | None = 1


@dataclass(frozen=True)
class Boxes:
    tokens: tuple[Box, ...]
    within: str | None = None


def escape(value: str) -> str:
    """``value`` as a regular expression matching exactly it."""
    return "".join("\\" + c if c in _META else c for c in value)


def _unescape(pattern: str) -> str | None:
    """The literal a pattern written by ``escape`` stands for, or None when it is not one."""
    if _LITERAL.fullmatch(pattern) is None:
        return None
    return re.sub(r"\\(.)", r"\1", pattern, flags=re.DOTALL)


def _regex(test: TokenTest) -> tuple[bool, str]:
    """(negated, pattern) of a test, in NFC as the corpus is (and as a typed query is read)."""
    value = nfc(test.value)
    body = escape(value)
    patterns = {"is": body, "is_not": body, "starts": body + ".*", "contains": ".*" + body + ".*",
                "ends": ".*" + body, "regex": value, "not_regex": value}
    return test.operator in ("is_not", "not_regex"), patterns[test.operator]


def to_query(boxes: Boxes) -> Query:
    """The query the boxes stand for."""
    if not boxes.tokens:
        raise DoesNotFit("the query has no token: add one")
    items: list[AstPattern] = []
    for box in boxes.tokens:
        conditions: list[Condition] = []
        for test in box.tests:
            negated, regex = _regex(test)
            conditions.append(AttributeTest(test.attribute, negated, RegexValue(regex, ignore_case=test.ignore_case)))
        condition = None if not conditions else conditions[0] if len(conditions) == 1 else And(tuple(conditions))
        token = TokenPattern(condition)
        items.append(token if (box.min, box.max) == (1, 1) else Repetition(token, box.min, box.max))
    pattern = items[0] if len(items) == 1 else Sequence(tuple(items))
    return Query(pattern, within=boxes.within)


def _test(condition: Condition) -> TokenTest:
    if not isinstance(condition, AttributeTest) or condition.this:
        raise DoesNotFit("a token's tests are attribute = value, joined by & (no |, !, label or function)")
    value = condition.value
    if value.literal or value.ignore_diacritics:
        raise DoesNotFit(f"{'%l' if value.literal else '%d'} on a value (the boxes have a case switch only)")
    pattern, case = value.pattern, value.ignore_case
    literal = _unescape(pattern)
    if literal is not None:
        return TokenTest(condition.attribute, "is_not" if condition.negated else "is", literal, case)
    if not condition.negated:
        for operator, prefix, suffix in (("contains", ".*", ".*"), ("starts", "", ".*"), ("ends", ".*", "")):
            if pattern.startswith(prefix) and pattern.endswith(suffix) and len(pattern) > len(prefix + suffix):
                inner = _unescape(pattern[len(prefix): len(pattern) - len(suffix)])
                if inner is not None and inner:
                    return TokenTest(condition.attribute, operator, inner, case)  # type: ignore[arg-type]
    return TokenTest(condition.attribute, "not_regex" if condition.negated else "regex", pattern, case)


def _box(item: AstPattern) -> Box:
    low: int = 1
    high: int | None = 1
    if isinstance(item, Repetition):
        low, high = item.min, item.max
        item = item.item
    if not isinstance(item, TokenPattern):
        raise DoesNotFit("the boxes hold tokens one after the other: no alternatives (|), groups or <tags>")
    if item.label or item.target or item.keyword or item.lookahead:
        raise DoesNotFit("a label, a target (@) or a lookahead on a token")
    condition = item.condition
    operands = () if condition is None else condition.operands if isinstance(condition, And) else (condition,)
    return Box(tuple(_test(c) for c in operands), low, high)


def from_query(query: Query) -> Boxes:
    """The boxes showing ``query``; ``DoesNotFit`` when they cannot."""
    parts = {"a global constraint (::)": query.constraint is not None, "cut": query.cut is not None,
             "expand": query.expand is not None or query.expand_tokens is not None,
             "within N tokens, or more than one region": query.within_tokens is not None or query.within_count != 1,
             "a matching strategy": query.strategy is not None}
    for what, present in parts.items():
        if present:
            raise DoesNotFit(f"{what}: the boxes cannot show it")
    pattern = query.pattern
    items = pattern.items if isinstance(pattern, Sequence) else (pattern,)
    if any(not isinstance(item, TokenPattern | Repetition) for item in items):
        raise DoesNotFit("the boxes hold tokens one after the other: no alternatives (|), groups, MU or TAB "
                         "queries, or <tags>")
    boxes = Boxes(tuple(_box(item) for item in items), query.within)  # type: ignore[arg-type]
    if len(boxes.tokens) > MAX_BOXES:
        raise DoesNotFit(f"more than {MAX_BOXES} tokens")
    if to_query(boxes) != query:
        raise DoesNotFit("the boxes would write it differently")
    return boxes
