"""Shared fixtures: the sample corpus encoded once per session, and the shared reference data.

Helpers used by tests and benchmarks alike live in ``tests/support.py``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cowbird.store import Encoder
from tests.support import require_reference, sample_options


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
