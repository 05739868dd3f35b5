"""A page's blocks of text in document order, each with its boilerplate score and decision.

Blocks are what a reader sees as one piece of text: a paragraph, a heading, a list item, a table cell, a
quotation, preformatted text, and text standing directly in a ``<div>`` or the body. They come from
lxml's HTML parser (libxml2: broken markup, missing ``<html>``/``<body>``, stray end tags and entities
are read as browsers read them), walked without recursion (deep nesting never overflows Python's stack;
libxml2 itself reads about 2,500 levels of nesting and drops what is deeper). Scripts, styles, comments,
``<noscript>``, ``<template>``, forms' controls and elements hidden from the reader (``hidden``,
``display:none``, ``aria-hidden``) are never text. ``<br>`` ends a line (a space in the block); two
``<br>`` in a row end the block, as the blank line a reader sees. Text is whitespace-collapsed, soft
hyphens and zero-width characters removed, NFC.

Boilerplate is decided per block, non-destructively (every block is returned, ``main`` says what was
decided, ``score`` how sure: 0..1, at least 0.5 exactly when ``main``). By default (``method=
"trafilatura"``, the best measured: bench/boilerplate.py, docs/building-corpora.md "Blocks and
boilerplate") a block is main text when it is in trafilatura's main text of the page (readers'
comments left out), run on the tree already parsed. The score comes from jusText's features of the
block (stop-word density, length, link density) and what the markup says. Where trafilatura finds
no main text (or fails on a page), and with ``method="justext"``, jusText's classifier decides
(Pomikálek 2011, with its default thresholds): its context-free classes
from length, link density and stop-word density, then its context-sensitive revision (short blocks
and headings take their class from the text around them) — on these blocks, not on jusText's own
segmentation (which drops the space between inline elements, ``<b>a</b> <i>b</i>`` read as "ab"),
and in linear time (jusText's own revision is quadratic). Added to it, what the markup says: a
block inside ``<nav>``, ``<footer>``, ``<aside>``, ``<menu>``, an element whose role is navigation,
banner, contentinfo, complementary or search, or whose class or id names navigation, menus,
footers, sidebars, cookie and consent banners, sharing, related links, comments, adverts,
newsletters or breadcrumbs is boilerplate before the context step; a block in the page's main
content element (``<article>``, ``<main>``, "entry-content" ...) is one step nearer main text.

Stop words are jusText's lists for ``language`` (ISO 639-1 codes, one or several); without a
language, English and German together (the languages the project builds for first).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

import justext
import lxml.html
import trafilatura
from justext.core import (
    LENGTH_HIGH_DEFAULT,
    LENGTH_LOW_DEFAULT,
    MAX_HEADING_DISTANCE_DEFAULT,
    MAX_LINK_DENSITY_DEFAULT,
    STOPWORDS_HIGH_DEFAULT,
    STOPWORDS_LOW_DEFAULT,
)
from lxml import etree

from cowbird.build.records import Block
from cowbird.core.html import BLOCK_TAGS

SKIPPED_TAGS = frozenset({
    "script", "style", "noscript", "template", "head", "svg", "math", "iframe", "object", "embed", "select",
    "option", "textarea", "button", "canvas", "audio", "video", "map", "input", "datalist", "noembed", "frame",
})  # fmt: skip
"""Elements whose content is never text of the page."""
KINDS = {"p": "p", "h1": "h", "h2": "h", "h3": "h", "h4": "h", "h5": "h", "h6": "h", "li": "li", "dt": "li",
         "dd": "li", "td": "td", "th": "td", "blockquote": "quote", "pre": "pre"}
"""A block's kind from its innermost element of these (any other: "div")."""
FURNITURE_TAGS = frozenset({"nav", "footer", "aside", "menu"})
FURNITURE_ROLES = frozenset({"navigation", "banner", "contentinfo", "complementary", "search", "menu", "menubar",
                             "alertdialog"})
FURNITURE_WORDS = frozenset({
    "nav", "navbar", "navigation", "menu", "menubar", "submenu", "breadcrumb", "breadcrumbs", "footer", "sidebar",
    "cookie", "cookies", "consent", "gdpr", "cmp", "banner", "share", "sharing", "social", "socials", "related",
    "recommended", "comment", "comments", "commentlist", "respond", "disqus", "advert", "adverts", "advertisement",
    "sponsored", "promo", "newsletter", "subscribe", "signup", "login", "pagination", "pager", "skiplink",
    "toolbar", "masthead", "tags", "tagcloud", "widget", "popup", "modal", "teaserlist", "footnav", "topbar",
    "byline",
})  # fmt: skip
"""Words of page furniture in a class or id: a class word whose first or last part (parted by ``-``/``_``) is one
of these ("site-footer", "nav-main", "widget"), not one that merely has it inside ("elementor-widget-container",
"c-fixed-sidebar-layout") or says that the element has some ("has-sidebar", "enable-pin-share")."""
CONTENT_TAGS = frozenset({"article", "main"})
CONTENT_PROPS = frozenset({"articleBody", "text", "reviewBody", "description"})
CONTENT_WORDS = frozenset({
    "content", "entry", "post", "article", "articlebody", "story", "text", "body", "main", "maincontent", "blogpost",
    "hentry", "rte", "richtext", "prose", "inhalt", "artikel", "beitrag",
})  # fmt: skip
"""Words of the element that holds a page's main text (WordPress' "entry-content", "post-body" ...), matched as
FURNITURE_WORDS are."""
_NOT_SAYING = frozenset({"has", "with", "enable", "enabled", "no", "is", "js", "show", "hide", "without"})
_PARTS = re.compile(r"[-_]+")
HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)
INVISIBLE = re.compile("[\u00ad\u200b\u200c\u200d\u2060\ufeff]")
"""Soft hyphens and zero-width characters: not in the text a reader sees."""
LANGUAGES = {
    "af": "Afrikaans", "bg": "Bulgarian", "ca": "Catalan", "cs": "Czech", "da": "Danish", "de": "German",
    "el": "Greek", "en": "English", "eo": "Esperanto", "es": "Spanish", "et": "Estonian", "eu": "Basque",
    "fa": "Persian", "fi": "Finnish", "fr": "French", "ga": "Irish", "gl": "Galician", "he": "Hebrew",
    "hi": "Hindi", "hr": "Croatian", "hu": "Hungarian", "id": "Indonesian", "is": "Icelandic", "it": "Italian",
    "ko": "Korean", "la": "Latin", "lb": "Luxembourgish", "lt": "Lithuanian", "lv": "Latvian", "mk": "Macedonian",
    "ms": "Malay", "mt": "Maltese", "nb": "Norwegian_Bokmal", "nl": "Dutch", "nn": "Norwegian_Nynorsk",
    "no": "Norwegian_Bokmal", "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian",
    "sk": "Slovak", "sl": "Slovenian", "sq": "Albanian", "sr": "Serbian", "sv": "Swedish", "sw": "Swahili",
    "tr": "Turkish", "uk": "Ukrainian", "vi": "Vietnamese",
}  # fmt: skip
"""ISO 639-1 codes to the names of jusText's stop-word lists."""
DEFAULT_LANGUAGES = ("en", "de")
CONTENT_SHARE = 0.2
"""The main-content element must hold at least this share of the page's text to count."""
INNER_SHARE = 0.7
"""Of nested main-content elements the innermost one holding this share of the largest one's text is taken."""
FRAME_SHARE = 0.5
"""A furniture-named element holding more than this share of the page's text is taken for the page's frame."""
METHODS = ("trafilatura", "trafilatura-fast", "justext")
FAST_ABOVE = 1_000_000
"""Characters of a page above which trafilatura runs without its fallback extractors (a 5 MB page: 10 s with
them, 3 s without); the gold set's pages are 72 KB (median)."""
MATCH_LENGTH = 40
"""A block at least this long is main text when it stands anywhere in trafilatura's main text; a shorter one
("Home", "Share") only when it is one of its lines."""
MIN_MAIN_TEXT = 200
"""Characters of trafilatura's main text under which it is taken for scraps of boilerplate on a page where jusText
finds no main text either (a shop's index: its menu items and "Login | Register")."""
FURNITURE_PENALTY = 0.2
CONTENT_LENGTH = 70
"""A block of the main-content element this long, not a link list, is at least near-good (jusText's length_low)."""
"""The factor a block of page furniture's score is taken down by."""

_SPACE = re.compile(r"\s+")
_LINE_BREAK = "\u2028"  # stands for a <br> while a block is collected (white space: one space in the text)
_PARAGRAPH_BREAK = "\u2029"  # stands for two <br> in a row (the block is cut there)


@lru_cache(maxsize=32)
def stoplist(languages: tuple[str, ...]) -> frozenset[str]:
    """jusText's stop words of ``languages`` (ISO 639-1) together; a code without a list adds none."""
    words: set[str] = set()
    for code in languages:
        name = LANGUAGES.get(code.lower().split("-")[0])
        if name is not None and name in justext.get_stoplists():
            words |= justext.get_stoplist(name)
    return frozenset(words)


def stop_languages(language: str | Iterable[str] | None) -> tuple[str, ...]:
    """The ISO 639-1 codes whose stop words count for ``language`` (codes, or one string of codes parted by
    commas); English and German for None or for codes jusText has no list for."""
    if language is None:
        return DEFAULT_LANGUAGES
    codes = [language] if isinstance(language, str) else list(language)
    found = tuple(sorted({part.strip().lower() for code in codes for part in code.split(",") if part.strip()}))
    return found if found and stoplist(found) else DEFAULT_LANGUAGES


@dataclass
class _Paragraph:
    """One block as jusText's classifier reads a paragraph (the attributes and methods it uses)."""

    text: str
    kind: str
    chars_count_in_links: int
    regions: frozenset[int]  # the page-furniture elements (numbered in document order) its text stands in
    contents: frozenset[int] = frozenset()  # the main-content elements (numbered in document order) it stands in
    furniture: bool = False
    in_content: bool = False  # in the page's main-content element (where the page has one)
    raw_score: float = 0.0
    dom_path: str = ""
    heading: bool = False
    cf_class: str = ""
    class_type: str = ""
    words: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.words = self.text.lower().split()
        self.dom_path = "h1" if self.kind == "h" else self.kind  # jusText finds headings by "h<digit>" in the path

    def __len__(self) -> int:
        return len(self.text)

    @property
    def is_heading(self) -> bool:
        return self.kind == "h"

    @property
    def words_count(self) -> int:
        return len(self.words)

    def stopwords_density(self, stopwords: frozenset[str]) -> float:
        return sum(word in stopwords for word in self.words) / len(self.words) if self.words else 0.0

    def links_density(self) -> float:
        return self.chars_count_in_links / len(self.text) if self.text else 0.0


class _Collector:
    """Gathers the text of the current block while the tree is walked."""

    def __init__(self) -> None:
        self.paragraphs: list[_Paragraph] = []
        self.parts: list[str] = []
        self.link_chars = 0
        self.regions: set[int] = set()
        self.contents: set[int] = set()
        self.has_text = False

    def add(self, text: str | None, in_link: bool, regions: list[int], contents: list[int]) -> None:
        if text:
            self.parts.append(text)
            if not text.isspace():
                self.has_text = True
                self.regions.update(regions)
                self.contents.update(contents)
                if in_link:
                    self.link_chars += len(_SPACE.sub(" ", text).strip())

    def line_break(self) -> None:
        """A ``<br>``: a line break, or, right after another one (white space between), the end of a paragraph."""
        for k in range(len(self.parts) - 1, -1, -1):
            part = self.parts[k]
            if part == _LINE_BREAK:
                self.parts[k] = _PARAGRAPH_BREAK
                return
            if part.strip():
                break
        self.parts.append(_LINE_BREAK)

    def close(self, kind: str) -> None:
        if self.has_text:
            joined = INVISIBLE.sub("", "".join(self.parts))
            pieces = joined.split(_PARAGRAPH_BREAK)
            texts = [_SPACE.sub(" ", piece).strip() for piece in pieces]
            texts = [unicodedata.normalize("NFC", text) for text in texts if text]
            total = sum(len(text) for text in texts) or 1
            for text in texts:  # link characters shared out by length where <br><br> cut the block
                links = min(len(text), round(self.link_chars * len(text) / total))
                self.paragraphs.append(_Paragraph(text, kind, links, frozenset(self.regions),
                                                  frozenset(self.contents)))
        if self.parts:
            self.parts, self.link_chars, self.regions, self.contents, self.has_text = [], 0, set(), set(), False


@lru_cache(maxsize=65536)
def _words(names: str) -> frozenset[str]:
    """The words a class or id attribute says: of each class word its first and last part (lower case)."""
    found: set[str] = set()
    for name in names.lower().split():
        parts = [part for part in _PARTS.split(name) if part]
        if not parts or _NOT_SAYING & set(parts):
            continue
        found.update((parts[0], parts[-1], "".join(parts)))
    return frozenset(found)


def _marks(element: etree._Element, tag: str) -> tuple[bool, bool, bool]:
    """(hidden, page furniture, main content) as the element's tag and attributes say: hidden by ``hidden``,
    ``aria-hidden`` or a style of ``display:none``; furniture by its tag, role, class or id (an ``<aside>``
    whose class says content is not); main content by ``<article>``/``<main>``, role, itemprop, class or id."""
    attributes = element.attrib
    if not attributes:  # most elements: the tag alone says it
        return False, tag in FURNITURE_TAGS, tag in CONTENT_TAGS
    get = attributes.get
    style = get("style")
    if get("hidden") is not None or get("aria-hidden") == "true" or (style and HIDDEN_STYLE.search(style)):
        return True, False, False
    names = get("class")
    ident = get("id")
    if ident:
        names = f"{names} {ident}" if names else ident
    words = _words(names) if names else frozenset()
    role = (get("role") or "").lower()
    content = (tag in CONTENT_TAGS or role == "main" or get("itemprop") in CONTENT_PROPS
               or not words.isdisjoint(CONTENT_WORDS))
    if tag in FURNITURE_TAGS:
        furniture = words.isdisjoint(CONTENT_WORDS)  # <aside class="direct-content"> is not
    else:
        furniture = role in FURNITURE_ROLES or not words.isdisjoint(FURNITURE_WORDS)
    return False, furniture, content and not furniture


def _parse(html: str) -> etree._Element | None:
    """The page's element tree (None for a page with no elements); bytes in, so that an XML declaration
    with an encoding does not stop lxml."""
    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True, no_network=True,
                                  huge_tree=True)
    try:
        root = lxml.html.document_fromstring(html.encode("utf-8", errors="replace"), parser=parser)
    except (etree.ParserError, ValueError):
        return None
    return root


def paragraphs(html: str) -> list[_Paragraph]:
    """The page's blocks with what the classifier needs (text, kind, link characters, furniture)."""
    root = _parse(html)
    return [] if root is None else _walk(root)


def _walk(root: etree._Element) -> list[_Paragraph]:
    """The blocks of the element tree ``root`` (it is not changed)."""
    collector = _Collector()
    kinds: list[str] = ["div"]
    regions: list[int] = []  # the open page-furniture elements
    region_count = 0
    contents: list[int] = []  # the open main-content elements
    content_count = 0
    link_depth = 0
    stack: list[tuple[bool, bool, bool, bool, bool]] = []  # per open element: block, kind pushed, furniture, link,
    # content
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, element in walker:
        tag = element.tag
        if not isinstance(tag, str):  # comments and processing instructions are removed by the parser
            tag = ""
        elif "}" in tag:
            tag = tag.rsplit("}", 1)[-1]
        if event == "start":
            hidden, furniture, content = _marks(element, tag) if tag else (True, False, False)
            if hidden or tag in SKIPPED_TAGS:
                walker.skip_subtree()
                stack.append((False, False, False, False, False))
                continue
            block = tag in BLOCK_TAGS or tag in KINDS
            if block:
                collector.close(kinds[-1])
            kind = KINDS.get(tag)
            if kind is not None:
                kinds.append("quote" if kind == "p" and kinds[-1] == "quote" else kind)
            link = tag == "a"
            if furniture:
                regions.append(region_count)
                region_count += 1
            link_depth += link
            if content:
                contents.append(content_count)
                content_count += 1
            stack.append((block, kind is not None, furniture, link, content))
            if tag == "br":
                collector.line_break()
            elif tag == "hr":
                collector.close(kinds[-1])
            collector.add(element.text, link_depth > 0, regions, contents)
        else:
            block, pushed, furniture, link, content = stack.pop()
            if block:
                collector.close(kinds[-1])
            if pushed:
                kinds.pop()
            if furniture:
                regions.pop()
            if content:
                contents.pop()
            link_depth -= link
            collector.add(element.tail, link_depth > 0, regions, contents)
    collector.close(kinds[-1])
    found = collector.paragraphs
    # a region named like furniture that holds most of the page's text is the page's frame, not furniture
    # (<body class="has-sidebar">, <div id="nav-wrapper"> around everything)
    total = sum(len(p.text) for p in found)
    held = [0] * region_count
    for paragraph in found:
        for region in paragraph.regions:
            held[region] += len(paragraph.text)
    frames = {region for region, chars in enumerate(held) if chars > FRAME_SHARE * total}
    for paragraph in found:
        paragraph.furniture = bool(paragraph.regions - frames)
    # the page's main content: the innermost main-content element that holds nearly as much text as the largest
    held = [0] * content_count
    for paragraph in found:
        if not paragraph.furniture:
            for region in paragraph.contents:
                held[region] += len(paragraph.text)
    if held and max(held) >= CONTENT_SHARE * total:
        best = min((chars, region) for region, chars in enumerate(held) if chars >= INNER_SHARE * max(held))[1]
        for paragraph in found:
            paragraph.in_content = best in paragraph.contents and not paragraph.furniture
    return found


def _score(paragraph: _Paragraph, stopwords: frozenset[str]) -> float:
    """How much a block looks like main text, 0..1, from jusText's features: stop-word density about its
    thresholds (0.30-0.32), length about its 70-200 characters, link density, and furniture."""
    density = paragraph.stopwords_density(stopwords)
    text_like = 1.0 / (1.0 + math.exp(-25.0 * (density - 0.31)))
    length = min(1.0, math.sqrt(len(paragraph) / 200.0))
    links = max(0.0, 1.0 - paragraph.links_density() / 0.4)
    value = text_like * (0.4 + 0.6 * length) * links
    return value * FURNITURE_PENALTY if paragraph.furniture else value


def _side(raw: float, main: bool) -> float:
    """A block's score: its features' value ``raw`` (0..1) put on the decision's side of 0.5, to three places."""
    return round(0.5 + raw / 2, 3) if main else min(round(raw / 2, 3), 0.499)


def _context_free(paragraph: _Paragraph, stopwords: frozenset[str]) -> str:
    """jusText's context-free class of a block (``justext.core.classify_paragraphs``, its default thresholds),
    here so that the stop list is not lower-cased again for every page as that function does."""
    if paragraph.links_density() > MAX_LINK_DENSITY_DEFAULT or "\xa9" in paragraph.text or "&copy" in paragraph.text:
        return "bad"
    if len(paragraph) < LENGTH_LOW_DEFAULT:
        return "bad" if paragraph.chars_count_in_links > 0 else "short"
    density = paragraph.stopwords_density(stopwords)
    if density >= STOPWORDS_HIGH_DEFAULT:
        return "good" if len(paragraph) > LENGTH_HIGH_DEFAULT else "neargood"
    return "neargood" if density >= STOPWORDS_LOW_DEFAULT else "bad"


def _nearest(classes: list[str], wanted: frozenset[str], step: int) -> list[str]:
    """For each position, the class of the nearest other position in direction ``step`` whose class is in
    ``wanted`` ("bad" past the end), as jusText's ``_get_neighbour`` finds it, for all positions in one pass."""
    found = ["bad"] * len(classes)
    last = "bad"
    order = range(len(classes)) if step > 0 else range(len(classes) - 1, -1, -1)
    for k in order:
        found[k] = last
        if classes[k] in wanted:
            last = classes[k]
    return found


_GOOD_OR_BAD = frozenset({"good", "bad"})
_NOT_SHORT = frozenset({"good", "bad", "neargood"})


def _good_headings(found: list[_Paragraph], wanted: str, becomes: str, check_cf: bool) -> None:
    """jusText's heading steps: a heading of class ``wanted`` with a good block within 200 characters after it
    becomes ``becomes`` (in the second step only a heading that was not bad context-free)."""
    for k, paragraph in enumerate(found):
        if not (paragraph.heading and paragraph.class_type == wanted) or (check_cf and paragraph.cf_class == "bad"):
            continue
        distance = 0
        for following in found[k + 1:]:
            if distance > MAX_HEADING_DISTANCE_DEFAULT:
                break
            if following.class_type == "good":
                paragraph.class_type = becomes
                break
            distance += len(following.text)


def revise(found: list[_Paragraph]) -> None:
    """jusText's context-sensitive classification (``justext.core.revise_paragraph_classification``) in linear
    time: jusText looks for each short or near-good block's neighbours by walking the blocks, which takes
    40 s on a 5 MB page of 25,000 near-good paragraphs. The outcome is jusText's (tests/build/test_blocks.py
    compares them) but for its first heading step, which in jusText compares with classes not yet copied and
    so never fires: here a short heading with a good block within 200 characters after it is near-good, as
    the algorithm's description (Pomikálek 2011, 4.3) has it."""
    for paragraph in found:
        paragraph.class_type = paragraph.cf_class
    _good_headings(found, "short", "neargood", check_cf=False)
    classes = [paragraph.class_type for paragraph in found]
    previous, following = _nearest(classes, _GOOD_OR_BAD, 1), _nearest(classes, _GOOD_OR_BAD, -1)
    previous_any, following_any = _nearest(classes, _NOT_SHORT, 1), _nearest(classes, _NOT_SHORT, -1)
    for k, paragraph in enumerate(found):  # short blocks, all decided on the classes before this step
        if classes[k] != "short":
            continue
        before, after = previous[k], following[k]
        if before == "good" and after == "good":
            paragraph.class_type = "good"
        elif before == "bad" and after == "bad":
            paragraph.class_type = "bad"
        elif (before == "bad" and previous_any[k] == "neargood") or (after == "bad" and following_any[k] == "neargood"):
            paragraph.class_type = "good"
        else:
            paragraph.class_type = "bad"
    classes = [paragraph.class_type for paragraph in found]
    following = _nearest(classes, _GOOD_OR_BAD, -1)  # near-good blocks after k are still near-good when k is revised
    before = "bad"
    for k, paragraph in enumerate(found):  # near-good blocks, in order: each sees the ones before it decided
        if paragraph.class_type == "neargood":
            paragraph.class_type = "bad" if (before, following[k]) == ("bad", "bad") else "good"
        before = paragraph.class_type
    _good_headings(found, "bad", "good", check_cf=True)


def classify(found: list[_Paragraph], stopwords: frozenset[str]) -> list[Block]:
    """jusText's classification of ``found`` (context-free, furniture made bad, then context-sensitive) as Blocks."""
    if not found:
        return []
    for paragraph in found:
        paragraph.cf_class = _context_free(paragraph, stopwords)
        paragraph.heading = paragraph.is_heading
        if paragraph.furniture:
            paragraph.cf_class = "bad"
        elif paragraph.in_content:  # the page's markup says main text: one step up
            if paragraph.cf_class == "neargood":
                paragraph.cf_class = "good"
            elif paragraph.cf_class == "bad" and len(paragraph) >= CONTENT_LENGTH and \
                    paragraph.links_density() <= MAX_LINK_DENSITY_DEFAULT and "\xa9" not in paragraph.text:
                paragraph.cf_class = "neargood"
    revise(found)
    blocks = []
    for paragraph in found:
        main = paragraph.class_type == "good"
        paragraph.raw_score = _score(paragraph, stopwords)
        blocks.append(Block(text=paragraph.text, kind=paragraph.kind, score=_side(paragraph.raw_score, main),
                            main=main))
    return blocks


def _lines(extracted: str) -> tuple[frozenset[str], str]:
    """trafilatura's text output as (its lines, list bullets and table bars taken off; the whole text), both
    whitespace-collapsed."""
    lines: set[str] = set()
    for line in extracted.splitlines():
        line = _SPACE.sub(" ", line).strip()
        if line.startswith("- "):
            line = line[2:]
        if "|" in line:
            lines.update(cell.strip() for cell in line.split("|") if cell.strip())
        lines.add(line)
    return frozenset(lines), _SPACE.sub(" ", extracted)


def _trafilatura_main(root: etree._Element, url: str, fast: bool) -> tuple[frozenset[str], str] | None:
    """trafilatura's main text of the page (comments left out, tables in), or None where it finds none.
    ``fast``: without the fallback extractors trafilatura runs when its own result looks poor."""
    try:
        extracted = trafilatura.extract(root, url=url or None, fast=fast, include_comments=False,
                                        include_tables=True, deduplicate=False)
    except Exception:  # noqa: BLE001 - any failure of the extractor on a page: jusText decides that page
        return None
    return _lines(extracted) if extracted else None


def _in_main(text: str, main: tuple[frozenset[str], str]) -> bool:
    """Whether a block is part of an extractor's main text: one of its lines, or (a block long enough not to
    be found by chance, ``MATCH_LENGTH``) inside it."""
    lines, whole = main
    return text in lines or (len(text) >= MATCH_LENGTH and text in whole)


def extract_blocks(html: str, url: str = "", language: str | Iterable[str] | None = None,
                   method: str = "trafilatura") -> list[Block]:
    """Every block of the page in document order, with its boilerplate ``score`` and ``main`` decision.

    ``method`` "trafilatura" (the default, the best measured): a block is main text when it is in trafilatura's
    main text of the page (with trafilatura's fallback extractors where its own result looks poor);
    "trafilatura-fast" without the fallbacks (a quarter less time, F1 0.011 lower); a page where trafilatura
    finds none is decided by "justext": jusText's classifier with the markup's furniture and main-content hints,
    alone (a third of the time, lower F1: bench/boilerplate.py). ``score`` comes from jusText's features either
    way, on the side of 0.5 the decision is. ``language``: the ISO 639-1 code(s) of the language(s) the corpus
    is built for, whose stop words jusText counts (None: English and German). ``url`` helps trafilatura only. A
    page without text gives an empty list.
    """
    if method not in METHODS:
        raise ValueError(f"unknown boilerplate method {method!r}: one of {', '.join(METHODS)}")
    root = _parse(html)
    if root is None:
        return []
    found = _walk(root)
    if not found:
        return []
    blocks = classify(found, stoplist(stop_languages(language)))
    if method == "justext":
        return blocks
    fast = method == "trafilatura-fast" or len(html) > FAST_ABOVE
    main = _trafilatura_main(root, url, fast=fast)  # it prunes the tree: after the walk
    if main is None:
        return blocks
    decided = [_in_main(block.text, main) for block in blocks]
    if not any(block.main for block in blocks) and len(main[1]) < MIN_MAIN_TEXT:
        decided = [False] * len(blocks)  # a few scraps of a page jusText finds no text on: no main text
    for block, paragraph, keep in zip(blocks, found, decided, strict=True):
        block.main = keep
        block.score = _side(paragraph.raw_score, keep)
    return blocks
