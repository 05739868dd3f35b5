"""The front end's own errors; all are ``CowbirdError``s, rendered once (problem+json, or HTML for pages).

Errors that mean the same on node and front end (``query_syntax``, ``unknown_attribute``,
``bad_parameter``, ``out_of_range``, ``unauthorized``, ...) come from ``cowbird.core.errors``.
"""

from __future__ import annotations

from cowbird.core.errors import BrokenStream, CowbirdError


class FrontendError(CowbirdError):
    """Root of the errors only the front end raises."""


class UnknownCorpus(FrontendError):
    status, code, title = 404, "unknown_corpus", "No such corpus"


class Forbidden(FrontendError):
    status, code, title = 403, "forbidden", "This needs other rights"


class TooManyRequests(FrontendError):
    status, code, title = 429, "too_many_requests", "Too many requests; wait and try again"


class DeadlinePassed(FrontendError):
    status, code, title = 504, "deadline", "The query did not finish in time"


class ClientGone(FrontendError):
    """The client closed the connection before the answer was ready; its work was cancelled. The
    answer (499, as nginx logs it) goes nowhere: it only ends the request without a traceback."""

    status, code, title = 499, "client_gone", "The client went away"


class ExportBroken(BrokenStream):
    """An export could not be finished on any node after its download had started."""


class RejectedByNode(FrontendError):
    """A node refused the request itself (its 4xx problem), which every replica would refuse too:
    passed on to the client with the node's status, code and query position."""

    def __init__(self, status: int, code: str, title: str, detail: str, **extra: object) -> None:
        super().__init__(detail)
        self.status, self.code, self.title = status, code, title
        self.extra = extra
