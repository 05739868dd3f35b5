"""The crawl's report (OUT/report.json and OUT/report.md) and its progress file (OUT/progress.json).

The measure of Schäfer, Barbaresi & Bildhauer (2014) is the share of good documents — pages `cowbird build`
keeps, in the target language — over the crawl's time and per host; the COW papers' host bias is the
number of good documents per host. Both are here, with what was fetched, what was left out and why.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cowbird.crawl.crawler import CrawlOptions
    from cowbird.crawl.frontier import Frontier

PERIODS = 10  # the crawl's pages in this many equal parts, in the order they were fetched
TOP_HOSTS = 1000  # hosts listed in report.json (by pages fetched); every host counts in the summaries


def write_json(path: Path, value: dict[str, Any]) -> None:
    """Atomically: a reader never sees half a file."""
    partial = path.with_name(f".{path.name}.{os.getpid()}.part")
    partial.write_text(json.dumps(value, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, path)


def build_report(frontier: Frontier, options: CrawlOptions, counters: Counter[str], stop_reason: str,
                 interrupted: int, seconds: float) -> dict[str, Any]:
    db = frontier.db
    pages, size, good = frontier.totals()
    outcomes = dict(db.execute("SELECT outcome, COUNT(*) FROM pages GROUP BY outcome ORDER BY 2 DESC").fetchall())
    statuses = {str(k): v for k, v in db.execute("SELECT status, COUNT(*) FROM pages GROUP BY status ORDER BY 1")}
    languages = dict(db.execute("SELECT language, COUNT(*) FROM pages WHERE language IS NOT NULL "
                                "GROUP BY language ORDER BY 2 DESC").fetchall())
    hosts = [{"host": h, "pages": n, "good": g, "good_share": round(g / n, 4) if n else None}
             for h, n, g in db.execute("SELECT host, COUNT(*), SUM(good) FROM pages GROUP BY host "
                                       "ORDER BY 2 DESC, 1")]
    with_good = [h["good"] for h in hosts if h["good"]]
    over_time = []
    if pages:
        part = max(1, -(-pages // PERIODS))
        for n, g in db.execute(
                "SELECT COUNT(*), SUM(good) FROM (SELECT (ROW_NUMBER() OVER (ORDER BY seq) - 1) / ? AS part, good "
                "FROM pages) GROUP BY part ORDER BY part", (part,)):
            over_time.append({"pages": n, "good": g, "good_share": round(g / n, 4)})
    dropped = dict(db.execute("SELECT COALESCE(reason, '-'), COUNT(*) FROM urls WHERE state IN ('dropped', 'failed') "
                              "GROUP BY 1 ORDER BY 2 DESC LIMIT 20").fetchall())
    files = sorted(p.name for p in (options.out / "warc").glob("crawl-*.warc.gz"))
    return {
        "stop_reason": stop_reason, "finished": time.time(), "seconds_this_run": round(seconds, 1),
        "settings": options.settings(),
        "pages": pages, "bytes": size, "good": good, "good_share": round(good / pages, 4) if pages else None,
        "hosts_fetched": len(hosts), "hosts_with_good": len(with_good),
        "good_per_host": {"mean": round(sum(with_good) / len(with_good), 2) if with_good else 0,
                          "max": max(with_good, default=0),
                          "limit": options.host_good_limit},
        "good_share_over_time": over_time,
        "outcomes": outcomes, "statuses": statuses, "languages": languages,
        "urls": frontier.counts(), "interrupted_by_a_kill": interrupted,
        "left_out": dict(sorted(counters.items(), key=lambda kv: -kv[1])), "dropped_reasons": dropped,
        "warc_files": files, "hosts": hosts[:TOP_HOSTS],
    }


def markdown(report: dict[str, Any]) -> str:
    share = report["good_share"]
    lines = [
        "# Crawl report", "",
        f"Stopped: {report['stop_reason']}. Language {report['settings']['language']}, "
        f"strategy {report['settings']['strategy']}.", "",
        f"- pages fetched: {report['pages']:,} ({report['bytes'] / 1e6:,.1f} MB) "
        f"from {report['hosts_fetched']:,} hosts",
        f"- good documents: {report['good']:,}" + (f" ({100 * share:.1f} % of the pages)" if share is not None else ""),
        f"- good documents per host with any: mean {report['good_per_host']['mean']}, "
        f"max {report['good_per_host']['max']} (limit {report['good_per_host']['limit']})",
        "- URLs: " + ", ".join(f"{k} {v:,}" for k, v in report["urls"].items()),
        f"- WARC files: {', '.join(report['warc_files']) or 'none'}", "",
        "## Good documents over the crawl (tenths of the pages, in the order fetched)", "",
        "| part | pages | good | share |", "|---:|---:|---:|---:|",
    ]
    for i, row in enumerate(report["good_share_over_time"], 1):
        lines.append(f"| {i} | {row['pages']:,} | {row['good']:,} | {100 * row['good_share']:.1f} % |")
    lines += ["", "## What the pages were", "", "| outcome | pages |", "|---|---:|"]
    lines += [f"| {k} | {v:,} |" for k, v in report["outcomes"].items()]
    lines += ["", "## Left out, and why", "", "| reason | count |", "|---|---:|"]
    lines += [f"| {k} | {v:,} |" for k, v in report["left_out"].items()]
    lines += ["", "## Hosts (most pages first, at most 50)", "", "| host | pages | good | share |",
              "|---|---:|---:|---:|"]
    for host in report["hosts"][:50]:
        share = 100 * (host["good_share"] or 0)
        lines.append(f"| {host['host']} | {host['pages']:,} | {host['good']:,} | {share:.1f} % |")
    return "\n".join(lines) + "\n"
