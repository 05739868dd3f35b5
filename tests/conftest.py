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

pytest_plugins = ["tests.loopback"]
"""Tests marked ``loopback`` run in a network namespace with only loopback (``tests/loopback.py``)."""

DIFFERENTIAL = "tests/engine/test_differential.py::"
SPLIT_BY_TEST = (DIFFERENTIAL,)
"""Modules shared out test by test: the differential tests against real CQP take a quarter of the
suite's time, too long for one worker while the other idles (each worker opens the corpora and starts
a CQP of its own)."""


FIRST = ("tests/browser", f"{DIFFERENTIAL}test_native_engine_agrees_with_real_cqp", "tests/test_install.py",
         f"{DIFFERENTIAL}test_anchors_and_labels_on_repeated_items_agree_with_real_cqp",
         "tests/frontend/test_multi_host.py", "tests/frontend/test_abuse_processes.py",
         "tests/frontend/test_cluster_faults.py", f"{DIFFERENTIAL}test_native_engine_on_a_compressed_corpus_agrees",
         "tests/frontend/test_demo_command.py", "tests/frontend/test_shared_state.py",
         f"{DIFFERENTIAL}test_mu_and_tab_queries_agree", "tests/frontend/test_readme_session.py",
         # not long, but its cwb-engine cases run real cqp through cwb-ccc, which select()s on its pipes:
         # late in a worker that has opened more than 1,024 files by then, select() refuses (the full
         # suite of 2026-12-02); early, it runs before the worker's descriptors grow
         "tests/frontend/test_filter_operators.py")
"""Scopes handed out first, the longest first (1.5-5 minutes each: Chromium, the generated queries
against real CQP, fresh venvs, clusters, a demo). pytest-xdist hands out the scopes with the most
tests first, which left these for the end — one worker busy with them for minutes while the other
had nothing left to do."""


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """Under pytest-xdist with ``--dist loadscope`` (``make pytest``, ``make quick``: ``-n 2``) each
    test module runs whole on one worker — the processes its module-scoped fixtures start (a cluster,
    a demo, a real cqp, the network namespaces) start once, not on both — and so do all the browser
    tests, so that two Chromiums never compete for the two cores; the modules of ``SPLIT_BY_TEST``
    go test by test, and the scopes of ``FIRST`` go out first. (Grouping by marks, ``--dist
    loadgroup``, does nothing under pytest 9.2: pytest-xdist issue 1386.)"""
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ModulesAndTheBrowser(LoadScopeScheduling):  # type: ignore[misc]  # (pytest-xdist is untyped)
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith("tests/browser/"):
                return "tests/browser"
            if nodeid.startswith(SPLIT_BY_TEST):  # each test whole (its parameters together)
                return nodeid.split("[", 1)[0]
            return str(super()._split_scope(nodeid))

        def _assign_work_unit(self, node: Any) -> None:
            if not getattr(self, "_ordered", False):  # once, before the first unit goes out
                self._ordered = True
                heavy = [scope for first in FIRST for scope in list(self.workqueue) if scope.startswith(first)]
                for scope in reversed(heavy):
                    self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

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
