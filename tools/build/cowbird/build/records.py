"""What flows between the stages of a build: a page as read, its blocks, a cleaned document, a skip.

Every stage module takes and returns these; none of them holds more than one page's worth of data
(the deduplication stage holds one fixed-size signature per document).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Page:
    """One input page before cleaning: an HTTP response from a WARC/ARC record, or an HTML file."""

    url: str
    body: bytes  # the payload, with the HTTP transfer and content encodings (chunked, gzip, br) undone
    content_type: str | None  # the HTTP Content-Type header as sent (None: a file, or no header)
    last_modified: str | None  # the HTTP Last-Modified header as sent
    crawl_date: str | None  # WARC-Date (ISO 8601), or the file's modification time for an HTML file
    source: str  # the input file's name relative to the input it was given as (for the report)
    index: int  # the record's number in its input file (0-based, over all records), or 0 for an HTML file


@dataclass(frozen=True)
class Skip:
    """A record or page left out, and why: a short reason from REASONS (counted in the report) and detail."""

    stage: str  # "read", "decode", "blocks", "boilerplate", "language", "badness", "duplicates"
    reason: str  # e.g. "not HTML", "truncated record", "page over 8 MB", "language fr", "near duplicate"
    source: str
    index: int
    url: str = ""
    detail: str = ""


class Rejected(Exception):  # noqa: N818 - a page's outcome, not a failure of the build
    """Raised by a stage for a page it leaves out; ``reason`` is the short reason the report counts."""

    def __init__(self, stage: str, reason: str, detail: str = "") -> None:
        super().__init__(f"{stage}: {reason}" + (f" ({detail})" if detail else ""))
        self.stage = stage
        self.reason = reason
        self.detail = detail


@dataclass
class Block:
    """A block of a page's text: a paragraph, heading, list item, table cell, quotation or preformatted text.

    ``score`` is the boilerplate classifier's probability that the block is main text (0..1), ``main``
    its decision; both are kept as attributes of the block's <p> in the corpus (COW14 keeps them too).
    """

    text: str  # whitespace collapsed, NFC
    kind: str  # "p", "h" (h1-h6), "li", "td", "quote", "pre", "div"
    score: float = 1.0
    main: bool = True
    duplicate: bool = False  # a repeat of an earlier block of the same page (removed before tagging)


@dataclass
class Token:
    word: str
    pos: str
    lemma: str


@dataclass
class Document:
    """A cleaned page: its metadata and its main-text blocks; after annotation, its sentences per block."""

    id: str  # stable over runs: from the input file's name and the record number
    url: str
    host: str
    tld: str
    crawl_date: str  # YYYY-MM-DD or ""
    last_modified: str  # YYYY-MM-DD or ""
    language: str  # ISO 639-1, e.g. "en", "de"
    language_confidence: float
    badness: float
    blocks: list[Block]
    source: str = ""
    index: int = 0
    # after annotation: one list of sentences per kept block, each a list of tokens
    sentences: list[list[list[Token]]] = field(default_factory=list)
