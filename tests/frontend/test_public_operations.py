"""The public operations table (``cowbird.frontend.operations``) and the app: every route that
searches the nodes is declared there, served with the table's models and files, described with its
cost class and merge, runs where its cost class says, and goes through the one prologue."""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.routing import APIRoute

from cowbird.frontend.app import create_app
from cowbird.frontend.background import is_background
from cowbird.frontend.operations import BY_PATH, PUBLIC_OPERATIONS, may_hand_over
from cowbird.frontend.routes.deps import Visit
from tests.frontend.conftest import Partitioned, front_settings
from tests.frontend.test_priority import WIDE, recording
from tests.support import assert_problem

pytestmark = pytest.mark.anyio

NOT_DECLARED = {
    "/api/v1/context/{corpus}/{position}": "one line's context, read by position: no search, no merge",
    "/api/v1/ref/{corpus}/{position}": "a static link's line, read by position",
    "/api/v1/ref/{corpus}/{position}/web": "the line's context on the web (Calf), not on the nodes",
    "/api/v1/subcorpora": "an account's saved subcorpora (POST saves one, its size counted once through Visit.run)",
}
"""The ``/api/v1`` routes that reach the nodes without a search of them, and why they are not
public operations of the table."""


def visiting_routes(tmp_path: Path, sample_parts: Partitioned, big_parts: Partitioned) -> dict[str, APIRoute]:
    app = create_app(front_settings(sample_parts, big_parts, tmp_path))
    routes = {}
    for route in _flat(app.routes):
        if not isinstance(route, APIRoute) or not route.path.startswith("/api/v1/"):
            continue
        parameters = inspect.signature(route.endpoint).parameters.values()
        if any(p.annotation in ("Visitor", Visit) or "Visitor" in str(p.annotation) for p in parameters) \
                or route.path in NOT_DECLARED:
            routes[route.path] = route
    return routes


def _flat(routes: list[Any]) -> Iterator[Any]:
    """The app's routes, those of included routers too (FastAPI keeps an included router whole)."""
    for route in routes:
        included = getattr(route, "original_router", None)
        yield from _flat(included.routes) if included is not None else (route,)


def test_every_route_that_searches_the_nodes_is_declared(tmp_path: Path, sample_parts: Partitioned,
                                                         big_parts: Partitioned) -> None:
    routes = visiting_routes(tmp_path, sample_parts, big_parts)
    undeclared = sorted(set(routes) - set(BY_PATH) - set(NOT_DECLARED))
    assert not undeclared, f"routes that search the nodes but are not in PUBLIC_OPERATIONS: {undeclared}"
    assert set(BY_PATH) <= set(routes), sorted(set(BY_PATH) - set(routes))
    for operation in PUBLIC_OPERATIONS:
        route = routes[operation.path]
        assert route.methods == {"GET"}, operation
        assert route.response_model is operation.response, operation
        assert route.dependant.query_params[0].field_info.annotation is operation.parameters \
            or _parameter_model(route) is operation.parameters, operation


def _parameter_model(route: APIRoute) -> object:
    return inspect.signature(route.endpoint).parameters["asked"].annotation.__args__[0]


async def test_the_openapi_description_says_each_operations_cost_merge_and_files(client: httpx.AsyncClient) -> None:
    paths = (await client.get("/openapi.json")).json()["paths"]
    for operation in PUBLIC_OPERATIONS:
        entry = paths[operation.path]["get"]
        assert entry["x-cowbird-cost"] == operation.cost and entry["x-cowbird-merge"] == operation.merge
        assert entry["x-cowbird-formats"] == list(operation.formats)
        assert f"Across partitions: {operation.merge}." in entry["description"]
        content = entry["responses"]["200"]["content"]
        assert ("application/json" in content) == (operation.response is not None), operation
        assert ("application/x-ndjson" in content) == (operation.stream != "no" or "ndjson" in operation.formats)
        if operation.response is not None:
            assert content["application/json"]["schema"]["$ref"].endswith("/" + operation.response.__name__)
    frequency = paths["/api/v1/frequency"]["get"]
    assert frequency["description"].startswith("How often each value occurs on the hits: CQP's")
    assert "Cost: classed by its estimated cost" in frequency["description"]
    assert set(frequency["responses"]["200"]["content"]) == {
        "application/json", "text/tab-separated-values", "text/csv", "application/x-ndjson",
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"}


def test_where_each_request_runs_follows_from_the_table() -> None:
    for operation in PUBLIC_OPERATIONS:
        assert is_background(operation.path) == (operation.cost == "background"), operation
        assert may_hand_over(operation.path) == (operation.cost == "estimated"), operation
    # classed by their estimated cost, whatever their kind: sorted pages, exports, analyses of hits
    estimated = {operation.name for operation in PUBLIC_OPERATIONS if operation.cost == "estimated"}
    assert {"query", "export", "frequency", "distribution", "dispersion", "collocations"} <= estimated
    assert all(operation.per_hit > 0 for operation in PUBLIC_OPERATIONS if operation.cost == "estimated")
    assert not is_background("/api/v1/corpora") and not is_background("/api/v1/frequencyx")
    assert not may_hand_over("/api/v1/corpora") and not may_hand_over("/api/v1/estimate")


@pytest.mark.parametrize(("name", "hits", "handled", "interactive"), [
    ("frequency", 2_897, None, True),  # 31 ms alone on the demo
    ("frequency", 73_438, None, False),  # 171 ms
    ("collocations", 125_405, None, True),  # 66 ms
    ("distribution", 19_847, None, True),  # 60 ms
    ("export", 125_405, 1_000, True),  # 1,000 lines
    ("export", 125_405, 5_000, False),  # 5,000 lines: 155 ms
])
def test_a_request_is_classed_by_its_measured_cost_not_its_kind(
    name: str, hits: int, handled: int | None, interactive: bool
) -> None:
    """An operation's cost is its query's estimated seconds, its measured fixed seconds and its
    measured seconds per hit it handles (``bench/per_hit.py``): within the interactive 0.1 s an
    analysis or an export is interactive work, beyond it background work, whatever its kind."""
    from cowbird.core.search import CostEstimate
    from cowbird.frontend.classing import class_by_cost

    operation = next(operation for operation in PUBLIC_OPERATIONS if operation.name == name)
    estimate = CostEstimate(hits, True, 0.001, 0.001, [])
    classed = class_by_cost(estimate, operation.per_hit, 0.1, handled, operation.fixed)
    assert classed.background is not interactive, classed.reason
    assert classed.seconds is not None and classed.seconds > 0.001 + operation.fixed


async def test_an_analysis_of_a_query_that_may_be_slow_is_estimated_and_refused_past_its_limit(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    """The prologue's estimate is every operation's, not only the preview's: the nodes estimate the
    query at 500 s a partition; a background query may take five times the 60 s of a node call."""
    node, front = recording(big_parts, sample_parts, tmp_path, estimate_seconds=500.0)
    async for client in front:
        for path in ("/api/v1/frequency", "/api/v1/distribution", "/api/v1/collocations", "/api/v1/dispersion"):
            extra = {"by": "word"} if path == "/api/v1/frequency" else {"by": "text_genre"} \
                if path == "/api/v1/distribution" else {}
            body = assert_problem(await client.get(path, params={**WIDE, **extra}), 400, "limit_exceeded")
            assert "estimated to take 500 s" in body["detail"], (path, body)
            assert "more than the 300 s a background query may take" in body["detail"], (path, body)
        assert node.priorities("/v1/estimate") == {None}
        for operation in ("/v1/frequency", "/v1/distribution", "/v1/cooccurrence", "/v1/dispersion", "/v1/count"):
            assert not node.priorities(operation), operation  # no node ran any of them


async def test_an_analysis_estimated_within_the_background_limit_runs(
    sample_parts: Partitioned, big_parts: Partitioned, tmp_path: Path
) -> None:
    """Estimated at 200 s a partition: past what a preview may take (60 s: refused), within what
    background work may (300 s): the frequency list runs, as background work."""
    node, front = recording(big_parts, sample_parts, tmp_path, estimate_seconds=200.0)
    async for client in front:
        assert_problem(await client.get("/api/v1/query", params=WIDE), 400, "limit_exceeded")
        counted = await client.get("/api/v1/frequency", params={**WIDE, "by": "word"})
        assert counted.status_code == 200 and counted.json()["complete"], counted.text
        assert node.priorities("/v1/frequency") == {"background"}


async def test_every_operation_expands_a_saved_subcorpus_the_same_way(client: httpx.AsyncClient) -> None:
    """The prologue expands ``subcorpus=ID`` for each operation: an unknown one is refused alike."""
    given = {"corpus": "sample", "q": "the", "headword": "house", "reference": "sample", "by": "text_genre",
             "other": "home", "subcorpus": "nosuchthing"}
    for operation in PUBLIC_OPERATIONS:
        asked = {name: value for name, value in given.items() if name in operation.parameters.model_fields}
        assert "subcorpus" in asked, operation
        answer = await client.get(operation.path, params=asked)
        assert answer.status_code in (400, 404), (operation, answer.status_code, answer.text[:200])
        assert "nosuchthing" in answer.json()["detail"], (operation, answer.json())
