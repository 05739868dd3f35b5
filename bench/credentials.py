"""What the credential rule and the categorised lines found before the first byte cost (issue 65).

The platform as ``make demo`` runs it (generated web corpus, two node processes, a front end with its
background process) answers, one request at a time: a frequency list anonymously and with an API
token (the token is now checked in the interactive process before the request is forwarded, then
again in the background process: one more look-up in the account database), a bad credential (401
before anything is forwarded), and an export of the categorised lines only (``only_categorised=1``:
every hit passes by before the first byte now, so the time to the headers is the whole scan) beside
the export of the same hits (by an account with the api_bulk right). Printed: the median wall time of
``--repeat`` requests each.

    .venv/bin/python bench/credentials.py [--repeat 30] [--tokens 2000000]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import running_demo


def bulk_token(database_file: Path) -> str:
    """An API token of a new account with the api_bulk right: the exports repeated here would use up an
    ordinary account's rows of the day."""
    from cowbird.frontend.accounts import Accounts, Database, sqlite_url

    database = Database(sqlite_url(database_file))
    accounts = Accounts(database)
    try:
        with database.session() as session:
            user, _ = accounts.users.add(session, "bench", "bench@uni.example", "bench")
            accounts.users.grant(session, user, "api_bulk", "bench")
            return accounts.tokens.create(session, user, "bench").secret
    finally:
        database.close()


def median_ms(repeat: int, call: httpx.Client, path: str, params: Mapping[str, str | int],
              headers: dict[str, str] | None = None, first_byte: bool = False) -> tuple[float, int]:
    """The median milliseconds to the whole answer (or, ``first_byte``, to its headers), and its status."""
    times, status = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        with call.stream("GET", path, params=params, headers=headers) as response:
            status = response.status_code
            if first_byte:
                times.append(time.perf_counter() - start)
            response.read()
        if not first_byte:
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000, status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--tokens", type=int, default=2_000_000, help="tokens of the generated web corpus")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, running_demo(Path(folder), generated=True,
                                                               web_tokens=args.tokens) as demo:
        token = bulk_token(demo.base / "cowbird-accounts.sqlite3")
        auth = {"Authorization": f"Bearer {token}"}
        with httpx.Client(base_url=demo.url, timeout=300) as http:
            frequency: dict[str, str | int] = {"corpus": "web", "q": "house", "by": "word", "on": "matchend[1]"}
            http.get("/api/v1/frequency", params=frequency)  # warm
            rows = [("frequency, anonymous", *median_ms(args.repeat, http, "/api/v1/frequency", frequency)),
                    ("frequency, with an API token", *median_ms(args.repeat, http, "/api/v1/frequency", frequency,
                                                                auth)),
                    ("frequency, 'Bearer ' with no token (401)",
                     *median_ms(args.repeat, http, "/api/v1/frequency", frequency, {"Authorization": "Bearer"}))]
            saved = http.post("/api/v1/saved", headers=auth, json={"name": "bench", "url": "/?corpus=web&q=house"})
            total = http.get("/api/v1/query", params={"corpus": "web", "q": "house"}).json()["total"]
            last = http.get("/api/v1/query", params={"corpus": "web", "q": "house", "offset": total - 1,
                                                     "limit": 1}).json()["hits"][0]
            http.post(f"/api/v1/saved/{saved.json()['id']}/categories", headers=auth,
                      json={"position": last["position"], "matchend": last["matchend"], "category": 1})
            export: dict[str, str | int] = {"corpus": "web", "q": "house", "limit": 10_000}
            only: dict[str, str | int] = {"corpus": "web", "q": "house", "categories": saved.json()["id"],
                                          "only_categorised": 1}
            for name, params in ((f"export of the first {min(total, 10_000):,} of {total:,} hits", export),
                                 (f"export of 1 categorised line, the last of {total:,} hits", only)):
                rows.append((f"{name}: to the headers", *median_ms(args.repeat, http, "/api/v1/export", params, auth,
                                                                   first_byte=True)))
                rows.append((f"{name}: whole", *median_ms(args.repeat, http, "/api/v1/export", params, auth)))
    print(f"generated web corpus, {args.tokens:,} tokens; median of {args.repeat} requests, one at a time\n")
    print("| request | status | median ms |\n|---|---|---|")
    for name, ms, status in rows:
        print(f"| {name} | {status} | {ms:.1f} |")


if __name__ == "__main__":
    main()
