"""Errors raised for bad queries, in the user's own terms.

Every error knows where in the user's text it was found (0-based character ``offset``, 1-based
``line`` and ``column``) so that the web page, the API (problem+json) and the CLI can point at it.
``pretty()`` renders the familiar caret picture::

    query_syntax: distance at the end of the query (offset 5)
      ohne 3
           ^
"""

from __future__ import annotations

from typing import Any, ClassVar

# Longer lines are cut around the offending offset so the caret stays on screen.
_CONTEXT_WIDTH = 72


class QueryError(Exception):
    """Root of all query errors; ``code`` is a short machine-readable identifier."""

    code: ClassVar[str] = "query_error"

    def __init__(self, message: str, text: str | None = None, offset: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.text = text
        if text is not None and offset is not None:
            offset = max(0, min(offset, len(text)))
        self.offset = offset if text is not None else None

    @property
    def line(self) -> int | None:
        """1-based line of ``offset`` (queries are single lines, but be honest about newlines)."""
        if self.text is None or self.offset is None:
            return None
        return self.text.count("\n", 0, self.offset) + 1

    @property
    def column(self) -> int | None:
        """1-based column of ``offset`` within its line."""
        if self.text is None or self.offset is None:
            return None
        return self.offset - (self.text.rfind("\n", 0, self.offset) + 1) + 1

    def __str__(self) -> str:
        if self.offset is None:
            return f"{self.code}: {self.message}"
        return f"{self.code}: {self.message} (offset {self.offset})"

    def pretty(self) -> str:
        """The one-line summary, then the query line and a caret under the offending character."""
        head = str(self)
        if self.text is None or self.offset is None:
            return head
        line_start = self.text.rfind("\n", 0, self.offset) + 1
        line_end = self.text.find("\n", self.offset)
        line = self.text[line_start : len(self.text) if line_end < 0 else line_end]
        column = self.offset - line_start
        start = max(0, column - _CONTEXT_WIDTH // 2)
        end = start + _CONTEXT_WIDTH
        shown = _printable(line[start:end])
        prefix = "..." if start > 0 else ""
        suffix = "..." if end < len(line) else ""
        caret = " " * (len(prefix) + column - start) + "^"
        return f"{head}\n  {prefix}{shown}{suffix}\n  {caret}"

    def as_dict(self) -> dict[str, Any]:
        """The fields an API error response carries (problem+json extension members)."""
        return {
            "code": self.code,
            "message": self.message,
            "offset": self.offset,
            "line": self.line,
            "column": self.column,
        }


class QuerySyntaxError(QueryError):
    """The query is not well-formed: a typo, a missing bracket, a bad regular expression, ..."""

    code: ClassVar[str] = "query_syntax"


class UnsupportedQueryError(QueryError):
    """Valid CQP that cowbird deliberately does not accept (commands, macros, variables, ...)."""

    code: ClassVar[str] = "unsupported"


def _printable(text: str) -> str:
    # One replacement character per control character keeps the caret aligned.
    return "".join("\N{REPLACEMENT CHARACTER}" if _is_control(c) else c for c in text)


def _is_control(char: str) -> bool:
    code = ord(char)
    return code < 0x20 or 0x7F <= code < 0xA0
