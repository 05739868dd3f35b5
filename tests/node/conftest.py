"""Node fixtures: apps over the sample corpus and a synthetic 60,000-token corpus, in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from cowbird.engines import QueryEngine
from cowbird.engines.native import NativeEngine
from cowbird.node import NodeSettings, create_app
from cowbird.store import Encoder
from tests.support import synthetic_options

TOKEN = "test-token-0123456789abcdef"


@pytest.fixture(scope="session")
def big_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``big``: 60 texts of 100 sentences of 10 tokens (w0..w99), for streams and slow queries."""
    base = tmp_path_factory.mktemp("big")
    Encoder(synthetic_options(base)).run()
    return base / "registry"


def node_settings(registry: Path, **extra: object) -> NodeSettings:
    return NodeSettings(registry=registry, token=TOKEN, **extra)  # type: ignore[arg-type]


def make_app(sample_registry: Path, big_registry: Path, **extra: object) -> FastAPI:
    settings = node_settings(sample_registry, **extra)
    engines: dict[str, QueryEngine] = {
        "sample": NativeEngine.open(sample_registry, "sample", settings.engine_options()),
        "big": NativeEngine.open(big_registry, "big", settings.engine_options()),
    }
    return create_app(settings, engines=engines)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def client_for(app: FastAPI, token: str | None = TOKEN) -> AsyncIterator[httpx.AsyncClient]:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://node", headers=headers) as client:
            yield client


@pytest.fixture
async def client(sample_registry: Path, big_registry: Path) -> AsyncIterator[httpx.AsyncClient]:
    async for c in client_for(make_app(sample_registry, big_registry)):
        yield c
