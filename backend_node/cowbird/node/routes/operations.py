"""``POST /v1/<name>`` for every operation of the table (``cowbird.core.operations``): count,
estimate, first and hits of a query; frequency, dispersion, distribution, co-occurrence, marginals,
sort keys, n-grams and subcorpus sizes, as counts the front end adds up across partitions.

Each route is the same adapter over :meth:`cowbird.node.api.NodeApi.answer`: it names the partition
in the request log (and the hits, for a count), stops the work when the client goes, and writes the
JSON in a worker thread (a niced one for background work: a table of 100,000 rows takes tens of
milliseconds to write, which the event loop must not spend). The request and response models of
the OpenAPI description are the operation's.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from fastapi import APIRouter, Request, Response

from cowbird.core.declared import all_operations
from cowbird.core.operations import Operation
from cowbird.node.api import NodeApi
from cowbird.node.routes.auth import Asking, Service

router = APIRouter(prefix="/v1")


def _endpoint(operation: Operation[Any, Any]) -> Callable[..., Awaitable[Response]]:
    async def endpoint(request: Any, service: Service, asker: Asking, http: Request) -> Response:
        http.state.log_partition = request.partition
        answer = await NodeApi(service, asker).answer(operation, request)
        if operation.counts_hits:
            http.state.log_hits = answer.total
        return Response(await service.in_thread(asker, answer.model_dump_json), media_type="application/json")

    # FastAPI reads the body's model from the signature: the operation's request model
    endpoint.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter("request", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=operation.request),
        inspect.Parameter("service", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Service),
        inspect.Parameter("asker", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Asking),
        inspect.Parameter("http", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Request),
    ])
    endpoint.__name__ = operation.name
    return endpoint


for _operation in all_operations():
    router.add_api_route(f"/{_operation.name}", _endpoint(_operation), methods=["POST"],
                         response_model=_operation.response, tags=[_operation.kind], summary=_operation.name,
                         description=_operation.summary, name=_operation.name)
