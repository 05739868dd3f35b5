"""The query builder's boxes (``cowbird.query.builder``): every parity query that fits the boxes
round-trips exactly (boxes → the same AST, and the AST's canonical CQP back), those that do not say
why; each operator stands for the regex it should; any boxes written are read back as the same boxes."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cowbird.query import AttributeTest, QueryError, TokenPattern, canonical, parse_cqp, serialize
from cowbird.query.builder import OPERATORS, Box, Boxes, DoesNotFit, TokenTest, escape, from_query, to_query
from cowbird.query.pcre import compile_pcre
from tests.support import parity_queries, require_reference

PARITY = parity_queries()
DO_NOT_FIT = {  # the parity queries the boxes cannot show, and what is in the way
    "q09": "<tags>", "q10": "<tags>", "q11": "::", "q12": "::", "q13": "alternatives", "q20": "::",
    "q23": "alternatives", "q27": "::", "q31": "|", "q32": "<tags>", "q36": "%d", "q38": "groups", "q42": "cut",
    "q43": "expand", "q44": "target",
}  # fmt: skip


@pytest.mark.parametrize(("query_id", "query"), PARITY)
def test_every_parity_query_that_fits_the_boxes_round_trips(query_id: str, query: str) -> None:
    require_reference()
    ast = parse_cqp(query)
    if query_id in DO_NOT_FIT:
        with pytest.raises(DoesNotFit, match=re.escape(DO_NOT_FIT[query_id])):
            from_query(ast)
        return
    boxes = from_query(ast)
    assert to_query(boxes) == ast
    assert canonical(serialize(to_query(boxes))) == canonical(query)
    assert from_query(to_query(boxes)) == boxes


def test_most_of_the_parity_set_fits() -> None:
    require_reference()
    assert len(PARITY) - len(DO_NOT_FIT) == 29


@pytest.mark.parametrize(("operator", "value", "matches", "misses"), [
    ("is", "U.S.", ["U.S."], ["UxSx", "U.S.A."]),
    ("is_not", "the", ["The", "a"], ["the"]),
    ("starts", "un(", ["un(", "un(done"], ["un", "xun("]),
    ("contains", "$", ["$", "a$b"], ["s"]),
    ("ends", "ing", ["ing", "going"], ["ingo"]),
    ("regex", "colou?r", ["color", "colour"], ["colouur"]),
    ("not_regex", "NN.*", ["JJ"], ["NN", "NNS"]),
])  # fmt: skip
def test_each_operator_stands_for_its_regex(operator: str, value: str, matches: list[str], misses: list[str]) -> None:
    assert operator in OPERATORS
    query = to_query(Boxes((Box((TokenTest("word", operator, value),)),)))
    assert isinstance(query.pattern, TokenPattern) and isinstance(query.pattern.condition, AttributeTest)
    test = query.pattern.condition
    regex = compile_pcre(f"^(?:{test.value.pattern})$")
    for word in matches + misses:
        found = (regex.search(word) is not None) != test.negated
        assert found == (word in matches), (operator, value, word)


def test_what_the_boxes_write() -> None:
    boxes = Boxes((Box((TokenTest("lemma", "is", "make"),)), Box((), 0, 2),
                   Box((TokenTest("pos", "starts", "NN"), TokenTest("word", "is_not", "time", True))),
                   Box((TokenTest("word", "regex", "[0-9]+"),), 1, None)), "s")
    assert serialize(to_query(boxes)) == ('[lemma="make"] []{0,2} [pos="NN.*" & word!="time"%c] [word="[0-9]+"]+ '
                                          "within s")
    assert from_query(parse_cqp('[lemma="make"] []{,2} [pos="NN.*" & word!="time"%c] [word="[0-9]+"]+ within s')) \
        == boxes


VALUES = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=8)
TESTS = st.builds(TokenTest, st.sampled_from(["word", "lemma", "pos"]), st.sampled_from(OPERATORS), VALUES,
                  st.booleans())
BOXES = st.builds(Boxes, st.lists(st.builds(Box, st.lists(TESTS, max_size=3).map(tuple),
                                            st.integers(0, 3), st.sampled_from([1, 2, 5, None])), min_size=1,
                                  max_size=4).map(tuple), st.sampled_from([None, "s", "text"]))


@given(BOXES)
def test_boxes_written_are_read_back_as_the_query(boxes: Boxes) -> None:
    """Any boxes make a query that reads back into boxes writing the same query (the operator may be
    read as another that means the same: ``starts`` with value ``a.*``, say)."""
    if any(box.max is not None and box.min > box.max for box in boxes.tokens):
        return
    query = to_query(boxes)
    try:
        text = serialize(query)
        parsed = parse_cqp(text)
    except QueryError:  # refused as a typed query would be: no obligatory token, a bad regex, a value no
        return  # CQP string holds
    assert parsed == query
    assert to_query(from_query(query)) == query


def test_escape_marks_every_regex_character() -> None:
    literal = "a.b*c+d?e(f)g[h]i{j}k|l^m$n\\o"
    assert compile_pcre(f"^(?:{escape(literal)})$").search(literal) is not None
    assert escape("house") == "house"


def test_a_value_is_searched_in_nfc_as_a_typed_one_is() -> None:
    # U+F900 (a CJK compatibility ideograph) is U+8C48 in NFC, and "e" + U+0301 is "é": the corpus holds
    # them so, and the boxes must search what a typed query searches
    for written, stored in (("\uf900", "\u8c48"), ("Cafe\u0301", "Caf\u00e9")):
        query = to_query(Boxes((Box((TokenTest("word", "is", written, False),), 1, 1),), None))
        assert serialize(query) == f'[word="{stored}"]'
        assert parse_cqp(serialize(query)) == query == parse_cqp(f'[word="{written}"]')
