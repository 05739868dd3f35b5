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
