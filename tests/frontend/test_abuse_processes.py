"""Hostile clients against real server processes: never-ending or trickling request headers are cut
off (431, 408) instead of held in memory; an abandoned XLSX export leaves no temporary file behind
and gives its rows back to the day's budget."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from cowbird.core import serving
from tests.support import free_ports, running_demo

pytestmark = pytest.mark.e2e


@pytest.fixture
def guarded(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """A small app behind uvicorn with cowbird's guarded protocol, headers given half a second."""
    monkeypatch.setattr(serving, "HEADER_SECONDS", 0.5)
    app = Starlette(routes=[Route("/", lambda request: PlainTextResponse("fine"))])
    port = free_ports(1)[0]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, http=serving.GuardedHttp,
                                           log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    yield port
    server.should_exit = True
    thread.join(10)


def raw(port: int, data: bytes, pause: float = 0.0, chunks: int = 1) -> tuple[bytes, float]:
    """Send ``data`` (in ``chunks`` with ``pause`` between them), then read until the server closes."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        size = max(1, len(data) // chunks)
        try:
            for at in range(0, len(data), size):
                sock.sendall(data[at:at + size])
                if pause:
                    time.sleep(pause)
        except (BrokenPipeError, ConnectionResetError):
            pass
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (ConnectionResetError, TimeoutError):
            pass
    return answer, time.monotonic() - started


def test_never_ending_headers_are_cut_off(guarded: int) -> None:
    flood = b"GET / HTTP/1.1\r\nHost: x\r\n" + b"".join(b"X-Filler-%d: %s\r\n" % (k, b"a" * 1000) for k in range(200))
    answer, _ = raw(guarded, flood)
    assert answer.startswith(b"HTTP/1.1 431 "), answer[:100]
    fine = httpx.get(f"http://127.0.0.1:{guarded}/", timeout=5)
    assert fine.status_code == 200 and fine.text == "fine"


def test_trickling_headers_get_their_time_and_no_more(guarded: int) -> None:
    slow = b"GET / HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 40
    answer, seconds = raw(guarded, slow, pause=0.1, chunks=20)  # 2 s of trickling, never finished
    assert answer.startswith(b"HTTP/1.1 408 ") and seconds < 5, (answer[:80], seconds)
    idle_then_request, _ = raw(guarded, b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    assert idle_then_request.startswith(b"HTTP/1.1 200")


def test_the_servers_abandoned_xlsx_exports_and_header_floods(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's processes: a flood of headers is refused by the front end and by a node alike; an
    XLSX export left after its first bytes leaves no file in the front end's temporary folder and
    charges nothing to the day's budget."""
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    flood = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n" + b"X-Filler: " + b"a" * 200_000 + b"\r\n\r\n"
    with running_demo(tmp_path / "demo", generated=True, web_tokens=60_000) as demo:
        for port in (demo.port, *demo.node_ports):
            answer, _ = raw(port, flood)
            assert answer.startswith(b"HTTP/1.1 431 "), (port, answer[:80])
        full = int(httpx.get(f"{demo.url}/api/v1/query", params={"corpus": "web", "q": "house", "limit": 1},
                             timeout=30).headers["x-cowbird-export-rows-left"])
        for _ in range(3):
            with httpx.stream("GET", f"{demo.url}/api/v1/export", params={"corpus": "web", "q": "the",
                                                                         "format": "xlsx", "limit": 10_000},
                              timeout=30) as response:
                assert response.status_code == 200
        deadline = time.monotonic() + 20
        left = [p.name for p in temporary.iterdir() if p.is_file()]
        while left and time.monotonic() < deadline:
            time.sleep(0.5)
            left = [p.name for p in temporary.iterdir() if p.is_file()]
        assert left == [], left
        after = httpx.get(f"{demo.url}/api/v1/query", params={"corpus": "web", "q": "house", "limit": 1}, timeout=30)
        assert int(after.headers["x-cowbird-export-rows-left"]) == full
