"""`cowbird crawl` as a user runs it, on a generated web of hundreds of hosts on 127.0.0.0/8 (loopweb.py).

Every test here runs in a network namespace with only loopback (tests/loopback.py), and the crawler is told
`--allow 127.0.0.0/8`: nothing a crawl starts can reach another address. The web's server logs every
request it answers; the checks read that log, the crawl's WARC files and its report.
"""

from __future__ import annotations

import gzip
import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from tests.crawl.loopweb import LoopWeb, Served

pytestmark = [pytest.mark.e2e, pytest.mark.loopback]

DELAY = 0.2


def crawl_args(seeds: Path, out: Path, *more: str) -> list[str]:
    return [sys.executable, "-m", "cowbird", "crawl", str(seeds), "-o", str(out), "--allow", "127.0.0.0/8",
            "--delay", str(DELAY), "--page-seconds", "5", *more]


def seeds_file(served: Served, path: Path, n: int = 5) -> Path:
    path.write_text("# five seeds, as a search engine gives them\n" + "\n".join(served.seeds(n)) + "\n")
    return path


def run(args: list[str], timeout: float = 240) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(args, capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def records(out: Path) -> list[Any]:
    """(type, target URI, WARC-Truncated, payload length) of every record of the crawl's WARC files; warcio
    reading each file to its end is the proof that the files are complete."""
    found = []
    for path in sorted((out / "warc").glob("crawl-*.warc.gz")):
        with path.open("rb") as stream:
            for record in ArchiveIterator(stream):
                found.append((record.rec_type, record.rec_headers.get_header("WARC-Target-URI"),
                              record.rec_headers.get_header("WARC-Truncated"), len(record.content_stream().read())))
    return found


def page_requests(served: Served) -> list[dict[str, Any]]:
    return [r for r in served.requests() if r["path"] != "/robots.txt"]


def report_of(out: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((out / "report.json").read_text())
    return value


@pytest.fixture(scope="module")
def web() -> LoopWeb:
    return LoopWeb(hosts=300, seed=7)


@pytest.mark.timeout(300)
def test_a_crawl_obeys_robots_and_every_delay_stops_at_its_budget_and_builds(web: LoopWeb, tmp_path: Path) -> None:
    out = tmp_path / "crawl"
    with web.serve(tmp_path) as served:
        result = run(crawl_args(seeds_file(served, tmp_path / "seeds.txt"), out, "--pages", "300"))
        requests = served.requests()
    assert "crawled 300 pages" in result.stdout and "page budget reached (300 pages)" in result.stdout
    assert served.violations(requests, DELAY) == []  # robots.txt first, obeyed, host, IP and Crawl-delay kept
    assert all(r["user_agent"].startswith("cowbird-crawler/") for r in requests)
    robots = Counter(r["host"] for r in requests if r["path"] == "/robots.txt")
    assert robots and max(robots.values()) == 1  # each host's robots.txt once
    paths = [r["path"] + "?" + r["query"] for r in requests]
    assert not any("/cal/20" in p or "/a/a/a/" in p or "sid=" in p for p in paths)  # traps not followed
    report = report_of(out)
    assert report["pages"] == 300 and report["stop_reason"] == "page budget reached (300 pages)"
    assert 0 < report["good"] <= 300 and report["good_share"] == round(report["good"] / 300, 4)
    assert sum(h["pages"] for h in report["hosts"]) == 300 and len(report["good_share_over_time"]) == 10
    assert report["left_out"]["disallowed by robots.txt"] > 0
    progress = json.loads((out / "progress.json").read_text())
    assert progress["state"] == "stopped" and progress["pages"] == 300
    found = records(out)
    responses = [r for r in found if r[0] == "response" and not r[1].endswith("/robots.txt")]
    assert len(responses) == 300 and len({r[1] for r in responses}) == 300  # each page once, in whole records
    assert not any(r[1].endswith(".pdf") for r in responses)  # only the MIME types asked for
    assert "# Crawl report" in (out / "report.md").read_text()
    # the WARC files are what `cowbird build` takes, as the crawl's last line says
    built = run([sys.executable, "-m", "cowbird", "build", str(out / "warc"), "-o", str(tmp_path / "corpus"),
                 "--name", "loop", "--language", "de", "-j", "1"], timeout=240)
    assert "built loop:" in built.stdout
    vrt = gzip.decompress((tmp_path / "corpus" / "loop.vrt.gz").read_bytes()).decode()
    assert vrt.count("<text ") > 0 and "\nStadt\t" in vrt


@pytest.mark.timeout(240)
def test_the_focused_crawl_has_at_least_twice_the_good_share_of_breadth_first(web: LoopWeb, tmp_path: Path) -> None:
    shares = {}
    with web.serve(tmp_path) as served:
        seeds = seeds_file(served, tmp_path / "seeds.txt")
        for strategy in ("focused", "breadth"):
            run(crawl_args(seeds, tmp_path / strategy, "--pages", "600", "--strategy", strategy, "-q"))
            shares[strategy] = report_of(tmp_path / strategy)["good_share"]
        assert served.violations(served.requests(), DELAY) == []
    assert shares["focused"] >= 2 * shares["breadth"], shares


@pytest.mark.timeout(300)
def test_a_killed_crawl_resumes_and_fetches_no_page_twice(web: LoopWeb, tmp_path: Path) -> None:
    out = tmp_path / "crawl"
    with web.serve(tmp_path) as served:
        args = crawl_args(seeds_file(served, tmp_path / "seeds.txt"), out, "--pages", "400", "-q")
        process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            progress = out / "progress.json"
            if progress.exists() and json.loads(progress.read_text())["pages"] >= 120:
                break
            time.sleep(0.1)
        process.send_signal(signal.SIGKILL)
        process.wait(30)
        killed_at = len(page_requests(served))
        run(args[:4] + args[5:])  # the same command without SEEDS: it resumes
        requests = page_requests(served)
        assert served.violations(served.requests(), DELAY) == []
    assert 120 <= killed_at < 400
    asked = Counter((r["host"], r["path"], r["query"]) for r in requests)
    twice = {key: n for key, n in asked.items() if n > 1}
    # a /flaky/ page answers 503 once, then 200: the retry is the only second request a page may get
    assert all(path.startswith("/flaky/") and n == 2 for (_, path, _), n in twice.items()), twice
    report = report_of(out)
    assert report["pages"] == 400 and report["urls"]["interrupted"] == report["interrupted_by_a_kill"] >= 0
    responses = [r for r in records(out) if r[0] == "response" and not r[1].endswith("/robots.txt")]
    assert len(responses) == 400 and len({r[1] for r in responses}) == 400


@pytest.mark.timeout(240)
@pytest.mark.parametrize("how", ["SIGTERM", "Ctrl-C"])
def test_a_signal_stops_a_crawl_cleanly_and_it_goes_on_later(web: LoopWeb, tmp_path: Path, how: str) -> None:
    out = tmp_path / "crawl"
    with web.serve(tmp_path) as served:
        args = crawl_args(seeds_file(served, tmp_path / "seeds.txt"), out, "--page-bytes", "3KB", "-q")
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   start_new_session=True)
        while not (out / "progress.json").exists() or json.loads((out / "progress.json").read_text())["pages"] < 50:
            time.sleep(0.1)
        if how == "SIGTERM":
            process.send_signal(signal.SIGTERM)
        else:  # a terminal's Ctrl-C: SIGINT to the whole process group, the page-scoring worker too
            os.killpg(process.pid, signal.SIGINT)
        stdout, _ = process.communicate(timeout=60)
        name = "SIGTERM" if how == "SIGTERM" else "SIGINT"
        assert process.returncode == 0 and f"stopped by {name}" in stdout
        first = report_of(out)
        assert not any(reason.startswith(("crawler error", "not scored")) for reason in first["left_out"]), first
        assert first["stop_reason"] == f"stopped by {name}"
        run(args[:4] + args[5:] + ["--pages", str(first["pages"] + 20)])
        assert served.violations(served.requests(), DELAY) == []
    assert report_of(out)["pages"] == first["pages"] + 20
    found = records(out)
    cut = [r for r in found if r[0] == "response" and r[2] == "length"]
    assert cut and all(r[3] <= 3 * 1024 for r in cut)  # --page-bytes: cut, and said so in the record


@pytest.mark.timeout(120)
def test_without_allow_a_crawl_reaches_no_private_address(web: LoopWeb, tmp_path: Path) -> None:
    out = tmp_path / "crawl"
    with web.serve(tmp_path) as served:
        seeds = seeds_file(served, tmp_path / "seeds.txt")
        args = [a for a in crawl_args(seeds, out, "--pages", "20") if a not in ("--allow", "127.0.0.0/8")]
        result = subprocess.run(args, capture_output=True, text=True, timeout=120)
        assert served.requests() == []  # not one request: loopback is not a public address
    assert result.returncode == 1 and "no page was fetched (the frontier is empty)" in result.stderr
    assert "host outside the allowed addresses (5)" in result.stderr and "--allow CIDR" in result.stderr
    assert report_of(out)["left_out"]["host outside the allowed addresses"] == 5


@pytest.mark.timeout(60)
def test_bad_input_says_what_is_wrong(tmp_path: Path) -> None:
    cases = [
        (["nowhere.txt", "-o", str(tmp_path / "a")], "nowhere.txt: no such file or folder"),
        ([str(tmp_path), "-o", str(tmp_path / "b")], "is not the output of a crawl"),
        (["-o", str(tmp_path / "c")], "give SEEDS"),
        (["http://127.0.0.1/", "-o", str(tmp_path / "d"), "--allow", "10.0.0.0/33"], "not an address range"),
        (["http://127.0.0.1/", "-o", str(tmp_path / "e"), "--time", "soon"], "give seconds"),
    ]
    (tmp_path / "empty.txt").write_text("# nothing\nmailto:someone@example.org\n")
    cases.append(([str(tmp_path / "empty.txt"), "-o", str(tmp_path / "f")], "no seed URL to start from"))
    for args, message in cases:
        result = subprocess.run([sys.executable, "-m", "cowbird", "crawl", *args], capture_output=True, text=True,
                                timeout=60, env={**os.environ, "NO_COLOR": "1"})
        assert result.returncode != 0 and message in result.stderr, (args, result.stderr)
