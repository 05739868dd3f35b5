"""Bearer-token check shared by every node route but /health (constant-time comparison)."""

from __future__ import annotations

import secrets
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from backend_node.service import PartitionService
from cowbird.errors import Unauthorized

bearer = HTTPBearer(auto_error=False, description="The node token shared with the front end.")


def require_token(
    request: Request, credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]
) -> PartitionService:
    """The service, for requests that carry the node's token; 401 otherwise."""
    expected: str = request.app.state.token
    given = credentials.credentials if credentials is not None else ""
    if not secrets.compare_digest(given.encode("utf-8"), expected.encode("utf-8")):
        raise Unauthorized("send 'Authorization: Bearer <node token>'")
    service: PartitionService = request.app.state.service
    return service


Service = Annotated[PartitionService, Depends(require_token)]
"""A route parameter that authenticates the request and gives the partition service."""
