"""``POST /v1/registry/reload``: a node opens partitions new in its registry directory and closes
those whose registry file is gone, without a restart; the node token is needed."""

from __future__ import annotations

import shutil
from pathlib import Path

import httpx
import pytest

from cowbird.node import create_app
from tests.node.conftest import TOKEN, node_settings

pytestmark = pytest.mark.anyio


@pytest.mark.slow  # 1.8 s here (make quick leaves it out)
async def test_reload_opens_new_and_closes_gone_partitions(big_registry: Path, tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    registry.mkdir()
    app = create_app(node_settings(registry))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(transport=transport, base_url="http://node", headers=headers) as client:
            assert (await client.get("/v1/partitions")).json()["total"] == 0
            async with httpx.AsyncClient(transport=transport, base_url="http://node") as anonymous:
                refused = await anonymous.post("/v1/registry/reload")
                assert refused.status_code == 401
            shutil.copy(big_registry / "big", registry / "big")
            answer = await client.post("/v1/registry/reload")
            assert answer.status_code == 200, answer.text
            served = answer.json()
            assert [p["id"] for p in served["data"]] == ["big"]
            assert served["data"][0]["size"] == 60_000
            counted = await client.post("/v1/count", json={"partition": "big", "query": '"w1"'})
            assert counted.status_code == 200, counted.text
            assert counted.json()["total"] == 600  # w0..w99 in turn over 60,000 tokens
            again = await client.post("/v1/registry/reload")  # nothing new: the same engine is kept
            assert [p["id"] for p in again.json()["data"]] == ["big"]
            (registry / "big").unlink()
            gone = await client.post("/v1/registry/reload")
            assert gone.json() == {"data": [], "total": 0}
            missing = await client.post("/v1/count", json={"partition": "big", "query": '"w1"'})
            assert missing.status_code == 404
            assert "big" in missing.json()["detail"]


@pytest.mark.slow  # 2.1 s here (make quick leaves it out)
async def test_reload_of_a_broken_registry_file_changes_nothing(big_registry: Path, tmp_path: Path) -> None:
    registry = tmp_path / "registry"
    registry.mkdir()
    shutil.copy(big_registry / "big", registry / "big")
    app = create_app(node_settings(registry))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(transport=transport, base_url="http://node", headers=headers) as client:
            text = (big_registry / "big").read_text(encoding="utf-8")
            (registry / "broken").write_text(text.replace("ID   big", "ID   broken").replace(
                "ID big", "ID broken").replace(str(big_registry.parent), str(tmp_path / "nowhere")),
                encoding="utf-8")
            answer = await client.post("/v1/registry/reload")
            assert answer.status_code >= 400, answer.text
            assert "broken" in answer.text
            served = await client.get("/v1/partitions")
            assert [p["id"] for p in served.json()["data"]] == ["big"]
