"""Faults between the front end and its nodes: every answer is exact, flagged partial, or visibly
broken — never silently wrong. Fake nodes wrap a real node app and misbehave on purpose."""

from __future__ import annotations

import asyncio
import csv
import io
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, TypedDict, Unpack

import httpx
import pytest
from fastapi import FastAPI

from cowbird.core.errors import ExportBroken
from cowbird.frontend import FrontendSettings
from cowbird.frontend.node_health import NodeHealth
from tests.clock import FakeClock, until
from tests.frontend.conftest import NODE_TOKEN, Partitioned, front_client, front_settings
from tests.support import JsonObject, ParamValue, assert_problem

pytestmark = pytest.mark.anyio
P1 = {"corpus": "big", "q": '[pos="P1"]', "syntax": "cqp"}


class Misbehaviour(TypedDict, total=False):
    """What a Fake node does: answer with ``status`` (and ``body``) to every /v1/ call; answer
    ``answer`` to a call of ``path``; end an export after ``end_after`` lines, break it after
    ``break_after``, or send ``extra`` lines beyond those asked for."""

    status: int
    body: JsonObject
    answer: bytes
    path: str
    end_after: int
    break_after: int
    extra: bool
    mutate: Callable[[JsonObject], JsonObject]


class Fake:
    """A node that forwards to a real node app and then does what it is told with the answer."""

    def __init__(self, app: FastAPI, **misbehaviour: Unpack[Misbehaviour]) -> None:
        self.app = app
        self.misbehaviour = misbehaviour
        self.calls: list[str] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.calls.append(request.url.path)
        how = self.misbehaviour
        if "status" in how and request.url.path.startswith("/v1/"):
            return httpx.Response(int(how["status"]), headers={"location": "http://elsewhere/"},
                                  json=how.get("body", {"code": "nope", "title": "x", "status": 1, "detail": "x"}))
        if "answer" in how and request.url.path == str(how.get("path", request.url.path)):
            return httpx.Response(200, content=how["answer"])
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://node") as inner:
            real = await inner.request(request.method, request.url.path, params=request.url.params,
                                       content=await request.aread(), headers=dict(request.headers))
        if "mutate" in how and request.url.path == str(how.get("path")) and real.status_code == 200:
            return httpx.Response(200, json=how["mutate"](real.json()))
        if request.url.path != "/v1/export":
            return httpx.Response(real.status_code, content=real.content, headers=real.headers)
        lines = real.content.splitlines(keepends=True)
        if "end_after" in how:
            return httpx.Response(200, content=b"".join(lines[: int(how["end_after"])]))
        if "break_after" in how:
            cut = int(how["break_after"])

            async def broken() -> AsyncIterator[bytes]:
                for line in lines[:cut]:
                    yield line
                raise httpx.ReadError("connection reset by peer")

            return httpx.Response(200, content=broken())
        if "extra" in how:
            return httpx.Response(200, content=real.content + b"".join(lines[:5]))
        return httpx.Response(200, content=real.content)


def big_settings(big: Partitioned, sample: Partitioned, tmp_path: Path, first: str, **extra: Any) -> FrontendSettings:
    settings = front_settings(sample, big, tmp_path, **extra)
    settings.corpora[1].nodes[big.ids[0]] = [f"http://{first}", "http://node-a"]
    return settings


async def _export(client: httpx.AsyncClient, **params: ParamValue) -> list[str]:
    response = await client.get("/api/v1/export", params={**P1, "limit": 4_100, **params})
    assert response.status_code == 200, response.text
    return response.text.splitlines()[1:]


@pytest.mark.slow
async def test_an_export_that_breaks_part_way_resumes_on_the_replica_without_duplicates(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    fake = Fake(nodes["node-a"], break_after=1_000)
    plain = front_settings(sample_parts, big_parts, tmp_path)
    async for client in front_client(plain, nodes):
        expected = await _export(client)
    settings = big_settings(big_parts, sample_parts, tmp_path, "node-flaky")
    async for client in front_client(settings, nodes, {"node-flaky": httpx.MockTransport(fake.handle)}):
        rows = await _export(client)
    assert len(rows) == len(expected) == 4_100 and rows == expected
    positions = [int(row.split("\t")[1]) for row in rows]
    assert positions == sorted(set(positions))


@pytest.mark.slow
@pytest.mark.parametrize("misbehaviour", [
    {"end_after": 17},  # the stream ends early but cleanly
    {"status": 307},  # a redirect
    {"status": 502, "body": {"detail": "bad gateway"}},
    {"answer": b"<html>garbage</html>\n", "path": "/v1/export"},
    {"answer": b'{"match": 99999, "matchend": 99999, "left": [], "keyword": [], "right": []}\n', "path": "/v1/export"},
    {"extra": True},  # more lines than asked for
], ids=["short", "redirect", "5xx", "garbage", "outside", "extra"])
async def test_a_bad_export_answer_moves_to_the_next_node(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path,
    misbehaviour: Misbehaviour,
) -> None:
    async for client in front_client(front_settings(sample_parts, big_parts, tmp_path), nodes):
        expected = await _export(client)
    fake = Fake(nodes["node-a"], **misbehaviour)
    settings = big_settings(big_parts, sample_parts, tmp_path, "node-bad")
    async for client in front_client(settings, nodes, {"node-bad": httpx.MockTransport(fake.handle)}):
        assert await _export(client) == expected


@pytest.mark.slow  # 1.9 s here (make quick leaves it out)
async def test_with_no_node_left_an_export_breaks_visibly(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    fake = Fake(nodes["node-a"], end_after=17)
    settings = front_settings(sample_parts, big_parts, tmp_path)
    settings.corpora[1].nodes[big_parts.ids[0]] = ["http://node-short"]
    async for client in front_client(settings, nodes, {"node-short": httpx.MockTransport(fake.handle)}):
        with pytest.raises(ExportBroken, match="broke off after 17 of 4100 rows: big_p01: ended the stream"):
            await client.get("/api/v1/export", params={**P1, "limit": 4_100})


@pytest.mark.parametrize("format", ["tsv", "csv", "ndjson", "xlsx"])
@pytest.mark.slow  # 1.3 s here (make quick leaves it out)
async def test_an_export_broken_after_its_first_byte_ends_saying_it_is_incomplete(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path, format: str
) -> None:
    """Each format's own last line: ``# incomplete: "…"`` in TSV and CSV (as the metadata lines), a last
    object in NDJSON, a last row in XLSX; then the connection is dropped (``ExportBroken``)."""
    fake = Fake(nodes["node-a"], end_after=17)
    settings = front_settings(sample_parts, big_parts, tmp_path)
    settings.corpora[1].nodes[big_parts.ids[0]] = ["http://node-short"]
    said = "the export broke off after 17 of 4100 rows: big_p01: ended the stream"
    async for client in front_client(settings, nodes, {"node-short": httpx.MockTransport(fake.handle)}):
        client._transport.raise_app_exceptions = False  # type: ignore[attr-defined]  # the bytes sent before it
        answer = await client.get("/api/v1/export", params={**P1, "limit": 4_100, "format": format})
    assert answer.status_code == 200
    if format == "xlsx":
        import openpyxl

        rows = list(openpyxl.load_workbook(io.BytesIO(answer.content)).active.iter_rows(values_only=True))
        assert len(rows) == 1 + 17 + 1 and str(rows[-1][0]).startswith(f"incomplete: {said}")
        return
    lines = answer.text.splitlines()
    assert len(lines) == (0 if format == "ndjson" else 1) + 17 + 1
    if format == "ndjson":
        last = json.loads(lines[-1])
        assert last["incomplete"] is True and last["error"].startswith(said)
        assert all("position" in json.loads(line) for line in lines[:-1])
    elif format == "tsv":
        assert lines[-1].startswith(f'# incomplete: "{said}')
    else:
        assert next(csv.reader([lines[-1]]))[0] == "# incomplete" and lines[-1].startswith("# incomplete,")


async def test_wrong_answers_from_a_node_are_refused(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    lies = {
        "negative": b'{"partition": "sample_p03", "query": "[word=\\"house\\"]", "total": -1985, "elapsed_ms": 1}',
        "huge": b'{"partition": "sample_p03", "query": "[word=\\"house\\"]", "total": 1000000000000000000000000000000,'
                b' "elapsed_ms": 1}',
        "other query": b'{"partition": "sample_p03", "query": "[word=\\"home\\"]", "total": 1, "elapsed_ms": 1}',
        "other partition": b'{"partition": "sample_p01", "query": "[word=\\"house\\"]", "total": 1, "elapsed_ms": 1}',
    }
    for lie in lies.values():
        fake = Fake(nodes["node-b"], answer=lie, path="/v1/count")
        settings = front_settings(sample_parts, big_parts, tmp_path)
        settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-liar"]
        async for client in front_client(settings, nodes, {"node-liar": httpx.MockTransport(fake.handle)}):
            body = (await client.get("/api/v1/query", params={"corpus": "sample", "q": "house"})).json()
            assert body["complete"] is False and body["failed"] == [sample_parts.ids[2]] and body["total"] == 2
            assert "answer refused" in body["partitions"][2]["error"] or "not a valid" in body["partitions"][2]["error"]


def _times(field: str, factor: int) -> Callable[[JsonObject], JsonObject]:
    def change(answer: JsonObject) -> JsonObject:
        value = answer[field]
        return {**answer, field: [v * factor for v in value] if isinstance(value, list) else value * factor}
    return change


def _repeated(answer: JsonObject) -> JsonObject:
    return {**answer, "row_tokens": answer["row_tokens"] * 2, "row_counts": answer["row_counts"] * 2}


LIES = [  # (route, its parameters, the node's route, how the node lies)
    ("/api/v1/wordlist", {"attribute": "word"}, "/v1/ngrams", _times("row_counts", 1000)),
    ("/api/v1/wordlist", {"attribute": "word"}, "/v1/ngrams", _repeated),
    ("/api/v1/wordlist", {"attribute": "word", "n": "2"}, "/v1/ngrams", _times("ngrams", 1000)),
    ("/api/v1/keywords", {"attribute": "word", "filter": "text_genre~news", "reference_filter": "text_genre!~news"},
     "/v1/ngrams", _times("row_counts", 1000)),
    ("/api/v1/subcorpus", {"values": "text_year"}, "/v1/subcorpus", _times("value_tokens", 1000)),
    ("/api/v1/subcorpus", {"values": "text_year"}, "/v1/subcorpus", _times("all_texts", 1_000_000)),
    ("/api/v1/dispersion", {"q": "house"}, "/v1/dispersion", _times("dp_sum", 1000)),
    ("/api/v1/dispersion", {"q": "house"}, "/v1/dispersion", _times("parts", 1_000_000)),
    ("/api/v1/frequency", {"q": "house", "by": "word"}, "/v1/frequency", _times("counts", 1000)),
]


@pytest.mark.parametrize(("route", "params", "path", "lie"), LIES)
@pytest.mark.slow  # 2.3 s here (make quick leaves it out)
async def test_a_node_that_lies_on_any_route_is_refused(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path,
    route: str, params: dict[str, str], path: str, lie: Callable[[JsonObject], JsonObject]
) -> None:
    """A node that multiplies its counts or repeats its rows, on any route: its partition is a failed
    one (named), never counted into an answer that says it is complete."""
    fake = Fake(nodes["node-b"], path=path, mutate=lie)
    settings = front_settings(sample_parts, big_parts, tmp_path)
    settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-liar"]
    async for client in front_client(settings, nodes, {"node-liar": httpx.MockTransport(fake.handle)}):
        answer = await client.get(route, params={"corpus": "sample", **params})
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert path in fake.calls
        assert body["complete"] is False and body["failed"] == [sample_parts.ids[2]], body


async def test_a_node_that_refuses_our_token_or_is_busy_is_a_node_failure(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    for status, code in ((401, "unauthorized"), (429, "too_many"), (503, "busy")):
        body = {"type": "about:blank", "title": "no", "status": status, "detail": "no", "code": code}
        fake = Fake(nodes["node-b"], status=status, body=body)
        settings = front_settings(sample_parts, big_parts, tmp_path)
        settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-odd", "http://node-b"]
        async for client in front_client(settings, nodes, {"node-odd": httpx.MockTransport(fake.handle)}):
            answer = await client.get("/api/v1/query", params={"corpus": "sample", "q": "house"})
            assert answer.status_code == 200 and answer.json()["complete"] is True, (status, answer.text)


async def test_a_partition_whose_only_node_is_busy_is_asked_again_never_left_out(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    """Busy is not failed: a node whose line is full answers 503 ``busy`` to the first counts; the
    partition, which has no other node, is asked again after a pause (0.25 s, then 0.5 s) and the
    answer is whole, not partial. A partition that stays busy past its time limit is reported failed."""
    clock = FakeClock()
    counts: list[str] = []
    node_b = httpx.ASGITransport(app=nodes["node-b"])
    busy_for = [2]

    async def loaded(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/count":
            counts.append(request.url.path)
            if len(counts) <= busy_for[0]:
                return httpx.Response(503, headers={"Retry-After": "1"}, json={
                    "type": "about:blank", "title": "Busy", "status": 503, "code": "busy",
                    "detail": "the node is running and queueing as many queries as it may (64 waiting)"})
        return await node_b.handle_async_request(request)

    settings = front_settings(sample_parts, big_parts, tmp_path, node_timeout=2.0)
    settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-loaded"]
    async for client in front_client(settings, nodes, {"node-loaded": httpx.MockTransport(loaded)}, clock):
        answer = await clock.drive(client.get("/api/v1/query", params={"corpus": "sample", "q": "house"}))
        assert answer.status_code == 200 and answer.json()["complete"] is True, answer.text
        assert len(counts) == 3 and clock.now() == pytest.approx(0.25 + 0.5)
        counts.clear()
        busy_for[0] = 1_000  # busy for good: given up when the partition's 2 s are over
        answer = await clock.drive(client.get("/api/v1/query", params={"corpus": "sample", "q": "the"}))
        body = answer.json()
        assert answer.status_code == 200 and body["failed"] == [sample_parts.ids[2]], body
        assert "queueing as many queries" in body["partitions"][2]["error"] and len(counts) == 4  # 0.25+0.5+1


async def test_node_answers_have_a_size_limit(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    fake = Fake(nodes["node-b"], answer=b'{"x": "' + b"a" * 3_000_000 + b'"}', path="/v1/count")
    settings = front_settings(sample_parts, big_parts, tmp_path, max_node_response_bytes=1024 * 1024)
    settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-huge"]
    async for client in front_client(settings, nodes, {"node-huge": httpx.MockTransport(fake.handle)}):
        body = (await client.get("/api/v1/query", params={"corpus": "sample", "q": "house"})).json()
        error = body["partitions"][2]["error"]
        assert error.startswith(f"{sample_parts.ids[2]}: answered ") and error.endswith("more than 1048576")


async def test_a_dead_node_is_skipped_until_it_answers_again(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    state = {"dead": True}
    calls: list[str] = []
    clock = FakeClock()  # the node timeout, the health check's limit, the cooldown: passed when the test says

    async def hangs(request: httpx.Request) -> httpx.Response:
        calls.append(request.url.path)
        if state["dead"]:
            await clock.hang()
        transport = httpx.ASGITransport(app=nodes["node-b"])
        return await transport.handle_async_request(request)

    settings = front_settings(sample_parts, big_parts, tmp_path, node_timeout=3.0, health_probe_timeout=0.2)
    settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-hangs", "http://node-b"]
    async for client in front_client(settings, nodes, {"node-hangs": httpx.MockTransport(hangs)}, clock):
        health = client._transport.app.state.frontend.nodes.health  # type: ignore[attr-defined]
        first = asyncio.ensure_future(client.get("/api/v1/query", params={"corpus": "sample", "q": "house"}))
        await clock.when_pending(1, lambda: len(calls) == 1)  # the other partitions answered; one call waits
        assert not first.done() and calls[0].startswith("/v1/")  # it waits for the dead node ...
        clock.advance(0.5)  # ... for [nodes] hedge_after (not [nodes] timeout); then: does it answer at all?
        await clock.advance_when(1, 0.2, lambda: calls[1:] == ["/health"])  # it does not answer that either
        assert (await first).json()["complete"]  # the replica answered
        assert health.is_down("http://node-hangs") and clock.now() == pytest.approx(0.7)
        asked, probes = len(calls), health.probes
        for q in ("sun", "old", "house"):  # skipped at once: no wait, no probe of its own
            assert (await client.get("/api/v1/query", params={"corpus": "sample", "q": q})).json()["complete"]
        assert len(calls) == asked and health.probes == probes and clock.now() == pytest.approx(0.7)
        state["dead"] = False
        clock.advance(0.9)  # within its cooldown (1 s): still skipped
        assert (await client.get("/api/v1/query", params={"corpus": "sample", "q": "sun"})).json()["complete"]
        assert len(calls) == asked
        clock.advance(0.2)  # after its cooldown, its prober's health check finds it again

        def back(breaker: NodeHealth = health) -> bool:
            return not breaker.is_down("http://node-hangs")

        await until(back, what="the node back")
        assert calls[asked:] == ["/health"] and health.probes == probes + 1
        assert (await client.get("/api/v1/query", params={"corpus": "sample", "q": "old"})).json()["complete"]
        assert calls[asked + 1].startswith("/v1/")  # in use again


@pytest.mark.slow  # 1.0 s here (make quick leaves it out)
async def test_query_errors_from_nodes_are_the_clients_and_never_retried(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    problem = {"type": "about:blank", "title": "bad", "status": 400, "detail": "bad query", "code": "query_syntax",
               "offset": 3}
    fake = Fake(nodes["node-b"], status=400, body=problem)
    settings = front_settings(sample_parts, big_parts, tmp_path)
    settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-picky", "http://node-b"]
    async for client in front_client(settings, nodes, {"node-picky": httpx.MockTransport(fake.handle)}):
        answer = await client.get("/api/v1/query", params={"corpus": "sample", "q": "house"})
        assert assert_problem(answer, 400, "query_syntax")["offset"] == 3


async def test_the_node_token_is_sent_and_checked(nodes: dict[str, FastAPI]) -> None:
    async with nodes["node-a"].router.lifespan_context(nodes["node-a"]):
        transport = httpx.ASGITransport(app=nodes["node-a"])
        async with httpx.AsyncClient(transport=transport, base_url="http://node") as node:
            good = await node.get("/v1/partitions", headers={"Authorization": f"Bearer {NODE_TOKEN}"})
            assert good.status_code == 200


async def test_after_a_timeout_the_replica_is_asked_unless_the_node_is_at_work_on_the_query(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    """A node that timed out but answers its health check: if it is at work on the call (the query is
    slow), the replica is spared it and the partition is named as failed; if it is not (the request
    was held up on the way — a link down, a process stopped, now back), the replica answers."""
    node_b = nodes["node-b"]
    asked: list[str] = []
    clock = FakeClock()
    working: dict[str, float] = {}  # calls the busy node took, with when (on the fake clock)

    async def held_up(request: httpx.Request) -> httpx.Response:
        if request.url.path.startswith("/v1/"):
            await clock.hang()  # never reaches the node in time
        return await httpx.ASGITransport(app=node_b).handle_async_request(request)

    async def at_work(request: httpx.Request) -> httpx.Response:
        call = request.headers.get("x-cowbird-call", "") or request.url.params.get("call", "")
        if request.url.path.startswith("/v1/"):
            assert len(call) == 16, request.headers
            working[call] = clock.now()  # the node took the call and works on it
            await clock.hang()
        health = await httpx.ASGITransport(app=node_b).handle_async_request(request)
        await health.aread()
        if call not in working:
            return health
        # its health check says how long it has worked on the call: in the test's time, as the node would
        return httpx.Response(200, json={**json.loads(health.content), "call_seconds": clock.now() - working[call]})

    async def replica(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        return await httpx.ASGITransport(app=node_b).handle_async_request(request)

    routes = {"node-held": httpx.MockTransport(held_up), "node-busy": httpx.MockTransport(at_work),
              "node-replica": httpx.MockTransport(replica)}
    for first, complete in (("node-held", True), ("node-busy", False)):
        asked.clear()
        settings = front_settings(sample_parts, big_parts, tmp_path, node_timeout=2.0, health_probe_timeout=1.0)
        settings.corpora[0].nodes[sample_parts.ids[2]] = [f"http://{first}", "http://node-replica"]
        async for client in front_client(settings, nodes, routes, clock):
            body = (await clock.drive(client.get("/api/v1/query", params={"corpus": "sample", "q": "house"}))).json()
        assert body["complete"] is complete, (first, asked, body)
        if complete:
            assert "/v1/count" in asked and body["total"] == 3
        else:
            assert asked == [] and body["failed"] == [sample_parts.ids[2]], asked
            assert "timed out after 2 s" in body["partitions"][2]["error"]


async def test_background_work_leaves_a_silent_node_for_its_replica_before_its_longer_wait_ends(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    """Background work (here a frequency list) gives a node longer than ``[nodes] timeout`` (×5), but
    only while the node answers its health check: a node cut off (nothing answers, not even
    /health) is left after one unanswered check at ``[nodes] hedge_after``, and its replica answers
    in time; the partition without a replica waits as long as it needs."""
    asked: list[str] = []
    clock = FakeClock()
    node_b = httpx.ASGITransport(app=nodes["node-b"])

    async def cut_off(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/estimate":  # cut off once the request is classed (background: see below)
            return await node_b.handle_async_request(request)
        asked.append(request.url.path)
        await clock.hang()

    settings = front_settings(sample_parts, big_parts, tmp_path, node_timeout=2.0, health_probe_timeout=0.3)
    settings.limits.interactive_seconds = 1e-9  # every frequency list is background work
    settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-cut", "http://node-b"]
    async for client in front_client(settings, nodes, {"node-cut": httpx.MockTransport(cut_off)}, clock):
        answer = await clock.drive(client.get("/api/v1/frequency", params={"corpus": "sample", "q": "the",
                                                                            "by": "word"}))
        body = answer.json()
        assert answer.status_code == 200 and body["complete"] is True and body["failed"] == [], body
        # [nodes] hedge_after (0.5 s), no answer to a health check (0.3 s): left, as for interactive work
        assert asked[:2] == ["/v1/frequency", "/health"], asked
        assert clock.now() == pytest.approx(0.5 + 0.3)  # neither [nodes] timeout nor the longer wait was sat out


async def test_a_node_whose_socket_vanishes_under_the_http_client_is_unreachable(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    """A node killed while the connection is made can surface in httpcore/anyio as an
    AttributeError (the socket gone: ``'NoneType' object has no attribute 'getpeername'``) instead of
    a transport error: the partition goes to its replica, and without one it is named as failed —
    never a 500 of the front end."""

    def vanished(request: httpx.Request) -> httpx.Response:
        raise AttributeError("'NoneType' object has no attribute 'getpeername'")

    settings = front_settings(sample_parts, big_parts, tmp_path)
    settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-vanished", "http://node-b"]
    async for client in front_client(settings, nodes, {"node-vanished": httpx.MockTransport(vanished)}):
        body = (await client.get("/api/v1/query", params={"corpus": "sample", "q": "house"})).json()
        assert body["complete"] is True and [h["position"] for h in body["hits"]] == [2, 19, 81]
    settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-vanished"]
    async for client in front_client(settings, nodes, {"node-vanished": httpx.MockTransport(vanished)}):
        answer = await client.get("/api/v1/query", params={"corpus": "sample", "q": "house"})
        body = answer.json()
        assert answer.status_code == 200 and body["complete"] is False and body["failed"] == [sample_parts.ids[2]]
        failed = next(p for p in body["partitions"] if p["id"] == sample_parts.ids[2])
        assert "unreachable (ConnectError)" in failed["error"]


async def test_a_download_missing_a_failed_partition_is_named_incomplete(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    """A partition that failed: the file's name says ``_incomplete`` (not a cut at the row limit,
    which is ``_first<rows>``), and its metadata names the partition."""
    fake = Fake(nodes["node-b"], answer=b"<html>garbage</html>", path="/v1/count")
    settings = front_settings(sample_parts, big_parts, tmp_path)
    settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-liar"]
    async for client in front_client(settings, nodes, {"node-liar": httpx.MockTransport(fake.handle)}):
        answer = await client.get("/api/v1/export", params={"corpus": "sample", "q": "house", "provenance": 1})
        assert answer.status_code == 200, answer.text
        assert answer.headers["content-disposition"].endswith('_2of2_incomplete.tsv"'), answer.headers
        assert f'# failed_partitions: ["{sample_parts.ids[2]}"]' in answer.text.splitlines()
        cut = await client.get("/api/v1/export", params={"corpus": "sample", "q": "house", "limit": 1})
        assert cut.headers["content-disposition"].endswith('_first1of2_incomplete.tsv"'), cut.headers
