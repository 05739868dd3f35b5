"""Reconstructing lines: fetch the line's page, extract its text, find the sentence; if the page
is gone or the sentence is not on it, ask the search engine and try its results the same way."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Literal

import httpx
import trafilatura

from tools.calf.fetching import Fetcher, FetchError
from tools.calf.matching import Found, locate
from tools.calf.search import SearchProvider

Status = Literal["found_url", "found_search", "not_found", "fetch_error", "bad_row"]
STATUSES: tuple[Status, ...] = ("found_url", "found_search", "not_found", "fetch_error", "bad_row")


@dataclass(frozen=True)
class Outcome:
    status: Status
    score: float | None = None
    source_url: str = ""
    left: str = ""
    right: str = ""
    detail: str = ""  # why not (fetch error, bad row)

    def columns(self) -> list[str]:
        score = "" if self.score is None else f"{self.score:.1f}"
        return [self.status, score, self.source_url, self.left, self.right]


OUTPUT_COLUMNS = ["calf_status", "calf_score", "calf_source_url", "calf_left", "calf_right"]


def page_text(html: str) -> str:
    """The page's main text (trafilatura, recall first), else all of its text."""
    text = trafilatura.extract(html, favor_recall=True, include_comments=True, include_tables=True,
                               deduplicate=False)
    if not text:
        text = trafilatura.html2txt(html) or ""
    return text


@dataclass
class Reconstructor:
    fetcher: Fetcher
    search: SearchProvider | None = None
    search_client: httpx.AsyncClient | None = None
    min_score: float = 90.0
    context_chars: int = 500

    async def _try(self, url: str, sentence: str) -> tuple[Found | None, str | None, str]:
        """(what was found, the fetch error if any, the final URL)."""
        try:
            page = await self.fetcher.get(url)
        except FetchError as error:
            return None, str(error), url
        text = await asyncio.to_thread(page_text, page.html)
        found = await asyncio.to_thread(locate, sentence, text, self.context_chars)
        return found, None, page.url

    async def line(self, url: str, sentence: str) -> Outcome:
        found, error, final = await self._try(url, sentence) if url else (None, "no URL", url)
        if found is not None and found.score >= self.min_score:
            return Outcome("found_url", round(found.score, 1), final, found.left, found.right)
        best = found
        if self.search is not None and self.search_client is not None:
            for candidate in await self.search.candidates(sentence, self.search_client):
                if candidate == url:
                    continue
                other, _, other_final = await self._try(candidate, sentence)
                if other is not None and other.score >= self.min_score:
                    return Outcome("found_search", round(other.score, 1), other_final, other.left, other.right)
                if other is not None and (best is None or other.score > best.score):
                    best = other
        if error is not None and best is None:
            return Outcome("fetch_error", None, url, detail=error)
        return Outcome("not_found", None if best is None else round(best.score, 1), final if error is None else url,
                       detail=error or "")
