"""The dependencies of the node's routes: the partition service (every route but /health) and the
asker (the query routes: the call's priority, start and connection).

The token itself is checked by ``cowbird.node.guard.NodeGuard`` before the request is read; the
bearer scheme declared here documents it in the OpenAPI description.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from cowbird.node.scheduler import Asker
from cowbird.node.service import PartitionService
from cowbird.node.state import node_state

bearer = HTTPBearer(auto_error=False, description="The node token shared with the front end.")


def partition_service(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> PartitionService:
    """The service of the app (the request is authenticated by the time a route runs)."""
    return node_state(request).service


Service = Annotated[PartitionService, Depends(partition_service)]
"""A route parameter that gives the partition service (and documents the bearer token)."""


def asker(request: Request) -> Asker:
    """Who asks: background work or not (``X-Cowbird-Priority``), when the front end's request began
    (``X-Cowbird-Began``), and how to learn that the client has gone."""
    return Asker.of(request.headers, request.is_disconnected)


Asking = Annotated[Asker, Depends(asker)]
"""A route parameter that gives the request's :class:`~cowbird.node.scheduler.Asker`."""
