"""Every CQP query of the parity set (../shared/reference/parity/queries.tsv) parses and round-trips."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from query_lang import canonical, parse_cqp, serialize

QUERIES_TSV = Path(__file__).resolve().parents[2] / ".." / "shared" / "reference" / "parity" / "queries.tsv"


def _parity_queries() -> list[Any]:
    if not QUERIES_TSV.is_file():
        reason = (
            f"parity queries not found at {QUERIES_TSV.resolve()} (the shared/ folder beside the project)"
        )
        return [pytest.param("", "", marks=pytest.mark.skip(reason=reason), id="no-reference-data")]
    rows = []
    for line in QUERIES_TSV.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            query_id, query = line.split("\t", 1)
            rows.append(pytest.param(query_id, query, id=query_id))
    return rows


PARITY = _parity_queries()


def test_parity_set_is_complete() -> None:
    if not QUERIES_TSV.is_file():
        pytest.skip(f"parity queries not found at {QUERIES_TSV.resolve()}")
    assert len(PARITY) == 44


@pytest.mark.parametrize(("query_id", "query"), PARITY)
def test_parity_query_round_trips(query_id: str, query: str) -> None:
    ast = parse_cqp(query)
    text = serialize(ast)
    assert parse_cqp(text) == ast
    assert canonical(text) == text


@pytest.mark.parametrize(("query_id", "query"), PARITY)
def test_parity_query_canonical_form_is_the_query_itself_or_a_known_rewrite(
    query_id: str, query: str
) -> None:
    # The parity queries are written almost canonically; these three are not.
    rewrites = {
        "q02": '[word="house"]',
        "q31": '[pos="PRP"] [lemma="be"] [word="not" | word="n\'t"] [pos="VBG"]',
        "q37": '[word="\\("] []{1,5} [word="\\)"]',
    }
    assert canonical(query) == rewrites.get(query_id, query)
