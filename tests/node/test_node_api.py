"""The node API in-process: auth, queries, KWIC lines, export stream, context, every error code."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from cowbird.core.errors import ErrorCode, QueryCancelled
from cowbird.node import PartitionService
from cowbird.node.scheduler import Asker, Scheduler
from tests.clock import FakeClock, until
from tests.node.conftest import client_for, make_app
from tests.support import assert_problem

pytestmark = pytest.mark.anyio
PROBLEM = "application/problem+json"




async def test_health_needs_no_token(sample_registry: Path, big_registry: Path) -> None:
    async for anonymous in client_for(make_app(sample_registry, big_registry), token=None):
        response = await anonymous.get("/health")
        assert response.json() == {"status": "ok", "engine": "native", "partitions": 2, "call_seconds": None}
        assert_problem(await anonymous.get("/v1/partitions"), 401, "unauthorized")
        wrong = await anonymous.get("/v1/partitions", headers={"Authorization": "Bearer nope"})
        body = assert_problem(wrong, 401, "unauthorized")
        assert "partitions" not in body
        assert wrong.headers["www-authenticate"] == "Bearer"


async def test_partitions(client: httpx.AsyncClient) -> None:
    body = (await client.get("/v1/partitions")).json()
    assert body["total"] == 2
    sample = next(p for p in body["data"] if p["id"] == "sample")
    assert sample == {"id": "sample", "size": 93, "p_attributes": ["word", "pos", "lemma"],
                      "s_attributes": ["text", "text_id", "text_genre", "text_year", "text_url", "s", "s_id"],
                      "meta": ["text_id", "text_genre", "text_year", "text_url", "s_id"], "engine": "native"}


async def test_count_runs_the_canonical_query(client: httpx.AsyncClient) -> None:
    body = (await client.post("/v1/count", json={"partition": "sample", "query": ' "house" '})).json()
    assert (body["total"], body["query"]) == (3, '[word="house"]')


async def test_hits_with_context_attributes_and_meta(client: httpx.AsyncClient) -> None:
    request = {"partition": "sample", "query": '[lemma="house"]', "offset": 1, "limit": 2,
               "context": {"tokens": 2}, "show": ["lemma"], "meta": ["text_genre"]}
    body = (await client.post("/v1/hits", json=request)).json()
    assert body["total"] == 5 and body["offset"] == 1
    assert body["data"][0] == {"match": 19, "matchend": 19, "target": None, "keyword_position": None,
                               "left": [["to", "to"], ["the", "the"]], "keyword": [["house", "house"]],
                               "right": [["anyway", "anyway"], ["!", "!"]], "meta": {"text_genre": "news"},
                               "sort_key": None, "breaks": {}}
    assert body["data"][1]["keyword"] == [["houses", "house"]]
    in_sentence = await client.post("/v1/hits", json={"partition": "sample", "query": '"coffee"',
                                                      "context": {"tokens": 50, "region": "s"}})
    assert [t[0] for t in in_sentence.json()["data"][0]["left"]][0] == "The"


@pytest.mark.slow
async def test_export_streams_ndjson_for_more_than_10000_hits(client: httpx.AsyncClient) -> None:
    request = {"partition": "big", "query": '[pos="P1"] []', "limit": 12_000, "context": {"tokens": 1}}
    async with client.stream("POST", "/v1/export", json=request) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/x-ndjson")
        assert response.headers["x-total-hits"] == "12000" and response.headers["x-lines"] == "12000"
        lines = [json.loads(line) async for line in response.aiter_lines() if line]
    assert len(lines) == 12_000
    assert [(x["match"], x["matchend"]) for x in lines[:2]] == [(1, 2), (6, 7)]
    assert lines[-1]["match"] == 59_996


async def test_context_at_corpus_edges(client: httpx.AsyncClient) -> None:
    first = (await client.get("/v1/context/sample/0", params={"tokens": 2})).json()["line"]
    assert first["left"] == [] and first["keyword"] == [["The"]] and len(first["right"]) == 2
    last = (await client.get("/v1/context/sample/92", params={"tokens": 2, "show": "lemma"})).json()["line"]
    assert last["right"] == [] and last["left"] == [["the", "the"], ["note", "note"]]
    assert_problem(await client.get("/v1/context/sample/93"), 404, "out_of_range")


async def test_error_codes(client: httpx.AsyncClient) -> None:
    syntax = assert_problem(await client.post("/v1/count", json={"partition": "sample", "query": '[word="a"'}),
                            400, "query_syntax")
    assert syntax["offset"] == 9
    assert_problem(await client.post("/v1/count", json={"partition": "sample", "query": '[word="a"]; cat Last'}),
                   400, "unsupported")
    assert_problem(await client.post("/v1/count", json={"partition": "nope", "query": '"a"'}), 404,
                   "unknown_partition")
    assert_problem(await client.post("/v1/count", json={"partition": "sample", "query": '[tag="a"]'}), 400,
                   "unknown_attribute")
    assert_problem(await client.post("/v1/hits", json={"partition": "sample", "query": '"a"', "show": ["tag"]}),
                   400, "unknown_attribute")
    assert_problem(await client.post("/v1/hits", json={"partition": "sample", "query": '"a"', "limit": 5000}),
                   400, "limit_exceeded")
    assert_problem(await client.post("/v1/hits", json={"partition": "sample", "query": '"a"',
                                                       "context": {"tokens": 1000}}), 400, "limit_exceeded")
    assert_problem(await client.post("/v1/hits", json={"partition": "sample", "query": '"a"', "offset": -1}),
                   422, "invalid_request")
    assert_problem(await client.post("/v1/count", content=b"x" * 100_000,
                                     headers={"content-type": "application/json"}), 413, "too_large")
    assert_problem(await client.get("/v1/nothing"), 404, "not_found")


async def test_queries_wait_in_line_then_get_busy(sample_registry: Path, big_registry: Path) -> None:
    app = make_app(sample_registry, big_registry, max_concurrent_queries=1, max_queued_queries=1, queue_seconds=0.3)
    async for client in client_for(app):
        scheduler: Scheduler = app.state.node.service.scheduler
        clock = FakeClock()  # queue_seconds passes on it when the test says
        scheduler.clock = clock
        async with scheduler.slots:  # a query is running
            asked = asyncio.ensure_future(client.post("/v1/count", json={"partition": "sample", "query": '"house"'}))
            await clock.when_pending(1, lambda: app.state.node.service.scheduler.waiting == 1)  # in line
            clock.advance(0.2)
            await clock.when_pending(1)
            assert not asked.done()  # still in line before queue_seconds ...
            clock.advance(0.1)
            response = await asked  # ... then busy
            assert_problem(response, 503, "busy")
            assert response.headers["retry-after"] == "2" and "within 0.3 s" in response.json()["detail"]
        async with scheduler.slots:
            waiting = asyncio.ensure_future(client.post("/v1/count", json={"partition": "sample", "query": '"the"'}))
            await until(lambda: app.state.node.service.scheduler.waiting == 1)
            full = await client.post("/v1/count", json={"partition": "sample", "query": '"a"'})
            assert_problem(full, 503, "busy")  # the line is full: no waiting
        assert (await waiting).json()["total"] == 9  # the query in line ran once the place was free


@pytest.mark.slow
async def test_short_queries_are_not_held_up_by_heavy_ones(sample_registry: Path, big_registry: Path) -> None:
    """With one place to run queries, two heavy ones in it (one running, one waiting, both past
    ``heavy_after_seconds``), short queries still get their answers while the heavy ones are at it:
    judged by order of events, not by a stopwatch, so that a loaded machine cannot break it."""
    app = make_app(sample_registry, big_registry, max_concurrent_queries=1, heavy_after_seconds=0.2,
                   max_heavy_queries=1, query_timeout=120, queue_seconds=120)
    # "w7 w7" never occurs: every start walks 500 tokens
    heavy = {"partition": "big", "query": '[word="w.*"]+ [word="w7"] [word="w7"]'}
    async for client in client_for(app):
        running = [asyncio.ensure_future(client.post("/v1/count", json={**heavy, "hard_boundary": 500 + k}))
                   for k in range(2)]
        # until both have become heavy and given their place back
        await until(lambda: app.state.node.service.scheduler.heavy_running() >= 2, timeout=60)
        for query in ('"house"', '"old"', '[pos="DT"]'):
            answer = await client.post("/v1/count", json={"partition": "sample", "query": query})
            assert answer.status_code == 200, query
            assert not any(task.done() for task in running), query  # answered while the heavy ones run
        answers = [(await task).json() for task in running]
        assert [a.get("total") for a in answers] == [0, 0], answers


@pytest.mark.slow  # a wall-clock bound, generous: 15 s for a 0.2-s timeout of a query that runs for minutes
async def test_timeout_really_stops_the_query(sample_registry: Path, big_registry: Path) -> None:
    app = make_app(sample_registry, big_registry, query_timeout=0.2)
    async for client in client_for(app):
        started = time.perf_counter()
        # every start walks 500 tokens (every word matches w.*) looking for a word that does not occur
        never = '[word="w.*"]+ [word="w7"] [word="w7"]'
        response = await client.post("/v1/count", json={"partition": "big", "query": never})
        elapsed = time.perf_counter() - started
        assert_problem(response, 504, "timeout")
        # the worker thread returned: the error only arrives once the engine itself stopped
        assert elapsed < 15
        quick = await client.post("/v1/count", json={"partition": "sample", "query": '"house"'})
        assert quick.json()["total"] == 3


async def test_concurrent_requests_and_the_cache(sample_registry: Path, big_registry: Path) -> None:
    app = make_app(sample_registry, big_registry, max_concurrent_queries=8)
    async for client in client_for(app):
        await _concurrent_requests_and_the_cache(client, app.state.node.service)


async def _concurrent_requests_and_the_cache(client: httpx.AsyncClient, service: PartitionService) -> None:
    queries = ['"house"', '[pos="DT"]', '[pos="JJ"] [pos="NNS?"]', '"the" []{0,1} "house"']
    responses = await asyncio.gather(
        *(client.post("/v1/count", json={"partition": p, "query": q}) for q in queries for p in ("sample", "big"))
    )
    totals = [r.json()["total"] for r in responses]
    assert totals == [3, 0, 12, 0, 4, 0, 2, 0]
    assert len(service.cache) == 8
    again = await client.post("/v1/count", json={"partition": "sample", "query": '"house"'})
    assert again.json()["total"] == 3 and len(service.cache) == 8
    page = {"partition": "big", "query": '[pos="P1"]', "limit": 10}
    first = await client.post("/v1/hits", json={**page, "offset": 0})
    second = await client.post("/v1/hits", json={**page, "offset": 10})
    assert first.json()["data"][0]["match"] == 1 and second.json()["data"][0]["match"] == 51
    assert len(service.cache) == 9


async def test_openapi_documents_every_route(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    assert set(paths) >= {"/health", "/v1/partitions", "/v1/count", "/v1/hits", "/v1/export",
                          "/v1/context/{partition}/{cpos}"}


async def test_openapi_lists_every_error_code(client: httpx.AsyncClient) -> None:
    schemas = (await client.get("/openapi.json")).json()["components"]["schemas"]
    assert schemas["ErrorCode"]["enum"] == [code.value for code in ErrorCode]
    assert schemas["Problem"]["properties"]["code"]["$ref"] == "#/components/schemas/ErrorCode"


@pytest.mark.slow  # a wall-clock bound, generous: 15 s for a client gone after 0.2 s
async def test_a_client_that_goes_away_stops_the_query(sample_registry: Path, big_registry: Path) -> None:
    app = make_app(sample_registry, big_registry, query_timeout=30)
    async for _client in client_for(app):
        service: PartitionService = app.state.node.service
        started = time.perf_counter()

        async def gone(since: float = started) -> bool:
            return time.perf_counter() - since > 0.2

        with pytest.raises(QueryCancelled) as error:
            await service.run("big", '[] []* [word="w7"] [word="w7"]', "standard", 500, Asker(disconnected=gone))
        assert error.value.code == "client_gone" and "client went away" in error.value.detail
        assert time.perf_counter() - started < 15


async def test_an_engine_bug_is_a_logged_500_not_a_bad_request(
    sample_registry: Path, big_registry: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    app = make_app(sample_registry, big_registry)
    async for client in client_for(app):
        engine = app.state.node.service.engines["sample"]

        def broken(*args: object, **kwargs: object) -> None:
            raise KeyError("lemma")  # what a bug looks like; an unknown attribute is UnknownAttribute

        monkeypatch.setattr(engine, "run", broken)
        response = await client.post("/v1/count", json={"partition": "sample", "query": '"house"'})
        body = assert_problem(response, 500, "internal")
        assert "lemma" not in response.text and "Traceback" not in response.text
        assert "KeyError: 'lemma'" in caplog.text
        unknown = await client.post("/v1/hits", json={"partition": "big", "query": '"w1"', "show": ["lemma"]})
        assert_problem(unknown, 400, "unknown_attribute")
        assert body["title"] == "Internal error"


async def test_big_results_are_counted_but_only_the_first_hits_kept(sample_registry: Path, big_registry: Path) -> None:
    app = make_app(sample_registry, big_registry, max_query_hits=1000, query_timeout=2)
    async for client in client_for(app):
        count = await client.post("/v1/count", json={"partition": "big", "query": "[]"})
        assert count.json()["total"] == 60_000
        page = await client.post("/v1/hits", json={"partition": "big", "query": "[]", "offset": 990, "limit": 10})
        assert [line["match"] for line in page.json()["data"]] == list(range(990, 1000))
        beyond = await client.post("/v1/hits", json={"partition": "big", "query": "[]", "offset": 995, "limit": 10})
        detail = assert_problem(beyond, 400, "limit_exceeded")["detail"]
        assert "this query has 60,000 hits; the first 1,000 are kept" in str(detail)
        export = await client.post("/v1/export", json={"partition": "big", "query": "[]", "limit": 2000})
        assert_problem(export, 400, "limit_exceeded")
        # every start stepped through 500 tokens whatever they hold ([]{500} alone is a fixed chain: not stepped):
        # refused on its cost (400), not run into the 2-s timeout (504)
        hopeless = await client.post("/v1/count", json={"partition": "big", "query": "[]{3,} []{500}"})
        assert_problem(hopeless, 400, "limit_exceeded")


async def test_the_front_ends_priority_header_puts_work_in_the_background_line(
        sample_registry: Path, big_registry: Path) -> None:
    """``X-Cowbird-Priority: background`` takes a background place: with those all taken and their
    line full, background work is turned away while interactive work still runs."""
    app = make_app(sample_registry, big_registry)
    async for client in client_for(app):
        scheduler: Scheduler = app.state.node.service.scheduler
        while not scheduler.background_slots.locked():
            await scheduler.background_slots.acquire()
        scheduler.background_waiting = scheduler.queued
        body = {"partition": "sample", "query": '"house"'}
        background = await client.post("/v1/count", json=body, headers={"X-Cowbird-Priority": "background"})
        assert_problem(background, 503, "busy")
        assert "as many background work as it may" in background.json()["detail"]
        for route in ("/v1/count", "/v1/hits"):
            assert (await client.post(route, json=body)).status_code == 200


async def test_an_estimate_asked_again_is_the_one_kept_unless_a_busy_clock_cut_it(
    sample_registry: Path, big_registry: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An estimate reads up to a second of a partition: asked again (a reload, a refused query tried
    again, many users' same query) it is the kept one, at no cost — unless the node's clock cut it short
    (a busy node), which says nothing about the query: that one is estimated anew."""
    from dataclasses import replace

    from cowbird.engines.native import NativeEngine

    estimated = NativeEngine.estimate
    calls: list[str] = []
    busy = [False]

    def counted(self: NativeEngine, *args: Any, **kwargs: Any) -> Any:
        calls.append(self.corpus_id)
        found = estimated(self, *args, **kwargs)
        return replace(found, repeatable=False) if busy[0] else found

    monkeypatch.setattr(NativeEngine, "estimate", counted)
    app = make_app(sample_registry, big_registry)
    async for client in client_for(app):
        request = {"partition": "big", "query": '[pos="P1"] []'}
        first = (await client.post("/v1/estimate", json=request)).json()
        again = (await client.post("/v1/estimate", json=request)).json()
        assert len(calls) == 1 and first["hits"] == again["hits"] == 12_000 and first["exact"]
        busy[0] = True
        other = {"partition": "big", "query": '[pos="P2"] []'}
        for _ in range(2):
            assert (await client.post("/v1/estimate", json=other)).status_code == 200
        assert len(calls) == 3  # cut by the clock: not kept
