"""A web page's text as Calf reads it: every block of text in document order, each marked as running
text or page furniture (navigation, headers and footers, link lists, counters).

The line is looked for in all of the page's text (a sentence can sit anywhere); its context is the
running text around it: the block that holds it, then the neighbouring blocks up to the first piece
of furniture. Furniture is what sits in ``<nav>``, ``<footer>``, ``<aside>``, ``<menu>`` or in an
element whose class or id says navigation, menu, footer, sidebar, counter, cookie ...; a block of
links (two or more, most of its text); and a short block of items parted by " | " (a link list, a
visitor counter "Besucher seit 1996 | 123456"). Everything else is running text, short blocks such as
an interjection "(Beifall bei der CDU/CSU)" included, every one in its place.

The blocks come from lxml's HTML parser, walked here rather than by a main-text extractor:
trafilatura drops repeated paragraphs (1 of 15 identical interjections kept, even with
``deduplicate=False``) and the text after a ``<pre>``; jusText drops the space between two inline
elements (``<b>a</b> <i>b</i>``). Calf needs every block, in order, exactly as the page has it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import lxml.html
from lxml import etree

from cowbird.core.html import BLOCK_TAGS

SKIPPED = frozenset({"script", "style", "noscript", "template", "head", "svg", "math", "iframe", "object", "embed",
                     "select", "option", "textarea", "button", "canvas", "audio", "video", "map"})
FURNITURE_TAGS = frozenset({"nav", "footer", "aside", "menu"})
FURNITURE_NAMES = re.compile(
    r"(?:^|[\s_-])(?:nav|navbar|navigation|menu|menubar|breadcrumbs?|footer|sidebar|banner|cookies?|"
    r"share|social|counter|skip|toolbar|pagination|masthead)(?:$|[\s_-])", re.IGNORECASE)
HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
LINK_DENSITY = 0.5
"""A block of two or more links with more of its text in links than this is navigation."""
LIST_BLOCK = 200
"""Characters under which a block of items parted by " | " is a link list or a counter."""
INVISIBLE = str.maketrans({"\u00ad": None, "\u200b": None, "\u200c": None, "\u200d": None, "\u2060": None,
                           "\ufeff": None})
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Block:
    text: str  # whitespace collapsed, invisible characters (soft hyphens) removed: as a reader sees it
    furniture: bool  # navigation, header, footer, link list
    heading: bool


@dataclass(frozen=True)
class PageText:
    """The page's blocks, and their text joined by newlines (``text``) with each block's offset."""

    blocks: list[Block]
    text: str
    starts: list[int]

    @classmethod
    def of(cls, blocks: list[Block]) -> PageText:
        starts, offset = [], 0
        for block in blocks:
            starts.append(offset)
            offset += len(block.text) + 1
        return cls(blocks, "\n".join(b.text for b in blocks), starts)

    def block_at(self, offset: int) -> int:
        """The number of the block holding ``offset`` of ``text``."""
        low, high = 0, len(self.starts) - 1
        while low < high:
            middle = (low + high + 1) // 2
            if self.starts[middle] <= offset:
                low = middle
            else:
                high = middle - 1
        return low


def visible(text: str) -> str:
    """Text as a reader sees it: runs of whitespace one space, soft hyphens and zero-width characters gone."""
    return _SPACE.sub(" ", text.translate(INVISIBLE)).strip()


class _Walker:
    """Collects blocks from the element tree: text and tails in document order, a new block at every
    block-level element, ``<br>`` a line break."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.parts: list[str] = []
        self.link_chars = 0
        self.links = 0
        self.furniture_depth = 0
        self.link_depth = 0
        self.heading_depth = 0
        self.block_furniture = False
        self.block_heading = False

    def add(self, text: str | None) -> None:
        if text:
            self.parts.append(text)
            if self.link_depth:
                self.link_chars += len(text.strip())
            if text.strip():
                self.block_furniture = self.block_furniture or self.furniture_depth > 0
                self.block_heading = self.block_heading or self.heading_depth > 0

    def close(self) -> None:
        text = visible("".join(self.parts))
        if text:
            density = self.link_chars / max(1, len(text.replace(" ", "")))
            furniture = (self.block_furniture or (self.links >= 2 and density > LINK_DENSITY)
                         or (len(text) < LIST_BLOCK and " | " in text))
            self.blocks.append(Block(text, furniture, self.block_heading))
        self.parts, self.link_chars, self.links, self.block_furniture, self.block_heading = [], 0, 0, False, False

    def walk(self, element: etree._Element) -> None:
        tag = element.tag if isinstance(element.tag, str) else ""
        tag = tag.rsplit("}", 1)[-1].lower()
        if not tag or tag in SKIPPED:  # comments, processing instructions, scripts: only their tail counts
            return
        furniture = tag in FURNITURE_TAGS or bool(FURNITURE_NAMES.search(
            f"{element.get('class') or ''} {element.get('id') or ''} {element.get('role') or ''}"))
        block = tag in BLOCK_TAGS
        if block:
            self.close()
        self.furniture_depth += furniture
        self.link_depth += tag == "a"
        self.links += tag == "a"
        self.heading_depth += tag in HEADINGS
        if tag == "br":
            self.add("\n")
        self.add(element.text)
        for child in element:
            self.walk(child)
            self.add(child.tail)
        self.furniture_depth -= furniture
        self.link_depth -= tag == "a"
        self.heading_depth -= tag in HEADINGS
        if block:
            self.close()


def page_text(html: str) -> PageText:
    """Every block of text of an HTML page (or of plain text: its paragraphs), in document order."""
    stripped = html.lstrip()
    if not stripped:
        return PageText.of([])
    if not stripped.startswith("<"):  # text/plain: blank lines part the paragraphs
        return PageText.of([Block(visible(p), False, False) for p in re.split(r"\n\s*\n", html) if visible(p)])
    parser = lxml.html.HTMLParser(encoding="utf-8", remove_comments=True, remove_pis=True)
    try:
        root = lxml.html.document_fromstring(html.encode("utf-8", "surrogatepass"), parser=parser)
    except (etree.ParserError, ValueError):
        return PageText.of([Block(visible(re.sub(r"<[^>]*>", " ", html)), False, False)])
    walker = _Walker()
    walker.walk(root)
    walker.close()
    return PageText.of(walker.blocks)


def running_neighbours(page: PageText, index: int, step: int, chars: int) -> list[int]:
    """The blocks of running text next to block ``index`` (before it with ``step`` -1, after it
    with +1), nearest first, until ``chars`` characters are had or furniture ends the running text."""
    taken: list[int] = []
    have = 0
    k = index + step
    while 0 <= k < len(page.blocks) and have < chars and not page.blocks[k].furniture:
        taken.append(k)
        have += len(page.blocks[k].text) + 1
        k += step
    return taken
