"""Front ends scale out: every front-end process counts fair use and throttles in the account
database, so that several of them (``cowbird serve --workers N``, or hosts behind a proxy) share
one count, and the day's counts survive a restart.

First the counting itself, on SQLite and on a real PostgreSQL server, with two ``FairUse`` (or
``Throttle``) objects of their own engines standing for two processes, and threads running checks
at once: exact limits, no slot or row lost, a crashed process's queries expiring. Then three real
``cowbird serve`` processes on one PostgreSQL server over real HTTP: export rows exact across the
processes and across a restart, queries at once counted across processes, a browser session and
its CSRF token good on every process, failed logins and registrations throttled once."""

from __future__ import annotations

import concurrent.futures
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import func, insert, select, text

from cowbird.core.errors import TooManyRequests
from cowbird.frontend.accounts import Accounts, Database, sqlite_url
from cowbird.frontend.accounts.counting import Pruning
from cowbird.frontend.accounts.models import CounterLock, RunningQuery, ThrottleEvent
from cowbird.frontend.accounts.throttle import Throttle, registrations
from cowbird.frontend.fair_use import FairUse, Limits
from cowbird.frontend.viewer import ANONYMOUS, Viewer
from tests.accounts_support import postgres_server
from tests.clock import wait_until
from tests.cluster import TOKEN, start_node
from tests.frontend.conftest import Partitioned
from tests.support import free_ports

PASSWORD = "correct horse battery"
ABSTRACT = "We compare the use of modal verbs across genres of English web text for a corpus study. " * 3


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    with postgres_server() as url:
        yield url


def fresh(url: str) -> None:
    """An empty PostgreSQL schema."""
    database = Database(url)
    with database.engine.begin() as connection:
        connection.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
    database.close()


@pytest.fixture(params=["sqlite", "postgresql"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        address = sqlite_url(tmp_path / "accounts.sqlite3")
    else:
        address = request.getfixturevalue("postgres_url")
        fresh(address)
    database = Database(address)
    database.upgrade()
    database.close()
    return address


@pytest.fixture
def two(url: str) -> Iterator[tuple[Database, Database]]:
    """Two engines on one database: what two front-end processes have."""
    first, second = Database(url), Database(url)
    yield first, second
    first.close()
    second.close()


def fair_uses(databases: tuple[Database, Database], running: int = 2, rows: int = 25,
              seconds: float = 10.0) -> tuple[FairUse, FairUse]:
    limits = Limits(running, rows, seconds)
    one, other = (FairUse(anonymous=limits, user=limits, bulk=limits, database=db) for db in databases)
    return one, other


KEY = "address:10.0.0.1"


@pytest.mark.slow  # 2.4 s here (make quick leaves it out)
def test_export_rows_are_exact_across_processes(two: tuple[Database, Database]) -> None:
    """40 one-row exports at once, half through each process, against 25 rows a day: exactly 25
    are charged; a refund is seen by both."""
    first, second = fair_uses(two)

    def export(k: int) -> bool:
        try:
            (first, second)[k % 2].charge(ANONYMOUS, KEY, 1)
        except TooManyRequests:
            return False
        return True

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        charged = list(pool.map(export, range(40)))
    assert sum(charged) == 25 and first.rows_left(ANONYMOUS, KEY) == second.rows_left(ANONYMOUS, KEY) == 0
    with pytest.raises(TooManyRequests, match="more than the 0 rows left of today's budget") as refused:
        second.charge(ANONYMOUS, KEY, 1)
    assert 0 < int(refused.value.headers["Retry-After"]) <= 86_401
    first.refund(KEY, 5)
    assert second.rows_left(ANONYMOUS, KEY) == 5 and second.headers(ANONYMOUS, KEY)["X-Cowbird-Export-Rows-Left"] == "5"
    second.charge(ANONYMOUS, KEY, 5)
    first.refund(KEY, 1000)  # never below nothing exported
    assert second.usage(KEY).export_rows == 0
    assert first.rows_left(Viewer("ada"), "user:ada") == 25  # a key of its own


@pytest.mark.slow  # 1.6 s here (make quick leaves it out)
def test_queries_at_once_are_counted_across_processes(two: tuple[Database, Database]) -> None:
    """Threads of both processes asking for a place at once: exactly the limit get one; every place
    is given back; the node seconds held and spent are seen by both."""
    first, second = fair_uses(two, running=3)
    start, done = threading.Barrier(10), threading.Event()

    def run(k: int) -> bool:
        start.wait()
        try:
            with (first, second)[k % 2].running(ANONYMOUS, KEY, hold=1.0) as meter:
                meter.add(500.0)
                done.wait(10)
        except TooManyRequests as refused:
            assert "this address runs 3 queries at once already" in str(refused)
            return False
        return True

    with concurrent.futures.ThreadPoolExecutor(10) as pool:
        placed = [pool.submit(run, k) for k in range(10)]
        wait_until(lambda: sum(f.done() for f in placed) >= 7, 10, "seven runs turned away")
        assert second.usage(KEY).running == 3 and second.node_seconds_left(ANONYMOUS, KEY) == 7.0  # 3 held
        done.set()
        assert sum(f.result() for f in placed) == 3
    usage = first.usage(KEY)
    assert (usage.running, usage.held, usage.node_seconds) == (0, 0.0, 1.5)  # 3 × 0.5 s spent
    assert second.headers(ANONYMOUS, KEY)["X-Cowbird-Node-Seconds-Left"] == "8.5"


def test_a_crashed_process_stops_counting_when_its_queries_expire(two: tuple[Database, Database]) -> None:
    first, second = fair_uses(two, running=1)
    crashed = first.running(ANONYMOUS, KEY, seconds=0.5)
    crashed.__enter__()  # never left: its process died
    with pytest.raises(TooManyRequests, match="1 queries at once already"):
        with second.running(ANONYMOUS, KEY):
            pass

    def a_place() -> bool:
        try:
            with second.running(ANONYMOUS, KEY):
                return True
        except TooManyRequests:
            return False

    wait_until(a_place, timeout=10, what="the crashed process's place expired")  # after its 0.5 s
    with second.running(ANONYMOUS, KEY):
        assert second.usage(KEY).running == 1
    second._pruning = Pruning(every=0.0)  # prune at the next end
    with second.running(ANONYMOUS, KEY):
        pass
    with two[0].engine.connect() as connection:
        assert connection.execute(select(func.count()).select_from(RunningQuery)).scalar_one() == 0
    crashed.__exit__(None, None, None)  # (for the test's tidiness: it would have been the process's end)


def test_spent_node_time_refuses_in_every_process(two: tuple[Database, Database]) -> None:
    first, second = fair_uses(two, seconds=10.0)
    first.spend(KEY, 10.0)
    with pytest.raises(TooManyRequests, match="seconds of the nodes' time") as refused:
        with second.running(ANONYMOUS, KEY):
            pass
    assert int(refused.value.headers["Retry-After"]) > 0


def test_failed_logins_are_throttled_once_across_processes(two: tuple[Database, Database]) -> None:
    first, second = (Throttle(db) for db in two)
    keys = ["login:carol", "user:7"]
    for k in range(5):
        assert (first, second)[k % 2].attempt(keys, "10.0.0.1").wait == 0
    for throttle in (first, second):
        refused = throttle.attempt(keys, "10.0.0.1")
        assert 800 < refused.wait <= 901 and refused.events == ()
    other = second.attempt(keys, "10.0.0.2")  # another address: 6 of the account's 20
    assert other.wait == 0
    second.succeeded(other, keys, "10.0.0.2")  # the right password: it was no failure
    with two[0].engine.connect() as connection:
        counted = connection.execute(select(func.count()).select_from(ThrottleEvent)
                                     .where(ThrottleEvent.kind == "account", ThrottleEvent.key == "user:7"))
        assert counted.scalar_one() == 5


def test_attempts_at_once_get_exactly_the_limit(two: tuple[Database, Database]) -> None:
    """12 tries at once on one account from one address, through two processes: 5 are let through."""
    throttles = [Throttle(db) for db in two]
    start = threading.Barrier(12)

    def attempt(k: int) -> int:
        start.wait()
        return throttles[k % 2].attempt(["login:dave"], "10.0.0.9").wait

    with concurrent.futures.ThreadPoolExecutor(12) as pool:
        waits = list(pool.map(attempt, range(12)))
    assert waits.count(0) == 5 and all(800 < wait <= 901 for wait in waits if wait)


def test_registrations_per_address_across_processes_and_pruning(two: tuple[Database, Database]) -> None:
    first, second = (registrations(db) for db in two)
    for k in range(10):
        assert (first, second)[k % 2].take("10.0.0.3").wait == 0
    assert 3500 < second.take("10.0.0.3").wait <= 3601
    wrong = first.take("10.0.0.4")
    first.give_back(wrong)  # a form that was wrong does not count
    assert second.take("10.0.0.4").wait == 0
    # events older than the window, and locks unused for long, go when a process prunes
    with two[0].engine.begin() as connection:
        connection.execute(insert(ThrottleEvent).values(kind="registration", key="10.0.0.5", at=time.time() - 7200))
        connection.execute(insert(CounterLock).values(name="throttle:registration:10.0.0.5", at=0.0))
    second._pruning = Pruning(every=0.0)
    second.take("10.0.0.6")
    with two[0].engine.connect() as connection:
        keys = connection.execute(select(ThrottleEvent.key).where(ThrottleEvent.kind == "registration")).scalars()
        assert "10.0.0.5" not in set(keys)
        locks = connection.execute(select(CounterLock.name)).scalars().all()
        assert "throttle:registration:10.0.0.5" not in locks and "throttle:registration:10.0.0.6" in locks


# ------------------------------------------------------------------ real processes


class FrontEnds:
    """``cowbird serve`` processes on one configuration (one PostgreSQL account database)."""

    def __init__(self, base: Path, config: Path) -> None:
        self.base = base
        self.config = config
        self.ports = free_ports(3)
        self.processes: list[subprocess.Popen[bytes] | None] = [None, None, None]

    def url(self, k: int) -> str:
        return f"http://127.0.0.1:{self.ports[k]}"

    def start(self, *workers: int) -> None:
        """All three at once (they migrate the fresh database together); ``workers`` per process."""
        for k in range(3):
            log = open(self.base / f"front-{k}-{time.monotonic_ns()}.log", "wb")
            self.processes[k] = subprocess.Popen(
                [sys.executable, "-m", "cowbird", "serve", "--config", str(self.config), "--port", str(self.ports[k]),
                 "--workers", str(workers[k] if k < len(workers) else 1), "--log-level", "warning"],
                stdout=log, stderr=log, cwd=self.base)
        for k, process in enumerate(self.processes):
            assert process is not None
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, f"front end {k} exited with {process.returncode}"
                try:
                    if httpx.get(f"{self.url(k)}/api/v1/corpora", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert time.monotonic() < deadline, f"front end {k} did not answer within 60 s"
                time.sleep(0.1)

    def stop(self) -> None:
        for process in self.processes:
            if process is not None:
                process.terminate()
        for process in self.processes:
            if process is not None:
                try:
                    process.wait(15)
                except subprocess.TimeoutExpired:
                    process.kill()
        self.processes = [None, None, None]


METRICS_TOKEN = "metrics-token-0123456789abcdef"


def answered(metrics: str) -> float:
    """The front end's answers to ``/api/v1/corpora`` so far, from ``/metrics``."""
    found = re.search(r'^cowbird_requests_total\{route="/api/v1/corpora",service="frontend",status="200"\} (\S+)$',
                      metrics, re.M)
    assert found, metrics
    return float(found.group(1))


def csrf_of(page: httpx.Response) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page.text)
    assert found, page.text
    return found.group(1)


def login(client: httpx.Client, form_from: str, post_to: str, name: str, password: str = PASSWORD
          ) -> httpx.Response:
    """Log in with the form of one process, sent to another (the anonymous CSRF cookie is signed
    with the installation's secret, in the database)."""
    form = client.get(f"{form_from}/login")
    return client.post(f"{post_to}/login", data={"login": name, "password": password, "csrf": csrf_of(form)})


@pytest.mark.timeout(300)
@pytest.mark.e2e
@pytest.mark.slow
def test_three_front_ends_share_one_database(postgres_url: str, sample_parts: Partitioned, tmp_path: Path) -> None:
    fresh(postgres_url)
    token_file = tmp_path / "node.token"
    token_file.write_text(TOKEN)
    node, node_url = start_node(sample_parts.registry, token_file, "--log-level", "warning")
    nodes = "".join(f"{pid} = {json.dumps([node_url])}\n" for pid in sample_parts.ids)
    config = tmp_path / "cowbird.toml"
    (tmp_path / "metrics.token").write_text(METRICS_TOKEN)
    config.write_text(
        'metrics_token_file = "metrics.token"\n'
        f'[nodes]\ntoken_file = "node.token"\ntimeout = 4.0\nhealth_probe_timeout = 0.5\n\n'
        f'[limits]\ndeadline = 10.0\n\n'
        f'[fair_use]\nanonymous_running_queries = 1\nqueue_seconds = 0.5\n'
        f'user_running_queries = 100\nuser_rows_per_day = 10\n\n'
        f'[accounts]\ndatabase_url = "{postgres_url}"\n\n'
        f'[[corpora]]\nname = "sample"\nmanifest = "{sample_parts.manifest}"\n[corpora.nodes]\n{nodes}')
    fronts = FrontEnds(tmp_path, config)
    database = Database(postgres_url)
    try:
        fronts.start()
        accounts = Accounts(database)
        secrets = {}
        with database.session() as session:
            for name in ("ada", "bob", "carol"):
                user, _ = accounts.users.add(session, name, f"{name}@uni.example", "tests")
                accounts.users.set_password(session, user, PASSWORD, "tests")
                secrets[name] = accounts.tokens.create(session, user, "script").secret
        export = {"corpus": "sample", "q": "house"}

        def exported(k: int, name: str, rows: int) -> httpx.Response:
            return httpx.get(f"{fronts.url(k)}/api/v1/export", params={**export, "limit": rows},
                             headers={"Authorization": f"Bearer {secrets[name]}"}, timeout=30)

        # export rows: exact across processes, refused at the limit on any of them
        lefts = [exported(k, "ada", 3).headers["x-cowbird-export-rows-left"] for k in range(3)]
        assert lefts == ["7", "4", "1"]
        over = exported(0, "ada", 3)
        assert over.status_code == 429 and "the 1 rows left of today's budget" in over.json()["detail"]
        last = exported(1, "ada", 1)
        assert last.status_code == 200 and last.headers["x-cowbird-export-rows-left"] == "0"
        assert exported(2, "ada", 1).status_code == 429
        # 15 one-row exports at once, spread over the three processes, against 10 rows a day
        with concurrent.futures.ThreadPoolExecutor(15) as pool:
            statuses = sorted(pool.map(lambda k: exported(k % 3, "bob", 1).status_code, range(15)))
        assert statuses == [200] * 10 + [429] * 5

        # queries at once: the address's one place, held by a query on process 0 whose node hangs
        fair_use = FairUse(anonymous=Limits(1, 0), user=Limits(1, 0), bulk=Limits(1, 0), database=database)
        os.kill(node.pid, signal.SIGSTOP)
        try:
            hanging = concurrent.futures.ThreadPoolExecutor(1).submit(
                httpx.get, f"{fronts.url(0)}/api/v1/query", params={"corpus": "sample", "q": "house"}, timeout=30)
            wait_until(lambda: fair_use.usage("address:127.0.0.1").running > 0 or hanging.done(), 10,
                       "the query took its place")
            assert not hanging.done(), "the query never took its place"
            for k in (1, 2):
                busy = httpx.get(f"{fronts.url(k)}/api/v1/query", params={"corpus": "sample", "q": "house"},
                                 timeout=30)
                assert busy.status_code == 429 and busy.headers["retry-after"] == "2", busy.text
                assert "1 queries at once already" in busy.json()["detail"]
        finally:
            os.kill(node.pid, signal.SIGCONT)
        assert hanging.result().status_code != 429
        assert fair_use.usage("address:127.0.0.1").running == 0
        # a place held by yet another process (this one) counts in all three
        with fair_use.running(ANONYMOUS, "address:127.0.0.1"):
            for k in range(3):
                assert httpx.get(f"{fronts.url(k)}/api/v1/query", params=export, timeout=30).status_code == 429
        # the node's health is probed again after its cooldown: every front end uses it again
        wait_until(lambda: all(httpx.get(f"{fronts.url(k)}/api/v1/query", params=export, timeout=30).status_code
                               == 200 for k in range(3)), timeout=30, every=0.25, what="the node used again")

        # a browser session made on one process is good on every one, its CSRF token too
        with httpx.Client(timeout=30) as browser:
            assert login(browser, fronts.url(2), fronts.url(0), "carol").status_code == 303
            for k in range(3):
                page = browser.get(f"{fronts.url(k)}/account")
                assert page.status_code == 200 and "carol" in page.text, k
            made = browser.post(f"{fronts.url(2)}/account/tokens",
                                data={"name": "laptop", "csrf": csrf_of(browser.get(f"{fronts.url(1)}/account"))})
            assert made.status_code == 200 and '<pre class="token">' in made.text
            page = browser.get(f"{fronts.url(0)}/account")
            cookie = browser.cookies["cowbird_session"]
            assert browser.post(f"{fronts.url(1)}/logout", data={"csrf": csrf_of(page)}).status_code == 303
        with httpx.Client(timeout=30, cookies={"cowbird_session": cookie}) as replayed:
            gone = replayed.get(f"{fronts.url(2)}/account")  # the session ended on every process
            assert gone.status_code == 303 and gone.headers["location"] == "/login?next=/account"

        # failed logins: five spread over the three processes, the sixth refused on any
        with httpx.Client(timeout=30) as guesser:
            answers = [login(guesser, fronts.url((k + 1) % 3), fronts.url(k % 3), "dave", "wrong password!")
                       for k in range(5)]
            assert [a.status_code for a in answers] == [400] * 5
            for k in (2, 0, 1):
                refused = login(guesser, fronts.url(k), fronts.url(k), "dave", "wrong password!")
                assert refused.status_code == 429 and int(refused.headers["retry-after"]) > 0, k
            assert login(guesser, fronts.url(0), fronts.url(2), "Dave ", "wrong password!").status_code == 429

        # registrations: ten an hour from one address, over all processes
        with httpx.Client(timeout=30) as newcomer:
            def register(k: int, name: str) -> int:
                form = newcomer.get(f"{fronts.url(k)}/register")
                return newcomer.post(f"{fronts.url((k + 1) % 3)}/register", data={
                    "name": name, "email": f"{name}@uni.example", "affiliation": "Uni", "abstract": ABSTRACT,
                    "password": PASSWORD, "csrf": csrf_of(form)}).status_code

            assert [register(k % 3, f"student{k}") for k in range(11)] == [200] * 10 + [429]

        # a restart (process 0 now with two workers) forgets nothing of the day
        fronts.stop()
        fronts.start(2)
        for k in range(3):
            again = httpx.get(f"{fronts.url(k)}/api/v1/query", params=export, timeout=30,
                              headers={"Authorization": f"Bearer {secrets['ada']}"})
            assert again.status_code == 200 and again.headers["x-cowbird-export-rows-left"] == "0", k
            assert exported(k, "ada", 1).status_code == 429
            assert exported(k, "bob", 1).status_code == 429
            assert login(httpx.Client(timeout=30), fronts.url(k), fronts.url(k), "dave",
                         "wrong password!").status_code == 429
        # the two workers of process 0 answer /metrics alike: the sum of both (multiprocess mode)
        for _ in range(10):
            httpx.get(f"{fronts.url(0)}/api/v1/corpora", timeout=30)
        counts = {answered(httpx.get(f"{fronts.url(0)}/metrics", timeout=30,
                                     headers={"Authorization": f"Bearer {METRICS_TOKEN}"}).text)
                  for _ in range(6)}
        assert len(counts) == 1 and counts.pop() >= 11
    finally:
        fronts.stop()
        node.terminate()
        node.wait(10)
        database.close()
