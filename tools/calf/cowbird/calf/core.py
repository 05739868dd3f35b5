"""Reconstructing lines: fetch the line's page, read its text, find the line; if the page is gone or
the line is not on it, ask the search engine and try its results the same way.

A line is whatever the export holds: its whole text (left context, match, right context — a
sentence with ``context=s``, or so many tokens each side), else, when the tokens each side reach
into sentences the page does not have next to it (a COW corpus shuffles sentences; a context may
run into the next text), the match's own sentence cut out of it.

A line is ``found_*`` only with its hit (the match) on the page; its sentence there with other
words where the hit was is ``changed_*`` (the page, an archive's capture, a search result), and
the archives and the search engine are still asked for a page that has the hit itself.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal

import httpx

from cowbird.calf.archives import Archive, ArchiveError, Capture
from cowbird.calf.fetching import Fetcher, FetchError, Page
from cowbird.calf.matching import SENTENCE_END, Found, Line, PageLetters, locate
from cowbird.calf.pages import page_text
from cowbird.calf.search import SearchProvider
from cowbird.core.lru import Lru

Status = Literal["found_url", "found_archive", "found_search", "changed_url", "changed_archive", "changed_search",
                 "not_found", "fetch_error", "bad_row", "error"]
STATUSES: tuple[Status, ...] = ("found_url", "found_archive", "found_search", "changed_url", "changed_archive",
                                "changed_search", "not_found", "fetch_error", "bad_row", "error")
FOUND: tuple[Status, ...] = ("found_url", "found_archive", "found_search")
"""A line on a page with its hit."""
CHANGED: tuple[Status, ...] = ("changed_url", "changed_archive", "changed_search")
"""A line's sentence on a page with other words where its hit was: not found."""
PAGES_KEPT = 64
"""Pages kept read (their text folded) for the next lines from the same page."""
_SENTENCE_END = SENTENCE_END
_BRACKET_END = re.compile(r"^(?:[.!?…]+|[.!?…]*[\"'”’»]*[)\]]+)$")


@dataclass(frozen=True)
class Outcome:
    status: Status
    score: float | None = None
    source_url: str = ""
    left: str = ""
    right: str = ""
    detail: str = ""  # why not found (the fetch error, the best place's difference), or how found
    page_text: str = ""  # the line as the page has it
    source: str = ""  # where the context comes from: live, search, or the archive's name
    capture_date: str = ""  # an archive's capture: when it was made (ISO 8601, UTC)
    capture_url: str = ""  # and the URL that returns it

    def columns(self) -> list[str]:
        score = "" if self.score is None else f"{self.score:.1f}"
        return [self.status, score, self.source_url, self.left, self.right, self.page_text, self.detail,
                self.source, self.capture_date, self.capture_url]


OUTPUT_COLUMNS = ["calf_status", "calf_score", "calf_source_url", "calf_left", "calf_right", "calf_page_text",
                  "calf_detail", "calf_source", "calf_capture_date", "calf_capture_url"]


def core_of(left: str, match: str) -> tuple[int, int]:
    """The match's tokens in the whole line (``texts_of``'s first text)."""
    before = len(left.split())
    return before, before + max(1, len(match.split()))


def texts_of(left: str, match: str, right: str) -> list[str]:
    """What to look for, in order: the whole line; then, if its context runs beyond the match's
    sentence, that sentence alone (cut at the tokens that end sentences); then, if a bracket closes
    before the match (an interjection "( Beifall bei der SPD )" before the sentence), the sentence
    from there."""
    whole = " ".join(part for part in (left, match, right) if part.strip())
    texts = [whole]
    for ending in (_SENTENCE_END, _BRACKET_END):
        before, after = left.split(), right.split()
        ends = [k for k, token in enumerate(before) if ending.match(token)]
        start = ends[-1] + 1 if ends else 0
        stop = next((k + 1 for k, token in enumerate(after) if _SENTENCE_END.match(token)), len(after))
        sentence = " ".join([*before[start:], *match.split(), *after[:stop]])
        if sentence not in texts and len(sentence.split()) >= 4:
            texts.append(sentence)
    return texts


@dataclass
class Reconstructor:
    fetcher: Fetcher
    search: SearchProvider | None = None
    search_client: httpx.AsyncClient | None = None
    min_score: float = 90.0
    context_chars: int = 500
    archives: Sequence[Archive] = ()  # asked in order when the live page fails (``cowbird.calf.archives``)
    window: dt.timedelta = dt.timedelta(days=1095)  # captures this far from the text's date
    prefer_archive: bool = False  # a line found changed on the live page is also looked up in the archives
    live: bool = True  # fetch the line's own page; False: only the archives (the demo's made-up sites)

    def __post_init__(self) -> None:
        self._pages: Lru[tuple[str, int], PageLetters] = Lru(PAGES_KEPT)  # pages read, by URL and length

    async def _read(self, page: Page) -> PageLetters:
        """The page's text, folded for matching: once for all the lines of one page."""
        key = (page.url, len(page.html))
        kept = self._pages.get(key)
        if kept is not None:
            return kept
        letters = await asyncio.to_thread(lambda: PageLetters.of(page_text(page.html)))
        self._pages.put(key, letters)
        return letters

    async def _try(self, url: str, lines: Sequence[Line]) -> tuple[Found | None, str | None, str]:
        """(the best place found, the fetch error if any, the final URL)."""
        try:
            page = await self.fetcher.get(url)
        except FetchError as error:
            return None, str(error), url
        return await self._locate(page, lines), None, page.url

    async def _archived(self, url: str, lines: Sequence[Line],
                        when: dt.datetime | None) -> tuple[Found | None, Capture | None, list[str]]:
        """The line in the archives' captures of ``url``, after the text's date first, archive after
        archive: (the place found, else the first capture with the line's sentence changed at its
        hit, else the best near miss; its capture; what each archive said)."""
        best: tuple[Found, Capture] | None = None
        notes: list[str] = []
        for archive in self.archives:
            try:
                captures = await archive.captures(url, when, self.window)
            except ArchiveError as error:
                notes.append(str(error))
                continue
            if not captures:
                notes.append(f"{archive.name}: no capture" + (f" within {self.window.days:,} days of "
                                                               f"{when:%Y-%m-%d}" if when else ""))
                continue
            tried: list[str] = []
            for capture in captures:
                try:
                    page, read = await archive.page(capture)  # (a captured redirect: its target's capture)
                except ArchiveError as error:
                    tried.append(f"{capture.date[:10] or 'undated'} ({str(error).removeprefix(archive.name + ': ')})")
                    continue
                found = await self._locate(page, lines)
                if found is not None and found.found(self.min_score):
                    return found, read, notes
                if found is not None and (best is None or _better(found, best[0], self.min_score)):
                    best = (found, read)
                tried.append(capture.date[:10] or "undated")
            bad = archive.unreadable_in.get(url, 0)
            skipped = f"; {bad} unreadable CDX row{'s' if bad != 1 else ''} skipped" if bad else ""
            notes.append(f"{archive.name}: not in {len(tried)} capture{'s' if len(tried) != 1 else ''} "
                         f"({', '.join(tried)}){skipped}")
        return (best[0], best[1], notes) if best else (None, None, notes)

    async def _locate(self, page: Page, lines: Sequence[Line]) -> Found | None:
        """The best place of the lines on the page: a whole text found first, else a run of the
        line's words around the match, else its sentence changed at the hit, else the nearest miss."""
        letters = await self._read(page)
        best: Found | None = None
        run: Found | None = None  # the match with words around it: taken when no text is found whole
        for line in lines:
            found = await asyncio.to_thread(locate, line, letters, self.context_chars)
            if found is not None and found.found(self.min_score):
                if not found.partial:
                    return found
                run = run or found
            elif found is not None and (best is None or _better(found, best, self.min_score)):
                best = found
        return run or best

    async def line(self, url: str, *texts: str, core: tuple[int, int] | None = None, runs: bool = False,
                   when: dt.datetime | None = None) -> Outcome:
        """Look for the line (its ``texts``, in order: the whole line, then its sentence) on its page,
        then in the archives' captures of it (nearest ``when``, the text's crawl date, first), then
        through the search engine. ``core``: the match's tokens in the whole line (a line found
        with a word changed must have them intact); ``runs``: the line's context may come from
        elsewhere (tokens of context from a corpus that shuffles its sentences), so a run of the
        line's words around the match also finds it."""
        lines = [Line.of(texts[0], core, runs)] + [Line.of(text) for text in texts[1:]]
        if core is not None:  # the match's tokens in the shorter texts (a text without the match is no line)
            lines[1:] = [Line.of(text, part) for text in texts[1:]
                         if (part := _core_in(texts[0], text, core)) is not None]
        lines = [line for line in lines if line.letters]
        if not lines:
            return Outcome("bad_row", detail="no letters or digits to look for")
        found, error, final = (await self._try(url, lines) if url and self.live
                               else (None, "no URL" if not url else "the page itself is not fetched", url))
        if found is not None and found.found(self.min_score):
            if self.prefer_archive and self.archives and (found.changed or found.partial):
                kept, capture, _ = await self._archived(url, lines, when)
                if kept is not None and capture is not None and kept.found(self.min_score) \
                        and (kept.changed, kept.partial) < (found.changed, found.partial):
                    return _archived("found_archive", kept, url, capture)
            return _found("found_url", found, final, "live")
        best = found
        # the sentence with another word at the hit: reported only when no page has the hit itself
        changed: Outcome | None = None
        if found is not None and found.changed_hit(self.min_score):
            changed = _found("changed_url", found, final, "live")
        archived = ""
        if self.archives and url:
            kept, capture, notes = await self._archived(url, lines, when)
            if kept is not None and capture is not None and kept.found(self.min_score):
                return _archived("found_archive", kept, url, capture)
            if changed is None and kept is not None and capture is not None and kept.changed_hit(self.min_score):
                changed = _archived("changed_archive", kept, url, capture)
            if kept is not None and (best is None or _better(kept, best, self.min_score)):
                best = kept
            archived = "; " + "; ".join(notes) if notes else ""
        searched = archived
        if self.search is not None and self.search_client is not None:
            candidates = [c for c in await self.search.candidates(_phrase(texts, core), self.search_client)
                          if c != url]
            searched += f"; the search engine gave {len(candidates)} other page{'s' if len(candidates) != 1 else ''}"
            for candidate in candidates:
                other, _, other_final = await self._try(candidate, lines)
                if other is not None and other.found(self.min_score):
                    return _found("found_search", other, other_final, "search")
                if changed is None and other is not None and other.changed_hit(self.min_score):
                    changed = _found("changed_search", other, other_final, "search")
                if other is not None and (best is None or _better(other, best, self.min_score)):
                    best = other
        if changed is not None:
            failed = f"; {error}" if error is not None and changed.status != "changed_url" else ""
            return replace(changed, detail=f"{changed.detail}{failed}{searched}")
        if error is not None and (best is None or not best.found(self.min_score)):
            if best is None:
                return Outcome("fetch_error", None, url, detail=f"{error}{searched}")
            return Outcome("not_found", best.score, url, detail=f"{error}{searched}; nearest elsewhere: "
                                                                f"{best.detail()}")
        if found is None and best is None:
            return Outcome("not_found", None, final, detail=f"nothing like the line on the page{searched}")
        assert best is not None
        return Outcome("not_found", best.score, final,
                       detail=f"not on the page (nearest place: {best.detail()}){searched}")


def _core_in(whole: str, part: str, core: tuple[int, int]) -> tuple[int, int] | None:
    """The match's tokens in ``part``, a stretch of ``whole`` (the sentence cut out of the line); None
    when the part lacks the match — or, a match without letters (")" "."), the word before it, to
    which it belongs."""
    tokens, cut = whole.split(), part.split()
    bare = not any(c.isalnum() for token in tokens[core[0]:core[1]] for c in token)
    for offset in range(len(tokens) - len(cut) + 1):
        if tokens[offset:offset + len(cut)] == cut:
            first, last = core[0] - offset, core[1] - offset
            return (first, last) if (1 if bare else 0) <= first < len(cut) else None
    return None


def _phrase(texts: Sequence[str], core: tuple[int, int] | None) -> str:
    """What to ask the search engine: the match's sentence cut out of the line; a line whose context
    may come from elsewhere and that has no sentence end to cut at, the match with four tokens each
    side (a phrase less likely to run into other text); else the line."""
    if len(texts) > 1 or core is None:
        return texts[-1]
    tokens = texts[0].split()
    return " ".join(tokens[max(0, core[0] - 4):core[1] + 4])


def _better(one: Found, other: Found, min_score: float) -> bool:
    """Whether ``one`` is a nearer miss than ``other``: the line's sentence changed at its hit first,
    then fewer words changed, then the higher score."""
    def rank(found: Found) -> tuple[bool, float, float]:
        return not found.changed_hit(min_score), found.changed / max(1, found.words), -found.score
    return rank(one) < rank(other)


def _found(status: Status, found: Found, url: str, source: str) -> Outcome:
    return Outcome(status, found.score, url, found.left, found.right, found.detail(), found.matched, source)


def _archived(status: Status, found: Found, url: str, capture: Capture) -> Outcome:
    return Outcome(status, found.score, url, found.left, found.right, found.detail(), found.matched,
                   capture.archive, capture.date, capture.url)
