"""What the demo's stand-in web archive costs (issue 65, item 12): ``cowbird.commands.demo_web`` writing
the generated demo corpus's texts as pages into a WARC file and a CDX index (once per demo directory,
on the first ``make demo``), its size, and its answers — a URL's CDX table and a capture's original
bytes — in the process (``Archive.cdx``, ``Archive.capture``) and over HTTP from the server the demo
starts (``python -P -m cowbird.commands.demo_web`` on 127.0.0.1), as Calf asks it for *Find this
sentence on the web*. No reference data: the corpus is generated (``demo_corpus``, seed 2024).

Medians over ``--lookups`` URLs drawn with a fixed seed, after one warm-up each.

    .venv/bin/python bench/demo_archive.py [--tokens 2000000] [--lookups 200]
"""

from __future__ import annotations

import argparse
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from cowbird.commands import demo_web


def median_ms(action: Callable[[str], object], urls: list[str]) -> float:
    action(urls[0])
    timings = []
    for url in urls:
        started = time.perf_counter()
        action(url)
        timings.append((time.perf_counter() - started) * 1000)
    return statistics.median(timings)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tokens", type=int, default=2_000_000)
    parser.add_argument("--lookups", type=int, default=200)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cowbird-demo-archive-") as tmp:
        base = Path(tmp)
        started = time.perf_counter()
        folder = demo_web.build(base, options.tokens)
        built = time.perf_counter() - started
        started = time.perf_counter()
        demo_web.build(base, options.tokens)  # found by its stamp
        again = time.perf_counter() - started
        archive = demo_web.Archive(folder)
        urls = random.Random(7).sample(sorted(archive.index), min(options.lookups, len(archive.index)))
        print(
            "| tokens | texts (pages) | build | second run | WARC | index | CDX, in process | capture, in process "
            "| CDX over HTTP | capture over HTTP |"
        )
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        cdx_local = median_ms(archive.cdx, urls)
        capture_local = median_ms(archive.capture, urls)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-P", "-m", "cowbird.commands.demo_web", "--dir", str(base), "--port", str(port)]
        )
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
                deadline = time.monotonic() + 30
                while True:
                    try:
                        client.get("/cdx", params={"url": "x"})
                        break
                    except httpx.TransportError:
                        if time.monotonic() > deadline:
                            raise
                        time.sleep(0.1)
                cdx_http = median_ms(lambda u: client.get("/cdx", params={"url": u, "output": "json"}), urls)
                stamps = {u: archive.index[u][0] for u in urls}
                capture_http = median_ms(lambda u: client.get(f"/web/{stamps[u]}id_/{u}"), urls)
        finally:
            server.terminate()
            server.wait(10)
        warc = (folder / "captures.warc.gz").stat().st_size
        index = (folder / "index.json").stat().st_size
        print(
            f"| {options.tokens:,} | {len(archive.index):,} | {built:.1f} s | {again * 1000:.0f} ms "
            f"| {warc / 1e6:.1f} MB | {index / 1e6:.1f} MB | {cdx_local:.3f} ms | {capture_local:.2f} ms "
            f"| {cdx_http:.2f} ms | {capture_http:.2f} ms |"
        )


if __name__ == "__main__":
    main()
