"""Finding a corpus line in a web page's text, and the context around it.

The corpus line is tokenized text (``do n't go !``), the page running text (``don't go!``), often
with other quotes, dashes, soft hyphens and line breaks. Both sides are normalised (Unicode NFKC,
one kind of quote and dash, no soft hyphens), then compared *without any whitespace*: whatever
the tokenizer split or joined, the characters agree. rapidfuzz's ``partial_ratio_alignment`` finds
the best-matching stretch of the page (score 0–100); its position is mapped back to the page's
own text, and the context is cut at word boundaries.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from rapidfuzz import fuzz

_FOLD = str.maketrans({
    "‘": "'", "’": "'", "‚": "'", "‛": "'", "′": "'", "`": "'", "´": "'",
    "“": '"', "”": '"', "„": '"', "‟": '"', "″": '"', "«": '"', "»": '"', "‹": "'", "›": "'",
    "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-",
    "\u00ad": None, "\u200b": None, "\u200c": None, "\u200d": None, "\ufeff": None,
})  # fmt: skip
_SPACE = re.compile(r"\s+")


def normalise(text: str) -> str:
    """NFKC, one kind of quote and dash, no soft hyphens or zero-width characters, single spaces."""
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).translate(_FOLD)).strip()


def _squash(text: str) -> tuple[str, list[int]]:
    """The normalised text without whitespace, and for each of its characters the index in ``text``
    it came from (so that a match in the squashed text can be cut out of the page itself)."""
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        for folded in unicodedata.normalize("NFKC", char).translate(_FOLD):
            if not folded.isspace():
                chars.append(folded.casefold())
                origin.append(index)
    return "".join(chars), origin


@dataclass(frozen=True)
class Found:
    score: float  # 0-100
    start: int  # in the page text
    end: int
    left: str
    right: str
    matched: str


def locate(sentence: str, page: str, context_chars: int = 500) -> Found | None:
    """Where the sentence best matches in the page text; None when the page has no text or the
    sentence is empty."""
    needle, _ = _squash(sentence)
    haystack, origin = _squash(page)
    if not needle or not haystack:
        return None
    if len(needle) > len(haystack):
        alignment = fuzz.partial_ratio_alignment(haystack, needle)
        if alignment is None:
            return None
        start, end, score = 0, len(haystack), alignment.score
    else:
        exact = haystack.find(needle)
        if exact >= 0:
            start, end, score = exact, exact + len(needle), 100.0
        else:
            alignment = fuzz.partial_ratio_alignment(needle, haystack)
            if alignment is None:
                return None
            start, end, score = alignment.dest_start, alignment.dest_end, alignment.score
    if end <= start:
        return None
    if score < 100:
        start, end, score = _widen(needle, haystack, start, end, score)
    page_start, page_end = origin[start], origin[end - 1] + 1
    return Found(score, page_start, page_end, _left(page, page_start, context_chars),
                 _right(page, page_end, context_chars), page[page_start:page_end])


def _widen(needle: str, haystack: str, start: int, end: int, score: float) -> tuple[int, int, float]:
    """The window found by ``partial_ratio`` has the needle's length, which words inserted or
    dropped on the page put out of place: move its end, then its start, to the best indel ratio
    (an edit costs what it changes, not the length of what follows it)."""
    slack = max(4, len(needle) // 3)
    best = (fuzz.ratio(needle, haystack[start:end]), start, end)
    for stop in range(max(start + 1, end - slack), min(len(haystack), end + slack) + 1):
        candidate = fuzz.ratio(needle, haystack[start:stop])
        if candidate > best[0]:
            best = (candidate, start, stop)
    _, start, end = best
    for begin in range(max(0, start - slack), min(end - 1, start + slack) + 1):
        candidate = fuzz.ratio(needle, haystack[begin:end])
        if candidate > best[0]:
            best = (candidate, begin, end)
    ratio, start, end = best
    return start, end, max(score, ratio)


def _left(page: str, start: int, chars: int) -> str:
    """Up to ``chars`` characters before ``start``, cut at a word boundary."""
    if chars <= 0:
        return ""
    begin = max(0, start - chars)
    text = page[begin:start]
    if begin > 0 and not page[begin - 1].isspace():
        space = re.search(r"\s", text)
        text = text[space.end():] if space else ""
    return normalise(text)


def _right(page: str, end: int, chars: int) -> str:
    """Up to ``chars`` characters after ``end``, cut at a word boundary."""
    if chars <= 0:
        return ""
    stop = min(len(page), end + chars)
    text = page[end:stop]
    if stop < len(page) and not page[stop].isspace():
        last = max(text.rfind(" "), text.rfind("\n"), text.rfind("\t"))
        text = text[:last] if last >= 0 else ""
    return normalise(text)
