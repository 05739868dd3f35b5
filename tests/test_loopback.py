"""The loopback harness (``tests/loopback.py``): a ``loopback`` test runs where only loopback exists —
no address but 127.0.0.0/8 and ::1 can be reached — and its result, pass or fail, is the test's own."""

from __future__ import annotations

import errno
import os
import socket

import pytest

from tests.loopback import in_loopback_namespace, interfaces, require_loopback_namespace

STARTED: list[int] = []


@pytest.fixture(scope="module")
def child_pid() -> int:
    """Made once for the module's loopback tests: they share one child pytest."""
    STARTED.append(os.getpid())
    return os.getpid()


@pytest.mark.loopback
def test_a_loopback_test_sees_only_loopback(child_pid: int) -> None:
    require_loopback_namespace()
    assert interfaces() == ["lo"]
    with socket.create_server(("127.0.0.1", 0)) as server:  # loopback is up
        with socket.create_connection(server.getsockname(), timeout=5):
            pass
    with socket.socket() as out, pytest.raises(OSError) as refused:  # nothing else is routed: refused at once
        out.settimeout(5)
        out.connect(("10.77.0.1", 9))
    assert refused.value.errno == errno.ENETUNREACH


@pytest.mark.loopback
def test_the_module_shares_one_child(child_pid: int) -> None:
    assert in_loopback_namespace()
    assert STARTED == [child_pid] and child_pid == os.getpid()


@pytest.mark.loopback
@pytest.mark.xfail(strict=True, reason="a failure in the child is the test's failure")
def test_a_failure_inside_is_reported() -> None:
    assert in_loopback_namespace()
    raise AssertionError("failed in the namespace")


def test_unmarked_tests_run_where_pytest_runs() -> None:
    assert os.environ.get("COWBIRD_LOOPBACK_REPORT") is None or in_loopback_namespace()


def test_a_child_past_its_time_is_killed_with_every_process_of_its_namespace() -> None:
    """A child run past its budget is killed with what its tests started, even a process that left
    its session (a node started with its own): nothing is left to hold the run's output open."""
    import shutil
    import subprocess
    import time
    from pathlib import Path

    from tests.loopback import _kill_namespace
    from tests.support import unavailable

    if shutil.which("unshare") is None or os.geteuid() != 0:
        unavailable("unshare as root is needed to make a network namespace")
    child = subprocess.Popen(["unshare", "--net", "--", "sh", "-c", "setsid sleep 300 & exec sleep 300"],
                             start_new_session=True, stdin=subprocess.DEVNULL)
    time.sleep(0.5)
    namespace = os.readlink(f"/proc/{child.pid}/ns/net")

    def members() -> list[int]:
        found = []
        for entry in Path("/proc").iterdir():
            try:
                if entry.name.isdigit() and os.readlink(entry / "ns" / "net") == namespace:
                    found.append(int(entry.name))
            except OSError:
                continue
        return found

    assert len(members()) == 2  # the child and the process that left its session
    _kill_namespace(child)
    assert child.returncode is not None
    deadline = time.monotonic() + 5
    while members() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert members() == []
