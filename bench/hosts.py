"""Fan-out overhead across hosts: a front end and 7 node hosts in network namespaces (each its own
veth link, address and disk, as ``tests/frontend/test_multi_host.py`` builds them: see
``tests/netns.py``), 21 partitions with 2 replicas each, talking over the veth links and a bridge.

For each query, previews (exact total + 100 KWIC lines) one at a time from the root namespace,
through the bridge: the front end's total as the client sees it, against the slowest node call of
the same request, read from the front end's log (one JSON line per node call: partition, ms). A
preview makes two rounds of node calls — the count on all 21 partitions at once, then the page of
hits from the partitions it overlaps — so "slowest node" is the slowest count plus the slowest
page call: the time the request could not have been faster than with one node per partition. The
rest is the fan-out overhead: the front end's parsing and checking, scheduling 21 calls and their
connections, merging, JSON, and the network (target: <= 20 ms, median).

Two kinds of round: "fresh" (a new ``text_id`` filter each time, so every node evaluates the
query) and "repeated" (the same query again: the nodes answer from their result cache, which
leaves mostly the overhead). Once with ``max_parallel = 21`` (the multi-host recipe), once with
the default 8 (three waves of calls for 21 partitions).

Needs root and iproute2.

    .venv/bin/python bench/hosts.py [--tokens 2100000] [--rounds 15]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.netns import HostCluster, Network, client, netns_problem, web_corpus  # noqa: E402

QUERIES = [
    '[lemma="island"]',
    '[word="London"]',
    '[lemma="buy"] []? [pos="DT"]',
    '[pos="MD"] [lemma="see|fix"]',
    '[pos="JJ"] [pos="NNS"]',
    '[lemma="house"]',
]
SETTINGS: dict[str, Any] = {"node_timeout": 30.0, "deadline": 60.0}


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


@dataclass
class Sample:
    total: float  # ms, as the client saw it
    server: float  # ms, the front end's own request log
    count: float  # slowest count call
    page: float  # slowest page call (0 when the page needed none)
    calls: int

    @property
    def nodes(self) -> float:
        return self.count + self.page

    @property
    def overhead(self) -> float:
        return self.total - self.nodes


@dataclass
class Log:
    """Reads the front end's JSON log as it grows."""

    path: Path
    offset: int = 0
    pending: str = field(default="")

    def skip(self) -> None:
        self.offset = self.path.stat().st_size

    def until_request(self, partitions: int, timeout: float = 5.0) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The node calls of the next request, and its request line."""
        calls: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.path.open() as log:
                log.seek(self.offset)
                text = log.read()
                self.offset = log.tell()
            self.pending += text
            lines, self.pending = self.pending.rsplit("\n", 1) if "\n" in self.pending else ("", self.pending)
            for line in lines.splitlines():
                if not line.startswith("{"):
                    continue
                entry = json.loads(line)
                if entry.get("logger") == "cowbird.fanout" and str(entry.get("message", "")).startswith("node call"):
                    calls.append(entry)
                elif entry.get("logger") == "cowbird.requests" and entry.get("path", "").startswith("/api/v1/query"):
                    assert len(calls) >= partitions, f"{len(calls)} node calls for {partitions} partitions"
                    return calls, entry
            time.sleep(0.01)
        raise AssertionError("the front end did not log the request")


def measure(cluster: HostCluster, query: str, rounds: int, fresh: bool, start: int) -> tuple[int, list[Sample]]:
    """``rounds`` previews of ``query`` one after the other: the total hits, and each one's times."""
    partitions = len(cluster.corpus.partitions)
    log = Log(cluster.front.log)
    samples = []
    with client(cluster.url, timeout=120) as http:
        log.skip()
        for n in range(-1, rounds):  # the first is a warm-up (pages mapped), not counted
            params = {"corpus": "web", "q": query, "syntax": "cqp"}
            if fresh:  # a new query for every node: evaluated, not answered from a cache
                params["filter"] = f"text_id!~x{start + n}"
            began = time.perf_counter()
            response = http.get("/api/v1/query", params=params)
            total = (time.perf_counter() - began) * 1000
            body = response.json()
            assert response.status_code == 200 and body["complete"], body
            calls, request = log.until_request(partitions)
            assert all(c["status"] == "ok" for c in calls), calls
            counts, pages = calls[:partitions], calls[partitions:]
            if n >= 0:
                samples.append(Sample(total, float(request["ms"]), max(c["ms"] for c in counts),
                                      max((c["ms"] for c in pages), default=0.0), len(calls)))
    return int(body["total"]), samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=2_100_000, help="corpus size (21 partitions)")
    parser.add_argument("--rounds", type=int, default=15, help="previews per query and kind of round")
    args = parser.parse_args()
    problem = netns_problem()
    if problem is not None:
        sys.exit(f"bench/hosts.py: {problem}")
    console = Console(width=200)
    base = Path(tempfile.mkdtemp(prefix="cowbird-hosts-"))
    started = time.perf_counter()
    corpus = web_corpus(base / "corpus", args.tokens)
    console.print(f"corpus: {args.tokens:,} tokens in {len(corpus.partitions)} partitions "
                  f"({time.perf_counter() - started:.0f} s)")
    network = Network(base / "hosts")
    try:
        cluster = HostCluster(network, corpus, node_options=["--log-level", "warning"], front_options=[
            "--log-format", "json"], settings={**SETTINGS, "max_parallel": 21})
        started = time.perf_counter()
        cluster.start()
        console.print(f"7 node hosts and the front end on {network.subnet} ({time.perf_counter() - started:.0f} s)")
        summary = Table(title=f"fan-out overhead of a preview, 21 partitions on 7 hosts (2 replicas each), "
                              f"{args.tokens:,} tokens, {args.rounds} previews per query and kind")
        for column in ("max_parallel", "rounds", "previews", "front end total p50 ms", "slowest node p50 ms",
                       "overhead p50 ms", "overhead p95 ms", "server-side overhead p50 ms"):
            summary.add_column(column, justify="right")
        for parallel in (21, 8):
            if parallel != 21:
                cluster.restart_front({**SETTINGS, "max_parallel": parallel}, ["--log-format", "json"])
            detail = Table(title=f"max_parallel = {parallel}: medians per query (ms)")
            for column in ("query", "hits", "rounds", "total", "slowest count", "slowest page", "overhead",
                           "overhead p95", "node calls"):
                detail.add_column(column, justify="right")
            for fresh in (True, False):
                every: list[Sample] = []
                for q, query in enumerate(QUERIES):
                    hits, samples = measure(cluster, query, args.rounds, fresh, start=1000 * q + 100 * parallel)
                    every += samples
                    detail.add_row(escape(query), f"{hits:,}", "fresh" if fresh else "repeated",
                                   f"{statistics.median(s.total for s in samples):.1f}",
                                   f"{statistics.median(s.count for s in samples):.1f}",
                                   f"{statistics.median(s.page for s in samples):.1f}",
                                   f"{statistics.median(s.overhead for s in samples):.1f}",
                                   f"{percentile([s.overhead for s in samples], 0.95):.1f}",
                                   f"{statistics.median(s.calls for s in samples):.0f}")
                summary.add_row(str(parallel), "fresh" if fresh else "repeated", str(len(every)),
                                f"{statistics.median(s.total for s in every):.1f}",
                                f"{statistics.median(s.nodes for s in every):.1f}",
                                f"{statistics.median(s.overhead for s in every):.1f}",
                                f"{percentile([s.overhead for s in every], 0.95):.1f}",
                                f"{statistics.median(s.server - s.nodes for s in every):.1f}")
            console.print(detail)
        console.print(summary)
        console.print("overhead = front end total (client in the root namespace, through the bridge) - "
                      "(slowest count call + slowest page call, as the front end timed them); target <= 20 ms")
    finally:
        network.close()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
