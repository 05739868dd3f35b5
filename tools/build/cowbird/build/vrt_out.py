"""A cleaned, annotated ``Document`` as VRT: ``<text>`` with COW's metadata, ``<p>`` per block with its
kind and boilerplate class and value (COW14's ``bpc``/``bpv``), ``<s>`` per sentence, one token a line
(``word\\tpos\\tlemma``).

Attribute values and tokens are XML-escaped (``&``, ``<``, ``>``, ``"``): the corpus is encoded in
cwb-encode's XML mode (``-x``), which turns the entities back. White space inside a token (which no
tokeniser should give) becomes ``_``, so that a token is always one line of three columns.
"""

from __future__ import annotations

import math
import re

from cowbird.build.records import Block, Document, Token

P_ATTRIBUTES = ("pos", "lemma")
S_ATTRIBUTES = (
    "text:0+id+url+host+tld+crawl_date+last_modified+lang+lang_conf+badness",
    "p:0+kind+bpc+bpv",
    "s:0",
)
"""The declarations the corpus is encoded with (``cowbird encode -P pos -P lemma -S ...``)."""

_SPACE = re.compile(r"\s")
_ESCAPE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})


def escape(text: str) -> str:
    """XML-escaped, and no line break or tab left (a value or a token stays on its line)."""
    return _SPACE.sub(" ", text).translate(_ESCAPE)


def token_field(text: str) -> str:
    """A token's column: escaped, white space as ``_``, never empty (``_``)."""
    return _SPACE.sub("_", text).translate(_ESCAPE) or "_"


def number(value: float, digits: int) -> str:
    """A float with ``digits`` decimals; NaN (no value: e.g. no badness profile for the language) -> ``""``."""
    return "" if math.isnan(value) else f"{value:.{digits}f}"


def text_open(document: Document) -> str:
    attributes = (
        ("id", document.id), ("url", document.url), ("host", document.host), ("tld", document.tld),
        ("crawl_date", document.crawl_date), ("last_modified", document.last_modified),
        ("lang", document.language), ("lang_conf", number(document.language_confidence, 2)),
        ("badness", number(document.badness, 2)),
    )
    return "<text " + " ".join(f'{key}="{escape(value)}"' for key, value in attributes) + ">"


def block_open(block: Block) -> str:
    return (f'<p kind="{escape(block.kind)}" bpc="{"main" if block.main else "boilerplate"}" '
            f'bpv="{block.score:.2f}">')


def token_line(token: Token) -> str:
    return f"{token_field(token.word)}\t{token_field(token.pos)}\t{token_field(token.lemma)}"


def document_vrt(document: Document) -> str:
    """The document's VRT (ending in a newline); blocks without a sentence are left out, and so is a
    document without any (it would be an empty ``<text>``): the result is then ``""``."""
    lines: list[str] = []
    for block, sentences in zip(document.blocks, document.sentences, strict=True):
        kept = [sentence for sentence in sentences if sentence]
        if not kept:
            continue
        lines.append(block_open(block))
        for sentence in kept:
            lines.append("<s>")
            lines.extend(token_line(token) for token in sentence)
            lines.append("</s>")
        lines.append("</p>")
    if not lines:
        return ""
    return "\n".join([text_open(document), *lines, "</text>"]) + "\n"


def token_count(document: Document) -> int:
    return sum(len(sentence) for sentences in document.sentences for sentence in sentences)
