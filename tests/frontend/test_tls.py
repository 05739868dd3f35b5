"""TLS between the front end and a node: the node serves HTTPS with a certificate of a private CA
(made here with trustme); the front end verifies it against node_ca_file, and refuses a node
whose certificate does not chain to it."""

from __future__ import annotations

import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path

import httpx
import pytest
import trustme

from cowbird.frontend import CorpusConfig, FrontendSettings, create_app
from cowbird.frontend.settings import NodeAccess
from tests.frontend.conftest import NODE_TOKEN, Partitioned, api_account
from tests.support import free_ports

pytestmark = [pytest.mark.anyio, pytest.mark.e2e]


@pytest.fixture(scope="module")
def tls_node(sample_parts: Partitioned, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    base = tmp_path_factory.mktemp("tls")
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    cert.private_key_and_cert_chain_pem.write_to_path(str(base / "node.pem"))
    ca.cert_pem.write_to_path(str(base / "ca.pem"))
    (base / "node.token").write_text(NODE_TOKEN + "\n")
    port = free_ports(1)[0]
    pem = str(base / "node.pem")
    process = subprocess.Popen([sys.executable, "-m", "cowbird", "node", "serve", "--registry",
                                str(sample_parts.registry), "--port", str(port), "--token-file",
                                str(base / "node.token"), "--tls-cert", pem, "--tls-key", pem,
                                "--log-level", "warning"])
    url = f"https://127.0.0.1:{port}"
    trust = ssl.create_default_context(cafile=str(base / "ca.pem"))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", verify=trust, timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.2)
    yield url, base / "ca.pem"
    process.terminate()
    process.wait(10)


async def preview(settings: FrontendSettings) -> httpx.Response:
    app = create_app(settings)
    async with AsyncExitStack() as stack:
        await stack.enter_async_context(app.router.lifespan_context(app))
        client = await stack.enter_async_context(
            httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://front"))
        return await client.get("/api/v1/query", params={"corpus": "sample", "q": "house"})


async def test_the_front_end_verifies_the_nodes_certificate(sample_parts: Partitioned, tls_node: tuple[str, Path],
                                                            tmp_path: Path) -> None:
    url, ca = tls_node
    corpus = CorpusConfig(name="sample", manifest=sample_parts.manifest, nodes={pid: [url] for pid in sample_parts.ids})
    common = {"corpora": [corpus], "nodes": NodeAccess(token=NODE_TOKEN), "allowed_hosts": ["front"],
              "database_file": api_account(tmp_path / "accounts.sqlite3")}  # fmt: skip
    verified = await preview(FrontendSettings(**{**common, "nodes": NodeAccess(token=NODE_TOKEN, ca_file=ca)}))  # type: ignore[arg-type]
    assert verified.status_code == 200 and verified.json()["total"] == 3 and verified.json()["complete"]
    untrusted = await preview(FrontendSettings(**common))  # type: ignore[arg-type]  # the system CAs only
    assert untrusted.status_code == 503 and "unreachable" in untrusted.json()["detail"]
