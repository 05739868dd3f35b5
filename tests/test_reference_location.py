"""The reference data is found where COWBIRD_REFERENCE says, else beside the clone (../shared/reference)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT


def located(environment: dict[str, str]) -> Path:
    result = subprocess.run([sys.executable, "-c", "from tests.support import REFERENCE; print(REFERENCE)"],
                            cwd=ROOT, capture_output=True, text=True, timeout=60, env=environment, check=True)
    return Path(result.stdout.strip())


@pytest.mark.slow  # 2.0 s here (make quick leaves it out)
def test_cowbird_reference_names_the_reference_data(tmp_path: Path) -> None:
    without = {k: v for k, v in os.environ.items() if k != "COWBIRD_REFERENCE"}
    assert located(without) == (ROOT / ".." / "shared" / "reference").resolve()
    assert located({**without, "COWBIRD_REFERENCE": str(tmp_path / "ref")}) == (tmp_path / "ref").resolve()
