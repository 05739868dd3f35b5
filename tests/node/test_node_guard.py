"""The node's front door: the token before anything is read, bounded bodies, no anonymous API docs."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.cluster import start_node
from tests.node.conftest import TOKEN, client_for, make_app
from tests.support import assert_problem


@pytest.mark.anyio
async def test_anonymous_requests_get_401_before_anything_else(sample_registry: Path, big_registry: Path) -> None:
    async for anonymous in client_for(make_app(sample_registry, big_registry), token=None):
        for path in ("/docs", "/openapi.json", "/v1/partitions"):
            assert_problem(await anonymous.get(path), 401, "unauthorized")
        json_type = {"content-type": "application/json"}
        malformed = await anonymous.post("/v1/count", content=b"{not json", headers=json_type)
        assert_problem(malformed, 401, "unauthorized")
        huge = await anonymous.post("/v1/count", content=b"x" * 1_000_000)
        assert_problem(huge, 401, "unauthorized")
        assert (await anonymous.get("/health")).status_code == 200


@pytest.mark.anyio
async def test_a_chunked_body_over_the_limit_is_413(sample_registry: Path, big_registry: Path) -> None:
    async def chunks() -> Iterator[bytes]:  # type: ignore[misc]
        for _ in range(100):
            yield b" " * 1024

    async for client in client_for(make_app(sample_registry, big_registry)):
        response = await client.post("/v1/count", content=chunks(), headers={"content-type": "application/json"})
        assert_problem(response, 413, "too_large")
        small = await client.post("/v1/count", json={"partition": "sample", "query": '"house"'})
        assert small.json()["total"] == 3


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _send_chunked(url: str, megabytes: int, token: str | None) -> bytes:
    """POST /v1/count with a chunked body of ``megabytes`` MB, as fast as the node takes it; the answer."""
    host, port = url.removeprefix("http://").split(":")
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(f"POST /v1/count HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Type: application/json\r\n"
                     "Transfer-Encoding: chunked\r\n\r\n".encode())
        chunk = b"%x\r\n%s\r\n" % (1 << 20, b" " * (1 << 20))
        try:
            for _ in range(megabytes):
                sock.sendall(chunk)
        except OSError:
            pass  # the node answered and closed the connection without reading the rest: what we want
        answer = b""
        try:
            while b"\r\n\r\n" not in answer:
                data = sock.recv(65536)
                if not data:
                    break
                answer += data
        except OSError:
            pass
        return answer


@pytest.mark.e2e
def test_a_huge_unauthenticated_body_costs_the_node_no_memory(sample_registry: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "node.token"
    token_file.write_text(TOKEN)
    process, url = start_node(sample_registry, token_file)
    try:
        before = _rss_kb(process.pid)
        started = time.perf_counter()
        answer = _send_chunked(url, 300, token=None)
        assert answer.startswith(b"HTTP/1.1 401") or answer == b""
        answer = _send_chunked(url, 300, token=TOKEN)
        assert answer.startswith(b"HTTP/1.1 413") or answer == b""
        assert time.perf_counter() - started < 30
        grown = _rss_kb(process.pid) - before
        assert grown < 30_000, f"the node grew by {grown} kB"
        assert httpx.get(f"{url}/health").status_code == 200
    finally:
        process.terminate()
        process.wait(10)
