"""Installing cowbird the way a user without ``make`` does: a fresh venv with the Python's own pip (no
``pip install --upgrade pip``), ``pip install .`` from a clean copy of the source — once with the
constraints file the README names, once without — and then the installed commands, a real encode
and a real query.

This is what caught Python 3.11's pip 23.2 installing trafilatura's justext (Calf's text
extraction then) without ``lxml_html_clean`` (it does not match justext's ``lxml[html_clean]``
against lxml's ``html-clean`` extra), so that ``cowbird --help`` died at import: ``make`` upgrades
pip first and never saw it. Every module of the installed packages is imported here.

Needs the package index (pip's cache makes a second run quicker): without it the test skips,
saying so — under CI it fails.
"""

from __future__ import annotations

import ensurepip
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support import ROOT, SAMPLE_P, SAMPLE_S, SAMPLE_VRT, unavailable

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

CONSTRAINTS = "constraints.txt"
# never copied into the clean source: what a clone does not have
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "venv", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis",
    "demo-data", "node_modules", "cowbird-accounts.sqlite3*",
)
PIP_QUIET = ["--disable-pip-version-check", "--no-input"]


def _env() -> dict[str, str]:
    """The user's environment, less anything that points Python at this checkout or its venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    if sys.prefix != sys.base_prefix:  # the tests' own venv off PATH
        own = str(Path(sys.prefix) / "bin")
        env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != own)
    return env


def _run(args: list[str | Path], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(a) for a in args], cwd=cwd, env=_env(), capture_output=True, text=True, timeout=timeout, check=False
    )


def _ok(result: subprocess.CompletedProcess[str]) -> str:
    command = " ".join(result.args)
    assert result.returncode == 0, f"{command} exited {result.returncode}:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(constraints: Path) -> dict[str, str]:
    pins = {}
    for line in constraints.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, _, version = line.partition("==")
            assert version, f"{constraints.name}: not an exact pin: {line!r}"
            pins[_normalized(name)] = version.strip()
    return pins


@pytest.mark.parametrize("constrained", [True, False], ids=["with-constraints", "plain"])
def test_stock_pip_install_gives_working_commands(tmp_path: Path, constrained: bool) -> None:
    source = tmp_path / "cowbird"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    venv = tmp_path / "venv"
    _ok(_run([sys.executable, "-m", "venv", venv], tmp_path))
    pip, python = venv / "bin" / "pip", venv / "bin" / "python"

    # the pip that comes with this Python, as a user has it: not upgraded
    assert f"pip {ensurepip.version()} " in _ok(_run([pip, "--version"], tmp_path))

    probe = _run([pip, "index", "versions", "click", *PIP_QUIET, "--retries", "0", "--timeout", "20"], tmp_path)
    if probe.returncode != 0:
        unavailable(f"the package index is not reachable from pip, so cowbird cannot be installed: "
                    f"{(probe.stderr.strip().splitlines() or ['no message'])[-1]}")

    constraints: list[str | Path] = ["-c", source / CONSTRAINTS] if constrained else []
    _ok(_run([pip, "install", *PIP_QUIET, "--quiet", *constraints, source], tmp_path, timeout=900))

    installed = {
        _normalized(d["name"]): d["version"] for d in json.loads(_ok(_run([pip, "list", *PIP_QUIET, "--format=json"],
                                                                          tmp_path)))
    }
    if constrained:
        # the constraints cover every package the install pulled in, and pip kept to them
        pins = _pins(source / CONSTRAINTS)
        own = {"cowbird", "pip", "setuptools", "wheel"}
        unpinned = sorted(name for name in installed if name not in pins and name not in own)
        assert not unpinned, f"installed but not pinned in {CONSTRAINTS} (run `make constraints KEEP=1`): {unpinned}"
        off = {n: (v, pins[n]) for n, v in installed.items() if n in pins and pins[n] != v}
        assert not off, f"installed (left) other than pinned (right): {off}"

    # every module of the installed packages imports (not the __main__ modules, which run a command,
    # nor the migrations' env.py, which runs only under alembic)
    packages = ["cowbird", "query_lang", "backend_node", "frontend_api", "tools", "web"]
    walk = (
        "import importlib, pkgutil, sys\n"
        f"for top in {packages!r}:\n"
        "    package = importlib.import_module(top)\n"
        "    assert package.__file__ and package.__file__.startswith(sys.prefix), package.__file__\n"
        "    for info in pkgutil.walk_packages(package.__path__, top + '.'):\n"
        "        if '.migrations' not in info.name and not info.name.endswith('.__main__'):\n"
        "            importlib.import_module(info.name)\n"
    )
    _ok(_run([python, "-c", walk], tmp_path))

    cowbird, calf = venv / "bin" / "cowbird", venv / "bin" / "calf"
    assert "Usage: cowbird" in _ok(_run([cowbird, "--help"], tmp_path))
    assert "Usage: calf" in _ok(_run([calf, "--help"], tmp_path))

    registry = tmp_path / "registry"
    p_flags = [flag for p in SAMPLE_P[1:] for flag in ("-P", p)]
    s_flags = [flag for s in SAMPLE_S for flag in ("-S", s)]
    encoded = _ok(_run([cowbird, "encode", "-f", SAMPLE_VRT, "-d", tmp_path / "data", "-R", registry / "sample",
                        "-c", "utf8", "-xsB", *p_flags, *s_flags], tmp_path))
    assert "encoded 93 tokens" in encoded
    count = _ok(_run([cowbird, "query", "-r", registry, "-C", "sample", "--count", '[lemma="house"]'], tmp_path))
    assert count.strip() == "5"  # house ×4 and houses, in tests/data/sample.vrt


def test_make_demo_installs_the_runtime_and_make_test_the_test_tools() -> None:
    """`make demo` needs only what runs the platform: no ruff, mypy, playwright (dry run of make)."""
    root = Path(__file__).resolve().parents[1]
    demo = subprocess.run(["make", "-n", "-B", "demo"], cwd=root, capture_output=True, text=True, timeout=60)
    test = subprocess.run(["make", "-n", "-B", "test"], cwd=root, capture_output=True, text=True, timeout=60)
    assert demo.returncode == 0 and test.returncode == 0, demo.stderr + test.stderr
    installs = [line for line in demo.stdout.splitlines() if " install " in line and "-c constraints.txt" in line]
    assert installs and all(line.rstrip().endswith("-e .") for line in installs), demo.stdout
    assert "[test" not in demo.stdout and "cowbird demo" in demo.stdout
    assert any("-e '.[test" in line and "-c constraints.txt" in line for line in test.stdout.splitlines())
