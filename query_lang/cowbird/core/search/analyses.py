"""The analyses (:class:`Analyses`): frequency breakdowns, distributions, dispersion and
collocations with their marginals, each partition's counts summed before any share, rate or score.
Under filters every size, marginal and frequency is the filters' subcorpus's (the query's
``CheckedQuery.filters``, sent with each request): the nodes count them there."""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from cowbird.core.analysis_merge import (
    CollocationTable,
    CooccurrenceSums,
    DistributionSums,
    DistributionTable,
    FrequencyTable,
    Measure,
    TextPart,
    collocate_texts,
    collocation_table,
    distribution_table,
    frequency_table,
    merge_frequencies,
    spilled,
)
from cowbird.core.analysis_spec import parse_breakdown, parse_fold
from cowbird.core.declared import HitAnalysis, Merging, Pa, Re
from cowbird.core.errors import UnknownAttribute
from cowbird.core.off_loop import off_loop
from cowbird.core.operations import COOCCURRENCE, DISPERSION, DISTRIBUTION, FREQUENCY, MARGINALS, SUBCORPUS
from cowbird.core.periods import Period
from cowbird.core.search.consistency import check_hit_tokens, hit_length
from cowbird.core.search.counts import Counts
from cowbird.core.search.partitions import (
    P,
    PartitionFailure,
    PartitionStatus,
    Statuses,
    TimeLimit,
    answered_total,
    attributes_of,
    no_attribute,
)
from cowbird.core.wire import (
    CooccurrenceRequest,
    CooccurrenceResponse,
    CountRequest,
    DispersionRequest,
    DispersionResponse,
    DistributionRequest,
    DistributionResponse,
    FrequencyRequest,
    FrequencyResponse,
    MarginalsRequest,
    SubcorpusRequest,
    json_pieces,
)

MARGINALS_BYTES = 32 * 1024
"""Collocates one request asks a partition's marginals of, at most this many bytes of JSON."""


@dataclass
class Dispersion:
    """Where a query's hits fall: over ``parts`` (regions of an s-attribute, such as texts) with Gries'
    DP (0: spread as the parts' sizes are; near 1: all in the smallest part) and its normalised
    form (DP / (1 - the smallest part's share), Lijffijt and Gries 2012), over the partitions, and
    in equal stretches of the corpus (``bins``). None where a partition failed. ``tokens``: the
    (sub)corpus's tokens in the partitions that answered, which the parts' shares are of."""

    parts: int
    parts_with_hits: int
    hits: int
    dp: float | None
    dp_norm: float | None
    dp_partitions: float | None
    bins: list[int]
    partitions: list[tuple[str, int, int]]  # (id, tokens, hits)
    tokens: int = 0


class Analyses(Counts[P]):
    """A search's analyses: every answer summed over the partitions that answered."""

    async def frequency(self, attribute: str, on: str | None, fold: str, minimum: int, offset: int,
                        limit: int | None) -> tuple[Statuses[P], FrequencyTable]:
        """How often each value of ``attribute`` occurs over a span of the hits (CQP's
        ``count A by ATT on SPAN %FOLD``), summed over partitions; with several attributes (and
        spans), each combination of their values (tab-joined)."""
        self.query.check_no_cut("a frequency breakdown")
        levels, folded = parse_breakdown(attribute, on), parse_fold(fold)
        for name, _ in levels:
            if name not in self.corpus.p_attributes:
                raise UnknownAttribute(f"by={attribute}: {no_attribute(self.corpus, 'p', name)}")
        spans = ",".join(str(span) for _, span in levels)

        async def call(partition: P, time: TimeLimit) -> FrequencyResponse:
            request = self.asked(FrequencyRequest, partition, attribute=attribute, on=spans, fold=folded)
            return await self.partitions.call(partition, FREQUENCY, request, time)

        answered = await self._each(call, self.time_limit())
        answers: list[FrequencyResponse] = [a for _, a in answered if a is not None]

        def merged() -> FrequencyTable:
            ordered = merge_frequencies([(a.values, a.counts) for a in answers])
            return frequency_table(ordered, sum(a.counted for a in answers), sum(a.unset for a in answers),
                                   any(a.truncated for a in answers), _answered_size(answered), minimum, offset,
                                   limit)

        return [s for s, _ in answered], await off_loop(merged)

    async def distribution(self, attribute: str, order: Literal["value", "hits", "per_million"] = "value",
                           period: Period | None = None) -> tuple[Statuses[P], DistributionTable]:
        """Hits per value of an s-attribute at the match (CQP's ``group A match ATT``), with each
        value's size, summed over partitions; with a ``period``, per period of the dates the values
        hold (``cowbird.core.periods``; the undated values as the empty one)."""
        self.query.check_no_cut("a distribution")
        if attribute not in self.corpus.meta:
            raise UnknownAttribute(f"by={attribute}: {no_attribute(self.corpus, 'meta', attribute)}")

        async def call(partition: P, time: TimeLimit) -> DistributionResponse:
            request = self.asked(DistributionRequest, partition, attribute=attribute, period=period,
                                 filters=self.query.subcorpus)
            return await self.partitions.call(partition, DISTRIBUTION, request, time)

        answered = await self._each(call, self.time_limit())
        answers: list[DistributionResponse] = [a for _, a in answered if a is not None]

        def merged() -> DistributionTable:
            sums = DistributionSums()
            for a in answers:
                sums.add(a.values, a.hits, a.regions_with_hits, a.tokens, a.regions)
            return distribution_table(sums, sum(a.outside for a in answers), all(a.all_values for a in answers),
                                      any(a.truncated for a in answers), order)

        return [s for s, _ in answered], await off_loop(merged)

    async def dispersion(self, attribute: str, bins: int) -> tuple[Statuses[P], Dispersion]:
        """Where the hits fall: Gries' DP over the regions of ``attribute`` (the parts: texts), over
        the partitions, and the hits in ``bins`` equal stretches of the corpus. Counted first (the
        parts' shares are of the corpus's hits and tokens: under filters, of the subcorpus's, its
        size asked of each partition meanwhile), then each partition adds its parts up."""
        self.query.check_no_cut("a dispersion")
        if attribute not in self.corpus.s_attributes:
            raise UnknownAttribute(f"parts={attribute}: {no_attribute(self.corpus, 's', attribute)}")
        time = self.time_limit()
        filters = self.query.subcorpus
        if filters:
            sizes = self.partitions.gather([functools.partial(
                self.partitions.call, p, SUBCORPUS, SubcorpusRequest(partition=p.id, filters=filters), time)
                for p in self.corpus.partitions])
            statuses, sized = await asyncio.gather(self.count(time), sizes)
            tokens = {}
            for status, answer in zip(statuses, sized, strict=True):
                if not isinstance(answer, PartitionFailure):
                    tokens[status.partition.id] = answer.tokens
                elif status.failure is None:  # without its size, none of its parts are known
                    status.failure, status.total = answer, None
            self._check_some_answered(statuses)
        else:
            statuses = await self.count(time)
            tokens = {p.id: p.size for p in self.corpus.partitions}
        hits = answered_total(statuses)
        corpus_size = sum(p.size for p in self.corpus.partitions)
        size = sum(tokens.values())
        if hits == 0 or not size:
            return statuses, Dispersion(0, 0, 0, None, None, None, [0] * bins, [], size)

        async def call(partition: P, limit: TimeLimit) -> DispersionResponse:
            request = self.asked(DispersionRequest, partition, attribute=attribute, hits=hits,
                                 corpus_size=corpus_size, tokens=size if filters else None, base=partition.offset,
                                 bins=bins, filters=filters)
            return await self.partitions.call(partition, DISPERSION, request, limit)

        answered = await self._each(call, time)
        answers = [a for _, a in answered if a is not None]
        failed = len(answers) < len(answered) or any(s.failure is not None for s in statuses)
        counted = [(tokens[s.partition.id], s.total or 0) for s in statuses if s.failure is None]
        dp_parts = None if failed else 0.5 * sum(a.dp_sum for a in answers)
        smallest = min((a.smallest_part for a in answers if a.parts), default=0)
        norm = None if dp_parts is None or not size else dp_parts / (1 - smallest / size)
        dp_partitions = 0.5 * sum(abs(h / hits - n / size) for n, h in counted) if not failed else None
        shown = [0] * bins
        for a in answers:
            shown = [x + y for x, y in zip(shown, a.bins, strict=True)]
        return [s for s, _ in answered], Dispersion(
            sum(a.parts for a in answers), sum(a.parts_with_hits for a in answers), hits, dp_parts, norm,
            dp_partitions, shown, [(s.partition.id, tokens.get(s.partition.id, 0), s.total or 0) for s in statuses],
            size)

    async def declared(self, analysis: HitAnalysis[Pa, Any, Re], asked: Pa) -> tuple[Statuses[P], Re]:
        """A declared analysis (``cowbird.core.declared``): the attributes its parameters name checked
        on the corpus, its request asked of every partition (with the query's subcorpus), the
        answers of those that answered merged by its ``merge``, in corpus order."""
        self.query.check_no_cut(f"a {analysis.label.lower()} analysis")
        for parameter, (kind, name) in analysis.attributes(asked).items():
            if name not in attributes_of(self.corpus, kind):
                raise UnknownAttribute(f"{parameter}={name}: {no_attribute(self.corpus, kind, name)}")

        async def call(partition: P, time: TimeLimit) -> Any:
            request = analysis.request(asked, **self.asked(CountRequest, partition).model_dump(),
                                       filters=self.query.subcorpus)
            return await self.partitions.call(partition, analysis.operation, request, time)

        answered = await self._each(call, self.time_limit())
        merging = Merging([(s.partition.id, s.partition.offset, s.partition.size)
                           for s, a in answered if a is not None], all(a is not None for _, a in answered))
        answers = [(s.partition.id, a) for s, a in answered if a is not None]
        return [s for s, _ in answered], await off_loop(functools.partial(analysis.merge, asked, answers, merging))

    async def collocations(self, attribute: str, left: int, right: int, within: str | None,
                           measures: list[Measure], order: Measure | Literal["f"],
                           min_freq: int) -> tuple[Statuses[P], CollocationTable]:
        """Collocates of the hits in a window of ``left`` and ``right`` tokens (inside ``within``),
        co-occurrence and marginal frequencies summed over partitions before any measure."""
        self.query.check_no_cut("a collocation analysis")
        if attribute not in self.corpus.p_attributes:
            raise UnknownAttribute(f"attribute={attribute}: {no_attribute(self.corpus, 'p', attribute)}")

        async def call(partition: P, time: TimeLimit) -> CooccurrenceResponse:
            request = self.asked(CooccurrenceRequest, partition, attribute=attribute, left=left, right=right,
                                 within=within, filters=self.query.subcorpus)
            answer = await self.partitions.call(partition, COOCCURRENCE, request, time)
            check_hit_tokens(partition.id, answer, length)
            return answer

        length = hit_length(self.query.query)

        answered = await self._each(call, self.time_limit())
        # a collocate's marginal counts on every partition, also where it never co-occurs: ask those
        found: dict[str, int] = {}
        for _, a in answered:
            for value, f in zip(a.values if a is not None else [], a.f if a is not None else [], strict=True):
                found[value] = found.get(value, 0) + f
        for value, f in _spilled(answered).items():  # windows across the cuts (analysis_merge.spilled)
            found[value] = found.get(value, 0) + f
        wanted = {v for v, f in found.items() if f >= min_freq}
        asks = [(status, sorted(wanted - set(a.values))) for status, a in answered if a is not None]
        asks = [(status, values) for status, values in asks if values]
        # in pieces a node takes (its request bodies are limited: 64 KB by default)
        pieces = [(status, piece) for status, values in asks for piece in json_pieces(values, MARGINALS_BYTES)]
        time = self.time_limit()
        answers = await self.partitions.gather([functools.partial(
            self.partitions.call, status.partition, MARGINALS,
            MarginalsRequest(partition=status.partition.id, attribute=attribute, values=piece,
                             filters=self.query.subcorpus), time)
            for status, piece in pieces])
        marginals: dict[str, tuple[list[str], list[int]]] = {}
        for (status, piece), answer in zip(pieces, answers, strict=True):
            if status.failure is not None:
                continue
            if isinstance(answer, PartitionFailure):
                status.failure = answer  # without its marginals, none of its counts are in
                status.total = None
                marginals.pop(status.partition.id, None)
            else:
                values, frequencies = marginals.setdefault(status.partition.id, ([], []))
                values += piece
                frequencies += answer.frequencies
        self._check_some_answered([status for status, _ in answered])

        def merged() -> CollocationTable:
            sums = CooccurrenceSums()
            for status, a in answered:
                if a is None or status.failure is not None:
                    continue
                sums.add(a.values, a.f, a.marginal, a.in_nodes)
                sums.context_tokens += a.context_tokens
                sums.node_tokens += a.node_tokens
                sums.size += a.size
                sums.truncated = sums.truncated or a.truncated
                if status.partition.id in marginals:
                    values, frequencies = marginals[status.partition.id]
                    sums.add(values, [0] * len(values), frequencies, [0] * len(values))
            kept: set[int] = set()
            across = _spilled(answered, kept)
            sums.add(list(across), list(across.values()), [0] * len(across), [0] * len(across))
            sums.context_tokens += sum(across.values())
            return collocation_table(sums, measures, order, min_freq, collocate_texts(_text_parts(answered), kept))

        return [s for s, _ in answered], await off_loop(merged)


def _spilled(answered: Sequence[tuple[PartitionStatus[Any], CooccurrenceResponse | None]],
             kept: set[int] | None = None) -> dict[str, int]:
    """The co-occurrences the partitions' windows found past their edges, each position once
    (``analysis_merge.spilled``; the positions counted go to ``kept``), from the partitions that answered."""
    parts = [(a.spilled, a.spilled_values, a.occupied) for s, a in answered if a is not None and s.failure is None]
    failed = [(s.partition.offset, s.partition.offset + s.partition.size - 1) for s, a in answered
              if a is None or s.failure is not None]
    return spilled(parts, failed, kept)


def _text_parts(answered: Sequence[tuple[PartitionStatus[Any], CooccurrenceResponse | None]]) -> list[TextPart]:
    """What each partition, in corpus order, says of its collocates' texts (``analysis_merge.collocate_texts``)."""
    parts = []
    for status, a in sorted(answered, key=lambda pair: pair[0].partition.offset):
        ok = a is not None and status.failure is None
        parts.append(TextPart(
            status.partition.offset, status.partition.size, ok, a.text_regions if a is not None else None,
            a is not None and a.first_text_continued, a is not None and a.last_text_continues,
            dict(zip(a.values, a.texts, strict=True)) if a is not None and a.texts else {},
            dict(zip(a.values, a.edge_texts, strict=True)) if a is not None and a.edge_texts else {},
            list(zip(a.spilled, a.spilled_values, a.spilled_texts, strict=True))
            if a is not None and a.spilled_texts else []))
    return parts


def _answered_size(answered: Sequence[tuple[PartitionStatus[Any], Any]]) -> int:
    """Tokens in the partitions that answered (the base of per-million rates)."""
    return sum(status.partition.size for status, answer in answered if answer is not None)
