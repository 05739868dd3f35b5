"""A request's node calls say who makes them (``frontend/caller.py``, passed explicitly, no context
variable): every call of one request carries the same start (``X-Cowbird-Began``), background work
says so (``X-Cowbird-Priority``) and interactive work does not, and each call gets its own id."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

from tests.frontend.conftest import API_TOKEN, Partitioned, front_client, front_settings

pytestmark = pytest.mark.anyio


class Recording:
    """Middleware of a node app noting the headers of every node-API call it answers."""

    def __init__(self, app: ASGIApp, calls: list[dict[str, str]]) -> None:
        self.app = app
        self.calls = calls

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/v1/"):
            headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            self.calls.append({"path": scope["path"], **headers})
        await self.app(scope, receive, send)


async def _calls(path: str, sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI],
                 tmp_path: Path, budget: float | None = None) -> list[dict[str, str]]:
    """The node calls of one request (``budget``: the interactive budget, ``[limits] interactive_seconds``)."""
    calls: list[dict[str, str]] = []
    for app in nodes.values():
        app.add_middleware(Recording, calls=calls)
    settings = front_settings(sample_parts, big_parts, tmp_path)
    if budget is not None:
        settings.limits.interactive_seconds = budget
    async for client in front_client(settings, nodes):
        response = await client.get(path, headers={"Authorization": f"Bearer {API_TOKEN}"})
        assert response.status_code == 200, response.text
    return calls


async def test_a_previews_node_calls_carry_its_start_and_no_priority(
        sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path) -> None:
    calls = await _calls("/api/v1/query?corpus=sample&q=house", sample_parts, big_parts, nodes, tmp_path)
    assert {c["path"] for c in calls} >= {"/v1/count"} and len(calls) >= 3
    assert len({c["x-cowbird-began"] for c in calls}) == 1 and float(calls[0]["x-cowbird-began"]) > 1.7e9
    assert all("x-cowbird-priority" not in c for c in calls)
    assert len({c["x-cowbird-call"] for c in calls}) == len(calls)  # one id per call


async def test_an_analysis_estimated_heavy_is_background_work_in_every_node_call_after_its_estimate(
        sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path) -> None:
    calls = await _calls("/api/v1/frequency?corpus=sample&q=house&by=word", sample_parts, big_parts, nodes, tmp_path,
                         budget=1e-9)
    frequency = [c for c in calls if c["path"] == "/v1/frequency"]
    assert len(frequency) == 3  # one per partition
    assert [c["path"] for c in calls[:3]] == ["/v1/estimate"] * 3  # the estimate that classed it
    assert all("x-cowbird-priority" not in c for c in calls[:3])
    assert all(c.get("x-cowbird-priority") == "background" for c in calls[3:]), calls
    assert len({c["x-cowbird-began"] for c in calls}) == 1


async def test_an_analysis_estimated_cheap_is_interactive_work_in_every_node_call(
        sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path) -> None:
    calls = await _calls("/api/v1/frequency?corpus=sample&q=house&by=word", sample_parts, big_parts, nodes, tmp_path)
    assert len([c for c in calls if c["path"] == "/v1/frequency"]) == 3
    assert all("x-cowbird-priority" not in c for c in calls), calls
    assert len({c["x-cowbird-began"] for c in calls}) == 1
