"""Calf's evaluation: a local "web" of pages made from the EWT reference corpus, on loopback.

Each of --pages texts becomes a web page (its sentences as running text, inside navigation and
footer boilerplate), and one sentence of each becomes an exported concordance line:

- 50 % unchanged: the page is where the line's URL says;
- 20 % edited: the sentences around the line's sentence are rewritten and words are inserted
  next to it;
- 15 % moved: the URL answers 404; the page lives at a new URL that only the stub search API
  (SearXNG-style JSON) knows;
- 15 % gone: 404, and the search finds only unrelated pages.

Pages are spread over 40 loopback host names (127.0.0.2 ...), as a real concordance's lines come
from many sites, so that Calf's one-request-per-host politeness still lets it work in parallel.
Prints the reconstruction rate per class, false positives on gone pages, and lines per second.

    .venv/bin/python bench/calf_eval.py [--pages 1000] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import REFERENCE

HOSTS = 40
SHARES = (("unchanged", 0.50), ("edited", 0.20), ("moved", 0.15), ("gone", 0.15))
FILLER = ["The weather was pleasant that week and many people went outside.",
          "Prices in the shop had gone up again since the winter.",
          "Our neighbours finally finished painting their fence blue.",
          "Nobody expected the meeting to last until late in the evening."]  # fmt: skip


def texts(vrt: Path) -> list[list[list[str]]]:
    """The corpus as texts of sentences of tokens."""
    found: list[list[list[str]]] = []
    sentence: list[str] = []
    for line in vrt.read_text(encoding="utf-8").splitlines():
        if line.startswith("<text"):
            found.append([])
        elif line.startswith("</s>"):
            if sentence and found:
                found[-1].append(sentence)
            sentence = []
        elif line and not line.startswith("<"):
            sentence.append(line.split("\t")[0])
    return [t for t in found if len(t) >= 3]


def detokenize(tokens: list[str]) -> str:
    """Running text as a web page would have it: no space before punctuation and clitics."""
    text = " ".join(tokens)
    text = re.sub(r" ([.,!?;:%)\]}])", r"\1", text)
    text = re.sub(r"([(\[{$]) ", r"\1", text)
    return re.sub(r" (n't|'s|'re|'ve|'ll|'d|'m)\b", r"\1", text)


def search_key(text: str) -> str:
    """What the stub search engine indexes a sentence by: its first letters and digits (a real
    engine matches a phrase whatever the spacing and punctuation)."""
    return re.sub(r"\W+", "", text.lower())[:40]


def page(sentences: list[str], title: str) -> str:
    body = "".join(f"<p>{s}</p>" for s in sentences)
    return (f"<html><head><meta charset='utf-8'><title>{title}</title></head><body>"
            "<nav><a href='/'>Home</a> | <a href='/news'>News</a> | <a href='/contact'>Contact us</a></nav>"
            f"<main><h1>{title}</h1>{body}</main><footer>Copyright 2024. All rights reserved. "
            "<a href='/privacy'>Privacy</a></footer></body></html>")


class Web:
    """The pages by (host, path), a stub search API, and robots.txt everywhere."""

    def __init__(self) -> None:
        self.pages: dict[tuple[str, str], bytes] = {}
        self.search: dict[str, list[str]] = {}  # first words of a sentence -> URLs
        web = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_GET(self) -> None:  # noqa: N802
                host = (self.headers.get("Host") or "").split(":")[0]
                parts = urlsplit(self.path)
                if parts.path == "/robots.txt":
                    self._send(200, b"User-agent: *\nAllow: /\n", "text/plain")
                elif parts.path == "/search":
                    key = search_key(parse_qs(parts.query).get("q", [""])[0])
                    # unrelated results come from many sites, as a real engine's would
                    unrelated = f"http://127.0.0.{2 + len(key) % HOSTS}:{self.server.server_address[1]}/p/unrelated"
                    urls = web.search.get(key, [unrelated])
                    self._send(200, json.dumps({"results": [{"url": u} for u in urls]}).encode(), "application/json")
                elif (host, parts.path) in web.pages:
                    self._send(200, web.pages[(host, parts.path)], "text/html; charset=utf-8")
                else:
                    self._send(404, b"<html><body><h1>Not found</h1></body></html>", "text/html")

            def _send(self, status: int, body: bytes, kind: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("0.0.0.0", 0), Handler)
        self.server.daemon_threads = True
        self.server.request_queue_size = 256
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])


def build(web: Web, corpus: list[list[list[str]]], count: int, seed: int) -> tuple[list[dict[str, str]], list[str]]:
    rng = random.Random(seed)
    chosen = rng.sample(corpus, min(count, len(corpus)))
    classes: list[str] = []
    for name, share in SHARES:
        classes += [name] * round(share * len(chosen))
    classes = (classes + ["unchanged"] * len(chosen))[: len(chosen)]
    rng.shuffle(classes)
    rows, kinds = [], []
    unrelated = page([detokenize(s) for s in chosen[0][:3]] + FILLER, "Unrelated")
    for host in range(HOSTS):
        web.pages[(f"127.0.0.{2 + host}", "/p/unrelated")] = unrelated.encode()
    for number, (text, kind) in enumerate(zip(chosen, classes, strict=True)):
        host = f"127.0.0.{2 + number % HOSTS}"
        candidates = [i for i, s in enumerate(text) if 6 <= len(s) <= 40] or list(range(len(text)))
        index = rng.choice(candidates)
        tokens = text[index]
        sentences = [detokenize(s) for s in text]
        if kind == "edited":  # the text around the sentence changes
            sentences[index] = f"{rng.choice(['Well,', 'So,', 'Honestly,'])} {sentences[index]} {rng.choice(FILLER)}"
            for other in (index - 1, index + 1):
                if 0 <= other < len(sentences):
                    sentences[other] = rng.choice(FILLER)
        html = page(sentences, f"Page {number}").encode()
        path = f"/p/{number}"
        url = f"http://{host}:{web.port}{path}"
        if kind in ("unchanged", "edited"):
            web.pages[(host, path)] = html
        elif kind == "moved":
            new_host = f"127.0.0.{2 + (number + 7) % HOSTS}"
            web.pages[(new_host, f"/moved/{number}")] = html
            web.search[search_key(" ".join(tokens))] = [
                f"http://127.0.0.{2 + number % HOSTS}:{web.port}/p/unrelated",
                f"http://{new_host}:{web.port}/moved/{number}"]
        match = rng.randrange(len(tokens))
        rows.append({"corpus": "ewt", "position": str(number), "left": " ".join(tokens[:match]),
                     "match": tokens[match], "right": " ".join(tokens[match + 1:]), "text_url": url})
        kinds.append(kind)
    return rows, kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=1000)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    vrt = REFERENCE / "ewt.vrt"
    if not vrt.exists():
        sys.exit(f"the reference corpus is missing: {vrt}")
    web = Web()
    rows, kinds = build(web, texts(vrt), args.pages, args.seed)
    with tempfile.TemporaryDirectory(prefix="calf-eval-") as folder:
        source, output = Path(folder) / "lines.tsv", Path(folder) / "out.tsv"
        with source.open("w", encoding="utf-8", newline="") as out:
            writer = csv.DictWriter(out, list(rows[0]), delimiter="\t")
            writer.writeheader()
            writer.writerows(rows)
        started = time.monotonic()
        subprocess.run([sys.executable, "-m", "tools.calf.cli", str(source), "-o", str(output), "--concurrency",
                        str(args.concurrency), "--search-url", f"http://127.0.0.2:{web.port}/search", "--delay",
                        "0.2"], check=True, cwd=ROOT)
        seconds = time.monotonic() - started
        results = list(csv.DictReader(output.open(encoding="utf-8"), delimiter="\t"))
    per_class: dict[str, Counter[str]] = defaultdict(Counter)
    for kind, result in zip(kinds, results, strict=True):
        per_class[kind][result["calf_status"]] += 1
    print(f"\n{len(rows)} lines, concurrency {args.concurrency}, {seconds:.1f} s: {len(rows) / seconds:.1f} lines/s\n")
    print("| class | lines | found on its page | found by search | not found | fetch error | reconstructed | target |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    targets = {"unchanged": "≥ 99 %", "edited": "≥ 95 %", "moved": "≥ 99 %", "gone": "0 found"}
    for kind, _ in SHARES:
        counts = per_class[kind]
        total = sum(counts.values())
        found = counts["found_url"] + counts["found_search"]
        rate = f"{found / total:.1%}" if total else "–"
        print(f"| {kind} | {total} | {counts['found_url']} | {counts['found_search']} | {counts['not_found']} | "
              f"{counts['fetch_error']} | {rate} | {targets[kind]} |")


if __name__ == "__main__":
    main()
