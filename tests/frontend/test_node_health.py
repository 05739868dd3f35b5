"""Failover by health (issue 63): a call leaves a silent node for its replica at ``[nodes]
hedge_after`` plus one unanswered health check — and is charged what it waited —; a node marked
down costs later calls no wait and no probe, and is back once its one prober sees it answer; a
node that is slow but answers keeps its call (the replica is not asked to run it too)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpx
import pytest

from cowbird.frontend import FrontendSettings
from cowbird.frontend.caller import Caller
from cowbird.frontend.corpora import Partition
from cowbird.frontend.failover import Call, Failover, Silent
from cowbird.frontend.fair_use import NodeTime
from cowbird.frontend.pools import NodePools
from cowbird.frontend.settings import NodeAccess
from tests.clock import FakeClock, until

pytestmark = pytest.mark.anyio
HUNG, REPLICA = "http://node-hung", "http://node-replica"
PARTITION = Partition("web_p01", 1000, 0, (HUNG, REPLICA))


@dataclass
class Answer:
    node: str
    elapsed_ms: float  # what the node says it worked (``failover.Timed``)


class Nodes:
    """Two nodes on a fake clock: ``hung`` answers nothing (calls nor /health) while ``stopped``;
    ``slow`` seconds before each answer of the first node (its /health answers at once)."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.stopped = True
        self.slow = 0.0
        self.calls: list[str] = []
        self.checks: list[str] = []

    async def health(self, request: httpx.Request) -> httpx.Response:
        node = f"http://{request.url.host}"
        self.checks.append(node)
        if node == HUNG and self.stopped:
            await self.clock.hang()
        return httpx.Response(200, json={"status": "ok"})

    async def send(self, call: Call) -> Answer:
        self.calls.append(call.node)
        if call.node == HUNG:
            if self.stopped:
                await self.clock.hang()
            await self.clock.sleep(self.slow)
        return Answer(call.node, 40.0)


def failover_on(clock: FakeClock, nodes: Nodes) -> Failover:
    settings = FrontendSettings(nodes=NodeAccess(timeout=30.0, hedge_after=0.5, health_probe_timeout=0.2))
    return Failover(NodePools(settings, httpx.MockTransport(nodes.health)), "token", settings, clock=clock)


async def test_a_silent_node_is_left_at_once_charged_and_skipped_without_probes_until_its_prober_sees_it() -> None:
    clock = FakeClock()
    nodes = Nodes(clock)
    failover = failover_on(clock, nodes)
    health = failover.health
    meter = NodeTime()
    answer = await clock.drive(failover.try_nodes(PARTITION, nodes.send, Caller(meter=meter)))
    assert answer.node == REPLICA and nodes.calls == [HUNG, REPLICA]
    assert clock.now() == pytest.approx(0.5 + 0.2)  # hedge_after, then the health check's limit: not 30 s
    assert health.is_down(HUNG) and nodes.checks == [HUNG] and health.probes == 1
    assert meter.ms == pytest.approx(700 + 40)  # the wait on the silent node, and the replica's own figure
    for _ in range(20):  # skipped: no wait, no probe of their own
        assert (await failover.try_nodes(PARTITION, nodes.send, Caller())).node == REPLICA
    assert nodes.calls == [HUNG] + [REPLICA] * 21 and health.probes == 1 and clock.now() == pytest.approx(0.7)
    clock.advance(1.0)  # its prober's cooldown: one check, unanswered — still down
    await clock.advance_when(1, 0.2, lambda: health.probes == 2)
    await until(lambda: clock.next_wake() == pytest.approx(1.9 + 2.0), what="the check given up, the next due")
    assert health.is_down(HUNG)
    assert (await failover.try_nodes(PARTITION, nodes.send, Caller())).node == REPLICA
    nodes.stopped = False  # SIGCONT
    clock.advance(1.9)  # within the doubled cooldown (2 s): not checked
    assert health.probes == 2 and health.is_down(HUNG)
    clock.advance(0.1)
    await until(lambda: not health.is_down(HUNG), what="the node back")
    assert health.probes == 3 and nodes.checks == [HUNG] * 3
    assert (await failover.try_nodes(PARTITION, nodes.send, Caller())).node == HUNG  # in use again
    await health.aclose()


async def test_a_slow_node_that_answers_keeps_its_call() -> None:
    clock = FakeClock()
    nodes = Nodes(clock)
    nodes.stopped, nodes.slow = False, 3.0
    failover = failover_on(clock, nodes)
    answer = await clock.drive(failover.try_nodes(PARTITION, nodes.send, Caller()))
    assert answer.node == HUNG and nodes.calls == [HUNG]  # the replica was not asked to run it too
    assert clock.now() == pytest.approx(3.0) and not failover.health.is_down(HUNG)
    assert 1 <= failover.health.probes <= 6  # a check every hedge_after at most while it worked
    await failover.health.aclose()


async def test_a_stream_that_stops_mid_way_is_left_once_its_node_is_silent() -> None:
    """An export stream's next chunk: while a replica could finish it, the node must go on answering
    (its health check at ``hedge_after`` without a chunk); without one it has the call's time limit."""
    clock = FakeClock()
    nodes = Nodes(clock)
    failover = failover_on(clock, nodes)

    async def stream() -> AsyncIterator[bytes]:
        yield b'{"first": 1}\n'
        await clock.hang()  # SIGSTOP mid-stream
        yield b""

    chunks = stream()
    assert await failover.next_chunk(chunks, HUNG, None, Caller(), replica=True) == b'{"first": 1}\n'
    with pytest.raises(Silent):
        await clock.drive(failover.next_chunk(chunks, HUNG, None, Caller(), replica=True))
    assert clock.now() == pytest.approx(0.5 + 0.2) and failover.health.is_down(HUNG)
    await failover.health.aclose()
