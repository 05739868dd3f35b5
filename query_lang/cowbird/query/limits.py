"""Bounds on what the query parsers accept.

They are checked with cheap scans before Lark runs, so a hostile query (a megabyte of text, ten
thousand nested parentheses) costs microseconds and ends in a clean error, never a RecursionError
or a hang. Real linguists' queries stay far below every one of them.
"""

from __future__ import annotations

import re
import unicodedata

from cowbird.query.errors import QuerySyntaxError

MAX_QUERY_LENGTH = 10_000
"""Characters in a query (simple or CQP), and in the CQP text a simple query translates to."""

MAX_NESTING_DEPTH = 64
"""Open parentheses, brackets and prefix ``!`` operators enclosing any point of a CQP query."""

MAX_REPETITION = 1_000
"""Largest bound in ``{n,m}`` and largest simple-language distance (CQP's HardBoundary is 500)."""

MAX_CUT = 2**31 - 1
"""Largest ``cut N`` (CQP stores it in a C int)."""


def check_length_and_controls(text: str, controls: re.Pattern[str], why: str = "") -> None:
    """Refuse a query over ``MAX_QUERY_LENGTH`` or with a character ``controls`` matches (``why``
    says why such characters are not allowed)."""
    if len(text) > MAX_QUERY_LENGTH:
        raise QuerySyntaxError(
            f"the query is too long ({len(text):,} characters; at most {MAX_QUERY_LENGTH:,})", text, MAX_QUERY_LENGTH
        )
    control = controls.search(text)
    if control:
        raise QuerySyntaxError(
            f"control character U+{ord(control.group()):04X} is not allowed in a query{why}", text, control.start()
        )


def nfc(text: str) -> str:
    """``text`` in Unicode NFC, the form cwb-encode (and cowbird's encoder) stores."""
    return text if text.isascii() or unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)
