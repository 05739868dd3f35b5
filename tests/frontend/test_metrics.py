"""``/metrics`` in Prometheus format on the node and the front end, protected."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from prometheus_client.parser import text_string_to_metric_families

from cowbird.frontend.accounts import Accounts, Database, sqlite_url
from tests.frontend.conftest import API_TOKEN, NODE_TOKEN, Partitioned, front_client, front_settings

pytestmark = pytest.mark.anyio


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


@pytest.fixture
async def metered(sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI],
                  tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    (tmp_path / "metrics.token").write_text("scrape-token-0123456789abcdef\n")
    settings = front_settings(sample_parts, big_parts, tmp_path, metrics_token_file=tmp_path / "metrics.token")
    async for client in front_client(settings, nodes):
        yield client


@pytest.mark.slow  # 1.9 s here (make quick leaves it out)
async def test_front_end_metrics(metered: httpx.AsyncClient, tmp_path: Path) -> None:
    assert (await metered.get("/metrics")).status_code == 401
    assert (await metered.get("/metrics", headers={"Authorization": f"Bearer {API_TOKEN}"})).status_code == 401
    for _ in range(2):
        await metered.get("/api/v1/query", params={"corpus": "sample", "q": "house"})
    answer = await metered.get("/metrics", headers={"Authorization": "Bearer scrape-token-0123456789abcdef"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith("text/plain")
    found = samples(answer.text)
    assert found[("cowbird_requests_total", (("route", "/api/v1/query"), ("service", "frontend"),
                                             ("status", "200")))] == 2
    assert found[("cowbird_node_calls_total", (("outcome", "ok"), ("partition", "sample_p01")))] >= 2
    assert found[("cowbird_request_seconds_count", (("route", "/api/v1/query"), ("service", "frontend")))] == 2
    database = Database(sqlite_url(tmp_path / "accounts.sqlite3"))
    with database.session() as session:
        accounts = Accounts(database)
        admin, _ = accounts.users.add(session, "root", "root@example.org", "tests", admin=True)
        token = accounts.tokens.create(session, admin, "monitoring").secret
    database.close()
    assert (await metered.get("/metrics", headers={"Authorization": f"Bearer {token}"})).status_code == 200


async def test_node_metrics(nodes: dict[str, FastAPI]) -> None:
    node = nodes["node-a"]
    async with node.router.lifespan_context(node), httpx.AsyncClient(
        transport=httpx.ASGITransport(app=node), base_url="http://node-a"
    ) as client:
        assert (await client.get("/metrics")).status_code == 401
        headers = {"Authorization": f"Bearer {NODE_TOKEN}"}
        for _ in range(3):
            await client.post("/v1/count", json={"partition": "sample_p01", "query": '[word="house"]'}, headers=headers)
        found = samples((await client.get("/metrics", headers=headers)).text)
        assert found[("cowbird_queries_evaluated_total", (("partition", "sample_p01"),))] == 1
        assert found[("cowbird_result_cache_hits_total", (("partition", "sample_p01"),))] == 2
