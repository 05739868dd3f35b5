"""Search engines that Calf asks when a page is gone or no longer holds the sentence.

A provider takes the sentence and gives candidate URLs, best first. The first is a
SearXNG-compatible JSON API (``GET {url}?q=...&format=json`` answering ``{"results": [{"url": ...}]}``),
configured by URL; a provider is a small class, so others can be added.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import httpx

from cowbird.calf.fetching import USER_AGENT


class SearchProvider(Protocol):
    async def candidates(self, sentence: str, client: httpx.AsyncClient) -> list[str]: ...


@dataclass(frozen=True)
class SearxngSearch:
    url: str
    results: int = 3
    words: int = 20  # engines take a phrase of limited length

    async def candidates(self, sentence: str, client: httpx.AsyncClient) -> list[str]:
        phrase = " ".join(sentence.split()[: self.words])
        try:
            response = await client.get(self.url, params={"q": f'"{phrase}"', "format": "json"},
                                        headers={"User-Agent": USER_AGENT})
            response.raise_for_status()
            body = response.json()
        except (httpx.HTTPError, ValueError):
            return []
        found = body.get("results", []) if isinstance(body, dict) else []
        urls = [r["url"] for r in found if isinstance(r, dict) and isinstance(r.get("url"), str)]
        return urls[: self.results]


PROVIDERS = {"searxng": SearxngSearch}
