"""The loopback web and archives Calf's tests fetch from (``tests/calf/web.py``, ``archive_web.py``),
empty: each test puts there what it needs. A module needing more (robots.txt, pages) has its own ``web``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.calf.archive_web import LocalArchives
from tests.calf.web import LocalWeb


@pytest.fixture
def web() -> Iterator[LocalWeb]:
    with LocalWeb() as local:
        yield local


@pytest.fixture
def archives() -> Iterator[LocalArchives]:
    with LocalArchives() as local:
        yield local
