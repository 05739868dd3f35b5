"""robots.txt rules of a host, from the frontier's cache (crawl.sqlite3), parsed with Protego.

A host's robots.txt is fetched once, before any page of the host, and stored with its HTTP status; a
resumed crawl reads it from the cache and never fetches it again. As Heritrix and Scrapy do: a 2xx body is
obeyed, a 4xx (none published) allows everything, a 5xx or a failed fetch disallows the whole host.
"""

from __future__ import annotations

from protego import Protego


class Rules:
    """What one host's robots.txt allows `agent` to fetch, and the crawl delay it asks for."""

    def __init__(self, status: int, body: bytes, agent: str) -> None:
        self.status = status
        self.agent = agent
        self._parser = Protego.parse(body.decode("utf-8", "replace")) if 200 <= status < 300 else None

    def allowed(self, url: str) -> bool:
        if self._parser is not None:
            return bool(self._parser.can_fetch(url, self.agent))
        return 400 <= self.status < 500

    def delay(self) -> float | None:
        """The Crawl-delay the host asks (seconds), if any: the longer of its group for `agent` and its group
        for every robot (`*`), so that a group naming the crawler without a Crawl-delay does not make it
        faster than the host asks of anyone."""
        if self._parser is None:
            return None
        values = [self._parser.crawl_delay(agent) for agent in (self.agent, "*")]
        found = [float(value) for value in values if value is not None]
        return max(found) if found else None
