"""Lark's parse errors on CQP text, told in the user's terms.

Two jobs: recognise valid CQP that cowbird does not accept (commands, macros, variables, ...)
and report it as ``UnsupportedQueryError``; otherwise turn Lark's expected terminals into words,
"unexpected ']'; expected an attribute test such as pos="NN"".
"""

from __future__ import annotations

import re

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from cowbird.query.cqp_lexical import COMMAND_WORDS, NAME_RE
from cowbird.query.errors import QueryError, QuerySyntaxError, UnsupportedQueryError


def translate_lark_error(text: str, error: UnexpectedInput) -> QueryError:
    """The ``QueryError`` to raise for Lark's ``error`` on ``text``."""
    if isinstance(error, UnexpectedToken) and error.token.type != "$END":
        offset = error.token.start_pos or 0
        found = _describe_token(error.token.type, str(error.token))
        expected: set[str] = set(error.expected)
    elif isinstance(error, UnexpectedCharacters):
        offset = error.pos_in_stream or 0
        found = f"character {text[offset]!r}"
        expected = set(error.allowed or ())
    else:
        assert isinstance(error, UnexpectedToken | UnexpectedEOF)
        offset = len(text.rstrip(" "))
        found = "end of the query"
        expected = set(error.expected)
    misplaced = _misplaced_modifier(text, offset)
    if misplaced is not None:
        return QuerySyntaxError(misplaced[0], text, misplaced[1])
    unsupported = _unsupported_construct(text, offset)
    if unsupported is not None:
        return UnsupportedQueryError(unsupported, text, offset)
    if text.startswith("::", offset) and "_GCDEL" not in expected:
        return QuerySyntaxError(
            "the global constraint '::' must come right after the pattern, before 'within', "
            "'cut' and 'expand'",
            text,
            offset,
        )
    hint = _expected_in_words(expected)
    return QuerySyntaxError(f"unexpected {found}" + (f"; expected {hint}" if hint else ""), text, offset)


def _describe_token(kind: str, value: str) -> str:
    if kind == "STRING":
        return f"string {value if len(value) <= 20 else value[:17] + '...'}"
    if kind == "INT":
        return f"number {value}"
    if kind == "NAME":
        return f"word '{value}'"
    return f"'{value}'"


# ------------------------------------------------------------------ expected terminals in words

# (terminal, phrase, terminals the phrase already covers), in the order phrases are listed.
_PHRASES: list[tuple[str, str, frozenset[str]]] = [
    (
        "_LSQB",
        'a token such as [word="x"]',
        frozenset({"STRING", "TARGET", "LABEL", "TAG_START", "TAG_END", "_LPAR"}),
    ),
    ("NAME", 'an attribute test such as pos="NN"', frozenset({"_BANG", "_LPAR", "QID"})),
    ("QID", "a label reference such as match.text_id", frozenset({"_BANG", "_LPAR"})),
    ("STRING", "a quoted string", frozenset()),
    ("FLAGS", "a flag (%c, %d, %cd, %l)", frozenset()),
    ("_QMARK", "a quantifier (?, *, +, {n,m})", frozenset({"_STAR", "_PLUS", "_LBRACE"})),
    ("INT", "a number", frozenset()),
    ("EQ", "'='", frozenset({"_LPAR"})),  # after an attribute name: '(' only for lbound(s), rbound(s)
    ("NEQ", "'!='", frozenset()),
    ("_RSQB", "']'", frozenset()),
    ("_RPAR", "')'", frozenset()),
    ("_GT", "'>'", frozenset()),
    ("_RBRACE", "'}'", frozenset()),
    ("_COMMA", "','", frozenset()),
    ("_AMP", "'&'", frozenset()),
    ("_VBAR", "'|'", frozenset()),
    ("_BANG", "'!'", frozenset()),
    ("_LPAR", "'('", frozenset()),
    ("_STAR", "'*'", frozenset()),
    ("_PLUS", "'+'", frozenset()),
    ("_LBRACE", "'{'", frozenset()),
    ("TARGET", "'@'", frozenset()),
    ("LABEL", "a label such as a:", frozenset()),
    ("TAG_START", "a tag such as <s>", frozenset()),
    ("TAG_END", "a closing tag such as </s>", frozenset()),
    ("_GCDEL", "'::'", frozenset()),
    ("_WITHIN", "'within'", frozenset()),
    ("_CUT", "'cut'", frozenset()),
    ("_EXPAND", "'expand'", frozenset()),
    ("_TO", "'to'", frozenset()),
    ("DIRECTION", "'left' or 'right'", frozenset()),
    ("$END", "the end of the query", frozenset()),
]


def _expected_in_words(expected: set[str]) -> str:
    covered: set[str] = set()
    for terminal, _, covers in _PHRASES:
        if terminal in expected:
            covered |= covers
    words = [phrase for terminal, phrase, _ in _PHRASES if terminal in expected and terminal not in covered]
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


# ------------------------------------------------------------------ valid CQP, not supported

# Checked against the text at the error, in order.
_UNSUPPORTED: list[tuple[re.Pattern[str], str]] = [
    (
        re.compile(r"(?:contains|matches|not)\b"),
        "the operators 'contains', 'matches' and 'not' for multi-valued attributes are not supported",
    ),
    (re.compile(r"RE\s*\("), "RE($variable) is not supported"),
    (
        re.compile(r">"),
        "'>' closes a structural tag such as <s>, or compares numbers after '::' (distabs(a, b) > 2); "
        "output redirection is not supported",
    ),
    (
        re.compile(r"<=|<(?![A-Za-z_/])"),
        "'<', '>', '<=' and '>=' compare numbers after '::' (distabs(a, b) < 3, int(a.word) >= 1990), "
        "not values: compare values with '=' and '!='",
    ),
    (re.compile(r"->"), "implication ('->') is not supported"),
    (re.compile(r"/[A-Za-z_][A-Za-z0-9_-]*\s*[\[(]"), "macros ('/name[...]') are not supported"),
    (re.compile(r":[A-Za-z_]"), "alignment constraints (':CORPUS') are not supported"),
]

_LABEL_REFERENCE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*\.[A-Za-z_]")
_LABEL_REFERENCE_ONLY_AFTER_GCDEL = (
    "label references such as a.lemma are only supported in the global constraint after '::'"
)


def _unsupported_construct(text: str, offset: int) -> str | None:
    """If the parse failed on CQP syntax that is valid but not accepted here, say which."""
    rest = text[offset:]
    before = text[:offset].rstrip(" ")
    for pattern, message in _UNSUPPORTED:
        if pattern.match(rest):
            return message
    word = NAME_RE.match(rest)
    if word is not None:
        name = word.group()
        after = rest[word.end() :].lstrip(" ")
        if name in COMMAND_WORDS:
            return f"the CQP command '{name}' is not supported: give exactly one query expression"
        if not before and after.startswith("=") and not after.startswith("=="):
            return f"assigning the result to a name ('{name} = ...') is not supported"
        if after.startswith("("):
            return f"functions such as {name}() are not supported"
        if _LABEL_REFERENCE.match(rest) and before.endswith(("=", "[")):
            return _LABEL_REFERENCE_ONLY_AFTER_GCDEL
    if rest.startswith(".") and re.search(r"(?:^|[^A-Za-z0-9_.-])[A-Za-z_][A-Za-z0-9_-]*$", before):
        return _LABEL_REFERENCE_ONLY_AFTER_GCDEL
    return None


def _misplaced_modifier(text: str, offset: int) -> tuple[str, int] | None:
    """An embedded modifier ``(?longest)`` anywhere but first, or before an MU or TAB query, and where it
    begins: CQP refuses it there too (parser.y: EmbeddedModifier begins a StandardQuery)."""
    rest, before = text[offset:], text[:offset].rstrip(" ")
    first = re.match(r"\( *\? *[A-Za-z_][A-Za-z0-9_-]* *\) *", text)
    if first is not None and offset >= first.end() and re.match(r"(?:MU|TAB)(?![A-Za-z0-9_:.-])", rest):
        return ("a matching strategy such as (?longest) comes only before a standard query, not an MU or TAB "
                "query"), offset
    if (rest.startswith("?") and before.endswith("(")) or rest.startswith("(?"):
        return ("a matching strategy such as (?longest) comes first in the query, before its pattern, written "
                "without spaces between '(' and '?'"), len(before) - 1 if rest.startswith("?") else offset
    return None
