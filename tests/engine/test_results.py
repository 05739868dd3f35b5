"""The shared results module: hits and lines from the store corpus, usable by either engine."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from cowbird.core.errors import UnknownAttribute
from cowbird.engines import Context, Hit
from cowbird.engines.native import NativeEngine
from cowbird.engines.results import ArrayResultSet, Matches, build_line
from cowbird.query import parse_cqp
from cowbird.store import CwbCorpus

ENGINES = Path(__file__).resolve().parents[2] / "backend_node" / "cowbird" / "engines"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    found = {a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names}
    return found | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}


@pytest.mark.parametrize("name", ["cwb.py", "results.py"])
def test_cwb_engine_and_results_do_not_depend_on_the_native_engine(name: str) -> None:
    assert not [m for m in imported_modules(ENGINES / name) if m.startswith("cowbird.engines.native")]


def test_lines_from_the_store_equal_the_native_engines(sample_registry: Path) -> None:
    engine = NativeEngine.open(sample_registry, "sample")
    query = '[pos="JJ"] @[pos="NNS?"]'
    result = engine.run(query)
    store = ArrayResultSet(CwbCorpus.open(sample_registry, "sample"), engine.evaluate(parse_cqp(query)))
    assert store.total == result.total == 4
    assert store.hits() == result.hits() and store.hits(1, 2) == result.hits()[1:3]
    assert all(h.target == h.matchend for h in store.hits())
    for context in (Context(3), Context(10, "s"), Context(0, "s"), Context(0)):
        assert store.kwic(0, 10, context, ["lemma"], ["text_genre", "s_id", "s"]) == result.kwic(
            0, 10, context, ["lemma"], ["text_genre", "s_id", "s"]
        )


def test_line_shape_and_unknown_names(sample_registry: Path) -> None:
    corpus = CwbCorpus.open(sample_registry, "sample")
    line = build_line(corpus, Hit(2, 2), Context(2), ["pos"], ["text_genre", "s"])
    assert line.left_start == 0 and len(line.left) == 2 and [t[0] for t in line.keyword] == ["house"]
    assert line.meta["s"] == "0"  # regions without values: the region number
    with pytest.raises(UnknownAttribute, match="no p-attribute 'tag'"):
        build_line(corpus, Hit(2, 2), Context(2), ["tag"], [])
    with pytest.raises(UnknownAttribute, match="no s-attribute 'chapter'"):
        build_line(corpus, Hit(2, 2), Context(2), [], ["chapter"])
    with pytest.raises(UnknownAttribute, match="no s-attribute 'chapter'"):
        build_line(corpus, Hit(2, 2), Context(2, "chapter"), [], [])


def test_empty_and_concatenated_matches() -> None:
    empty = Matches.empty()
    assert len(empty) == 0 and len(Matches.concatenate([])) == 0
    a = Matches(np.array([1, 5]), np.array([2, 5]), np.array([-1, 5]))
    both = Matches.concatenate([a, empty, a])
    assert both.match.tolist() == [1, 5, 1, 5] and both.target.tolist() == [-1, 5, -1, 5]
