"""``cowbird demo`` as `make demo` runs it: a first run prints the admin's password once, SIGTERM
stops every process it started, a busy port is a clear error, a second run reuses what the first
built."""

from __future__ import annotations

import functools
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import httpx
import pytest

from cowbird.commands.demo import DemoStack, port_in_use
from cowbird.query.sketch_grammar import load_grammar
from tests.clock import wait_until
from tests.support import free_ports

pytestmark = pytest.mark.e2e


def port_free(port: int) -> bool:
    return not port_in_use(port)


def start(directory: Path, port: int, *options: str) -> tuple[subprocess.Popen[str], list[str]]:
    process = subprocess.Popen([sys.executable, "-m", "cowbird", "demo", "--dir", str(directory), "--port", str(port),
                                *options], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return process, until_greeted(process)


def until_greeted(process: subprocess.Popen[str]) -> list[str]:
    """The demo's output up to its greeting's last line (everything runs), or an AssertionError with it."""
    lines: list[str] = []
    deadline = time.monotonic() + 240  # the first run generates and encodes 2 million tokens
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if "the demo goes on" in line:  # the last line of the greeting: everything runs
            return lines
    process.kill()
    raise AssertionError("".join(lines))


@pytest.mark.timeout(300)
def test_sigterm_stops_everything_and_a_second_run_reuses(tmp_path: Path) -> None:
    base = free_ports(1)[0]
    port = base if not any(port_in_use(p) for p in (base, base + 1, base + 2, base + 3)) else free_ports(1)[0]
    process, lines = start(tmp_path / "demo", port, "--web-tokens", "300000")  # (the default: 2 million)
    text = "".join(lines)
    assert "administrator: admin / " in text and "(shown only now" in text
    assert f"in the demo's stand-in web archive, port {port + 3}" in text and port_in_use(port + 3)
    config = tmp_path / "demo" / "cowbird.toml"
    assert f"configuration: {config}" in text and f"users reset-password admin --config {config}" in text
    corpora = httpx.get(f"http://127.0.0.1:{port}/api/v1/corpora", timeout=10).json()["data"]
    assert [(c["name"], c["size"] >= 300_000, len(c["partitions"]) >= 2) for c in corpora] == [("web", True, True)]
    hits = httpx.get(f"http://127.0.0.1:{port}/api/v1/query", params={"corpus": "web", "q": "the 0-1 house"},
                     timeout=30).json()
    assert hits["total"] > 1000 and all(h["match"].lower().startswith("the") for h in hits["hits"])
    busy = subprocess.run([sys.executable, "-m", "cowbird", "demo", "--dir", str(tmp_path / "other"), "--port",
                           str(port)], capture_output=True, text=True, timeout=60)
    assert busy.returncode == 1 and f"port {port}, {port + 1}, {port + 2}, {port + 3} is in use" in busy.stderr
    process.send_signal(signal.SIGTERM)
    assert process.wait(30) == 0  # asked to stop: not an error (make prints no "Error 143")
    assert process.stdout is not None
    assert "cowbird demo stopped (SIGTERM): the front end and both nodes have ended" in process.stdout.read()
    for p in (port, port + 1, port + 2, port + 3):  # the front end, both nodes and the stand-in archive are gone
        wait_until(functools.partial(port_free, p), 15, f"port {p} free after SIGTERM")
    started = time.monotonic()
    again, lines = start(tmp_path / "demo", port, "--web-tokens", "300000")
    try:
        assert "its password was shown on the first run" in "".join(lines)
        assert "generating" not in "".join(lines) and time.monotonic() - started < 60  # reused
    finally:
        again.send_signal(signal.SIGTERM)
        again.wait(30)


def read_until(process: subprocess.Popen[str], wanted: str, seconds: float = 30) -> str:
    """The demo's output up to and including the line that holds ``wanted`` (read by a thread: a
    text pipe's buffer hides lines from select)."""
    assert process.stdout is not None
    lines: queue.Queue[str] = queue.Queue()

    def pump(stdout: IO[str]) -> None:
        for line in stdout:
            lines.put(line)

    threading.Thread(target=pump, args=(process.stdout,), daemon=True).start()
    text = ""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            line = lines.get(timeout=0.5)
        except queue.Empty:
            continue
        text += line
        if wanted in line:
            return text
    raise AssertionError(f"{wanted!r} not in: {text}")


def listening(port: int) -> int:
    """The process id of the demo child serving ``port`` (its command line names the port)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                words = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"--port" in words and words[words.index(b"--port") + 1] == str(port).encode() and b"node" in words:
                return int(entry.name)
    raise AssertionError(f"no node process for port {port}")


def test_a_node_that_ends_leaves_the_demo_running_and_the_admin_password_can_be_reset(tmp_path: Path) -> None:
    port = free_ports(1)[0]
    while any(port_in_use(p) for p in (port, port + 1, port + 2, port + 3)):
        port = free_ports(1)[0]
    process, lines = start(tmp_path / "demo", port, "--web-tokens", "20000")
    url = f"http://127.0.0.1:{port}"
    try:
        config = tmp_path / "demo" / "cowbird.toml"
        reset = subprocess.run([sys.executable, "-m", "cowbird", "users", "reset-password", "admin", "--config",
                                str(config)], capture_output=True, text=True, timeout=60)
        assert reset.returncode == 0, reset.stderr
        password = re.search(r"new one-time password: (\S+)", reset.stdout)
        assert password is not None
        with httpx.Client(base_url=url, timeout=30) as browser:
            form = browser.get("/login")
            csrf = re.search(r'name="csrf" value="([^"]+)"', form.text)
            assert csrf is not None
            login = browser.post("/login", data={"login": "admin", "password": password.group(1),
                                                 "csrf": csrf.group(1)})
            assert login.status_code == 303 and login.headers["location"] == "/"  # the search
            before = browser.get("/api/v1/query", params={"corpus": "sample", "q": "house"}).json()
            assert before["complete"] is True and [p["total"] > 0 for p in before["partitions"]] == [True, True]
            os.kill(listening(port + 1), signal.SIGKILL)  # node 1: web_p01 (also on node 2) and sample_p01
            said = read_until(process, "sample_p01: no node left")
            assert f"node 1 (port {port + 1}: web_p01, sample_p01) ended" in said and "the demo goes on" in said
            assert "web_p01: answered by the replica on the other node" in said
            web = browser.get("/api/v1/query", params={"corpus": "web", "q": "house"}).json()
            assert web["complete"] is True and web["total"] > 0  # the replica answers
            sample = browser.get("/api/v1/query", params={"corpus": "sample", "q": "house"}).json()
            assert sample["complete"] is False and sample["failed"] == ["sample_p01"]
            assert sample["total"] == before["partitions"][1]["total"]  # the second partition's hits
            assert process.poll() is None  # the demo runs on
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(30)
    for p in (port, port + 1, port + 2, port + 3):
        wait_until(functools.partial(port_free, p), 15, f"port {p} free")


def test_a_second_demo_run_builds_again_the_sketch_tables_of_an_older_format(tmp_path: Path) -> None:
    """The generated corpus is encoded once; a later run keeps its current word sketch tables and builds
    again those of another format (a table a node would not read), so that sketches stay fast."""
    stack = DemoStack(tmp_path, 0, (0, 0), generated=True, web_tokens=20_000)
    registry = tmp_path / "registry"
    first = stack._web_corpus(registry)
    tables = sorted((tmp_path / "data" / "web").rglob("sketches/*/table.json"))
    assert len(first.partitions) == 2 and len(tables) == 2 * len(load_grammar("penn").relations)
    stale = tables[0]
    described = json.loads(stale.read_text())
    stale.write_text(json.dumps({**described, "format": described["format"] - 1}))
    kept = {t: t.stat().st_mtime_ns for t in tables if t != stale}
    stack._web_corpus(registry)  # the stamp says the corpus is there: not encoded again
    assert json.loads(stale.read_text())["format"] == described["format"]  # built again
    assert {t: t.stat().st_mtime_ns for t in tables if t != stale} == kept
