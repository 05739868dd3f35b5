"""What an analysis looks at: anchors and spans (``on=``), value folding (``fold=``), sort keys (``sort=``).

The notation follows CQP's ``count``/``group``/``sort`` commands: an anchor is ``match``,
``matchend``, ``target`` (``@[...]``) or ``keyword`` (``@1[...]``), optionally with a token offset
(``match[-1]``, ``matchend[2]``); a span is ``A..B`` (``match..matchend``, CQP's default, the whole
match). Sort keys name a span and a p-attribute, as CQP's ``sort A by ATT on SPAN`` does:
``match.lemma`` (the match's first token, CQP's ``on match``), ``match..matchend.lemma`` (the whole
match), ``matchend.word``, ``target.pos``, ``left1.word`` (the token before the match,
``match[-1]``), ``right2.pos`` (``matchend[2]``), with CQP's ``%c``/``%d`` flags (``left1.word%c``);
up to three of them (``right1.word,left1.lemma%c``: the second orders the first's ties), each with
its direction — or ``random``. Every parse error says what was wrong and how to write it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from cowbird.core.errors import BadParameter
from cowbird.core.gdex import GdexSpec

AttributeKind = Literal["p", "s", "meta"]
"""A p-attribute, an s-attribute, or an s-attribute whose regions carry values (``meta``)."""

AnchorName = Literal["match", "matchend", "target", "keyword"]
ANCHORS: tuple[AnchorName, ...] = get_args(AnchorName)

_ANCHOR = re.compile(r"^(match|matchend|target|keyword)(?:\[(-?\d{1,4})\])?$")
_SORT = re.compile(r"^(?:(left|right)(\d{1,3})|([a-z]+(?:\[-?\d{1,4}\])?(?:\.\.[a-z]+(?:\[-?\d{1,4}\])?)?))"
                   r"\.([A-Za-z_][A-Za-z0-9_-]*)(%[cd]{1,2})?$")


@dataclass(frozen=True)
class Anchor:
    """A corpus position relative to each hit: ``match``, ``matchend``, ``target`` or ``keyword``, plus
    ``offset`` tokens."""

    name: AnchorName
    offset: int = 0

    def __str__(self) -> str:
        return self.name if self.offset == 0 else f"{self.name}[{self.offset}]"


@dataclass(frozen=True)
class Span:
    """The tokens from ``start`` to ``end`` (both included; backwards when ``end`` comes first, as in CQP)."""

    start: Anchor
    end: Anchor

    def __str__(self) -> str:
        return str(self.start) if self.start == self.end else f"{self.start}..{self.end}"


WHOLE_MATCH = Span(Anchor("match"), Anchor("matchend"))


def parse_anchor(text: str, parameter: str = "on") -> Anchor:
    found = _ANCHOR.match(text.strip())
    if found is None:
        raise BadParameter(f"{parameter}={text}: an anchor is match, matchend, target or keyword, optionally with "
                           "a token offset in brackets (match[-1], matchend[2])")
    name, offset = found.group(1), int(found.group(2) or 0)
    assert name in ANCHORS
    return Anchor(name, offset)


def parse_span(text: str | None, parameter: str = "on") -> Span:
    """``match`` (the match's first token), ``matchend[1]``, ``match..matchend`` (default: the whole match)."""
    if text is None or not text.strip():
        return WHOLE_MATCH
    first, dots, last = text.partition("..")
    start = parse_anchor(first, parameter)
    return Span(start, parse_anchor(last, parameter) if dots else start)


MAX_BREAKDOWN_LEVELS = 3
"""Keys a frequency breakdown may have at once (left1.word and right1.pos ...)."""
LEVEL_SEPARATOR = "\t"
"""Between the values of a breakdown by several keys as nodes send them (a tab: no VRT token holds one)."""


def parse_breakdown(by: str, on: str | None) -> list[tuple[str, Span]]:
    """The keys of a frequency breakdown: ``by`` names an attribute, or several comma-separated
    (``word,pos``); ``on`` a span for all of them, or one per attribute (``match[-1],matchend[1]``)."""
    attributes = [a.strip() for a in by.split(",")]
    if not all(attributes):
        raise BadParameter(f"by={by}: name an attribute, or several separated by commas (by=word,pos)")
    if len(attributes) > MAX_BREAKDOWN_LEVELS:
        raise BadParameter(f"by={by}: at most {MAX_BREAKDOWN_LEVELS} keys at once")
    spans = [s.strip() for s in on.split(",")] if on is not None and on.strip() else [""]
    if len(spans) == 1:
        spans = spans * len(attributes)
    if len(spans) != len(attributes):
        raise BadParameter(f"on={on}: {len(spans)} spans for the {len(attributes)} attributes of by={by}; give one "
                           "for all, or one per attribute (by=word,pos&on=match[-1],matchend[1])")
    return [(attribute, parse_span(span or None)) for attribute, span in zip(attributes, spans, strict=True)]


Fold = Literal["", "c", "d", "cd"]
FOLDS: tuple[Fold, ...] = get_args(Fold)


def parse_fold(text: str | None, parameter: str = "fold") -> Fold:
    """CQP's flags: ``c`` folds case, ``d`` ignores diacritics, ``cd`` both (``%`` may be written)."""
    value = "".join(sorted(set((text or "").strip().lstrip("%"))))
    if value not in FOLDS or len(value) != len((text or "").strip().lstrip("%")):
        raise BadParameter(f"{parameter}={text}: give c (fold case), d (ignore diacritics) or cd (both)")
    return value


Direction = Literal["asc", "desc"]
DIRECTIONS: tuple[Direction, ...] = get_args(Direction)
MAX_SORT_LEVELS = 3
"""Keys a sort may have: the first orders the hits, the second their ties, the third the second's."""


@dataclass(frozen=True)
class SortLevel:
    """One key of a sort: the values of ``attribute`` over ``span``, folded by ``fold``, in ``direction``."""

    span: Span
    attribute: str
    fold: Fold = ""
    direction: Direction = "asc"

    def __str__(self) -> str:
        return f"{self.span}.{self.attribute}" + (f"%{self.fold}" if self.fold else "")


@dataclass(frozen=True)
class SortKey:
    """How hits are ordered: by up to three ``levels`` (each a span's values of an attribute, with its own
    folding and direction; the second orders the first's ties, and so on), or — no levels — in a
    seeded ``random`` order (``random_direction`` reverses it). Ties always go by corpus position."""

    levels: tuple[SortLevel, ...]
    seed: int = 0
    random_direction: Direction = "asc"
    gdex: GdexSpec | None = None  # good examples first (sort=gdex): the rules and common words, no levels

    @property
    def random(self) -> bool:
        return not self.levels and self.gdex is None

    @property
    def scored(self) -> bool:
        """A key of one number per hit (random, or GDEX), not of values over spans."""
        return not self.levels

    @property
    def descending(self) -> tuple[bool, ...]:
        """Whether each level (or the random or GDEX order) is descending."""
        if self.scored:
            return (self.random_direction == "desc",)
        return tuple(level.direction == "desc" for level in self.levels)

    @property
    def direction(self) -> str:
        """The directions as written: one per level, comma-separated (``asc,desc``)."""
        return self.random_direction if self.scored else ",".join(level.direction for level in self.levels)

    def __str__(self) -> str:
        return "gdex" if self.gdex is not None else "random" if self.random else ",".join(
            str(level) for level in self.levels)

    def described(self) -> str:
        """Each key with its direction: ``right1.word asc, match.lemma%c desc``; ``random asc``;
        ``gdex asc`` (best first)."""
        if self.scored:
            return f"{self} {self.random_direction}"
        return ", ".join(f"{level} {level.direction}" for level in self.levels)


def _directions(text: str, levels: int, written: str) -> list[Direction]:
    given = [d.strip() for d in text.split(",")] if text.strip() else ["asc"]
    if any(d not in DIRECTIONS for d in given):
        raise BadParameter(f"direction={text}: give asc or desc, one for every sort key or one per key "
                           "(direction=asc,desc)")
    if len(given) == 1:
        given = given * levels
    if len(given) != levels:
        raise BadParameter(f"direction={text}: {len(given)} directions for the {levels} keys of sort={written}; "
                           "give one for all, or one per key")
    return [d for d in given if d in DIRECTIONS]


def parse_sort(text: str, direction: str = "asc", seed: int = 0) -> SortKey:
    """Up to three keys, comma-separated, each ``match.lemma``, ``match..matchend.lemma``,
    ``left1.word``, ``right2.pos%c``, ``target.lemma``, ``keyword.word`` — or ``random``, or ``gdex``
    (good examples first, ``cowbird.core.gdex``: its rules and common words are the corpus's, set in
    the key's ``gdex`` by whoever knows them);
    ``direction`` is one for all keys or one per key (``asc,desc``)."""
    value = text.strip()
    if value in ("random", "gdex"):
        [way] = _directions(direction, 1, text)
        return SortKey((), seed, way, GdexSpec() if value == "gdex" else None)
    parts = [part.strip() for part in value.split(",")]
    for alone in ("random", "gdex"):
        if alone in parts:
            raise BadParameter(f"sort={text}: {alone} orders the hits alone; it is not one key of several")
    if len(parts) > MAX_SORT_LEVELS:
        raise BadParameter(f"sort={text}: at most {MAX_SORT_LEVELS} keys (the second sorts the first's ties, the "
                           "third the second's)")
    ways = _directions(direction, len(parts), text)
    return SortKey(tuple(_level(part, text, way) for part, way in zip(parts, ways, strict=True)), seed)


def _level(value: str, text: str, direction: Direction) -> SortLevel:
    found = _SORT.match(value)
    if found is None:
        raise BadParameter(
            f"sort={text}: write SPAN.ATTRIBUTE with an optional %c/%d, e.g. match.lemma (first token), "
            "match..matchend.lemma (whole match), left1.word, right2.pos%c, target.lemma, keyword.word — up to "
            f"{MAX_SORT_LEVELS} of them, comma-separated — or random"
        )
    side, distance, span_text, attribute, flags = found.groups()
    if side is not None:
        if int(distance) == 0:
            raise BadParameter(f"sort={text}: left and right count from 1 (left1 is the token before the match)")
        anchor = Anchor("match", -int(distance)) if side == "left" else Anchor("matchend", int(distance))
        span = Span(anchor, anchor)
    else:
        span = parse_span(span_text, "sort")
    return SortLevel(span, attribute, parse_fold(flags, "sort") if flags else "", direction)
