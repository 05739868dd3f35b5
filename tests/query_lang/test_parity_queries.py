"""Every CQP query of the parity set (../shared/reference/parity/queries.tsv) parses and round-trips."""

from __future__ import annotations

import pytest

from cowbird.query import canonical, parse_cqp, serialize
from tests.support import parity_queries, require_reference

PARITY = parity_queries()


def test_parity_set_is_complete() -> None:
    require_reference()
    assert len(PARITY) == 44


@pytest.mark.parametrize(("query_id", "query"), PARITY)
def test_parity_query_round_trips(query_id: str, query: str) -> None:
    require_reference()
    ast = parse_cqp(query)
    text = serialize(ast)
    assert parse_cqp(text) == ast
    assert canonical(text) == text


@pytest.mark.parametrize(("query_id", "query"), PARITY)
def test_parity_query_canonical_form_is_the_query_itself_or_a_known_rewrite(
    query_id: str, query: str
) -> None:
    require_reference()
    # The parity queries are written almost canonically; these three are not.
    rewrites = {
        "q02": '[word="house"]',
        "q31": '[pos="PRP"] [lemma="be"] [word="not" | word="n\'t"] [pos="VBG"]',
        "q37": '[word="\\("] []{1,5} [word="\\)"]',
    }
    assert canonical(query) == rewrites.get(query_id, query)
