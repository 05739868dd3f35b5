"""Calf's evaluation on a web that looks like the real one, on loopback.

Texts in two languages become web pages — German speeches of the Bundestag (GERMAPARL1386, with
their interjections "(Beifall bei der CDU/CSU)" as paragraphs of their own) and English web texts
(EWT) — and one sentence of each becomes an exported concordance line. The pages are built the ways
the web builds them:

- layouts: semantic HTML5 with navigation, a visitor counter, a sidebar and a footer; an old table
  layout (navigation in a cell, ``<font>``, ``<br><br>`` between paragraphs); a "converted PDF"
  hard-wrapped in ``<pre>`` at 72 columns with words hyphenated at line ends; plain ``<div>``s;
- text: inline markup inside sentences (``<b>``, ``<a>``, ``<i>``), entities, typographic quotes and
  dashes, soft hyphens in long words;
- transport: half gzip-compressed; windows-1252 declared as ISO-8859-1 in the header, by
  ``<meta charset>``, by ``http-equiv``, or not at all; UTF-8 with a byte order mark; UTF-8.

The lines, by class (each line is a sentence of its page, exported with ``context=s`` or, for a
third of them, with 10 tokens each side — of which some reach into sentences of another text, as a
COW corpus's shuffled sentences do):

- ``unchanged``: the page is where the line's URL says;
- ``edited``: 10-30 % of the page's other sentences rewritten, dropped or added, the line intact;
- ``one_word``: one word of the line changed, added or dropped on the page;
- ``redirected``: the URL answers 301/302/307/308, in chains of one to three, relative and absolute;
- ``moved``: the URL answers 404; only the stub search API (SearXNG-style JSON) knows the new URL;
- ``big``: the line inside a 2-MB page; ``slow``: the page answers after 2 s;
- ``gone``: 404, 410, 500, a closed port, a host that does not resolve, a soft 404 (200 saying the
  page is not found), a redirect to the home page — and the search engine offers other pages of
  the same site, in the same style and language;
- ``trap``: the page holds the line's words scattered over other sentences, or its two halves in
  different places;
- ``robots``: robots.txt disallows the page for Calf's agent.

Pages lie on 8 loopback host names (127.0.0.2 ...). Calf runs as its command line, with
``--delay 0.1`` and ``--concurrency 8``. The table: per class, what Calf answered; found with the
right context (the letters of the neighbouring sentences on the page, before and after, in
order); false positives; page furniture (navigation, counter, footer) in the context; and
throughput. Targets (issue 31): ≥ 99 % of unchanged and moved lines (redirected, moved, big, slow
included) found with the right context, ≥ 97 % of edited lines (one-word edits included), 0 false
positives on gone pages, traps and robots, no crash, ≥ 20 lines/s.

    .venv/bin/python bench/calf_eval.py [--lines 1000] [--seed 7]

With ``--archives`` (issue 53), a web whose pages are mostly gone or rewritten since their texts
were crawled (2011-2014, each line's ``text_lastmod``), and three web archives on loopback that
speak as the real ones do (``tests/calf/archive_web.py``): a Wayback CDX server (``ia``), a Memento
TimeMap (``memento``) and a Common Crawl index with WARC files (``cc``), asked in that order at their
default politeness (1 request a second, 2 at once). The lines, by what became of their page:

- ``gone, captured``: the URL is gone (404, 410, a closed port, a host that does not resolve, a soft
  404, a redirect home); a capture near the crawl holds the page, a soft-404 capture sometimes
  nearer still, a later capture of another page further;
- ``rewritten, captured before``: the page now says something else; its nearest capture is already
  the rewritten page, an older one holds the line;
- ``captured redirect``: the archive's capture is a redirect, to the capture of the page's new URL;
- ``only in memento``, ``only in common crawl``: the first archive has nothing (or a soft 404);
- ``captures without it`` (soft 404s, the home page, another text), ``only after rewrite``, ``no
  capture``: nothing holds the line — any line found there is a false positive.

Targets: ≥ 98 % of the lines whose page has a capture from before its rewrite found with the right
context and the right capture date; 0 false positives; no archive asked faster than its rate.

    .venv/bin/python bench/calf_eval.py --archives [--lines 160] [--seed 7]
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import gzip
import html
import json
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cowbird.calf.matching import folded
from cowbird.store import CwbCorpus
from tests.calf.archive_web import LocalArchives, Stored
from tests.calf.web import Answer, send
from tests.support import REFERENCE

HOSTS = 8
SHARES = {"unchanged": 0.30, "edited": 0.10, "one_word": 0.10, "redirected": 0.10, "moved": 0.10, "big": 0.006,
          "slow": 0.006, "gone": 0.14, "trap": 0.08, "robots": 0.02}
FOUND = ("unchanged", "edited", "one_word", "redirected", "moved", "big", "slow")
NOT_FOUND = ("gone", "trap", "robots")
GONE_KINDS = ("404", "410", "500", "closed port", "unresolvable host", "soft 404", "redirect home")
FURNITURE = {
    "de": ["Startseite", "Archiv", "Kontakt", "Besucher seit 1998", "Impressum", "Datenschutz", "Drucksachen"],
    "en": ["Home", "Archive", "Contact us", "Visitors since 1998", "Imprint", "Privacy policy", "Related posts"],
}
COUNTER = {"de": "Besucher seit 1998 | {n}", "en": "Visitors since 1998 | {n}"}
SOFT_404 = {"de": "Die angeforderte Seite wurde leider nicht gefunden. Bitte versuchen Sie es später erneut.",
            "en": "Sorry, the page you requested could not be found. Please try again later."}
QUOTES = {"de": ("„", "“"), "en": ("“", "”")}


# ------------------------------------------------------------------ the texts


@dataclass
class Text:
    """A document: paragraphs of sentences (tokens); ``kind`` marks interjections."""

    language: str
    paragraphs: list[list[list[str]]]
    kinds: list[str]

    def sentences(self) -> list[tuple[int, int]]:
        return [(p, s) for p, paragraph in enumerate(self.paragraphs) for s in range(len(paragraph))]


def english_texts(vrt: Path) -> list[Text]:
    texts: list[Text] = []
    sentence: list[str] = []
    for line in vrt.read_text(encoding="utf-8").splitlines():
        if line.startswith("<text"):
            texts.append(Text("en", [], []))
        elif line.startswith("<p>") or line.startswith("<p "):
            texts[-1].paragraphs.append([])
            texts[-1].kinds.append("regular")
        elif line.startswith("</s>"):
            if sentence and texts and texts[-1].paragraphs:
                texts[-1].paragraphs[-1].append(sentence)
            sentence = []
        elif line and not line.startswith("<"):
            sentence.append(html.unescape(line.split("\t")[0]))
    return [t for t in texts if sum(len(p) for p in t.paragraphs) >= 3]


def german_texts(registry: Path) -> list[Text]:
    corpus = CwbCorpus.open(registry, "germaparl1386")
    words = corpus.p_attribute("word").string_array
    ids = corpus.p_attribute("word").id_range(0, len(corpus.p_attribute("word")))
    tokens = [str(words[i]) for i in ids]
    texts_, paragraphs, kinds, sentences = (corpus.s_attribute(n) for n in ("text", "p", "p_type", "s"))
    found: list[Text] = []
    p, s = 0, 0
    for t in range(len(texts_)):
        text = texts_.region(t)
        doc = Text("de", [], [])
        while p < len(paragraphs) and paragraphs.region(p).start <= text.end:
            region = paragraphs.region(p)
            if region.start >= text.start:
                doc.paragraphs.append([])
                doc.kinds.append(kinds.value(p))
                while s < len(sentences) and sentences.region(s).start <= region.end:
                    sentence = sentences.region(s)
                    if sentence.start >= region.start:
                        doc.paragraphs[-1].append(tokens[sentence.start:sentence.end + 1])
                    s += 1
            p += 1
        kept = [(para, kind) for para, kind in zip(doc.paragraphs, doc.kinds, strict=True) if para]
        # a speech is a page of at most 4 paragraphs (a long one, several pages): pages enough for the lines
        for first in range(0, len(kept), 4):
            part = kept[first:first + 4]
            page = Text("de", [para for para, _ in part], [kind for _, kind in part])
            if sum(len(para) for para in page.paragraphs) >= 3:
                found.append(page)
    return found


def detokenize(tokens: list[str], language: str) -> str:
    """Running text as a page has it: no space before punctuation and clitics, none inside brackets."""
    text = " ".join(tokens)
    text = re.sub(r" ([.,!?;:%)\]}])", r"\1", text)
    text = re.sub(r"([(\[{]) ", r"\1", text)
    text = re.sub(r'" (.*?) "', r'"\1"', text)
    if language == "en":
        text = re.sub(r" (n't|'s|'re|'ve|'ll|'d|'m)\b", r"\1", text)
    return text


def letters(text: str) -> str:
    return folded(text)[0]


# ------------------------------------------------------------------ pages


@dataclass
class Style:
    layout: str  # modern, table, pdf, plain
    gzip: bool
    charset: str  # utf-8, header-latin1, meta-latin1, http-equiv-latin1, undeclared-latin1, utf-8-bom
    markup: bool = True


def decorate(sentence: str, language: str, rng: random.Random) -> str:
    """A sentence as HTML: typographic quotes and dashes, entities, inline markup, soft hyphens."""
    opening, closing = QUOTES[language]
    text = re.sub(r'"([^"]*)"', rf"{opening}\1{closing}", sentence).replace(" - ", " – ")
    words = text.split(" ")
    out = []
    for word in words:
        escaped = html.escape(word, quote=False)
        roll = rng.random()
        if len(word) >= 12 and roll < 0.3:  # a soft hyphen in a long word
            cut = len(word) // 2
            escaped = html.escape(word[:cut], quote=False) + "&shy;" + html.escape(word[cut:], quote=False)
        elif roll < 0.04 and word.isalpha():
            escaped = f"<b>{escaped}</b>"
        elif roll < 0.07 and word.isalpha():
            escaped = f"<a href='/glossar#{escaped}'>{escaped}</a>"
        elif roll < 0.09 and word.isalpha():
            escaped = f"<i>{escaped}</i>"
        out.append(escaped)
    return " ".join(out).replace("&amp;", "&amp;").replace("–", "&#8211;" if rng.random() < 0.5 else "–")


def hard_wrap(paragraph: str, width: int = 72) -> str:
    """A paragraph as a PDF converter writes it: lines of ``width``, long words hyphenated at line ends."""
    lines, line = [], ""
    for word in paragraph.split(" "):
        if len(line) + 1 + len(word) <= width:
            line = f"{line} {word}" if line else word
            continue
        room = width - len(line) - 2
        if room >= 4 and len(word) >= 10 and word.isalpha():
            lines.append(f"{line} {word[:room]}-" if line else f"{word[:room]}-")
            line = word[room:]
        else:
            lines.append(line)
            line = word
    lines.append(line)
    return "\n".join(lines)


def render(paragraphs: list[str], kinds: list[str], title: str, language: str, style: Style, rng: random.Random,
           number: int) -> str:
    """A whole page around paragraphs of (decorated) text, in the style's layout."""
    nav = " | ".join(f"<a href='/{w.lower().replace(' ', '-')}'>{w}</a>" for w in FURNITURE[language][:3])
    counter = COUNTER[language].format(n=100_000 + number * 37)
    footer = " | ".join(FURNITURE[language][4:6]) + f" | © 2024 {title}"
    charset = "" if style.charset in ("undeclared-latin1", "utf-8-bom") else (
        "<meta charset='iso-8859-1'>" if style.charset == "meta-latin1" else
        "<meta http-equiv='Content-Type' content='text/html; charset=windows-1252'>"
        if style.charset == "http-equiv-latin1" else "<meta charset='utf-8'>")
    head = f"<!DOCTYPE html><html lang='{language}'><head>{charset}<title>{html.escape(title)}</title></head>"
    if style.layout == "pdf":
        text = "\n\n".join(hard_wrap(p) for p in paragraphs)
        return (f"{head}<body><div class='navbar'>{nav}</div><pre>{text}</pre>"
                f"<div class='footer'>{footer}</div></body></html>")
    if style.layout == "table":
        body = "<br><br>\n".join(f"<font face='Arial'>{p}</font>" for p in paragraphs)
        return (f"{head}<body><table width='100%'><tr><td colspan='2'><b>{html.escape(title)}</b> {counter}</td></tr>"
                f"<tr><td width='160' valign='top'>{nav.replace(' | ', '<br>')}</td><td valign='top'>{body}</td></tr>"
                f"<tr><td colspan='2'><small>{footer}</small></td></tr></table></body></html>")
    blocks = "".join(f"<p class='{kind}'>{p}</p>" for p, kind in zip(paragraphs, kinds, strict=True))
    if style.layout == "plain":
        return (f"{head}<body><div id='menu'>{nav}</div><div id='content'><h1>{html.escape(title)}</h1>{blocks}"
                f"</div><div id='footer'>{footer}</div></body></html>")
    related = " ".join(f"<a href='/p/{rng.randrange(1000)}'>{FURNITURE[language][6]} {k}</a>" for k in range(3))
    return (f"{head}<body><header><a href='/'>{html.escape(title)}</a><nav>{nav}</nav></header>"
            f"<div class='counter'>{counter}</div><main><article><h1>{html.escape(title)}</h1>{blocks}</article>"
            f"</main><aside>{related}</aside><footer>{footer}</footer></body></html>")


def encode(page: str, style: Style) -> tuple[bytes, str]:
    """The bytes and the Content-Type header of a page in the style's charset."""
    if style.charset == "utf-8":
        return page.encode("utf-8"), "text/html; charset=utf-8"
    if style.charset == "utf-8-bom":
        return "\ufeff".encode() + page.encode("utf-8"), "text/html"
    body = page.encode("cp1252", errors="xmlcharrefreplace")
    return body, "text/html; charset=ISO-8859-1" if style.charset == "header-latin1" else "text/html"


# ------------------------------------------------------------------ the web


class Web:
    """Answers by (host, path), a stub search API, robots.txt per host."""

    def __init__(self) -> None:
        self.answers: dict[tuple[str, str], Answer] = {}
        self.search: dict[str, list[str]] = {}  # what the engine offers for a line without the phrase
        self.index: list[tuple[str, str]] = []  # (url, letters of the page's text): found by phrase
        self.robots: dict[str, bytes] = {}
        self.requests = 0
        web = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                web.requests += 1
                host = (self.headers.get("Host") or "").split(":")[0]
                parts = urlsplit(self.path)
                if parts.path == "/robots.txt":
                    send(self, Answer(web.robots.get(host, b"User-agent: *\nAllow: /\n"),
                                      content_type="text/plain"))
                elif parts.path == "/search":
                    key = letters(parse_qs(parts.query).get("q", [""])[0])[:40]
                    # a phrase search: the pages holding the phrase, then (as engines do) near matches
                    urls = [url for url, text in web.index if key and key in text]
                    urls += [url for url in web.search.get(key, []) if url not in urls]
                    send(self, Answer(json.dumps({"results": [{"url": u} for u in urls]}).encode(),
                                      content_type="application/json"))
                else:
                    missing = Answer(b"<html><body>Not found</body></html>", 404)
                    send(self, web.answers.get((host, parts.path)) or missing)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up on a slow or huge page: nothing to report

        self.server = Server(("0.0.0.0", 0), Handler)
        self.server.daemon_threads = True
        self.server.request_queue_size = 256
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    def host(self, number: int) -> str:
        return f"127.0.0.{2 + number % HOSTS}"

    def url(self, host: str, path: str) -> str:
        return f"http://{host}:{self.port}{path}"

    def page(self, host: str, path: str, page: str, style: Style, delay: float = 0.0) -> str:
        body, content_type = encode(page, style)
        headers = []
        if style.gzip:
            body = gzip.compress(body)
            headers.append(("Content-Encoding", "gzip"))
        self.answers[(host, path)] = Answer(body, 200, content_type, tuple(headers), delay)
        return self.url(host, path)


# ------------------------------------------------------------------ lines


@dataclass
class Case:
    kind: str
    detail: str
    language: str
    export: str  # sentence, tokens, shuffled
    row: dict[str, str]
    before: str = ""  # letters of the running text before the line on the page (its neighbouring sentence)
    after: str = ""


def unique_sentences(texts: list[Text]) -> Counter[str]:
    """How often each sentence's letters occur, and each sentence's first and last 30 letters: a line
    is a sentence found nowhere else, not even nearly (formulaic speech repeats sentences with a word
    changed: "... die Zustimmung der Mehrheit der Mitglieder des Bundestages erforderlich [ist]")."""
    counts: Counter[str] = Counter()
    for t in texts:
        for p in t.paragraphs:
            for s in p:
                whole = letters(" ".join(s))
                counts.update({whole, "<" + whole[:30], ">" + whole[-30:]})
    return counts


def choose(text: Text, counts: Counter[str], rng: random.Random) -> tuple[int, int] | None:
    """A sentence of a regular paragraph with a sentence before and after it, found nowhere else."""
    flat = text.sentences()
    good = [k for k, (p, s) in enumerate(flat) if 0 < k < len(flat) - 1 and text.kinds[p] == "regular"
            and 6 <= len(text.paragraphs[p][s]) <= 45 and _unique(letters(" ".join(text.paragraphs[p][s])), counts)
            and text.kinds[flat[k - 1][0]] == "regular" and text.kinds[flat[k + 1][0]] == "regular"]
    if not good:
        return None
    return flat[rng.choice(good)]


def _unique(sentence: str, counts: Counter[str]) -> bool:
    return counts[sentence] == 1 and counts["<" + sentence[:30]] == 1 and counts[">" + sentence[-30:]] == 1


def one_word_edit(tokens: list[str], rng: random.Random, vocabulary: list[str]) -> tuple[list[str], str, int]:
    words = ([k for k, t in enumerate(tokens) if t.isalpha() and len(t) > 2]  # a word, else a number or a sign
             or [k for k, t in enumerate(tokens) if any(c.isalnum() for c in t)] or list(range(len(tokens))))
    k = rng.choice(words)
    how = rng.choice(["changed", "added", "dropped"])
    edited = list(tokens)
    if how == "changed":
        edited[k] = rng.choice([w for w in vocabulary if w.lower() != tokens[k].lower()])
    elif how == "added":
        edited.insert(k, rng.choice(vocabulary))
    else:
        del edited[k]
    return edited, how, k


def build(web: Web, texts: list[Text], lines: int, seed: int) -> list[Case]:
    rng = random.Random(seed)
    counts = unique_sentences(texts)
    vocabulary = {lang: sorted({t for text in texts if text.language == lang for p in text.paragraphs for s in p
                                for t in s if t.isalpha() and len(t) > 3})[:5000] for lang in ("de", "en")}
    pool = {lang: [t for t in texts if t.language == lang] for lang in ("de", "en")}
    reserve: dict[str, list[Text]] = {}  # texts no line comes from: other pages' sentences, filler, teasers
    for lang in pool:
        rng.shuffle(pool[lang])
        reserve[lang] = pool[lang][len(pool[lang]) * 4 // 5:]
        pool[lang] = pool[lang][:len(pool[lang]) * 4 // 5]
    kinds = [kind for kind, share in SHARES.items() for _ in range(max(5, round(share * lines)))]
    kinds = (kinds + ["unchanged"] * lines)[:max(lines, len(kinds))]
    rng.shuffle(kinds)
    styles = [("modern", 0.4), ("table", 0.2), ("pdf", 0.2), ("plain", 0.2)]
    charsets = [("utf-8", 0.55), ("header-latin1", 0.15), ("meta-latin1", 0.1), ("http-equiv-latin1", 0.05),
                ("undeclared-latin1", 0.1), ("utf-8-bom", 0.05)]

    def pick(options: list[tuple[str, float]]) -> str:
        return rng.choices([o for o, _ in options], [w for _, w in options])[0]

    for number_of_host in range(HOSTS):
        name = web.host(number_of_host)
        web.robots[name] = b"User-agent: *\nDisallow: /admin/\n\nUser-agent: cowbird-calf\nDisallow: /private/\n"
    cases: list[Case] = []
    used = {"de": 0, "en": 0}
    homepages: dict[str, list[str]] = defaultdict(list)
    site_pages: dict[tuple[str, str], list[str]] = defaultdict(list)  # (host, language) -> page URLs
    for number, kind in enumerate(kinds):
        language = "de" if number % 2 == 0 else "en"
        while True:  # each text gives one line: no line's sentence stands on another line's page
            if used[language] >= len(pool[language]):
                sys.exit(f"not enough {language} texts for {lines} lines")
            text = pool[language][used[language]]
            used[language] += 1
            spot = choose(text, counts, rng)
            if spot is not None:
                break
        style = Style(pick(styles), rng.random() < 0.5, pick(charsets))
        paragraph, sentence = spot
        host = web.host(number)
        tokens = text.paragraphs[paragraph][sentence]
        page_tokens = [[list(s) for s in p] for p in text.paragraphs]
        detail = ""
        match = rng.randrange(len(tokens))
        if kind == "one_word":
            page_tokens[paragraph][sentence], how, k = one_word_edit(tokens, rng, vocabulary[language])
            detail = f"{how}, {'the match' if k == match and how != 'added' else 'another word'}"
        elif kind == "edited":  # 10-30 % of the other sentences rewritten, dropped or added; the line intact
            share = rng.uniform(0.1, 0.3)
            sources = [x for other in reserve[language][:200] for para in other.paragraphs for x in para]
            rewritten: list[list[list[str]]] = []
            for p, para in enumerate(page_tokens):
                kept: list[list[str]] = []
                for s, sentence_tokens in enumerate(para):
                    if (p, s) == spot or rng.random() >= share:
                        kept.append(sentence_tokens)
                        continue
                    what = rng.random()
                    if what < 0.5:
                        kept.append(list(rng.choice(sources)))
                    elif what >= 0.75:
                        kept += [list(rng.choice(sources)), sentence_tokens]
                    # else: dropped
                rewritten.append(kept)
            page_tokens = rewritten
            detail = f"{share:.0%} of the text around"
        exported = rng.choices(["sentence", "tokens", "shuffled"], [0.67, 0.22, 0.11])[0]
        if kind == "trap":  # a line of tokens has words of other sentences: its sentence's halves may stay whole
            detail = rng.choice(["scattered", "split"]) if exported == "sentence" else "scattered"
            page_tokens = trap(page_tokens, spot, detail, rng, len(tokens) // 2)
        rendered = [" ".join(decorate(detokenize(s, language), language, rng) for s in para if s)
                    for para in page_tokens]
        kinds_of = list(text.kinds)
        if kind == "big":  # 2 MB: other texts' paragraphs before and after
            filler: list[str] = []
            while sum(len(p) for p in filler) < 2_000_000:
                other = rng.choice(reserve[language])
                filler += [" ".join(detokenize(s, language) for s in para) for para in other.paragraphs]
            half = len(filler) // 2
            rendered = filler[:half] + rendered + filler[half:]
            kinds_of = ["regular"] * half + kinds_of + ["regular"] * (len(filler) - half)
            detail = "2 MB"
        title = f"{'Plenarprotokoll' if language == 'de' else 'Post'} {number}"
        page = render(rendered, kinds_of, title, language, style, rng, number)
        path = f"/{'private/' if kind == 'robots' else ''}p/{number}"
        row_url = web.url(host, path)
        if kind in ("unchanged", "edited", "one_word", "big", "slow", "trap", "robots"):
            web.page(host, path, page, style, delay=2.0 if kind == "slow" else 0.0)
            if kind == "slow":
                detail = "2 s"
        elif kind == "redirected":
            target_host = web.host(number + 3)
            target = web.page(target_host, f"/archive/{number}", page, style)
            hops = rng.randint(1, 3)
            chain = [f"/r/{number}/{k}" for k in range(hops)]
            row_url = web.url(host, chain[0])
            for k, step in enumerate(chain):
                following = chain[k + 1].rsplit("/", 1)[1] if k + 1 < hops else target  # relative, then absolute
                status = rng.choice([301, 302, 307, 308])
                web.answers[(host, step)] = Answer(b"", status, headers=(("Location", following),))
            detail = f"{hops} redirect{'s' if hops > 1 else ''}"
        elif kind == "moved":  # only the search engine knows where it is now (with an unrelated page first)
            new = web.page(web.host(number + 5), f"/neu/{number}", page, style)
            web.index.append((new, letters(" ".join(" ".join(s) for para in page_tokens for s in para))))
            unrelated = site_pages[(web.host(number + 1), language)][:1]
            web.search[letters(" ".join(tokens))[:40]] = unrelated
        elif kind == "gone":
            detail = GONE_KINDS[number % len(GONE_KINDS)]
            row_url = gone(web, host, path, detail, language, style, rng, number)
            web.search[letters(" ".join(tokens))[:40]] = site_pages[(host, language)][:3] + homepages[host][:1]
        site_pages[(host, language)].append(web.url(host, path))
        if len(homepages[host]) == 0:
            homepages[host].append(web.url(host, "/"))
        cases.append(export(number, kind, detail, language, text, spot, tokens, match, exported, page_tokens,
                            row_url, reserve[language], rng))
    for host in homepages:  # each site's home page: teasers of other texts
        teasers = [" ".join(detokenize(s, "de") for s in rng.choice(reserve["de"]).paragraphs[0][:2])
                   for _ in range(4)]
        web.page(host, "/", render(teasers, ["regular"] * 4, "Startseite", "de", Style("modern", False, "utf-8"),
                                   rng, 0), Style("modern", False, "utf-8"))
    return cases


def trap(page_tokens: list[list[list[str]]], spot: tuple[int, int], how: str, rng: random.Random,
         half: int) -> list[list[list[str]]]:
    """The page without the line, its words still there: scattered one by one into other sentences,
    or its two halves (cut at the match) far apart."""
    paragraph, sentence = spot
    tokens = page_tokens[paragraph][sentence]
    page = [[list(s) for s in p] for p in page_tokens]
    page[paragraph][sentence] = []
    flat = [(p, s) for p, para in enumerate(page) for s in range(len(para)) if page[p][s]]
    if how == "scattered":  # inside sentences that are not the line's neighbours, never two words in a row
        after = next((k for k, f in enumerate(flat) if f > spot), len(flat))
        neighbours = set(flat[max(0, after - 1):after + 1])
        targets = [f for f in flat if f not in neighbours and len(page[f[0]][f[1]]) >= 3] or flat
        last: tuple[int, int] | None = None
        for word in tokens:
            choices = [f for f in targets if f != last] or targets
            p, s = rng.choice(choices)
            page[p][s].insert(rng.randrange(1, len(page[p][s])) if len(page[p][s]) > 1 else len(page[p][s]), word)
            last = (p, s)
    else:  # the first half opens the page's first sentence, the second closes its last: all the text between
        first, last = flat[0], flat[-1]
        page[first[0]][first[1]] = tokens[:half] + page[first[0]][first[1]]
        page[last[0]][last[1]] = page[last[0]][last[1]] + tokens[half:]
    return page


def gone(web: Web, host: str, path: str, how: str, language: str, style: Style, rng: random.Random,
         number: int) -> str:
    """The URL of a line whose page is gone, in one of the ways pages go."""
    if how == "closed port":
        return f"http://127.0.0.1:1{path}"
    if how == "unresolvable host":
        return f"http://gone-{number}.calf-eval.invalid{path}"
    if how in ("410", "500"):
        web.answers[(host, path)] = Answer(b"<html><body>Gone</body></html>", int(how))
    elif how == "soft 404":
        web.page(host, path, render([SOFT_404[language]], ["regular"], "404", language, style, rng, number), style)
    elif how == "redirect home":
        web.answers[(host, path)] = Answer(b"", 302, headers=(("Location", "/"),))
    return web.url(host, path)


def export(number: int, kind: str, detail: str, language: str, text: Text, spot: tuple[int, int], tokens: list[str],
           match: int, style: str, page_tokens: list[list[list[str]]], url: str, pool: list[Text],
           rng: random.Random) -> Case:
    """The exported line: its sentence (``context=s``), or 10 tokens each side — from the text around
    it, or (shuffled, as in COW) from another text."""
    flat = [s for para in text.paragraphs for s in para]
    k = [(p, s) for p, para in enumerate(text.paragraphs) for s in range(len(para))].index(spot)
    left, right = tokens[:match], tokens[match + 1:]
    if style == "tokens":  # the text around the sentence, as the corpus has it next to it
        before = [t for s in flat[:k] for t in s]
        stream = before + tokens + [t for s in flat[k + 1:] for t in s]
        at = len(before) + match
        left, right = stream[max(0, at - 10):at], stream[at + 1:at + 11]
    elif style == "shuffled":
        other = rng.choice([t for t in pool if t is not text])
        noise = [t for para in other.paragraphs for s in para for t in s]
        left = (noise[-10:] + tokens[:match])[-10:] if match < 10 else tokens[match - 10:match]
        right = (tokens[match + 1:] + noise[:10])[:10]
    row = {"position": str(number), "left": " ".join(left), "match": tokens[match], "right": " ".join(right),
           "text_url": url}
    page_flat = [s for para in page_tokens for s in para if s]
    before_letters = after_letters = ""
    if kind in ("unchanged", "redirected", "moved", "big", "slow") and style == "sentence":
        position = next(j for j, s in enumerate(page_flat) if s == tokens)
        before_letters = letters(" ".join(page_flat[position - 1])) if position > 0 else ""
        after_letters = letters(" ".join(page_flat[position + 1])) if position + 1 < len(page_flat) else ""
    return Case(kind, detail, language, style, row, before_letters, after_letters)


# ------------------------------------------------------------------ the run


def write_export(path: Path, provenance: Mapping[str, object], columns: list[str], rows: list[dict[str, str]]) -> None:
    """A concordance as the search page exports it: its provenance in ``#`` lines (the first says how many
    come before the header), then the header and the rows, tab-separated, lines ended by CRLF."""
    with path.open("w", encoding="utf-8", newline="") as out:
        out.write(f"# cowbird export: {len(provenance) + 1} lines of metadata starting with '#' come before "
                  f"the header (pandas: skiprows={len(provenance) + 1}; R: skip={len(provenance) + 1})\r\n")
        out.write("".join(f"# {key}: {json.dumps(value)}\r\n" for key, value in provenance.items()))
        writer = csv.DictWriter(out, columns, delimiter="\t", lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)


def run_calf(arguments: list[str], output: Path) -> tuple[float, str, list[dict[str, str]]]:
    """``python -m cowbird.calf.cli`` with ``arguments``, writing ``output``: the seconds it took, what it
    said on stderr and the rows it wrote; the benchmark stops with its error output if it fails."""
    started = time.monotonic()
    run = subprocess.run([sys.executable, "-m", "cowbird.calf.cli", *arguments], cwd=ROOT, capture_output=True,
                         text=True)
    seconds = time.monotonic() - started
    if run.returncode != 0:
        sys.exit(f"calf failed (exit {run.returncode}):\n{run.stderr[-3000:]}")
    text = output.read_text(encoding="utf-8")
    skip = int(text.split("skiprows=")[1].split(";")[0])
    return seconds, run.stderr, list(csv.DictReader(text.splitlines()[skip:], delimiter="\t"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lines", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--delay", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--archives", action="store_true", help="The evaluation of web archives (issue 53).")
    args = parser.parse_args()
    vrt, registry = REFERENCE / "ewt.vrt", REFERENCE / "germaparl" / "registry"
    if not vrt.exists() or not registry.exists():
        sys.exit(f"the reference data is missing: {vrt}, {registry}")
    texts = english_texts(vrt) + german_texts(registry)
    if args.archives:
        archived_main(texts, args)
        return
    web = Web()
    cases = build(web, texts, args.lines, args.seed)
    # two exports, as a user makes them: whole sentences (context=s), and 10 tokens each side
    cases = [c for c in cases if c.export == "sentence"] + [c for c in cases if c.export != "sentence"]
    with tempfile.TemporaryDirectory(prefix="calf-eval-") as folder:
        inputs = []
        for name, context, group in (("sentences", "s", [c for c in cases if c.export == "sentence"]),
                                     ("tokens", 10, [c for c in cases if c.export != "sentence"])):
            source = Path(folder) / f"web_{name}.tsv"
            provenance = {"query": "(calf_eval)", "corpus": "web", "context": context, "rows": len(group)}
            write_export(source, provenance, list(cases[0].row), [c.row for c in group])
            inputs.append(str(source))
        output = Path(folder) / "out.tsv"
        seconds, stderr, results = run_calf([*inputs, "-o", str(output), "--concurrency", str(args.concurrency),
                                             "--search-url", f"http://127.0.0.2:{web.port}/search", "--delay",
                                             str(args.delay), "--timeout", "10"], output)
    report(cases, results, seconds, args, web.requests, stderr)


def report(cases: list[Case], results: list[dict[str, str]], seconds: float, args: argparse.Namespace, requests: int,
           stderr: str) -> None:
    assert len(results) == len(cases), f"{len(results)} rows written for {len(cases)} lines"
    per: dict[str, Counter[str]] = defaultdict(Counter)
    misses: list[str] = []
    furniture = ["startseitearchivkontakt", "homearchivecontactus", "besucherseit1998", "visitorssince1998",
                 "impressumdatenschutz", "imprintprivacypolicy", "relatedposts"]
    for case, result in zip(cases, results, strict=True):
        counts = per[case.kind]
        status = result["calf_status"]
        counts["lines"] += 1
        counts[status] += 1
        found = status in ("found_url", "found_search")
        counts["found"] += found
        if case.kind in NOT_FOUND and found:
            counts["false positive"] += 1
            misses.append(f"FALSE POSITIVE {case.kind} {case.detail}: {case.row} -> {status} "
                          f"{result['calf_source_url']} {result['calf_detail']} | page: {result['calf_page_text']}")
        changed_hit = case.kind == "one_word" and "the match" in case.detail  # found would be a false positive
        if changed_hit and found:
            counts["false positive"] += 1
            misses.append(f"FOUND WITHOUT ITS HIT {case.detail}: {case.row} -> {status} {result['calf_detail']}")
        if case.kind in FOUND and not found and not changed_hit:
            misses.append(f"missed {case.kind} {case.detail} {case.language} {case.export}: {result['calf_status']} "
                          f"{result['calf_detail']} | {case.row['left']} [{case.row['match']}] {case.row['right']}"
                          f" | page: {result['calf_page_text']}")
        context = letters(result["calf_left"]) + "|" + letters(result["calf_right"])
        if found and any(f in context for f in furniture):
            counts["furniture in context"] += 1
        if case.before or case.after:
            counts["context checked"] += 1
            # the neighbouring sentences' letters next to the line (at most 200: the context has 500 characters)
            right_context = letters(result["calf_left"]).endswith(case.before[-200:]) and letters(
                result["calf_right"]).startswith(case.after[:200])
            counts["right context"] += found and right_context
            if found and not right_context:
                misses.append(f"context {case.kind} {case.language}: ...{result['calf_left'][-60:]} || "
                              f"{result['calf_right'][:60]}... wanted ...{case.before[-30:]} || {case.after[:30]}...")
        counts["error"] += status == "error"
    total = len(cases)
    print(f"\n{total} lines ({Counter(c.language for c in cases)['de']} German, "
          f"{Counter(c.language for c in cases)['en']} English; exported as sentences "
          f"{Counter(c.export for c in cases)['sentence']}, 10 tokens each side "
          f"{Counter(c.export for c in cases)['tokens']}, shuffled {Counter(c.export for c in cases)['shuffled']}), "
          f"{HOSTS} hosts, --delay {args.delay}, --concurrency {args.concurrency}: {seconds:.1f} s, "
          f"**{total / seconds:.1f} lines/s**, {requests} requests\n")
    print("| class | lines | found on its page | found by search | not found | fetch error | error | found "
          "| right context | false positives | furniture in context |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind in SHARES:
        c = per[kind]
        context_right = f"{c['right context']} of {c['context checked']}" if c["context checked"] else "–"
        found_share = f"{c['found'] / c['lines']:.1%}" if c["lines"] else "–"
        print(f"| {kind} | {c['lines']} | {c['found_url']} | {c['found_search']} | {c['not_found']} | "
              f"{c['fetch_error']} | {c['error']} | {found_share} | {context_right} | "
              f"{c['false positive'] if kind in NOT_FOUND else '–'} | {c['furniture in context']} |")
    moved = [k for k in ("unchanged", "redirected", "moved", "big", "slow")]
    edited = ["edited", "one_word"]

    def rate(kinds: list[str], key: str) -> str:
        lines = sum(per[k]["lines"] for k in kinds)
        return f"{sum(per[k][key] for k in kinds) / max(1, lines):.1%} of {lines}"

    checked = sum(per[k]["context checked"] for k in moved)
    print(f"\nunchanged and moved: {rate(moved, 'found')} found; with the right context "
          f"{sum(per[k]['right context'] for k in moved) / max(1, checked):.1%} of the {checked} lines exported as "
          f"sentences (target ≥ 99 %)")
    print(f"edited, one-word edits included: {rate(edited, 'found')} found (target ≥ 97 %)")
    on_match = [(c, r) for c, r in zip(cases, results, strict=True) if c.kind == "one_word" and "the match" in c.detail]
    found_on_match = sum(r["calf_status"] in ("found_url", "found_search") for _, r in on_match)
    changed_on_match = sum(r["calf_status"] in ("changed_url", "changed_search") for _, r in on_match)
    others = sum(per[k]["found"] for k in edited) - found_on_match
    rest = sum(per[k]["lines"] for k in edited) - len(on_match)
    print(f"  the match itself changed or dropped: {changed_on_match} of {len(on_match)} changed_* (8 words intact), "
          f"{found_on_match} found (target 0: the hit is not on the page); any other edit: {others} of {rest} found "
          f"({others / max(1, rest):.1%})")
    print(f"false positives on gone pages, traps and robots: "
          f"{sum(per[k]['false positive'] for k in NOT_FOUND)} (target 0); rows with status error: "
          f"{sum(per[k]['error'] for k in per)}")
    show_misses(misses, stderr)


def show_misses(misses: list[str], stderr: str) -> None:
    """The lines to look at (the first 40), then Calf's own summary line."""
    if misses:
        print(f"\n{len(misses)} lines to look at:")
        for miss in misses[:40]:
            print(f"  {miss}")
    print("\n" + stderr.strip().splitlines()[-1] if stderr.strip() else "")


# ------------------------------------------------------------------ web archives (issue 53)

ARCHIVE_SHARES = {"gone, captured": 0.30, "rewritten, captured before": 0.18, "captured redirect": 0.08,
                  "only in memento": 0.08, "only in common crawl": 0.10, "captures without it": 0.12,
                  "only after rewrite": 0.07, "no capture": 0.07}
ARCHIVED = ("gone, captured", "rewritten, captured before", "captured redirect", "only in memento",
            "only in common crawl")
GONE_LIVE = ("404", "410", "closed port", "unresolvable host", "soft 404", "redirect home")


@dataclass
class ArchivedCase:
    kind: str
    detail: str
    language: str
    row: dict[str, str]
    before: str  # letters of the neighbouring sentences on the archived page
    after: str
    capture: str  # the date (ISO 8601) of the capture holding the line, "" when none does
    archive: str


def _when(rng: random.Random) -> dt.datetime:
    start = dt.datetime(2011, 1, 1, tzinfo=dt.UTC)
    return start + dt.timedelta(days=rng.randrange(4 * 365), seconds=rng.randrange(86_400))


def build_archived(web: Web, archives: dict[str, LocalArchives], texts: list[Text], lines: int,
                   seed: int) -> list[ArchivedCase]:
    """The lines, their live pages as they are now, and what each archive holds of them."""
    rng = random.Random(seed)
    counts = unique_sentences(texts)
    pool = {lang: [t for t in texts if t.language == lang] for lang in ("de", "en")}
    for lang in pool:
        rng.shuffle(pool[lang])
    kinds = [kind for kind, share in ARCHIVE_SHARES.items() for _ in range(max(4, round(share * lines)))]
    rng.shuffle(kinds)
    used = {"de": 0, "en": 0}
    crawls = {year: archives["cc"].crawl(f"CC-MAIN-{year}-20", dt.datetime(year, 5, 10, tzinfo=dt.UTC))
              for year in range(2011, 2020)}
    cases: list[ArchivedCase] = []

    def page_of(text: Text, language: str, number: int) -> tuple[bytes, str, Style]:
        style = Style(rng.choice(["modern", "table", "pdf", "plain"]), False,
                      rng.choice(["utf-8", "utf-8", "header-latin1", "meta-latin1", "undeclared-latin1"]))
        rendered = [" ".join(decorate(detokenize(s, language), language, rng) for s in para if s)
                    for para in text.paragraphs]
        title = f"{'Plenarprotokoll' if language == 'de' else 'Post'} {number}"
        body, content_type = encode(render(rendered, text.kinds, title, language, style, rng, number), style)
        return body, content_type, style

    def other_page(language: str, number: int) -> tuple[bytes, str]:
        other = pool[language][-1 - number % 50]  # texts no line comes from
        body, content_type, _ = page_of(other, language, number + 10_000)
        return body, content_type

    def soft_404(language: str) -> bytes:
        return render([SOFT_404[language]], ["regular"], "404", language, Style("modern", False, "utf-8"), rng,
                      0).encode("utf-8")

    for number, kind in enumerate(kinds):
        language = "de" if number % 2 == 0 else "en"
        while True:
            text = pool[language][used[language]]
            used[language] += 1
            spot = choose(text, counts, rng)
            if spot is not None:
                break
        tokens = text.paragraphs[spot[0]][spot[1]]
        flat = [s for para in text.paragraphs for s in para]
        k = flat.index(tokens)
        host = web.host(number)
        path = f"/p/{number}"
        url = web.url(host, path)
        crawled = _when(rng)
        body, content_type, _ = page_of(text, language, number)
        capture, archive, detail = "", "", ""
        ia, memento, cc = archives["ia"], archives["memento"], archives["cc"]
        if kind in ("gone, captured", "captured redirect", "only in memento", "only in common crawl",
                    "captures without it", "no capture"):
            detail = GONE_LIVE[number % len(GONE_LIVE)]
            url = gone(web, host, path, detail, language, Style("modern", False, "utf-8"), rng, number)
        else:  # rewritten: the URL now holds another text
            rewritten_body, rewritten_type = other_page(language, number)
            web.answers[(host, path)] = Answer(rewritten_body, 200, rewritten_type)
        if kind == "gone, captured":
            good = crawled + dt.timedelta(days=rng.randint(-200, 200), hours=rng.randint(0, 23))
            ia.capture(url, Stored(good, body, content_type=content_type,
                                   headers=(("Content-Encoding", "gzip"),) if rng.random() < 0.5 else ()))
            if ia.captures[url][0].headers:
                ia.captures[url][0] = Stored(good, gzip.compress(body), content_type=content_type,
                                             headers=(("Content-Encoding", "gzip"),))
            if rng.random() < 0.4:  # a soft 404 captured nearer the crawl than the page
                near = crawled + (good - crawled) / 3
                ia.capture(url, Stored(near, soft_404(language)))
                detail += ", soft-404 capture nearer"
            other, other_type = other_page(language, number)
            ia.capture(url, Stored(good + dt.timedelta(days=800), other, content_type=other_type))
            capture, archive = good.strftime("%Y-%m-%dT%H:%M:%SZ"), "ia"
        elif kind == "rewritten, captured before":
            rewrite = crawled + dt.timedelta(days=rng.randint(20, 300))
            before = crawled - dt.timedelta(days=rng.randint(0, 500))
            after = rewrite + dt.timedelta(days=rng.randint(1, 30))
            other, other_type = other_page(language, number)
            ia.capture(url, Stored(before, body, content_type=content_type))
            ia.capture(url, Stored(after, other, content_type=other_type))
            capture, archive = before.strftime("%Y-%m-%dT%H:%M:%SZ"), "ia"
            detail = f"nearest capture {'after' if abs(after - crawled) < abs(before - crawled) else 'before'}"
        elif kind == "captured redirect":
            moved = web.url(web.host(number + 3), f"/archive/{number}")
            when = crawled + dt.timedelta(days=rng.randint(-100, 100))
            ia.capture(url, Stored(when, b"", status=301, location=moved))
            ia.capture(moved, Stored(when + dt.timedelta(seconds=5), body, content_type=content_type))
            capture, archive = (when + dt.timedelta(seconds=5)).strftime("%Y-%m-%dT%H:%M:%SZ"), "ia"
        elif kind == "only in memento":
            when = crawled + dt.timedelta(days=rng.randint(-300, 300))
            memento.capture(url, Stored(when, body, content_type=content_type))
            if rng.random() < 0.5:
                ia.capture(url, Stored(crawled, soft_404(language)))
                detail += ", a soft 404 in ia"
            capture, archive = when.strftime("%Y-%m-%dT%H:%M:%SZ"), "memento"
        elif kind == "only in common crawl":
            crawl = crawls[min(2019, max(2011, crawled.year))]
            when = crawl.start + dt.timedelta(days=rng.randint(0, 10), seconds=rng.randrange(86_400))
            data = gzip.compress(body) if rng.random() < 0.5 else body
            headers = (("Content-Encoding", "gzip"),) if data is not body else ()
            cc.crawled(crawl, url, Stored(when, data, content_type=content_type, headers=headers),
                       chunked=rng.random() < 0.5)
            capture, archive = when.strftime("%Y-%m-%dT%H:%M:%SZ"), "cc"
        elif kind == "captures without it":
            how = rng.choice(["soft 404", "home page", "another text"])
            when = crawled + dt.timedelta(days=rng.randint(-100, 100))
            if how == "soft 404":
                ia.capture(url, Stored(when, soft_404(language)))
            elif how == "home page":
                home = web.url(host, "/")
                ia.capture(url, Stored(when, b"", status=302, location=home))
                other, other_type = other_page(language, number + 7)
                ia.capture(home, Stored(when, other, content_type=other_type))
            else:
                other, other_type = other_page(language, number)
                memento.capture(url, Stored(when, other, content_type=other_type))
            detail = how
        elif kind == "only after rewrite":
            rewrite = crawled + dt.timedelta(days=rng.randint(20, 300))
            other, other_type = other_page(language, number)
            ia.capture(url, Stored(rewrite + dt.timedelta(days=rng.randint(1, 200)), other, content_type=other_type))
        before_letters = letters(" ".join(flat[k - 1])) if k > 0 else ""
        after_letters = letters(" ".join(flat[k + 1])) if k + 1 < len(flat) else ""
        match = rng.randrange(len(tokens))
        row = {"position": str(number), "left": " ".join(tokens[:match]), "match": tokens[match],
               "right": " ".join(tokens[match + 1:]), "text_url": url, "text_lastmod": crawled.strftime("%Y-%m-%d")}
        cases.append(ArchivedCase(kind, detail, language, row, before_letters, after_letters, capture, archive))
    return cases


def archived_main(texts: list[Text], args: argparse.Namespace) -> None:
    web = Web()
    with LocalArchives() as ia, LocalArchives() as memento, LocalArchives() as cc:
        archives = {"ia": ia, "memento": memento, "cc": cc}
        cases = build_archived(web, archives, texts, args.lines if args.lines != 1000 else 160, args.seed)
        with tempfile.TemporaryDirectory(prefix="calf-eval-archives-") as folder:
            source = Path(folder) / "web_sentences.tsv"
            provenance = {"query": "(calf_eval --archives)", "corpus": "web", "context": "s", "rows": len(cases)}
            write_export(source, provenance, list(cases[0].row), [c.row for c in cases])
            config = Path(folder) / "archives.toml"
            config.write_text(
                f'[[archive]]\nname = "ia"\nkind = "cdx"\ncdx = "{ia.url}/ia/cdx"\nreplay = "{ia.url}/ia/web/"\n\n'
                f'[[archive]]\nname = "memento"\nkind = "memento"\ntimemap = "{memento.url}/ia/web/timemap/link/"\n\n'
                f'[[archive]]\nname = "cc"\nkind = "commoncrawl"\nindex = "{cc.url}/cc/"\ndata = "{cc.url}/data/"\n',
                encoding="utf-8")
            output = Path(folder) / "out.tsv"
            seconds, stderr, results = run_calf([str(source), "-o", str(output), "--concurrency", str(args.concurrency),
                                                 "--delay", str(args.delay), "--timeout", "10", "--archives",
                                                 str(config)], output)
        archived_report(cases, results, seconds, archives, stderr)


def archived_report(cases: list[ArchivedCase], results: list[dict[str, str]], seconds: float,
                    archives: dict[str, LocalArchives], stderr: str) -> None:
    assert len(results) == len(cases), f"{len(results)} rows written for {len(cases)} lines"
    per: dict[str, Counter[str]] = defaultdict(Counter)
    misses: list[str] = []
    for case, result in zip(cases, results, strict=True):
        counts = per[case.kind]
        status = result["calf_status"]
        counts["lines"] += 1
        counts[status] += 1
        found = status in ("found_url", "found_archive", "found_search")
        counts["found"] += found
        if case.kind not in ARCHIVED:
            if found:
                counts["false positive"] += 1
                misses.append(f"FALSE POSITIVE {case.kind} {case.detail}: {result['calf_source']} "
                              f"{result['calf_capture_url']} | page: {result['calf_page_text']}")
            continue
        right_context = letters(result["calf_left"]).endswith(case.before[-200:]) and letters(
            result["calf_right"]).startswith(case.after[:200])
        right_capture = (result["calf_source"], result["calf_capture_date"]) == (case.archive, case.capture)
        counts["right"] += found and right_context and right_capture
        if not (found and right_context and right_capture):
            misses.append(f"{case.kind} {case.detail} {case.language}: {status} {result['calf_source']} "
                          f"{result['calf_capture_date']} (wanted {case.archive} {case.capture}); context "
                          f"{'right' if right_context else 'wrong'} | {result['calf_detail'][:200]}")
    total = len(cases)
    print(f"\n{total} lines ({Counter(c.language for c in cases)['de']} German, "
          f"{Counter(c.language for c in cases)['en']} English), exported as sentences; three archives (ia: CDX, "
          f"memento: TimeMap, cc: Common Crawl) at their default rate (1 request a second, 2 at once): "
          f"{seconds:.1f} s, **{total / seconds:.2f} lines/s**\n")
    print("| what became of the page | lines | found in an archive | found live | not found | fetch error | "
          "error | found with the right context and capture | false positives |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for kind in ARCHIVE_SHARES:
        c = per[kind]
        right = f"{c['right']} ({c['right'] / c['lines']:.1%})" if kind in ARCHIVED and c["lines"] else "–"
        print(f"| {kind} | {c['lines']} | {c['found_archive']} | {c['found_url']} | {c['not_found']} | "
              f"{c['fetch_error']} | {c['error']} | {right} | {c['false positive'] if kind not in ARCHIVED else '–'} |")
    captured = sum(per[k]["lines"] for k in ARCHIVED)
    good = sum(per[k]["right"] for k in ARCHIVED)
    print(f"\nlines whose page has a capture from before its rewrite: {good} of {captured} "
          f"({good / max(1, captured):.1%}) found with the right context and capture date (target ≥ 98 %); "
          f"false positives: {sum(per[k]['false positive'] for k in per)} (target 0)")
    for name, archive in archives.items():
        times = sorted(t for t, _, _ in archive.requests)
        gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
        busiest = max((sum(1 for t in times if start <= t < start + 10) for start in times), default=0)
        minute = max((sum(1 for t in times if start <= t < start + 60) for start in times), default=0)
        print(f"- {name}: {len(times)} requests as the archive saw them arrive, the closest two "
              f"{min(gaps, default=0) * 1000:,.0f} ms apart (rate 1 a second: 1,000 ms), at most {busiest} in any "
              f"10 s and {minute} in any 60 s")
    show_misses(misses, stderr)


if __name__ == "__main__":
    main()
