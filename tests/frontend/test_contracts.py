"""The front end's contracts: typed OpenAPI, one error model, one failover rule, checked settings."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from cowbird.frontend import FrontendSettings
from cowbird.serving.config import ConfigError
from tests.clock import FakeClock
from tests.frontend.conftest import Partitioned, front_client, front_settings
from tests.support import assert_problem

pytestmark = pytest.mark.anyio


async def test_openapi_types_every_public_response(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    models = spec["components"]["schemas"]
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            content = operation["responses"]["200"]["content"]
            if path == "/api/v1/export":
                assert set(content) == {"text/tab-separated-values", "text/csv", "application/x-ndjson",
                                        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}
                continue
            if path.startswith("/ref/"):
                assert "text/html" in content
                continue
            assert "$ref" in content["application/json"]["schema"], f"{method} {path} has no response model"
            problems = operation["responses"]["4XX"]["content"]["application/problem+json"]["schema"]
            assert problems["$ref"].endswith("/Problem")
    hit = models["Hit"]["properties"]
    assert set(hit) == {"corpus", "position", "matchend", "partition", "left", "match", "right", "attributes", "meta",
                        "ref", "breaks", "gdex"}
    assert set(models["GdexScore"]["properties"]) == {"score", "key", "region", "tokens", "match_start", "match_end",
                                                      "values", "weights", "rare", "numbers", "urls"}
    assert hit["position"]["type"] == "integer" and hit["meta"]["type"] == "object"
    assert models["QueryResult"]["properties"]["hits"]["items"]["$ref"].endswith("/Hit")
    assert set(models["Problem"]["properties"]) >= {"status", "code", "detail", "offset", "line", "column"}
    assert set(models["CorpusSummary"]["properties"]) >= {"name", "size", "meta", "partitions"}


async def test_an_unexpected_error_is_a_logged_500_problem_without_details(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object, **kwargs: object) -> str:
        raise RuntimeError("secret detail in /srv/cowbird/token.txt")

    monkeypatch.setattr("cowbird.frontend.querying.translate_query", broken)
    with caplog.at_level(logging.ERROR, logger="cowbird"):
        response = await client.get("/api/v1/translate", params={"q": "house"})
    body = assert_problem(response, 500, "internal")
    assert body["detail"] == "an unexpected error occurred on the server; it has been logged"
    assert "secret" not in response.text and "Traceback" not in response.text and "/srv" not in response.text
    assert "GET /api/v1/translate" in caplog.text and "RuntimeError: secret detail" in caplog.text


async def test_the_same_failure_has_the_same_code_on_node_and_front_end(
    client: httpx.AsyncClient, nodes: dict[str, FastAPI]
) -> None:
    front = await client.get("/api/v1/query", params={"corpus": "sample", "q": "house", "offset": -1})
    detail = assert_problem(front, 400, "bad_parameter")["detail"]
    assert detail == "offset: Input should be greater than or equal to 0"
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=nodes["node-a"]), base_url="http://node-a",
                                 headers={"Authorization": "Bearer node-token-0123456789abcdef"}) as node:
        async with nodes["node-a"].router.lifespan_context(nodes["node-a"]):
            answer = await node.post("/v1/hits", json={"partition": "x", "query": '"a"', "limit": -1})
            assert_problem(answer, 422, "invalid_request")
            bad = await node.post("/v1/count", json={"partition": "sample_p01", "query": '[word="a"'})
    front_bad = await client.get("/api/v1/query", params={"corpus": "sample", "q": '[word="a"', "syntax": "cqp"})
    for problem in (assert_problem(bad, 400, "query_syntax"), assert_problem(front_bad, 400, "query_syntax")):
        assert (problem["offset"], problem["line"], problem["column"]) == (9, 1, 10)
        assert problem["message"].startswith("unexpected end of the query")


async def _silent_server(clock: FakeClock) -> tuple[asyncio.Server, str]:
    """A real TCP server on loopback that reads requests and never answers them."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with clock.hanging():
            await reader.read()  # until the client gives up and closes the connection
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"


async def test_a_node_that_does_not_answer_times_out_and_the_next_one_serves(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    clock = FakeClock()  # [nodes] timeout passes on it once only the silent node is waited for
    server, silent = await _silent_server(clock)
    real_network = {"127.0.0.1": httpx.AsyncHTTPTransport()}
    try:
        settings = front_settings(sample_parts, big_parts, tmp_path, node_timeout=3.0, health_probe_timeout=0.5)
        settings.corpora[0].nodes[sample_parts.ids[2]] = [silent, "http://node-b"]
        async for client in front_client(settings, nodes, real_network, clock):
            body = (await clock.drive(client.get("/api/v1/query", params={"corpus": "sample", "q": "house"}))).json()
            assert body["complete"] is True and [h["position"] for h in body["hits"]] == [2, 19, 81]
            # it waited for the silent node ([nodes] hedge_after, not [nodes] timeout), then for its health
            # check: no answer either, and the replica answered
            assert clock.now() == pytest.approx(0.5 + 0.5)
        settings.corpora[0].nodes[sample_parts.ids[2]] = [silent]
        async for client in front_client(settings, nodes, real_network, clock):
            body = (await clock.drive(client.get("/api/v1/query", params={"corpus": "sample", "q": "house"}))).json()
            assert body["complete"] is False and body["total"] == 2
            failed = next(p for p in body["partitions"] if p["id"] == sample_parts.ids[2])
            assert failed["error"] == f"{sample_parts.ids[2]}: timed out after 3 s"  # no node URL for clients
    finally:
        server.close()
        await server.wait_closed()


def test_settings_are_checked_at_start(tmp_path: Path) -> None:
    config = tmp_path / "cowbird.toml"
    corpus = '[[corpora]]\nname = "x"\nmanifest = "x.json"\n'
    config.write_text(corpus + '[corpora.nodes]\nx_p01 = ["node1:8701"]\n')
    with pytest.raises(ConfigError, match=r"corpora\.0\.nodes in .*cowbird\.toml: partition x_p01: 'node1:8701' is "
                                          r"not a node URL: write http://host:port or https://host:port"):
        FrontendSettings.load(config)
    config.write_text(corpus + 'access = "friends"\n[corpora.nodes]\nx_p01 = ["http://node1:8701/"]\n')
    with pytest.raises(ConfigError, match="access 'friends' is not one of: public, login, group:NAME"):
        FrontendSettings.load(config)
    config.write_text(corpus + 'access = "group:ims"\n[corpora.nodes]\nx_p01 = ["https://node1:8701/"]\n')
    settings = FrontendSettings.load(config)
    assert str(settings.corpora[0].access) == "group:ims" and settings.corpora[0].access.group == "ims"
    assert settings.corpora[0].nodes == {"x_p01": ["https://node1:8701"]}
    config.write_text("max_parallel = 0\n")
    with pytest.raises(ConfigError, match=r"invalid setting nodes.max_parallel in .*: Input should be greater than"):
        FrontendSettings.load(config)
    config.write_text("max_parallel = \n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        FrontendSettings.load(config)


def test_a_bad_manifest_is_a_one_line_error_at_start(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    from cowbird.frontend.corpora import CorpusCatalogue

    settings = front_settings(sample_parts, big_parts, tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text(sample_parts.manifest.read_text().replace('"partitions"', '"parts"'))
    settings.corpora[0].manifest = broken
    with pytest.raises(ConfigError, match=r"^corpus sample: manifest .*broken\.json: partitions: missing$"):
        CorpusCatalogue(settings)


def test_attribute_descriptions_name_attributes_the_corpus_has(sample_parts: Partitioned) -> None:
    """[corpora.attributes] is shown to users as the corpus's tagset: a description of an attribute the
    corpus lacks (a typo) stops the start and says which attributes there are."""
    from cowbird.frontend.corpora import load_corpus
    from cowbird.frontend.settings import CorpusConfig

    nodes = {pid: ["http://node1:8701"] for pid in sample_parts.ids}
    good = CorpusConfig(name="sample", manifest=sample_parts.manifest, nodes=nodes,
                        attributes={"pos": "Penn Treebank tags", "text_genre": "what kind of text"})
    assert load_corpus(good).summary().attributes == {"pos": "Penn Treebank tags", "text_genre": "what kind of text"}
    typo = CorpusConfig(name="sample", manifest=sample_parts.manifest, nodes=nodes, attributes={"tagset": "Penn"})
    with pytest.raises(ConfigError, match=r"corpus sample: \[corpora.attributes\] describes tagset, which the corpus "
                                          r"does not have \(it has: word, pos, lemma, text, text_id"):
        load_corpus(typo)
