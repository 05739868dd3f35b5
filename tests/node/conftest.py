"""Node fixtures: apps over the sample corpus and a synthetic 60,000-token corpus, in-process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from backend_node.app import create_app
from backend_node.engines.native.engine import NativeEngine
from backend_node.settings import NodeSettings
from backend_node.store.encoder import EncodeOptions, Encoder
from backend_node.store.registry import parse_s_declaration

TOKEN = "test-token-0123456789abcdef"


@pytest.fixture(scope="session")
def big_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``big``: 60 texts of 100 sentences of 10 tokens (w0..w99), for streams and slow queries."""
    base = tmp_path_factory.mktemp("big")
    lines = []
    for t in range(60):
        lines.append(f'<text id="t{t}" genre="{"news" if t % 2 else "blog"}">')
        for s in range(100):
            lines.append("<s>")
            lines += [f"w{(t * 7 + s * 3 + k) % 100}\tP{k % 5}" for k in range(10)]
            lines.append("</s>")
        lines.append("</text>")
    source = base / "big.vrt"
    source.write_text("\n".join(lines) + "\n")
    Encoder(EncodeOptions(source, base / "data", base / "registry" / "big", ["word", "pos"],
                          [parse_s_declaration("text:0+id+genre"), parse_s_declaration("s:0")], charset="utf8",
                          xml=True, skip_blank=True, strip_blanks=True)).run()
    return base / "registry"


def node_settings(registry: Path, **extra: object) -> NodeSettings:
    return NodeSettings(registry=registry, token=TOKEN, **extra)  # type: ignore[arg-type]


def make_app(sample_registry: Path, big_registry: Path, **extra: object) -> FastAPI:
    engines = {
        "sample": NativeEngine.open(sample_registry, "sample"),
        "big": NativeEngine.open(big_registry, "big"),
    }
    return create_app(node_settings(sample_registry, **extra), engines=engines)


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
