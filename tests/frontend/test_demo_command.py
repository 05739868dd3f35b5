"""``cowbird demo`` as `make demo` runs it: a first run prints the admin's password once, SIGTERM
stops every process it started, a busy port is a clear error, a second run reuses what the first
built."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from cowbird.demo import port_in_use
from tests.support import free_ports

pytestmark = pytest.mark.e2e


def start(directory: Path, port: int) -> tuple[subprocess.Popen[str], list[str]]:
    process = subprocess.Popen([sys.executable, "-m", "cowbird", "demo", "--dir", str(directory), "--port", str(port)],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    deadline = time.monotonic() + 240  # the first run generates and encodes 2 million tokens
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "/ref/web/2" in line:  # the last line of the greeting: everything runs
            return process, lines
    process.kill()
    raise AssertionError("".join(lines))


def test_sigterm_stops_everything_and_a_second_run_reuses(tmp_path: Path) -> None:
    base = free_ports(1)[0]
    port = base if not any(port_in_use(p) for p in (base, base + 1, base + 2)) else free_ports(1)[0]
    process, lines = start(tmp_path / "demo", port)
    text = "".join(lines)
    assert "administrator: admin / " in text and "(shown once" in text
    corpora = httpx.get(f"http://127.0.0.1:{port}/api/v1/corpora", timeout=10).json()["data"]
    assert [(c["name"], c["size"] >= 2_000_000, len(c["partitions"]) >= 2) for c in corpora] == [("web", True, True)]
    hits = httpx.get(f"http://127.0.0.1:{port}/api/v1/query", params={"corpus": "web", "q": "the 0-1 house"},
                     timeout=30).json()
    assert hits["total"] > 1000 and all(h["match"].lower().startswith("the") for h in hits["hits"])
    busy = subprocess.run([sys.executable, "-m", "cowbird", "demo", "--dir", str(tmp_path / "other"), "--port",
                           str(port)], capture_output=True, text=True, timeout=60)
    assert busy.returncode == 1 and f"port {port}, {port + 1}, {port + 2} is in use" in busy.stderr
    process.send_signal(signal.SIGTERM)
    process.wait(30)
    for p in (port, port + 1, port + 2):  # the front end and both nodes are gone
        deadline = time.monotonic() + 15
        while port_in_use(p) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not port_in_use(p), f"port {p} is still in use after SIGTERM"
    started = time.monotonic()
    again, lines = start(tmp_path / "demo", port)
    try:
        assert "its password was shown on the first run" in "".join(lines)
        assert "generating" not in "".join(lines) and time.monotonic() - started < 60  # reused
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(30)
