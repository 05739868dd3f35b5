"""Parse CQP query expressions into the typed AST, refusing anything that is not one query.

``parse_cqp(text)`` runs in three steps:

1. a cheap pre-scan (length, control characters, unterminated strings, ``;``, nesting depth,
   CQP syntax that is not a query), so hostile input never reaches Lark;
2. Lark's LALR parser with ``cqp.lark``;
3. ``cqp_build.AstBuilder``, which checks flags, regexes, bounds and labels.

Lark's exceptions become ``QuerySyntaxError`` or ``UnsupportedQueryError`` with the offset of the
problem and the expected tokens in words ("expected ']' or an attribute test").
"""

from __future__ import annotations

import functools

from lark import Lark
from lark.exceptions import UnexpectedInput, VisitError

from cowbird.query.cqp_ast import Query
from cowbird.query.cqp_build import AstBuilder
from cowbird.query.cqp_diagnose import translate_lark_error
from cowbird.query.cqp_lexical import CONTROL_RE, STRING_RE
from cowbird.query.cqp_serialize import serialize
from cowbird.query.errors import QueryError, QuerySyntaxError, UnsupportedQueryError
from cowbird.query.limits import MAX_NESTING_DEPTH, check_length_and_controls, nfc


@functools.cache
def _parser() -> Lark:
    return Lark.open_from_package(
        "cowbird.query", "cqp.lark", parser="lalr", maybe_placeholders=True, propagate_positions=False
    )


@functools.lru_cache(maxsize=1024)
def parse_cqp(text: str) -> Query:
    """Parse one CQP query expression; raise ``QueryError`` (with offset) if it is not one.

    The text is normalised to Unicode NFC first, as the encoder normalises the corpus, so that
    ``entrée`` typed with a combining accent finds the corpus's ``entrée``. The last queries parsed
    are kept (the tree is immutable): a query checked, estimated and run is parsed once.
    """
    text = nfc(text)
    check_text(text)
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as error:
        raise translate_lark_error(text, error) from None
    try:
        query = AstBuilder(text).transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, QueryError):
            raise error.orig_exc from None
        raise
    assert isinstance(query, Query)
    return query


def canonical(text: str) -> str:
    """The canonical CQP text of a query: ``serialize(parse_cqp(text))``."""
    return serialize(parse_cqp(text))


# ------------------------------------------------------------------ pre-scan


def check_text(text: str) -> None:
    """Refuse, cheaply and before any parsing, text that cannot be one bounded CQP query."""
    check_length_and_controls(text, CONTROL_RE, " (a query is a single line)")
    if not text.strip(" "):
        raise QuerySyntaxError("the query is empty", text, 0)
    depth = 0
    pending_nots = 0
    opened: list[int] = []  # depth added by each open bracket, to undo it when it closes
    i = 0
    while i < len(text):
        char = text[i]
        if char in "\"'":
            string = STRING_RE.match(text, i)
            if string is None:
                hint = " (a backslash before a quote escapes it)" if "\\" + char in text[i:] else ""
                raise QuerySyntaxError(f"unterminated string: the closing {char} is missing{hint}", text, i)
            i = string.end()
            pending_nots = 0
            continue
        message = _FORBIDDEN_CHARACTERS.get(char)
        if message is not None:
            raise UnsupportedQueryError(message, text, i)
        if char == "!" and not text.startswith("!=", i):
            pending_nots += 1
        elif char in "([":
            opened.append(1 + pending_nots)
            depth += 1 + pending_nots
            pending_nots = 0
        elif char in ")]":
            depth -= opened.pop() if opened else 0
        elif char != " ":
            pending_nots = 0
        if depth + pending_nots > MAX_NESTING_DEPTH:
            raise QuerySyntaxError(
                f"the query is nested too deeply (at most {MAX_NESTING_DEPTH} levels of "
                f"parentheses, brackets and '!')",
                text,
                i,
            )
        i += 1


_FORBIDDEN_CHARACTERS = {
    ";": "';' is not allowed: give exactly one query, without a terminating ';'",
    "#": "comments ('#') are not supported",
    "$": "variables ('$name') are not supported",
    "`": "backquoted identifiers are not supported",
    "~": "label auto-deletion ('~') is not supported",
}
