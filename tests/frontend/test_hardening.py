"""Bounded under abuse, honest under faults: a refusal that is the query's fault is passed on and
not retried on a replica; answers that do not add up are refused and the replica asked; a sorted
page whose sort fails everywhere is 503, and a deep one is found without the keys before it; bad input is
400, never 500; every answer carries the security headers; links never take a client's port; node
addresses never reach the client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from cowbird.core.search import SORT_KEYS_BATCH
from cowbird.engines import QueryEngine
from cowbird.node import NodeSettings
from cowbird.node import create_app as create_node
from tests.frontend.conftest import NODE_TOKEN, Partitioned, engine, front_client, front_settings
from tests.support import assert_problem

pytestmark = pytest.mark.anyio
P1 = {"corpus": "big", "q": '[pos="P1"]', "syntax": "cqp"}


class Node:
    """A node that forwards to a real node app, counts the calls, and may rewrite JSON answers."""

    def __init__(self, app: FastAPI, rewrite: dict[str, Any] | None = None, status: dict[str, int] | None = None):
        self.app = app
        self.rewrite = rewrite or {}
        self.status = status or {}
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(await request.aread() or b"{}")
        self.calls.append((request.url.path, body))
        if request.url.path in self.status:
            problem = {"type": "about:blank", "title": "x", "status": self.status[request.url.path],
                       "detail": "the node says the request is bad", "code": "bad_parameter"}
            return httpx.Response(self.status[request.url.path], json=problem,
                                  headers={"content-type": "application/problem+json"})
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=self.app), base_url="http://node") as inner:
            real = await inner.request(request.method, request.url.path, params=request.url.params,
                                       content=json.dumps(body).encode() if body else None,
                                       headers=dict(request.headers))
        if request.url.path in self.rewrite and real.status_code == 200:
            return httpx.Response(200, json=self.rewrite[request.url.path](real.json()))
        return httpx.Response(real.status_code, content=real.content, headers=real.headers)

    def count(self, path: str) -> int:
        return sum(p == path for p, _ in self.calls)


def node_app(big: Partitioned, **settings: Any) -> FastAPI:
    engines: dict[str, QueryEngine] = {pid: engine(big.registry, pid) for pid in big.ids}
    return create_node(NodeSettings(registry=big.registry, token=NODE_TOKEN, max_concurrent_queries=16,
                                    **settings), engines=engines)


async def replicated(sample: Partitioned, big: Partitioned, tmp_path: Path, first: Node, second: Node) -> Any:
    """A front end whose big corpus is served by ``first`` then ``second`` for every partition."""
    settings = front_settings(sample, big, tmp_path)
    for pid in big.ids:
        settings.corpora[1].nodes[pid] = ["http://first", "http://second"]
    nodes = {"node-a": first.app, "node-b": second.app}
    extra = {"first": httpx.MockTransport(first.handle), "second": httpx.MockTransport(second.handle)}
    return front_client(settings, nodes, extra)


async def test_a_refusal_that_is_the_query_s_fault_is_not_retried_on_the_replica(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    """A frequency over match[-1000]..match[1000] is refused by the node before it runs, and the
    replica is spared it (it used to build the 336-MB answer twice)."""
    first = Node(node_app(big_parts, max_analysis_bytes=1024 * 1024))
    second = Node(node_app(big_parts, max_analysis_bytes=1024 * 1024))
    async for client in await replicated(sample_parts, big_parts, tmp_path, first, second):
        answer = await client.get("/api/v1/frequency", params={**P1, "by": "word", "on": "match[-1000]..match[1000]"})
        assert_problem(answer, 400, "limit_exceeded")
        assert second.count("/v1/frequency") == 0
        assert first.count("/v1/frequency") == len(big_parts.ids)  # each partition asked once, in parallel


async def test_a_node_that_says_the_front_end_sent_a_bad_request_is_a_node_failure(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    """``bad_parameter`` from a node is not the user's fault: the replica answers, nothing of the
    node's words reaches the user."""
    first = Node(node_app(big_parts), status={"/v1/count": 400, "/v1/hits": 400})
    second = Node(node_app(big_parts))
    async for client in await replicated(sample_parts, big_parts, tmp_path, first, second):
        answer = await client.get("/api/v1/query", params=P1)
        assert answer.status_code == 200 and answer.json()["total"] == 12_000 and answer.json()["complete"]
        # the first partition counts and sends its page in one /v1/hits, the others count
        assert "the node says" not in answer.text and second.count("/v1/count") == 2
        assert second.count("/v1/hits") >= 1


def _inflate(body: dict[str, Any]) -> dict[str, Any]:
    body["counts"] = [c * 25 for c in body["counts"]]
    return body


def _duplicate(body: dict[str, Any]) -> dict[str, Any]:
    body["data"] = body["data"][:1] + body["data"][:-1]
    return body


def _negative(body: dict[str, Any]) -> dict[str, Any]:
    body["hits"] = [-h for h in body["hits"]]
    return body


def _scramble(body: dict[str, Any]) -> dict[str, Any]:
    body["keys"] = body["keys"][::-1]
    return body


def _over(body: dict[str, Any]) -> dict[str, Any]:
    body["f"] = [f * 1000 for f in body["f"]]
    return body


@pytest.mark.parametrize(("path", "rewrite", "route", "params"), [
    ("/v1/frequency", _inflate, "/api/v1/frequency", {"by": "word"}),
    ("/v1/hits", _duplicate, "/api/v1/query", {}),
    ("/v1/distribution", _negative, "/api/v1/distribution", {"by": "text_genre"}),
    ("/v1/sortkeys", _scramble, "/api/v1/query", {"sort": "match.word", "offset": 200}),
    ("/v1/cooccurrence", _over, "/api/v1/collocations", {"attribute": "word"}),
])
@pytest.mark.slow  # 3.5 s here (make quick leaves it out)
async def test_answers_that_do_not_add_up_are_refused_and_the_replica_answers(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path, path: str, rewrite: Any, route: str,
    params: dict[str, str],
) -> None:
    """A corrupting node once gave "the" 1,884,000 of 73,438 hits with complete: true."""
    honest = front_settings(sample_parts, big_parts, tmp_path)
    plain = {"node-a": node_app(big_parts), "node-b": node_app(big_parts)}
    async for client in front_client(honest, plain):
        expected = (await client.get(route, params={**P1, **params})).json()
    first, second = Node(node_app(big_parts), rewrite={path: rewrite}), Node(node_app(big_parts))
    async for client in await replicated(sample_parts, big_parts, tmp_path, first, second):
        answer = (await client.get(route, params={**P1, **params})).json()
        assert answer.get("complete") is True and second.count(path) >= 1, answer
        for key in ("total", "rows", "hits"):
            assert answer.get(key) == expected.get(key), key


async def test_a_sorted_page_whose_sort_fails_everywhere_is_503_not_an_empty_page(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    first = Node(node_app(big_parts), status={"/v1/sortkeys": 500})
    second = Node(node_app(big_parts), status={"/v1/sortkeys": 500})
    async for client in await replicated(sample_parts, big_parts, tmp_path, first, second):
        answer = await client.get("/api/v1/query", params={**P1, "sort": "match.word"})
        assert_problem(answer, 503, "nodes_unavailable")


async def test_a_deep_sorted_page_is_found_without_the_keys_before_it(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    """The page at offset 11,900 of 12,000 sorted hits: each node is asked twice (samples, then the keys
    between two pivots), a few hundred keys, never the 11,900 keys before the page; the page equals
    the export's rows there."""
    sent: list[int] = []

    def counted(answer: dict[str, Any]) -> dict[str, Any]:
        sent.append(len(answer["keys"]))
        return answer

    first = Node(node_app(big_parts), rewrite={"/v1/sortkeys": counted})
    second = Node(node_app(big_parts), rewrite={"/v1/sortkeys": counted})
    async for client in await replicated(sample_parts, big_parts, tmp_path, first, second):
        page = (await client.get("/api/v1/query", params={**P1, "sort": "left1.word", "offset": 11_900})).json()
        asked_by_page = len(sent)
        export = await client.get("/api/v1/export", params={**P1, "sort": "left1.word", "offset": 11_900,
                                                             "limit": 100})
    asked = [body for path, body in first.calls + second.calls if path == "/v1/sortkeys"]
    partitions = len({body["partition"] for body in asked})
    assert asked_by_page == 2 * partitions  # two rounds, one request a partition each
    assert 0 < sum(sent) < 11_900 / 4 and max(body.get("limit", 0) for body in asked) <= SORT_KEYS_BATCH
    rows = [line.split("\t") for line in export.text.splitlines()[1:]]
    assert [h["position"] for h in page["hits"]] == [int(r[1]) for r in rows]


@pytest.mark.parametrize(("params", "code"), [
    ({"context": "²"}, "bad_parameter"),
    ({"context": "٣"}, "bad_parameter"),
    ({"filter": [f"text_genre~a{k}" for k in range(1000)]}, "bad_parameter"),
    ({"q": " ".join(f'[word="w{k}"]' for k in range(700)), "syntax": "cqp", "ignore_case": 1}, "bad_parameter"),
    ({"q": '[word="\\p{Zzzz}"]', "syntax": "cqp"}, "query_syntax"),
    ({"q": '[word="\\p{Latn}"]', "syntax": "cqp"}, "query_syntax"),
])
async def test_bad_input_is_a_400_never_a_500(client: httpx.AsyncClient, params: dict[str, Any], code: str) -> None:
    answer = await client.get("/api/v1/query", params={"corpus": "big", "q": "w1", **params})
    assert_problem(answer, 400, code)


async def test_security_headers_on_pages_api_and_docs(client: httpx.AsyncClient) -> None:
    for path in ("/", "/api/v1/corpora", "/docs", "/help/api", "/api/v1/nothing"):
        answer = await client.get(path)
        headers = answer.headers
        assert headers["x-content-type-options"] == "nosniff" and headers["referrer-policy"] == "same-origin"
        policy = headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
        assert ("'unsafe-inline'" in policy) == (path == "/docs"), path


async def test_links_never_take_the_port_a_client_put_in_its_host_header(client: httpx.AsyncClient) -> None:
    export = await client.get("/api/v1/export", params={"corpus": "sample", "q": "house"},
                              headers={"host": "front:6666"})
    assert export.status_code == 200 and "6666" not in export.text
    assert "http://front/ref/sample/" in export.text


async def test_a_static_link_whose_node_fails_names_the_partition_not_the_node(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    settings = front_settings(sample_parts, big_parts, tmp_path)
    down = {"node-a": node_app(big_parts)}  # node-b is missing: its partitions cannot be reached
    async for client in front_client(settings, down):
        answer = await client.get("/api/v1/ref/big/30000")
        body = assert_problem(answer, 503, "nodes_unavailable")
        assert "node-b" not in str(body["detail"]) and "http://" not in str(body["detail"])


async def test_a_partition_whose_marginals_fail_is_left_out_of_every_collocation_count(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    """It is named as failed, and none of its co-occurrences are in the table (they were counted
    although its marginals were missing)."""
    plain = node_app(big_parts)
    def without_one(answer: dict[str, Any]) -> dict[str, Any]:  # a value seen elsewhere, not here (the rows
        # that add up to the windows' positions: truncated, as a node answers when it has more than it lists)
        return {**answer, "truncated": True,
                **{key: answer[key][:-1] for key in ("values", "f", "marginal", "in_nodes", "texts", "edge_texts")
                       if answer.get(key)}}

    failing = Node(node_app(big_parts), rewrite={"/v1/cooccurrence": without_one}, status={"/v1/marginals": 500})
    settings = front_settings(sample_parts, big_parts, tmp_path)
    lost, kept = big_parts.ids[0], big_parts.ids[1:]
    settings.corpora[1].nodes[lost] = ["http://failing"]
    for pid in kept:
        settings.corpora[1].nodes[pid] = ["http://node-a"]
    params = {**P1, "attribute": "word", "left": "1", "right": "1", "min_freq": "1", "limit": "100000"}
    async for client in front_client(settings, {"node-a": plain, "node-b": failing.app},
                                     {"failing": httpx.MockTransport(failing.handle)}):
        answer = (await client.get("/api/v1/collocations", params=params)).json()
    assert answer["complete"] is False and answer["failed"] == [lost], answer
    assert failing.count("/v1/marginals") == 1
    expected: dict[str, int] = {}
    async with plain.router.lifespan_context(plain), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=plain), base_url="http://node",
            headers={"Authorization": f"Bearer {NODE_TOKEN}"}) as node:
        for pid in kept:
            one = (await node.post("/v1/cooccurrence", json={"partition": pid, "query": answer["cqp"],
                                                              "attribute": "word", "left": 1, "right": 1})).json()
            for value, f in zip(one["values"], one["f"], strict=True):
                expected[value] = expected.get(value, 0) + f
    assert {row["value"]: row["f"] for row in answer["rows"]} == expected
