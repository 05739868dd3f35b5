"""The node app's state, typed: made by ``create_app``, its service opened in the lifespan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from starlette.requests import Request

from cowbird.node.guard import Calls
from cowbird.node.service import PartitionService
from cowbird.node.settings import NodeSettings
from cowbird.serving.metrics import Metrics
from cowbird.serving.started import started


@dataclass
class NodeState:
    settings: NodeSettings
    metrics: Metrics
    calls: Calls  # the front end's calls, at work or ended (guard.py)
    opened: PartitionService | None = None  # set in the lifespan, when the partitions are open

    @property
    def service(self) -> PartitionService:
        return started(self.opened, "the node's partitions are not open yet (the app has not started)")


def node_state(request: Request) -> NodeState:
    return cast(NodeState, request.app.state.node)
