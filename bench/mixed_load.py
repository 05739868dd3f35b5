"""Mixed load on the demo: cheap previews stay quick while heavy work runs beside them.

The platform as ``make demo`` runs it (the generated 2-million-token web corpus in two partitions on
two node processes, the front end) takes ``--clients`` concurrent clients for ``--seconds``: most
send cheap previews (a common word with a changing filter, so that no cache answers), the others
heavy queries (long repetitions), deep sorted pages (offset 100,000 of a large query), wide
analyses (frequency over match[-3]..match[3], a distribution over sentence ids, collocations) and
exports; with ``--comparative`` also word sketches, thesaurus look-ups, trends and comparisons, and
with ``--vanish`` clients give up some of their requests mid-way (printed at the end: the CPU the
processes still use in the 5 s after the last client went — work nobody waits for must stop).
Every client is its own user: an account of its own with an API token, under the default
fair-use limits (``--anonymous``: anonymous clients instead, the per-address limits raised, as one
machine plays 32 people). Printed: requests and statuses per kind (no 5xx is the target), the
latency of the cheap previews (p50, p95; target p95 ≤ 1 s) and of the deep sorted pages, and the
machine's load average.

    .venv/bin/python bench/mixed_load.py [--clients 32] [--seconds 60] [--think 0] [--without heavy ...] [--anonymous]
        [--comparative 0.1] [--vanish 0.3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import running_demo

CHEAP = ["house", "the 0-1 house", "^buy", "good", "^make", "teacher", "city", "^see"]
# heavy: long repetitions over tokens that are there but never in this order (no hits, every start
# walked); the first is refused at once by the cost estimate, the others (estimated 26 and 4 s) run
# for about 47 and 13 s alone (2026-11-29)
HEAVY = ['[] []{0,200} [word="the"] [word="the"]', '[]{3,} [lemma="house"] [lemma="house"]',
         '[pos="NN.*"] []{0,100} [word="house"] [word="house"]']
SKETCHED = ["house", "car", "city", "teacher", "good"]
COMPARATIVE = ["sketch", "thesaurus", "trend", "compare"]
KINDS = [("cheap", 0.6), ("heavy", 0.1), ("deep sort", 0.1), ("analysis", 0.12), ("export", 0.08),
         ("comparative", 0.0)]
"""Kinds and their shares of the requests; ``comparative`` (word sketches, thesaurus, trends, compare:
issues 51 and 52) takes a share with ``--comparative SHARE`` (taken from the cheap previews)."""


FAILURES: Counter[str] = Counter()
"""The 5xx answers by kind, status and the first words of their detail."""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else float("nan")


async def one(client: httpx.AsyncClient, kind: str, rng: random.Random) -> tuple[int, float]:
    started = time.perf_counter()
    if kind == "comparative":
        kind = rng.choice(COMPARATIVE)
    if kind == "cheap":
        genre = rng.choice(["blog", "news", "forum", "shop", "recipes", "reviews"])
        params = {"corpus": "web", "q": rng.choice(CHEAP), "filter": f"text_genre~{genre}|x{rng.randrange(10**6)}"}
        answer = await client.get("/api/v1/query", params=params)
    elif kind == "heavy":
        answer = await client.get("/api/v1/query", params={"corpus": "web", "q": rng.choice(HEAVY), "syntax": "cqp"})
    elif kind == "deep sort":
        answer = await client.get("/api/v1/query", params={"corpus": "web", "q": "the", "sort": "right1.word",
                                                           "offset": 100_000 + rng.randrange(1000)})
    elif kind == "analysis":
        which = rng.randrange(3)
        if which == 0:
            answer = await client.get("/api/v1/frequency", params={"corpus": "web", "q": "house", "by": "word",
                                                                   "on": "match[-3]..match[3]"})
        elif which == 1:
            answer = await client.get("/api/v1/distribution", params={"corpus": "web", "q": "house", "by": "s_id"})
        else:
            answer = await client.get("/api/v1/collocations", params={"corpus": "web", "q": "^house",
                                                                      "attribute": "lemma"})
    elif kind == "sketch":
        answer = await client.get("/api/v1/sketch", params={"corpus": "web", "headword": rng.choice(SKETCHED)})
    elif kind == "thesaurus":
        answer = await client.get("/api/v1/thesaurus", params={"corpus": "web", "headword": rng.choice(SKETCHED)})
    elif kind == "trend":
        answer = await client.get("/api/v1/trend", params=[("corpus", "web"), ("q", "^house"), ("q", "^car")])
    elif kind == "compare":
        answer = await client.get("/api/v1/compare", params={"corpus": "web", "q": "^house", "other_q": "^car",
                                                             "by": "word", "on": "match[1]"})
    else:
        answer = await client.get("/api/v1/export", params={"corpus": "web", "q": "^house", "limit": 5000})
    if answer.status_code >= 500:
        try:
            detail = str(answer.json().get("detail", ""))
        except ValueError:
            detail = answer.text
        FAILURES[f"{kind} {answer.status_code}: {detail[:200]}"] += 1
    return answer.status_code, time.perf_counter() - started


def accounts(base: Path, count: int) -> list[str]:
    """``count`` accounts (``load00`` ...) in the demo's account database, an API token each."""
    from cowbird.frontend.accounts import Accounts, Database, sqlite_url
    from cowbird.frontend.settings import DEFAULT_DATABASE_FILE

    database = Database(sqlite_url(base / DEFAULT_DATABASE_FILE))
    service = Accounts(database)
    tokens = []
    with database.session() as session:
        for k in range(count):
            user, _ = service.users.add(session, f"load{k:02d}", f"load{k:02d}@bench.localhost", "bench")
            tokens.append(service.tokens.create(session, user, "bench").secret)
    database.close()
    return tokens


async def run(url: str, clients: int, seconds: float, seed: int, think: float, kinds: list[tuple[str, float]],
              tokens: list[str] | None = None,
              vanish: float = 0.0) -> tuple[dict[str, Counter[int | str]], dict[str, list[float]]]:
    """``clients`` clients for ``seconds``; a share ``vanish`` of the requests other than cheap previews
    is given up by its client after 0.05 to 2 s (counted ``gone`` if no answer came by then)."""
    statuses: dict[str, Counter[int | str]] = defaultdict(Counter)
    took: dict[str, list[float]] = defaultdict(list)
    stop = time.monotonic() + seconds

    async def client_loop(number: int) -> None:
        rng = random.Random(seed + number)
        headers = {"Authorization": f"Bearer {tokens[number]}"} if tokens else {}
        async with httpx.AsyncClient(base_url=url, timeout=300, limits=httpx.Limits(max_connections=1),
                                     headers=headers) as client:
            while time.monotonic() < stop:
                kind = rng.choices([k for k, _ in kinds], [w for _, w in kinds])[0]
                patience = rng.uniform(0.05, 2.0) if kind != "cheap" and rng.random() < vanish else None
                try:
                    status, elapsed = await asyncio.wait_for(one(client, kind, rng), patience)
                except TimeoutError:
                    statuses[kind]["gone"] += 1  # the client closed its connection mid-request
                    continue
                except httpx.HTTPError as exc:
                    statuses[kind][type(exc).__name__] += 1
                    continue
                statuses[kind][status] += 1
                if status == 200:
                    took[kind].append(elapsed)
                if think:
                    await asyncio.sleep(think)

    await asyncio.gather(*(client_loop(k) for k in range(clients)))
    return statuses, took


async def alone(url: str, count: int, seed: int) -> list[float]:
    """Cheap previews one after another with nothing else running: what the machine gives one user."""
    rng = random.Random(seed)
    took: list[float] = []
    async with httpx.AsyncClient(base_url=url, timeout=300) as client:
        for _ in range(count):
            status, elapsed = await one(client, "cheap", rng)
            if status == 200:
                took.append(elapsed)
    return took


def busy_cpu() -> tuple[float, float]:
    """Busy and total CPU time of the machine so far (jiffies, from /proc/stat)."""
    fields = [float(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]
    return sum(fields) - idle, sum(fields)


def process_cpu() -> dict[str, float]:
    """CPU seconds used so far by this bench's child processes, by role (front end, node 1, node 2, ...)."""
    parents: dict[int, int] = {}
    used: dict[int, float] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        fields = text.rsplit(")", 1)[1].split()
        pid = int(stat.parent.name)
        parents[pid] = int(fields[1])
        used[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    mine = {os.getpid()}
    own = os.times()
    for _ in range(4):
        mine |= {pid for pid, parent in parents.items() if parent in mine}
    roles: dict[str, float] = {"load generator": own.user + own.system}
    named: dict[int, str] = {}
    for pid in sorted(mine - {os.getpid()}):  # parents before children (pids grow); workers take their parent's role
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        role = "node" if b"node" in command else "front end (background process)" if b"--background-socket" in \
            command else "front end" if b"serve" in command or b"demo" in command else \
            named.get(parents.get(pid, 0), "other")
        named[pid] = role
        roles[role] = roles.get(role, 0.0) + used[pid]
    return roles


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--think", type=float, default=0.0,
                        help="seconds a client waits after an answer before its next request (0: back to back)")
    parser.add_argument("--without", action="append", default=[], choices=[k for k, _ in KINDS if k != "cheap"],
                        help="leave a kind of request out (repeatable), to see what slows the cheap previews")
    parser.add_argument("--comparative", type=float, default=0.0, metavar="SHARE",
                        help="this share of the requests (taken from the cheap previews) word sketches, "
                             "thesaurus, trends and comparisons")
    parser.add_argument("--vanish", type=float, default=0.0, metavar="SHARE",
                        help="this share of the requests other than cheap previews is given up by its client "
                             "after 0.05-2 s (the connection closed mid-request)")
    parser.add_argument("--anonymous", action="store_true",
                        help="anonymous clients (per-address limits raised) instead of an account each")
    args = parser.parse_args()
    shares = dict(KINDS) | {"comparative": args.comparative, "cheap": dict(KINDS)["cheap"] - args.comparative}
    kinds = [(kind, shares[kind]) for kind, _ in KINDS if kind not in args.without and shares[kind] > 0]
    settings: dict[str, object] = {"node_connections": 64}
    if args.anonymous:
        settings |= {"anonymous_running_queries": 64, "anonymous_rows_per_day": 10**9}
    with tempfile.TemporaryDirectory(prefix="cowbird-mixed-") as folder, \
            running_demo(Path(folder), generated=True, settings=settings) as demo:
        tokens = None if args.anonymous else accounts(Path(folder), args.clients)
        httpx.get(f"{demo.url}/api/v1/query", params={"corpus": "web", "q": "the"}, timeout=120)  # warm up
        single = asyncio.run(alone(demo.url, 30, args.seed))
        busy_before, total_before = busy_cpu()
        roles_before = process_cpu()
        started = time.monotonic()
        statuses, took = asyncio.run(run(demo.url, args.clients, args.seconds, args.seed, args.think, kinds, tokens,
                                         args.vanish))
        elapsed = time.monotonic() - started
        load = os.getloadavg()
        busy_after, total_after = busy_cpu()
        roles_after = process_cpu()
        time.sleep(5)  # no client left: what still runs is work nobody waits for
        roles_rest = process_cpu()
    cheap = took["cheap"]
    total = sum(sum(c.values()) for c in statuses.values())
    errors = sum(n for c in statuses.values() for s, n in c.items()
                 if s != "gone" and (not isinstance(s, int) or s >= 500))
    print(f"\n{args.clients} clients ({args.think:g} s between requests), {elapsed:.0f} s, {total} requests "
          f"({total / elapsed:.1f}/s); 5xx or broken (not counting those given up): "
          f"{errors}\n")
    print("| kind | requests | statuses |")
    print("|---|---:|---|")
    for kind, _ in kinds:
        counts = statuses[kind]
        shown = ", ".join(f"{s}: {n}" for s, n in sorted(counts.items(), key=str))
        print(f"| {kind} | {sum(counts.values())} | {shown} |")
    for failure, count in FAILURES.most_common():
        print(f"- {count} × {failure}")
    print(f"\ncheap previews: p50 {percentile(cheap, 0.5) * 1000:.0f} ms, p95 {percentile(cheap, 0.95) * 1000:.0f} ms, "
          f"max {max(cheap, default=float('nan')) * 1000:.0f} ms over {len(cheap)} (target p95 ≤ 1,000 ms)")
    for kind in ("deep sort", "analysis", "comparative", "export", "heavy"):
        if took[kind]:
            print(f"{kind} answered 200: p50 {percentile(took[kind], 0.5) * 1000:,.0f} ms, "
                  f"p95 {percentile(took[kind], 0.95) * 1000:,.0f} ms over {len(took[kind])} "
                  f"({len(took[kind]) / elapsed:.2f}/s)")
    print(f"load average at the end: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min)")
    print(f"cheap previews alone (one client, nothing else running): p50 {percentile(single, 0.5) * 1000:.0f} ms, "
          f"p95 {percentile(single, 0.95) * 1000:.0f} ms over {len(single)}")
    print(f"CPU busy during the mixed run: {(busy_after - busy_before) / (total_after - total_before):.0%} of "
          f"{os.cpu_count()} cores; CPU seconds by process: " +
          ", ".join(f"{role} {roles_after[role] - roles_before.get(role, 0.0):.0f}" for role in sorted(roles_after)))
    print("CPU seconds in the 5 s after the last client: " +
          ", ".join(f"{role} {roles_rest[role] - roles_after.get(role, 0.0):.1f}" for role in sorted(roles_rest)
                    if role != "load generator"))


if __name__ == "__main__":
    main()
