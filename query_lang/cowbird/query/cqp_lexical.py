"""CQP's lexical rules that both the parser and the serializer must agree on.

Strings follow CQP's lexer (cqp/parser.l): single or double quotes; a backslash keeps itself and
the next character (``"\\("`` is the regex ``\\(``); a doubled quote stands for one quote character
(``"a""b"`` is ``a"b``). Identifiers are ``[A-Za-z_][A-Za-z0-9_-]*`` and must not be CQP keywords.

A subtlety matters for security: CQP's lexer takes the *longest* match and also lets a backslash
stand for itself, so ``"\\""`` followed later by another ``"`` is read by CQP as one long string
running on to that later quote. ``quote()`` therefore never writes a string whose last character
before the closing quote is the quote character itself; a value may end with a backslash pair
(``"\\\\"``, the regex for one backslash) only where no quote follows that CQP could run on to:
``strings_read_alike`` checks a whole query text, and both the parser and the serializer refuse a
text where CQP would read a string differently. A value cannot end with a lone backslash.
"""

from __future__ import annotations

import re

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")

# Reserved by CQP's lexer (case-sensitive): a query using one of them as an attribute, an
# s-attribute or a label name is a syntax error in real CQP, so it must be one here too.
RESERVED_WORDS = frozenset(
    """
    exit cat def define diff difference discard inter intersect intersection join subset left
    right save show cd group where within with without delete expand to set source cut info meet
    union MU TAB sort count by foreach on yes off no asc ascending desc descending reverse sleep
    reduce maximal size dump undump tabulate not contains matches unlock user host macro
    randomize from inclusive exclusive NULL match matchend target collocate keyword leftmost
    rightmost nearest farthest
    """.split()
)

# Words that start a CQP command or a query type other than a standard query.
COMMAND_WORDS = frozenset(
    """
    exit cat def define diff difference discard inter intersect intersection join subset save
    show cd group delete set source info sort count sleep reduce size dump undump tabulate unlock
    user host macro randomize
    """.split()
)

# Tags CQP lexes as anchor points for subqueries (<match>, </target>), not as s-attributes.
ANCHOR_TAGS = frozenset({"match", "matchend", "target", "collocate", "keyword"})

CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")

STRING_RE = re.compile(r""""(?:\\.|""|[^"\\])*"|'(?:\\.|''|[^'\\])*'""", re.DOTALL)


def flex_string_end(text: str, start: int) -> int | None:
    """Where CQP's flex lexer ends the string that starts at ``start``: the longest match of
    ``"(\\\\[^\\r\\n]|""|[^"\\r\\n])*"`` (or the same with single quotes), in which a backslash may
    also stand for itself. None if no string can be matched."""
    delimiter = text[start]
    states = {"inside"}
    end = None
    for i in range(start + 1, len(text)):
        char, following = text[i], set()
        for state in states:
            if char in "\r\n":
                continue
            if state == "escape":
                following.add("inside")
            elif state == "quote":  # just read a quote: the string ended, or a doubled quote continues
                if char == delimiter:
                    following.add("inside")
            elif char == "\\":
                following |= {"inside", "escape"}
            elif char == delimiter:
                following.add("quote")
            else:
                following.add("inside")
        if "quote" in following:
            end = i + 1
        states = following
        if not states:
            break
    return end


def string_spans(text: str) -> list[tuple[int, int]]:
    """The strings of a query text as this package's lexer reads them (a backslash always escapes)."""
    spans, i = [], 0
    while i < len(text):
        if text[i] in "\"'":
            match = STRING_RE.match(text, i)
            if match is None:
                break
            spans.append(match.span())
            i = match.end()
        else:
            i += 1
    return spans


def misread_string(text: str) -> tuple[int, int] | None:
    """The first string of ``text`` that CQP's lexer would end elsewhere (start, and where CQP ends
    it), or None when CQP reads every string as this package does. Only a value ending in a
    backslash can be read differently; the check is skipped for texts without one."""
    if "\\\"" not in text and "\\'" not in text:
        return None
    for start, end in string_spans(text):
        flex_end = flex_string_end(text, start)
        if flex_end != end:
            return start, flex_end if flex_end is not None else len(text)
    return None


def is_name(text: str) -> bool:
    """True for a CQP identifier that is not a reserved word."""
    return NAME_RE.fullmatch(text) is not None and text not in RESERVED_WORDS


def unquote(token: str) -> tuple[str, list[int]]:
    """The value of a quoted CQP string and, per value character, its offset inside ``token``.

    The offsets let a regex error inside the value be reported at its place in the query.
    """
    delimiter = token[0]
    body_end = len(token) - 1
    chars: list[str] = []
    offsets: list[int] = []
    i = 1
    while i < body_end:
        char = token[i]
        if char == "\\" and i + 1 < body_end:
            chars += [char, token[i + 1]]
            offsets += [i, i + 1]
            i += 2
            continue
        chars.append(char)
        offsets.append(i)
        i += 2 if char == delimiter else 1
    return "".join(chars), offsets


def unrepresentable_reason(value: str) -> str | None:
    """Why ``value`` cannot be written as a CQP string, or None if it can."""
    match = CONTROL_RE.search(value)
    if match:
        return f"a value cannot contain the control character U+{ord(match.group()):04X}"
    if (len(value) - len(value.rstrip("\\"))) % 2:  # a backslash pair (\\) at the end is fine
        return "a value cannot end with a lone backslash (in a regex, write \\\\ for a backslash)"
    return None


def quote(value: str) -> str:
    """``value`` as a CQP string literal that CQP's lexer reads back as exactly ``value``.

    Double quotes, unless the value ends with a double quote: then single quotes, because a
    closing quote right after a quote character could be read by CQP as part of a doubled quote.
    Raises ValueError for values that ``unrepresentable_reason`` rejects.
    """
    reason = unrepresentable_reason(value)
    if reason is not None:
        raise ValueError(reason)
    delimiter = "'" if value.endswith('"') else '"'
    out: list[str] = []
    i = 0
    while i < len(value):
        char = value[i]
        if char == "\\":
            # Backslash pairs pass through untouched: CQP hands them to the regex engine as is.
            out.append(value[i : i + 2])
            i += 2
            continue
        out.append(char + char if char == delimiter else char)
        i += 1
    return delimiter + "".join(out) + delimiter
