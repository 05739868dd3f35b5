"""Word lists and n-gram lists of a corpus or a subcorpus, exact over its partitions.

A partition cannot send every n-gram it holds (tens of millions at 1 GT), and its most frequent ones
need not be the corpus's. The front end asks in up to three rounds, as the threshold algorithm of
Cao and Wang (2004, "TPUT") does, and ends with the exact counts of every n-gram that can be among
the ``limit`` most frequent with at least ``min_count`` occurrences:

1. each partition sends its ``limit`` most frequent n-grams; the ``limit``-th largest of their sums so
   far (``tau``) is at most the corpus's ``limit``-th count;
2. with ``T = max(tau, min_count)``, each of the P partitions sends every n-gram it holds at least
   ``ceil(T / P)`` times: an n-gram none sent occurs fewer than ``T`` times in the corpus;
3. each partition sends its counts of the candidates it did not send, and the sums are exact.

With one partition the first round is exact already. A partition that fails is left out of every
round (the answer says which), as other analyses do.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cowbird.core.search import PartitionFailure, Partitions, PartitionStatus, TimeLimit
from cowbird.core.wire import NgramRequest, NgramResponse, RegionFilter


@dataclass(frozen=True)
class WordListSpec:
    """What a word list counts: n-grams of ``attribute`` that stay within one region of ``within``
    and inside the subcorpus of ``filters``; those with a token matching ``match``; the ``limit``
    most frequent with at least ``min_count`` occurrences."""

    attribute: str
    n: int
    within: str | None
    filters: tuple[RegionFilter, ...]
    match: str | None
    ignore_case: bool
    min_count: int
    limit: int

    def request(self, partition: str, **asked: Any) -> NgramRequest:
        return NgramRequest(partition=partition, attribute=self.attribute, n=self.n, within=self.within,
                            filters=list(self.filters), match=self.match, ignore_case=self.ignore_case, **asked)


@dataclass
class WordList:
    """The rows (most frequent first, then by their tokens), the subcorpus's tokens and n-grams in the
    partitions that answered, and whether more n-grams than ``rows`` have ``min_count`` occurrences."""

    rows: list[tuple[tuple[str, ...], int]]
    tokens: int
    ngrams: int
    more: bool
    rounds: int
    statuses: list[PartitionStatus[Any]] = field(default_factory=list)


async def word_list(partitions: Partitions[Any], members: Sequence[Any], spec: WordListSpec,
                    seconds: float) -> WordList:
    """The word list of ``spec`` over the partitions ``members`` (exact over those that answer)."""
    limit = TimeLimit(seconds)
    failed: dict[str, PartitionFailure] = {}

    async def ask(asked: dict[str, NgramRequest]) -> dict[str, NgramResponse]:
        chosen = [p for p in members if p.id in asked and p.id not in failed]
        calls: list[Callable[[], Awaitable[NgramResponse]]] = [
            functools.partial(partitions.analysis, p, "/v1/ngrams", asked[p.id], NgramResponse, limit) for p in chosen]
        answers = await partitions.gather(calls)
        got: dict[str, NgramResponse] = {}
        for p, answer in zip(chosen, answers, strict=True):
            if isinstance(answer, PartitionFailure):
                failed[p.id] = answer
            else:
                got[p.id] = answer
        return got

    first = await ask({p.id: spec.request(p.id, top=spec.limit) for p in members})
    rounds = 1
    if len(members) == 1:
        counts: dict[tuple[str, ...], int] = {}
        for answer in first.values():
            for row in answer.rows:
                counts[tuple(row.tokens)] = row.count
        final = {k: c for k, c in counts.items() if c >= spec.min_count}
        more = len(final) > spec.limit
    else:
        partial: dict[tuple[str, ...], int] = {}
        for answer in first.values():
            for row in answer.rows:
                key = tuple(row.tokens)
                partial[key] = partial.get(key, 0) + row.count
        ranked = sorted(partial.values(), reverse=True)
        tau = ranked[spec.limit - 1] if len(ranked) >= spec.limit else 0
        target = max(tau, spec.min_count)
        share = max(1, math.ceil(target / len(members)))
        second = await ask({p.id: spec.request(p.id, threshold=share) for p in members if p.id in first})
        rounds = 2
        sent: dict[str, dict[tuple[str, ...], int]] = {
            pid: {tuple(row.tokens): row.count for row in answer.rows} for pid, answer in second.items()}
        candidates: dict[tuple[str, ...], int] = {}
        for rows in sent.values():
            for key, count in rows.items():
                candidates[key] = candidates.get(key, 0) + count
        silent = len(sent)
        # a partition that did not send an n-gram holds it fewer than `share` times
        candidates = {key: total for key, total in candidates.items()
                      if total + (silent - sum(key in rows for rows in sent.values())) * (share - 1) >= target}
        missing = {pid: [key for key in candidates if key not in rows] for pid, rows in sent.items()}
        asked = {pid: spec.request(pid, values=[list(k) for k in keys]) for pid, keys in missing.items() if keys}
        third = await ask(asked) if asked else {}
        rounds += 1 if asked else 0
        for pid, answer in third.items():
            for key, count in zip(missing[pid], answer.counts, strict=True):
                candidates[key] += count
        for pid in asked:
            if pid not in third:  # failed in the last round: what it sent before is left out too
                for key, count in sent[pid].items():
                    if key in candidates:
                        candidates[key] -= count
        final = {k: c for k, c in candidates.items() if c >= spec.min_count}
        more = len(final) > spec.limit or target > spec.min_count
    shown = sorted(final.items(), key=lambda item: (-item[1], item[0]))[: spec.limit]
    answering = [p for p in members if p.id not in failed]
    statuses: list[PartitionStatus[Any]] = [
        PartitionStatus(p, first[p.id].ngrams if p.id in first else None, failed.get(p.id)) for p in members]
    return WordList(shown, sum(first[p.id].tokens for p in answering if p.id in first),
                    sum(first[p.id].ngrams for p in answering if p.id in first), more, rounds, statuses)
