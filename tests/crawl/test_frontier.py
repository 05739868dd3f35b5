"""The crawl's SQLite frontier and its URL rules: order, pacing per host and IP, persistence, traps."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cowbird.crawl.frontier import Frontier
from cowbird.crawl.urls import host_of, normalise, trap


def test_priority_order_one_per_host_and_the_delay_after_each_request(tmp_path: Path) -> None:
    frontier = Frontier(tmp_path / "crawl.sqlite3", delay=1.0)
    frontier.set_ip("127.0.0.1:8081", "127.0.0.1")
    frontier.set_ip("127.0.0.2:8081", "127.0.0.2")
    frontier.add("http://127.0.0.1:8081/low", "127.0.0.1:8081", 0, 1.0)
    frontier.add("http://127.0.0.1:8081/high", "127.0.0.1:8081", 0, 5.0)
    frontier.add("http://127.0.0.2:8081/mid", "127.0.0.2:8081", 0, 3.0)
    frontier.add("http://127.0.0.9:8081/unresolved", "127.0.0.9:8081", 0, 9.0)
    assert frontier.unresolved(10) == ["127.0.0.9:8081"]  # never handed out before its address is known
    taken = frontier.take(10, now=100.0)
    assert [entry.url for entry in taken] == ["http://127.0.0.1:8081/high", "http://127.0.0.2:8081/mid"]
    assert frontier.take(10, now=500.0) == []  # both hosts busy until their requests are released
    frontier.release(taken[0], ended=102.0)  # a slow answer: the delay counts from its end
    frontier.release(taken[1], ended=None)  # no request went out: its times stay as they were
    assert frontier.take(10, now=102.5) == []
    assert [entry.url for entry in frontier.take(10, now=103.0)] == ["http://127.0.0.1:8081/low"]


def test_hosts_sharing_an_ip_are_paced_together_and_a_crawl_delay_counts(tmp_path: Path) -> None:
    frontier = Frontier(tmp_path / "crawl.sqlite3", delay=1.0, ip_delay=2.0)
    for port in (8081, 8082):
        frontier.set_ip(f"127.3.4.5:{port}", "127.3.4.5")
        frontier.add(f"http://127.3.4.5:{port}/", f"127.3.4.5:{port}", 0, 1.0)
        frontier.add(f"http://127.3.4.5:{port}/more", f"127.3.4.5:{port}", 0, 0.5)
    [first] = frontier.take(10, now=10.0)
    frontier.release(first, ended=10.0, host_delay=5.0)  # its robots.txt asks for Crawl-delay: 5
    assert frontier.take(10, now=11.5) == []  # the other host waits for the IP's delay
    [second] = frontier.take(10, now=12.0)
    assert second.host != first.host
    frontier.release(second, ended=12.0)
    assert [e.host for e in frontier.take(10, now=14.0)] == [second.host]  # the first waits its 5 s
    assert frontier.waiting(now=14.0) is not None


def test_seen_urls_are_not_queued_twice_and_state_survives_reopening(tmp_path: Path) -> None:
    path = tmp_path / "crawl.sqlite3"
    frontier = Frontier(path)
    frontier.set_ip("127.0.0.1", "127.0.0.1")
    assert frontier.add("http://127.0.0.1/a", "127.0.0.1", 0, 1.0)
    assert not frontier.add("http://127.0.0.1/a", "127.0.0.1", 0, 9.0)
    frontier.add("http://127.0.0.1/b", "127.0.0.1", 0, 0.5)
    [entry] = frontier.take(1, now=0.0)
    frontier.set_robots("127.0.0.1", 200, b"User-agent: *\nDisallow: /x\n")
    frontier.close()  # killed with the request under way
    reopened = Frontier(path)
    before = time.time()
    assert reopened.recover(fetched={}) == 1  # the inflight URL is interrupted, never fetched again
    assert reopened.take(5, now=before + 0.5) == []  # its host may have answered just before the kill: it waits
    assert reopened.counts()["interrupted"] == 1 and reopened.counts()["queued"] == 1
    assert reopened.robots("127.0.0.1") == (200, b"User-agent: *\nDisallow: /x\n")
    assert [e.url for e in reopened.take(5, now=time.time() + 5)] == ["http://127.0.0.1/b"]
    assert not reopened.add(entry.url, entry.host, 0, 1.0)


def test_retries_then_failure_and_host_drop(tmp_path: Path) -> None:
    frontier = Frontier(tmp_path / "crawl.sqlite3", delay=0.0)
    frontier.set_ip("127.0.0.1", "127.0.0.1")
    frontier.add("http://127.0.0.1/x", "127.0.0.1", 0, 1.0)
    frontier.add("http://127.0.0.1/y", "127.0.0.1", 0, 0.1)
    [entry] = frontier.take(1, now=0.0)
    frontier.release(entry, ended=0.0)
    assert frontier.retry(entry.url, at=50.0, max_tries=2, reason="503")
    [other] = frontier.take(1, now=10.0)
    assert other.url == "http://127.0.0.1/y"  # x waits for its backoff
    frontier.release(other, ended=10.0)
    frontier.record_page(other.url, other.host, 200, 1000, True, "de", "good", 10.0)
    [again] = frontier.take(1, now=50.0)
    assert again.url == entry.url and again.tries == 2
    frontier.release(again, ended=50.0)
    assert not frontier.retry(entry.url, at=60.0, max_tries=2, reason="503")
    assert frontier.counts()["failed"] == 1 and frontier.host_good("127.0.0.1") == (1, 1)
    frontier.add("http://127.0.0.1/z", "127.0.0.1", 1, 1.0)
    assert frontier.drop_host("127.0.0.1", "host at its good-document limit") == 1
    assert not frontier.add("http://127.0.0.1/z", "127.0.0.1", 1, 1.0)
    frontier.add("http://127.0.0.1/new", "127.0.0.1", 1, 1.0)
    assert frontier.counts()["dropped"] == 2 and frontier.take(5, now=100.0) == []
    assert frontier.waiting(now=100.0) is None  # nothing left to hand out


@pytest.mark.slow
def test_100k_urls_quickly(tmp_path: Path) -> None:
    frontier = Frontier(tmp_path / "crawl.sqlite3", delay=1.0)
    rows = [(f"http://127.0.{i % 200}.1/p{i}", f"127.0.{i % 200}.1", 1, float(i % 7), None) for i in range(100_000)]
    for i in range(200):
        frontier.set_ip(f"127.0.{i}.1", f"127.0.{i}.1")
    start = time.monotonic()
    assert frontier.add_many(rows) == 100_000
    taken = frontier.take(16, now=time.time())
    assert len(taken) == 16 and len({entry.host for entry in taken}) == 16
    assert all(entry.priority == 6.0 for entry in taken)
    assert time.monotonic() - start < 30  # generous: a sanity bound, the figure goes to bench/


def test_normalisation_and_traps() -> None:
    assert normalise("HTTP://127.1.2.3:8081/a/b;jsessionid=9?b=2&sid=x&a=1#top") == "http://127.1.2.3:8081/a/b?a=1&b=2"
    assert normalise("../c", base="http://127.1.2.3:8081/a/b") == "http://127.1.2.3:8081/c"
    assert normalise("mailto:x@example.org") is None and normalise("ftp://127.0.0.1/") is None
    assert host_of("http://127.1.2.3:8082/x") == "127.1.2.3:8082"
    assert trap("http://127.0.0.1/a/b/a/c/a/", 1, 10, 512) is not None
    assert trap("http://127.0.0.1/blog/2019/03/14/", 1, 10, 512) == "calendar-like path"
    assert trap("http://127.0.0.1/cal?year=2019&month=3", 1, 10, 512) == "calendar-like query"
    assert trap("http://127.0.0.1/" + "x" * 600, 1, 10, 512) is not None
    assert trap("http://127.0.0.1/a", 11, 10, 512) == "deeper than --max-depth 10"
    assert trap("http://127.0.0.1/a/b/c", 2, 10, 512) is None


def test_robots_rules_from_the_cache(tmp_path: Path) -> None:
    from cowbird.crawl.robots import Rules

    frontier = Frontier(tmp_path / "crawl.sqlite3")
    frontier.set_robots("127.0.0.1:8081", 200, b"User-agent: *\nDisallow: /private/\nCrawl-delay: 2\n")
    status, body = frontier.robots("127.0.0.1:8081") or (0, b"")
    rules = Rules(status, body, "cowbird-crawler/0.1.0")
    assert not rules.allowed("http://127.0.0.1:8081/private/a") and rules.allowed("http://127.0.0.1:8081/public")
    assert rules.delay() == 2.0
    body = b"User-agent: *\nCrawl-delay: 3\n\nUser-agent: cowbird-crawler\nDisallow: /x\n"
    both = Rules(200, body, "cowbird-crawler")
    assert both.delay() == 3.0 and not both.allowed("http://127.0.0.1/x")  # the longer delay of the two groups
    assert Rules(404, b"", "x").allowed("http://127.0.0.1/any")  # no robots.txt: everything allowed
    assert not Rules(503, b"", "x").allowed("http://127.0.0.1/any")  # robots.txt failing: the host is not crawled
