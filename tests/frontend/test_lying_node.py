"""A node that lies (issue 63, finding 5), as real processes over HTTP: a node, the front end, and
between them a stand-in (``tests/lying_node.py``) that forwards to the node and alters its answers.
Every lie is caught: the partition it is told about is named as failed (or, where a replica can
answer and the answer alone shows the lie, answered exactly by the replica) — never a wrong number
passed as complete — and what the stand-in forwards truthfully is all believed."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator

import httpx
import pytest

from cowbird.engines.native import NativeEngine
from tests.clock import wait_until
from tests.cluster import Cluster
from tests.frontend.conftest import Partitioned
from tests.loopback import require_loopback_namespace
from tests.lying_node import NEXT_FOR_LAST
from tests.support import ROOT, JsonObject, Params, free_ports

pytestmark = [pytest.mark.e2e, pytest.mark.loopback]

WORD = '[word="w7"]'  # 600 hits, 200 in each partition, one token each
TAG = '[pos="P1"]'  # 12,000 hits; sorted by word, each partition's w0 hits come first (40 each)


class Stage:
    """The cluster: one node serving the three partitions; the front end reaches the second only
    through the stand-in, the third through the stand-in first and then the node itself (a replica)."""

    def __init__(self, cluster: Cluster, liar: str, parts: Partitioned, positions: dict[str, dict[str, list[int]]]):
        self.cluster, self.liar, self.ids, self.positions = cluster, liar, parts.ids, positions
        self.client = httpx.Client(base_url=cluster.url, timeout=60)

    def lie(self, lie: str | None, partition: str | None = None) -> None:
        assert httpx.post(f"{self.liar}/lie", json={"lie": lie, "partition": partition}).status_code == 200

    def told(self) -> int:
        return int(httpx.get(f"{self.liar}/lie").json()["told"])

    def get(self, route: str, **params: str | int) -> JsonObject:
        asked: Params = {"corpus": "big", "syntax": "cqp", **params}
        answer = self.client.get(route, params=asked)
        assert answer.status_code == 200, answer.text
        body: JsonObject = answer.json()
        return body


@pytest.fixture(scope="module")
def stage(big_parts: Partitioned, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stage]:
    require_loopback_namespace()
    parts = big_parts  # the 60,000-token corpus in three partitions (tests/frontend/conftest.py)
    offsets = {p["id"]: p["offset"] for p in json.loads(parts.manifest.read_text())["partitions"]}
    positions = {query: {pid: [offsets[pid] + hit.match for hit in NativeEngine.open(parts.registry, pid).hits(query)]
                         for pid in parts.ids} for query in (WORD, TAG)}
    p1, p2, p3 = parts.ids
    cluster = Cluster(tmp_path_factory.mktemp("lying-cluster"), parts.registry, parts.manifest, "big", [[p1, p2, p3]])
    port = free_ports(1)[0]
    liar = f"http://127.0.0.1:{port}"
    cluster.routes = {p2: [liar], p3: [liar, cluster.node_url(0)]}
    log = open(cluster.base / "liar.log", "wb")
    process = subprocess.Popen([sys.executable, "-m", "tests.lying_node", str(port), cluster.node_url(0)],
                               stdout=log, stderr=log, cwd=ROOT)
    try:
        def answers() -> bool:
            assert process.poll() is None, (cluster.base / "liar.log").read_text()
            try:
                return httpx.get(f"{liar}/lie", timeout=1).status_code == 200
            except httpx.TransportError:
                return False

        wait_until(answers, 60, "the stand-in node answering", every=0.1)
        cluster.start()
        yield Stage(cluster, liar, parts, positions)
    finally:
        cluster.close()
        process.terminate()
        process.wait(10)
        log.close()


def test_what_the_stand_in_forwards_truthfully_is_all_believed(stage: Stage) -> None:
    stage.lie(None)
    hits = stage.positions[WORD]
    everything = sorted(p for pid in stage.ids for p in hits[pid])
    page = stage.get("/api/v1/query", q=WORD, offset=150, limit=100)
    assert page["complete"] is True and page["total"] == len(everything) == 600
    assert [h["position"] for h in page["hits"]] == everything[150:250]
    ranked = stage.get("/api/v1/query", q=TAG, sort="match.word", limit=100)
    assert ranked["complete"] is True and ranked["total"] == 12_000
    assert len({h["position"] for h in ranked["hits"]}) == 100
    for route, params in (("/api/v1/collocations", {"attribute": "word"}), ("/api/v1/frequency", {"by": "word"})):
        body = stage.get(route, q=WORD, **params)
        assert body["complete"] is True and body["total"] == 600, (route, body)
    assert stage.told() == 0


def _failed(body: JsonObject, partition: str) -> str:
    """That ``partition`` is named as failed, the others counted; why it failed."""
    assert body["complete"] is False and body["failed"] == [partition], body
    [status] = [p for p in body["partitions"] if p["id"] == partition]
    assert status["status"] != "ok" and status["error"].startswith(f"{partition}: "), status
    return str(status["error"])


@pytest.mark.parametrize("lie", ["count -1", "count +1000"])
@pytest.mark.parametrize("sort", [None, "match.word"], ids=["corpus order", "sorted"])
def test_a_count_that_contradicts_the_partitions_hits_fails_the_partition(stage: Stage, lie: str,
                                                                           sort: str | None) -> None:
    """The partition counts one hit fewer (or 1,000 more) than its page of hits, or its sort keys, say
    it holds: neither is believed; the page is numbered over the other partitions, exactly."""
    p1, p2, p3 = stage.ids
    stage.lie(lie, p2)
    query, sorted_by = (WORD, {}) if sort is None else (TAG, {"sort": sort})
    body = stage.get("/api/v1/query", q=query, offset=150, limit=100, **sorted_by)
    assert stage.told() >= 1
    assert "earlier in the same search" in _failed(body, p2)
    hits = stage.positions[query]
    assert body["total"] == len(hits[p1]) + len(hits[p3])
    shown = [h["position"] for h in body["hits"]]
    if sort is None:
        assert shown == sorted(hits[p1] + hits[p3])[150:250]
    else:
        assert len(set(shown)) == 100 and not set(shown) & set(hits[p2])


@pytest.mark.parametrize("lie", ["count -1", "count +1000"])
def test_a_streamed_preview_whose_count_contradicts_its_hits_ends_with_the_partition_failed(stage: Stage,
                                                                                           lie: str) -> None:
    """The streamed preview (``stream=1``) counts each partition and then fetches the page where the
    counts say it lies: its last event names the partition whose hits contradict its count."""
    p1, p2, p3 = stage.ids
    stage.lie(lie, p2)
    answer = stage.client.get("/api/v1/query", params={"corpus": "big", "syntax": "cqp", "q": WORD, "offset": 150,
                                                       "limit": 100, "stream": 1})
    assert answer.status_code == 200, answer.text
    events = [json.loads(line) for line in answer.text.splitlines() if line.strip()]
    result = events[-1]
    assert result["event"] == "result" and stage.told() >= 1, events
    assert "earlier in the same search" in _failed(result, p2)
    hits = stage.positions[WORD]
    assert result["total"] == len(hits[p1]) + len(hits[p3])
    assert [h["position"] for h in result["hits"]] == sorted(hits[p1] + hits[p3])[150:250]


def test_a_sorted_page_with_a_hit_twice_or_another_is_not_believed(stage: Stage) -> None:
    """The stand-in sends a sorted page's 9th hit again in place of its 10th, or the hit after its
    last in place of the last: the partition it lies about alone is named as failed; where a replica
    serves it, the replica's page is the answer, exactly the honest one."""
    p1, p2, p3 = stage.ids
    stage.lie(None)
    honest = stage.get("/api/v1/query", q=TAG, sort="match.word", limit=100)
    stage.lie("sorted page: a hit twice", p2)
    body = stage.get("/api/v1/query", q=TAG, sort="match.word", limit=100)
    assert stage.told() >= 1
    assert "twice" in _failed(body, p2)
    stage.lie(NEXT_FOR_LAST, p2)  # in order, each once: but not the hit its sort keys placed at that rank
    body = stage.get("/api/v1/query", q=TAG, sort="match.word", limit=100)
    assert stage.told() >= 1
    assert "whose sort key is not the one its sort keys gave" in _failed(body, p2)
    shown = [h["position"] for h in body["hits"]]
    assert len(set(shown)) == len(shown) == 100 and not set(shown) & set(stage.positions[TAG][p2])
    stage.lie("sorted page: a hit twice", p2)
    shown = [h["position"] for h in body["hits"]]
    assert len(set(shown)) == len(shown) == 100 and not set(shown) & set(stage.positions[TAG][p2])
    stage.lie("sorted page: a hit twice", p3)
    replica = stage.get("/api/v1/query", q=TAG, sort="match.word", limit=100)
    assert stage.told() >= 1
    assert replica["complete"] is True and replica["hits"] == honest["hits"] and replica["total"] == 12_000


@pytest.mark.parametrize("lie", ["collocations: total +1", "collocations: total -1", "collocations: window tokens +1",
                                 "collocations: hit tokens +1", "collocations: total and hit tokens +1"])
def test_collocation_totals_off_by_one_fail_the_partition(stage: Stage, lie: str) -> None:
    p1, p2, p3 = stage.ids
    stage.lie(lie, p2)
    body = stage.get("/api/v1/collocations", q=WORD, attribute="word")
    assert stage.told() >= 1
    assert "answer refused" in _failed(body, p2)
    assert body["total"] == 400


def test_frequency_totals_that_do_not_add_up_fail_the_partition(stage: Stage) -> None:
    """The stand-in adds a hit without a match to the partition's frequency list (its total and its
    unset hits one more: they add up, but every hit has a match)."""
    p1, p2, p3 = stage.ids
    stage.lie("frequency: hits without a match", p2)
    body = stage.get("/api/v1/frequency", q=WORD, by="word")
    assert stage.told() >= 1
    assert "without the match" in _failed(body, p2)
    assert body["total"] == 400
    stage.lie("frequency: hits without a match", p3)
    replica = stage.get("/api/v1/frequency", q=WORD, by="word")
    assert replica["complete"] is True and replica["total"] == 600
