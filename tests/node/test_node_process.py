"""A real ``cowbird node serve`` process on a loopback port, settings, and parity over HTTP."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cowbird.frontend.fanout import IDLE_SECONDS
from cowbird.node import NodeSettings
from tests.cluster import start_node
from tests.node.conftest import TOKEN
from tests.support import parity_hits, parity_queries


@pytest.fixture
def token_file(tmp_path: Path) -> Path:
    path = tmp_path / "node.token"
    path.write_text(TOKEN + "\n")
    return path


@pytest.fixture
def node(sample_registry: Path, token_file: Path) -> Iterator[str]:
    process, url = start_node(sample_registry, token_file)
    yield url
    process.terminate()
    process.wait(10)


@pytest.mark.e2e
def test_real_process_over_http(node: str) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx.get(f"{node}/health").json()["partitions"] == 1
    assert httpx.post(f"{node}/v1/count", json={"partition": "sample", "query": '"house"'}).status_code == 401
    response = httpx.post(f"{node}/v1/count", json={"partition": "sample", "query": '"house"'}, headers=headers)
    assert response.json()["total"] == 3


@pytest.mark.e2e
@pytest.mark.e2e
def test_idle_connections_outlive_the_front_ends_reuse_window(sample_registry: Path, token_file: Path) -> None:
    """The front end reuses an idle connection for up to IDLE_SECONDS; the node must not close it
    sooner, or a request can go out on a connection being closed (a read error, a failed partition)."""
    process, url = start_node(sample_registry, token_file)
    try:
        with httpx.Client(base_url=url, limits=httpx.Limits(max_connections=1, keepalive_expiry=60)) as client:
            first = client.get("/health").extensions["network_stream"].get_extra_info("client_addr")
            time.sleep(IDLE_SECONDS + 0.5)  # as long as the front end may keep it, and then some
            second = client.get("/health").extensions["network_stream"].get_extra_info("client_addr")
        assert first == second  # the same connection served both
    finally:
        process.terminate()
        process.wait(10)


@pytest.mark.e2e
def test_refuses_to_start_with_a_placeholder_token(sample_registry: Path, tmp_path: Path) -> None:
    weak = tmp_path / "weak.token"
    weak.write_text("changeme\n")
    process = subprocess.run(
        [sys.executable, "-m", "cowbird", "node", "serve", "--registry", str(sample_registry),
         "--token-file", str(weak)], capture_output=True, text=True, timeout=60,
    )
    assert process.returncode == 1
    assert "refusing to start without a real node token" in process.stderr


@pytest.mark.e2e
def test_unknown_partition_in_settings_fails_at_start(sample_registry: Path, token_file: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "cowbird", "node", "serve", "--registry", str(sample_registry),
         "--token-file", str(token_file), "--corpus", "missing"], capture_output=True, text=True, timeout=60,
    )
    assert process.returncode == 1
    assert "partition(s) missing not found in registry" in process.stderr


def test_settings_from_toml_environment_and_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "node.toml"
    config.write_text('registry = "/srv/registry"\nport = 9000\nquery_timeout = 30.0\ncorpora = ["a_p01"]\n')
    monkeypatch.setenv("COWBIRD_NODE_PORT", "9100")
    monkeypatch.setenv("COWBIRD_NODE_MAX_CONCURRENT_QUERIES", "2")
    settings = NodeSettings.load(config, host="0.0.0.0")
    assert (settings.registry, settings.port, settings.host) == (Path("/srv/registry"), 9100, "0.0.0.0")
    assert (settings.query_timeout, settings.max_concurrent_queries, settings.corpora) == (30.0, 2, ["a_p01"])
    with pytest.raises(ValueError, match="does not exist"):
        NodeSettings.load(tmp_path / "missing.toml")
    # relative paths in the file are relative to the file, as in the front end's configuration
    (tmp_path / "conf").mkdir()
    config = tmp_path / "conf" / "node.toml"
    config.write_text('registry = "../registry"\ntoken_file = "node.token"\nregex_time_budget = 90\n')
    monkeypatch.delenv("COWBIRD_NODE_PORT")
    settings = NodeSettings.load(config)
    assert settings.registry == tmp_path / "registry"
    assert settings.token_file == tmp_path / "conf" / "node.token"
    assert settings.engine_options().regex_seconds == 60.0  # never longer than the query timeout


@pytest.mark.e2e
def test_parity_queries_over_http(token_file: Path, reference: Path) -> None:
    process, url = start_node(reference / "cwb" / "registry", token_file, "--corpus", "ewt")
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        for param in parity_queries():
            query_id, query = param.values
            request = {"partition": "ewt", "query": query, "limit": 20_000, "context": {"tokens": 0}}
            with httpx.stream("POST", f"{url}/v1/export", json=request, headers=headers, timeout=60) as response:
                assert response.status_code == 200, query
                got = [(x["match"], x["matchend"]) for x in map(json.loads, response.iter_lines()) if x]
            assert got == parity_hits(query_id), query_id
    finally:
        process.terminate()
        process.wait(10)
