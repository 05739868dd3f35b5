"""Errors of the query engines; each has a stable ``code`` the node service maps to HTTP."""

from __future__ import annotations


class EngineError(Exception):
    """Root of engine errors: the query cannot be run as asked."""

    code = "engine_error"


class UnknownAttribute(EngineError):
    """The query names an attribute the corpus does not have."""

    code = "unknown_attribute"


class QueryTooExpensive(EngineError):
    """A part of the query (a hostile regex, a huge repetition) would take too long."""

    code = "too_expensive"


class EngineUnavailable(EngineError):
    """The engine cannot run here (e.g. the cwb engine without CWB installed)."""

    code = "unavailable"


class QueryTimeout(EngineError):
    """The query ran past its time budget and was stopped."""

    code = "timeout"
