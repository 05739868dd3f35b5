"""One log line per request on both services, text or JSON, never with a token in it; one
structured line per node call of the fan-out."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import httpx
import pytest

from cowbird.request_log import configure
from tests.frontend.conftest import API_TOKEN

pytestmark = pytest.mark.anyio


@pytest.fixture
def restore_logging() -> Iterator[None]:
    logger = logging.getLogger("cowbird")
    handlers, level, propagate = logger.handlers[:], logger.level, logger.propagate
    yield
    logger.handlers[:], logger.level, logger.propagate = handlers, level, propagate


async def test_json_request_log(client: httpx.AsyncClient, capsys: pytest.CaptureFixture[str],
                                restore_logging: None) -> None:
    configure("info", "json")
    await client.get("/api/v1/query", params={"corpus": "sample", "q": "house", "token": API_TOKEN})
    lines = [json.loads(line) for line in capsys.readouterr().err.splitlines()]
    assert API_TOKEN not in json.dumps(lines)
    front = [e for e in lines if e["logger"] == "cowbird.requests" and e["service"] == "frontend"]
    assert len(front) == 1
    entry = front[0]
    assert (entry["method"], entry["status"], entry["user"], entry["corpus"], entry["hits"]) == (
        "GET", 200, "api", "sample", 3)
    assert entry["path"].startswith("/api/v1/query?") and "token=%E2%80%A6" in entry["path"] and entry["ms"] > 0
    calls = [e for e in lines if e["logger"] == "cowbird.fanout"]
    assert {c["partition"] for c in calls} == {"sample_p01", "sample_p02", "sample_p03"}
    assert all(c["status"] == "ok" and c["ms"] >= 0 and c["node"].startswith("http://node-") for c in calls)
    nodes = [e for e in lines if e["logger"] == "cowbird.requests" and e["service"] == "node"]
    assert {e["partition"] for e in nodes if e["path"] == "/v1/count"} == {"sample_p01", "sample_p02", "sample_p03"}


async def test_text_request_log(client: httpx.AsyncClient, capsys: pytest.CaptureFixture[str],
                                restore_logging: None) -> None:
    configure("info", "text")
    await client.get("/api/v1/export", params={"corpus": "sample", "q": "house"})
    line = next(x for x in capsys.readouterr().err.splitlines() if "service=frontend" in x)
    assert "cowbird.requests: GET /api/v1/export?corpus=sample&q=house 200" in line
    assert "user=anonymous corpus=sample hits=3" in line
    configure("warning", "text")
    await client.get("/api/v1/corpora")
    assert "cowbird.requests" not in capsys.readouterr().err
