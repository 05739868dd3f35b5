"""What fair use charges for work a client leaves (issue 63, finding 4).

One node process serving the 60,000-token synthetic corpus in three partitions, and the front end
(``cowbird serve``, with its background process). For the frequency and collocation analyses of a
heavy query without hits: the node seconds charged to the client's address when it reads the
streamed answer (``stream=1``) for 2 s and leaves, and when it takes the whole answer unstreamed;
the node's CPU time meanwhile. For an export of 10,000 rows as XLSX and as TSV: the rows charged
when the client reads 64 KB, looks 0.3 s, and closes the connection with the rest unread (a reset).
Charges are read from the account database.

    unshare --net sh -c 'ip link set lo up && .venv/bin/python bench/charges.py'

Run the code before a change with ``PYTHONPATH`` set to another work tree's package folders
(``query_lang:frontend_api:backend_node:tools/calf``) and that tree (for ``tests``); the processes
inherit it.
"""

from __future__ import annotations

import socket
import sqlite3
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from urllib.parse import urlencode

import httpx

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from cowbird.frontend.settings import DEFAULT_DATABASE_FILE  # noqa: E402
from cowbird.store import Encoder  # noqa: E402
from tests.cluster import Cluster, comes_to_rest, cpu_seconds  # noqa: E402
from tests.support import synthetic_options  # noqa: E402

LEFT_AFTER = 2.0
"""Seconds the client reads a streamed analysis before it leaves."""
HEAVY = '[] []{{0,{}}} [word="w7"] [word="w7"]'
"""No hits, but every start walks the repetition: seconds of node time per partition."""


def charged(base: Path) -> tuple[int, float]:
    """The export rows and node seconds charged today (one address, the only client)."""
    with closing(sqlite3.connect(base / DEFAULT_DATABASE_FILE)) as database:
        row = database.execute("SELECT export_rows, node_seconds FROM fair_use_days").fetchone()
    return (0, 0.0) if row is None else (int(row[0]), float(row[1]))


def left_stream(cluster: Cluster, path: str, params: dict[str, object]) -> None:
    """Read the streamed answer for ``LEFT_AFTER`` seconds, then close the connection."""
    with closing(socket.socket()) as client:
        client.connect(("127.0.0.1", cluster.port))
        client.sendall(f"GET {path}?{urlencode(params)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        until = time.monotonic() + LEFT_AFTER
        while (left := until - time.monotonic()) > 0:
            client.settimeout(left)
            try:
                if not client.recv(65536):
                    break
            except TimeoutError:
                break


def analyses(cluster: Cluster, base: Path) -> None:
    node = cluster.process(0).pid
    for bound, path, extra in [(300, "/api/v1/frequency", {"by": "word"}),
                               (302, "/api/v1/collocations", {"attribute": "word"})]:
        params = {"corpus": "big", "syntax": "cqp", **extra}
        comes_to_rest(node, 30)
        seconds, cpu = charged(base)[1], cpu_seconds(node)
        left_stream(cluster, path, {**params, "q": HEAVY.format(bound), "stream": 1})
        comes_to_rest(node, 30)
        time.sleep(1.0)
        print(f"{path} stream=1, left after {LEFT_AFTER:g} s: charged {charged(base)[1] - seconds:.1f} s, "
              f"node CPU {cpu_seconds(node) - cpu:.1f} s", flush=True)
        seconds, cpu, started = charged(base)[1], cpu_seconds(node), time.monotonic()
        whole = httpx.get(cluster.url + path, params={**params, "q": HEAVY.format(bound + 1)}, timeout=120)
        print(f"{path} unstreamed, whole ({whole.status_code} in {time.monotonic() - started:.1f} s): charged "
              f"{charged(base)[1] - seconds:.1f} s, node CPU {cpu_seconds(node) - cpu:.1f} s", flush=True)


def downloads(cluster: Cluster, base: Path) -> None:
    for format in ["xlsx", "tsv"]:
        params: dict[str, str | int] = {"corpus": "big", "q": "[]", "syntax": "cqp", "limit": 10_000, "context": 30,
                                        "format": format}
        size = len(httpx.get(cluster.url + "/api/v1/export", params=params, timeout=60).content)
        rows = charged(base)[0]
        with closing(socket.socket()) as client:
            client.connect(("127.0.0.1", cluster.port))
            client.sendall(f"GET /api/v1/export?{urlencode(params)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            received = b""
            while len(received) < 65536:
                received += client.recv(65536)
            time.sleep(0.3)
            client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        time.sleep(3.0)
        print(f"export {format}, 10,000 rows ({size:,} bytes), left after {len(received):,} bytes: charged "
              f"{charged(base)[0] - rows:,} rows", flush=True)


def main() -> None:
    base = Path(tempfile.mkdtemp(prefix="cowbird-charges-"))
    encoded = Encoder(synthetic_options(base, partition_tokens=20_000)).run()
    assert encoded.manifest is not None
    cluster = Cluster(base, base / "registry", encoded.manifest, "big", [[p.id for p in encoded.partitions]],
                      deadline=60.0, node_timeout=60.0, anonymous_rows_per_day=10**6).start()
    try:
        analyses(cluster, base)
        downloads(cluster, base)
    finally:
        cluster.close()


if __name__ == "__main__":
    main()
