"""One log line per request on both services, text or JSON, never with a token in it; one
structured line per node call of the fan-out."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator

import httpx
import pytest
from fastapi import FastAPI

from cowbird.serving.request_log import configure, is_secret
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
    counted = {e["partition"] for e in nodes if e["path"] in ("/v1/count", "/v1/hits")}  # the first: count and page
    assert counted == {"sample_p01", "sample_p02", "sample_p03"}


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


@pytest.mark.slow  # 1.6 s here (make quick leaves it out)
async def test_secret_looking_parameters_are_never_logged(client: httpx.AsyncClient, nodes: dict[str, FastAPI],
                                                          capsys: pytest.CaptureFixture[str],
                                                          restore_logging: None) -> None:
    """A misspelt token parameter is refused (unknown parameter), but its value must not reach the
    log either, whatever the spelling; ordinary parameters are logged as they are."""
    configure("info", "json")
    secrets = {"Token": "secret-one", "access_token": "secret-two", "apiKey": "secret-three",
               "client-secret": "secret-four", "PASSWORD": "secret-five", "key": "secret-six",
               "%54oken": "secret-seven", "X-Auth": "secret-eight", "passwd": "secret-nine"}
    query = "&".join(f"{name}={value}" for name, value in secrets.items())
    answer = await client.get(f"/api/v1/corpora?{query}&limit=7")
    assert answer.status_code == 400
    log = capsys.readouterr().err
    assert not [value for value in secrets.values() if value in log]
    entry = next(json.loads(line) for line in log.splitlines() if '"service": "frontend"' in line)
    assert "limit=7" in entry["path"] and "Token=%E2%80%A6" in entry["path"]
    assert "access_token=%E2%80%A6" in entry["path"]
    # no parameter of either service is taken for a secret but token itself
    front = client._transport
    assert isinstance(front, httpx.ASGITransport)
    names: set[str] = set()
    for app in (front.app, *nodes.values()):
        assert isinstance(app, FastAPI)
        names |= {parameter["name"] for path in app.openapi()["paths"].values() for operation in path.values()
                  for parameter in operation.get("parameters", []) if parameter["in"] == "query"}
    assert {"corpus", "q", "tokens", "filter"} <= names and len(names) > 20
    assert "token" in names and not {name for name in names - {"token"} if is_secret(name)}, names
