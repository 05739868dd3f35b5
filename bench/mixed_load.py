"""Mixed load on the demo: every cheap request stays quick while heavy work runs beside it (issue 69).

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
machine plays 32 people).

Before the load each kind but the heavy one is timed alone (``--alone`` requests, one after the
other, after three to warm the caches). Printed, as Markdown: per kind its requests, statuses and
the classes its answers said (``X-Cowbird-Class``), its median alone, its p50 and p95 under load
and issue 69's target for its p95 (cheap previews ≤ 300 ms at 32 users, ≤ 150 ms at 8; any kind
whose median alone is ≤ 100 ms ≤ 1 s; analyses and exports ≤ 3× their time alone + 1 s); the
answers that left a partition out (none is the target) and the 5xx (none); the cores' busy share
sampled every 0.5 s while the clients ran (≥ 90 %); and the node seconds each user was charged
(the fair-use counts) with Jain's fairness index over the users.

    .venv/bin/python bench/mixed_load.py [--clients 32] [--seconds 60] [--think 0] [--without heavy ...] [--anonymous]
        [--comparative 0.1] [--vanish 0.3] [--alone 10]
"""
from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
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
REFUSALS: Counter[str] = Counter()
"""The 4xx answers by kind, status and the first words of their detail."""
PARTIAL: Counter[str] = Counter()
"""The 200 answers by kind that left a partition out (a partition failed)."""
WAITS: defaultdict[str, list[float]] = defaultdict(list)
"""The seconds each 200 answer says its work waited in the front end before it began (``X-Cowbird-Wait-Ms``)."""
REASONS: Counter[str] = Counter()
"""What the partitions left out of partial answers said, by kind, class and the answer's time."""
CLASSES: Counter[tuple[str, str]] = Counter()
"""The 200 answers by kind and by the class they say they ran in (``X-Cowbird-Class``)."""
ALONE_KINDS = ("cheap", "deep sort", "analysis", "export")
"""The kinds timed alone, one request after the other, before the load (heavy ones take 0.5-47 s each)."""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))] if ordered else float("nan")


async def one(client: httpx.AsyncClient, kind: str, rng: random.Random) -> tuple[int, float]:
    started = time.perf_counter()
    family = kind
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
    if answer.status_code >= 400:  # the 5xx by kind, and the refusals by family
        try:
            detail = str(answer.json().get("detail", ""))
        except ValueError:
            detail = answer.text
        if answer.status_code >= 500:
            FAILURES[f"{kind} {answer.status_code}: {detail[:200]}"] += 1
        else:
            REFUSALS[f"{family} {answer.status_code}: {detail[:90]}"] += 1
    elif answer.status_code == 200:
        CLASSES[(family, answer.headers.get("x-cowbird-class", "?"))] += 1
        with contextlib.suppress(ValueError):
            WAITS[family].append(float(answer.headers.get("x-cowbird-wait-ms", "nan")) / 1000)
        if answer.headers.get("content-type", "").startswith("application/json"):
            parts = answer.json().get("partitions") or []
            failed = [p for p in parts if isinstance(p, dict) and p.get("status") == "failed"]
            if failed:
                PARTIAL[family] += 1
                for part in failed:
                    REASONS[f"{family} ({answer.headers.get('x-cowbird-class', '?')}, "
                            f"{time.perf_counter() - started:.0f} s): {str(part.get('error'))[:160]}"] += 1
    return answer.status_code, time.perf_counter() - started


def accounts(base: Path, count: int, solo: bool = False) -> list[str]:
    """``count`` accounts (``load00`` ...; ``solo``: one more, ``solo``, last) in the demo's account
    database, an API token each."""
    from cowbird.frontend.accounts import Accounts, Database, sqlite_url
    from cowbird.frontend.settings import DEFAULT_DATABASE_FILE

    database = Database(sqlite_url(base / DEFAULT_DATABASE_FILE))
    service = Accounts(database)
    tokens = []
    with database.session() as session:
        for name in [f"load{k:02d}" for k in range(count)] + (["solo"] if solo else []):
            user, _ = service.users.add(session, name, f"{name}@bench.localhost", "bench")
            tokens.append(service.tokens.create(session, user, "bench").secret)
    database.close()
    return tokens


async def run(url: str, clients: int, seconds: float, seed: int, think: float, kinds: list[tuple[str, float]],
              tokens: list[str] | None = None, vanish: float = 0.0,
              sampler: Sampler | None = None) -> tuple[dict[str, Counter[int | str]], dict[str, list[float]]]:
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
            if think:  # people do not all come in the same instant: arrivals spread over one pause
                await asyncio.sleep(rng.uniform(0, think))
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
                if think:  # people do not think in step: a random pause of that mean (no waves of 32 at once)
                    await asyncio.sleep(rng.expovariate(1 / think))

    finished = asyncio.Event()
    watcher = asyncio.ensure_future(sampler.run(finished)) if sampler is not None else None
    await asyncio.gather(*(client_loop(k) for k in range(clients)))
    finished.set()
    if watcher is not None:
        await watcher
    return statuses, took


async def alone(url: str, count: int, seed: int, kind: str = "cheap", token: str | None = None) -> list[float]:
    """Requests of ``kind`` one after another with nothing else running: what the machine gives one user."""
    rng = random.Random(seed)
    took: list[float] = []
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(base_url=url, timeout=300, headers=headers) as client:
        for _ in range(count):
            status, elapsed = await one(client, kind, rng)
            if status == 200:
                took.append(elapsed)
    return took


class Sampler:
    """The machine's busy share, sampled every ``every`` seconds while the load runs (``busy_cpu``)."""

    def __init__(self, every: float = 0.5) -> None:
        self.every = every
        self.shares: list[float] = []

    async def run(self, until: asyncio.Event) -> None:
        before = busy_cpu()
        while not until.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(until.wait(), self.every)
            after = busy_cpu()
            if after[1] > before[1]:
                self.shares.append((after[0] - before[0]) / (after[1] - before[1]))
            before = after


def node_seconds_by_user(base: Path) -> dict[str, float]:
    """The node seconds each bench account was charged today (the fair-use counts, ``fair_use_days``)."""
    import sqlite3

    from cowbird.frontend.settings import DEFAULT_DATABASE_FILE

    with contextlib.closing(sqlite3.connect(base / DEFAULT_DATABASE_FILE)) as db:
        rows = db.execute("SELECT key, SUM(node_seconds) FROM fair_use_days GROUP BY key").fetchall()
    return {str(key): float(seconds) for key, seconds in rows if "load" in str(key) and "solo" not in str(key)}


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
                        help="mean seconds a client waits after an answer before its next request, drawn at "
                             "random (exponential) for each (0: back to back)")
    parser.add_argument("--without", action="append", default=[], choices=[k for k, _ in KINDS if k != "cheap"],
                        help="leave a kind of request out (repeatable), to see what slows the cheap previews")
    parser.add_argument("--comparative", type=float, default=0.0, metavar="SHARE",
                        help="this share of the requests (taken from the cheap previews) word sketches, "
                             "thesaurus, trends and comparisons")
    parser.add_argument("--vanish", type=float, default=0.0, metavar="SHARE",
                        help="this share of the requests other than cheap previews is given up by its client "
                             "after 0.05-2 s (the connection closed mid-request)")
    parser.add_argument("--alone", type=int, default=10, help="requests of each kind timed alone before the load")
    parser.add_argument("--setting", action="append", default=[], metavar="NAME=VALUE",
                        help="a front-end setting of the demo (repeatable), such as interactive_seconds=0.1")
    parser.add_argument("--anonymous", action="store_true",
                        help="anonymous clients (per-address limits raised) instead of an account each")
    args = parser.parse_args()
    shares = dict(KINDS) | {"comparative": args.comparative, "cheap": dict(KINDS)["cheap"] - args.comparative}
    kinds = [(kind, shares[kind]) for kind, _ in KINDS if kind not in args.without and shares[kind] > 0]
    settings: dict[str, object] = {"node_connections": 64}
    if args.anonymous:
        settings |= {"anonymous_running_queries": 64, "anonymous_rows_per_day": 10**9}
    for setting in args.setting:
        name, _, value = setting.partition("=")
        settings[name.strip()] = json.loads(value)
    with tempfile.TemporaryDirectory(prefix="cowbird-mixed-") as folder, \
            running_demo(Path(folder), generated=True, settings=settings) as demo:
        tokens = None if args.anonymous else accounts(Path(folder), args.clients, solo=True)
        solo = tokens.pop() if tokens else None  # the account that times each kind alone
        httpx.get(f"{demo.url}/api/v1/query", params={"corpus": "web", "q": "the"}, timeout=120)  # warm up
        singles = {kind: asyncio.run(alone(demo.url, 3, args.seed, kind, solo)) for kind in ALONE_KINDS
                   if kind in dict(kinds)}  # warm: the caches as under load
        singles = {kind: asyncio.run(alone(demo.url, args.alone, args.seed + 1, kind, solo)) for kind in singles}
        CLASSES.clear()
        PARTIAL.clear()
        REASONS.clear()
        WAITS.clear()
        REFUSALS.clear()
        busy_before, total_before = busy_cpu()
        roles_before = process_cpu()
        charged_before = node_seconds_by_user(Path(folder)) if tokens else {}
        sampler = Sampler()
        started = time.monotonic()
        statuses, took = asyncio.run(run(demo.url, args.clients, args.seconds, args.seed, args.think, kinds, tokens,
                                         args.vanish, sampler))
        elapsed = time.monotonic() - started
        load = os.getloadavg()
        busy_after, total_after = busy_cpu()
        roles_after = process_cpu()
        charged = node_seconds_by_user(Path(folder)) if tokens else {}
        time.sleep(5)  # no client left: what still runs is work nobody waits for
        roles_rest = process_cpu()
    report(args, kinds, statuses, took, singles, elapsed, sampler, {
        key: seconds - charged_before.get(key, 0.0) for key, seconds in charged.items()})
    print(f"load average at the end: {load[0]:.1f} (1 min), {load[1]:.1f} (5 min)")
    print(f"CPU busy during the mixed run: {(busy_after - busy_before) / (total_after - total_before):.0%} of "
          f"{os.cpu_count()} cores; CPU seconds by process: " +
          ", ".join(f"{role} {roles_after[role] - roles_before.get(role, 0.0):.0f}" for role in sorted(roles_after)))
    print("CPU seconds in the 5 s after the last client: " +
          ", ".join(f"{role} {roles_rest[role] - roles_after.get(role, 0.0):.1f}" for role in sorted(roles_rest)
                    if role != "load generator"))


def report(args: argparse.Namespace, kinds: list[tuple[str, float]], statuses: dict[str, Counter[int | str]],
           took: dict[str, list[float]], singles: dict[str, list[float]], elapsed: float, sampler: Sampler,
           charged: dict[str, float]) -> None:
    """The run's figures against issue 69's targets, as Markdown."""
    total = sum(sum(c.values()) for c in statuses.values())
    errors = sum(n for c in statuses.values() for s, n in c.items()
                 if s != "gone" and (not isinstance(s, int) or s >= 500))
    print(f"\n{args.clients} clients ({args.think:g} s between requests), {elapsed:.0f} s, {total} requests "
          f"({total / elapsed:.1f}/s); 5xx or broken (not counting those given up): {errors}; "
          f"partial answers (a partition left out): {sum(PARTIAL.values())}\n")
    print("| kind | requests | statuses | classes of the 200s | alone p50 | under load p50 / p95 | target p95 "
          "| front-end wait p50 / p95 |")
    print("|---|---:|---|---|---:|---:|---|---:|")
    for kind, _ in kinds:
        counts = statuses[kind]
        shown = ", ".join(f"{s}: {n}" for s, n in sorted(counts.items(), key=str))
        classes = ", ".join(f"{c}: {n}" for (k, c), n in sorted(CLASSES.items()) if k == kind)
        single = percentile(singles.get(kind, []), 0.5)
        under = took[kind]
        target = target_of(kind, single, args.clients)
        met = "" if target is None or not under else " met" if percentile(under, 0.95) <= target else " missed"
        print(f"| {kind} | {sum(counts.values())} | {shown} | {classes} | {_ms(single)} | "
              f"{_ms(percentile(under, 0.5))} / {_ms(percentile(under, 0.95))} | "
              f"{'—' if target is None else _ms(target)}{met} | "
              f"{_ms(percentile(WAITS[kind], 0.5))} / {_ms(percentile(WAITS[kind], 0.95))} |")
    for failure, count in FAILURES.most_common():
        print(f"- {count} × {failure}")
    for refusal, count in REFUSALS.most_common(6):
        print(f"- {count} × {refusal}")
    for kind, count in PARTIAL.most_common():
        print(f"- {count} partial answer(s) of kind {kind}")
    for reason, count in REASONS.most_common(6):
        print(f"  - {count} × {reason}")
    shares = sampler.shares
    if shares:
        print(f"\ncores busy while the load ran (every {sampler.every:g} s, every client with a request at work): "
              f"median {percentile(shares, 0.5):.0%}, p10 {percentile(shares, 0.1):.0%}, "
              f"mean {sum(shares) / len(shares):.0%} (target ≥ 90 %)")
    if charged:
        seconds = sorted(charged.values())
        fairness = sum(seconds) ** 2 / (len(seconds) * sum(s * s for s in seconds)) if any(seconds) else 1.0
        print(f"node seconds per user: min {seconds[0]:.1f}, median {percentile(seconds, 0.5):.1f}, "
              f"max {seconds[-1]:.1f} over {len(seconds)} users; Jain's fairness index {fairness:.2f} (1: equal)")


def target_of(kind: str, alone_p50: float, clients: int) -> float | None:
    """Issue 69's p95 target of a kind under load (seconds), from its median alone."""
    if kind == "cheap":
        return 0.3 if clients >= 32 else 0.15
    if alone_p50 != alone_p50:  # not timed alone
        return None
    if kind in ("analysis", "export"):
        return max(3 * alone_p50 + 1.0, 1.0 if alone_p50 <= 0.1 else 0.0)
    return 1.0 if alone_p50 <= 0.1 else None


def _ms(seconds: float) -> str:
    return "—" if seconds != seconds else f"{seconds * 1000:,.0f} ms"


if __name__ == "__main__":
    main()
