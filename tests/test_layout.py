"""The design card's folders are the top level (``docs/architecture.md``, "Where each part lives"):
each is a source root holding its part of one ``cowbird`` namespace, and ``pyproject.toml`` lists
the packages explicitly and maps each part to its folder. A package added to the tree but not to
that list would be left out of every wheel, silently: this test names it."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

from tests.support import ROOT

ROOTS = ["query_lang", "frontend_api", "backend_node", "web", "tools/calf", "tools/build", "tools/crawl"]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _packages_in_tree() -> dict[str, Path]:
    """Every directory with an ``__init__.py`` under a root's ``cowbird/``, by its dotted name."""
    found: dict[str, Path] = {}
    for root in ROOTS:
        base = ROOT / root
        for init in sorted((base / "cowbird").rglob("__init__.py")):
            name = ".".join(init.parent.relative_to(base).parts)
            assert name not in found, f"{name} is in both {found[name]} and {init.parent}"
            found[name] = init.parent
    return found


def test_the_top_level_is_the_design_cards() -> None:
    top = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")}
    assert {"frontend_api", "backend_node", "query_lang", "web", "tools", "deploy", "tests"} <= top
    assert (ROOT / "tools" / "calf").is_dir() and (ROOT / "pyproject.toml").is_file()
    assert not (ROOT / "cowbird").exists(), "the parts live in the card's folders, not in a cowbird/ folder"


def test_cowbird_is_a_namespace_no_part_owns() -> None:
    for root in ROOTS:
        assert not (ROOT / root / "cowbird" / "__init__.py").exists(), root


def test_pyproject_lists_every_package_of_the_tree_and_maps_each_part_to_its_folder() -> None:
    setuptools = PYPROJECT["tool"]["setuptools"]
    in_tree = _packages_in_tree()
    listed = set(setuptools["packages"])
    assert listed - {"cowbird"} == set(in_tree), (
        f"in the tree, not in [tool.setuptools] packages: {sorted(set(in_tree) - listed)}; "
        f"listed, not in the tree: {sorted(listed - {'cowbird'} - set(in_tree))}")
    mapped = setuptools["package-dir"]
    for name, folder in in_tree.items():
        # a package is mapped itself or through its nearest mapped parent
        parent = max((m for m in mapped if name == m or name.startswith(m + ".")), key=len)
        rest = name[len(parent):].lstrip(".").split(".") if name != parent else []
        assert (ROOT / mapped[parent]).joinpath(*[p for p in rest if p]) == folder, name


def test_the_tools_search_every_root() -> None:
    tool = PYPROJECT["tool"]
    assert tool["mypy"]["mypy_path"] == ROOTS
    assert set(tool["mypy"]["files"]) == {*ROOTS, "tests", "bench"}  # the benchmarks too
    assert tool["pytest"]["ini_options"]["pythonpath"] == ROOTS
    assert set(tool["ruff"]["src"]) == {".", *ROOTS}
    roots = set(tool["importlinter"]["root_packages"])
    assert roots == {name for name in _packages_in_tree() if name.count(".") == 1}


def test_each_part_is_imported_from_its_card_folder() -> None:
    """What an editable install (``make``) resolves: every part from the folder that holds it."""
    for name, folder in _packages_in_tree().items():
        if name.count(".") == 1 and ".migrations" not in name:
            module = importlib.import_module(name)
            assert module.__file__ is not None and Path(module.__file__).parent == folder, (name, module.__file__)
