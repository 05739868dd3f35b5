"""``/metrics`` in Prometheus' text format, on the node and on the front end.

Each app has a registry of its own (``Metrics``): requests by route and status, request
latencies, requests running; the front end adds node calls by partition and outcome (failures
per partition), the node queries evaluated and its result-cache hits. ``RequestLog`` feeds the
request figures; the fan-out and the node's service feed the rest.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.types import Scope

CONTENT_TYPE = CONTENT_TYPE_LATEST


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("cowbird_requests", "HTTP requests answered", ["service", "route", "status"],
                                registry=self.registry)
        self.latency = Histogram("cowbird_request_seconds", "Time to answer a request", ["service", "route"],
                                 registry=self.registry,
                                 buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
        self.running = Gauge("cowbird_requests_running", "Requests being answered", ["service"],
                             registry=self.registry)
        self.node_calls = Counter("cowbird_node_calls", "Calls to nodes, by partition and outcome",
                                  ["partition", "outcome"], registry=self.registry)
        self.queries = Counter("cowbird_queries_evaluated", "Queries a node evaluated (cache misses)",
                               ["partition"], registry=self.registry)
        self.cache_hits = Counter("cowbird_result_cache_hits", "Queries answered from a node's result cache",
                                  ["partition"], registry=self.registry)

    def route(self, scope: Scope) -> str:
        """The route's path template (``/ref/{corpus}/{position}``), so that labels stay few."""
        route = scope.get("route")
        path = getattr(route, "path", None)
        return str(path) if path else "unmatched"

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
