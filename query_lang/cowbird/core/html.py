"""What both readers of web pages — Calf, finding a line's sentence again on its page, and
``cowbird build``, cutting pages into blocks — take from HTML alike."""

from __future__ import annotations

BLOCK_TAGS = frozenset({
    "address", "article", "aside", "blockquote", "body", "caption", "center", "dd", "details", "dialog", "dir",
    "div", "dl", "dt", "fieldset", "figcaption", "figure", "footer", "form", "frameset", "h1", "h2", "h3", "h4",
    "h5", "h6", "header", "hgroup", "hr", "html", "legend", "li", "main", "menu", "nav", "noframes", "ol", "p",
    "pre", "section", "summary", "table", "tbody", "td", "tfoot", "th", "thead", "title", "tr", "ul",
})  # fmt: skip
"""Elements that start and end a block of text (the HTML standard's block-level elements, and table
parts): text on either side of one is never one sentence."""
