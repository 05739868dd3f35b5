"""Memory and speed of the crawl's SQLite frontier with a million queued URLs (issue 67).

Queues ``--urls`` URLs over ``--hosts`` hosts (batches of 10,000, as a crawl adds a page's links), then
hands out and releases URLs as the crawler does; reports the peak RSS of this process (``ru_maxrss``), the
size of crawl.sqlite3 and the time per ``add_many`` batch and per ``take``.

    .venv/bin/python bench/crawl_frontier.py --urls 1000000 --hosts 20000
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tools" / "crawl")]

from cowbird.crawl.frontier import Frontier  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urls", type=int, default=1_000_000)
    parser.add_argument("--hosts", type=int, default=20_000)
    parser.add_argument("--takes", type=int, default=2_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="frontier-") as tmp:
        path = Path(tmp) / "crawl.sqlite3"
        frontier = Frontier(path, delay=0.0)
        for h in range(args.hosts):
            frontier.set_ip(f"h{h}.example.org", f"10.{h // 65536}.{h // 256 % 256}.{h % 256}")
        started = time.perf_counter()
        batch = 10_000
        for first in range(0, args.urls, batch):
            rows = [(f"http://h{i % args.hosts}.example.org/page/{i}?q={i * 7919 % 1000}",
                     f"h{i % args.hosts}.example.org", 3, (i * 2654435761 % 1000) / 1000, None)
                    for i in range(first, min(first + batch, args.urls))]
            frontier.add_many(rows)
        added = time.perf_counter() - started
        rss_after_add = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        handed = 0
        now = time.time()
        for _ in range(args.takes):
            taken = frontier.take(16, now=now)
            for entry in taken:
                frontier.release(entry, ended=None)
                frontier.record_page(entry.url, entry.host, 200, 1000, False, None, "bench", now)
            handed += len(taken)
        took = time.perf_counter() - started
        counts = frontier.counts()
        frontier.close()
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print("| URLs queued | hosts | add, per 10,000 | take(16)+release+record, per URL | crawl.sqlite3 (+WAL) "
          "| peak RSS |")
    print("|---:|---:|---:|---:|---:|---:|")
    print(f"| {args.urls:,} | {args.hosts:,} | {added / (args.urls / batch) * 1000:.0f} ms | "
          f"{took / max(handed, 1) * 1000:.2f} ms ({handed:,} URLs) | {size / 1e6:,.0f} MB | {peak / 1024:,.0f} MB "
          f"(after adding: {rss_after_add / 1024:,.0f} MB) |")
    print(f"queued left: {counts['queued']:,}")


if __name__ == "__main__":
    main()
