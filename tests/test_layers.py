"""The layers of the package, as they run: what importing each part loads.

import-linter (`make lint`) checks the imports written in the code; these tests check what a fresh
interpreter actually loads, lazily imported modules included: the front end starts without numba,
llvmlite, the store or the engines, and without Calf unless it is enabled; the core and the query
language load no web framework.
"""

from __future__ import annotations

import json
import pkgutil
import subprocess
import sys

import pytest

HEAVY = ("numba", "llvmlite", "trafilatura", "lxml", "rapidfuzz")


def _loaded(statement: str) -> list[str]:
    """Modules loaded by ``statement`` in a fresh interpreter."""
    probe = (
        "import sys, json\n"
        f"{statement}\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    loaded: list[str] = json.loads(result.stdout.splitlines()[-1])
    return loaded


def _under(modules: list[str], tops: tuple[str, ...]) -> list[str]:
    return [m for m in modules if m in tops or m.startswith(tuple(f"{t}." for t in tops))]


@pytest.mark.slow
def test_the_front_end_loads_no_engine_store_compiler_or_calf() -> None:
    loaded = _loaded("import cowbird.frontend.app")
    assert _under(loaded, HEAVY) == []
    assert _under(loaded, ("cowbird.store", "cowbird.engines", "cowbird.node", "cowbird.calf")) == []


@pytest.mark.slow
@pytest.mark.parametrize("part", ["cowbird.core.wire", "cowbird.core.manifest", "cowbird.core.analysis_merge",
                                  "cowbird.core.errors", "cowbird.query"])
def test_the_core_and_the_query_language_are_light(part: str) -> None:
    loaded = _loaded(f"import {part}")
    assert _under(loaded, HEAVY + ("fastapi", "sqlalchemy", "httpx", "cowbird.store", "cowbird.engines")) == []


WEB_STACK = ("fastapi", "starlette", "uvicorn", "prometheus_client", "pydantic_settings", "cowbird.serving")


def test_the_whole_core_and_the_query_language_need_no_web_framework() -> None:
    """Every module of ``cowbird.core`` (found on disk, so a new one is covered) and ``cowbird.query``:
    the service plumbing that needs one lives in ``cowbird.serving``."""
    import cowbird.core

    core = sorted(f"cowbird.core.{info.name}" for info in pkgutil.iter_modules(cowbird.core.__path__))
    assert "cowbird.core.wire" in core
    loaded = _loaded("\n".join(f"import {name}" for name in ["cowbird.core", *core, "cowbird.query"]))
    assert _under(loaded, WEB_STACK) == []


def test_the_command_line_imports_a_subcommand_only_when_it_runs() -> None:
    loaded = _loaded("from cowbird.commands.cli import main\n"
                     "try:\n    main(['--help'])\nexcept SystemExit:\n    pass")
    assert _under(loaded, HEAVY + ("fastapi", "sqlalchemy", "cowbird.store", "cowbird.frontend", "cowbird.node")) == []
