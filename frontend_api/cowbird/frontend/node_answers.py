"""What a node answered, and whether to believe it.

The one rule for node answers (:func:`classify`): a success is parsed and checked against the
request and the manifest; a failure of the node (:class:`NodeFailure`) makes the caller try the
next node; a refusal of the request itself becomes :class:`RejectedByNode` for the client. Every
answer is read with a size cap, so a node cannot make the front end hold more than it allows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from cowbird.core.analysis_merge import MergeKey
from cowbird.core.errors import RejectedByNode
from cowbird.core.search import PartitionFailure
from cowbird.core.wire import (
    CooccurrenceResponse,
    DistributionResponse,
    FrequencyResponse,
    Line,
    Problem,
    SortBound,
    SortKeysRequest,
    SortKeysResponse,
)
from cowbird.frontend.corpora import Partition

M = TypeVar("M", bound=BaseModel)

QUERY_CODES = frozenset({"query_syntax", "unsupported", "unknown_attribute", "limit_exceeded", "out_of_range"})
"""Codes of a node's refusals that are the query's fault, the same on every node: passed to the
client, never retried on a replica. Any other refusal (``bad_parameter``, ``invalid_request``,
``unauthorized``, ``busy``, a code the front end does not know) says something about the node or
about what the front end sent it: the next node is tried, and the client sees a partition failure."""

MAX_LINE_BYTES = 4 * 1024 * 1024
"""Longest line of an export stream (a line of 100 tokens of context each side is a few kB)."""


@dataclass
class NodeFailure(PartitionFailure):
    """A partition could not be served by a node (or by any: ``node`` lists them), and why.

    ``final``: the other nodes would fail the same way (the query itself ran out of time);
    ``timed_out``: the node did not answer in time (alive and slow, or not alive at all).
    """

    partition: str
    node: str
    reason: str
    final: bool = False
    timed_out: bool = False
    call: str = ""  # the call's X-Cowbird-Call id (after a timeout: is the node still at work on it?)
    waited: float = 0.0  # seconds waited before the timeout

    def __str__(self) -> str:
        return f"{self.partition} on {self.node}: {self.reason}"

    def public(self) -> str:
        """What clients may see: the partition and why, not where the nodes are."""
        return f"{self.partition}: {self.reason}"



def _problem(body: bytes) -> Problem | None:
    try:
        return Problem.model_validate(json.loads(body))
    except (ValueError, ValidationError):
        return None


def _detail(body: bytes, status: int) -> str:
    """What a failed answer says about itself, in a few words."""
    problem = _problem(body)
    if problem is not None:
        return problem.detail[:200]
    try:
        parsed = json.loads(body)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("detail"), str):
        return str(parsed["detail"])[:200]
    return httpx.codes.get_reason_phrase(status) or "no detail"


def classify(status: int, body: bytes, partition: str, node: str) -> None:
    """The rule for node answers: return for a success, raise ``NodeFailure`` for a failure of the
    node (try the next one; ``final`` when the query ran out of time), ``RejectedByNode`` for a
    refusal of the request itself."""
    if status < 300:
        return
    problem = _problem(body)
    if problem is not None and problem.code == "timeout":
        raise NodeFailure(partition, node, "the query ran out of time on the node", final=True)
    if problem is not None and 400 <= status < 500 and status not in (408, 429) and problem.code in QUERY_CODES:
        extra = problem.model_dump(exclude_none=True, exclude={"type", "title", "status", "detail", "code"})
        raise RejectedByNode(status, problem.code, problem.title, problem.detail, **extra)
    raise NodeFailure(partition, node, f"HTTP {status}: {_detail(body, status)}")


def payload(request: BaseModel) -> dict[str, Any]:
    return request.model_dump(mode="json", exclude_unset=True)


async def read_capped(response: httpx.Response, cap: int, partition: str, node: str) -> bytes:
    declared = response.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > cap:
        raise NodeFailure(partition, node, f"answered {int(declared)} bytes, more than {cap}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in response.aiter_bytes():
        size += len(chunk)
        if size > cap:
            raise NodeFailure(partition, node, f"answered more than {cap} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def parse_answer(body: bytes, model: type[M], partition: str, node: str) -> M:
    try:
        return model.model_validate_json(body)
    except ValidationError as exc:
        raise NodeFailure(partition, node, "answered something that is not a valid response") from exc


def check(condition: bool, problem: str, partition: Partition, node: str) -> None:
    if not condition:
        raise NodeFailure(partition.id, node, f"answer refused: it {problem}")


def check_lines(lines: list[Line], partition: Partition, node: str) -> None:
    for line in lines:
        check(0 <= line.match <= line.matchend < partition.size,
               f"gives a hit at {line.match}-{line.matchend}, outside the partition", partition, node)
        length = len(line.left) + len(line.keyword) + len(line.right)
        for name, at in line.breaks.items():
            check(all(0 < k < length for k in at) and at == sorted(set(at)),
                  f"marks {name} boundaries outside its line or out of order", partition, node)


def check_in_order(lines: list[Line], partition: Partition, node: str) -> None:
    """Lines of hits in corpus order: each after the one before, none twice."""
    for before, after in zip(lines, lines[1:], strict=False):
        check((before.match, before.matchend) < (after.match, after.matchend),
              f"sent hits out of order or twice ({before.match}-{before.matchend} then {after.match}-{after.matchend})",
              partition, node)


def check_frequency(answer: FrequencyResponse, partition: Partition, node: str) -> None:
    """Counts that add up: every count positive, values once, their sum the hits counted, counted
    and unset hits the total."""
    check(len(answer.values) == len(answer.counts), "gives values and counts of different lengths", partition, node)
    check(all(c > 0 for c in answer.counts), "gives counts that are not positive", partition, node)
    check(len(set(answer.values)) == len(answer.values), "gives a value twice", partition, node)
    check(answer.counted >= 0 and answer.unset >= 0 and answer.counted + answer.unset == answer.total,
          f"counts {answer.counted} + {answer.unset} hits of {answer.total}", partition, node)
    listed = sum(answer.counts)
    check(listed == answer.counted if not answer.truncated else listed <= answer.counted,
          f"gives counts summing to {listed} for {answer.counted} hits counted", partition, node)
    check(answer.distinct >= len(answer.values) and (answer.truncated or answer.distinct == len(answer.values)),
          "gives a wrong number of distinct values", partition, node)


def check_distribution(answer: DistributionResponse, partition: Partition, node: str) -> None:
    """Hits per value that add up to the total, subcorpora inside the partition."""
    columns = (answer.hits, answer.regions_with_hits, answer.tokens, answer.regions)
    check(all(len(c) == len(answer.values) for c in columns), "gives columns of different lengths", partition, node)
    check(len(set(answer.values)) == len(answer.values), "gives a value twice", partition, node)
    check(all(v >= 0 for c in columns for v in c) and answer.outside >= 0, "gives negative counts", partition, node)
    listed = sum(answer.hits) + answer.outside
    check(listed == answer.total if not answer.truncated else listed <= answer.total,
          f"gives hits summing to {listed} of {answer.total}", partition, node)
    check(all(h <= t and w <= r <= t for h, w, t, r in zip(answer.hits, answer.regions_with_hits, answer.tokens,
                                                            answer.regions, strict=True)),
          "gives more hits or regions than its subcorpus holds", partition, node)
    check(sum(answer.tokens) <= partition.size, "gives subcorpora larger than the partition", partition, node)


def check_cooccurrence(answer: CooccurrenceResponse, partition: Partition, node: str) -> None:
    """Co-occurrences inside the windows, marginals inside the partition."""
    columns = (answer.f, answer.marginal, answer.in_nodes)
    check(all(len(c) == len(answer.values) for c in columns), "gives columns of different lengths", partition, node)
    check(len(set(answer.values)) == len(answer.values), "gives a value twice", partition, node)
    check(answer.size == partition.size, f"gives the partition {answer.size} tokens", partition, node)
    check(0 <= answer.context_tokens <= answer.size and 0 <= answer.node_tokens <= answer.size,
          "gives windows larger than the partition", partition, node)
    check(all(f >= 0 and i >= 0 and f + i <= m <= answer.size
              for f, m, i in zip(answer.f, answer.marginal, answer.in_nodes, strict=True)),
          "gives co-occurrences beyond the collocates' frequencies", partition, node)
    check(sum(answer.f) <= answer.context_tokens and sum(answer.in_nodes) <= answer.node_tokens,
          "gives more co-occurrences than its windows hold", partition, node)


def check_sort_keys(answer: SortKeysResponse, request: SortKeysRequest, descending: tuple[bool, ...],
                    partition: Partition, node: str) -> None:
    """As many keys as asked for, in the order asked for (a partition's keys merge with the others'),
    within the bounds asked for."""
    if request.ranks is not None:
        check(answer.offset == 0 and answer.end is None and len(answer.keys) == len(request.ranks),
              f"sent {len(answer.keys)} sort keys instead of {len(request.ranks)}", partition, node)
    else:
        end = answer.total if answer.end is None else answer.end
        check((answer.end is None) == (request.stop is None) and 0 <= answer.offset <= answer.total
              and 0 <= end <= answer.total, "placed a bound outside its hits", partition, node)
        check(request.start is not None or answer.offset == request.offset,
              "answered from another offset", partition, node)
        expected = max(0, min(request.limit, end - answer.offset))
        check(len(answer.keys) == expected, f"sent {len(answer.keys)} sort keys instead of {expected}", partition,
              node)
    keys = [MergeKey(key, descending) for key in answer.keys]
    check(all(not after < before for before, after in zip(keys, keys[1:], strict=False)),
          "sent sort keys out of order", partition, node)
    base = request.sort.base
    if keys and request.start is not None and request.start.base != base:  # the first key is not before start
        check(not _before((keys[0], base), request.start, descending), "sent keys before its start", partition, node)
    if keys and request.stop is not None and request.stop.base != base:  # the last key is before stop
        check(_before((keys[-1], base), request.stop, descending), "sent keys past its stop", partition, node)


def _before(hit: tuple[MergeKey, int], bound: SortBound, descending: tuple[bool, ...]) -> bool:
    """Whether a hit (its key, its partition's base) of another partition than the bound's sorts before it."""
    key = MergeKey(bound.key, descending)
    return hit[0] < key or (hit[0] == key and hit[1] < bound.base)


def combined(partition: Partition, failures: list[NodeFailure]) -> NodeFailure:
    """One failure naming every node that was tried."""
    if not failures:
        return NodeFailure(partition.id, "-", "no node configured")
    if len(failures) == 1:
        return failures[0]
    reasons = list(dict.fromkeys(f.reason for f in failures))
    return NodeFailure(partition.id, ", ".join(f.node for f in failures), "; ".join(reasons),
                       final=any(f.final for f in failures))
