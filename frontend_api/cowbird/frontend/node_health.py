"""Whether the nodes are up, and how much time a request has left.

``NodeHealth`` is a circuit breaker per node: a node that did not answer is marked down and skipped
at once by every request (no request waits for it, nor probes it); one prober per node, in the
background, checks its health after a cooldown (1 s, doubling up to ``max_cooldown``) and puts it
back in use the moment it answers. While a call waits on a node that is up, ``answering`` says
whether the node still answers anything: one health check at a time per node, shared by every call
that asks, and none while the node answered something a moment ago.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from cowbird.serving.clock import Clock, MonotonicClock, within

logger = logging.getLogger("cowbird.fanout")


@dataclass
class _Health:
    down: bool = False
    retry_at: float = 0.0
    cooldown: float = 0.0
    prober: asyncio.Task[None] | None = None


@dataclass
class NodeHealth:
    """A circuit breaker per node: a node that failed is skipped until its prober (one per node, in
    the background, after ``cooldown``) sees it answer its health check."""

    pools: Callable[[str], httpx.AsyncClient]
    """The clients health checks go out on (``NodePools.probes``: not the calls' pools, which slow
    calls may fill, so that a busy node is never taken for a silent one)."""
    probe_timeout: float
    first_cooldown: float = 1.0
    max_cooldown: float = 5.0
    """Longest wait between two health checks of a node that is down: a node back is in use again
    within this (and a check) at most; a check costs one ``GET /health``."""
    fresh: float = 0.5
    """A node that answered something within this many seconds still answers (``answering``: no
    health check needed); ``[nodes] hedge_after``."""
    clock: Clock = field(default_factory=MonotonicClock)
    """What cooldowns and health checks are timed on (tests pass a fake one to pass a cooldown)."""
    probes: int = 0
    """Health checks sent so far (the probers', the shared checks', the checks after a timeout)."""
    _nodes: dict[str, _Health] = field(default_factory=dict)
    _heard: dict[str, float] = field(default_factory=dict)
    _checks: dict[str, asyncio.Future[bool]] = field(default_factory=dict)
    _background: set[asyncio.Future[bool]] = field(default_factory=set)

    def is_down(self, node: str) -> bool:
        return self._nodes.get(node, _Health()).down

    def usable(self, node: str) -> bool:
        """Whether calls may go to ``node``: not while it is down (its prober finds out when it is back)."""
        return not self.is_down(node)

    async def answering(self, node: str) -> bool:
        """Whether ``node`` still answers (a call waits on it, and a replica could answer instead):
        it answered something within ``fresh`` seconds, or it answers a health check now — one at a
        time per node, shared by every call that asks. A node that does not is marked down."""
        if self.is_down(node):
            return False
        heard = self._heard.get(node)
        if heard is not None and self.clock.now() - heard < self.fresh:
            return True
        check = self._checks.get(node)
        if check is None or check.done():
            check = self._checks[node] = asyncio.ensure_future(self._probe(node))
        return await asyncio.shield(check)

    async def at_work(self, node: str, call: str) -> float | None:
        """After a timeout: how long has the node worked on ``call`` (None: it never got it, or it
        does not answer its health check)?"""
        self.probes += 1
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
        self.probes += 1
        try:
            response = await within(self.clock, self.probe_timeout,
                                    self.pools(node).get(f"{node}/health", timeout=self.probe_timeout))
            ok = response.status_code == 200
        except (TimeoutError, httpx.HTTPError, AttributeError):
            ok = False
        if ok:
            self.succeeded(node)
        else:
            self.failed(node)
        return ok

    async def _watch(self, node: str) -> None:
        """The node's prober: while it is down, a health check after each cooldown, until one passes."""
        while (state := self._nodes.get(node)) is not None and state.down:
            await self.clock.sleep(state.retry_at - self.clock.now())
            if self._nodes.get(node) is state and state.down:
                await self._probe(node)

    def failed(self, node: str) -> None:
        state = self._nodes.setdefault(node, _Health())
        if not state.down:
            logger.warning("node %s is not answering; skipping it until it does", node)
        state.down = True
        state.cooldown = min(self.max_cooldown, state.cooldown * 2 or self.first_cooldown)
        state.retry_at = self.clock.now() + state.cooldown
        self._heard.pop(node, None)
        if state.prober is None or state.prober.done():
            state.prober = asyncio.ensure_future(self._watch(node))

    def succeeded(self, node: str) -> None:
        self._heard[node] = self.clock.now()
        state = self._nodes.pop(node, None)
        if state is None:
            return
        if state.down:
            logger.warning("node %s answers again", node)
        prober = state.prober
        if prober is not None and not prober.done() and prober is not asyncio.current_task():
            prober.cancel()  # the node answered a call: its prober need not check it again

    async def aclose(self) -> None:
        """Stop the probers and the checks still running (the front end is shutting down)."""
        tasks: list[asyncio.Future[Any]] = [*self._background, *self._checks.values()]
        tasks += [state.prober for state in self._nodes.values() if state.prober is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        self._checks.clear()
