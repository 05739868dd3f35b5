"""The dependency every node route but /health takes: the partition service.

The token itself is checked by ``cowbird.node.guard.NodeGuard`` before the request is read; the
bearer scheme declared here documents it in the OpenAPI description.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

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
