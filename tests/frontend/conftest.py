"""Front-end fixtures: the sample corpus in 3 partitions and a 60,000-token corpus in 3 partitions,
served by in-process node apps that the front end reaches through a host-routing transport."""

from __future__ import annotations

import atexit
import functools
import json
import shutil
import sqlite3
import tempfile
from collections.abc import AsyncIterator, Mapping
from contextlib import AsyncExitStack, closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from cowbird.engines import QueryEngine
from cowbird.engines.native import NativeEngine
from cowbird.frontend import CorpusConfig, FrontendSettings, create_app
from cowbird.frontend.accounts import Accounts, Database, sqlite_url
from cowbird.frontend.settings import NodeAccess
from cowbird.node import NodeSettings
from cowbird.node import create_app as create_node
from cowbird.store import EncodeOptions, Encoder, parse_s_declaration
from tests.clock import FakeClock
from tests.support import JsonObject, ewt_options, sample_options, synthetic_options, tricky_options

NODE_TOKEN = "node-token-0123456789abcdef"
API_TOKEN = "api-token-0123456789abcdef"


@dataclass
class Partitioned:
    registry: Path
    manifest: Path
    ids: list[str]


def encode_parts(options: EncodeOptions, partitions: int | None = None) -> Partitioned:
    """The corpus ``options`` encode, in the registry folder of its registry file; in ``partitions``
    partitions when given."""
    result = Encoder(options).run()
    assert result.manifest is not None
    assert partitions is None or len(result.partitions) == partitions, result.partitions
    return Partitioned(options.registry_file.parent, result.manifest, [p.id for p in result.partitions])


@functools.cache
def engine(registry: Path, partition: str) -> NativeEngine:
    """One engine per partition for the whole test session: each holds its corpus files open (memory
    maps), and a fresh one per test would run the process out of file descriptors."""
    return NativeEngine.open(registry, partition)


@pytest.fixture(scope="session")
def sample_parts(tmp_path_factory: pytest.TempPathFactory) -> Partitioned:
    base = tmp_path_factory.mktemp("sample-parts")
    return encode_parts(sample_options(base / "data", base / "registry" / "sample", partition_tokens=40))


@pytest.fixture(scope="session")
def big_parts(tmp_path_factory: pytest.TempPathFactory) -> Partitioned:
    base = tmp_path_factory.mktemp("big-parts")
    return encode_parts(synthetic_options(base, partition_tokens=20_000))


@pytest.fixture(scope="session")
def ewt_parts(tmp_path_factory: pytest.TempPathFactory) -> Partitioned:
    """The reference corpus EWT in two partitions (skips, or fails under CI, without the reference)."""
    base = tmp_path_factory.mktemp("ewt-parts")
    return encode_parts(ewt_options(base / "data", base / "registry" / "ewt", partition_tokens=130_000), 2)


@pytest.fixture(scope="session")
def tricky_parts(tmp_path_factory: pytest.TempPathFactory) -> Partitioned:
    """The in-repo corpus ``tests/fixtures/tricky.vrt`` (12,762 tokens) in two partitions: the download
    and analysis fidelity tests need no ``../shared``."""
    base = tmp_path_factory.mktemp("tricky-parts")
    return encode_parts(tricky_options(base / "data", base / "registry" / "tricky", partition_tokens=7_000), 2)


def tiny_corpus(base: Path, name: str, vrt_text: str, text: str = "text:0+id+url") -> Partitioned:
    """A corpus of a few tokens (word only; <text id url> — or the ``text`` declaration given — and
    <s>), encoded in one partition."""
    vrt = base / f"{name}.vrt"
    vrt.write_text(vrt_text, encoding="utf-8")
    options = EncodeOptions(
        input=vrt, data_dir=base / "data", registry_file=base / "registry" / name, p_attributes=["word"],
        s_attributes=[parse_s_declaration(text), parse_s_declaration("s:0")], charset="utf8",
        xml=True, skip_blank=True, strip_blanks=True, partition_tokens=1_000,
    )  # fmt: skip
    return encode_parts(options)


async def ewt_client(parts: Partitioned, name: str = "ewt", **extra: Any) -> AsyncIterator[httpx.AsyncClient]:
    """A front end over ``parts`` served by one in-process node (``extra``: further settings, of
    whatever types FrontendSettings's fields take: pydantic checks them; ``sketch_grammar``: the
    corpus's)."""
    engines: dict[str, QueryEngine] = {pid: engine(parts.registry, pid) for pid in parts.ids}
    node = create_node(NodeSettings(registry=parts.registry, token=NODE_TOKEN), engines=engines)
    corpus = CorpusConfig(name=name, title=name.upper(), manifest=parts.manifest,
                          nodes={pid: ["http://node-a"] for pid in parts.ids},
                          sketch_grammar=extra.pop("sketch_grammar", None))
    extra.setdefault("database_file", api_account(parts.registry.parent / "accounts.sqlite3"))
    settings = FrontendSettings(corpora=[corpus], nodes=NodeAccess(token=NODE_TOKEN), allowed_hosts=["front"],
                                **extra)
    async for c in front_client(settings, {"node-a": node}):
        yield c


class HostRouter(httpx.AsyncBaseTransport):
    """Send each request to the transport registered for its host (like httpx's mounts); with a fake
    ``clock``, each request counts as work at it (``FakeClock.working``)."""

    def __init__(self, routes: dict[str, httpx.AsyncBaseTransport], clock: FakeClock | None = None) -> None:
        self.routes = routes
        self.clock = clock

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        transport = self.routes.get(request.url.host)
        if transport is None:
            raise httpx.ConnectError(f"no route to {request.url.host}", request=request)
        if self.clock is None:
            return await transport.handle_async_request(request)
        with self.clock.working():
            return await transport.handle_async_request(request)


def api_account(database_file: Path) -> Path:
    """An account database with the user ``api`` (approved, api_bulk) owning ``API_TOKEN``: a new one
    is a copy of one made once per test process (migrating a database takes a fifth of a second,
    and most front-end tests make one)."""
    if not database_file.exists():
        with closing(sqlite3.connect(_api_account_once())) as made, closing(sqlite3.connect(database_file)) as copy:
            made.backup(copy)
        return database_file
    return _add_api_account(database_file)


@functools.cache
def _api_account_once() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="cowbird-test-accounts-"))
    atexit.register(shutil.rmtree, folder, True)
    return _add_api_account(folder / "accounts.sqlite3")


def _add_api_account(database_file: Path) -> Path:
    database = Database(sqlite_url(database_file))
    database.upgrade()
    accounts = Accounts(database)
    with database.session() as session:
        if accounts.users.find(session, "api") is None:
            user, _ = accounts.users.add(session, "api", "api@example.org", "tests")
            accounts.users.grant(session, user, "api_bulk", "tests")
            accounts.tokens.import_secret(session, user, "tests", API_TOKEN)
    database.close()
    return database_file


def front_settings(sample: Partitioned, big: Partitioned, tmp: Path, **extra: Any) -> FrontendSettings:
    """The front end's settings over the sample and big corpora (``extra``: further settings, of
    whatever types FrontendSettings's fields take: pydantic checks them)."""
    corpora = [
        CorpusConfig(name="sample", title="Sample corpus", language="en", manifest=sample.manifest,
                     nodes={sample.ids[0]: ["http://node-a"], sample.ids[1]: ["http://node-a"],
                            sample.ids[2]: ["http://node-b"]}),
        CorpusConfig(name="big", title="Big", manifest=big.manifest,
                     nodes={big.ids[0]: ["http://node-a"], big.ids[1]: ["http://node-b"], big.ids[2]: ["http://node-b"]}),
    ]
    extra.setdefault("allowed_hosts", ["front"])
    extra.setdefault("database_file", api_account(tmp / "accounts.sqlite3"))
    return FrontendSettings(corpora=corpora, nodes=NodeAccess(token=NODE_TOKEN), **extra)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def front_client(
    settings: FrontendSettings, nodes: dict[str, FastAPI], extra: Mapping[str, httpx.AsyncBaseTransport] | None = None,
    clock: FakeClock | None = None,
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of a front end over ``nodes`` (in-process apps) and ``extra`` (other transports, by
    host); ``clock``: a fake clock its node calls and health checks are timed on, which sees the
    calls at work (``tests/clock.py``)."""
    async with AsyncExitStack() as stack:
        for app in nodes.values():
            await stack.enter_async_context(app.router.lifespan_context(app))
        routes: dict[str, httpx.AsyncBaseTransport] = {h: httpx.ASGITransport(app=a) for h, a in nodes.items()}
        routes.update(extra or {})
        front = create_app(settings, transport=HostRouter(routes, clock))
        await stack.enter_async_context(front.router.lifespan_context(front))
        if clock is not None:
            failover = front.state.frontend.nodes.failover
            failover.clock = failover.health.clock = clock
        client = await stack.enter_async_context(
            httpx.AsyncClient(transport=httpx.ASGITransport(app=front), base_url="http://front")
        )
        yield client


@pytest.fixture
def nodes(sample_parts: Partitioned, big_parts: Partitioned) -> dict[str, FastAPI]:
    return {
        "node-a": _combined(sample_parts, big_parts, [0, 1], [0]),
        "node-b": _combined(sample_parts, big_parts, [2], [1, 2]),
    }


def _combined(sample: Partitioned, big: Partitioned, sample_idx: list[int], big_idx: list[int]) -> FastAPI:
    engines: dict[str, QueryEngine] = {sample.ids[i]: engine(sample.registry, sample.ids[i]) for i in sample_idx}
    engines |= {big.ids[i]: engine(big.registry, big.ids[i]) for i in big_idx}
    return create_node(NodeSettings(registry=sample.registry, token=NODE_TOKEN, max_concurrent_queries=16),
                       engines=engines)


@pytest.fixture
async def client(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    async for c in front_client(front_settings(sample_parts, big_parts, tmp_path), nodes):
        yield c


def manifest_of(parts: Partitioned) -> JsonObject:
    manifest: JsonObject = json.loads(parts.manifest.read_text())
    return manifest


# -- tests/fixtures/tricky.vrt in one partition and in five, behind a front end ----------------------

TRICKY = "tricky"


def _encode(base: Path, partition_tokens: int) -> Partitioned:
    return encode_parts(tricky_options(base / "data", base / "registry" / TRICKY, partition_tokens=partition_tokens))


@pytest.fixture(scope="module")
def tricky_one(tmp_path_factory: pytest.TempPathFactory) -> Partitioned:
    parts = _encode(tmp_path_factory.mktemp("tricky-one"), 1_000_000)
    assert len(parts.ids) == 1
    return parts


@pytest.fixture(scope="module")
def tricky_five(tmp_path_factory: pytest.TempPathFactory) -> Partitioned:
    parts = _encode(tmp_path_factory.mktemp("tricky-five"), 2_800)  # texts of up to 754 tokens
    assert len(parts.ids) == 5
    return parts


@pytest.fixture
async def one(tricky_one: Partitioned) -> AsyncIterator[httpx.AsyncClient]:
    async for c in ewt_client(tricky_one, TRICKY):
        yield c


@pytest.fixture
async def five(tricky_five: Partitioned) -> AsyncIterator[httpx.AsyncClient]:
    async for c in ewt_client(tricky_five, TRICKY):
        yield c


async def assert_refused_saying(client: httpx.AsyncClient, path: str, params: Mapping[str, Any],
                                cases: Mapping[tuple[tuple[str, str], ...], str]) -> None:
    """Each case's parameters over ``params``: ``path`` refuses them (400, 404 or 422) with an answer
    holding the case's words."""
    for asked, said in cases.items():
        answer = await client.get(path, params={**params, **dict(asked)})
        assert answer.status_code in (400, 404, 422), answer.text
        assert said in answer.text, answer.text
