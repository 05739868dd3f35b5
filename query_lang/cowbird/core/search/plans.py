"""Where a page of hits lies across partitions, from their statuses alone (no partition is asked):
a window in corpus order (:func:`plan_window`), a sample (:func:`plan_sample`), whether the hits
before an end are known (:func:`settled_before`), and the rule that a page fetched while a partition
failed is planned again (:func:`until_stable`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import numpy as np

from cowbird.core.search.partitions import P, PartitionStatus, T


def settled_before(statuses: Sequence[PartitionStatus[Any]], end: int) -> bool:
    """Whether the hits up to ``end`` are known: every partition before them has counted (or failed),
    so no hit can come before them any more."""
    before = 0
    for status in statuses:
        if status.failure is not None:
            continue
        if status.total is None:
            return False
        before += status.total
        if before >= end:
            return True
    return True


def plan_key(plan: Sequence[tuple[PartitionStatus[Any], int, int]]) -> list[tuple[str, int, int]]:
    return [(status.partition.id, local, count) for status, local, count in plan]


async def until_stable(statuses: Sequence[PartitionStatus[Any]], attempt: Callable[[], Awaitable[T]]) -> T:
    """``attempt()`` again until no partition fails during it: a failure renumbers the hits, so a
    page fetched while one failed is planned again from the partitions that are left."""
    while True:
        failed = sum(s.failure is not None for s in statuses)
        result = await attempt()
        if sum(s.failure is not None for s in statuses) == failed:
            return result


def plan_window(statuses: Sequence[PartitionStatus[P]], offset: int,
                limit: int) -> list[tuple[PartitionStatus[P], int, int]]:
    """Which partitions hold the hits ``offset`` .. ``offset + limit`` of the partitions that
    answered, as (partition, local offset, count)."""
    plan: list[tuple[PartitionStatus[P], int, int]] = []
    before = 0
    for status in statuses:
        if status.total is None or status.failure is not None:
            continue
        first, last = max(offset, before), min(offset + limit, before + status.total)
        if first < last:
            plan.append((status, first - before, last - first))
        before += status.total
    return plan


def plan_sample(statuses: Sequence[PartitionStatus[P]], size: int,
                seed: int) -> list[tuple[PartitionStatus[P], list[int]]]:
    """Which hits of which partition make the sample of ``size`` for ``seed``: uniform without
    replacement over the hits of the partitions that answered, in global order."""
    ok = [s for s in statuses if s.total and s.failure is None]
    totals = np.asarray([s.total for s in ok], dtype=np.int64)
    population = int(totals.sum())
    if population == 0:
        return []
    chosen = np.sort(np.random.default_rng(seed).choice(population, size=min(size, population), replace=False))
    bounds = np.concatenate(([0], np.cumsum(totals)))
    plan = []
    for k, status in enumerate(ok):
        mine = chosen[(chosen >= bounds[k]) & (chosen < bounds[k + 1])] - bounds[k]
        if len(mine):
            plan.append((status, mine.tolist()))
    return plan
