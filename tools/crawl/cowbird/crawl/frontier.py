"""The crawl's frontier in SQLite (OUT/crawl.sqlite3): queued and seen URLs, hosts, IPs, robots.txt, pages.

Everything lives on disk (WAL, small transactions); only a bounded batch is ever in memory, so a frontier
of millions of URLs costs disk, not RAM. `take` hands out only URLs whose host AND IP are idle and whose
next allowed time has come (hosts sharing an IP are paced together), at most one per host and per IP at a
time, the best-placed first. A taken host is busy until `release` names the time it may be asked again
(the end of its request plus its delay), so a slow host never has two requests at once. A URL is marked
`inflight` before its request goes out; `recover` on reopening turns inflight URLs into `done` (their
response is in the WARC) or `interrupted` (never fetched again).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

SCHEMA = """
CREATE TABLE IF NOT EXISTS urls (
    url TEXT PRIMARY KEY, host TEXT NOT NULL, depth INTEGER NOT NULL, priority REAL NOT NULL,
    state TEXT NOT NULL, not_before REAL NOT NULL, source_score REAL, tries INTEGER NOT NULL DEFAULT 0,
    reason TEXT, seq INTEGER NOT NULL, hops INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS urls_next ON urls (host, state, priority DESC, seq);
CREATE INDEX IF NOT EXISTS urls_state ON urls (state);
CREATE TABLE IF NOT EXISTS hosts (
    host TEXT PRIMARY KEY, ip TEXT, next_time REAL NOT NULL DEFAULT 0, fetched INTEGER NOT NULL DEFAULT 0,
    good INTEGER NOT NULL DEFAULT 0, dropped INTEGER NOT NULL DEFAULT 0, queued INTEGER NOT NULL DEFAULT 0,
    busy INTEGER NOT NULL DEFAULT 0, reason TEXT
);
CREATE INDEX IF NOT EXISTS hosts_ready ON hosts (next_time) WHERE queued > 0 AND busy = 0 AND dropped = 0;
CREATE TABLE IF NOT EXISTS ips (ip TEXT PRIMARY KEY, next_time REAL NOT NULL DEFAULT 0,
                                busy INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS robots (host TEXT PRIMARY KEY, body BLOB, status INTEGER, fetched_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS pages (
    seq INTEGER PRIMARY KEY, url TEXT NOT NULL, host TEXT NOT NULL, status INTEGER NOT NULL,
    bytes INTEGER NOT NULL, good INTEGER NOT NULL, language TEXT, outcome TEXT NOT NULL, at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""

STATES = ("queued", "inflight", "done", "dropped", "failed", "interrupted")


@dataclass(frozen=True)
class Entry:
    """A URL handed out to be fetched."""

    url: str
    host: str
    ip: str
    depth: int
    priority: float
    tries: int
    hops: int = 0  # redirects followed to reach it


class Frontier:
    """The frontier of one crawl, in `path` (created when missing, reopened as it was otherwise).

    `delay` is the default wait after a request before its host is asked again, `ip_delay` the same for
    an IP (hosts on one IP); `release`'s `host_delay` gives one host a longer one (its Crawl-delay). With
    `host_yield` (the focused crawl), ready hosts are ranked by their best URL's priority plus what the host
    has given so far, (good + 1) / (fetched + 2), as it stands when the URL is handed out."""

    def __init__(self, path: Path, delay: float = 1.0, ip_delay: float | None = None,
                 host_yield: bool = False) -> None:
        self.path = path
        self.host_yield = host_yield
        self.delay = delay
        self.ip_delay = delay if ip_delay is None else ip_delay
        self.db = sqlite3.connect(str(path), isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(SCHEMA)
        row = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM urls").fetchone()
        self._seq = int(row[0])

    def close(self) -> None:
        self.db.close()

    # adding ------------------------------------------------------------------------------------------
    def add(self, url: str, host: str, depth: int, priority: float, source_score: float | None = None,
            ip: str | None = None, hops: int = 0) -> bool:
        """Queue `url` unless it was seen before (in any state); True when it is new."""
        if ip is not None:
            self.set_ip(host, ip)
        return self.add_many([(url, host, depth, priority, source_score)], hops=hops) == 1

    def add_many(self, rows: Iterable[tuple[str, str, int, float, float | None]], hops: int = 0) -> int:
        """Queue many URLs in one transaction; returns how many were new. URLs of dropped hosts are
        recorded as dropped (seen, never fetched)."""
        added = 0
        with self.db:
            self.db.execute("BEGIN")
            for url, host, depth, priority, score in rows:
                self.db.execute("INSERT OR IGNORE INTO hosts (host) VALUES (?)", (host,))
                dropped, reason = self.db.execute("SELECT dropped, reason FROM hosts WHERE host = ?",
                                                  (host,)).fetchone()
                self._seq += 1
                cursor = self.db.execute(
                    "INSERT OR IGNORE INTO urls (url, host, depth, priority, state, not_before, source_score, "
                    "reason, seq, hops) VALUES (?, ?, ?, ?, ?, 0, ?, ?, ?, ?)",
                    (url, host, depth, priority, "dropped" if dropped else "queued", score,
                     reason if dropped else None, self._seq, hops))
                if cursor.rowcount and not dropped:
                    self.db.execute("UPDATE hosts SET queued = queued + 1 WHERE host = ?", (host,))
                added += cursor.rowcount
        return added

    def set_ip(self, host: str, ip: str) -> None:
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO hosts (host) VALUES (?)", (host,))
            self.db.execute("UPDATE hosts SET ip = ? WHERE host = ?", (ip, host))
            self.db.execute("INSERT OR IGNORE INTO ips (ip) VALUES (?)", (ip,))

    def unresolved(self, limit: int) -> list[str]:
        """Hosts with queued URLs whose IP address is not known yet (to be looked up before `take`)."""
        return [str(row[0]) for row in self.db.execute(
            "SELECT host FROM hosts WHERE ip IS NULL AND queued > 0 AND dropped = 0 LIMIT ?", (limit,))]

    # handing out -------------------------------------------------------------------------------------
    def take(self, limit: int, now: float | None = None, scan: int = 500) -> list[Entry]:
        """Up to `limit` queued URLs whose host and IP are idle and may be asked at `now`, one per host
        and per IP, highest priority first; each is marked inflight and its host and IP busy until
        `release`. At most `scan` ready hosts (those waiting longest) are looked at per call."""
        now = time.time() if now is None else now
        candidates: list[tuple[float, int, str, str, str, int, int, int, float]] = []
        with self.db:
            self.db.execute("BEGIN IMMEDIATE")
            hosts = self.db.execute(
                "SELECT h.host, h.ip, h.fetched, h.good FROM hosts h INDEXED BY hosts_ready JOIN ips i ON i.ip = h.ip "
                "WHERE h.queued > 0 AND h.busy = 0 AND h.dropped = 0 AND h.next_time <= ? "
                "AND i.busy = 0 AND i.next_time <= ? ORDER BY h.next_time LIMIT ?", (now, now, scan)).fetchall()
            for host, ip, fetched, good in hosts:
                row = self.db.execute(
                    "SELECT url, depth, priority, tries, hops, seq FROM urls WHERE host = ? AND state = 'queued' "
                    "AND not_before <= ? ORDER BY priority DESC, seq LIMIT 1", (host, now)).fetchone()
                if row is not None:
                    url, depth, priority, tries, hops, seq = row
                    rank = priority + ((good + 1) / (fetched + 2) if self.host_yield else 0.0)
                    candidates.append((-rank, seq, url, host, ip, depth, tries, hops, priority))
            candidates.sort()
            taken: list[Entry] = []
            ips: set[str] = set()
            for _, _, url, host, ip, depth, tries, hops, priority in candidates:
                if len(taken) >= limit:
                    break
                if ip in ips:
                    continue
                ips.add(ip)
                self.db.execute("UPDATE hosts SET busy = 1, queued = queued - 1 WHERE host = ?", (host,))
                self.db.execute("UPDATE ips SET busy = 1 WHERE ip = ?", (ip,))
                self.db.execute("UPDATE urls SET state = 'inflight', tries = tries + 1 WHERE url = ?", (url,))
                taken.append(Entry(url, host, ip, depth, priority, tries + 1, hops))
        return taken

    def release(self, entry: Entry, ended: float | None, host_delay: float | None = None) -> None:
        """The request for `entry` is over: its host is asked again no earlier than `ended` plus its delay
        (`host_delay`, else the crawl's), its IP no earlier than `ended` plus the IP delay. `ended` None: no
        request went out, the host's and IP's times stay as they were."""
        with self.db:
            if ended is None:
                self.db.execute("UPDATE hosts SET busy = 0 WHERE host = ?", (entry.host,))
                self.db.execute("UPDATE ips SET busy = 0 WHERE ip = ?", (entry.ip,))
                return
            delay = self.delay if host_delay is None else max(self.delay, host_delay)
            self.db.execute("UPDATE hosts SET busy = 0, next_time = ? WHERE host = ?", (ended + delay, entry.host))
            self.db.execute("UPDATE ips SET busy = 0, next_time = MAX(next_time, ?) WHERE ip = ?",
                            (ended + self.ip_delay, entry.ip))

    def requeue(self, entry: Entry) -> None:
        """Put a taken URL back as it was (its request did not go out: its host's robots.txt went first)."""
        with self.db:
            self.db.execute("UPDATE urls SET state = 'queued', tries = tries - 1 WHERE url = ?", (entry.url,))
            self.db.execute("UPDATE hosts SET queued = queued + 1 WHERE host = ?", (entry.host,))

    def waiting(self, now: float | None = None) -> float | None:
        """Seconds until some queued URL may be taken (0: now), None when nothing is queued."""
        now = time.time() if now is None else now
        row = self.db.execute(
            "SELECT MIN(MAX(h.next_time, COALESCE(i.next_time, 0))) FROM hosts h LEFT JOIN ips i ON i.ip = h.ip "
            "WHERE h.queued > 0 AND h.dropped = 0").fetchone()
        return None if row[0] is None else max(0.0, float(row[0]) - now)

    # outcomes ----------------------------------------------------------------------------------------
    def retry(self, url: str, at: float, max_tries: int, reason: str) -> bool:
        """Queue `url` again no earlier than `at` unless it has had `max_tries` tries (then it failed)."""
        with self.db:
            row = self.db.execute("SELECT tries, host FROM urls WHERE url = ?", (url,)).fetchone()
            if row is None:
                return False
            if row[0] >= max_tries:
                self.db.execute("UPDATE urls SET state = 'failed', reason = ? WHERE url = ?", (reason, url))
                return False
            self.db.execute("UPDATE urls SET state = 'queued', not_before = ?, reason = ? WHERE url = ?",
                            (at, reason, url))
            self.db.execute("UPDATE hosts SET queued = queued + 1 WHERE host = ?", (row[1],))
            return True

    def drop(self, url: str, reason: str) -> None:
        """A taken URL is not fetched (robots.txt, its MIME type, ...)."""
        with self.db:
            self.db.execute("UPDATE urls SET state = 'dropped', reason = ? WHERE url = ?", (reason, url))

    def drop_host(self, host: str, reason: str) -> int:
        """Drop a host and its queued URLs; returns how many URLs were dropped."""
        with self.db:
            self.db.execute("INSERT OR IGNORE INTO hosts (host) VALUES (?)", (host,))
            self.db.execute("UPDATE hosts SET dropped = 1, queued = 0, reason = ? WHERE host = ?", (reason, host))
            cursor = self.db.execute("UPDATE urls SET state = 'dropped', reason = ? WHERE host = ? "
                                     "AND state = 'queued'", (reason, host))
            return cursor.rowcount

    def host_good(self, host: str) -> tuple[int, int]:
        """(pages fetched, good documents) of a host so far."""
        row = self.db.execute("SELECT fetched, good FROM hosts WHERE host = ?", (host,)).fetchone()
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def recover(self, fetched: dict[str, tuple[int, int]]) -> int:
        """After a stop or a kill: inflight URLs whose response is in the WARC (`fetched`: URI -> (status,
        bytes)) are done and counted as pages (not scored: the kill came first), the others are marked
        interrupted and never fetched again; every host and IP is idle again (one busy at the kill after its
        delay from now). Returns how many URLs were interrupted."""
        interrupted = 0
        with self.db:
            rows = self.db.execute("SELECT url, host FROM urls WHERE state = 'inflight'").fetchall()
            for url, host in rows:
                if url in fetched:
                    status, size = fetched[url]
                    self.db.execute("UPDATE urls SET state = 'done' WHERE url = ?", (url,))
                    self.db.execute("UPDATE hosts SET fetched = fetched + 1 WHERE host = ?", (host,))
                    self.db.execute("INSERT INTO pages (url, host, status, bytes, good, language, outcome, at) "
                                    "VALUES (?, ?, ?, ?, 0, NULL, 'written before a kill, not scored', ?)",
                                    (url, host, status, size, time.time()))
                else:
                    self.db.execute("UPDATE urls SET state = 'interrupted', reason = 'the crawl stopped while "
                                    "it was being fetched' WHERE url = ?", (url,))
                    interrupted += 1
            # a host (an IP) busy at the kill may have answered just now: it waits its delay from now
            now = time.time()
            self.db.execute("UPDATE hosts SET busy = 0, next_time = MAX(next_time, ?) WHERE busy != 0",
                            (now + self.delay,))
            self.db.execute("UPDATE ips SET busy = 0, next_time = MAX(next_time, ?) WHERE busy != 0",
                            (now + self.ip_delay,))
        return interrupted

    # pages fetched -----------------------------------------------------------------------------------
    def record_page(self, url: str, host: str, status: int, size: int, good: bool, language: str | None,
                    outcome: str, at: float) -> None:
        """A page fetched (its response is in the WARC): the URL done, its host's counts and the page's row,
        in one transaction."""
        with self.db:
            self.db.execute("UPDATE urls SET state = 'done' WHERE url = ?", (url,))
            self.db.execute("UPDATE hosts SET fetched = fetched + 1, good = good + ? WHERE host = ?",
                            (1 if good else 0, host))
            self.db.execute("INSERT INTO pages (url, host, status, bytes, good, language, outcome, at) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", (url, host, status, size, int(good), language,
                                                                outcome, at))

    def totals(self) -> tuple[int, int, int]:
        """(pages fetched, bytes fetched, good documents) over the whole crawl, every run of it."""
        row = self.db.execute("SELECT COUNT(*), COALESCE(SUM(bytes), 0), COALESCE(SUM(good), 0) FROM pages"
                              ).fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    # robots.txt cache --------------------------------------------------------------------------------
    def robots(self, host: str) -> tuple[int, bytes] | None:
        row = self.db.execute("SELECT status, body FROM robots WHERE host = ?", (host,)).fetchone()
        return None if row is None else (int(row[0]), bytes(row[1] or b""))

    def set_robots(self, host: str, status: int, body: bytes, at: float | None = None) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO robots (host, body, status, fetched_at) VALUES (?, ?, ?, ?)",
                            (host, body, status, time.time() if at is None else at))

    # meta ----------------------------------------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self.db:
            self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    # counts ------------------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        result = dict.fromkeys(STATES, 0)
        for state, count in self.db.execute("SELECT state, COUNT(*) FROM urls GROUP BY state"):
            result[str(state)] = int(count)
        return result

    def hosts(self) -> int:
        return int(self.db.execute("SELECT COUNT(*) FROM hosts").fetchone()[0])
