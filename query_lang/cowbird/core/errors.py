"""The one error model of cowbird: every error a client can see has an HTTP ``status`` and a stable
``code`` (:class:`ErrorCode`, listed in both services' OpenAPI documents), the same on the node and
on the front end for the same failure. Both services render them with ``cowbird.serving.problems``
as ``application/problem+json``; the command line prints their ``detail`` in one line. This module
imports nothing heavy: the store and the command line use it too.

The tree (status, code)::

    CowbirdError                          500 internal
    ├── Internal                          500 internal        (details logged, never sent)
    ├── HttpError                         4xx http_error      (a method the route does not allow ...)
    ├── InvalidRequest                    422 invalid_request (a body or form does not match the API)
    ├── BadParameter                      400 bad_parameter   (a parameter's value is not valid)
    │   └── InvalidOption                 400 bad_parameter   (an engine option: strategy, engine name)
    ├── Unauthorized                      401 unauthorized
    ├── Forbidden                         403 forbidden
    │   └── CsrfFailed                    403 csrf_failed     (cowbird.frontend.accounts.web)
    ├── NotFound                          404 not_found
    ├── UnknownCorpus                     404 unknown_corpus
    ├── UnknownPartition                  404 unknown_partition
    ├── UnknownAttribute                  400 unknown_attribute
    ├── OutOfRange                        404 out_of_range
    ├── LimitExceeded                     400 limit_exceeded
    │   └── QueryTooExpensive             400 limit_exceeded  (a hostile regex, a huge repetition)
    ├── QuerySyntax                       400 query_syntax
    ├── UnsupportedQuery                  400 unsupported
    ├── QueryFailed                       400 query_failed    (real CQP refused the query)
    ├── BadHost                           400 bad_host
    ├── TooLarge                          413 too_large
    ├── SlowBody                          408 request_timeout (a request body that does not arrive in time)
    ├── TooManyRequests                   429 too_many_requests
    ├── Conflict                          409 conflict
    ├── NotAllowed                        409 not_allowed
    ├── ClientGone                        499 client_gone     (the client closed the connection)
    │   └── QueryCancelled                499 client_gone     (a node's query stopped for it)
    ├── QueryTimeout                      504 timeout         (the query ran out of time)
    │   └── QueryTooSlow                  504 timeout         (... on every partition of the corpus)
    ├── DeadlinePassed                    504 deadline        (the request's deadline across nodes)
    ├── Busy                              503 busy            (a node's queue is full)
    ├── NodesUnavailable                  503 nodes_unavailable
    ├── EngineUnavailable                 503 unavailable
    ├── DatabaseError                     503 database_unavailable
    ├── EngineError                       500 engine_error
    ├── RejectedByNode                    a node's 4xx refusal of the query, passed on as it is
    └── StoreError                        500 corpus_data
        ├── RegistryError, CorpusFormatError, ManifestError
        └── VrtError                      (names the input file and line)

    BrokenStream                          not rendered: a started stream is cut off
    └── ExportBroken
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum

from cowbird.query import QueryError, UnsupportedQueryError


class ErrorCode(StrEnum):
    """Every ``code`` a problem+json answer of cowbird can carry."""

    INTERNAL = "internal"
    HTTP_ERROR = "http_error"
    INVALID_REQUEST = "invalid_request"
    BAD_PARAMETER = "bad_parameter"
    UNAUTHORIZED = "unauthorized"
    FORBIDDEN = "forbidden"
    CSRF_FAILED = "csrf_failed"
    NOT_FOUND = "not_found"
    UNKNOWN_CORPUS = "unknown_corpus"
    UNKNOWN_PARTITION = "unknown_partition"
    UNKNOWN_ATTRIBUTE = "unknown_attribute"
    OUT_OF_RANGE = "out_of_range"
    LIMIT_EXCEEDED = "limit_exceeded"
    QUERY_SYNTAX = "query_syntax"
    UNSUPPORTED = "unsupported"
    QUERY_FAILED = "query_failed"
    BAD_HOST = "bad_host"
    TOO_LARGE = "too_large"
    REQUEST_TIMEOUT = "request_timeout"
    TOO_MANY_REQUESTS = "too_many_requests"
    CONFLICT = "conflict"
    NOT_ALLOWED = "not_allowed"
    CLIENT_GONE = "client_gone"
    TIMEOUT = "timeout"
    DEADLINE = "deadline"
    BUSY = "busy"
    NODES_UNAVAILABLE = "nodes_unavailable"
    UNAVAILABLE = "unavailable"
    DATABASE_UNAVAILABLE = "database_unavailable"
    ENGINE_ERROR = "engine_error"
    CORPUS_DATA = "corpus_data"


class CowbirdError(Exception):
    """Root of every error cowbird reports; ``extra`` become problem+json extension members."""

    status: int = 500
    code: ErrorCode = ErrorCode.INTERNAL
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


class ExportBroken(BrokenStream):
    """An export could not be finished on any node after its download had started."""


# -- the request ----------------------------------------------------------------------------------


class Internal(CowbirdError):
    """Something went wrong that is not the client's fault (the details are logged, never sent)."""


class HttpError(CowbirdError):
    """An HTTP-level refusal without a more specific kind (a method the route does not allow, ...)."""

    code, title = ErrorCode.HTTP_ERROR, "The request cannot be served"

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status


class InvalidRequest(CowbirdError):
    """A request body or form does not match the API (its models say where)."""

    status, code, title = 422, ErrorCode.INVALID_REQUEST, "The request does not match the API"


class BadParameter(CowbirdError):
    """A parameter's value is not valid (or the parameter is unknown); the message names it."""

    status, code, title = 400, ErrorCode.BAD_PARAMETER, "A parameter is not valid"


class InvalidOption(BadParameter):
    """An option of the evaluation (matching strategy, engine name) is not one the engine knows."""


class Unauthorized(CowbirdError):
    status, code, title = 401, ErrorCode.UNAUTHORIZED, "Missing or wrong bearer token"


class Forbidden(CowbirdError):
    status, code, title = 403, ErrorCode.FORBIDDEN, "This needs other rights"


class NotFound(CowbirdError):
    status, code, title = 404, ErrorCode.NOT_FOUND, "No such resource"


class BadHost(CowbirdError):
    """A Host header the front end does not answer to (``allowed_hosts``)."""

    status, code, title = 400, ErrorCode.BAD_HOST, "Unknown host name"


class TooLarge(CowbirdError):
    status, code, title = 413, ErrorCode.TOO_LARGE, "The request body is too large"


class SlowBody(CowbirdError):
    """A request body that did not arrive in its time (a client trickling it byte by byte)."""

    status, code, title = 408, ErrorCode.REQUEST_TIMEOUT, "The request body did not arrive in time"


class TooManyRequests(CowbirdError):
    status, code, title = 429, ErrorCode.TOO_MANY_REQUESTS, "Too many requests; wait and try again"


class ClientGone(CowbirdError):
    """The client closed the connection before the answer was ready; its work was cancelled. The
    answer (499, as nginx logs it) goes nowhere: it only ends the request without a traceback."""

    status, code, title = 499, ErrorCode.CLIENT_GONE, "The client went away"


# -- corpora and queries --------------------------------------------------------------------------


class UnknownCorpus(CowbirdError):
    status, code, title = 404, ErrorCode.UNKNOWN_CORPUS, "No such corpus"


class UnknownPartition(CowbirdError):
    status, code, title = 404, ErrorCode.UNKNOWN_PARTITION, "This node does not serve that partition"


class UnknownAttribute(CowbirdError):
    """A positional or structural attribute the corpus does not have (in a query, a parameter, a filter)."""

    status, code, title = 400, ErrorCode.UNKNOWN_ATTRIBUTE, "The corpus has no such attribute"


class OutOfRange(CowbirdError):
    status, code, title = 404, ErrorCode.OUT_OF_RANGE, "The position is outside the corpus"


class LimitExceeded(CowbirdError):
    status, code, title = 400, ErrorCode.LIMIT_EXCEEDED, "The request asks for more than is allowed"


class OutOfMemory(LimitExceeded):
    """A query stopped for the memory it held while it ran (the node's budget, or none left): what
    the node held then, not what the query is — asked again later, it may run."""


class QuerySyntax(CowbirdError):
    status, code, title = 400, ErrorCode.QUERY_SYNTAX, "The query is not well-formed"


class UnsupportedQuery(CowbirdError):
    status, code, title = 400, ErrorCode.UNSUPPORTED, "The query uses something cowbird does not support"


# -- engines and nodes ----------------------------------------------------------------------------


class EngineError(CowbirdError):
    """The query engine itself failed (a server-side problem)."""

    code, title = ErrorCode.ENGINE_ERROR, "The query engine failed"


class QueryFailed(CowbirdError):
    """The engine refused the query itself (real CQP's error message, for the cwb engine)."""

    status, code, title = 400, ErrorCode.QUERY_FAILED, "The engine could not run the query"


class QueryTooExpensive(LimitExceeded):
    """A part of the query (a hostile regex, a huge repetition) would take too long."""


class EngineUnavailable(CowbirdError):
    """The engine cannot run here (e.g. the cwb engine without CWB installed)."""

    status, code, title = 503, ErrorCode.UNAVAILABLE, "The engine is not available on this node"


class QueryTimeout(CowbirdError):
    """The query ran past its time and was stopped."""

    status, code, title = 504, ErrorCode.TIMEOUT, "The query ran out of time and was stopped"


class QueryCancelled(ClientGone):
    """The query was stopped because the client that asked for it went away."""


class Busy(CowbirdError):
    status, code, title = 503, ErrorCode.BUSY, "The node is running as many queries as it may"


# -- the front end --------------------------------------------------------------------------------


class NodesUnavailable(CowbirdError):
    """No partition of the corpus could be served: its nodes do not answer (try again later)."""

    status, code, title = 503, ErrorCode.NODES_UNAVAILABLE, "No node answered for this corpus"


class QueryTooSlow(QueryTimeout):
    """Every partition ran out of time on this query: another try would too (no Retry-After)."""

    title = "The query ran out of time"


class DeadlinePassed(CowbirdError):
    status, code, title = 504, ErrorCode.DEADLINE, "The query did not finish in time"


class RejectedByNode(CowbirdError):
    """A node refused the request itself (its 4xx problem), which every replica would refuse too:
    passed on to the client with the node's status, code and query position."""

    def __init__(self, status: int, code: ErrorCode, title: str, detail: str, **extra: object) -> None:
        super().__init__(detail)
        self.status, self.code, self.title = status, code, title
        self.extra = extra


class Conflict(CowbirdError):
    status, code, title = 409, ErrorCode.CONFLICT, "The request conflicts with what exists"


class NotAllowed(CowbirdError):
    status, code, title = 409, ErrorCode.NOT_ALLOWED, "This change is not possible from the account's state"


class DatabaseError(CowbirdError):
    status, code, title = 503, ErrorCode.DATABASE_UNAVAILABLE, "The account database cannot be used"


# -- the store ------------------------------------------------------------------------------------


class StoreError(CowbirdError):
    """Root of the store's errors about its files (``cowbird.store``, manifests); each names the file
    (and line) that caused it, so the command line can print one line."""

    code, title = ErrorCode.CORPUS_DATA, "The corpus data cannot be read"


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
