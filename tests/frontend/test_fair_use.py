"""Fair use: queries at once and rows exported per day, per user or per address, with what is left
in the answer's headers and on the account page; counted in the account database (SQLite here;
``test_shared_state.py`` runs several front-end processes on PostgreSQL)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from cowbird.engines.native import engine as native_engine
from cowbird.frontend.accounts import Database, sqlite_url
from cowbird.frontend.fair_use import FairUse, Limits
from cowbird.frontend.viewer import ANONYMOUS, Viewer
from tests.clock import FakeClock
from tests.frontend.conftest import API_TOKEN, Partitioned, front_client, front_settings

pytestmark = pytest.mark.anyio


@pytest.fixture
async def strict(sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
                 ) -> AsyncIterator[httpx.AsyncClient]:
    settings = front_settings(sample_parts, big_parts, tmp_path, anonymous_rows_per_day=5, anonymous_running_queries=1,
                              bulk_rows_per_day=1_000, queue_seconds=0.2)
    async for client in front_client(settings, nodes):
        yield client


def tracker(client: httpx.AsyncClient) -> FairUse:
    app: FastAPI = client._transport.app  # type: ignore[attr-defined]
    fair_use: FairUse = app.state.frontend.fair_use
    return fair_use


@pytest.mark.slow  # 1.3 s here (make quick leaves it out)
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
    assert fair_use.usage("address:127.0.0.1").running == 0  # every slot given back, exports included
    await strict.get("/api/v1/export", params={"corpus": "sample", "q": "house", "limit": 1})
    assert fair_use.usage("address:127.0.0.1").running == 0


async def test_estimates_are_queries_at_once_and_paid_for(strict: httpx.AsyncClient) -> None:
    """``/api/v1/estimate`` takes one of the viewer's places (429 when they run their limit) and its
    nodes' time is counted against the day, as any query's."""
    fair_use, key = tracker(strict), "address:127.0.0.1"
    params = {"corpus": "sample", "q": "house"}
    with fair_use.running(ANONYMOUS, key):
        busy = await strict.get("/api/v1/estimate", params=params)
        assert busy.status_code == 429 and "1 queries at once already" in busy.json()["detail"]
    before = fair_use.usage(key).node_seconds
    estimate = await strict.get("/api/v1/estimate", params=params)
    assert estimate.status_code == 200 and estimate.json()["hits"] is not None
    usage = fair_use.usage(key)
    assert usage.node_seconds > before and usage.running == 0


async def test_a_query_that_times_out_is_paid_for(sample_parts: Partitioned, big_parts: Partitioned,
                                                  nodes: dict[str, FastAPI], tmp_path: Path) -> None:
    """A node that works on a call until the front end gives up (``[nodes] timeout``) is paid for:
    the time waited on each partition is counted against the viewer's day, as is an export's time."""
    settings = front_settings(sample_parts, big_parts, tmp_path, node_timeout=0.5)
    for pid in sample_parts.ids:
        settings.corpora[0].nodes[pid] = ["http://slow"]
    clock = FakeClock()

    async def hanging(request: httpx.Request) -> httpx.Response:
        await clock.hang()

    async for client in front_client(settings, nodes, {"slow": httpx.MockTransport(hanging)}, clock):
        fair_use, key = tracker(client), "address:127.0.0.1"
        answer = await clock.drive(client.get("/api/v1/query", params={"corpus": "sample", "q": "house"}))
        assert answer.status_code == 504, answer.text
        spent = fair_use.usage(key).node_seconds
        assert spent == pytest.approx(3 * 0.5), spent  # three partitions, each waited on for 0.5 s
        export = await client.get("/api/v1/export", params={"corpus": "big", "q": '[pos="P1"]', "syntax": "cqp",
                                                            "limit": 2_000})
        assert export.status_code == 200 and len(export.text.splitlines()) == 2_001
        assert fair_use.usage(key).node_seconds > spent  # the export's streams' time


async def test_a_query_that_just_ran_out_of_time_is_not_run_again(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    """Sent again as it was (same corpus, CQP, filters), a query that ran out of time on every partition
    is refused with the reason before a node works on it; another query (or another filter) runs."""
    settings = front_settings(sample_parts, big_parts, tmp_path, node_timeout=0.3)
    for pid in sample_parts.ids:
        settings.corpora[0].nodes[pid] = ["http://slow"]
    calls: list[str] = []
    clock = FakeClock()

    async def hanging(request: httpx.Request) -> httpx.Response:  # alive (it answers its health check), slow
        if request.url.path == "/health":
            return httpx.Response(200, json={"status": "ok"})
        calls.append(request.url.path)
        await clock.hang()

    async for client in front_client(settings, nodes, {"slow": httpx.MockTransport(hanging)}, clock):
        params = {"corpus": "sample", "q": "house"}
        assert (await clock.drive(client.get("/api/v1/query", params=params))).status_code == 504
        asked = len(calls)
        again = await client.get("/api/v1/frequency", params={**params, "by": "word"})
        assert again.status_code == 400 and again.json()["code"] == "limit_exceeded"
        assert "ran out of time" in again.json()["detail"] and "on every partition" in again.json()["detail"]
        assert 0 < int(again.headers["retry-after"]) <= 300 and len(calls) == asked  # no node asked
        other = await clock.drive(client.get("/api/v1/query", params={**params, "filter": "text_genre~news"}))
        assert other.status_code == 504 and len(calls) > asked


@pytest.fixture
def database(tmp_path: Path) -> Iterator[Database]:
    db = Database(sqlite_url(tmp_path / "accounts.sqlite3"))
    db.upgrade()
    yield db
    db.close()


def test_limits_by_kind_of_viewer(database: Database) -> None:
    from cowbird.frontend.fair_use import Limits

    fair_use = FairUse(anonymous=Limits(1, 10), user=Limits(2, 20), bulk=Limits(3, 30), database=database)
    assert fair_use.limits(ANONYMOUS).rows_per_day == 10
    assert fair_use.limits(Viewer("ada")).running == 2 and fair_use.limits(Viewer("ada", api_bulk=True)).running == 3


@pytest.mark.slow  # 6.5 s here (make quick leaves it out)
async def test_a_day_of_node_time(sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI],
                                  tmp_path: Path) -> None:
    """A query costs what the nodes spent on it (their answers' elapsed_ms), counted per viewer and day.
    When what is left could not pay for the longest query (the deadline on every partition), a query
    is estimated first and refused before it runs if its estimate is more than is left; once the day's
    node time is spent, every query is refused until midnight (UTC)."""
    settings = front_settings(sample_parts, big_parts, tmp_path, anonymous_node_seconds_per_day=1000, deadline=100)
    async for client in front_client(settings, nodes):
        params = {"corpus": "sample", "q": "house"}
        first = await client.get("/api/v1/query", params=params)
        assert first.status_code == 200
        fair_use, key = tracker(client), "address:127.0.0.1"
        seconds = fair_use.usage(key).node_seconds
        assert seconds > 0 and float(first.headers["x-cowbird-node-seconds-left"]) == pytest.approx(1000 - seconds,
                                                                                                   abs=0.1)
        unbounded = {"corpus": "big", "q": "[]{3,} []{500}", "syntax": "cqp"}
        with pytest.MonkeyPatch.context() as patch:  # unread in an estimate (an idle machine reads a range)
            patch.setattr(native_engine, "ESTIMATE_SECONDS", 1e-9)
            refused = await client.get("/api/v1/query", params=unbounded)  # refused as such, however much is left
        assert refused.status_code == 400 and "could not be estimated" in refused.json()["detail"]
        seconds = fair_use.usage(key).node_seconds  # its estimate was paid for
        fair_use.spend(key, 1000 - 0.5 - seconds)  # half a second left: less than a query may cost (100 s × 3)
        cheap = await client.get("/api/v1/query", params=params)  # estimated at milliseconds: it runs
        assert cheap.status_code == 200 and cheap.json()["total"] == first.json()["total"]
        before = fair_use.usage(key).node_seconds
        # estimated at seconds a partition (bounded: it is read in part), more than the half second left
        hopeless = {"corpus": "big", "q": '[] []{0,400} [word="w7"] [word="w7"]', "syntax": "cqp"}
        before = fair_use.usage(key).node_seconds
        for route in ("/api/v1/query", "/api/v1/export", "/api/v1/frequency"):
            refused = await client.get(route, params={**hopeless, "stream": 1} if route.endswith("query") else hopeless)
            assert refused.status_code == 429, (route, refused.json()["detail"])
            detail = refused.json()["detail"]
            estimated = "this query is estimated to take" in detail and "of the nodes' time, more than" in detail
            spent = "queries took today's 1,000 seconds of the nodes' time" in detail  # the estimates were paid for
            assert estimated or (spent and route != "/api/v1/query"), (route, detail)
            assert 0 < int(refused.headers["retry-after"]) <= 86_401
        after = fair_use.usage(key)
        # refused before any node ran it: only the estimates were paid for — on a loaded machine they take
        # seconds, while one run of the query would be up to its deadline on each of 3 partitions (300 s)
        assert before < after.node_seconds < before + 100.0 and after.held == 0 and after.running == 0
        for route, asked in (("/api/v1/wordlist", {"corpus": "sample"}),
                             ("/api/v1/keywords", {"corpus": "sample", "filter": "text_genre~news",
                                                   "reference_filter": "text_genre!~news"})):
            listed = await client.get(route, params=asked)  # cannot be estimated: needs 300 s left at most
            assert listed.status_code == 429 and "cannot be estimated before it runs" in listed.json()["detail"]
        fair_use.spend(key, 1000.0 - before)
        over = await client.get("/api/v1/query", params={**params, "stream": 1})
        assert over.status_code == 429 and "seconds of the nodes' time" in over.json()["detail"]
        token = await client.get("/api/v1/query", params={**params, "token": API_TOKEN})
        assert token.status_code == 200 and token.headers["x-cowbird-node-seconds-left"] not in ("0.0", "unlimited")


async def test_the_estimate_is_held_while_a_query_runs(database: Database) -> None:
    """Two queries side by side cannot spend the same seconds: the first's estimate is held (counted
    as spent) while it runs, and replaced by the time it took when it ends."""
    from cowbird.frontend.fair_use import Limits

    fair_use = FairUse(anonymous=Limits(5, 10, node_seconds_per_day=10.0), user=Limits(2, 20), bulk=Limits(3, 30),
                       database=database)
    asked: list[str] = []

    async def estimate() -> float:
        asked.append("estimate")
        return 6.0

    key = "address:10.0.0.1"
    hold = await fair_use.afford(ANONYMOUS, key, 100.0, estimate)  # 10 left < 100: asked, and it fits
    assert hold == 6.0 and asked == ["estimate"]
    with fair_use.running(ANONYMOUS, key, hold) as meter:
        assert fair_use.node_seconds_left(ANONYMOUS, key) == 4.0
        with pytest.raises(Exception, match="estimated to take 6.0 seconds of the nodes' time, more than the 4.0 left"):
            await fair_use.afford(ANONYMOUS, key, 100.0, estimate)
        meter.add(2500.0)  # it took 2.5 s
    assert fair_use.node_seconds_left(ANONYMOUS, key) == 7.5 and fair_use.usage(key).held == 0
    assert await fair_use.afford(ANONYMOUS, key, 5.0, estimate) == 0.0 and len(asked) == 2  # 7.5 >= 5: not asked


async def test_a_streamed_preview_costs_its_node_time_too(client: httpx.AsyncClient) -> None:
    fair_use = tracker(client)
    streamed = await client.get("/api/v1/query", params={"corpus": "sample", "q": "old", "stream": 1})
    assert streamed.status_code == 200 and streamed.text.splitlines()[-1].startswith('{"event":"result"')
    usage = fair_use.usage("address:127.0.0.1")
    assert usage.node_seconds > 0 and usage.running == 0


def test_a_request_goes_on_uncounted_when_the_account_database_fails(
    database: Database, caplog: pytest.LogCaptureFixture
) -> None:
    """The counts' tables gone (as a full disk or a database that went away makes every statement
    fail): a query runs, an export is let through and refunded, the headers still answer — and each
    thing not counted is an error in the log."""
    fair_use = FairUse(anonymous=Limits(1, 10), user=Limits(2, 20), bulk=Limits(3, 30), database=database)
    with database.engine.begin() as connection:
        connection.exec_driver_sql("DROP TABLE running_queries")
        connection.exec_driver_sql("DROP TABLE fair_use_days")
    viewer, key = ANONYMOUS, "address:192.0.2.1"
    with caplog.at_level(logging.ERROR, logger="cowbird.fair_use"):
        with fair_use.running(viewer, key) as meter:
            meter.add(500.0)
        fair_use.charge(viewer, key, 5)
        fair_use.refund(key, 5)
        assert fair_use.headers(viewer, key)["X-Cowbird-Export-Rows-Left"] == "10"
    logged = [r.getMessage() for r in caplog.records]
    assert any("a query not counted, the account database failed" in m for m in logged)
    assert any("an export of 5 rows not counted" in m for m in logged)
