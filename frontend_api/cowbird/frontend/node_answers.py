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

from cowbird.core import operations
from cowbird.core.errors import RejectedByNode
from cowbird.core.operations import ImpossibleAnswer
from cowbird.core.search import PartitionFailure
from cowbird.core.wire import Line, Problem
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
    busy: bool = False  # the node said it is busy (its line full, or the wait for a place over): it is alive

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
    if problem is not None and problem.code == "busy":
        raise NodeFailure(partition, node, f"HTTP {status}: {_detail(body, status)}", busy=True)
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
    """Lines of one partition's hits (an export stream's, a context's), as the operations' checks see them."""
    try:
        operations.check_lines(lines, partition.size)
    except ImpossibleAnswer as impossible:
        raise NodeFailure(partition.id, node, str(impossible)) from None


def combined(partition: Partition, failures: list[NodeFailure]) -> NodeFailure:
    """One failure naming every node that was tried."""
    if not failures:
        return NodeFailure(partition.id, "-", "no node configured")
    if len(failures) == 1:
        return failures[0]
    reasons = list(dict.fromkeys(f.reason for f in failures))
    return NodeFailure(partition.id, ", ".join(f.node for f in failures), "; ".join(reasons),
                       final=any(f.final for f in failures), busy=all(f.busy for f in failures))
