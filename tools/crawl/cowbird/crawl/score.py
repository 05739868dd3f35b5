"""What a fetched page turned out to be, by `cowbird build`'s own stages, and the links it gives.

`analyse` runs in a worker process (the page's decoding, boilerplate, language and badness stages cost
tens of milliseconds): it undoes the content encoding, runs `cowbird.build.pipeline.clean_page` with the
crawl's target language, and extracts the page's links. A page is *good* when the build would keep it: main
text in the target language, not too bad (texrex's badness). Its *score* (0..1) orders the URLs it links:
a good page 1 minus half its badness share, a page of another language 0.1, boilerplate only 0.2, bad
prose 0.3, anything else 0.
"""

from __future__ import annotations

import gzip
import zlib
from dataclasses import dataclass
from pathlib import Path

import lxml.html

from cowbird.build import pipeline
from cowbird.build.records import Document, Page


@dataclass(frozen=True)
class Verdict:
    good: bool
    score: float
    language: str | None
    outcome: str  # "good", or the build stage's reason ("language en", "no main text", ...)
    links: tuple[str, ...]


def decoded(body: bytes, encoding: str | None) -> bytes:
    """The body with its Content-Encoding (gzip, deflate) undone; as it came when it cannot be."""
    coding = (encoding or "").strip().lower()
    try:
        if coding in ("gzip", "x-gzip"):
            return gzip.decompress(body)
        if coding == "deflate":
            try:
                return zlib.decompress(body)
            except zlib.error:
                return zlib.decompress(body, -zlib.MAX_WBITS)
    except (OSError, EOFError, zlib.error):
        return body
    return body


def links_of(html: bytes, url: str, limit: int = 2000) -> tuple[str, ...]:
    """The href of every <a> and <area> (resolved later against the page; <base href> honoured)."""
    try:
        root = lxml.html.fromstring(html, base_url=url)
    except (ValueError, lxml.etree.ParserError):
        return ()
    base = root.xpath("string(//base/@href)")
    out: list[str] = []
    for href in root.xpath("//a/@href | //area/@href"):
        href = str(href).strip()
        if href and not href.startswith(("#", "javascript:", "mailto:", "tel:", "data:")):
            out.append(href if not base else lxml.html.urljoin(str(base), href))
        if len(out) >= limit:
            break
    return tuple(out)


def analyse(url: str, body: bytes, content_type: str | None, encoding: str | None, language: str,
            max_badness: float) -> Verdict:
    payload = decoded(body, encoding)
    options = pipeline.BuildOptions(inputs=(), out=Path("."), languages=(language,), max_badness=max_badness)
    result = pipeline.clean_page(Page(url, payload, content_type, None, None, "crawl", 0), options)
    links = links_of(payload, url)
    if isinstance(result, Document):
        badness = 0.0 if result.badness != result.badness else min(1.0, result.badness / max(max_badness, 1e-9))
        return Verdict(True, round(1.0 - 0.5 * badness, 4), result.language, "good", links)
    if result.stage == "language":
        score = 0.1
    elif result.stage == "boilerplate":
        score = 0.2
    elif result.stage == "badness":
        score = 0.3
    else:
        score = 0.0
    found = result.reason.removeprefix("language ") if result.stage == "language" else None
    return Verdict(False, score, found, result.reason, links)
