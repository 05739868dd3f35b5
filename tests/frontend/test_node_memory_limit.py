"""No query takes a node down (issue 63, finding 1): the demo's processes, the nodes under a 1-GiB
memory budget and an OS limit on their data of 3 GiB (``memory_limit``, set by ``cowbird node serve``:
the budget beyond the idle node's 300-400 MB of data, and room for what a step allocates past it).
The query that once grew a node to 10.7 GB until the kernel killed it is refused (its estimate could
not bound it) or stopped within the budget; a burst of four heavy label queries past the budget
answers the oldest rather than none; no node process is killed."""

from __future__ import annotations

import concurrent.futures
import os
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cowbird.commands.demo import DemoStack
from tests.loopback import require_loopback_namespace
from tests.support import memory_peaks, running_demo

# heavy load on real processes: only loopback exists
pytestmark = [pytest.mark.e2e, pytest.mark.load, pytest.mark.loopback]

GIB = 2**30
LIMIT = 3 * GIB
"""The OS limit: the budget, the idle node, and room for what four queries allocate between two budget
checks (at 2 GiB a burst on a busy machine once met the OS limit first, and all four were stopped)."""
OOM = "a:[] []{0,60} b:[] []{0,60} c:[] :: a.word = c.word & b.word = a.word"
MILDER = "a:[] []{0,60} b:[] :: a.word = b.word"
BURST = [f'a:[] []{{0,30}} b:[] :: a.word=b.word & a.pos="{pos}"' for pos in ("NN", "IN", "DT", "JJ")]
"""Four users' heavy label queries: each holds about 600 MB on a node of this corpus alone, 2.4 GB together."""
BURSTS = 2
"""Bursts sent one after the other until one answers a query: on a machine busy with other tests the
four steps can meet the budget all at once, and all four are stopped (seen once in CI, never alone)."""


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    """The demo (the generated web corpus, a million tokens: two partitions of half a million), its nodes'
    memory budget 1 GiB and their data limited to 3 GiB, four queries at once per address."""
    saved = {key: os.environ.get(key) for key in ("COWBIRD_NODE_MEMORY_BUDGET", "COWBIRD_NODE_MEMORY_LIMIT")}
    os.environ.update({"COWBIRD_NODE_MEMORY_BUDGET": str(GIB), "COWBIRD_NODE_MEMORY_LIMIT": str(LIMIT)})
    try:
        with running_demo(tmp_path_factory.mktemp("demo"), generated=True, web_tokens=1_000_000,
                          settings={"anonymous_running_queries": 4}) as stack:
            yield stack
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def nodes(demo: DemoStack) -> list[int]:
    return [process.pid for process in demo.processes[:2]]


def assert_nodes_alive(demo: DemoStack, pids: list[int]) -> None:
    """Both node processes are the ones started (none killed and restarted) and still answer."""
    assert nodes(demo) == pids and all(process.poll() is None for process in demo.processes[:2])
    for port in demo.node_ports:
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=10).status_code == 200
    answer = httpx.get(f"{demo.url}/api/v1/query", params={"corpus": "web", "q": "the"}, timeout=30)
    assert answer.status_code == 200 and answer.json()["complete"], answer.text


@pytest.mark.timeout(300)
@pytest.mark.parametrize("query", [OOM, MILDER])
def test_the_query_that_took_a_node_down_is_refused_or_stopped_within_its_budget(demo: DemoStack,
                                                                                query: str) -> None:
    """Its estimate answers within its own time, and cannot bound it or bounds it beyond the time a query
    may take: the front end refuses it with the reason (before: the estimate took 45 s, the front end
    gave up at 12 s and ran the query anyway as background work, nodes growing 100-200 MB/s). Were it
    run, the budget and the OS limit would stop it: either way, an answer saying so, the nodes' own
    memory within the limit, and no node killed. (The milder query, estimated within the time a query
    may take on an idle machine, runs — within the budget, exactly.)"""
    require_loopback_namespace()
    pids = nodes(demo)
    with memory_peaks(pids) as memory:
        answer = httpx.get(f"{demo.url}/api/v1/query", params={"corpus": "web", "q": query, "syntax": "cqp"},
                           timeout=200)
    body = answer.json()
    if query == MILDER and answer.status_code == 200:  # estimated within the time a query may take, it ran
        assert body["complete"], body  # within the budget (it holds about 1.1 GB at most beyond the idle node)
    else:
        assert answer.status_code == 400 and body["code"] == "limit_exceeded", body
        # its estimate could not bound it, or bounded it beyond the time a query may take; or, run, it
        # was stopped for memory
        assert "it was not run" in body["detail"] or "memory" in body["detail"], body["detail"]
    assert all(peak < LIMIT / 2**20 for peak in memory.peaks), (memory.idle, memory.peaks)
    assert_nodes_alive(demo, pids)


@pytest.mark.timeout(600)
def test_a_burst_of_heavy_label_queries_past_the_budget_answers_some_of_them(demo: DemoStack) -> None:
    """Four users' heavy label queries at once, each within the budget, more than it together: evaluations
    wait for room, pause, and the youngest give way — so the oldest are answered, exactly, and the
    others refused for memory with the reason (or, on a machine too busy for their estimates, not
    run). Before, the one at work was stopped each time the others only waited for a heavy place. The
    nodes stay within their OS limit and are not killed."""
    require_loopback_namespace()
    pids = nodes(demo)
    details: list[object] = []
    for _ in range(BURSTS):
        with memory_peaks(pids) as memory, concurrent.futures.ThreadPoolExecutor(len(BURST)) as pool:
            answers = list(pool.map(
                lambda q: httpx.get(f"{demo.url}/api/v1/query", params={"corpus": "web", "q": q, "syntax": "cqp"},
                                    timeout=250), BURST))
        bodies = [answer.json() for answer in answers]
        for answer, body in zip(answers, bodies, strict=True):  # exact, or refused with the reason
            assert (answer.status_code == 200 and body["complete"]) or (
                answer.status_code in (400, 503) and ("memory" in body["detail"] or "not run" in body["detail"])
            ), body
        assert all(peak < LIMIT / 2**20 for peak in memory.peaks), (memory.idle, memory.peaks)
        assert_nodes_alive(demo, pids)
        details.append([body.get("detail") for body in bodies])
        if any(answer.status_code == 200 for answer in answers):
            break
    else:
        raise AssertionError(f"no burst of {BURSTS} answered any query: {details}")


def test_cowbird_node_serve_sets_the_os_limit_on_its_data(demo: DemoStack) -> None:
    """``memory_limit`` is the node process's ``RLIMIT_DATA`` (heap and anonymous memory; the corpus's
    mapped files do not count against it), as ``/proc`` shows it."""
    require_loopback_namespace()
    for pid in nodes(demo):
        limits = Path(f"/proc/{pid}/limits").read_text().splitlines()
        data = next(line for line in limits if line.startswith("Max data size"))
        assert data.split()[3] == str(LIMIT), data  # soft limit, bytes
