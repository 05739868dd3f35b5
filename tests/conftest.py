"""Shared fixtures: the sample corpus encoded once per session, and the shared reference data; and
which tests share a pytest-xdist worker.

Helpers used by tests and benchmarks alike live in ``tests/support.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cowbird.store import Encoder
from tests.support import require_reference, sample_options


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under pytest-xdist with ``--dist loadscope`` (``make pytest``, ``make quick``: ``-n 2``) each
    test module runs whole on one worker — the processes its module-scoped fixtures start (a cluster,
    a demo, a real cqp, the network namespaces) start once, not on both — and so do all the browser
    tests, so that two Chromiums never compete for the two cores. (Grouping by marks, ``--dist
    loadgroup``, does nothing under pytest 9.2: pytest-xdist issue 1386.)"""
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModulesAndTheBrowser(LoadScopeScheduling):  # type: ignore[misc]  # (pytest-xdist is untyped)
        def _split_scope(self, nodeid: str) -> str:
            return "tests/browser" if nodeid.startswith("tests/browser/") else str(super()._split_scope(nodeid))

    return ModulesAndTheBrowser(config, log)


@pytest.fixture(scope="session")
def sample_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Registry directory holding the sample corpus as ``sample`` (one partition)."""
    base = tmp_path_factory.mktemp("sample")
    Encoder(sample_options(base / "data" / "sample", base / "registry" / "sample")).run()
    return base / "registry"


@pytest.fixture(scope="session")
def reference() -> Path:
    """``../shared/reference``; tests that need it skip (fail under CI) when it is absent."""
    return require_reference()
