"""The streamed answers' events are the models of ``cowbird.frontend.events``: every line of a real
stream (a preview, a preview run as background work, an analysis) is its event's model exactly, and
``/openapi.json`` names those models as each streamed route's ``application/x-ndjson`` content, so
that the page's generated types (``api-types.d.ts``) are the events' own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI
from pydantic import BaseModel

from cowbird.frontend.events import ANALYSIS_EVENTS, QUERY_EVENTS
from cowbird.frontend.operations import PUBLIC_OPERATIONS
from cowbird.frontend.schemas import QueryResult
from tests.frontend.conftest import Partitioned, front_client, front_settings

pytestmark = pytest.mark.anyio


def _checked(response: httpx.Response, models: tuple[type[BaseModel], ...],
             result: type[BaseModel] | None) -> list[str]:
    """Each line validated against the model of its event (the result against the plain answer's
    model, when given); the events' names in order."""
    assert response.status_code == 200, response.text
    by_name = {m.model_fields["event"].annotation.__args__[0]: m for m in models}  # type: ignore[union-attr]
    names = []
    for line in response.text.splitlines():
        body: dict[str, Any] = json.loads(line)
        name = body["event"]
        names.append(name)
        if name in by_name:
            assert by_name[name].model_validate(body).model_dump(mode="json") == body
        elif name == "result" and result is not None:
            result.model_validate({k: v for k, v in body.items() if k != "event"})
    return names


async def test_every_line_of_a_streamed_preview_is_its_events_model(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    settings = front_settings(sample_parts, big_parts, tmp_path)
    settings.limits.interactive_seconds = 1e-9  # a sorted page deep in the hits is background work
    async for client in front_client(settings, nodes):
        progressive = await client.get("/api/v1/query", params={"corpus": "big", "q": '[pos="P1"]', "syntax": "cqp",
                                                                "stream": 1})
        names = _checked(progressive, QUERY_EVENTS, QueryResult)
        assert names[0] == "started" and "page" in names and "count" in names and names[-1] == "result"
        deep = await client.get("/api/v1/query", params={"corpus": "big", "q": "[]", "syntax": "cqp",
                                                         "sort": "match.word", "offset": 1000, "stream": 1})
        assert _checked(deep, QUERY_EVENTS, None)[:2] == ["started", "background"]


async def test_every_line_of_a_streamed_analysis_is_its_events_model(client: httpx.AsyncClient) -> None:
    streamed = await client.get("/api/v1/frequency", params={"corpus": "big", "q": '[pos="P1"]', "syntax": "cqp",
                                                             "stream": 1})
    names = _checked(streamed, ANALYSIS_EVENTS, None)
    assert names[0] == "started" and names.count("partition") >= 1 and names[-1] == "result"


async def test_the_openapi_description_names_the_event_models(client: httpx.AsyncClient) -> None:
    document = (await client.get("/openapi.json")).json()
    schemas = document["components"]["schemas"]
    for operation in PUBLIC_OPERATIONS:
        content = document["paths"][operation.path]["get"]["responses"]["200"]["content"]
        if operation.stream == "no":  # (an export's format=ndjson file is lines of hits, not events)
            assert "schema" not in content.get("application/x-ndjson", {}), operation
            continue
        models = QUERY_EVENTS if operation.stream == "own" else ANALYSIS_EVENTS
        named = [one["$ref"].rsplit("/", 1)[1] for one in content["application/x-ndjson"]["schema"]["oneOf"]]
        assert named == [m.__name__ for m in models], operation
        assert all(set(schemas[name]["properties"]) == set(m.model_fields) for name, m in zip(named, models,
                                                                                              strict=True))
