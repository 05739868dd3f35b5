"""`cowbird crawl`: from seed URLs to WARC files, polite, focused and resumable (docs/crawling.md).

This package so far holds the crawl's frontier (frontier.py): the SQLite-backed queue of URLs, the seen
set, the hosts with their per-host and per-IP pacing and the robots.txt cache.
"""
