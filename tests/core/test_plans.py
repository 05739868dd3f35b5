"""The search's planners (``cowbird.core.search.plans``), on statuses made by hand or drawn at random:
where a window of hits lies across partitions, which hits make a sample, whether the hits before an
end are known, and planning again when a partition fails during a fetch."""

from __future__ import annotations

import asyncio
import itertools
from collections import Counter
from dataclasses import dataclass

from hypothesis import given, settings
from hypothesis import strategies as st

from cowbird.core.search import PartitionRef, PartitionStatus, plan_key, plan_sample, plan_window, settled_before
from cowbird.core.search.plans import until_stable
from tests.core.fakes import Down


@dataclass(frozen=True)
class Partition(PartitionRef):
    size: int = 1000
    offset: int = 0


def status(name: str, total: int | None, failed: bool = False) -> PartitionStatus[Partition]:
    return PartitionStatus(Partition(name), total, Down(name) if failed else None)


# A partition: counted (its total), still counting (None) or failed (its total, if any, is not used).
partition_states = st.tuples(st.one_of(st.none(), st.integers(0, 40)), st.booleans())


def statuses_of(states: list[tuple[int | None, bool]]) -> list[PartitionStatus[Partition]]:
    return [status(f"p{k}", total, failed) for k, (total, failed) in enumerate(states)]


def answered(statuses: list[PartitionStatus[Partition]]) -> list[PartitionStatus[Partition]]:
    return [s for s in statuses if s.total is not None and s.failure is None]


# -- plan_window -------------------------------------------------------------------------------------


def test_a_window_across_three_partitions() -> None:
    statuses = [status("a", 5), status("b", 0), status("c", 7, failed=True), status("d", 4), status("e", 10)]
    assert plan_key(plan_window(statuses, 3, 8)) == [("a", 3, 2), ("d", 0, 4), ("e", 0, 2)]
    assert plan_key(plan_window(statuses, 0, 5)) == [("a", 0, 5)]
    assert plan_key(plan_window(statuses, 5, 1)) == [("d", 0, 1)]
    assert plan_key(plan_window(statuses, 17, 10)) == [("e", 8, 2)]
    assert plan_window(statuses, 19, 10) == [] and plan_window(statuses, 2, 0) == []


@settings(max_examples=150, deadline=None)
@given(st.lists(partition_states, max_size=6), st.integers(0, 250), st.integers(0, 120))
def test_a_window_is_consecutive_slices_of_the_answered_hits(states: list[tuple[int | None, bool]], offset: int,
                                                             limit: int) -> None:
    statuses = statuses_of(states)
    counted = answered(statuses)
    total = sum(s.total or 0 for s in counted)
    starts = dict(zip((s.partition.id for s in counted),
                      itertools.accumulate([0] + [s.total or 0 for s in counted]), strict=False))
    plan = plan_window(statuses, offset, limit)
    # only partitions that answered, in corpus order, each once, each with a part of its own hits
    assert [s.partition.id for s, _, _ in plan] == [s.partition.id for s in counted
                                                    if s.partition.id in {p.partition.id for p, _, _ in plan}]
    assert all(count > 0 and 0 <= local and local + count <= (s.total or 0) for s, local, count in plan)
    # together, exactly the global hits [offset, offset + limit) ∩ [0, total), in order
    covered = [starts[s.partition.id] + local + i for s, local, count in plan for i in range(count)]
    assert covered == list(range(min(offset, total), min(offset + limit, total)))


# -- plan_sample -------------------------------------------------------------------------------------


def test_a_sample_of_hand_made_partitions() -> None:
    statuses = [status("a", 3), status("b", 0), status("c", 50, failed=True), status("d", 2), status("e", None)]
    plan = plan_sample(statuses, 10, seed=7)  # more than there are: every hit of those that answered
    assert [(s.partition.id, indices) for s, indices in plan] == [("a", [0, 1, 2]), ("d", [0, 1])]
    assert plan_sample(statuses, 0, seed=7) == []
    assert plan_sample([status("a", 0), status("b", 9, failed=True)], 5, seed=1) == []


@settings(max_examples=150, deadline=None)
@given(st.lists(partition_states, max_size=6), st.integers(0, 80), st.integers(0, 2**32))
def test_a_sample_draws_distinct_hits_in_order(states: list[tuple[int | None, bool]], size: int, seed: int) -> None:
    statuses = statuses_of(states)
    counted = [s for s in answered(statuses) if s.total]
    population = sum(s.total or 0 for s in counted)
    plan = plan_sample(statuses, size, seed)
    # partitions in corpus order, each once, only those with hits that answered
    ids = [s.partition.id for s, _ in plan]
    assert ids == [s.partition.id for s in counted if s.partition.id in ids]
    for s, indices in plan:
        assert indices, s.partition.id
        assert indices == sorted(set(indices)), "ascending, each once"
        assert 0 <= indices[0] and indices[-1] < (s.total or 0)
    assert sum(len(indices) for _, indices in plan) == min(size, population)
    # the same seed draws the same sample
    again = plan_sample(statuses_of(states), size, seed)
    assert [(s.partition.id, i) for s, i in again] == [(s.partition.id, i) for s, i in plan]


def test_a_sample_is_uniform_over_all_hits() -> None:
    """Over 2,000 seeds, each of the 20 hits (in partitions of 5, 0, 7 and 8) is drawn about a quarter
    of the time in samples of 5, wherever it is: 500 expected, the binomial's sd is about 19."""
    statuses = [status("a", 5), status("b", 0), status("c", 7), status("d", 8)]
    starts = {"a": 0, "c": 5, "d": 12}
    drawn: Counter[int] = Counter()
    for seed in range(2000):
        for s, indices in plan_sample(statuses, 5, seed):
            drawn.update(starts[s.partition.id] + i for i in indices)
    assert sorted(drawn) == list(range(20))
    assert all(400 < n < 600 for n in drawn.values()), drawn
    assert sum(drawn.values()) == 2000 * 5
    samples = {tuple(i for s, indices in plan_sample(statuses, 5, seed) for i in indices) for seed in range(50)}
    assert len(samples) > 40, "other seeds draw other samples"


# -- settled_before, plan_key ----------------------------------------------------------------------------


def test_settled_before_on_hand_made_statuses() -> None:
    counting = [status("a", 10), status("b", None), status("c", 5)]
    assert settled_before(counting, 10) and settled_before(counting, 1)
    assert not settled_before(counting, 11)
    failed_first = [status("a", None, failed=True), status("b", 3), status("c", None)]
    assert settled_before(failed_first, 3) and not settled_before(failed_first, 4)
    done = [status("a", 2), status("b", 0, failed=True), status("c", 1)]
    assert settled_before(done, 3) and settled_before(done, 1000), "all settled: nothing comes before any end"
    assert not settled_before([status("a", None), status("b", 100)], 1)


@settings(max_examples=150, deadline=None)
@given(st.lists(partition_states, max_size=6), st.integers(1, 150))
def test_settled_before_is_no_pending_partition_before_the_end(states: list[tuple[int | None, bool]],
                                                               end: int) -> None:
    statuses = statuses_of(states)
    before, unsettled = 0, False
    for s in statuses:
        if s.failure is not None:
            continue
        if s.total is None and before < end:
            unsettled = True
        before += s.total or 0
    assert settled_before(statuses, end) is not unsettled


def test_plan_key_names_partition_offset_and_count() -> None:
    a, b = status("a", 5), status("b", 9)
    assert plan_key([(a, 2, 3), (b, 0, 4)]) == [("a", 2, 3), ("b", 0, 4)]
    assert plan_key([]) == []


# -- until_stable --------------------------------------------------------------------------------------


def test_a_fetch_during_which_a_partition_fails_is_planned_again() -> None:
    statuses = [status("a", 5), status("b", 5), status("c", 5)]
    planned: list[list[tuple[str, int, int]]] = []

    async def attempt() -> list[tuple[str, int, int]]:
        plan = plan_key(plan_window(statuses, 3, 5))
        planned.append(plan)
        if len(planned) == 1:
            statuses[0].failure = Down("a")  # fails while its part of the page is fetched
        return plan

    assert asyncio.run(until_stable(statuses, attempt)) == [("b", 3, 2), ("c", 0, 3)]
    assert planned == [[("a", 3, 2), ("b", 0, 3)], [("b", 3, 2), ("c", 0, 3)]]


def test_a_fetch_without_failures_runs_once() -> None:
    statuses = [status("a", 5, failed=True), status("b", 5)]  # failed before: not a change
    calls: list[int] = []

    async def attempt() -> int:
        calls.append(1)
        return 42

    assert asyncio.run(until_stable(statuses, attempt)) == 42 and calls == [1]
