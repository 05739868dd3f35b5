"""Whether the nodes are up, and how much time a request has left.

``NodeHealth`` is a circuit breaker per node: a node that did not answer is skipped until its
cooldown has passed, then one health check, shared by every request that wants the node, decides
whether it is back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import httpx

from cowbird.serving.clock import Clock, MonotonicClock, within

logger = logging.getLogger("cowbird.fanout")


@dataclass
class _Health:
    down: bool = False
    retry_at: float = 0.0
    cooldown: float = 0.0
    probe: asyncio.Future[bool] | None = None


@dataclass
class NodeHealth:
    """A circuit breaker per node: a node that failed is skipped until ``cooldown`` has passed, then
    one health check (shared by every request that wants the node) decides whether it is back."""

    pools: Callable[[str], httpx.AsyncClient]
    probe_timeout: float
    first_cooldown: float = 1.0
    max_cooldown: float = 30.0
    clock: Clock = field(default_factory=MonotonicClock)
    """What cooldowns and health checks are timed on (tests pass a fake one to pass a cooldown)."""
    _nodes: dict[str, _Health] = field(default_factory=dict)
    _background: set[asyncio.Future[bool]] = field(default_factory=set)

    def is_down(self, node: str) -> bool:
        return self._nodes.get(node, _Health()).down

    async def usable(self, node: str) -> bool:
        state = self._nodes.get(node)
        if state is None or not state.down:
            return True
        if self.clock.now() < state.retry_at:
            return False
        if state.probe is None or state.probe.done():  # one health check at a time, shared
            state.probe = asyncio.ensure_future(self._probe(node))
        return await asyncio.shield(state.probe)

    async def at_work(self, node: str, call: str) -> float | None:
        """After a timeout: how long has the node worked on ``call`` (None: it never got it, or it
        does not answer its health check)?"""
        try:
            response = await within(self.clock, self.probe_timeout,
                                    self.pools(node).get(f"{node}/health", params={"call": call},
                                                         timeout=self.probe_timeout))
            seconds = response.json().get("call_seconds") if response.status_code == 200 else None
            ok = response.status_code == 200
        except (TimeoutError, httpx.HTTPError, ValueError, AttributeError):
            seconds, ok = None, False
        if ok:
            self.succeeded(node)
        else:
            self.failed(node)
        return float(seconds) if isinstance(seconds, int | float) else None

    def check_later(self, node: str) -> None:
        """After a timeout nobody waits on: find out in the background whether the node is down."""
        task = asyncio.ensure_future(self._probe(node))
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _probe(self, node: str) -> bool:
        try:
            response = await within(self.clock, self.probe_timeout,
                                    self.pools(node).get(f"{node}/health", timeout=self.probe_timeout))
            ok = response.status_code == 200
        except (TimeoutError, httpx.HTTPError):
            ok = False
        if ok:
            self.succeeded(node)
        else:
            self.failed(node)
        return ok

    def failed(self, node: str) -> None:
        state = self._nodes.setdefault(node, _Health())
        if not state.down:
            logger.warning("node %s is not answering; skipping it until it does", node)
        state.down = True
        state.cooldown = min(self.max_cooldown, state.cooldown * 2 or self.first_cooldown)
        state.retry_at = self.clock.now() + state.cooldown

    def succeeded(self, node: str) -> None:
        state = self._nodes.get(node)
        if state is not None and state.down:
            logger.warning("node %s answers again", node)
        self._nodes.pop(node, None)
