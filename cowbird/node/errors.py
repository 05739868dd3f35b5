"""The node's own errors; all are ``CowbirdError``s, rendered once by ``cowbird.core.problems``.

Errors that mean the same on both services (``unknown_attribute``, ``query_syntax``,
``unsupported``, ``out_of_range``, ``limit_exceeded``, ``unauthorized``, ``invalid_request``) come
from ``cowbird.core.errors``; engine errors (``timeout``, ``unavailable``, ...) from
``cowbird.engines.errors``.
"""

from __future__ import annotations

from cowbird.core.errors import CowbirdError


class NodeError(CowbirdError):
    """Root of the errors only a node raises."""


class UnknownPartition(NodeError):
    status, code, title = 404, "unknown_partition", "This node does not serve that partition"


class TooLarge(NodeError):
    status, code, title = 413, "too_large", "The request body is too large"


class Busy(NodeError):
    status, code, title = 503, "busy", "The node is running as many queries as it may"
