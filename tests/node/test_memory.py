"""The node's memory budget (``cowbird.node.memory``) with its memory read from a list: when
evaluations may start, when one pauses and when one is stopped."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from cowbird.core.errors import Busy, LimitExceeded, OutOfMemory, QueryTimeout
from cowbird.node.memory import MemoryBudget, own_memory
from tests.clock import until, wait_until
from tests.node.conftest import client_for, make_app

MB = 2**20


class Reading:
    def __init__(self, mb: int) -> None:
        self.mb = mb
        self.reads = 0  # how often the budget looked

    def __call__(self) -> int:
        self.reads += 1
        return self.mb * MB


def test_own_memory_is_this_process_without_its_mapped_files() -> None:
    before = own_memory()
    block = b"\x01" * (64 * MB)  # written (a zeroed bytearray may stay untouched, fresh pages): resident
    assert own_memory() - before >= 60 * MB
    del block


@pytest.mark.anyio
async def test_an_evaluation_starts_only_while_there_is_room() -> None:
    reading = Reading(50)
    budget = MemoryBudget(200 * MB, reading)  # the idle node holds 50 MB
    reading.mb = 150
    await budget.admit(0.1)  # 100 of 200 beyond the idle memory: below three quarters
    reading.mb = 230
    await budget.admit(0.1)  # above, but nothing runs that could free memory: in
    budget.started()
    with pytest.raises(Busy, match=r"the node's memory is in use by other queries \(180 MB of its 200 MB\)"):
        await budget.admit(0.2)

    async def freed(looked: int = reading.reads) -> None:
        await until(lambda: reading.reads >= looked + 3, timeout=10)  # the new one waits, looking again ...
        reading.mb = 170  # ... until the running evaluation freed its arrays

    waited = asyncio.ensure_future(freed())
    await budget.admit(10.0)  # waits until another's memory is freed (or would be busy)
    assert waited.done()


def test_an_evaluation_over_the_budget_pauses_while_another_may_free_memory() -> None:
    reading = Reading(0)
    budget = MemoryBudget(200 * MB, reading)
    reading.mb = 250
    budget.started()
    budget.started()  # two evaluations at work

    def the_other_ends() -> None:
        wait_until(lambda: budget.paused == 1, timeout=10, every=0.01)  # once this one has paused
        reading.mb = 150

    other = threading.Thread(target=the_other_ends)
    other.start()
    budget.check()  # pauses (over the budget, another may free memory), then goes on
    other.join(10)
    assert reading.mb == 150 and budget.paused == 0


def test_a_lone_evaluation_over_the_budget_is_stopped_with_the_reason() -> None:
    """Alone on the node, nothing else holds memory it could wait for: past the budget (even after giving
    freed memory back) it is stopped, not let grow until the kernel kills the node (a lone query relating
    three labels took a node to 10.7 GB under a 4-GiB budget). Under the budget it goes on; the idle
    memory is the least seen when nothing ran."""
    reading = Reading(40)
    budget = MemoryBudget(200 * MB, reading)
    trims: list[int] = []
    budget._trim = lambda: trims.append(reading.mb)
    budget.started()
    reading.mb = 230
    budget.check()  # 190 MB beyond the idle 40: within the budget
    reading.mb = 290
    with pytest.raises(OutOfMemory, match=r"the query held 250 MB beyond its idle memory, past its budget of 200 MB"):
        budget.check()
    assert trims == [290] and budget.paused == 0  # freed memory was given back first: not enough
    budget.ended()
    budget.after()
    assert budget.baseline == 40 * MB  # the least the node held idle, not what it holds after


def test_an_allocation_past_the_os_limit_is_answered_as_over_the_budget() -> None:
    """``MemoryError`` (the node's ``memory_limit`` reached between two checks) becomes the same answer as
    the budget's: a refusal saying what to narrow, the node going on."""
    stopped = MemoryBudget(1024 * MB, Reading(0)).out_of_memory()
    assert isinstance(stopped, OutOfMemory) and stopped.status == 400
    assert "could not allocate the memory" in stopped.detail and "1,024 MB" in stopped.detail


def test_memory_is_given_back_after_the_last_evaluation_even_below_the_share() -> None:
    """While others run, freed memory is given back only above a quarter of the budget; after the last
    one, above ``IDLE_TRIM`` (a node once kept 72 MB of a 300-MB budget after a burst had ended)."""
    reading = Reading(100)
    budget = MemoryBudget(300 * MB, reading)
    trims: list[int] = []
    budget._trim = lambda: trims.append(reading.mb)
    budget.started()
    budget.started()
    reading.mb = 172  # 72 MB beyond idle, under a quarter of 300
    budget.ended()
    budget.after()
    assert trims == []  # another still runs
    budget.ended()
    budget.after()
    assert trims == [172]  # the last one: given back
    reading.mb = 110
    budget.started()
    budget.ended()
    budget.after()
    assert trims == [172]  # 10 MB beyond idle: not worth a trim


def test_when_every_evaluation_is_paused_one_gives_way_and_a_paused_one_still_times_out() -> None:
    reading = Reading(0)
    budget = MemoryBudget(200 * MB, reading)
    reading.mb = 250
    budget.started()
    budget.started()
    older = budget.hold(1.0)  # the other one (older) waits for a heavy place: it frees nothing
    with pytest.raises(LimitExceeded, match="held 250 MB beyond its idle memory, past its budget of 200 MB"):
        budget.check(started=2.0)  # the youngest: it gives way
    assert not older.stop
    budget.release(older)
    younger = budget.hold(3.0)  # a younger one waiting for a heavy place gives way instead
    budget.check(started=2.0)
    assert younger.stop
    with pytest.raises(LimitExceeded, match="the queries running on the node held 250 MB"):
        budget.stop_if_told(younger)
    budget.release(younger)
    budget._quiet_until = 0.0

    def late() -> None:
        raise QueryTimeout("the query took longer than 1 s and was stopped")

    budget.started()  # three at work, none paused: this one pauses, and its deadline still holds
    with pytest.raises(QueryTimeout):
        budget.check(late)
    assert budget.paused == 0


def test_the_one_at_work_goes_on_and_the_youngest_paused_one_gives_way() -> None:
    """Three evaluations over the budget: two paused (started at 1 and 2), the oldest (0) still at
    work. At its check the youngest paused one is stopped with the reason and the one at work goes on;
    once that one's memory is freed the other paused one resumes — not all of them stopped."""
    reading = Reading(0)
    budget = MemoryBudget(200 * MB, reading)
    reading.mb = 250
    for _ in range(3):
        budget.started()
    outcomes: dict[str, str] = {}

    def paused(name: str, started: float) -> None:
        try:
            budget.check(started=started)
            outcomes[name] = "went on"
        except LimitExceeded as stopped:
            outcomes[name] = str(stopped)

    threads = [threading.Thread(target=paused, args=(name, started)) for name, started in (("older", 1.0),
                                                                                         ("younger", 2.0))]
    for thread in threads:
        thread.start()
    wait_until(lambda: budget.paused >= 2, timeout=10, every=0.01)
    budget.check(started=0.0)  # the only one at work: it goes on, the youngest paused one is told to stop
    threads[1].join(5)
    assert "the query was stopped" in outcomes["younger"] and "older" not in outcomes
    budget.ended()
    reading.mb = 150  # the stopped one's arrays are freed
    threads[0].join(5)
    assert outcomes["older"] == "went on" and budget.paused == 0


@pytest.mark.anyio
async def test_the_front_ends_request_start_ranks_evaluations_on_every_node(sample_registry: Path,
                                                                          big_registry: Path) -> None:
    """A node call says when its front-end request began (X-Cowbird-Began): the node's evaluation is
    ranked by it (every node alike, so that over a budget the same request gives way everywhere);
    a value that is no time is ignored."""
    app = make_app(sample_registry, big_registry)
    seen: list[float] = []
    async for node in client_for(app):
        engine = app.state.node.service.engine("sample")
        def noted(*args: object, run: Any = engine.run, **kwargs: object) -> object:
            deadline = args[3] if len(args) > 3 else kwargs["deadline"]
            seen.append(deadline.pace.began)  # type: ignore[attr-defined]
            return run(*args, **kwargs)

        engine.run = noted
        for began, query in (("1700000000.250000", "[word='the']"), ("nonsense", "[word='house']")):
            answer = await node.post("/v1/count", json={"partition": "sample", "query": query},
                                     headers={"X-Cowbird-Began": began})
            assert answer.status_code == 200, answer.text
    assert seen[0] == 1700000000.25 and abs(seen[1] - time.time()) < 60


@pytest.mark.anyio
async def test_an_evaluation_whose_allocation_fails_is_stopped_and_the_node_goes_on() -> None:
    """An allocation past the node's ``memory_limit`` (``MemoryError`` in the evaluation's thread) is the
    query stopped with the reason; the scheduler's places are given back and the next evaluation runs."""
    from cowbird.engines import Deadline
    from cowbird.node.scheduler import Scheduler

    scheduler = Scheduler(concurrent=1, queued=2, queue_seconds=5, heavy=1, heavy_after=10,
                          memory=MemoryBudget(1024 * MB, Reading(0)))

    async def watch(deadline: Deadline) -> None:
        await asyncio.Event().wait()  # the client stays

    def greedy(deadline: Deadline) -> bytes:
        raise MemoryError  # numpy: "Unable to allocate 237. MiB for an array"

    with pytest.raises(OutOfMemory, match="could not allocate the memory it asked for"):
        await scheduler.run(greedy, 5.0, watch)
    assert await scheduler.run(lambda deadline: b"fine", 5.0, watch) == b"fine"
    assert scheduler.memory is not None and scheduler.memory.running == 0
