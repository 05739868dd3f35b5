"""One request's side of its node calls, passed explicitly (:class:`Caller`).

What a node call carries besides its request — when the front-end request began (every node ranks
the requests it runs by it, ``X-Cowbird-Began``) and its priority (``X-Cowbird-Priority: background``
for background work, which also waits longer) — and who is told what each call cost: the request's
node-time meter, which fair use counts per viewer and day. The transport (``failover.Failover``)
sends and returns; it reports each call to the caller (:meth:`Caller.called`), nothing more.

A route gets its caller with the route prologue (``routes/deps.py:Visit``); ``NodeClient.bound``
gives the request's :class:`~cowbird.core.search.Partitions` over it. Calls made for nobody in
particular (a health probe, a context line) go with a plain ``Caller()``: interactive, unmetered.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from cowbird.frontend.fair_use import NodeTime
from cowbird.frontend.priority import BACKGROUND_TIME, HEADER, Priority


@dataclass
class Caller:
    """A request's node calls: when it began, its priority, and the meter of its nodes' time."""

    began: float | None = None  # seconds since the epoch
    priority: Priority = "interactive"
    meter: NodeTime | None = None  # set while the request counts among the viewer's running queries;
    # kept after, settled: a call still stopping then is charged when it reports (``NodeTime.late``)
    viewer: str = ""  # who it is for, as the nodes see it (``viewer_tag``): their background places go by it

    @property
    def background(self) -> bool:
        return self.priority == "background"

    def stretched(self, seconds: float) -> float:
        """A time limit as this request has it: longer for background work."""
        return seconds * BACKGROUND_TIME if self.background else seconds

    def headers(self) -> dict[str, str]:
        """What each of the request's node calls says of it."""
        headers = {HEADER: "background"} if self.background else {}
        if self.began is not None:
            headers["X-Cowbird-Began"] = f"{self.began:.6f}"
        if self.viewer:
            headers["X-Cowbird-Viewer"] = self.viewer
        return headers

    def called(self, node_ms: float) -> None:
        """A node call ended, having cost its node ``node_ms`` of work (the node's own figure when it
        answered; the time waited when it was given up or failed): the viewer's fair use counts it."""
        if self.meter is not None:
            self.meter.add(node_ms)


def viewer_tag(key: str) -> str:
    """A viewer's fair-use key as the nodes are told it: a hash, the same for every request of the
    viewer, that says nothing of who it is."""
    return hashlib.blake2b(key.encode("utf-8"), digest_size=8).hexdigest()
