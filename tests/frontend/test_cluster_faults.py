"""Real processes under faults: nodes killed, stopped and restarted during a burst of previews and
exports; queries given up by their clients. Every answer must be exact, flagged partial, or
visibly broken — never silently wrong — and abandoned work must stop."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cowbird.engines.native import NativeEngine
from cowbird.frontend.priority import BACKGROUND_TIME
from cowbird.store import Encoder
from tests.clock import until
from tests.cluster import Cluster, comes_to_rest
from tests.frontend.conftest import Partitioned
from tests.support import JsonObject, Params, synthetic_options

pytestmark = [pytest.mark.e2e, pytest.mark.load, pytest.mark.loopback]  # floods, kills and stops: only loopback exists

QUERIES = ['[pos="P1"]', '[word="w7"] [pos="P3"]', '[word="w1.*"] []? [pos="P0"]']
HEAVY = '[] []{0,400} [word="w7"] [word="w7"]'  # no hits ("w7 w7" never), but every start walks 400 steps


def expected_hits(parts: Partitioned, manifest: JsonObject, query: str) -> dict[str, list[int]]:
    """Global positions of every hit of ``query``, per partition, from the engine in process."""
    offsets = {p["id"]: p["offset"] for p in manifest["partitions"]}
    found = {}
    for pid in parts.ids:
        engine = NativeEngine.open(parts.registry, pid)
        found[pid] = [offsets[pid] + hit.match for hit in engine.hits(query)]
    return found


@pytest.fixture(scope="module")
def six_parts(tmp_path_factory: pytest.TempPathFactory) -> Partitioned:
    """The 60,000-token corpus in six partitions."""
    base = tmp_path_factory.mktemp("six-parts")
    result = Encoder(synthetic_options(base, partition_tokens=10_000)).run()
    assert result.manifest is not None and len(result.partitions) == 6
    return Partitioned(base / "registry", result.manifest, [p.id for p in result.partitions])


@pytest.fixture(scope="module")
def expected(six_parts: Partitioned) -> dict[str, dict[str, list[int]]]:
    """What a single engine finds, partition by partition: the cluster must merge exactly this."""
    import json

    manifest = json.loads(six_parts.manifest.read_text())
    return {query: expected_hits(six_parts, manifest, query) for query in QUERIES}


@pytest.fixture
def replicated(six_parts: Partitioned, tmp_path: Path) -> Iterator[Cluster]:
    """Three nodes, six partitions, every partition on two nodes."""
    p1, p2, p3, p4, p5, p6 = six_parts.ids
    layout = [[p1, p2, p3, p4], [p3, p4, p5, p6], [p5, p6, p1, p2]]
    cluster = Cluster(tmp_path, six_parts.registry, six_parts.manifest, "big", layout,
                      node_timeout=3.0, health_probe_timeout=0.5, deadline=20.0)
    yield cluster.start()
    cluster.close()


def check_preview(body: JsonObject, expected: dict[str, list[int]], offset: int) -> None:
    ok = [p for p in body["partitions"] if p["status"] == "ok"]
    for partition in ok:
        assert partition["total"] == len(expected[partition["id"]]), partition
    answered = sorted(position for p in ok for position in expected[p["id"]])
    assert body["total"] == len(answered)
    assert body["complete"] is (len(ok) == len(expected))
    assert [h["position"] for h in body["hits"]] == answered[offset:offset + 100], body


async def one_request(client: httpx.AsyncClient, expected: dict[str, dict[str, list[int]]], k: int) -> str:
    query = QUERIES[k % len(QUERIES)]
    if k % 4 == 3:  # an export
        try:
            response = await client.get("/api/v1/export", params={"corpus": "big", "q": query, "syntax": "cqp",
                                                                   "limit": 10_000})
        except (httpx.RemoteProtocolError, httpx.ReadError):
            return "broken"  # visibly broken: the client cannot take it for a whole file
        if response.status_code != 200:
            assert response.status_code in (503, 504), response.text
            return "refused"
        rows = [int(line.split("\t")[1]) for line in response.text.splitlines()[1:]]
        failed = set(filter(None, response.headers["x-cowbird-failed"].split(",")))
        answered = sorted(p for pid, hits in expected[query].items() if pid not in failed for p in hits)
        assert rows == answered[:10_000] and len(rows) == int(response.headers["x-cowbird-rows"])
        return "partial" if failed else "exact"
    offset = (k * 37) % 200
    response = await client.get("/api/v1/query", params={"corpus": "big", "q": query, "syntax": "cqp",
                                                         "offset": offset})
    if response.status_code != 200:
        assert response.status_code in (503, 504), response.text
        return "refused"
    body = response.json()
    check_preview(body, expected[query], offset)
    return "exact" if body["complete"] else "partial"


async def burst(url: str, expected: dict[str, dict[str, list[int]]], count: int,
                seen: list[str] | None = None) -> list[str]:
    """``count`` requests, 8 at once; their outcomes, in order (and appended to ``seen`` as they come)."""
    seen = [] if seen is None else seen
    async with httpx.AsyncClient(base_url=url, timeout=60) as client:
        slots = asyncio.Semaphore(8)

        async def limited(k: int) -> str:
            async with slots:
                outcome = await one_request(client, expected, k)
                seen.append(outcome)
                return outcome

        return list(await asyncio.gather(*(limited(k) for k in range(count))))


@pytest.mark.timeout(300)
def test_kill_stop_and_restart_nodes_during_a_burst(
    replicated: Cluster, expected: dict[str, dict[str, list[int]]]
) -> None:
    def given_up(k: int) -> int:  # how often the front end has said node k was not answering
        said = f"node {replicated.node_url(k)} is not answering"
        return "".join(path.read_text() for path in replicated.base.glob("serve-*.log")).count(said)

    async def scenario() -> list[str]:
        seen: list[str] = []
        work = asyncio.ensure_future(burst(replicated.url, expected, 240, seen))
        await until(lambda: len(seen) >= 4, timeout=60, what="the burst under way")
        replicated.kill(0)  # kill -9 in the middle of answers and exports
        await until(lambda: given_up(0) > 0, timeout=60, every=0.1, what="node 0 given up")
        replicated.pause(1)  # SIGSTOP: connections open, nothing answered
        await until(lambda: given_up(1) > 0, timeout=60, every=0.1, what="node 1 given up")
        replicated.resume(1)
        replicated.start_node(0)  # back again: used once it answers
        return await work

    outcomes = asyncio.run(scenario())
    assert len(outcomes) == 240 and "exact" in outcomes
    log = "".join(path.read_text() for path in replicated.base.glob("serve-*.log"))
    assert f"node {replicated.node_url(0)} is not answering" in log  # the faults were met, not missed
    # node 1 works off what waited while it stood still, node 0 starts; the interactive process and
    # the background one (exports) each keep their own breaker, whose cooldown may have grown to
    # max_cooldown (30 s): both must see every node again, so the probe is a preview and an export
    recovered = time.monotonic() + 90
    while asyncio.run(burst(replicated.url, expected, 4)) != ["exact"] * 4:
        assert time.monotonic() < recovered, "the cluster did not recover"
        time.sleep(0.5)
    after = asyncio.run(burst(replicated.url, expected, 12))
    assert after == ["exact"] * 12  # every node is used again


def test_work_stops_when_the_client_gives_up_and_at_the_deadline(big_parts: Partitioned, tmp_path: Path) -> None:
    cluster = Cluster(tmp_path, big_parts.registry, big_parts.manifest, "big", [list(big_parts.ids)],
                      deadline=2.0, node_timeout=30.0)
    cluster.start()
    try:
        node = cluster.process(0).pid
        # as heavy as HEAVY, in gaps of at most 10 tokens: not estimated first (a query that may be slow is,
        # and with a 2-s deadline its estimate is not given the time: it is refused, never run)
        heavy = "[] " + "[]{0,10} " * 40 + '[word="w7"] [word="w7"]'
        params = {"corpus": "big", "q": heavy, "syntax": "cqp"}
        with pytest.raises(httpx.ReadTimeout):
            httpx.get(f"{cluster.url}/api/v1/query", params=params, timeout=1.0)
        # the query alone would run until the node's 30-s timeout; at rest within 5 s (not 2: a loaded CI
        # machine was seen to take longer to pass the disconnect on) is the work stopped, not finished
        assert comes_to_rest(node, within=5.0), "the node kept working after the client had gone"
        started = time.monotonic()
        answer = httpx.get(f"{cluster.url}/api/v1/query", params={**params, "q": heavy + " cut 5"}, timeout=30)
        # a query that may be slow and is not estimated within a tenth of the deadline is refused, not run
        # unbounded; estimated in time, it runs as background work, whose deadline is BACKGROUND_TIME times
        # as long: it may then finish (it has no hits)
        assert (answer.status_code == 400 and "could not be estimated" in answer.json()["detail"]) or (
            answer.status_code == 504 and answer.json()["code"] == "timeout") or (
            answer.status_code == 200 and answer.json()["total"] == 0), answer.text
        assert time.monotonic() - started < 2.0 * BACKGROUND_TIME + 2.0
        assert comes_to_rest(node, within=5.0), "the node kept working after the front end's deadline"
    finally:
        cluster.close()


def test_a_front_end_killed_mid_export_leaves_a_broken_download(replicated: Cluster) -> None:
    """The client must never take a cut-off export for a complete file: the chunked transfer breaks.
    A front end started again serves as before."""
    params: Params = {"corpus": "big", "q": "[]", "syntax": "cqp", "limit": 10_000, "context": 5}
    received = 0
    frontend = replicated.frontend
    assert frontend is not None  # the fixture started the cluster
    with httpx.Client(timeout=30) as client, client.stream("GET", f"{replicated.url}/api/v1/export",
                                                            params=params) as response:
        assert response.status_code == 200 and response.headers["x-cowbird-rows"] == "10000"
        with pytest.raises((httpx.RemoteProtocolError, httpx.ReadError)):
            for chunk in response.iter_bytes():
                if received == 0:
                    frontend.kill()  # mid-stream: the headers promised 10,000 rows
                received += len(chunk)
    assert received > 0
    frontend.wait(10)
    replicated.start_frontend()
    again = httpx.get(f"{replicated.url}/api/v1/export", params={**params, "limit": 100}, timeout=30)
    assert again.status_code == 200 and len(again.text.splitlines()) == 101


def test_both_replicas_of_a_partition_down_is_a_named_partial_answer(
    replicated: Cluster, expected: dict[str, dict[str, list[int]]]
) -> None:
    replicated.kill(0)
    replicated.kill(2)  # both nodes of the partitions they share
    lost = sorted(set(replicated.layout[0]) & set(replicated.layout[2]))
    query = QUERIES[0]
    body = httpx.get(f"{replicated.url}/api/v1/query", params={"corpus": "big", "q": query, "syntax": "cqp"},
                     timeout=30).json()
    assert body["complete"] is False and body["failed"] == lost and len(lost) == 2
    check_preview(body, expected[query], 0)  # the other partitions, served by their replicas, are exact
    replicated.start_node(0)
    replicated.start_node(2)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        body = httpx.get(f"{replicated.url}/api/v1/query", params={"corpus": "big", "q": query, "syntax": "cqp"},
                         timeout=30).json()
        if body["complete"]:
            break
        time.sleep(0.5)
    assert body["complete"] is True  # used again once they answer
    check_preview(body, expected[query], 0)
