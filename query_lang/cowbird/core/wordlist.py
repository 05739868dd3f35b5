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

import asyncio
import functools
import math
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Any

from cowbird.core.operations import NGRAMS
from cowbird.core.search import PartitionFailure, Partitions, PartitionStatus, TimeLimit
from cowbird.core.wire import NgramRequest, NgramResponse, RegionFilter, json_pieces

Key = tuple[str, ...]
"""An n-gram: its tokens."""


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
    cut_off: set[str] = field(default_factory=set)  # partitions whose n-grams past their end were not counted


PIECES_AT_ONCE = 8
"""Pieces of n-grams to count asked of one partition at once (a node queues what it cannot run yet)."""
VALUES_BYTES = 32 * 1024
"""The n-grams one request asks a node to count, at most this many bytes of JSON (a node takes request
bodies of 64 KB by default)."""


def values_pieces(keys: list[Key], budget: int) -> list[list[Key]]:
    """The n-grams in consecutive pieces of at most ``budget`` bytes of JSON each (one n-gram at least)."""
    return json_pieces(keys, budget)


class Counting:
    """The rounds of questions a word list (or a keyword list) asks the partitions ``members``: each
    failure is kept, and a partition that fails once is asked nothing more (its counts are left out)."""

    def __init__(self, partitions: Partitions[Any], members: Sequence[Any], spec: WordListSpec,
                 limit: TimeLimit) -> None:
        self.partitions = partitions
        self.members = list(members)
        self.spec = spec
        self.limit = limit
        self.failed: dict[str, PartitionFailure] = {}
        self.totals: dict[str, tuple[int, int]] = {}  # tokens and n-grams of each partition that answered
        self.cut_off: set[str] = set()  # partitions without neighbours: their n-grams past the end not counted
        self.rounds = 0

    @property
    def answering(self) -> list[Any]:
        return [p for p in self.members if p.id not in self.failed]

    @property
    def tokens(self) -> int:
        return sum(self.totals[p.id][0] for p in self.answering if p.id in self.totals)

    @property
    def ngrams(self) -> int:
        return sum(self.totals[p.id][1] for p in self.answering if p.id in self.totals)

    def statuses(self) -> list[PartitionStatus[Any]]:
        return [PartitionStatus(p, self.totals[p.id][1] if p.id in self.totals else None, self.failed.get(p.id))
                for p in self.members]

    async def ask(self, asked: dict[str, NgramRequest]) -> dict[str, NgramResponse]:
        """One round: each partition named its request (those that failed before are left out)."""
        chosen = [p for p in self.members if p.id in asked and p.id not in self.failed]
        calls: list[Callable[[], Awaitable[NgramResponse]]] = [
            functools.partial(self.partitions.call, p, NGRAMS, asked[p.id], self.limit)
            for p in chosen]
        answers = await self.partitions.gather(calls)
        self.rounds += 1
        got: dict[str, NgramResponse] = {}
        for p, answer in zip(chosen, answers, strict=True):
            if isinstance(answer, PartitionFailure):
                self.failed[p.id] = answer
            else:
                got[p.id] = answer
                self.totals[p.id] = (answer.tokens, answer.ngrams)
                if not answer.across:
                    self.cut_off.add(p.id)
        return got

    async def top(self, k: int) -> dict[Key, int]:
        """Each partition's ``k`` most frequent n-grams, their counts summed as far as they were sent."""
        partial: dict[Key, int] = {}
        for answer in (await self.ask({p.id: self.spec.request(p.id, top=k) for p in self.members})).values():
            for tokens, count in zip(answer.row_tokens, answer.row_counts, strict=True):
                key = tuple(tokens)
                partial[key] = partial.get(key, 0) + count
        return partial

    async def at_least(self, threshold: int) -> dict[Key, int]:
        """The exact count of every n-gram occurring at least ``threshold`` times over the partitions that
        answer: each sends those it holds at least ``ceil(threshold / P)`` times (an n-gram none sent
        occurs fewer than ``threshold`` times), then its counts of the others' candidates."""
        share = max(1, math.ceil(threshold / len(self.members)))
        answers = await self.ask({p.id: self.spec.request(p.id, threshold=share) for p in self.answering})
        sent = {pid: {tuple(t): c for t, c in zip(answer.row_tokens, answer.row_counts, strict=True)}
                for pid, answer in answers.items()}
        candidates: dict[Key, int] = {}
        for rows in sent.values():
            for key, count in rows.items():
                candidates[key] = candidates.get(key, 0) + count
        # a partition that did not send an n-gram holds it fewer than `share` times
        candidates = {key: total for key, total in candidates.items()
                      if total + (len(sent) - sum(key in rows for rows in sent.values())) * (share - 1) >= threshold}
        missing = {pid: [key for key in candidates if key not in rows] for pid, rows in sent.items()}
        asked = [pid for pid, keys in missing.items() if keys]
        third = await self.counted(missing)
        for pid, counts in third.items():
            for key, count in zip(missing[pid], counts, strict=True):
                candidates[key] += count
        for pid in asked:
            if pid not in third:  # failed in the last round: what it sent before is left out too
                for key, count in sent[pid].items():
                    if key in candidates:
                        candidates[key] -= count
        return {key: count for key, count in candidates.items() if count >= threshold}

    async def counts_of(self, keys: list[Key]) -> dict[Key, int]:
        """The exact counts of these n-grams over the partitions that answer."""
        counts = dict.fromkeys(keys, 0)
        if not keys:
            return counts
        for answer in (await self.counted({p.id: keys for p in self.answering})).values():
            for key, count in zip(keys, answer, strict=True):
                counts[key] += count
        return counts

    async def counted(self, asked: dict[str, list[Key]]) -> dict[str, list[int]]:
        """Each partition's counts of the n-grams named for it, asked in pieces that a node takes (its
        request bodies are limited: 64 KB by default), ``PIECES_AT_ONCE`` pieces of each partition at
        a time; a partition that fails one piece has no counts."""
        pieces = {pid: values_pieces(keys, VALUES_BYTES) for pid, keys in asked.items() if keys}
        counts: dict[str, list[list[int]]] = {pid: [[] for _ in parts] for pid, parts in pieces.items()}
        for wave in range(0, max((len(p) for p in pieces.values()), default=0), PIECES_AT_ONCE):
            jobs = [(p, k) for p in self.members if p.id in pieces and p.id not in self.failed
                    for k in range(wave, min(wave + PIECES_AT_ONCE, len(pieces[p.id])))]
            calls: list[Callable[[], Awaitable[NgramResponse]]] = [functools.partial(
                self.partitions.call, p, NGRAMS,
                self.spec.request(p.id, values=[list(key) for key in pieces[p.id][k]]), self.limit)
                for p, k in jobs]
            answers = await self.partitions.gather(calls)
            self.rounds += 1
            for (p, k), answer in zip(jobs, answers, strict=True):
                if isinstance(answer, PartitionFailure):
                    self.failed.setdefault(p.id, answer)
                else:
                    counts[p.id][k] = answer.counts
                    self.totals[p.id] = (answer.tokens, answer.ngrams)
        return {pid: [c for piece in parts for c in piece] for pid, parts in counts.items() if pid not in self.failed}


async def word_list(partitions: Partitions[Any], members: Sequence[Any], spec: WordListSpec,
                    seconds: float) -> WordList:
    """The word list of ``spec`` over the partitions ``members`` (exact over those that answer)."""
    counting = Counting(partitions, members, spec, TimeLimit(seconds))
    partial = await counting.top(spec.limit)
    if len(members) == 1:  # the partition's own most frequent are the corpus's
        final = {k: c for k, c in partial.items() if c >= spec.min_count}
        more = len(final) > spec.limit
    else:
        ranked = sorted(partial.values(), reverse=True)
        tau = ranked[spec.limit - 1] if len(ranked) >= spec.limit else 0
        target = max(tau, spec.min_count)
        final = await counting.at_least(target)
        more = len(final) > spec.limit or target > spec.min_count
    shown = sorted(final.items(), key=lambda item: (-item[1], item[0]))[: spec.limit]
    return WordList(shown, counting.tokens, counting.ngrams, more, counting.rounds, counting.statuses(),
                    counting.cut_off)


# -- keywords -----------------------------------------------------------------------------------------

ZERO = 0.5
"""What a zero frequency counts as in Log Ratio, its interval and %DIFF (Hardie 2014's correction)."""

KEYWORD_ORDERS = ("log_likelihood", "log_ratio", "diff", "simple_maths", "frequency")


@dataclass(frozen=True)
class Significance:
    """Which keywords are kept: those whose log-likelihood is significant at ``p`` (divided by the
    number of items compared with the Bonferroni correction; ``p`` 1 keeps every item) and whose
    Log Ratio is at least ``min_log_ratio`` away from 0 (the effect size); ``smoothing`` is the
    constant k of the simple-maths score, (per million in the target + k) / (per million in the reference + k)."""

    p: float = 0.05
    bonferroni: bool = True
    min_log_ratio: float = 0.0
    smoothing: float = 1.0

    def critical(self, compared: int) -> float:
        """The least |log-likelihood| that is significant: chi-squared's quantile with one degree of
        freedom, ``scipy.stats.chi2.isf(p, 1)``, as the square of the normal quantile of p/2 (the lower
        tail: ``1 - p/2`` rounds away a small p, 2e-11 off at p = 4e-7 and no quantile at all below
        1e-16; tests/core/test_statistics.py checks it against scipy's)."""
        if self.p >= 1:  # no test
            return 0.0
        p = self.p / max(1, compared) if self.bonferroni else self.p
        return float(NormalDist().inv_cdf(max(p / 2, math.ulp(0.0))) ** 2)

    def keeps(self, measure: Keyness, critical: float) -> bool:
        return abs(measure.log_likelihood) >= critical and abs(measure.log_ratio) >= self.min_log_ratio


@dataclass(frozen=True)
class Keyness:
    """How much more often (or, negative, less often) an item occurs in the target than in the reference:
    signed log-likelihood (Rayson and Garside 2000), Log Ratio = log2 of the ratio of relative
    frequencies (Hardie 2014) with its 95 % confidence interval, and %DIFF (Gabrielatos and Marchi 2012)."""

    log_likelihood: float
    log_ratio: float
    log_ratio_low: float
    log_ratio_high: float
    diff: float
    simple_maths: float = 0.0


def keyness(target: int, target_size: int, reference: int, reference_size: int, smoothing: float = 1.0) -> Keyness:
    total = target + reference
    expected_target = target_size * total / (target_size + reference_size)
    expected_reference = reference_size * total / (target_size + reference_size)
    ll = 0.0
    for observed, expected in ((target, expected_target), (reference, expected_reference)):
        if observed:
            ll += observed * math.log(observed / expected)
    ll *= 2
    if target * reference_size < reference * target_size:
        ll = -ll
    o1, o2 = target or ZERO, reference or ZERO
    ratio = math.log2((o1 / target_size) / (o2 / reference_size))
    margin = 1.96 * math.sqrt(1 / o1 + 1 / o2) / math.log(2)
    per_million_target, per_million_reference = o1 * 1e6 / target_size, o2 * 1e6 / reference_size
    diff = (per_million_target - per_million_reference) * 100 / per_million_reference
    simple = (target * 1e6 / target_size + smoothing) / (reference * 1e6 / reference_size + smoothing)
    return Keyness(ll, ratio, ratio - margin, ratio + margin, diff, simple)


@dataclass
class KeywordList:
    """The items of the target and of the reference that occur at least their minimum in either, with
    their exact counts on both sides and their keyness, in the order asked (most key first)."""

    rows: list[tuple[Key, int, int, Keyness]]
    tokens: int
    reference_tokens: int
    candidates: int
    target: list[PartitionStatus[Any]]
    reference: list[PartitionStatus[Any]]
    critical: float = 0.0  # the least |log-likelihood| kept
    not_significant: int = 0  # items compared and left out by the significance filter
    kept: int = 0  # items that passed it (the rows are the first ``limit`` of them)


async def keyword_list(partitions: Partitions[Any], members: Sequence[Any], spec: WordListSpec,
                       reference_members: Sequence[Any], reference_spec: WordListSpec, order: str,
                       seconds: float, significance: Significance | None = None) -> KeywordList:
    """Keywords of the target (``members``, ``spec``: its subcorpus, attribute and minimum) against the
    reference: every item reaching its minimum on one side, counted exactly on both (word lists'
    rounds, then the counts of the other side's items), ranked by ``order``, the first ``spec.limit``."""
    limit = TimeLimit(seconds)
    target = Counting(partitions, members, spec, limit)
    reference = Counting(partitions, reference_members, reference_spec, limit)
    ours, theirs = await asyncio.gather(target.at_least(spec.min_count), reference.at_least(reference_spec.min_count))
    ours_more, theirs_more = await asyncio.gather(target.counts_of([k for k in theirs if k not in ours]),
                                                  reference.counts_of([k for k in ours if k not in theirs]))
    ours.update(ours_more)
    theirs.update(theirs_more)
    size, reference_size = target.tokens, reference.tokens
    significance = significance or Significance(p=1.0, bonferroni=False)
    compared = [(key, ours[key], theirs[key], keyness(ours[key], size, theirs[key], reference_size,
                                                      significance.smoothing))
                for key in ours if size and reference_size and (ours[key] or theirs[key])]
    critical = significance.critical(len(compared))
    rows = [row for row in compared if significance.keeps(row[3], critical)]

    def rank(row: tuple[Key, int, int, Keyness]) -> tuple[float, Key]:
        measure = float(row[1]) if order == "frequency" else float(getattr(row[3], order))
        return (-measure, row[0])

    rows.sort(key=rank)
    return KeywordList(rows[: spec.limit], size, reference_size, len(compared), target.statuses(),
                       reference.statuses(), critical, len(compared) - len(rows), len(rows))
