"""Fair use: queries at once and rows exported per day, per user or per address, with what is left
in the answer's headers and on the account page."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from cowbird.frontend.fair_use import FairUse
from cowbird.frontend.viewer import ANONYMOUS, Viewer
from tests.frontend.conftest import API_TOKEN, Partitioned, front_client, front_settings

pytestmark = pytest.mark.anyio


@pytest.fixture
async def strict(sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
                 ) -> AsyncIterator[httpx.AsyncClient]:
    settings = front_settings(sample_parts, big_parts, tmp_path, anonymous_rows_per_day=5, anonymous_running_queries=1,
                              bulk_rows_per_day=1_000)
    async for client in front_client(settings, nodes):
        yield client


def tracker(client: httpx.AsyncClient) -> FairUse:
    app: FastAPI = client._transport.app  # type: ignore[attr-defined]
    fair_use: FairUse = app.state.frontend.fair_use
    return fair_use


async def test_daily_export_budget_per_address(strict: httpx.AsyncClient) -> None:
    params = {"corpus": "sample", "q": "house"}
    first = await strict.get("/api/v1/export", params={**params, "limit": 3})
    assert first.status_code == 200 and first.headers["x-cowbird-export-rows-left"] == "2"
    preview = await strict.get("/api/v1/query", params=params)
    assert preview.headers["x-cowbird-export-rows-left"] == "2" and preview.headers["x-cowbird-queries-limit"] == "1"
    over = await strict.get("/api/v1/export", params={**params, "limit": 3})
    assert over.status_code == 429 and "2 rows left of today's budget" in over.json()["detail"]
    assert 0 < int(over.headers["retry-after"]) <= 86_401
    # a user with api_bulk has a budget of their own
    bulk = await strict.get("/api/v1/export", params={**params, "limit": 3},
                            headers={"Authorization": f"Bearer {API_TOKEN}"})
    assert bulk.status_code == 200 and bulk.headers["x-cowbird-export-rows-left"] == "997"


async def test_queries_at_once(strict: httpx.AsyncClient) -> None:
    fair_use = tracker(strict)
    with fair_use.running(ANONYMOUS, "address:127.0.0.1"):
        busy = await strict.get("/api/v1/query", params={"corpus": "sample", "q": "house"})
        assert busy.status_code == 429 and busy.headers["retry-after"] == "2"
        assert "1 queries at once already" in busy.json()["detail"]
        by_token = await strict.get("/api/v1/query", params={"corpus": "sample", "q": "house", "token": API_TOKEN})
        assert by_token.status_code == 200  # the user's own count
    assert (await strict.get("/api/v1/query", params={"corpus": "sample", "q": "house"})).status_code == 200
    assert fair_use._running == {}  # every slot given back, exports included
    await strict.get("/api/v1/export", params={"corpus": "sample", "q": "house", "limit": 1})
    assert fair_use._running == {}


def test_limits_by_kind_of_viewer() -> None:
    from cowbird.frontend.fair_use import Limits

    fair_use = FairUse(anonymous=Limits(1, 10), user=Limits(2, 20), bulk=Limits(3, 30))
    assert fair_use.limits(ANONYMOUS).rows_per_day == 10
    assert fair_use.limits(Viewer("ada")).running == 2 and fair_use.limits(Viewer("ada", api_bulk=True)).running == 3


async def test_a_day_of_node_time(sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI],
                                  tmp_path: Path) -> None:
    """A query costs what the nodes spent on it (their answers' elapsed_ms), counted per viewer and day:
    once an address has used its node time, its next query is refused until midnight (UTC)."""
    settings = front_settings(sample_parts, big_parts, tmp_path, anonymous_node_seconds_per_day=1e-6)
    async for client in front_client(settings, nodes):
        params = {"corpus": "sample", "q": "house"}
        first = await client.get("/api/v1/query", params=params)
        assert first.status_code == 200 and first.headers["x-cowbird-node-seconds-left"] == "0.0"
        spent = tracker(client)._node_seconds
        assert list(spent.values())[0] > 1e-6  # three partitions' counts and pages, in seconds
        over = await client.get("/api/v1/query", params={**params, "stream": 1})
        assert over.status_code == 429 and "seconds of the nodes' time" in over.json()["detail"]
        assert 0 < int(over.headers["retry-after"]) <= 86_401
        token = await client.get("/api/v1/query", params={**params, "token": API_TOKEN})
        assert token.status_code == 200 and token.headers["x-cowbird-node-seconds-left"] not in ("0.0", "unlimited")


async def test_a_streamed_preview_costs_its_node_time_too(client: httpx.AsyncClient) -> None:
    fair_use = tracker(client)
    streamed = await client.get("/api/v1/query", params={"corpus": "sample", "q": "old", "stream": 1})
    assert streamed.status_code == 200 and streamed.text.splitlines()[-1].startswith('{"event":"result"')
    assert sum(fair_use._node_seconds.values()) > 0 and fair_use._running == {}
