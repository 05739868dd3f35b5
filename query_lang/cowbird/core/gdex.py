"""Good examples first (``sort=gdex``): a score of how quotable a concordance line is, after Kilgarriff
et al.'s GDEX (2008) — whole sentences of moderate length, few rare words, numbers or symbols, no
URLs, balanced brackets, the match not at the sentence's edge.

Each hit is scored on the region around its match's first token (``region``, the sentence ``s`` by
default): its tokens t0 … t(n-1), the match from token ``start`` to ``end`` (which may lie past the
region). Each rule gives a value from 0 to 1, and the score is their mean weighted by ``weights``,
summed in the order of ``RULES``:

============  =================================================================================
rule          value
============  =================================================================================
length        1 for ``min_length`` <= n <= ``max_length``; shorter: n / min_length; longer:
              max_length / n
whole         1 when t0 without leading ``" ' “ ‘ « „ ( [`` begins with a character that is
              ``isupper()`` or ``isdigit()``, and t(n-1) without trailing ``" ' ” ’ » ) ]`` ends
              with ``.``, ``!``, ``?`` or ``…``; else 0 (tokens, not words: a lone ``"`` first is not)
rare          1 − (rare words / ``max_rare``), at least 0 (1 when ``common_words`` is 0): a rare
              word is a token of letters (``is_word``: letters — ``c.isalnum() and not
              c.isdecimal()`` — then groups of one joiner ``'`` ``’`` ``-`` and letters) whose
              ``str.lower()`` is not among the common words: the corpus's ``common_words`` most
              frequent word forms (counted as written, ties in code-point order), each lowercased
numbers       1 − (numbers or symbols / ``max_rare``), at least 0: tokens with a character that is
              ``isdigit()``, or neither ``isalnum()`` nor punctuation (Unicode category P*)
urls          0 when a token matches ``_URL`` (``://``; ``www.`` first; ``@`` with a ``.`` after it
              before another ``@`` or a space; ``.com`` ``.org`` ``.net`` ``.de`` ``.uk`` ``.info``
              ``.htm`` ``.html`` ``.php`` before the end or a non-word character); else 1
brackets      1 when, for each of ( ), [ ] and { }, reading token by token the closing ones never
              outnumber the opening ones before them and in the end there are as many of each,
              and straight double quotes come in pairs; else 0
edge          1 when ``start`` > 0 and ``end`` < w, w the last token not all punctuation (looking
              back to t1; 0 when none is); else 0
============  =================================================================================

Hits outside any region score 0. The score depends on the hit's sentence and on the corpus's
common words alone — the same on any partition —, so a sorted page merges across partitions
exactly like every sort: the nodes sort on ``key = 1,000,000 − round(score × 1,000,000)``
(ascending: best first), equal keys in corpus order. The front end counts the corpus's
``common_words`` most frequent word forms exactly over every partition (a word list) and sends
them with the sort; it recomputes each shown hit's score and values with ``explain`` from the hit's
sentence and checks them against the key the nodes sorted on (``docs/http-api.md`` writes the rules
out for users, and ``tests/frontend/test_gdex_explained.py`` recomputes them without this module).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field, model_validator

SCALE = 1_000_000
"""Scores are compared as integers: the nodes sort on SCALE − round(score × SCALE)."""

MAX_COMMON_WORDS = 3_000
"""Common words a sort request carries at most (a node's request bodies are bounded)."""


class GdexWeights(BaseModel):
    """How much each rule counts (0: not at all)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    length: float = Field(2.0, ge=0)
    whole: float = Field(1.0, ge=0)
    rare: float = Field(2.0, ge=0)
    numbers: float = Field(1.0, ge=0)
    urls: float = Field(1.0, ge=0)
    brackets: float = Field(1.0, ge=0)
    edge: float = Field(1.0, ge=0)

    @model_validator(mode="after")
    def _some(self) -> GdexWeights:
        if not sum(self.model_dump().values()):
            raise ValueError("at least one GDEX weight must be above 0")
        return self


class GdexRules(BaseModel):
    """A corpus's GDEX rules (``[corpora.gdex]``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    region: str = Field("s", description="The s-attribute whose region around the match is scored (a sentence).")
    min_length: int = Field(10, ge=1, description="Tokens a good sentence has at least.")
    max_length: int = Field(25, ge=1, description="Tokens a good sentence has at most.")
    max_rare: int = Field(3, ge=1, le=1_000, description=(
        "Rare words (or numbers and symbols) that bring their rule to 0."))
    common_words: int = Field(2_000, ge=0, le=MAX_COMMON_WORDS, description=(
        "The corpus's most frequent word forms that are not rare (0: the rare-word rule is off)."))
    weights: GdexWeights = Field(default_factory=GdexWeights)

    @model_validator(mode="after")
    def _lengths(self) -> GdexRules:
        if self.min_length > self.max_length:
            raise ValueError(f"min_length ({self.min_length}) is more than max_length ({self.max_length})")
        return self


class GdexSpec(BaseModel):
    """What a node scores with: the rules and the corpus's common word forms (lowercased)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rules: GdexRules = Field(default_factory=GdexRules)
    common: tuple[str, ...] = Field((), max_length=MAX_COMMON_WORDS)


# -- the rules on single tokens (the node applies them to each distinct word form once) -------------

_LETTERS = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", re.UNICODE)
_URL = re.compile(r"(?i)(://|^www\.|@[^@\s]*\.|\.(com|org|net|de|uk|info|html?|php)\b)")
_END = (".", "!", "?", "…")


def is_word(token: str) -> bool:
    """A token of letters (with inner apostrophes or hyphens): the tokens rare words are counted among."""
    return _LETTERS.fullmatch(token) is not None


def is_rare(token: str, common: frozenset[str]) -> bool:
    return is_word(token) and token.lower() not in common


def is_number_or_symbol(token: str) -> bool:
    """A token with a digit, or with a character that is neither a letter, a digit nor punctuation."""
    return any(c.isdigit() for c in token) or any(not (c.isalnum() or is_punctuation(c)) for c in token)


def is_punctuation(c: str) -> bool:
    return unicodedata.category(c).startswith("P")


def is_url(token: str) -> bool:
    return _URL.search(token) is not None


def starts_sentence(token: str) -> bool:
    """The first token: a capital letter, possibly after opening quotes or brackets, or a number."""
    stripped = token.lstrip("\"'“‘«„([")
    return bool(stripped) and (stripped[0].isupper() or stripped[0].isdigit())


def ends_sentence(token: str) -> bool:
    """The last token: ends in . ! ? or …, possibly followed by closing quotes or brackets."""
    return token.rstrip("\"'”’»)]").endswith(_END)


def bracket_counts(token: str) -> tuple[int, int, int, int]:
    """The token's net ( ) [ ] { } counts (opening minus closing, each kind) and its straight double quotes."""
    return (token.count("(") - token.count(")"), token.count("[") - token.count("]"),
            token.count("{") - token.count("}"), token.count('"'))


def balanced(tokens: list[str]) -> bool:
    """The brackets rule: each kind's running count (token by token) never below 0 and 0 at the end,
    and an even number of straight double quotes."""
    running = [0, 0, 0]
    quotes = 0
    for token in tokens:
        *kinds, quoted = bracket_counts(token)
        quotes += quoted
        for k, net in enumerate(kinds):
            running[k] += net
            if running[k] < 0:
                return False
    return running == [0, 0, 0] and quotes % 2 == 0


RULES = ("length", "whole", "rare", "numbers", "urls", "brackets", "edge")
"""The rules in the order their weighted values are summed (the order matters to the last bit of the float)."""


@dataclass(frozen=True)
class Explained:
    """A hit's GDEX score and what made it: each rule's value (``RULES``), and the sentence's tokens
    that the rare-word, number and URL rules counted."""

    score: float
    values: dict[str, float]
    length: int
    rare: list[str]
    numbers: list[str]
    urls: list[str]

    @property
    def key(self) -> int:
        return sort_key(self.score)


class Scorer:
    """``explain`` for many hits under one corpus's rules and common words: each word form's
    properties (rare, a number or symbol, a URL, a bracket or quote in it) found once."""

    def __init__(self, rules: GdexRules, common: frozenset[str]) -> None:
        self.rules, self.common = rules, common
        self.weights: dict[str, float] = rules.weights.model_dump()
        self.total = sum(self.weights.values())
        self._facts: dict[str, tuple[bool, bool, bool, bool]] = {}

    def _of(self, token: str) -> tuple[bool, bool, bool, bool]:
        facts = self._facts.get(token)
        if facts is None:
            facts = self._facts[token] = (bool(self.rules.common_words) and is_rare(token, self.common),
                                          is_number_or_symbol(token), is_url(token),
                                          any(c in token for c in '()[]{}"'))
        return facts

    def explain(self, sentence: list[str], start: int, end: int) -> Explained:
        """The GDEX score of a hit whose match runs from token ``start`` to ``end`` (inclusive) of its
        sentence ``sentence``, with each rule's value — the rules written out one by one (the nodes
        compute the same with arrays; the tests hold the two to each other)."""
        rules, length = self.rules, len(sentence)
        facts = [self._of(t) for t in sentence]
        rare = [t for t, f in zip(sentence, facts, strict=True) if f[0]]
        numbers = [t for t, f in zip(sentence, facts, strict=True) if f[1]]
        urls = [t for t, f in zip(sentence, facts, strict=True) if f[2]]
        bracketed = [t for t, f in zip(sentence, facts, strict=True) if f[3]]  # the others count 0 of each kind
        values = {
            "length": 1.0 if rules.min_length <= length <= rules.max_length
            else length / rules.min_length if length < rules.min_length else rules.max_length / length,
            "whole": 1.0 if starts_sentence(sentence[0]) and ends_sentence(sentence[-1]) else 0.0,
            "rare": 1.0 if not rules.common_words else max(0.0, 1 - len(rare) / rules.max_rare),
            "numbers": max(0.0, 1 - len(numbers) / rules.max_rare),
            "urls": 0.0 if urls else 1.0,
            "brackets": 1.0 if balanced(bracketed) else 0.0,
            "edge": 1.0 if start > 0 and end < _last_word(sentence) else 0.0,
        }
        total = float(sum(self.weights[name] * values[name] for name in RULES) / self.total)
        return Explained(total, values, length, rare, numbers, urls)


def explain(sentence: list[str], start: int, end: int, rules: GdexRules, common: frozenset[str]) -> Explained:
    """``Scorer.explain`` of one hit."""
    return Scorer(rules, common).explain(sentence, start, end)


def score(sentence: list[str], start: int, end: int, rules: GdexRules, common: frozenset[str]) -> float:
    """The GDEX score of a hit whose match runs from token ``start`` to ``end`` (inclusive) of its
    sentence ``sentence`` (``explain``'s score)."""
    return explain(sentence, start, end, rules, common).score


def _last_word(sentence: list[str]) -> int:
    """The index of the sentence's last token before its closing punctuation."""
    k = len(sentence) - 1
    while k > 0 and all(is_punctuation(c) for c in sentence[k]):
        k -= 1
    return k


def sort_key(value: float) -> int:
    """The integer the nodes sort on (ascending: best first)."""
    return SCALE - round(value * SCALE)
