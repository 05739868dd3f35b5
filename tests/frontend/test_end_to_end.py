"""End to end: the front end and two real node processes on loopback, as ``cowbird demo`` runs them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cowbird.commands.demo import DemoStack
from tests.accounts_support import user_with_token
from tests.support import free_ports

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    front, node1, node2 = free_ports(3)
    demo = DemoStack(Path(tmp_path_factory.mktemp("demo")), front, (node1, node2), log_level="warning")
    demo.prepare()
    demo.start()
    yield demo
    demo.stop()


def test_query_export_and_static_link_over_real_http(stack: DemoStack) -> None:
    body = httpx.get(f"{stack.url}/api/v1/query", params={"corpus": "sample", "q": "^house", "show": "pos"},
                     timeout=60).json()
    assert body["complete"] is True and body["total"] == 5
    assert [h["position"] for h in body["hits"]] == [2, 19, 26, 70, 81]
    assert [p["id"] for p in body["partitions"]] == stack.partitions
    export = httpx.get(f"{stack.url}/api/v1/export", params={"corpus": "sample", "q": "^house"},
                       timeout=60)  # background work: on a loaded machine it may wait its turn
    assert export.headers["x-cowbird-rows"] == "5" and len(export.text.splitlines()) == 6
    ref = httpx.get(f"{stack.url}/api/v1/ref/sample/70", timeout=60).json()
    assert ref["sentence"]["match"] == "House" and ref["meta"]["text_genre"] == "news"


def test_a_missing_node_is_reported(stack: DemoStack) -> None:
    stack.processes[1].terminate()  # node 2: the only node of the second partition
    stack.processes[1].wait(10)
    body = httpx.get(f"{stack.url}/api/v1/query", params={"corpus": "sample", "q": "^house"}, timeout=60).json()
    assert body["complete"] is False and body["failed"] == [stack.partitions[1]]
    assert body["total"] == 3  # the first partition is still served by node 1


def test_no_response_carries_a_token_and_no_route_redirects_a_trailing_slash(stack: DemoStack) -> None:
    """A trailing slash used to answer 307 with an absolute Location repeating ``?token=cb_...``
    (over http:// behind a TLS proxy, before the token was checked). Now nothing redirects: the
    route is named in a 404, and the token appears in no header and no body."""
    secret = user_with_token(stack.base / "cowbird-accounts.sqlite3", "slash", "script")
    wrong = "cb_" + "x" * 43
    for token in (secret, wrong):
        for path in ("/api/v1/query/", "/api/v1/corpora/", "/ref/sample/5/", "/api/v1/ref/sample/5/", "/help/api/",
                     "/api/v1/export/"):
            answer = httpx.get(f"{stack.url}{path}", params={"corpus": "sample", "q": "house", "token": token},
                               follow_redirects=False, timeout=30)
            assert answer.status_code == 404, (path, answer.status_code)
            assert "location" not in answer.headers, path
            assert token not in answer.text and all(token not in v for v in answer.headers.values()), path
            if path.startswith("/api/"):
                assert f"routes have no trailing slash: {path.rstrip('/')}" in answer.json()["detail"]
    fine = httpx.get(f"{stack.url}/api/v1/query", params={"corpus": "sample", "q": "house", "token": secret},
                     timeout=60)
    assert fine.status_code == 200 and secret not in fine.text
    node = f"http://127.0.0.1:{stack.node_ports[0]}"  # a node's routes do not redirect either
    bearer = {"Authorization": f"Bearer {(stack.base / 'node.token').read_text().strip()}"}
    for path in ("/health/", "/v1/partitions/", "/metrics/"):
        answer = httpx.get(f"{node}{path}", headers=bearer, follow_redirects=False, timeout=30)
        assert answer.status_code == 404 and "location" not in answer.headers, (path, answer.status_code)
    assert httpx.get(f"{node}/v1/partitions", headers=bearer, timeout=30).status_code == 200
