"""CQP's PCRE regexes rewritten for Python's ``regex``: what each construct matches, and what PCRE
refuses. Every expectation here was checked against real CQP 3.4.16 on EWT (the differential tests
in tests/engine/test_differential.py compare the two engines on whole queries)."""

from __future__ import annotations

import pytest

from cowbird.query.pcre import compile_error, compile_pcre, translate


def matches(pattern: str, text: str, ignore_case: bool = False) -> bool:
    return compile_pcre(pattern, ignore_case).search(text) is not None


@pytest.mark.parametrize(
    ("pattern", "ignore_case", "yes", "no"),
    [
        ("\\w+", False, ["³", "Ã³l", "a_1"], ["a-b", "é\u0301"]),  # UCP \w: L, N and _ (no marks)
        ("\\p{Lu}", True, ["A", "É"], ["a", "é"]),  # %c never folds a property
        ("[[:upper:]]", True, ["A", "a"], ["1"]),  # but [:upper:] becomes [:alpha:]
        ("[[:punct:]]", False, [".", "$", "~", "’"], ["♥", "£", "a"]),  # \p{P} and ASCII symbols only
        ("\\p{Xan}+", False, ["a1", "Ⅻ"], ["a-1"]),
        ("s{,2}", False, ["s{,2}"], ["s", "ss"]),  # PCRE 8: {,n} is literal text
        ("\\N", False, ["a", "."], ["\n"]),
        ("[[:<:]]a", False, ["a"], ["ba"]),
        ("d\\x{e9}cor", False, ["décor"], ["decor"]),
        ("\\o{101}", False, ["A"], ["a"]),
        ("\\Q.*\\E", False, [".*"], ["ab"]),
        ("the\\E", False, ["the"], ["thee"]),
        ("\\8", False, ["8"], ["\x08"]),
        ("[\\Z]", False, ["Z"], ["z"]),
        ("\\y", False, ["y"], ["\\y"]),
        ("ß", True, ["ß", "ẞ"], ["ss", "SS"]),  # simple case folding only
        ("a(?i)b", False, ["aB", "ab"], ["AB"]),  # an inline flag holds to the end of its group
        ("(?x) t h e", False, ["the"], ["t h e"]),
        ("a)|(b", False, ["abc", "cab"], ["cba"]),  # reaches out of CQP's ^(?:...)$
        ("[^\\W\\d]+", True, ["Ab"], ["a1"]),
        ("(a)\\1", False, ["aa"], ["a"]),
        ("\\12", False, ["\n"], ["12"]),  # no group 12: an octal escape
    ],
)
def test_what_a_pattern_matches(pattern: str, ignore_case: bool, yes: list[str], no: list[str]) -> None:
    assert [matches(pattern, text, ignore_case) for text in yes] == [True] * len(yes)
    assert [matches(pattern, text, ignore_case) for text in no] == [False] * len(no)


@pytest.mark.parametrize("pattern", ["\\Q", "a\\Q)|(b"])
def test_an_open_quote_swallows_cqps_closing_bracket(pattern: str) -> None:
    """CQP wraps the value as ^(?:value)$: an unclosed \\Q takes the ``)$`` as text, and PCRE then
    misses a ``)``."""
    error = compile_error(pattern)
    assert error is not None and error.message.startswith("missing )")


def test_self_contained() -> None:
    assert translate("a|b").self_contained
    assert not translate("a)|(b").self_contained
    assert not translate("\\Qa").self_contained
