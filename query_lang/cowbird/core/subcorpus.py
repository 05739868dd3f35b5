"""The size of a subcorpus (its texts chosen by their metadata) and the values of an s-attribute in
it with their sizes, summed over the corpus's partitions: what the subcorpus picker lists and what a
saved subcorpus shows. Every partition sends every value it holds in the subcorpus (a node refuses
more than it lists at once, so the sums are never those of a few values only)."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cowbird.core.operations import SUBCORPUS
from cowbird.core.periods import Period
from cowbird.core.search import PartitionFailure, Partitions, PartitionStatus, TimeLimit, all_failed
from cowbird.core.wire import RegionFilter, SubcorpusRequest, SubcorpusResponse


@dataclass
class SubcorpusSizes:
    """Tokens and texts of the subcorpus in the partitions that answered, and per value of the
    attribute asked for its tokens and regions there."""

    tokens: int = 0
    texts: int | None = None
    all_texts: int | None = None
    values: dict[str, list[int]] = field(default_factory=dict)
    statuses: list[PartitionStatus[Any]] = field(default_factory=list)


async def subcorpus_sizes(partitions: Partitions[Any], corpus: str, members: Sequence[Any],
                          filters: list[RegionFilter], texts: str | None, attribute: str | None, match: str | None,
                          ignore_case: bool, seconds: float, period: Period | None = None) -> SubcorpusSizes:
    """The subcorpus of ``filters`` over the partitions ``members`` (exact over those that answer); with
    a ``period``, the attribute's values are the periods of the dates it holds."""
    limit = TimeLimit(seconds)
    calls: list[Callable[[], Awaitable[SubcorpusResponse]]] = [
        functools.partial(partitions.call, p, SUBCORPUS, SubcorpusRequest(
            partition=p.id, filters=filters, texts=texts, attribute=attribute, match=match, ignore_case=ignore_case,
            period=period),
            limit) for p in members]
    answers = await partitions.gather(calls)
    sizes = SubcorpusSizes(texts=0 if texts else None, all_texts=0 if texts else None)
    for p, answer in zip(members, answers, strict=True):
        if isinstance(answer, PartitionFailure):
            sizes.statuses.append(PartitionStatus(p, None, answer))
            continue
        sizes.statuses.append(PartitionStatus(p, answer.tokens))
        sizes.tokens += answer.tokens
        if sizes.texts is not None and sizes.all_texts is not None:
            sizes.texts += answer.texts or 0
            sizes.all_texts += answer.all_texts or 0
        for value, tokens, regions in zip(answer.values, answer.value_tokens, answer.value_regions, strict=True):
            sums = sizes.values.setdefault(value, [0, 0])
            sums[0] += tokens
            sums[1] += regions
    if all(s.failure is not None for s in sizes.statuses):
        raise all_failed(corpus, sizes.statuses)
    return sizes
