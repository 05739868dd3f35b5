"""The public API over partitioned corpora served by in-process nodes."""

from __future__ import annotations

import asyncio
import csv
import io
import re
from pathlib import Path
from typing import cast

import anyio
import httpx
import pytest
from fastapi import FastAPI

from cowbird.core.errors import ClientGone
from cowbird.engines.native import NativeEngine
from cowbird.frontend.caller import Caller
from cowbird.frontend.failover import Failover
from cowbird.frontend.fanout import NodePools
from cowbird.frontend.routes.deps import until_disconnected
from cowbird.frontend.settings import FrontendSettings
from cowbird.serving.config import ConfigError
from tests.clock import FakeClock, never
from tests.frontend.conftest import API_TOKEN, Partitioned, front_client, front_settings
from tests.support import Params, assert_problem

pytestmark = pytest.mark.anyio


def whole(sample_registry: Path) -> NativeEngine:
    return NativeEngine.open(sample_registry, "sample")




async def test_corpora(client: httpx.AsyncClient) -> None:
    body = (await client.get("/api/v1/corpora")).json()
    sample = body["data"][0]
    assert (body["total"], sample["name"], sample["size"], len(sample["partitions"])) == (2, "sample", 93, 3)
    assert sample["meta"] == ["text_id", "text_genre", "text_year", "text_url", "s_id"]
    assert [p["offset"] for p in sample["partitions"]] == [0, 22, 53]


async def test_translate_and_check(client: httpx.AsyncClient) -> None:
    body = (await client.get("/api/v1/translate", params={"q": "ohne 0-2 ^Beanstandung", "ignore_case": 1})).json()
    assert body["cqp"] == '[word="ohne"%c] []{0,2} [lemma="Beanstandung"%c]'
    bad = assert_problem(await client.get("/api/v1/translate", params={"q": "ohne 3"}), 400, "query_syntax")
    assert bad["offset"] == 5
    assert (await client.get("/api/v1/check", params={"cqp": ' "a" '})).json() == {"cqp": '[word="a"]'}
    assert_problem(await client.get("/api/v1/check", params={"cqp": "set x y"}), 400, "unsupported")


async def test_preview_merges_partitions_in_global_order(client: httpx.AsyncClient, sample_registry: Path) -> None:
    body = (await client.get("/api/v1/query", params={"corpus": "sample", "q": "house", "context": 2,
                                                     "show": "lemma,pos", "meta": "text_genre"})).json()
    assert body["cqp"] == '[word="house"]' and body["total"] == 3 and body["complete"] is True
    assert [p["total"] for p in body["partitions"]] == [2, 0, 1]
    assert [h["position"] for h in body["hits"]] == [2, 19, 81]
    first = body["hits"][0]
    assert first == {"corpus": "sample", "position": 2, "matchend": 2, "partition": "sample_p01", "left": "The old",
                     "match": "house",
                     "right": "stands on", "attributes": {"lemma": "house", "pos": "NN"},
                     "meta": {"text_genre": "news"}, "ref": "/ref/sample/2", "breaks": [], "gdex": None}
    expected = [h.match for h in whole(sample_registry).hits('[word="house"]')]
    assert [h["position"] for h in body["hits"]] == expected


async def test_paging_across_partitions(client: httpx.AsyncClient, sample_registry: Path) -> None:
    expected = [h.match for h in whole(sample_registry).hits('[pos="DT"]')]
    pages = []
    for offset in (0, 5, 10):
        body = (await client.get("/api/v1/query", params={"corpus": "sample", "q": '[pos="DT"]', "syntax": "cqp",
                                                         "offset": offset, "limit": 5})).json()
        assert body["total"] == 12 and body["offset"] == offset
        pages += [h["position"] for h in body["hits"]]
    assert pages == expected


async def test_case_switch_and_cqp_syntax(client: httpx.AsyncClient) -> None:
    simple = (await client.get("/api/v1/query", params={"corpus": "sample", "q": "HOUSE", "ignore_case": 1})).json()
    assert simple["total"] == 4 and simple["cqp"] == '[word="HOUSE"%c]'
    cqp = (await client.get("/api/v1/query", params={"corpus": "sample", "q": '[word="HOUSE" & pos="NN"]',
                                                    "syntax": "cqp", "ignore_case": 1})).json()
    assert cqp["cqp"] == '[word="HOUSE"%c & pos="NN"%c]' and cqp["total"] == 4 and cqp["hint"] is None


async def test_cqp_typed_as_simple_gets_a_hint(client: httpx.AsyncClient) -> None:
    pasted = (await client.get("/api/v1/query", params={"corpus": "sample", "q": '[word="house"]'})).json()
    assert pasted["total"] == 0 and pasted["cqp"] == '[word="\\[word=\\"house\\"\\]"]'
    assert pasted["hint"] == "this looks like CQP; use syntax=cqp"
    plain = (await client.get("/api/v1/query", params={"corpus": "sample", "q": '"hause"'})).json()
    assert plain["total"] == 0 and plain["hint"] is None  # a quoted word is simple syntax too
    misspelt = await client.get("/api/v1/query", params={"corpus": "sample", "q": "house", "ignorecase": 1})
    detail = assert_problem(misspelt, 400, "bad_parameter")["detail"]
    assert detail.startswith("unknown parameter ignorecase (did you mean ignore_case?); /api/v1/query takes: ")


async def test_filters_as_global_constraints(client: httpx.AsyncClient, sample_registry: Path) -> None:
    engine = whole(sample_registry)
    for filters, constraint in [
        (["text_genre!~news"], 'match.text_genre!="news"'),
        (["text_year~200[0-9]", "text_genre~n.*"], 'match.text_year="200[0-9]" & match.text_genre="n.*"'),
    ]:
        body = (await client.get("/api/v1/query", params={"corpus": "sample", "q": "the", "filter": filters,
                                                         "ignore_case": 1})).json()
        assert body["cqp"] == f'[word="the"%c] :: {constraint}'
        assert [h["position"] for h in body["hits"]] == [h.match for h in engine.hits(body["cqp"])]
    assert body["total"] == 3


async def test_reproducible_uniform_sample(client: httpx.AsyncClient, sample_registry: Path) -> None:
    params: Params = {"corpus": "sample", "q": "[]", "syntax": "cqp", "sample": 10, "seed": 7}
    first = (await client.get("/api/v1/query", params=params)).json()
    again = (await client.get("/api/v1/query", params=params)).json()
    other = (await client.get("/api/v1/query", params={**params, "seed": 8})).json()
    positions = [h["position"] for h in first["hits"]]
    assert positions == [h["position"] for h in again["hits"]] and len(set(positions)) == 10
    assert positions == sorted(positions) and positions != [h["position"] for h in other["hits"]]
    assert {h["partition"] for h in first["hits"]} <= {"sample_p01", "sample_p02", "sample_p03"}


@pytest.mark.slow
async def test_export_tsv_and_the_browser_cap(client: httpx.AsyncClient) -> None:
    response = await client.get("/api/v1/export", params={"corpus": "sample", "q": "house", "show": "lemma",
                                                         "meta": "text_url", "context": 1})
    disposition = response.headers["content-disposition"]
    assert re.fullmatch(r'attachment; filename="sample_[0-9a-f]{8}_3of3\.tsv"', disposition), disposition
    assert response.headers["x-cowbird-rows"] == "3" and response.headers["x-cowbird-truncated"] == "false"
    rows = list(csv.reader(io.StringIO(response.text), delimiter="\t"))
    assert rows[0] == ["corpus", "position", "matchend", "ref", "left", "match", "right", "lemma", "text_url"]
    assert rows[1] == ["sample", "2", "2", "http://front/ref/sample/2", "old", "house", "stands", "house",
                       "http://example.org/news/1"]
    capped = await client.get("/api/v1/export", params={"corpus": "big", "q": "[]", "syntax": "cqp"})
    assert capped.headers["x-cowbird-rows"] == "10000" and capped.headers["x-cowbird-truncated"] == "true"
    total = capped.headers["x-cowbird-total"]
    assert capped.headers["content-disposition"].endswith(f'_first10000of{total}.tsv"')  # cut at the row limit
    assert len(capped.text.splitlines()) == 10_001
    assert_problem(await client.get("/api/v1/export", params={"corpus": "big", "q": "[]", "syntax": "cqp",
                                                             "limit": 20_000}), 403, "forbidden")


@pytest.mark.slow
async def test_api_mode_streams_50000_rows(client: httpx.AsyncClient) -> None:
    params: Params = {"corpus": "big", "q": "[]", "syntax": "cqp", "limit": 50_000, "context": 0}
    lines = 0
    async with client.stream("GET", "/api/v1/export", params=params,
                             headers={"Authorization": f"Bearer {API_TOKEN}"}) as response:
        assert response.status_code == 200 and response.headers["x-cowbird-rows"] == "50000"
        async for _ in response.aiter_lines():
            lines += 1
    assert lines == 50_001
    bad_token = await client.get("/api/v1/export", params=params, headers={"Authorization": "Bearer wrong"})
    assert_problem(bad_token, 401, "unauthorized")


async def test_static_links(client: httpx.AsyncClient) -> None:
    body = (await client.get("/api/v1/ref/sample/60")).json()
    assert body["partition"] == "sample_p03" and body["sentence"]["match"] == "coffee"
    assert body["sentence"]["left"] == "The café near the Haus serves good" and body["sentence"]["right"] == "."
    assert body["meta"]["text_url"] == "http://example.org/blog/3"
    assert body["citation"].startswith("Sample corpus, position 60. http://front/ref/sample/60, source: ")
    page = await client.get("/ref/sample/60")
    assert page.status_code == 200 and "<mark>coffee</mark>" in page.text
    assert_problem(await client.get("/api/v1/ref/sample/93"), 404, "out_of_range")
    html = await client.get("/ref/sample/93", headers={"accept": "text/html"})
    assert html.status_code == 404 and "outside corpus sample" in html.text


async def test_bad_input_is_4xx_problem_json(client: httpx.AsyncClient) -> None:
    base = {"corpus": "sample", "q": "house"}
    assert_problem(await client.get("/api/v1/query", params={**base, "corpus": "nope"}), 404, "unknown_corpus")
    assert_problem(await client.get("/api/v1/query", params={**base, "filter": "text_genre~(a"}), 400,
                   "query_syntax")
    assert_problem(await client.get("/api/v1/query", params={**base, "filter": "genre~a"}), 400, "unknown_attribute")
    assert_problem(await client.get("/api/v1/query", params={**base, "filter": "text_genre"}), 400, "bad_parameter")
    assert_problem(await client.get("/api/v1/query", params={**base, "offset": -1}), 400, "bad_parameter")
    assert_problem(await client.get("/api/v1/query", params={**base, "limit": 100_000}), 400, "bad_parameter")
    assert_problem(await client.get("/api/v1/query", params={**base, "show": "tag"}), 400, "unknown_attribute")
    assert_problem(await client.get("/api/v1/query", params={**base, "q": "[tag=\"x\"]", "syntax": "cqp"}), 400,
                   "unknown_attribute")
    assert_problem(await client.get("/api/v1/query", params={**base, "context": 500}), 400, "bad_parameter")
    assert_problem(await client.get("/api/v1/query", params={**base, "q": "a 3"}), 400, "query_syntax")


async def test_failures_are_reported_per_partition(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    def broken(request: httpx.Request) -> httpx.Response:
        return httpx.Response(500, json={"detail": "disk on fire"})

    def lying(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"total": "many"})

    settings = front_settings(sample_parts, big_parts, tmp_path)
    settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-broken"]
    settings.corpora[0].nodes[sample_parts.ids[1]] = ["http://node-lying"]
    settings.corpora[0].nodes[sample_parts.ids[0]] = ["http://node-gone", "http://node-a"]  # failover
    extra = {"node-broken": httpx.MockTransport(broken), "node-lying": httpx.MockTransport(lying)}
    async for client in front_client(settings, nodes, extra):
        body = (await client.get("/api/v1/query", params={"corpus": "sample", "q": "house"})).json()
        assert body["complete"] is False and body["failed"] == ["sample_p02", "sample_p03"]
        assert body["total"] == 2 and [h["position"] for h in body["hits"]] == [2, 19]
        statuses = {p["id"]: p for p in body["partitions"]}
        assert "HTTP 500: disk on fire" in statuses["sample_p03"]["error"]
        assert "not a valid response" in statuses["sample_p02"]["error"]
        assert statuses["sample_p01"]["status"] == "ok"


async def test_all_nodes_failing_is_503_and_all_too_slow_is_504(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    clock = FakeClock()

    async def slow(request: httpx.Request) -> httpx.Response:
        await clock.hang()

    settings = front_settings(sample_parts, big_parts, tmp_path, node_timeout=0.2, health_probe_timeout=0.1)
    for pid in sample_parts.ids:
        settings.corpora[0].nodes[pid] = ["http://node-gone"]
    async for client in front_client(settings, nodes):
        response = await client.get("/api/v1/query", params={"corpus": "sample", "q": "house"})
        assert_problem(response, 503, "nodes_unavailable")
        assert response.headers["retry-after"] == "10" and "node-gone" not in response.text
    for pid in sample_parts.ids:
        settings.corpora[0].nodes[pid] = ["http://node-slow"]
    async for client in front_client(settings, nodes, {"node-slow": httpx.MockTransport(slow)}, clock):
        response = await clock.drive(client.get("/api/v1/query", params={"corpus": "sample", "q": "house"}))
        assert_problem(response, 504, "timeout")
        assert clock.now() == pytest.approx(0.2)  # [nodes] timeout, once for the three partitions at once
        assert "retry-after" not in response.headers


async def test_serial_mode_gives_the_same_answers(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    settings = front_settings(sample_parts, big_parts, tmp_path, fanout="serial")
    async for client in front_client(settings, nodes):
        body = (await client.get("/api/v1/query", params={"corpus": "big", "q": "[pos=\"P1\"]", "syntax": "cqp",
                                                         "offset": 3990, "limit": 20})).json()
        assert body["total"] == 12_000
        assert [h["position"] for h in body["hits"]][:2] == [19_951, 19_956]
        assert {h["partition"] for h in body["hits"]} == {"big_p01", "big_p02"}


async def test_client_disconnect_cancels_the_work() -> None:
    cancelled = asyncio.Event()

    async def work() -> int:
        try:
            await never()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return 1

    class GoneRequest:
        async def is_disconnected(self) -> bool:
            return True

    with pytest.raises(ClientGone):
        await until_disconnected(GoneRequest(), Caller(), work())  # type: ignore[arg-type]
    assert cancelled.is_set()



async def hung(started: asyncio.Event, ended: asyncio.Event, turns: int = 0) -> None:
    """Work that hangs until cancelled (``started`` set), then cleans up for ``turns`` turns of the
    event loop (as httpcore closes a connection) and sets ``ended``."""
    started.set()
    try:
        await never()
    except asyncio.CancelledError:
        for _ in range(turns):
            await asyncio.sleep(0)
        ended.set()
        raise


async def test_a_node_call_cancelled_again_and_again_closes_its_connection() -> None:
    """A streamed answer whose client goes is cancelled by its response level-triggered (anyio's cancel
    scope cancels it at every await until it ends). The node call it waits on is cancelled once and
    ends its cleanup (httpcore closing the connection: turns of the event loop) — not cut short at
    its first turn, which left the connection open and the node at work for a client that had gone."""
    started, closed = asyncio.Event(), asyncio.Event()
    failover = Failover(cast(NodePools, None), "token", FrontendSettings())
    with anyio.CancelScope() as scope:
        async def cancel_soon() -> None:
            await started.wait()
            scope.cancel()

        canceller = asyncio.ensure_future(cancel_soon())
        await asyncio.gather(failover._waited("http://node", "0" * 16, hung(started, closed, turns=3), 60.0,
                                              replica=False))
    await canceller
    await asyncio.wait_for(closed.wait(), 5)


async def test_work_stops_when_its_wait_is_cancelled() -> None:
    """A stream's work waits in ``until_disconnected`` without watching the client (its response does):
    when that wait is cancelled — the client went — the work is cancelled too, not left running."""
    started, cancelled = asyncio.Event(), asyncio.Event()

    class HereRequest:
        async def is_disconnected(self) -> bool:
            return False

    waiting = asyncio.ensure_future(until_disconnected(HereRequest(), Caller(), hung(started, cancelled),  # type: ignore[arg-type]
                                                       watched=True))
    await started.wait()
    waiting.cancel()
    await asyncio.wait_for(cancelled.wait(), 5)


async def test_a_slow_partition_fails_at_the_deadline_and_the_others_answer(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    """The deadline (5 s: ample for the live nodes on a loaded machine) cuts the slow node's wait on a
    fake clock, which passes it at once (the node timeout, 60 s, is longer)."""
    clock = FakeClock()

    async def slow(request: httpx.Request) -> httpx.Response:
        await clock.hang()

    settings = front_settings(sample_parts, big_parts, tmp_path, deadline=5.0, health_probe_timeout=0.1)
    settings.corpora[0].nodes[sample_parts.ids[2]] = ["http://node-slow"]
    async for client in front_client(settings, nodes, {"node-slow": httpx.MockTransport(slow)}, clock):
        body = (await clock.drive(client.get("/api/v1/query", params={"corpus": "sample", "q": "house"}))).json()
        assert 0 < clock.now() <= 5.0  # waited for the slow node until the deadline, not its node timeout
        assert body["complete"] is False and body["failed"] == [sample_parts.ids[2]]
        assert body["total"] == 2 and [h["position"] for h in body["hits"]] == [2, 19]


async def test_cut_applies_to_the_whole_corpus(client: httpx.AsyncClient, sample_registry: Path) -> None:
    body = (await client.get("/api/v1/query", params={"corpus": "sample", "q": '[pos="DT"] cut 7',
                                                     "syntax": "cqp"})).json()
    assert body["total"] == 7
    assert [h["position"] for h in body["hits"]] == [h.match for h in whole(sample_registry).hits('[pos="DT"] cut 7')]


def test_configuration_errors_are_clear_at_start(sample_parts: Partitioned, big_parts: Partitioned,
                                                 tmp_path: Path) -> None:
    from cowbird.frontend.corpora import CorpusCatalogue

    settings = front_settings(sample_parts, big_parts, tmp_path)
    settings.corpora[0].nodes["sample_p09"] = ["http://node-a"]
    with pytest.raises(ValueError, match="unknown partition\\(s\\) sample_p09"):
        CorpusCatalogue(settings)
    settings = front_settings(sample_parts, big_parts, tmp_path)
    del settings.corpora[0].nodes["sample_p02"]
    with pytest.raises(ValueError, match="partition sample_p02 has no node URL"):
        CorpusCatalogue(settings)
    settings = front_settings(sample_parts, big_parts, tmp_path)
    settings.corpora[0].manifest = tmp_path / "missing.json"
    with pytest.raises(ValueError, match="cannot read manifest"):
        CorpusCatalogue(settings)


def test_settings_file_and_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cowbird.frontend import FrontendSettings

    config = tmp_path / "cowbird.toml"
    corpus = '[[corpora]]\nname = "x"\nmanifest = "data/x.manifest.json"\n[corpora.nodes]\nx_p01 = ["http://n1"]\n'
    config.write_text('[nodes]\ntoken_file = "node.token"\nfanout = "serial"\n[calf]\ncache_dir = "pages"\n\n' + corpus)
    monkeypatch.setenv("COWBIRD_NODES__MAX_PARALLEL", "3")
    monkeypatch.setenv("COWBIRD_LIMITS__DEADLINE", "30")
    settings = FrontendSettings.load(config, port=8800)
    assert (settings.nodes.fanout, settings.nodes.max_parallel, settings.limits.deadline) == ("serial", 3, 30.0)
    assert settings.corpora[0].manifest == tmp_path / "data" / "x.manifest.json"
    assert settings.nodes.token_file == tmp_path / "node.token" and settings.calf.cache_dir == tmp_path / "pages"
    assert settings.port == 8800 and settings.accounts.database_file == tmp_path / "cowbird-accounts.sqlite3"


def test_the_flat_names_of_earlier_versions_still_work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A configuration written before the settings were grouped (``node_timeout``, ``calf_enabled``,
    ``COWBIRD_MAX_PARALLEL``) means what it meant; one setting given both ways is refused, naming both."""
    from cowbird.frontend import FrontendSettings

    config = tmp_path / "cowbird.toml"
    corpus = '[[corpora]]\nname = "x"\nmanifest = "data/x.manifest.json"\n[corpora.nodes]\nx_p01 = ["http://n1"]\n'
    config.write_text('node_token_file = "node.token"\nfanout = "serial"\nnode_timeout = 7.5\ncalf_enabled = true\n'
                      'calf_cache_dir = "pages"\nsmtp_from = "me@uni.example"\ndatabase_file = "users.db"\n'
                      'anonymous_rows_per_day = 5\npreview_size = 50\n\n' + corpus)
    monkeypatch.setenv("COWBIRD_MAX_PARALLEL", "3")
    monkeypatch.setenv("COWBIRD_CALF_ALLOWED_HOSTS", '["127.0.0.1"]')
    settings = FrontendSettings.load(config)
    assert (settings.nodes.fanout, settings.nodes.max_parallel, settings.nodes.timeout) == ("serial", 3, 7.5)
    assert settings.nodes.token_file == tmp_path / "node.token" and settings.calf.cache_dir == tmp_path / "pages"
    assert settings.calf.enabled and settings.calf.allowed_hosts == ["127.0.0.1"]
    assert settings.smtp.sender == "me@uni.example" and settings.accounts.database_file == tmp_path / "users.db"
    assert settings.fair_use.anonymous_rows_per_day == 5 and settings.limits.preview_size == 50
    # the environment's new name wins over the file's old one, as the environment wins over the file
    monkeypatch.setenv("COWBIRD_NODES__TIMEOUT", "9")
    assert FrontendSettings.load(config).nodes.timeout == 9.0
    assert FrontendSettings.load(config, node_timeout=4).nodes.timeout == 4.0  # an override by its old name
    config.write_text('node_timeout = 7.5\n[nodes]\ntimeout = 8\n\n' + corpus)
    with pytest.raises(ConfigError, match=r"node_timeout and \[nodes\] timeout are one setting: give it once"):
        FrontendSettings.load(config)
    monkeypatch.delenv("COWBIRD_NODES__TIMEOUT")
    config.write_text('[nodes]\ntimeout = 0\n\n' + corpus)
    with pytest.raises(ConfigError, match=r"invalid setting nodes.timeout in .*cowbird.toml: Input should be greater"):
        FrontendSettings.load(config)


async def test_each_node_has_a_small_pool_of_its_own(sample_parts: Partitioned, big_parts: Partitioned,
                                                     tmp_path: Path) -> None:
    settings = front_settings(sample_parts, big_parts, tmp_path, node_connections=3)
    pools = NodePools(settings)
    try:
        one, other = pools("http://node-a:1"), pools("http://node-b:1")
        assert pools("http://node-a:1") is one and one is not other
        assert one._transport._pool._max_connections == 3  # type: ignore[attr-defined]
    finally:
        await pools.aclose()
    assert one.is_closed and other.is_closed


async def test_translate_answers_the_cqp_that_the_query_runs(client: httpx.AsyncClient) -> None:
    """The search page's CQP line: in CQP mode the case switch puts %c on every attribute test (pos
    too) and filters become a constraint — translate says so, exactly as the query runs it."""
    cases: list[Params] = [
        {"q": '[word="HOUSE" & pos="NN"]', "syntax": "cqp", "ignore_case": 1},
        {"q": "the 0-1 house", "ignore_case": 1, "corpus": "sample", "filter": ["text_genre~news", "text_year!~2011"]},
        {"q": '"house"', "syntax": "cqp"},
    ]
    for params in cases:
        shown = (await client.get("/api/v1/translate", params=params)).json()["cqp"]
        ran = (await client.get("/api/v1/query", params={"corpus": "sample", **params, "limit": 0})).json()["cqp"]
        assert shown == ran, params
    first = (await client.get("/api/v1/translate", params=cases[0])).json()["cqp"]
    assert first == '[word="HOUSE"%c & pos="NN"%c]'
    no_corpus = await client.get("/api/v1/translate", params={"q": "house", "filter": "text_genre~news"})
    assert_problem(no_corpus, 400, "bad_parameter")
    unknown = await client.get("/api/v1/translate", params={"q": "house", "corpus": "sample", "filter": "genre~x"})
    assert_problem(unknown, 400, "unknown_attribute")


async def test_a_sample_export_says_it_is_the_sample(client: httpx.AsyncClient) -> None:
    preview = (await client.get("/api/v1/query", params={"corpus": "sample", "q": "the", "sample": 5,
                                                         "seed": 42})).json()
    export = await client.get("/api/v1/export", params={"corpus": "sample", "q": "the", "sample": 5, "seed": 42,
                                                        "provenance": 1})
    total = preview["total"]
    assert export.headers["content-disposition"].endswith(f'_sample5of{total}.tsv"')
    lines = export.text.splitlines()
    assert '# sample: 5' in lines and '# seed: 42' in lines
    assert (f'# selection: "a random sample of 5 of the {total} hits, drawn with seed 42 (the same request draws '
            'the same sample), in corpus order"') in lines
    skip = int(lines[0].split("skiprows=")[1].split(";")[0])
    rows = list(csv.DictReader(io.StringIO("\n".join(lines[skip:])), delimiter="\t"))
    assert [int(r["position"]) for r in rows] == [h["position"] for h in preview["hits"]]
    page = await client.get("/api/v1/export", params={"corpus": "sample", "q": "the", "offset": 2, "limit": 3,
                                                      "provenance": 1})
    assert f'# selection: "hits 3 to 5 of {total}, in corpus order"' in page.text.splitlines()
    assert page.headers["content-disposition"].endswith(f'_hits3to5of{total}.tsv"')


async def test_mu_and_tab_queries_over_partitions(client: httpx.AsyncClient, sample_registry: Path) -> None:
    """CQP's MU and TAB queries run on every partition and merge like any other: the same hits as
    on the corpus in one piece; the case switch folds their tokens, and metadata filters, which
    would need a constraint they cannot take, are refused."""
    engine = whole(sample_registry)
    for text in ('MU (meet [pos="JJ"] [pos="NN"] -2 2)', 'MU (union "house" [pos="DT"]) cut 4',
                 'TAB [pos="DT"] {0,2} [pos="NN"] within s'):
        body = (await client.get("/api/v1/query", params={"corpus": "sample", "q": text, "syntax": "cqp"})).json()
        expected = engine.hits(text)
        assert body["total"] == len(expected) > 0, text
        assert [(h["position"], h["matchend"]) for h in body["hits"]] == [(h.match, h.matchend) for h in expected]
    folded = (await client.get("/api/v1/query", params={"corpus": "sample", "q": 'MU (meet "THE" [pos="NN"] 1 2)',
                                                       "syntax": "cqp", "ignore_case": 1})).json()
    assert folded["cqp"] == 'MU (meet [word="THE"%c] [pos="NN"%c] 1 2)' and folded["total"] > 0
    filtered = await client.get("/api/v1/query", params={"corpus": "sample", "q": 'TAB "the" [pos="NN"]',
                                                        "syntax": "cqp", "filter": "text_genre~news"})
    assert "an MU or TAB query takes no constraint" in assert_problem(filtered, 400, "bad_parameter")["detail"]


async def test_every_route_refuses_what_it_does_not_take(client: httpx.AsyncClient) -> None:
    """One parameter model per route (``cowbird.frontend.params``): unknown names are a 400 naming each,
    the closest accepted name and everything the route takes; ``token`` is accepted everywhere."""
    both = await client.get("/api/v1/frequency", params={"corpus": "sample", "q": "house", "bye": "pos", "zzz": 1})
    detail = assert_problem(both, 400, "bad_parameter")["detail"]
    assert detail.startswith("unknown parameters bye (did you mean by?), zzz; /api/v1/frequency takes: by, corpus, ")
    assert ("filter, fold, format, ignore_case, limit, min, offset, on, provenance, q, stream, subcorpus, syntax, "
            "token") in detail
    ref = await client.get("/api/v1/ref/sample/3", params={"ende": 4})
    assert assert_problem(ref, 400, "bad_parameter")["detail"] == (
        "unknown parameter ende (did you mean end?); /api/v1/ref/{corpus}/{position} takes: end, token")
    bare = await client.get("/api/v1/corpora", params={"limit": 3})
    assert assert_problem(bare, 400, "bad_parameter")["detail"] == (
        "unknown parameter limit; /api/v1/corpora takes: token")
    assert (await client.get("/api/v1/corpora", params={"token": ""})).status_code == 200
    wrong = await client.get("/api/v1/collocations", params={"corpus": "sample", "q": "house", "window": 0})
    assert assert_problem(wrong, 400, "bad_parameter")["detail"] == "window: Input should be greater than or equal to 1"
    # the models are the OpenAPI document's parameters, with their descriptions
    operation = client_app(client).openapi()["paths"]["/api/v1/export"]["get"]
    described = {p["name"]: p.get("description", "") for p in operation["parameters"]}
    assert described["filter"] == (
        "ATTR~REGEX (a regex), ATTR=VALUE (exactly), ATTR:FROM..TO (a number; open: 2010..), !~ and != negate, "
        "repeatable.") and described["format"].startswith("tsv")
    assert set(described) == {"token", "corpus", "q", "syntax", "ignore_case", "filter", "context", "show", "meta",
                              "inline", "sample", "seed", "sort", "direction", "offset", "limit", "format",
                              "provenance", "categories", "only_categorised", "subcorpus"}


def client_app(client: httpx.AsyncClient) -> FastAPI:
    transport = client._transport
    assert isinstance(transport, httpx.ASGITransport) and isinstance(transport.app, FastAPI)
    return transport.app


@pytest.mark.slow  # 3.1 s here (make quick leaves it out)
async def test_background_work_waits_for_a_slow_node_longer_than_the_node_timeout() -> None:
    """A node says nothing until its answer is ready. Background work may take it longer than ``[nodes]
    timeout`` (its calls wait ``BACKGROUND_TIME`` × as long): the connection's own timeout between bytes
    must not cut it at ``[nodes] timeout`` (heavy queries run as background work ended in 504 after
    60 s under load, their nodes still at work within their CPU budget)."""
    import uvicorn
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from cowbird.frontend.corpora import Partition
    from cowbird.frontend.node_answers import NodeFailure
    from tests.support import free_ports, served_in_thread

    async def slow(request: Request) -> JSONResponse:
        await asyncio.sleep(1.5)
        return JSONResponse({"ok": True})

    port, = free_ports(1)
    node = f"http://127.0.0.1:{port}"
    config = uvicorn.Config(Starlette(routes=[Route("/v1/slow", slow)]), port=port, log_level="warning")
    settings = FrontendSettings.model_validate({"nodes": {"timeout": 0.5}})
    pools = NodePools(settings)
    failover = Failover(pools, "token", settings)
    partition = Partition("p1", 10, 0, (node,))
    with served_in_thread(config):
        try:
            background = Caller(priority="background")
            body = await failover.attempt(partition, node, lambda call: failover.request(partition, call, "GET",
                                                                                          "/v1/slow"), None, background)
            assert body == b'{"ok":true}'
            interactive = Caller()
            with pytest.raises(NodeFailure, match=r"timed out after 0\.5 s"):
                await failover.attempt(partition, node, lambda call: failover.request(partition, call, "GET",
                                                                                       "/v1/slow"), None, interactive)
        finally:
            await pools.aclose()
