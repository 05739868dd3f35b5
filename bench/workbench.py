"""The workbench's features on BIG50 (two partitions of ~25 MT, one node process each, the front end
over HTTP), as a linguist uses them: each request new to the nodes (the stack is started afresh for
every feature, after one warm-up query), then the same request again (the nodes hold the query's
result; a word list: the nodes keep the counted n-grams). Issue 36's target: each at most 2 s on BIG50;
the "hits" of a word list are the n-grams it counted, of a keyword list the items compared, of a
subcorpus its tokens.

    .venv/bin/python bench/workbench.py [--only "word list"]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import httpx
from rich.console import Console

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import big50_stack, show

TARGET_S = 2.0

CASES: list[tuple[str, str, dict[str, str | int]]] = [
    ("tokens as word/pos/lemma (preview)", "/api/v1/query",
     {"q": '[lemma="make"] [pos="DT"]', "inline": "pos,lemma"}),
    ("sort on three keys (preview)", "/api/v1/query",
     {"q": '[lemma="make"] [pos="DT"]', "sort": "right1.word,left1.pos,match.word%c", "direction": "asc,desc,asc"}),
    ("sort on three keys, page 50", "/api/v1/query",
     {"q": '[lemma="make"] [pos="DT"]', "sort": "right1.word,left1.pos,match.word%c", "direction": "asc,desc,asc",
      "offset": 5000}),
    ("sort on two keys, a frequent word", "/api/v1/query",
     {"q": '[word="house"]', "sort": "left1.word,right1.word", "direction": "asc"}),
    ("frequency by two keys", "/api/v1/frequency",
     {"q": '[pos="JJ"] [pos="NNS"]', "by": "word,pos", "on": "match[-1],matchend[1]", "limit": 100}),
    ("frequency by three keys", "/api/v1/frequency",
     {"q": '[lemma="make"]', "by": "word,lemma,pos", "on": "match,matchend[1],matchend[2]", "limit": 100}),
    ("dispersion over texts", "/api/v1/dispersion", {"q": '[lemma="make"] [pos="DT"]', "parts": "text"}),
    ("dispersion over sentences, a frequent word", "/api/v1/dispersion", {"q": '[word="the"]', "parts": "s"}),
    ("word list of the corpus (100 words)", "/api/v1/wordlist", {"attribute": "word"}),
    ("lemma list of the news texts (1,000 lemmas)", "/api/v1/wordlist",
     {"attribute": "lemma", "filter": "text_genre~news", "limit": 1000}),
    ("2-grams of words (100)", "/api/v1/wordlist", {"n": 2}),
    ("3-grams of tags, at least 1,000 times", "/api/v1/wordlist", {"attribute": "pos", "n": 3, "min": 1000,
                                                                    "limit": 10_000}),
    ("5-grams of words with a token matching house", "/api/v1/wordlist", {"n": 5, "match": "house"}),
    ("keywords: news texts against the others (words, min 5)", "/api/v1/keywords",
     {"filter": "text_genre~news", "reference_filter": "text_genre!~news"}),
    ("keywords: weblog lemmas against the whole corpus", "/api/v1/keywords",
     {"filter": "text_genre~weblog", "attribute": "lemma", "min": 10, "order": "log_ratio"}),
    ("subcorpus: the genres' sizes (the picker)", "/api/v1/subcorpus", {"values": "text_genre"}),
    ("subcorpus: the news texts' size and their years", "/api/v1/subcorpus",
     {"filter": "text_genre~news", "values": "text_year"}),
    ("subcorpus: hosts containing 'blog', the 1,000 largest", "/api/v1/subcorpus",
     {"values": "text_host", "match": ".*blog.*", "order": "tokens"}),
    ("subcorpus: the 1,000 largest hosts of every value", "/api/v1/subcorpus",
     {"values": "text_host", "order": "tokens"}),
    ("subcorpus: a value per text (100,166 ids), the 1,000 largest", "/api/v1/subcorpus",
     {"values": "text_id", "order": "tokens"}),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--only", default="", help="only the features whose name holds this text (word list)")
    args = parser.parse_args()
    console = Console(width=200)
    settings: dict[str, object] = {"anonymous_running_queries": 100, "anonymous_rows_per_day": 10**12,
                                   "deadline": 600}
    stack, options = big50_stack("cowbird-bench-workbench-", settings)
    console.print(f"encoding {options.input.name} into partitions of 25 MT in {stack.base} ...")
    stack.prepare()
    rows = []
    for name, path, params in CASES:
        if args.only not in name:
            continue
        stack.start()
        try:
            with httpx.Client(base_url=stack.url, timeout=600) as client:
                client.get("/api/v1/query", params={"corpus": "big50", "q": "[word='no-such-word']", "syntax": "cqp"})
                times = []
                answer = None
                for _ in range(2):  # new to the nodes, then again (their results kept)
                    started = time.perf_counter()
                    asked = {"corpus": "big50", **({"syntax": "cqp"} if "q" in params else {}), **params}
                    answer = client.get(path, params=asked)
                    times.append(time.perf_counter() - started)
                    answer.raise_for_status()
                assert answer is not None
                body = answer.json()
                # a word list: the n-grams it counted; keywords: the items compared; a subcorpus: its tokens
                size = body.get("total", body.get("ngrams", body.get("compared", body.get("tokens", 0))))
                hits = int(size) if isinstance(size, int) else 0
                line = context_line(client, body) if path == "/api/v1/query" and body.get("hits") else None
        finally:
            stack.stop()
        rows.append([name, f"{hits:,}", f"{times[0]:.2f}", f"{times[1]:.2f}",
                     "yes" if times[0] <= TARGET_S else "NO"])
        console.print(f"{name}: {times[0]:.2f} s, again {times[1]:.2f} s", markup=False)
        if line is not None:
            rows.append(["a line widened to 100 tokens, then its sentence", "1", f"{line[0]:.3f}", f"{line[1]:.3f}",
                         "yes" if max(line) <= TARGET_S else "NO"])
    show(console, "The workbench on BIG50 (2 partitions of ~25 MT, a node process each, the front end over HTTP): "
         "seconds, the request new to the nodes and again", ["feature", "hits", "first s", "again s",
                                                             f"≤ {TARGET_S:.0f} s"], rows)


def context_line(client: httpx.Client, body: dict[str, object]) -> tuple[float, float]:
    """Seconds to widen the first hit's line in place (100 tokens in its text), then to its sentence."""
    hits = body["hits"]
    assert isinstance(hits, list)
    hit = hits[0]
    took = []
    cases: list[dict[str, str | int]] = [{"tokens": 100}, {"tokens": 100, "region": "s"}]
    for params in cases:
        started = time.perf_counter()
        client.get(f"/api/v1/context/big50/{hit['position']}", params={"end": hit["matchend"], **params}
                   ).raise_for_status()
        took.append(time.perf_counter() - started)
    return took[0], took[1]


if __name__ == "__main__":
    main()
