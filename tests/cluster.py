"""Real cowbird processes on loopback for end-to-end tests: nodes and a front end, each partition on
the nodes a test chooses, with ways to kill, stop, resume and restart nodes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import httpx

from tests.clock import wait_until
from tests.support import free_ports

TOKEN = "cluster-node-token-0123456789abcdef"


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def process_ended(pid: int) -> bool:
    """Whether a process has ended (gone, or a zombie its parent has not reaped yet)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def comes_to_rest(pids: int | Sequence[int], within: float, window: float = 0.5, most: float = 0.1) -> bool:
    """Whether processes, polled from now on for ``within`` seconds, have a ``window`` in which they
    used at most ``most`` CPU seconds together (they stopped working: a fifth of a core by default)."""
    every = [pids] if isinstance(pids, int) else list(pids)
    deadline = time.monotonic() + within
    while True:
        before = sum(map(cpu_seconds, every))
        time.sleep(window)  # the span CPU time is measured over
        if sum(map(cpu_seconds, every)) - before <= most:
            return True
        if time.monotonic() + window > deadline:
            return False


class Cluster:
    """``layout[i]`` lists the partitions node i serves; the front end tries a partition's nodes in
    node order (``routes``: these partitions' nodes instead, such as a stand-in in front of a node).
    ``front`` adds top-level settings to the front end's cowbird.toml."""

    def __init__(self, base: Path, registry: Path, manifest: Path, corpus: str, layout: list[list[str]],
                 node_options: list[str] | None = None, routes: dict[str, list[str]] | None = None,
                 **front: Any) -> None:
        self.base = base
        self.routes = routes or {}  # partition -> node URLs the front end tries instead of the layout's
        self.registry = registry
        self.manifest = manifest
        self.corpus = corpus
        self.layout = layout
        self.node_options = node_options or []
        # a burst comes from one address: fair use must not be what the fault tests measure
        self.front = {"anonymous_running_queries": 10_000, "anonymous_rows_per_day": 10**12, **front}
        ports = free_ports(len(layout) + 1)
        self.port, self.node_ports = ports[0], ports[1:]
        self.nodes: list[subprocess.Popen[bytes] | None] = [None] * len(layout)
        self.frontend: subprocess.Popen[bytes] | None = None
        (base / "node.token").write_text(TOKEN)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def node_url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.node_ports[index]}"

    def start(self) -> Cluster:
        """Start every node and the front end at once (start-up is mostly imports), then wait for each."""
        routes: dict[str, list[str]] = {}
        for index, partitions in enumerate(self.layout):
            for pid in partitions:
                routes.setdefault(pid, []).append(self.node_url(index))
        routes.update(self.routes)
        settings = "".join(f"{key} = {json.dumps(value)}\n" for key, value in self.front.items())
        nodes = "".join(f"{pid} = {json.dumps(urls)}\n" for pid, urls in sorted(routes.items()))
        config = self.base / "cowbird.toml"
        config.write_text(f'node_token_file = "node.token"\nport = {self.port}\n{settings}\n[[corpora]]\n'
                          f'name = "{self.corpus}"\nmanifest = "{self.manifest}"\n[corpora.nodes]\n{nodes}')
        waits = []
        for index in range(len(self.layout)):  # each process is known at once: close() ends it if a wait fails
            self.nodes[index], ready = self._launch(*self._node_command(index))
            waits.append(ready)
        self.frontend, ready = self._launch(["serve", "--config", str(config)], f"{self.url}/api/v1/corpora")
        for wait in [*waits, ready]:
            wait()
        return self

    def _node_command(self, index: int) -> tuple[list[str], str]:
        corpora = [arg for pid in self.layout[index] for arg in ("--corpus", pid)]
        return (["node", "serve", "--registry", str(self.registry), *corpora, "--port", str(self.node_ports[index]),
                 "--token-file", str(self.base / "node.token"), *self.node_options], f"{self.node_url(index)}/health")

    def start_node(self, index: int) -> None:
        self.nodes[index], ready = self._launch(*self._node_command(index))
        ready()

    def start_frontend(self) -> None:
        """(Re)start the front end with the configuration start() wrote."""
        self.frontend, ready = self._launch(["serve", "--config", str(self.base / "cowbird.toml")],
                                            f"{self.url}/api/v1/corpora")
        ready()

    def _launch(self, args: list[str], health: str) -> tuple[subprocess.Popen[bytes], Callable[[], None]]:
        """Start ``cowbird args``: the process, and what waits (up to 60 s) until it answers ``health``."""
        log = open(self.base / f"{args[0]}-{len(list(self.base.glob('*.log')))}.log", "wb")
        process = subprocess.Popen([sys.executable, "-m", "cowbird", *args], stdout=log, stderr=log, cwd=self.base)

        def answers() -> bool:
            if process.poll() is not None:
                raise AssertionError(f"cowbird {' '.join(args)} exited: {Path(log.name).read_text()}")
            try:
                return httpx.get(health, timeout=1).status_code < 500
            except httpx.TransportError:
                return False

        def ready() -> None:
            try:
                wait_until(answers, 60, f"cowbird {' '.join(args)} answering {health}", every=0.1)
            except AssertionError:
                process.kill()
                raise

        return process, ready

    def process(self, index: int) -> subprocess.Popen[bytes]:
        process = self.nodes[index]
        assert process is not None
        return process

    def kill(self, index: int) -> None:
        """``kill -9`` a node: no goodbye, connections reset mid-answer."""
        process = self.process(index)
        process.kill()
        process.wait(10)
        self.nodes[index] = None

    def pause(self, index: int) -> None:
        """SIGSTOP: the node keeps its connections open and answers nothing."""
        os.kill(self.process(index).pid, signal.SIGSTOP)

    def resume(self, index: int) -> None:
        os.kill(self.process(index).pid, signal.SIGCONT)

    def close(self) -> None:
        for process in [*self.nodes, self.frontend]:
            if process is None:
                continue
            try:
                os.kill(process.pid, signal.SIGCONT)
            except ProcessLookupError:
                pass
            process.terminate()
        for process in [*self.nodes, self.frontend]:
            if process is not None:
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()


def start_node(registry: Path, token_file: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """A `cowbird node serve` process on a free port, once its /health answers: the process and its URL."""
    port = free_ports(1)[0]
    process = subprocess.Popen(
        [sys.executable, "-m", "cowbird", "node", "serve", "--registry", str(registry), "--port", str(port),
         "--token-file", str(token_file), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"node exited: {process.stderr.read() if process.stderr else ''}")
        try:
            if httpx.get(f"{url}/health", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.1)
    process.kill()
    raise AssertionError("node did not start in 30 s")
