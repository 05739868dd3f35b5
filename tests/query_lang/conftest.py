"""What the query language's tests share."""

from __future__ import annotations

import pytest

from cowbird.query.sketch_grammar import SketchGrammarError, parse_grammar


def grammar_mistake(text: str, where: str, message: str) -> SketchGrammarError:
    """The mistake ``parse_grammar`` finds in ``text`` (a grammar file ``bad.wsdef``), after checking
    that it names the place ``where`` (line:column) and says ``message``."""
    with pytest.raises(SketchGrammarError) as raised:
        parse_grammar(text, "bad", "bad.wsdef")
    assert raised.value.where == f"bad.wsdef:{where}"
    assert message in raised.value.message
    return raised.value
