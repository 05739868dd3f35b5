"""Export streams from nodes: NDJSON lines read as they come, each checked (:func:`stream_lines`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx

from cowbird.core.search import TimeLimit
from cowbird.core.wire import Line
from cowbird.frontend.caller import Caller
from cowbird.frontend.corpora import Partition
from cowbird.frontend.failover import Failover, Silent
from cowbird.frontend.node_answers import MAX_LINE_BYTES, NodeFailure, check, check_lines, parse_answer


async def stream_lines(failover: Failover, partition: Partition, node: str, response: httpx.Response, count: int,
                       limit: TimeLimit | None, caller: Caller, in_corpus_order: bool = True,
                       replica: bool = False) -> AsyncIterator[Line]:
    """``count`` valid lines of an export stream, in corpus order unless sorted (then each line
    carries its sort key); the stream must keep moving (``replica``: another node could finish it)."""
    previous = (-1, -1)
    received = 0
    async for text in raw_lines(failover, partition, node, response, limit, caller, replica):
        if not text.strip():
            continue
        line = parse_answer(text, Line, partition.id, node)
        check_lines([line], partition, node)
        if in_corpus_order:
            check((line.match, line.matchend) > previous, "sent lines out of order or twice", partition, node)
        else:
            check(line.sort_key is not None, "sent a sorted line without its sort key", partition, node)
        previous = (line.match, line.matchend)
        received += 1
        yield line
        if received == count:
            return
    raise NodeFailure(partition.id, node, f"ended the stream after {received} of {count} lines")

async def raw_lines(failover: Failover, partition: Partition, node: str, response: httpx.Response,
                    limit: TimeLimit | None, caller: Caller, replica: bool = False) -> AsyncIterator[bytes]:
    """The lines of a stream as they come; each chunk must arrive within ``[nodes] timeout`` — and,
    while a replica could finish the stream, while the node answers (``Failover.next_chunk``) —, and
    no line may be longer than ``MAX_LINE_BYTES``."""
    chunks = response.aiter_bytes()
    pending = b""
    while True:
        try:
            chunk = await failover.next_chunk(chunks, node, limit, caller, replica)
        except Silent:
            raise NodeFailure(partition.id, node, "stopped answering in the middle of the stream (not even its "
                                                  "health check): left for its replica") from None
        except (TimeoutError, httpx.TimeoutException):
            raise NodeFailure(partition.id, node, "stalled in the middle of the stream", timed_out=True) from None
        except httpx.TransportError as exc:
            raise NodeFailure(partition.id, node, f"broke off the stream ({type(exc).__name__})") from exc
        if not chunk:
            if pending:
                yield pending
            return
        lines = (pending + chunk).split(b"\n")
        pending = lines.pop()
        if len(pending) > MAX_LINE_BYTES:
            raise NodeFailure(partition.id, node, f"sent a line longer than {MAX_LINE_BYTES} bytes")
        for line in lines:
            yield line
