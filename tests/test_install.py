"""Installing cowbird the way a user without ``make`` does: a fresh venv with the Python's own pip (no
``pip install --upgrade pip``), from a clean copy of the source: everything (``cowbird[all]``)
without the constraints, then the installed commands, a real encode and query and ``cowbird demo``;
and the node's and the front end's parts (``cowbird[node]``, ``cowbird[frontend]``) with the
constraints file the README names, each in its own venv, serving a corpus together.

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
import threading
import time
import tomllib
from pathlib import Path

import httpx
import pytest

from cowbird.commands.demo import port_in_use
from tests.clock import wait_until
from tests.support import ROOT, SAMPLE_P, SAMPLE_S, SAMPLE_VRT, free_ports, unavailable

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(600)]  # pip installs: minutes

CONSTRAINTS = "constraints.txt"
# never copied into the clean source: what a clone does not have
_NOT_SOURCE_ANYWHERE = shutil.ignore_patterns(
    ".git", ".venv", "venv", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis", "node_modules",
    "cowbird-accounts.sqlite3*",
)
_NOT_SOURCE_AT_THE_TOP = {"build", "dist", "demo-data"}  # setuptools' and the demo's, as .gitignore has them


def NOT_SOURCE(folder: str, names: list[str]) -> set[str]:  # noqa: N802 - shutil.copytree's ignore, a constant's role
    """What copytree leaves out of ``folder``: caches and venvs anywhere, ``build/``, ``dist/`` and
    ``demo-data/`` only at the top (``tools/build`` and ``tests/build`` are source)."""
    left_out = set(_NOT_SOURCE_ANYWHERE(folder, names))
    if Path(folder).resolve() == ROOT.resolve():
        left_out |= _NOT_SOURCE_AT_THE_TOP & set(names)
    return left_out
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


def _venv(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A fresh venv with the Python's own pip, as a user has it (not upgraded): its pip and python."""
    venv = tmp_path / name
    _ok(_run([sys.executable, "-m", "venv", venv], tmp_path))
    pip, python = venv / "bin" / "pip", venv / "bin" / "python"
    assert f"pip {ensurepip.version()} " in _ok(_run([pip, "--version"], tmp_path))
    probe = _run([pip, "index", "versions", "click", *PIP_QUIET, "--retries", "0", "--timeout", "20"], tmp_path)
    if probe.returncode != 0:
        unavailable(f"the package index is not reachable from pip, so cowbird cannot be installed: "
                    f"{(probe.stderr.strip().splitlines() or ['no message'])[-1]}")
    return pip, python


def _install(pip: Path, tmp_path: Path, requirement: str, source: Path, constrained: bool) -> dict[str, str]:
    """``pip install requirement`` (a wheel built from the clean source); what is installed then."""
    constraints: list[str | Path] = ["-c", source / CONSTRAINTS] if constrained else []
    _ok(_run([pip, "install", *PIP_QUIET, "--quiet", *constraints, requirement], tmp_path, timeout=900))
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
    return installed


def _imports_all(python: Path, tmp_path: Path, packages: list[str]) -> None:
    """Every module of these installed packages imports (not the __main__ modules, which run a
    command, nor the migrations' env.py, which runs only under alembic)."""
    walk = (
        "import importlib, pkgutil, sys\n"
        f"for top in {packages!r}:\n"
        "    package = importlib.import_module(top)\n"
        "    where = [package.__file__] if package.__file__ else list(package.__path__)\n"
        "    assert where and all(w.startswith(sys.prefix) for w in where), where\n"
        "    for info in pkgutil.walk_packages(getattr(package, '__path__', []), top + '.'):\n"
        "        if '.migrations' not in info.name and not info.name.endswith('.__main__'):\n"
        "            importlib.import_module(info.name)\n"
    )
    _ok(_run([python, "-c", walk], tmp_path))


def _source(tmp_path: Path) -> Path:
    # not named cowbird: a folder of that name in the working directory would join the namespace
    source = tmp_path / "clone"
    shutil.copytree(ROOT, source, ignore=NOT_SOURCE)
    return source


def _get(url: str, timeout: float = 60) -> httpx.Response:
    """GET ``url`` once it answers (a server starting up refuses connections first)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return httpx.get(url, timeout=10)
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.3)


def test_stock_pip_install_of_everything_gives_working_commands_and_the_demo(tmp_path: Path) -> None:
    """``pip install 'cowbird[all]'`` without the constraints (what pip resolves today): every
    module imports, the commands run, and ``cowbird demo`` serves from the installed wheel (its
    sample corpus is package data, not a file of the source tree)."""
    source = _source(tmp_path)
    pip, python = _venv(tmp_path, "venv")
    _install(pip, tmp_path, f"{source}[all]", source, constrained=False)
    _imports_all(python, tmp_path, ["cowbird"])
    # one namespace, nothing generic at the top of site-packages (no `web`, `tools`, card folders)
    site = Path(_ok(_run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                         tmp_path)).strip())
    generic = {"web", "tools", "calf", "frontend_api", "backend_node", "query_lang", "tests", "bench", "deploy"}
    assert not generic & {p.name for p in site.iterdir()}, sorted(generic & {p.name for p in site.iterdir()})
    assert not (site / "cowbird" / "__init__.py").exists()
    parts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-dir"]
    assert {p.name for p in (site / "cowbird").iterdir() if p.is_dir() and p.name != "__pycache__"} == {
        name.split(".")[1] for name in parts if name.count(".") == 1}

    bin_dir = python.parent
    cowbird, calf = bin_dir / "cowbird", bin_dir / "calf"
    assert "Usage: cowbird" in _ok(_run([cowbird, "--help"], tmp_path))
    assert "Usage: calf" in _ok(_run([calf, "--help"], tmp_path))
    registry = tmp_path / "registry"
    p_flags = [flag for p in SAMPLE_P[1:] for flag in ("-P", p)]
    s_flags = [flag for s in SAMPLE_S for flag in ("-S", s)]
    encoded = _ok(_run([cowbird, "encode", "-f", SAMPLE_VRT, "-d", tmp_path / "data", "-R", registry / "sample",
                        "-c", "utf8", "-xsB", *p_flags, *s_flags], tmp_path))
    assert "encoded 93 tokens" in encoded
    count = _ok(_run([cowbird, "query", "-r", registry, "-C", "sample", "--count", '[lemma="house"]'], tmp_path))
    assert count.strip() == "5"  # house ×4 and houses, in backend_node/cowbird/data/sample.vrt

    port = free_ports(3)[0]
    while any(port_in_use(p) for p in (port, port + 1, port + 2)):
        port = free_ports(1)[0]
    demo = subprocess.Popen([cowbird, "demo", "--dir", tmp_path / "demo", "--port", str(port), "--web-tokens", "5000"],
                            cwd=tmp_path, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines: list[str] = []
    assert demo.stdout is not None
    reader = threading.Thread(target=lambda: lines.extend(demo.stdout or []), daemon=True)
    reader.start()
    try:
        body = _get(f"http://127.0.0.1:{port}/api/v1/query?corpus=web&q=the", timeout=180).json()
        assert body["total"] > 0 and body["complete"] is True, body
        # the greeting comes once everything answers: the query may be answered a moment before it
        wait_until(lambda: any("cowbird is running at" in line for line in lines), 30, "the greeting")
    finally:
        demo.terminate()
        demo.wait(timeout=60)
        reader.join(timeout=10)
    output = "".join(lines)
    assert "cowbird is running at" in output, output


def test_node_and_front_end_install_apart_and_serve_the_demo_corpus_together(tmp_path: Path) -> None:
    """The two images' installs: ``cowbird[node]`` and ``cowbird[frontend]``, each in its own fresh
    venv with the constraints. The node's install has no web framework for accounts, the front end's
    no numba; each refuses the other's commands naming the extra; together they serve the sample
    corpus over real HTTP."""
    source = _source(tmp_path)
    node_pip, node_python = _venv(tmp_path, "node-venv")
    front_pip, front_python = _venv(tmp_path, "frontend-venv")
    on_node = _install(node_pip, tmp_path, f"{source}[node]", source, constrained=True)
    on_front = _install(front_pip, tmp_path, f"{source}[frontend]", source, constrained=True)
    assert {"numba", "llvmlite"} <= set(on_node)
    assert not {"sqlalchemy", "argon2-cffi", "psycopg", "rapidfuzz"} & set(on_node)
    assert {"sqlalchemy", "httpx"} <= set(on_front) and not {"numba", "llvmlite", "rapidfuzz", "lxml"} & set(on_front)
    _imports_all(node_python, tmp_path, ["cowbird.core", "cowbird.query", "cowbird.store", "cowbird.engines",
                                         "cowbird.node", "cowbird.node.query_cli"])
    _imports_all(front_python, tmp_path, ["cowbird.core", "cowbird.query", "cowbird.frontend", "cowbird.web"])

    node, front = node_python.parent / "cowbird", front_python.parent / "cowbird"
    refused = _run([front, "encode", "--help"], tmp_path)
    assert refused.returncode != 0 and "pip install 'cowbird[node]'" in refused.stderr, refused.stderr
    refused = _run([node, "serve", "--help"], tmp_path)
    assert refused.returncode != 0 and "pip install 'cowbird[frontend]'" in refused.stderr, refused.stderr

    sample = _ok(_run([node_python, "-c", "from cowbird.data import SAMPLE_VRT; print(SAMPLE_VRT)"], tmp_path)).strip()
    p_flags = [flag for p in SAMPLE_P[1:] for flag in ("-P", p)]
    s_flags = [flag for s in SAMPLE_S for flag in ("-S", s)]
    manifest = tmp_path / "sample.manifest.json"
    _ok(_run([node, "encode", "-f", sample, "-d", tmp_path / "data", "-R", tmp_path / "registry" / "sample",
              "-c", "utf8", "-xsB", *p_flags, *s_flags, "--manifest", manifest], tmp_path))
    (tmp_path / "node.token").write_text("a-node-token-for-this-test-only\n")
    node_port, front_port = free_ports(2)
    (tmp_path / "cowbird.toml").write_text(
        f'node_token_file = "node.token"\nport = {front_port}\n\n'
        f'[[corpora]]\nname = "sample"\ntitle = "Sample"\naccess = "public"\nmanifest = "{manifest}"\n\n'
        f'[corpora.nodes]\nsample = ["http://127.0.0.1:{node_port}"]\n'
    )
    processes = [
        subprocess.Popen([node, "node", "serve", "--registry", tmp_path / "registry", "--corpus", "sample",
                          "--port", str(node_port), "--token-file", "node.token"], cwd=tmp_path, env=_env()),
        subprocess.Popen([front, "serve", "--config", "cowbird.toml"], cwd=tmp_path, env=_env()),
    ]
    try:
        body = _get(f"http://127.0.0.1:{front_port}/api/v1/query?corpus=sample&q=%5Ehouse").json()
        assert (body["total"], body["complete"]) == (5, True), body
        page = _get(f"http://127.0.0.1:{front_port}/")
        assert page.status_code == 200 and "<form" in page.text
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(30)


def test_make_demo_installs_the_runtime_and_make_test_the_test_tools() -> None:
    """`make demo` needs only what runs the platform: no ruff, mypy, playwright, nor the PostgreSQL
    driver (the demo's accounts are in SQLite) (dry run of make)."""
    root = Path(__file__).resolve().parents[1]
    demo = subprocess.run(["make", "-n", "-B", "demo"], cwd=root, capture_output=True, text=True, timeout=60)
    test = subprocess.run(["make", "-n", "-B", "test"], cwd=root, capture_output=True, text=True, timeout=60)
    assert demo.returncode == 0 and test.returncode == 0, demo.stderr + test.stderr
    installs = [line for line in demo.stdout.splitlines() if " install " in line and "-c constraints.txt" in line]
    demo_install = "-e '.[node,frontend,calf,build,crawl]'"
    assert installs and all(line.rstrip().endswith(demo_install) for line in installs), demo.stdout
    assert "[test" not in demo.stdout and "postgres" not in demo.stdout and "[all" not in demo.stdout
    assert "cowbird demo" in demo.stdout
    assert any("-e '.[all,test" in line and "-c constraints.txt" in line for line in test.stdout.splitlines())
