"""Several hosts on one machine, for real: a network namespace per host, each with its own
interface, address and disk, and cowbird's processes started in them (``tests/frontend/
test_multi_host.py``, ``bench/hosts.py``; ``deploy/README.md``, "Several hosts", has the recipe).

Topology::

    root namespace     bridge cbw<tag>, 10.77.N.254/24: the switch; the tests' client uses it
    cowbird-<tag>-front   eth0 10.77.N.1    the front end   (cowbird serve, port 8700)
    cowbird-<tag>-node1   eth0 10.77.N.11   a node          (cowbird node serve, port 8701)
    ...
    cowbird-<tag>-node7   eth0 10.77.N.17

Each host's ``eth0`` is one end of a veth pair whose other end (``cbw<tag>h<i>``, in the root
namespace) is a port of the bridge. Loopback stays down in every host: a process binds its
``eth0`` address, and all traffic — the client to the front end, the front end to the nodes —
crosses the veth links and the bridge. ``N`` is the first 10.77.N.0/24 that no interface or
route of the machine uses; ``<tag>`` is the test process's id, so two runs never share a name or a subnet.

Each host has a disk of its own: its processes run in a private mount namespace (``ip netns
exec`` makes one) with a small tmpfs mounted on the host's ``disk`` directory, filled at start
with what the host holds (its partitions and registry, or the front end's configuration); its
``TMPDIR`` is there too. The tmpfs lives as long as the host's processes: killing and starting a
host again gives it a fresh copy. ``fill_disk`` writes into it through ``/proc/PID/root``.

Faults: ``link_down``/``link_up`` (the bridge port of the host's link), ``pause``/``resume``
(SIGSTOP/SIGCONT), ``kill`` (SIGKILL), ``start`` again, ``fill_disk``/``free_disk``.
``Network.close`` removes every process, namespace, link and bridge it made, whatever state a
failed test left them in (the mounts go with the processes).

Needs root and iproute2 (``ip netns``); :func:`require_netns` skips the test saying why — or,
under CI, fails it (``tests/support.py``, ``unavailable``).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import ipaddress
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from cowbird.store.registry import parse_registry, registry_quote
from tests.support import unavailable

TOKEN = "netns-node-token-0123456789abcdef"
FRONT_PORT = 8700
NODE_PORT = 8701
PROXY_VARIABLES = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")

# The start of every host's process: mount its disk, copy what the host holds onto it, then become
# the command (exec keeps the process id, so the signals of the tests reach the service itself).
START = 'mount -t tmpfs -o "size=$1" "$2" "$3" && cp -a "$4/." "$3/" && mkdir -p "$3/tmp" && shift 4 && exec "$@"'


def run(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run a command, its output captured; a failure names the command and what it said."""
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")
    return done


def netns_problem() -> str | None:
    """Why namespaces cannot be made here, or None when they can."""
    if sys.platform != "linux":
        return "network namespaces are a Linux feature"
    if os.geteuid() != 0:
        return "making network namespaces, veth pairs and tmpfs mounts needs root (run the test as root)"
    for tool in ("ip", "mount", "cp", "sh"):
        if shutil.which(tool) is None:
            return f"{tool!r} is not on PATH (ip comes with iproute2: apt-get install iproute2)"
    probe = f"cowbird-probe-{os.getpid()}"
    made = run("ip", "netns", "add", probe, check=False)
    if made.returncode != 0:
        return f"ip netns add does not work here: {made.stderr.strip()}"
    try:
        link = run("ip", "-n", probe, "link", "add", "p0", "type", "veth", "peer", "name", "p1", check=False)
        if link.returncode != 0:
            return f"veth pairs cannot be made here: {link.stderr.strip()}"
    finally:
        run("ip", "netns", "del", probe, check=False)
    return None


def require_netns() -> None:
    """Skip (fail under CI) unless namespaces, veth pairs and mounts can be made."""
    problem = netns_problem()
    if problem is not None:
        unavailable(problem)


def free_subnet() -> ipaddress.IPv4Network:
    """The first 10.77.N.0/24 that no address or route of the machine overlaps."""
    used = []
    for entry in json.loads(run("ip", "-j", "-4", "addr").stdout or "[]"):
        for info in entry.get("addr_info", []):
            used.append(ipaddress.ip_network(f"{info['local']}/{info['prefixlen']}", strict=False))
    for route in json.loads(run("ip", "-j", "-4", "route").stdout or "[]"):
        if route.get("dst", "default") != "default":
            used.append(ipaddress.ip_network(route["dst"], strict=False))
    for third in range(256):
        subnet = ipaddress.IPv4Network(f"10.77.{third}.0/24")
        if not any(subnet.overlaps(u) for u in used):
            return subnet
    raise RuntimeError("no free 10.77.N.0/24 on this machine")


def child_environment(extra: dict[str, str]) -> dict[str, str]:
    """The environment of a host's process: no proxy (the hosts talk to each other directly)."""
    env = {k: v for k, v in os.environ.items() if k.lower() not in PROXY_VARIABLES}
    env.update(extra)
    return env


def client(base_url: str = "", timeout: float = 60.0) -> httpx.Client:
    """A client from the root namespace (through the bridge), never through a proxy."""
    return httpx.Client(base_url=base_url, timeout=timeout, trust_env=False)


@dataclass
class Host:
    """One machine: a network namespace with its link, its address and its disk."""

    network: Network
    name: str
    index: int
    address: str
    directory: Path
    disk_size: str = "64m"
    command: list[str] = field(default_factory=list)
    health: str = ""
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def namespace(self) -> str:
        return f"cowbird-{self.network.tag}-{self.name}"

    @property
    def link(self) -> str:
        """The bridge-side end of the host's veth pair (in the root namespace)."""
        return f"cbw{self.network.tag}h{self.index}"

    @property
    def disk(self) -> Path:
        """Where the host's disk is mounted (inside its processes' mount namespace)."""
        return self.directory / "disk"

    @property
    def stage(self) -> Path:
        """What the host's disk holds when the host starts."""
        return self.directory / "stage"

    @property
    def log(self) -> Path:
        return self.directory / f"{self.name}-{self.starts}.log"

    def logs(self) -> str:
        """Everything the host's processes wrote, every start."""
        return "".join(p.read_text(errors="replace") for p in sorted(self.directory.glob(f"{self.name}-*.log")))

    def start(self, timeout: float = 60.0) -> None:
        """Mount a fresh disk, copy the stage onto it, run ``command``; wait for ``health``."""
        self.launch()
        self.wait(timeout)

    def launch(self) -> None:
        """Start the host's process without waiting for it (several hosts start at once)."""
        assert self.command, f"{self.name}: nothing to run"
        self.starts += 1
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                ["ip", "netns", "exec", self.namespace, "sh", "-c", START, "start", self.disk_size,
                 f"cowbird-{self.name}", str(self.disk), str(self.stage), *self.command],
                stdout=log, stderr=log, cwd=self.directory, env=child_environment({"TMPDIR": str(self.disk / "tmp")}),
            )  # fmt: skip

    def wait(self, timeout: float = 60.0) -> None:
        """Until ``health`` answers (from the root namespace, through the bridge)."""
        deadline = time.monotonic() + timeout
        with client(timeout=1.0) as http:
            while time.monotonic() < deadline:
                assert self.process is not None
                if self.process.poll() is not None:
                    raise AssertionError(f"{self.name} exited ({self.process.returncode}): {self.log.read_text()}")
                try:
                    if http.get(self.health).status_code < 500:
                        return
                except httpx.TransportError:
                    time.sleep(0.1)
        self.kill()
        raise AssertionError(f"{self.name} did not answer {self.health} within {timeout:g} s: {self.log.read_text()}")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int:
        assert self.process is not None and self.process.poll() is None, f"{self.name} is not running"
        return self.process.pid

    def pause(self) -> None:
        """SIGSTOP: connections stay open, nothing is answered."""
        os.kill(self.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)

    def kill(self) -> None:
        """SIGKILL: no goodbye; connections reset mid-answer. The host's disk goes with it."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            self.process.kill()
        self.process.wait(10)
        self.process = None

    def stop(self) -> None:
        """SIGTERM (after SIGCONT, in case it was paused), SIGKILL if it does not end in 10 s."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.process.pid, signal.SIGCONT)
            self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.kill()
        self.process = None

    def link_down(self) -> None:
        """Unplug the host's cable: its bridge port goes down, its eth0 loses carrier."""
        run("ip", "link", "set", self.link, "down")

    def link_up(self) -> None:
        run("ip", "link", "set", self.link, "up")

    def _on_disk(self, name: str) -> Path:
        # /proc/PID/root resolves paths in the process's own mount namespace, where the tmpfs is
        return Path(f"/proc/{self.pid}/root") / str(self.disk).lstrip("/") / name

    def disk_free(self) -> int:
        """Bytes still free on the host's disk."""
        stat = os.statvfs(self._on_disk(""))
        return stat.f_bavail * stat.f_frsize

    def fill_disk(self) -> int:
        """Write to the host's disk until it is full (ENOSPC); returns the bytes written."""
        written = 0
        chunk = b"\0" * (1 << 20)
        with open(self._on_disk("fill"), "wb", buffering=0) as out:
            while True:
                try:
                    written += out.write(chunk)
                except OSError as error:
                    if error.errno != errno.ENOSPC:
                        raise
                    chunk = chunk[: len(chunk) // 2]  # the last bytes too, down to the last page
                    if len(chunk) < 4096:
                        return written

    def free_disk(self) -> None:
        if self.running:
            self._on_disk("fill").unlink(missing_ok=True)

    def disk_files(self, under: str) -> list[str]:
        """Names of the files in a directory of the host's disk."""
        return sorted(p.name for p in self._on_disk(under).iterdir())

    def link_bytes(self) -> int:
        """Bytes through the host's link so far, both ways (counted on its bridge port)."""
        stats = Path("/sys/class/net") / self.link / "statistics"
        return sum(int((stats / f"{way}_bytes").read_text()) for way in ("rx", "tx"))

    def loopback(self) -> dict[str, Any]:
        """``ip -s link show lo`` inside the host, as JSON (flags, operstate, stats64)."""
        entries: list[dict[str, Any]] = json.loads(run("ip", "-n", self.namespace, "-j", "-s", "link", "show",
                                                       "lo").stdout)
        return entries[0]

    def listening(self) -> list[str]:
        """Local addresses with a listening TCP socket inside the host (``ss -ltn``)."""
        lines = run("ip", "netns", "exec", self.namespace, "ss", "-ltnH").stdout.splitlines()
        return sorted(line.split()[3] for line in lines if line.strip())


class Network:
    """A bridge in the root namespace and the hosts plugged into it; ``close`` removes it all."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.tag = str(os.getpid())
        self.bridge = f"cbw{self.tag}"
        self.hosts: list[Host] = []
        # two runs at once must not take the same subnet: choose it and claim it under a lock
        with open(Path(tempfile.gettempdir()) / "cowbird-netns.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            self.subnet = free_subnet()
            try:
                run("ip", "link", "add", self.bridge, "type", "bridge")
                run("ip", "addr", "add", f"{self.subnet[254]}/{self.subnet.prefixlen}", "dev", self.bridge)
                run("ip", "link", "set", self.bridge, "up")
            except BaseException:
                self.close()
                raise

    def address(self, last: int) -> str:
        return str(self.subnet[last])

    def add_host(self, name: str, last: int, disk_size: str = "64m") -> Host:
        """A namespace ``cowbird-<tag>-<name>`` with ``eth0`` at 10.77.N.``last`` on the bridge."""
        host = Host(self, name, len(self.hosts) + 1, self.address(last), self.base / name, disk_size)
        self.hosts.append(host)
        host.directory.mkdir(parents=True, exist_ok=True)
        host.disk.mkdir(exist_ok=True)
        shutil.rmtree(host.stage, ignore_errors=True)  # a directory used before is staged afresh
        host.stage.mkdir()
        peer = f"cbw{self.tag}p{host.index}"
        run("ip", "netns", "add", host.namespace)
        run("ip", "link", "add", host.link, "type", "veth", "peer", "name", peer)
        run("ip", "link", "set", peer, "netns", host.namespace)
        run("ip", "-n", host.namespace, "link", "set", peer, "name", "eth0")
        run("ip", "-n", host.namespace, "addr", "add", f"{host.address}/{self.subnet.prefixlen}", "dev", "eth0")
        run("ip", "-n", host.namespace, "link", "set", "eth0", "up")
        run("ip", "link", "set", host.link, "master", self.bridge)
        run("ip", "link", "set", host.link, "up")
        return host  # loopback stays down: nothing inside the host can talk to itself over lo

    def close(self) -> None:
        """Stop every process, delete every namespace, link and bridge; go on past errors."""
        for host in self.hosts:
            with contextlib.suppress(Exception):
                host.stop()
        for host in self.hosts:
            # anything else still running in the namespace was started by this network's hosts
            for pid in run("ip", "netns", "pids", host.namespace, check=False).stdout.split():
                with contextlib.suppress(ProcessLookupError, ValueError):
                    os.kill(int(pid), signal.SIGKILL)
            run("ip", "link", "del", host.link, check=False)
            run("ip", "netns", "del", host.namespace, check=False)
        run("ip", "link", "del", self.bridge, check=False)

    def __enter__(self) -> Network:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- cowbird on the hosts ------------------------------------------------------------------------


def disk_size(stage: Path) -> str:
    """A disk for what the host holds: twice its size and 32 MiB more (tmpfs takes memory only for
    what is written), at least 64 MiB."""
    used = sum(p.stat().st_size for p in stage.rglob("*") if p.is_file())
    return f"{max(64, 2 * used // 2**20 + 32)}m"


def replicas(index: int, node_hosts: int) -> list[int]:
    """The node hosts of partition ``index`` (0-based), in the order the front end tries them:
    host ``index % n`` first, then the next host. Two neighbouring hosts down lose the partitions
    whose first host is the first of the two; any single host down loses nothing."""
    return [index % node_hosts, (index + 1) % node_hosts]


@dataclass
class Corpus:
    """An encoded, partitioned corpus: its registry directory, manifest and partition ids."""

    name: str
    registry: Path
    manifest: Path
    partitions: list[str]


def web_corpus(base: Path, tokens: int, partitions: int = 21, seed: int = 2024) -> Corpus:
    """The demo's generated web corpus (``backend_node/cowbird/data/demo_corpus.py``) of about ``tokens`` tokens,
    encoded by cowbird's encoder into exactly ``partitions`` partitions named ``web_p01`` ..."""
    from cowbird.data import demo_corpus
    from cowbird.store import EncodeOptions, Encoder, parse_s_declaration

    vrt = base / "web.vrt"
    written = demo_corpus.write_vrt(vrt, tokens, seed)
    options = EncodeOptions(
        vrt, base / "data", base / "registry" / "web", ["word", "pos", "lemma"],
        [parse_s_declaration("text:0+id+url+host+tld+genre+year+lastmod"), parse_s_declaration("s:0+id")],
        charset="utf8", xml=True, skip_blank=True, strip_blanks=True,
        # a partition is cut before a text that would overflow it; a sentence (a text) has < 100 tokens
        partition_tokens=-(-written // partitions) + 100,
    )  # fmt: skip
    result = Encoder(options).run()
    vrt.unlink()
    assert result.manifest is not None and len(result.partitions) == partitions, result.partitions
    return Corpus("web", base / "registry", result.manifest, [p.id for p in result.partitions])


class HostCluster:
    """A front end and ``node_hosts`` node hosts on a :class:`Network`, every partition on the
    two hosts :func:`replicas` names. ``settings`` go into the front end's cowbird.toml; the
    options are added to ``cowbird node serve`` and ``cowbird serve``."""

    def __init__(self, network: Network, corpus: Corpus, node_hosts: int = 7, node_options: Sequence[str] = (),
                 front_options: Sequence[str] = (), settings: dict[str, Any] | None = None) -> None:
        self.network = network
        self.corpus = corpus
        self.layout: dict[str, list[int]] = {p: replicas(i, node_hosts) for i, p in enumerate(corpus.partitions)}
        self.front = network.add_host("front", 1)
        self.nodes = [network.add_host(f"node{k + 1}", 11 + k) for k in range(node_hosts)]
        for k, host in enumerate(self.nodes):
            self._stage_node(host, [p for p, hosts in self.layout.items() if k in hosts], node_options)
        self._stage_front(settings or {}, front_options)

    @property
    def url(self) -> str:
        return f"http://{self.front.address}:{FRONT_PORT}"

    def node_url(self, k: int) -> str:
        return f"http://{self.nodes[k].address}:{NODE_PORT}"

    def partitions_of(self, k: int) -> list[str]:
        return [p for p, hosts in self.layout.items() if k in hosts]

    def _stage_node(self, host: Host, partitions: list[str], options: Sequence[str]) -> None:
        """The host's disk: its partitions' data and a registry naming them where the disk is."""
        registry = host.stage / "registry"
        registry.mkdir()
        for partition in partitions:
            text = (self.corpus.registry / partition).read_text()
            home = parse_registry(self.corpus.registry / partition).home
            shutil.copytree(home, host.stage / "data" / home.name)
            moved = host.disk / "data" / home.name
            lines = [f"HOME {registry_quote(str(moved))}" if line.startswith("HOME ") else
                     f"INFO {registry_quote(f'{moved}/.info')}" if line.startswith("INFO ") else line
                     for line in text.splitlines()]
            (registry / partition).write_text("\n".join(lines) + "\n")
        (host.stage / "node.token").write_text(TOKEN)
        host.command = [sys.executable, "-m", "cowbird", "node", "serve", "--registry", str(host.disk / "registry"),
                        *(arg for p in partitions for arg in ("--corpus", p)), "--host", host.address,
                        "--port", str(NODE_PORT), "--token-file", str(host.disk / "node.token"), *options]
        host.health = f"http://{host.address}:{NODE_PORT}/health"
        host.disk_size = disk_size(host.stage)

    def _stage_front(self, front: dict[str, Any], options: Sequence[str]) -> None:
        host = self.front
        # a burst comes from one address: fair use must not be what the tests measure
        settings = {"host": host.address, "port": FRONT_PORT, "public_url": self.url, "node_token_file": "node.token",
                    "anonymous_running_queries": 10_000, "anonymous_rows_per_day": 10**12, **front}
        routes = {p: [self.node_url(k) for k in hosts] for p, hosts in self.layout.items()}
        shutil.copy(self.corpus.manifest, host.stage / "manifest.json")
        (host.stage / "node.token").write_text(TOKEN)
        (host.stage / "cowbird.toml").write_text(
            "".join(f"{key} = {json.dumps(value)}\n" for key, value in settings.items())
            + f'\n[[corpora]]\nname = "{self.corpus.name}"\naccess = "public"\nmanifest = "manifest.json"\n'
            + "\n[corpora.nodes]\n" + "".join(f"{p} = {json.dumps(urls)}\n" for p, urls in routes.items())
        )
        host.command = [sys.executable, "-m", "cowbird", "serve", "--config", str(host.disk / "cowbird.toml"),
                        *options]
        host.health = f"{self.url}/api/v1/corpora"

    def restart_front(self, settings: dict[str, Any], options: Sequence[str] = ()) -> None:
        """The front end again, with these settings (on a fresh disk)."""
        self.front.stop()
        shutil.rmtree(self.front.stage)
        self.front.stage.mkdir()
        self._stage_front(settings, options)
        self.front.start()

    def start(self) -> HostCluster:
        """Start the nodes and the front end all at once (each takes seconds to import), then wait
        for each."""
        for host in [*self.nodes, self.front]:
            host.launch()
        for host in [*self.nodes, self.front]:
            host.wait()
        return self

    def heal(self) -> None:
        """Every link up, every host running and resumed, every disk free again."""
        for host in [self.front, *self.nodes]:
            host.link_up()
            if host.running:
                host.resume()
                host.free_disk()
            else:
                host.process = None
                host.start()

    def front_log(self) -> str:
        return self.front.logs()


@contextlib.contextmanager
def cluster_on_hosts(base: Path, corpus: Corpus, **options: Any) -> Iterator[HostCluster]:
    """A started :class:`HostCluster` on a fresh :class:`Network`; everything removed at the end."""
    network = Network(base)
    try:
        cluster = HostCluster(network, corpus, **options)
        yield cluster.start()
    finally:
        network.close()
