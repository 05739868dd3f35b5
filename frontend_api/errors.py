"""Front-end errors: a root with ``status`` and stable ``code``, rendered as problem+json (or HTML)."""

from __future__ import annotations


class FrontendError(Exception):
    status = 500
    code = "internal"
    title = "Internal error"

    def __init__(self, detail: str, headers: dict[str, str] | None = None, **extra: object) -> None:
        super().__init__(detail)
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


class BadQuery(FrontendError):
    status, code, title = 400, "query_syntax", "The query is not well-formed"


class Unsupported(FrontendError):
    status, code, title = 400, "unsupported", "The query uses something cowbird does not support"


class BadParameter(FrontendError):
    status, code, title = 400, "bad_parameter", "A parameter is not valid"


class UnknownAttribute(FrontendError):
    status, code, title = 400, "unknown_attribute", "The corpus has no such attribute"


class UnknownCorpus(FrontendError):
    status, code, title = 404, "unknown_corpus", "No such corpus"


class OutOfRange(FrontendError):
    status, code, title = 404, "out_of_range", "The position is outside the corpus"


class Forbidden(FrontendError):
    status, code, title = 403, "forbidden", "This needs other rights"


class NodesUnavailable(FrontendError):
    status, code, title = 503, "nodes_unavailable", "No node answered for this corpus"
