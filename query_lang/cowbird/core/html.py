"""What both readers of web pages — Calf, finding a line's sentence again on its page, and
``cowbird build``, cutting pages into blocks — take from HTML alike."""

from __future__ import annotations

from collections.abc import Iterable

BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog", "dir",
    "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "frameset", "h1", "h2", "h3", "h4",
    "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li", "main", "menu", "nav", "noframes", "ol", "p",
    "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul",
})  # fmt: skip
"""Elements that start and end a block of text (the HTML standard's block-level elements, and table
parts): text on either side of one is never one sentence."""


def guessed_encoding(sample: bytes, candidates: Iterable[str]) -> str:
    """The encoding of bytes that declare none, as charset-normalizer guesses it among ``candidates``
    (its names): windows-1252 when that reads the bytes as cleanly as the best guess (a chaos within
    0.01 of it) or when nothing fits, else the best guess. It needs charset-normalizer (the calf and
    build extras)."""
    import charset_normalizer  # here: the base install has no page to read, nor charset-normalizer

    matches = charset_normalizer.from_bytes(sample, cp_isolation=list(candidates))
    best = matches.best()
    if best is None:
        return "cp1252"
    for match in matches:
        if "cp1252" in match.could_be_from_charset and match.chaos <= best.chaos + 0.01:
            return "cp1252"
    return str(best.encoding)
