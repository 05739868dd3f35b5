"""The node's errors: one root with a status and a stable ``code``, rendered as problem+json."""

from __future__ import annotations

from backend_node.engines.errors import EngineError


class NodeError(Exception):
    """Root of node errors; ``code`` is stable for clients, ``status`` the HTTP status."""

    status = 500
    code = "internal"
    title = "Internal error"

    def __init__(self, detail: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.headers = headers or {}


class Unauthorized(NodeError):
    status, code, title = 401, "unauthorized", "Missing or wrong bearer token"


class QuerySyntax(NodeError):
    status, code, title = 400, "query_syntax", "The query is not well-formed CQP"

    def __init__(self, detail: str, offset: int | None = None) -> None:
        super().__init__(detail)
        self.offset = offset


class Unsupported(NodeError):
    status, code, title = 400, "unsupported", "The query uses something this node does not support"


class BadRequest(NodeError):
    status, code, title = 400, "bad_request", "The request cannot be served as asked"


class UnknownAttribute(NodeError):
    status, code, title = 400, "unknown_attribute", "The query or request names an attribute the corpus lacks"


class LimitExceeded(NodeError):
    status, code, title = 400, "limit_exceeded", "The request asks for more than this node allows"


class UnknownPartition(NodeError):
    status, code, title = 404, "unknown_partition", "This node does not serve that partition"


class OutOfRange(NodeError):
    status, code, title = 404, "out_of_range", "The position is outside the partition"


class TooLarge(NodeError):
    status, code, title = 413, "too_large", "The request body is too large"


class Busy(NodeError):
    status, code, title = 503, "busy", "The node is running as many queries as it may"


class Timeout(NodeError):
    status, code, title = 504, "timeout", "The query ran out of time and was stopped"


class Unavailable(NodeError):
    status, code, title = 503, "unavailable", "The engine is not available on this node"


def from_engine(error: EngineError) -> NodeError:
    """Map an engine error to the node error with the matching code."""
    mapping: dict[str, type[NodeError]] = {
        "timeout": Timeout,
        "unknown_attribute": UnknownAttribute,
        "too_expensive": LimitExceeded,
        "unavailable": Unavailable,
    }
    return mapping.get(error.code, BadRequest)(str(error))
