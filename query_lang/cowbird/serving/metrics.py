"""``/metrics`` in Prometheus' text format, on the node and on the front end.

Each app has a registry of its own (``Metrics``): requests by route and status, request
latencies, requests running; the front end adds node calls by partition and outcome (failures
per partition), the node queries evaluated and its result-cache hits. ``RequestLog`` feeds the
request figures; the fan-out and the node's service feed the rest.

Several worker processes on one port (``cowbird serve --workers N``) would each answer ``/metrics``
with their own figures — whichever worker the scrape reached, a different and partial count. So
``cowbird serve`` runs them in prometheus_client's multiprocess mode: it sets
``PROMETHEUS_MULTIPROC_DIR`` (a fresh folder) before the workers start, each worker writes its
values there, and ``/metrics`` answers the sum over every worker of that server, whichever worker
answers (``requests_running`` is the sum over the live workers). Front ends on several hosts, or
several ``cowbird serve`` processes, are separate targets: scrape each (Prometheus sums them).
"""

from __future__ import annotations

import os

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest, multiprocess
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from starlette.types import Scope

CONTENT_TYPE = CONTENT_TYPE_LATEST
MULTIPROCESS = "PROMETHEUS_MULTIPROC_DIR"
"""The environment variable of prometheus_client's multiprocess mode: the folder the workers' values are in."""


def multiprocess_mode() -> bool:
    return bool(os.environ.get(MULTIPROCESS))


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter("cowbird_requests", "HTTP requests answered", ["service", "route", "status"],
                                registry=self.registry)
        self.latency = Histogram("cowbird_request_seconds", "Time to answer a request", ["service", "route"],
                                 registry=self.registry,
                                 buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60))
        self.running = Gauge("cowbird_requests_running", "Requests being answered", ["service"],
                             registry=self.registry, multiprocess_mode="livesum")
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
        """The metrics in Prometheus' text format: this app's, or every worker's (multiprocess mode)."""
        if multiprocess_mode():
            every_worker = CollectorRegistry()
            multiprocess.MultiProcessCollector(every_worker)  # type: ignore[no-untyped-call]  # untyped in prometheus_client
            return generate_latest(every_worker)
        return generate_latest(self.registry)

    def close(self) -> None:
        """This process ends: its live gauges stop counting (multiprocess mode)."""
        if multiprocess_mode():
            multiprocess.mark_process_dead(os.getpid())  # type: ignore[no-untyped-call]  # untyped in prometheus_client
