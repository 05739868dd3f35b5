"""What an analysis looks at: anchors and spans (``on=``), value folding (``fold=``), sort keys (``sort=``).

The notation follows CQP's ``count``/``group``/``sort`` commands: an anchor is ``match``,
``matchend``, ``target`` (``@[...]``) or ``keyword`` (``@1[...]``), optionally with a token offset
(``match[-1]``, ``matchend[2]``); a span is ``A..B`` (``match..matchend``, CQP's default, the whole
match). Sort keys name a span and a p-attribute, as CQP's ``sort A by ATT on SPAN`` does:
``match.lemma`` (the match's first token, CQP's ``on match``), ``match..matchend.lemma`` (the whole
match), ``matchend.word``, ``target.pos``, ``left1.word`` (the token before the match,
``match[-1]``), ``right2.pos`` (``matchend[2]``), with CQP's ``%c``/``%d`` flags (``left1.word%c``),
or ``random``. Every parse error says what was wrong and how to write it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from cowbird.core.errors import BadParameter

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


Fold = Literal["", "c", "d", "cd"]
FOLDS: tuple[Fold, ...] = get_args(Fold)


def parse_fold(text: str | None, parameter: str = "fold") -> Fold:
    """CQP's flags: ``c`` folds case, ``d`` ignores diacritics, ``cd`` both (``%`` may be written)."""
    value = "".join(sorted(set((text or "").strip().lstrip("%"))))
    if value not in FOLDS or len(value) != len((text or "").strip().lstrip("%")):
        raise BadParameter(f"{parameter}={text}: give c (fold case), d (ignore diacritics) or cd (both)")
    return value


Direction = Literal["asc", "desc"]


@dataclass(frozen=True)
class SortKey:
    """How hits are ordered: the values of ``attribute`` over ``span`` (folded by ``fold``), or
    ``random`` (a seeded random order). Ties always go by corpus position."""

    span: Span | None
    attribute: str | None
    fold: Fold = ""
    direction: Direction = "asc"
    seed: int = 0

    @property
    def random(self) -> bool:
        return self.span is None

    def __str__(self) -> str:
        if self.span is None:
            return "random"
        return f"{self.span}.{self.attribute}" + (f"%{self.fold}" if self.fold else "")


def parse_sort(text: str, direction: Direction = "asc", seed: int = 0) -> SortKey:
    """``match.lemma``, ``match..matchend.lemma``, ``left1.word``, ``right2.pos%c``, ``target.lemma``,
    ``keyword.word``, ``random``."""
    value = text.strip()
    if value == "random":
        return SortKey(None, None, "", direction, seed)
    found = _SORT.match(value)
    if found is None:
        raise BadParameter(
            f"sort={text}: write SPAN.ATTRIBUTE with an optional %c/%d, e.g. match.lemma (first token), "
            "match..matchend.lemma (whole match), left1.word, right2.pos%c, target.lemma, keyword.word — or random"
        )
    side, distance, span_text, attribute, flags = found.groups()
    if side is not None:
        if int(distance) == 0:
            raise BadParameter(f"sort={text}: left and right count from 1 (left1 is the token before the match)")
        anchor = Anchor("match", -int(distance)) if side == "left" else Anchor("matchend", int(distance))
        span = Span(anchor, anchor)
    else:
        span = parse_span(span_text, "sort")
    return SortKey(span, attribute, parse_fold(flags, "sort") if flags else "", direction, seed)
