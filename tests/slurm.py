"""A real single-host SLURM for the tests: Debian's munge, slurmctld and slurmd, started in a temporary
folder and removed again (``tests/build/test_slurm_build.py`` builds a corpus through it).

Nothing of the machine's own set-up is used or changed: the cluster has a munge key and socket of its
own (``munged --socket``, ``AuthInfo=socket=...``), its own ``slurm.conf`` (``SLURM_CONF`` points at
it for the session, so ``sbatch``, ``squeue`` and ``scontrol`` — and the jobs, which inherit the
environment — talk to it), its own ports (free ones, not 6817/6818) and its state, spool and logs in
the folder. ``CommunicationParameters=NoInAddrAny,NoCtldInAddrAny`` makes slurmctld and slurmd listen
on the address they are configured with, 127.0.0.1, instead of every interface. There is no
accounting database (``accounting_storage/none``): the jobs' states are read with ``scontrol``, as
``cowbird.build.slurm`` does, and ``MinJobAge`` keeps finished jobs' records for the session.

Needs root (slurmd starts the jobs as their user) and the Debian packages ``slurm-wlm`` (or
``slurmctld slurmd slurm-client``) and ``munge``; without them the tests skip saying what to install,
and under CI they fail (``.ci/run`` installs them).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support import free_ports, unavailable

DAEMONS = ("munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo", "scancel")
SEARCH_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin", "/usr/bin"])
START_TIMEOUT = 60.0
PARTITION = "build"


def missing_programs() -> list[str]:
    """The SLURM and munge programs that cannot be found here."""
    return [name for name in DAEMONS if shutil.which(name, path=SEARCH_PATH) is None]


def program(name: str) -> str:
    found = shutil.which(name, path=SEARCH_PATH)
    assert found is not None, name
    return found


def node_line(name: str) -> str:
    """This host as a SLURM node, as ``slurmd -C`` measures it (CPUs, sockets, cores, memory), named
    ``name`` and reached at 127.0.0.1: a configuration that claims more than the host has makes
    slurmd drain the node."""
    measured = subprocess.run([program("slurmd"), "-C"], capture_output=True, text=True, check=True).stdout
    first = measured.splitlines()[0]
    fields = dict(re.findall(r"(\w+)=(\S+)", first))
    keep = ["CPUs", "Boards", "SocketsPerBoard", "CoresPerSocket", "ThreadsPerCore", "RealMemory"]
    described = " ".join(f"{key}={fields[key]}" for key in keep if key in fields)
    return f"NodeName={name} NodeAddr=127.0.0.1 NodeHostname={name} {described} State=UNKNOWN"


@dataclass
class SlurmCluster:
    """The running test cluster: its folder, configuration and daemons."""

    root: Path
    conf: Path
    partition: str
    node: str
    processes: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def env(self) -> dict[str, str]:
        """The environment in which SLURM's commands reach this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    def run(self, *command: str) -> str:
        """Run a SLURM client command against this cluster; its standard output."""
        done = subprocess.run([program(command[0]), *command[1:]], capture_output=True, text=True,
                              env=self.env, timeout=60)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} exited {done.returncode}: {done.stderr.strip()}")
        return done.stdout

    def node_state(self) -> str:
        return self.run("sinfo", "-h", "-N", "-o", "%t").strip()

    def jobs(self) -> list[str]:
        """The ids of the jobs still queued or running."""
        return self.run("squeue", "-h", "-o", "%A").split()

    def logs(self) -> str:
        """The last lines of the daemons' logs (for a failure's message)."""
        parts = []
        for log in sorted((self.root / "log").glob("*")):
            lines = log.read_text(errors="replace").splitlines()[-15:]
            parts.append(f"--- {log.name}\n" + "\n".join(lines))
        return "\n".join(parts)


def write_config(root: Path, node: str, ports: list[int]) -> Path:
    """The cluster's ``slurm.conf``: one node (this host), one partition, consumable cores and memory,
    no accounting, daemons as root listening on loopback only, every file in ``root``."""
    for folder in ("state", "spool", "log"):
        (root / folder).mkdir(mode=0o700, exist_ok=True)
    conf = root / "slurm.conf"
    conf.write_text("\n".join([
        "# the tests' single-host cluster (tests/slurm.py)",
        "ClusterName=cowbirdtest",
        f"SlurmctldHost={node}(127.0.0.1)",
        f"SlurmctldPort={ports[0]}",
        f"SlurmdPort={ports[1]}",
        "CommunicationParameters=NoInAddrAny,NoCtldInAddrAny",  # listen on 127.0.0.1, not every interface
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        "CredType=cred/munge",
        f"AuthInfo=socket={root / 'munge' / 'munge.socket'}",
        f"StateSaveLocation={root / 'state'}",
        f"SlurmdSpoolDir={root / 'spool'}",
        f"SlurmctldPidFile={root / 'slurmctld.pid'}",
        f"SlurmdPidFile={root / 'slurmd.pid'}",
        f"SlurmctldLogFile={root / 'log' / 'slurmctld.log'}",
        f"SlurmdLogFile={root / 'log' / 'slurmd.log'}",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "DefMemPerCPU=1000",  # else a job without --mem asks for the whole node
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "MpiDefault=none",
        "JobAcctGatherType=jobacct_gather/none",
        "AccountingStorageType=accounting_storage/none",
        "JobCompType=jobcomp/none",
        "SchedulerType=sched/backfill",
        "ReturnToService=2",
        "MinJobAge=86400",  # finished jobs stay in scontrol's view for the session
        "SlurmctldTimeout=30",
        "SlurmdTimeout=30",
        node_line(node),
        f"PartitionName={PARTITION} Nodes={node} Default=YES MaxTime=INFINITE State=UP",
        "",
    ]))
    return conf


def start_munge(root: Path) -> subprocess.Popen[bytes]:
    """munged with a key and socket of its own in ``root/munge`` (``--force``: it runs as root)."""
    folder = root / "munge"
    folder.mkdir(mode=0o711)
    key = folder / "munge.key"
    subprocess.run([program("mungekey"), "--create", f"--keyfile={key}"], check=True, capture_output=True)
    process = subprocess.Popen(
        [program("munged"), "--foreground", "--force", f"--socket={folder / 'munge.socket'}",
         f"--key-file={key}", f"--log-file={root / 'log' / 'munged.log'}",
         f"--pid-file={folder / 'munged.pid'}", f"--seed-file={folder / 'munged.seed'}"],
        stdout=(root / "log" / "munged.out").open("wb"), stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    deadline = time.monotonic() + START_TIMEOUT
    while not (folder / "munge.socket").exists():
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError("munged did not start: " + (root / "log" / "munged.out").read_text(errors="replace"))
        time.sleep(0.1)
    return process


def start_cluster(root: Path) -> SlurmCluster:
    """Start munged, slurmctld and slurmd in ``root`` and wait until the node is idle."""
    node = socket.gethostname().split(".")[0]
    (root / "log").mkdir(mode=0o700)
    munge = start_munge(root)
    conf = write_config(root, node, free_ports(2))
    cluster = SlurmCluster(root=root, conf=conf, partition=PARTITION, node=node, processes={"munged": munge})
    env = cluster.env
    for name, command in (("slurmctld", [program("slurmctld"), "-D", "-i"]),
                          ("slurmd", [program("slurmd"), "-D", "-N", node])):
        cluster.processes[name] = subprocess.Popen(
            command, env=env, cwd=root, stdin=subprocess.DEVNULL,
            stdout=(root / "log" / f"{name}.out").open("wb"), stderr=subprocess.STDOUT)
    deadline = time.monotonic() + START_TIMEOUT
    state = ""
    while True:
        for name, process in cluster.processes.items():
            if process.poll() is not None:
                stop_cluster(cluster)
                raise RuntimeError(f"{name} exited with {process.returncode} at start:\n{cluster.logs()}")
        try:
            state = cluster.node_state()
        except (RuntimeError, subprocess.TimeoutExpired):
            state = ""
        if state == "idle":
            return cluster
        if time.monotonic() > deadline:
            logs = cluster.logs()
            stop_cluster(cluster)
            raise RuntimeError(f"the SLURM node did not become idle within {START_TIMEOUT:.0f} s "
                               f"(sinfo says {state!r}):\n{logs}")
        time.sleep(0.5)


def stop_cluster(cluster: SlurmCluster) -> None:
    """Cancel what is still queued, then end slurmd, slurmctld and munged (TERM, then KILL)."""
    try:
        jobs = cluster.jobs()
        if jobs:
            cluster.run("scancel", *jobs)
            deadline = time.monotonic() + 20
            while cluster.jobs() and time.monotonic() < deadline:
                time.sleep(0.5)
    except (RuntimeError, subprocess.TimeoutExpired, OSError):
        pass  # the controller is gone already: the daemons are ended below anyway
    for name in ("slurmd", "slurmctld", "munged"):
        process = cluster.processes.get(name)
        if process is None or process.poll() is not None:
            continue
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture(scope="session", name="slurm_cluster")
def slurm_cluster_fixture() -> Iterator[SlurmCluster]:
    """``slurm_cluster``: a running single-host SLURM for the session; ``SLURM_CONF`` points at it meanwhile.
    A test module uses it by importing ``slurm_cluster_fixture`` and taking a ``slurm_cluster`` argument."""
    missing = missing_programs()
    if missing:
        unavailable(f"a real SLURM is needed (missing: {', '.join(missing)}): "
                    f"apt-get install slurm-wlm munge (Debian's slurmctld, slurmd, slurm-client, munge)")
    if os.geteuid() != 0:
        unavailable("the test SLURM runs its daemons as root (slurmd starts jobs as their user): run as root")
    root = Path(tempfile.mkdtemp(prefix="cowbird-slurm-"))
    before = os.environ.get("SLURM_CONF")
    try:
        try:
            cluster = start_cluster(root)
        except RuntimeError as error:
            pytest.fail(f"the test SLURM did not start: {error}", pytrace=False)
        os.environ["SLURM_CONF"] = str(cluster.conf)
        try:
            yield cluster
        finally:
            stop_cluster(cluster)
    finally:
        if before is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = before
        shutil.rmtree(root, ignore_errors=True)
