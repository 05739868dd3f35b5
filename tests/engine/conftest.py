"""The judge the engine's tests ask: real CQP (CWB 3.4.16) on the reference EWT."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.realcqp import RealCqp, real_cqp


@pytest.fixture(scope="module")
def judge(request: pytest.FixtureRequest) -> Iterator[RealCqp]:
    """Real CQP on EWT for the module's tests (skips, or fails under CI, without it), closed after the
    last; each command may take the module's ``JUDGE_SECONDS`` (30 s where it says none)."""
    cqp = real_cqp(timeout=getattr(request.module, "JUDGE_SECONDS", 30.0))
    yield cqp
    cqp.close()
