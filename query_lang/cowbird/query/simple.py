"""The simplified query language of Colibri², and its translation to CQP.

A query is a sequence of terms, with optional distances between them::

    ohne 0-2 ^Beanstandung     (case-insensitive)  ->  [word="ohne"%c] []{0,2} [lemma="Beanstandung"%c]

- ``Haus`` is a word form, ``^Haus`` a lemma. In an unquoted term ``*`` stands for any characters
  (``^geh*`` -> ``[lemma="geh.*"]``); every other regex-special character is literal and escaped
  (``3.5`` -> ``[word="3\\.5"]``).
- ``"..."`` is always a literal word form (``"3"`` is the token 3, not a distance; ``"a*"`` has a
  real asterisk); ``^"..."`` a literal lemma. Inside quotes ``\\"`` is a quote and ``\\\\`` a backslash;
  any other backslash is itself.
- A bare number ``n`` between two terms is exactly n arbitrary tokens, ``n-m`` n to m. Distance 0
  is what adjacent terms already mean, so ``a 0 b`` is ``[word="a"] [word="b"]``; distance 1 is
  written ``[]``; others ``[]{n}``, ``[]{n,m}`` (``[]?`` for 0-1).
- Case sensitivity is not part of the query: ``ignore_case`` adds ``%c`` to every term.

``translate`` builds the CQP AST and serialises it, so its output is canonical CQP that
``parse_cqp`` accepts.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import assert_never

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput

from cowbird.query.cqp_ast import AttributeTest, Pattern, Query, RegexValue, Repetition, Sequence, TokenPattern
from cowbird.query.cqp_serialize import serialize
from cowbird.query.errors import QuerySyntaxError
from cowbird.query.limits import MAX_QUERY_LENGTH, MAX_REPETITION, check_length_and_controls, nfc


@dataclass(frozen=True)
class Term:
    """A word form or (``lemma``) a lemma; ``text`` has quotes and escapes removed.

    ``wildcards`` is True for unquoted terms, whose ``*`` stands for any characters.
    """

    text: str
    lemma: bool = False
    wildcards: bool = True


@dataclass(frozen=True)
class Distance:
    """Between ``min`` and ``max`` arbitrary tokens (``3`` is 3-3)."""

    min: int
    max: int


@dataclass(frozen=True)
class SimpleQuery:
    """Terms, with at most one distance between two terms."""

    items: tuple[Term | Distance, ...]


# Tabs and line breaks separate terms like spaces; other control characters are refused.
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_REGEX_SPECIAL = frozenset('\\^$.|?*+()[]{}"')


@functools.cache
def _parser() -> Lark:
    return Lark.open_from_package("cowbird.query", "simple.lark", parser="lalr")


def parse_simple(text: str) -> SimpleQuery:
    """Parse a simple query (normalised to NFC, like the corpus); raise ``QuerySyntaxError`` saying
    what is wrong and where."""
    text = nfc(text)
    check_length_and_controls(text, _CONTROL)
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as error:
        raise _lexical_error(text, error) from None
    tokens = [token for item in tree.children if isinstance(item, Tree) for token in item.children]
    if not tokens:
        raise QuerySyntaxError('the query is empty: type a word, a ^lemma or "quoted text"', text, 0)
    items: list[Term | Distance] = []
    for index, token in enumerate(tokens):
        assert isinstance(token, Token)
        if token.type in ("COUNT", "RANGE"):
            items.append(_distance(text, token, index, len(tokens), items))
        elif token.type == "WORD" and re.fullmatch(r"[0-9]+-", str(token)):
            raise QuerySyntaxError(
                f"{token} is not a distance: a range needs two numbers, as in 0-2; "
                f'write "{token}" to search for it as a word',
                text,
                _offset(token),
            )
        else:
            items.append(_term(text, token))
    return SimpleQuery(tuple(items))


def _offset(token: Token) -> int:
    return token.start_pos or 0


def _distance(text: str, token: Token, index: int, count: int, previous: list[Term | Distance]) -> Distance:
    numbers = str(token).split("-")
    low, high = (_number(text, token, numbers[0]), _number(text, token, numbers[-1]))
    if high < low:
        raise QuerySyntaxError(
            f"in the distance {token} the second number must not be smaller than the first",
            text,
            _offset(token),
        )
    if index == 0:
        raise QuerySyntaxError(
            f"distance at the start of the query: {token} counts tokens between two terms; "
            f'write "{token}" to search for the number',
            text,
            _offset(token),
        )
    if isinstance(previous[-1], Distance):
        raise QuerySyntaxError("two distances in a row: put a term between them", text, _offset(token))
    if index == count - 1:
        raise QuerySyntaxError(
            f"distance at the end of the query: {token} counts tokens between two terms; "
            f'write "{token}" to search for the number',
            text,
            _offset(token),
        )
    return Distance(low, high)


def _number(text: str, token: Token, digits: str) -> int:
    value = int(digits) if len(digits) <= 6 else MAX_REPETITION + 1
    if value > MAX_REPETITION:
        raise QuerySyntaxError(f"a distance can be at most {MAX_REPETITION:,} tokens", text, _offset(token))
    return value


def _term(text: str, token: Token) -> Term:
    value = str(token)
    lemma = value.startswith("^")
    body = value[1:] if lemma else value
    if not body.startswith('"'):
        return Term(body, lemma=lemma, wildcards=True)
    start = _offset(token) + (1 if lemma else 0)
    if body == '""':
        raise QuerySyntaxError("empty quoted term", text, start)
    inner = body[1:-1]
    separator = re.search(r"[\t\n\r]", inner)
    if separator:
        raise QuerySyntaxError(
            "a quoted term cannot contain a tab or line break", text, start + 1 + separator.start()
        )
    # \" and \\ are the only escapes; any other backslash stands for itself.
    unescaped = re.sub(r'\\(["\\])', r"\1", inner)
    return Term(unescaped, lemma=lemma, wildcards=False)


def _lexical_error(text: str, error: UnexpectedInput) -> QuerySyntaxError:
    offset = error.pos_in_stream if isinstance(error, UnexpectedCharacters) else len(text)
    offset = offset or 0
    if text.startswith("^", offset):
        if offset + 1 >= len(text) or text[offset + 1].isspace():
            return QuerySyntaxError("'^' must be followed directly by a lemma, as in ^gehen", text, offset)
        offset += 1
    if text.startswith('"', offset):
        quoted = _QUOTED.match(text, offset)
        if quoted is None:
            return QuerySyntaxError('unterminated quoted term: the closing " is missing', text, offset)
        return QuerySyntaxError(
            "a quoted term must be followed by a space or the end of the query", text, quoted.end()
        )
    return QuerySyntaxError(f"unexpected character {text[offset : offset + 1]!r}", text, offset)


# ------------------------------------------------------------------ translation to CQP


def term_regex(term: Term) -> str:
    """The CQP regex for a term: literal text escaped, unquoted ``*`` as ``.*``."""
    parts = term.text.split("*") if term.wildcards else [term.text]
    return ".*".join(_escape(part) for part in parts)


def _escape(text: str) -> str:
    escaped = "".join("\\" + char if char in _REGEX_SPECIAL else char for char in text)
    # A CQP string cannot end with a backslash, so a final literal backslash is written \x5c.
    return escaped[:-2] + "\\x5c" if escaped.endswith("\\\\") else escaped


def to_cqp(query: SimpleQuery, ignore_case: bool = False) -> Query:
    """The CQP AST of a simple query."""
    items: list[Pattern] = []
    for item in query.items:
        if isinstance(item, Term):
            value = RegexValue(term_regex(item), ignore_case=ignore_case)
            items.append(TokenPattern(AttributeTest("lemma" if item.lemma else "word", False, value)))
        elif isinstance(item, Distance):
            items += _gap(item)
        else:
            assert_never(item)
    return Query(items[0] if len(items) == 1 else Sequence(tuple(items)))


def _gap(distance: Distance) -> list[Pattern]:
    """Arbitrary tokens between two terms: none for 0, ``[]`` for 1, ``[]{n,m}`` otherwise."""
    if distance.max == 0:
        return []
    if distance.min == distance.max == 1:
        return [TokenPattern(None)]
    return [Repetition(TokenPattern(None), distance.min, distance.max)]


def translate_query(text: str, ignore_case: bool = False) -> tuple[Query, str]:
    """A simple query as the CQP AST and its canonical text; raise ``QuerySyntaxError`` if it is bad
    (or too long once translated)."""
    query = to_cqp(parse_simple(text), ignore_case)
    cqp = serialize(query)
    if len(cqp) > MAX_QUERY_LENGTH:
        raise QuerySyntaxError(
            f"the query is too long once translated to CQP ({len(cqp):,} characters; "
            f"at most {MAX_QUERY_LENGTH:,})",
            text,
            len(text),
        )
    return query, cqp


def translate(text: str, ignore_case: bool = False) -> str:
    """Translate a simple query to canonical CQP text; raise ``QuerySyntaxError`` if it is bad."""
    return translate_query(text, ignore_case)[1]
