"""Why every dispatcher over the query AST ends in ``assert_never``: mypy then rejects one that
forgets a node type. Shown here by type-checking a deliberately incomplete dispatcher."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy import api

from tests.support import ROOT

COMPLETE = '''
from typing import assert_never

from cowbird.query import Alternation, Pattern, Repetition, Sequence, StructuralTag, TokenPattern


def width(pattern: Pattern) -> int:
    if isinstance(pattern, TokenPattern):
        return 1
    if isinstance(pattern, StructuralTag):
        return 0
    if isinstance(pattern, Sequence):
        return sum(width(item) for item in pattern.items)
    if isinstance(pattern, Alternation):
        return max(width(option) for option in pattern.options)
    if isinstance(pattern, Repetition):
        return width(pattern.item) * (pattern.max or pattern.min)
    assert_never(pattern)
'''

FORGETFUL = COMPLETE.replace('''    if isinstance(pattern, Repetition):
        return width(pattern.item) * (pattern.max or pattern.min)
''', "")


def _check(source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, int]:
    module = tmp_path / "dispatch.py"
    module.write_text(source)
    monkeypatch.setenv("MYPYPATH", str(ROOT / "query_lang"))  # the query language's source root
    out, err, status = api.run([str(module), "--strict", "--python-version", "3.11", "--follow-imports", "silent",
                                "--cache-dir", str(tmp_path / "cache"), "--config-file", ""])
    return out + err, status


@pytest.mark.slow
def test_mypy_rejects_a_dispatcher_that_misses_a_node_type(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    output, status = _check(COMPLETE, tmp_path, monkeypatch)
    assert status == 0, output
    output, status = _check(FORGETFUL, tmp_path, monkeypatch)
    assert status == 1
    assert 'Argument 1 to "assert_never" has incompatible type "Repetition"' in output
