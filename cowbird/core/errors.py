"""The one error model of cowbird: every error a client can see has an HTTP ``status`` and a stable ``code``.

``CowbirdError`` is the root. Errors that mean the same thing everywhere live here (an unknown
attribute, a malformed query, a position outside the corpus, a request that does not match the
API); each layer adds its own subclasses (``StoreError``, ``EngineError``, ``NodeError``,
``FrontendError``). Both services render any of them with ``cowbird.core.problems`` as
``application/problem+json``, so the same failure has the same ``code`` on the node and on the
front end. This module imports nothing heavy: the store and the command line use it too.
"""

from __future__ import annotations

from collections.abc import Mapping

from cowbird.query import QueryError, UnsupportedQueryError


class CowbirdError(Exception):
    """Root of every error cowbird reports; ``extra`` become problem+json extension members."""

    status: int = 500
    code: str = "internal"
    title: str = "Internal error"

    def __init__(self, detail: str, *, headers: Mapping[str, str] | None = None, **extra: object) -> None:
        super().__init__(detail)
        self.detail = detail
        self.headers = dict(headers or {})
        self.extra = extra


class BrokenStream(Exception):
    """Raised inside a streamed response after it started (its headers promised more): not rendered
    as a problem — the server drops the connection, so the client sees a broken transfer, never a
    clean short one. The message is logged."""


class Internal(CowbirdError):
    """Something went wrong that is not the client's fault (the details are logged, never sent)."""


class HttpError(CowbirdError):
    """An HTTP-level refusal without a more specific kind (a method the route does not allow, ...)."""

    code, title = "http_error", "The request cannot be served"

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status


class InvalidRequest(CowbirdError):
    status, code, title = 422, "invalid_request", "The request does not match the API"


class BadParameter(CowbirdError):
    status, code, title = 400, "bad_parameter", "A parameter is not valid"


class Unauthorized(CowbirdError):
    status, code, title = 401, "unauthorized", "Missing or wrong bearer token"


class NotFound(CowbirdError):
    status, code, title = 404, "not_found", "No such resource"


class UnknownAttribute(CowbirdError):
    status, code, title = 400, "unknown_attribute", "The corpus has no such attribute"


class OutOfRange(CowbirdError):
    status, code, title = 404, "out_of_range", "The position is outside the corpus"


class LimitExceeded(CowbirdError):
    status, code, title = 400, "limit_exceeded", "The request asks for more than is allowed"


class QuerySyntax(CowbirdError):
    status, code, title = 400, "query_syntax", "The query is not well-formed"


class UnsupportedQuery(CowbirdError):
    status, code, title = 400, "unsupported", "The query uses something cowbird does not support"


class NodesUnavailable(CowbirdError):
    """No partition of the corpus could be served: its nodes do not answer (try again later)."""

    status, code, title = 503, "nodes_unavailable", "No node answered for this corpus"


class QueryTooSlow(CowbirdError):
    """Every partition ran out of time on this query: another try would too (no Retry-After)."""

    status, code, title = 504, "timeout", "The query ran out of time"


class StoreError(CowbirdError):
    """Root of the store's errors about its files (``cowbird.store``, manifests); each names the file
    (and line) that caused it, so the command line can print one line."""

    code, title = "corpus_data", "The corpus data cannot be read"


class RegistryError(StoreError):
    """A registry file is missing, unreadable or malformed."""


class VrtError(StoreError):
    """The VRT input cannot be encoded; the message names file and line."""

    def __init__(self, path: str, line: int, message: str) -> None:
        super().__init__(f"{path}:{line}: {message}" if line > 0 else f"{path}: {message}")
        self.path = path
        self.line = line
        self.reason = message


class CorpusFormatError(StoreError):
    """Corpus data files are missing, truncated or in a format this reader does not handle."""


class ManifestError(StoreError):
    """A corpus manifest is missing, unreadable, incomplete or of an unknown format version."""


def query_problem(error: QueryError) -> QuerySyntax | UnsupportedQuery:
    """The one way a query error becomes a client error: the caret picture as ``detail``, and the
    plain message with ``offset``, ``line`` and ``column`` as members."""
    kind = UnsupportedQuery if isinstance(error, UnsupportedQueryError) else QuerySyntax
    return kind(
        error.pretty(),
        message=error.message,
        offset=error.offset,
        line=error.line,
        column=error.column,
    )
