"""The workshop's published corpora join the front end's catalogue without a restart: a row in
published_corpora and the counter counted up, and within 2 s the corpus is listed and searchable,
its access rights hold, and a deleted one is gone."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import delete, update

from cowbird.frontend import FrontendSettings
from cowbird.frontend.accounts import Database
from cowbird.frontend.accounts.models import PublishedCorpus
from cowbird.frontend.workshop import count_up
from tests.frontend.conftest import API_TOKEN, Partitioned, front_client, front_settings

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def listed(client: httpx.AsyncClient, name: str, present: bool, **headers: str) -> float:
    """Seconds until ``name`` is (or is no longer) listed in /api/v1/corpora; fails after 2.5 s."""
    started = time.monotonic()
    while True:
        answer = await client.get("/api/v1/corpora", headers=headers)
        names = [c["name"] for c in answer.json()["data"]]
        if (name in names) == present:
            return time.monotonic() - started
        assert time.monotonic() - started < 2.5, f"{name} listed={not present} after 2.5 s: {names}"
        await asyncio.sleep(0.1)


async def test_published_corpus_joins_and_leaves_without_restart(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    settings = front_settings(sample_parts, big_parts, tmp_path)
    settings = FrontendSettings.model_validate(
        settings.model_dump() | {"corpora": [c.model_dump() for c in settings.corpora if c.name == "sample"]})
    database = Database(settings.database_address())
    partitions = {big_parts.ids[0]: ["http://node-a"], big_parts.ids[1]: ["http://node-b"],
                  big_parts.ids[2]: ["http://node-b"]}
    bearer = {"Authorization": f"Bearer {API_TOKEN}"}
    async for client in front_client(settings, nodes):
        assert (await client.get("/api/v1/query", params={"corpus": "made", "q": "w1"})).status_code == 404
        with database.browser_sessions() as session:
            session.add(PublishedCorpus(name="made", title="Made in the workshop", language="en", access="public",
                                        manifest=str(big_parts.manifest), partitions=json.dumps(partitions)))
            count_up(session)
            session.commit()
        assert await listed(client, "made", True) <= 2.0
        found = await client.get("/api/v1/query", params={"corpus": "made", "q": "w1"})
        assert found.status_code == 200, found.text
        assert found.json()["total"] == 600  # w0..w99 in turn over the 60,000 tokens of big
        with database.browser_sessions() as session:  # a login corpus: invisible without one
            session.execute(update(PublishedCorpus).where(PublishedCorpus.name == "made").values(access="login"))
            count_up(session)
            session.commit()
        await listed(client, "made", False)
        hidden = await client.get("/api/v1/query", params={"corpus": "made", "q": "w1"})
        assert hidden.status_code == 404
        assert (await client.get("/api/v1/query", params={"corpus": "made", "q": "w1"},
                                 headers=bearer)).json()["total"] == 600
        with database.browser_sessions() as session:
            session.execute(delete(PublishedCorpus).where(PublishedCorpus.name == "made"))
            count_up(session)
            session.commit()
        await listed(client, "made", False, **bearer)
        assert [c["name"] for c in (await client.get("/api/v1/corpora")).json()["data"]] == ["sample"]
    database.close()
