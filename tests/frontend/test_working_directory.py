"""Real processes (issue 64, item 5): the processes cowbird starts itself — ``cowbird serve``'s background
process and ``cowbird demo``'s nodes and front end — start the same from any working directory, one
that holds a folder named ``cowbird`` (a package of the user's own, with its own ``__main__``) included:
they run with Python's ``-P``, so the working directory is not put before the installed package."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.frontend.test_background_process import background_pid
from tests.support import running_demo

pytestmark = [pytest.mark.e2e, pytest.mark.loopback]  # real processes over HTTP: only loopback

SHADOW = 'raise SystemExit("this is the working directory\'s own cowbird package, not the installed one")\n'


def shadowing_folder(base: Path) -> None:
    """A ``cowbird/`` package in ``base`` that ``python -m cowbird`` run there would find first."""
    folder = base / "cowbird"
    (folder / "commands").mkdir(parents=True)
    for name in ("__init__.py", "__main__.py", "commands/__init__.py"):
        (folder / name).write_text(SHADOW)


def test_a_folder_named_cowbird_in_the_working_directory_shadows_nothing(tmp_path: Path) -> None:
    shadowing_folder(tmp_path)  # the demo's processes (nodes, cowbird serve) run in tmp_path
    with running_demo(tmp_path, workers=1) as demo:
        front = demo.processes[-1].pid
        assert background_pid(front)  # the background process started and listens
        with httpx.Client(base_url=demo.url, timeout=60) as http:
            preview = http.get("/api/v1/query", params={"corpus": "sample", "q": "the"})
            assert preview.status_code == 200 and preview.json()["total"] > 0
            frequency = http.get("/api/v1/frequency", params={"corpus": "sample", "q": "the", "by": "word"})
            assert frequency.status_code == 200, frequency.text
            assert frequency.json()["total"] == preview.json()["total"]
            # estimated cheap: answered by the worker at once, as interactive work
            assert "x-cowbird-served-by" not in frequency.headers
            assert frequency.headers["x-cowbird-class"] == "interactive"
            sketch = http.get("/api/v1/sketch", params={"corpus": "sample", "headword": "house"})
            assert sketch.status_code == 200, sketch.text
            assert sketch.headers["x-cowbird-served-by"] == "background"
