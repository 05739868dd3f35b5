"""Tests that send load or faults run inside a network namespace that has only loopback.

A test marked ``@pytest.mark.loopback`` (or a module with ``pytestmark = [..., pytest.mark.loopback]``)
starts servers and floods them, kills them, or lets a stand-in lie; whatever it starts must not be
able to reach another address, whatever the test gets wrong. So such a test never runs in the
machine's own network namespace: when pytest reaches the first loopback test of a module, it runs
all of that module's selected loopback tests in one child pytest under ``unshare --net`` (a new
network namespace: only ``lo``, which the child brings up first), and reports the child's results
as the tests' own — setup, call and teardown, with their output — so ``-k``, ``-x``, pytest-xdist
and the summary work as for any test. Module-scoped fixtures run once, in the child.

Where namespaces cannot be made (not root, no ``unshare``), the tests skip saying why, and fail
under CI (``tests/support.py:unavailable``). Inside the child, ``in_loopback_namespace`` is true
and the tests run as usual; a test may call ``require_loopback_namespace()`` to be sure of it.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from _pytest.reports import TestReport

MARK = "loopback"
CHILD = "COWBIRD_LOOPBACK_REPORT"
"""Set in the child pytest: the file its tests' reports are written to, one JSON line each."""
ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TIMEOUT = 120.0
CHILD_MARGIN = 120.0
"""Seconds the child may take beyond its tests' own timeouts (its start, the imports, collection)."""
_RESULTS = pytest.StashKey[dict[str, list[dict[str, Any]]]]()
_PROBLEM = pytest.StashKey[str]()
_BUDGET = pytest.StashKey[float]()  # the module's loopback tests' own timeouts, summed


def interfaces() -> list[str]:
    """The network interfaces of this process's namespace (``/proc/self/net/dev``: per namespace,
    unlike ``/sys/class/net``, which shows the namespace that mounted sysfs)."""
    with open("/proc/self/net/dev") as dev:
        return [line.split(":", 1)[0].strip() for line in dev.readlines()[2:] if ":" in line]


def in_loopback_namespace() -> bool:
    """Whether this process's network namespace has no interface but loopback."""
    try:
        return interfaces() == ["lo"]
    except OSError:
        return False


def reexec_in_loopback_namespace() -> None:
    """For a benchmark script: unless this process already has only loopback, run it again (same Python,
    same arguments) in a new network namespace with only ``lo``, up (``unshare --net``); never returns then."""
    if in_loopback_namespace():
        return
    command = " ".join(shlex.quote(part) for part in [sys.executable, *sys.argv])
    os.execvp("unshare", ["unshare", "--net", "sh", "-c", f"ip link set lo up && exec {command}"])


def require_loopback_namespace() -> None:
    """Fail the test unless it runs where only loopback exists (mark it ``loopback``)."""
    if not in_loopback_namespace():
        pytest.fail(f"this test must run in a network namespace with only loopback (mark it "
                    f"@pytest.mark.{MARK}); here: {', '.join(interfaces())}", pytrace=False)


def namespace_problem() -> str | None:
    """Why no network namespace can be made here, or None."""
    if not sys.platform.startswith("linux"):
        return "network namespaces are a Linux feature"
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        return "unshare (util-linux) and ip (iproute2) are needed to run it inside a network namespace"
    if os.geteuid() != 0:
        return "making a network namespace (unshare --net) needs root"
    return None


def _timeout(item: pytest.Item) -> float:
    mark = item.get_closest_marker("timeout")
    if mark is not None and mark.args:
        return float(mark.args[0])
    if mark is not None and "timeout" in mark.kwargs:
        return float(mark.kwargs["timeout"])
    try:
        return float(item.config.getini("timeout") or DEFAULT_TIMEOUT)
    except (TypeError, ValueError):  # pytest-timeout not installed: no such ini value
        return DEFAULT_TIMEOUT


def _module(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Outside a loopback namespace: each loopback test's timeout covers its module's child run; where
    no namespace can be made, the tests skip (fail under CI) saying why."""
    if in_loopback_namespace() or os.environ.get(CHILD):
        return
    marked = [item for item in items if item.get_closest_marker(MARK) is not None]
    if not marked:
        return
    problem = namespace_problem()
    if problem is not None:
        from tests.support import in_ci

        for item in marked:
            if in_ci():  # fails in pytest_runtest_protocol, saying why
                item.stash[_PROBLEM] = problem
            else:
                item.add_marker(pytest.mark.skip(reason=f"needs a network namespace with only loopback: {problem}"))
        return
    per_module: dict[str, float] = {}
    for item in marked:
        per_module[_module(item)] = per_module.get(_module(item), 0.0) + _timeout(item)
    for item in marked:  # the first of a module runs them all: its timeout is theirs together
        item.stash[_BUDGET] = per_module[_module(item)]
        # in front of the test's own timeout mark, which would otherwise be the closest
        item.add_marker(pytest.mark.timeout(per_module[_module(item)] + CHILD_MARGIN), append=False)



def _run_child(item: pytest.Item, selected: list[pytest.Item]) -> dict[str, list[dict[str, Any]]]:
    """Run ``selected`` (one module's loopback tests) in a child pytest inside a new network namespace;
    each test's reports as the child wrote them (``pytest_report_to_serializable``)."""
    with tempfile.TemporaryDirectory(prefix="cowbird-loopback-") as tmp:
        report_file = Path(tmp) / "reports.jsonl"
        report_file.touch()
        env = {**os.environ, CHILD: str(report_file)}
        env.pop("PYTEST_XDIST_WORKER", None)
        env.pop("PYTEST_XDIST_WORKER_COUNT", None)
        env.pop("PYTEST_ADDOPTS", None)
        command = ["unshare", "--net", "--", "sh", "-c", 'ip link set lo up && exec "$@"', "sh",
                   sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                   "-o", "addopts=--strict-markers", *[s.nodeid for s in selected]]
        # the parent's own timeout for this item is the budget + CHILD_MARGIN: the child ends before it
        limit = item.stash.get(_BUDGET, sum(_timeout(s) for s in selected)) + CHILD_MARGIN - 20
        output_file = Path(tmp) / "output.txt"
        with output_file.open("w+") as out:  # a file, not a pipe: a process left behind holds no read open
            child = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
            try:
                child.wait(timeout=limit)
                note = ""
            except subprocess.TimeoutExpired:
                _kill_namespace(child)
                note = f"the child pytest did not end within {limit:.0f} s: it and its processes were killed\n"
            out.seek(0)
            output = note + out.read()
        results: dict[str, list[dict[str, Any]]] = {s.nodeid: [] for s in selected}
        for line in report_file.read_text().splitlines():
            data = json.loads(line)
            results.setdefault(data["nodeid"], []).append(data)
        results["::child-output::"] = [{"output": output}]
        return results


def _kill_namespace(child: subprocess.Popen[bytes]) -> None:
    """Kill the child and every process in its network namespace (the nodes and front ends its tests
    started, which may have left its process group), then reap it."""
    try:
        namespace = os.readlink(f"/proc/{child.pid}/ns/net")
    except OSError:
        namespace = None
    if namespace is not None and namespace != os.readlink("/proc/self/ns/net"):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                if os.readlink(entry / "ns" / "net") == namespace:
                    os.kill(int(entry.name), 9)
            except OSError:
                continue  # gone already, or not ours to read
    try:
        os.killpg(child.pid, 9)
    except OSError:
        pass
    child.wait()


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> bool | None:
    """A loopback test outside a loopback namespace: its module's child run's reports, replayed."""
    if item.get_closest_marker(MARK) is None or in_loopback_namespace() or os.environ.get(CHILD):
        return None
    results = item.session.stash.setdefault(_RESULTS, {})
    if item.nodeid not in results and _PROBLEM not in item.stash:
        selected = [i for i in item.session.items
                    if _module(i) == _module(item) and i.get_closest_marker(MARK) is not None]
        results.update(_run_child(item, selected))
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    if _PROBLEM in item.stash:  # under CI: every test must run
        problem = item.stash[_PROBLEM]
        records = [_failed(item, f"needs a network namespace with only loopback: {problem}; under CI it must run")]
    else:
        records = results.get(item.nodeid, [])
    if not any(r.get("when") == "call" or r.get("outcome") != "passed" for r in records):
        output = results.get("::child-output::", [{"output": ""}])[0]["output"]
        records = [_failed(item, "the test's child run in a network namespace gave no result:\n" + output[-8000:])]
    for data in records:
        report = item.config.hook.pytest_report_from_serializable(config=item.config, data=data)
        item.ihook.pytest_runtest_logreport(report=report)
    # what the test before kept for this one (a package's fixtures) goes as a run test's teardown would
    # take it, else the next test here finds it set up ("previous item was not torn down properly")
    item.session._setupstate.teardown_exact(nextitem)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


def _failed(item: pytest.Item, text: str) -> dict[str, Any]:
    report = TestReport(item.nodeid, item.location, {}, "failed", text, "call")
    data: dict[str, Any] = item.config.hook.pytest_report_to_serializable(config=item.config, report=report)
    return data


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """In the child: every report, to the file the parent reads."""
    target = os.environ.get(CHILD)
    config = _CONFIG.get("config")
    if not target or config is None:
        return
    data = config.hook.pytest_report_to_serializable(config=config, report=report)
    with open(target, "a") as out:
        out.write(json.dumps(data) + "\n")


_CONFIG: dict[str, pytest.Config] = {}


def pytest_configure(config: pytest.Config) -> None:
    _CONFIG["config"] = config
    if os.environ.get(CHILD) and not in_loopback_namespace():
        raise pytest.UsageError(f"{CHILD} is set but this process's namespace has {', '.join(interfaces())}")
