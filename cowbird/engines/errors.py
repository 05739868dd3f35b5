"""Errors of the query engines, each with its HTTP status and stable ``code`` (see ``cowbird.core.errors``).

An unknown attribute is ``cowbird.core.errors.UnknownAttribute`` (re-exported here): the store, the
engines and the front end raise the same class.
"""

from __future__ import annotations

from cowbird.core.errors import CowbirdError, LimitExceeded, OutOfRange, UnknownAttribute

__all__ = [
    "EngineError",
    "EngineUnavailable",
    "InvalidOption",
    "LimitExceeded",
    "OutOfRange",
    "QueryFailed",
    "QueryTimeout",
    "QueryTooExpensive",
    "UnknownAttribute",
]


class EngineError(CowbirdError):
    """Root of engine errors; used directly, the engine itself failed (a server-side problem)."""

    code, title = "engine_error", "The query engine failed"


class InvalidOption(EngineError):
    """An option of the evaluation (matching strategy, engine name) is not one the engine knows."""

    status, code, title = 400, "invalid_request", "The request does not match the API"


class QueryFailed(EngineError):
    """The engine refused the query itself (real CQP's error message, for the cwb engine)."""

    status, code, title = 400, "query_failed", "The engine could not run the query"


class QueryTooExpensive(EngineError, LimitExceeded):
    """A part of the query (a hostile regex, a huge repetition) would take too long."""

    status, code, title = LimitExceeded.status, LimitExceeded.code, LimitExceeded.title


class EngineUnavailable(EngineError):
    """The engine cannot run here (e.g. the cwb engine without CWB installed)."""

    status, code, title = 503, "unavailable", "The engine is not available on this node"


class QueryTimeout(EngineError):
    """The query ran past its time budget and was stopped."""

    status, code, title = 504, "timeout", "The query ran out of time and was stopped"
