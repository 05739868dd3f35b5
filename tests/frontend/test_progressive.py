"""A streamed preview (``/api/v1/query?stream=1``): the page as soon as it is known, each partition's
count as it comes, then the very answer the plain preview gives."""

from __future__ import annotations

import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.frontend.conftest import Partitioned, front_client, front_settings

pytestmark = pytest.mark.anyio
Params = dict[str, str | int]


class LargePartitions:
    """A real node whose partitions answer ``/v1/first`` as large ones would: their first hits with the
    rest not counted yet (``exact: false``); ``first_answered`` is set once one has."""

    def __init__(self, app: FastAPI) -> None:
        self.node = httpx.ASGITransport(app=app)
        self.first_answered = asyncio.Event()

    async def handle(self, request: httpx.Request) -> httpx.Response:
        response = await self.node.handle_async_request(request)
        if request.url.path != "/v1/first":
            return response
        self.first_answered.set()
        answer = json.loads(await response.aread())
        return httpx.Response(200, json={**answer, "total": len(answer["data"]), "exact": False})


def events(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200 and response.headers["content-type"] == "application/x-ndjson"
    return [json.loads(line) for line in response.text.splitlines()]


def plain(result: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in result.items() if k not in ("event", "elapsed_ms")}


async def test_the_stream_ends_with_the_plain_answer(client: httpx.AsyncClient) -> None:
    cases: list[Params] = [{"corpus": "sample", "q": "[]", "syntax": "cqp", "limit": 5},
                   {"corpus": "sample", "q": "the", "offset": 2, "limit": 3, "context": 2, "show": "pos"},
                   {"corpus": "big", "q": '[pos="NN"]', "syntax": "cqp", "offset": 37, "limit": 20},
                   {"corpus": "sample", "q": "nothingatall"},
                   {"corpus": "sample", "q": "[]", "syntax": "cqp", "sort": "match.word", "limit": 4},
                   {"corpus": "sample", "q": "[]", "syntax": "cqp", "sample": 4, "seed": 3}]
    for params in cases:
        whole = (await client.get("/api/v1/query", params=params)).json()
        found = events(await client.get("/api/v1/query", params={**params, "stream": 1}))
        kinds = [e["event"] for e in found]
        assert kinds[0] == "started" and kinds[-1] == "result", (params, kinds)
        assert plain(found[-1]) == plain(whole), params
        ordered = "sort" not in params and "sample" not in params
        assert found[0]["early"] is ordered and found[0]["cqp"] == whole["cqp"]
        if ordered:  # every partition's count, and the page before the result (the same page)
            counts = [e for e in found if e["event"] == "count"]
            assert sorted(e["partition"]["id"] for e in counts) == sorted(p["id"] for p in whole["partitions"])
            assert counts[-1]["total_at_least"] == whole["total"] and counts[-1]["counted"] == len(counts)
            pages = [e for e in found if e["event"] == "page"]
            assert pages and pages[0]["hits"] == whole["hits"], params
        else:
            assert kinds == ["started", "result"]


async def test_the_first_page_comes_before_the_last_partition_has_counted(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    """The last partition counts slowly; the first holds the page: the page, and the counts of the
    partitions that have counted, come before its count."""
    large = LargePartitions(nodes["node-a"])
    node_b = httpx.ASGITransport(app=nodes["node-b"])
    page_sent, count_sent = asyncio.Event(), asyncio.Event()
    last = sample_parts.ids[2]

    async def slow(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v1/count":
            await large.first_answered.wait()
            # counts until the front end has sent the page, and the last partition until another's count
            # has been sent too (if they never come, the order below says so)
            held = [page_sent] + ([count_sent] if json.loads(request.content)["partition"] == last else [])
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*(event.wait() for event in held)), 30)
        return await node_b.handle_async_request(request)

    settings = front_settings(sample_parts, big_parts, tmp_path)
    for pid, urls in settings.corpora[0].nodes.items():
        settings.corpora[0].nodes[pid] = ["http://node-watched" if urls == ["http://node-a"] else "http://node-slow"]
    routes = {"node-watched": httpx.MockTransport(large.handle), "node-slow": httpx.MockTransport(slow)}
    async for client in front_client(settings, nodes, routes):
        front = client._transport.app  # type: ignore[attr-defined]

        async def watched(scope: Any, receive: Any, send: Any, front: Any = front) -> None:  # seen answering
            async def sending(message: Any) -> None:
                if message["type"] == "http.response.body" and b'"event":"page"' in message.get("body", b""):
                    page_sent.set()
                if message["type"] == "http.response.body" and b'"event":"count"' in message.get("body", b""):
                    count_sent.set()
                await send(message)

            await front(scope, receive, sending)

        client._transport.app = watched  # type: ignore[attr-defined]
        params: Params = {"corpus": "sample", "q": "[]", "syntax": "cqp", "limit": 5, "stream": 1}
        found = events(await client.get("/api/v1/query", params=params))
    kinds = [(e["event"], e.get("partition", {}).get("id")) for e in found]
    assert kinds.index(("page", None)) < kinds.index(("count", last)), kinds
    page = next(e for e in found if e["event"] == "page")
    assert [h["position"] for h in page["hits"]] == [0, 1, 2, 3, 4]
    slow_count = next(e for e in found if e["event"] == "count" and e["partition"]["id"] == last)
    before = [e for e in found[: found.index(slow_count)] if e["event"] == "count"]
    assert before and before[-1]["total_at_least"] < found[-1]["total"] and before[-1]["counted"] < 3
    assert found[-1]["hits"] == page["hits"] and found[-1]["complete"] is True


async def test_a_page_planned_on_a_partition_that_fails_is_sent_again(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    """The first partition gives its first hits, then fails to count: hits are numbered over the
    partitions that answered, so the result brings the page again, from the others — the same page
    the plain preview gives."""
    large = LargePartitions(nodes["node-a"])

    async def counts_badly(request: httpx.Request) -> httpx.Response:
        # /v1/hits too: the plain preview asks the first partition for its count and page at once
        if request.url.path in ("/v1/count", "/v1/hits"):
            await large.first_answered.wait()
            return httpx.Response(500, json={"title": "broken", "status": 500, "detail": "disk", "code": "internal"})
        return await large.handle(request)

    settings = front_settings(sample_parts, big_parts, tmp_path)
    settings.corpora[0].nodes[sample_parts.ids[0]] = ["http://node-broken"]
    async for client in front_client(settings, nodes, {"node-broken": httpx.MockTransport(counts_badly)}):
        params: Params = {"corpus": "sample", "q": "[]", "syntax": "cqp", "limit": 5}
        found = events(await client.get("/api/v1/query", params={**params, "stream": 1}))
        whole = (await client.get("/api/v1/query", params=params)).json()  # the plain preview: no /v1/first
    pages = [e for e in found if e["event"] == "page"]
    assert [h["position"] for h in pages[0]["hits"]] == [0, 1, 2, 3, 4]  # from the first partition's first hits
    result = found[-1]
    assert result["failed"] == [sample_parts.ids[0]] and plain(result) == plain(whole)
    assert result["hits"][0]["partition"] == sample_parts.ids[1]


async def test_errors_before_the_stream_are_problems_and_after_it_events(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    def broken(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"title": "broken", "status": 500, "detail": "disk", "code": "internal"})

    settings = front_settings(sample_parts, big_parts, tmp_path)
    for pid in sample_parts.ids:
        settings.corpora[0].nodes[pid] = ["http://node-broken"]
    async for client in front_client(settings, nodes, {"node-broken": httpx.MockTransport(broken)}):
        bad = await client.get("/api/v1/query", params={"corpus": "sample", "q": "[pos=", "syntax": "cqp",
                                                       "stream": 1})
        assert bad.status_code == 400 and bad.headers["content-type"] == "application/problem+json"
        found = events(await client.get("/api/v1/query", params={"corpus": "sample", "q": "the", "stream": 1}))
    assert [e["event"] for e in found] == ["started", "count", "count", "count", "error"]
    assert all(e["partition"]["status"] == "failed" for e in found[1:4])
    assert found[-1]["status"] == 503 and found[-1]["code"] == "nodes_unavailable"


async def test_an_estimate_before_running(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    """``/api/v1/estimate``: hits and time from each partition's plan, without running the query; on
    this small corpus every partition counts outright, so the estimate is exact. A query estimated
    above ``confirm_seconds`` says so (the search page then asks first)."""
    settings = front_settings(sample_parts, big_parts, tmp_path)
    async for client in front_client(settings, nodes):
        found = (await client.get("/api/v1/estimate", params={"corpus": "sample", "q": "the"})).json()
        whole = (await client.get("/api/v1/query", params={"corpus": "sample", "q": "the"})).json()
        assert (found["hits"], found["exact"], found["time_class"], found["confirm"]) == (whole["total"], True,
                                                                                          "fast", False)
        assert found["cqp"] == whole["cqp"] and found["failed"] == [] and found["seconds"] >= 0
        mu = await client.get("/api/v1/estimate", params={"corpus": "sample", "syntax": "cqp",
                                                          "q": 'MU(meet [pos="DT"] [pos="NN"] s)'})
        assert mu.json()["hits"] is None and mu.json()["time_class"] is None and mu.json()["confirm"] is False
        # a cut query: every partition estimates its own cut, the corpus keeps the first 2 of them all
        cut = (await client.get("/api/v1/estimate", params={"corpus": "sample", "syntax": "cqp",
                                                            "q": '[pos="DT"] cut 2'})).json()
        assert (cut["hits"], cut["time_class"]) == (2, "fast")
        wrong = await client.get("/api/v1/estimate", params={"corpus": "sample", "q": "the", "limit": 3})
        assert wrong.status_code == 400 and "unknown parameter limit" in wrong.json()["detail"]
    settings = front_settings(sample_parts, big_parts, tmp_path, confirm_seconds=1e-9)
    async for client in front_client(settings, nodes):
        careful = (await client.get("/api/v1/estimate", params={"corpus": "sample", "q": "[]", "syntax": "cqp"}))
        assert careful.json()["confirm"] is True


async def test_analyses_stream_each_partition_as_it_answers(client: httpx.AsyncClient) -> None:
    """``stream=1`` on an analysis: started, one partition event per partition as it answers, then the
    very answer the plain analysis gives; a bad parameter is still a problem answer. A query that may
    be slow is estimated first: the estimate's answers are not the analysis's progress."""
    cases: list[tuple[str, Params]] = [
        ("/api/v1/frequency", {"corpus": "sample", "q": "the", "by": "pos"}),
        ("/api/v1/frequency", {"corpus": "big", "q": '[pos="DT"] []{0,20} [pos="NN"]', "syntax": "cqp",
                               "by": "pos"}),
        ("/api/v1/distribution", {"corpus": "big", "q": '[pos="NN"]', "syntax": "cqp", "by": "text_genre"}),
        ("/api/v1/collocations", {"corpus": "sample", "q": "house", "window": 3}),
    ]
    for path, params in cases:
        whole = (await client.get(path, params=params)).json()
        found = events(await client.get(path, params={**params, "stream": 1}))
        assert found[0] == {"event": "started", "partitions": 3}, path
        progress = [e for e in found if e["event"] == "partition"]
        assert [e["done"] for e in progress] == [1, 2, 3] and found[-1]["event"] == "result", (path, found)
        assert plain(found[-1]) == plain(whole), path
    unknown = await client.get("/api/v1/frequency", params={"corpus": "sample", "q": "the", "by": "nosuch",
                                                           "stream": 1})
    assert unknown.status_code == 400 and unknown.json()["code"] == "unknown_attribute"
    as_file = await client.get("/api/v1/frequency", params={"corpus": "sample", "q": "the", "format": "tsv",
                                                           "stream": 1})
    assert as_file.status_code == 400 and "stream=1 answers JSON events" in as_file.json()["detail"]
