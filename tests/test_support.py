"""The test suite's own rule: missing reference data skips outside CI and fails under CI."""

from __future__ import annotations

import pytest

from tests.support import unavailable


def test_outside_ci_a_missing_tool_skips(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="no cqp here"):
        unavailable("no cqp here")


def test_under_ci_a_missing_tool_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no cqp here; under CI every tool and the reference data"):
        unavailable("no cqp here")
