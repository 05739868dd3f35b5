"""Previews under a connection flood and under an estimate flood (issue 63, findings 3 and 6).

The demo's processes (the generated web corpus in two partitions on two node processes; the front
end, ``--workers``), each run started fresh. Three phases, each ``--seconds`` long, while one other
client (127.0.0.3) sends cheap previews one after the other, each query its own (no cache):

- *quiet*: nothing else;
- *connection flood*: one address (127.0.0.2; every address of 127.0.0.0/8 is on loopback) holds
  ``--front`` connections to the front end and ``--node`` to each node, each with a request whose
  headers never end, opened again as the servers close them;
- *estimate flood*: ``--flooders`` anonymous addresses (127.0.1.1 ...) each send ``/api/v1/estimate``
  of a query of some cost, two at a time (anonymous fair use runs two queries of an address at once),
  one after the other.

Printed: per phase, the previews' success share (200 and ``complete``), their latency (median, 90th
percentile, most) and how many took more than a second; for the estimate flood, how the estimates
were answered. Run it inside a network namespace with only loopback; it measures the cowbird the
venv imports (bench/RESULTS.md says how the before and after trees were run):

    unshare --net sh -c 'ip link set lo up && .venv/bin/python bench/connections.py [--seconds 15]'
"""

from __future__ import annotations

import argparse
import collections
import itertools
import selectors
import socket
import statistics
import sys
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import running_demo

ESTIMATED = '[word=".*e.*"] []{0,3} [pos="NN.*"]'
"""The flood's estimate: a regular expression over the lexicon and a gap, a sample to look at per partition."""
ASKED = itertools.count()


def previews(url: str, stop: threading.Event) -> list[tuple[bool, float]]:
    """Cheap previews from 127.0.0.3 until ``stop``: whether each succeeded, and its seconds."""
    found = []
    with httpx.Client(transport=httpx.HTTPTransport(local_address="127.0.0.3"), timeout=60) as client:
        while not stop.is_set():
            query = f'[word="house"] [word!="never-{next(ASKED)}"]'
            started = time.monotonic()
            try:
                answer = client.get(f"{url}/api/v1/query", params={"corpus": "web", "q": query, "syntax": "cqp"})
                ok = answer.status_code == 200 and answer.json().get("complete") is True
            except httpx.HTTPError:
                ok = False
            found.append((ok, time.monotonic() - started))
            time.sleep(0.1)
    return found


def summary(name: str, found: list[tuple[bool, float]]) -> str:
    seconds = sorted(s for _, s in found)
    share = sum(ok for ok, _ in found) / len(found) if found else 0.0
    p90 = seconds[min(len(seconds) - 1, int(len(seconds) * 0.9))]
    return (f"| {name} | {len(found)} | {share:.0%} | {statistics.median(seconds) * 1000:,.0f} | "
            f"{p90 * 1000:,.0f} | {seconds[-1] * 1000:,.0f} | {sum(s > 1 for s in seconds)} |")


def hold(ports: list[tuple[int, int]], stop: threading.Event) -> collections.Counter[str]:
    """Connections from 127.0.0.2 with half-sent requests, ``count`` to each port, opened again as
    they are closed, until ``stop``; how the servers answered them."""
    answered: collections.Counter[str] = collections.Counter()
    selector = selectors.DefaultSelector()
    open_to = {port: 0 for port, _ in ports}

    def top_up() -> None:
        for port, count in ports:
            while open_to[port] < count and not stop.is_set():
                sock = socket.socket()
                sock.bind(("127.0.0.2", 0))
                sock.settimeout(5)
                try:
                    sock.connect(("127.0.0.1", port))
                    sock.sendall(b"GET /api/v1/corpora HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: a")
                except OSError:
                    sock.close()
                    answered["connect failed"] += 1
                    continue
                sock.setblocking(False)
                selector.register(sock, selectors.EVENT_READ, (port, bytearray()))
                open_to[port] += 1

    top_up()
    while not stop.is_set():
        for key, _ in selector.select(timeout=0.2):
            sock = key.fileobj
            assert isinstance(sock, socket.socket)
            port, got = key.data
            try:
                chunk = sock.recv(65536)
            except OSError:
                chunk = b""
            if chunk:
                got += chunk
                continue
            answered[bytes(got[:12]).decode(errors="replace") or "closed"] += 1
            selector.unregister(sock)
            sock.close()
            open_to[port] -= 1
        top_up()
    for key in list(selector.get_map().values()):
        key.fileobj.close()  # type: ignore[union-attr]
    selector.close()
    return answered


def estimates(url: str, address: str, stop: threading.Event, answered: collections.Counter[int]) -> None:
    with httpx.Client(transport=httpx.HTTPTransport(local_address=address), timeout=60) as client:
        while not stop.is_set():
            try:
                status = client.get(f"{url}/api/v1/estimate",
                                    params={"corpus": "web", "q": ESTIMATED, "syntax": "cqp"}).status_code
            except httpx.HTTPError:
                status = 0
            answered[status] += 1
            if status == 429:
                time.sleep(0.05)  # a flood: it asks again at once, it does not wait the Retry-After


def phase(url: str, seconds: float, flood: threading.Thread | None, stop: threading.Event) -> list[tuple[bool, float]]:
    if flood is not None:
        flood.start()
        time.sleep(1.0)  # the flood is on before the first preview
    done = threading.Event()
    timer = threading.Timer(seconds, done.set)
    timer.start()
    found = previews(url, done)
    stop.set()
    if flood is not None:
        flood.join()
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--tokens", type=int, default=300_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--front", type=int, default=4_500)
    parser.add_argument("--node", type=int, default=2_300)
    parser.add_argument("--flooders", type=int, default=40)
    parser.add_argument("--base", type=Path, default=ROOT / "bench" / "data" / "connections-demo")
    args = parser.parse_args()
    args.base.mkdir(parents=True, exist_ok=True)
    rows = []
    with running_demo(args.base, generated=True, web_tokens=args.tokens, workers=args.workers) as demo:
        warm = threading.Event()
        threading.Timer(2.0, warm.set).start()
        previews(demo.url, warm)  # warm up
        rows.append(summary("quiet", phase(demo.url, args.seconds, None, threading.Event())))

        stop = threading.Event()
        held: list[collections.Counter[str]] = []
        ports = [(demo.port, args.front)] + [(port, args.node) for port in demo.node_ports]
        flood = threading.Thread(target=lambda: held.append(hold(ports, stop)))
        rows.append(summary(f"{args.front:,} connections to the front end, {args.node:,} to each node",
                            phase(demo.url, args.seconds, flood, stop)))

        stop = threading.Event()
        answered: collections.Counter[int] = collections.Counter()
        flooders = [threading.Thread(target=estimates, args=(demo.url, f"127.0.1.{k // 2 + 1}", stop, answered))
                    for k in range(2 * args.flooders)]

        def flood_estimates() -> None:
            for thread in flooders:
                thread.start()
            stop.wait()
            for thread in flooders:
                thread.join()

        starter = threading.Thread(target=flood_estimates)
        rows.append(summary(f"{args.flooders} addresses sending estimates",
                            phase(demo.url, args.seconds, starter, stop)))
    print("| phase | previews | succeeded | median ms | p90 ms | most ms | over 1 s |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    print(f"\nflood connections answered: {dict(held[0]) if held else {}}")
    print(f"estimates answered: {dict(sorted(answered.items()))}")


if __name__ == "__main__":
    main()
