"""The background process of ``cowbird serve`` (``frontend_api/cowbird/frontend/background.py``), with real
processes over real HTTP: analyses, word lists, exports and deep sorted pages are answered by it —
at a lower CPU priority, with the client's own address for fair use and the public address in links
— previews by the interactive worker; killed, its requests are a clear 503 and previews go on; gone
with ``serve``; ``--no-background`` answers everything in the workers."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import Message

from cowbird.frontend.background import NICENESS, REFUND, ToBackground, is_background
from cowbird.frontend.classing import HAND_OVER_SCOPE, HANDED_OVER
from cowbird.frontend.operations import may_hand_over
from cowbird.serving.asgi import HAND_OVER
from tests.clock import wait_until
from tests.support import assert_problem, running_demo, served_in_thread

SAMPLE = {"corpus": "sample", "q": "the"}


def children(pid: int) -> list[int]:
    """The living child processes of ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(stat.parent.name))
    return found


def background_pid(front: int) -> int:
    found = [pid for pid in children(front)
             if b"--background-socket" in Path(f"/proc/{pid}/cmdline").read_bytes()]
    assert len(found) == 1, found
    return found[0]


def test_which_requests_are_background_work_by_their_path() -> None:
    for path in ("trend", "compare", "sketch", "sketchdiff", "thesaurus", "wordlist", "keywords"):  # not estimated
        assert is_background(f"/api/v1/{path}")
    for path in ("frequency", "export", "query", "collocations"):  # classed by their estimated cost where asked
        assert not is_background(f"/api/v1/{path}") and may_hand_over(f"/api/v1/{path}")
    assert not is_background("/api/v1/estimate")
    assert not is_background("/api/v1/subcorpus")  # the subcorpus picker
    assert not is_background("/ref/web/5")


@pytest.mark.e2e
def test_background_requests_are_answered_by_the_background_process(tmp_path: Path) -> None:
    """Every estimated request beyond the interactive budget (here: all of them) is handed over to the
    background process, which says why; what is background by its kind is forwarded by its path."""
    with running_demo(tmp_path, workers=1, settings={"interactive_seconds": 1e-6}) as demo:
        front = demo.processes[-1].pid
        helper = background_pid(front)
        assert os.getpriority(os.PRIO_PROCESS, helper) - os.getpriority(os.PRIO_PROCESS, front) == NICENESS
        with httpx.Client(base_url=demo.url, timeout=60) as http:
            preview = http.get("/api/v1/query", params=SAMPLE)
            assert preview.status_code == 200 and "x-cowbird-served-by" not in preview.headers
            frequency = http.get("/api/v1/frequency", params={**SAMPLE, "by": "word", "on": "match[1]"})
            assert frequency.status_code == 200 and frequency.headers["x-cowbird-served-by"] == "background"
            assert frequency.headers["x-cowbird-class"] == "background"
            assert "beyond the interactive 1e-06 s" in frequency.headers["x-cowbird-class-reason"]
            assert float(frequency.headers["x-cowbird-estimated-seconds"]) > 0
            assert frequency.headers.get_list("x-cowbird-class") == ["background"]  # said once, by the one answering
            assert frequency.json()["total"] == preview.json()["total"]
            streamed = http.get("/api/v1/frequency", params={**SAMPLE, "by": "word", "on": "match[1]", "stream": 1})
            assert streamed.status_code == 200 and streamed.headers["x-cowbird-served-by"] == "background"
            events = [json.loads(line) for line in streamed.text.splitlines()]
            assert events[0]["event"] == "started" and events[-1]["total"] == preview.json()["total"]
            assert frequency.headers.get_list("date") == [frequency.headers["date"]]  # one of each header
            assert frequency.headers["x-content-type-options"] == "nosniff"
            sketch = http.get("/api/v1/sketch", params={"corpus": "sample", "headword": "house"})
            assert sketch.status_code == 200 and sketch.headers["x-cowbird-served-by"] == "background"
            assert sketch.headers["x-cowbird-class-reason"] == "background work of its kind (not estimated)"
            assert sketch.json()["relations"], sketch.text
            compare = http.get("/api/v1/compare", params={**SAMPLE, "other_q": "a", "by": "word", "on": "match[1]",
                                                          "min": 1})
            assert compare.status_code == 200 and compare.headers["x-cowbird-served-by"] == "background"
            assert compare.json()["first"]["total"] == preview.json()["total"] and compare.json()["compared"] > 0
            first = http.get("/api/v1/export", params={**SAMPLE, "limit": 1})
            before = int(first.headers["x-cowbird-export-rows-left"])
            export = http.get("/api/v1/export", params={**SAMPLE, "limit": 3})
            assert export.status_code == 200 and export.headers["x-cowbird-served-by"] == "background"
            rows = export.text.splitlines()
            assert len(rows) == 4 and rows[1].split("\t")[3].startswith(f"{demo.url}/ref/sample/")  # the public port
            left = int(http.get("/api/v1/export", params={**SAMPLE, "limit": 1}).headers["x-cowbird-export-rows-left"])
            assert before - left == 3 + 1  # this client's budget, as one address: the forwarded one
            bad = http.get("/api/v1/frequency", params={**SAMPLE, "by": "nope"})
            assert_problem(bad, 400, "unknown_attribute")
            assert bad.headers["x-cowbird-served-by"] == "background"
            wrong_host = http.get("/api/v1/frequency", params={**SAMPLE, "by": "word"},
                                  headers={"Host": "evil.example"})
            assert wrong_host.status_code == 400  # the background process checks the Host too

            os.kill(helper, signal.SIGKILL)
            gone = http.get("/api/v1/frequency", params={**SAMPLE, "by": "word"})
            body = assert_problem(gone, 503, "nodes_unavailable")
            assert "background process is not answering" in body["detail"]
            assert http.get("/api/v1/query", params=SAMPLE).status_code == 200  # previews go on
    wait_until(lambda: not children(front), 10, "the background process ended")


@pytest.mark.e2e
def test_the_background_process_ends_with_serve(tmp_path: Path) -> None:
    with running_demo(tmp_path, workers=2, settings={"interactive_seconds": 1e-6}) as demo:
        front = demo.processes[-1].pid
        helper = background_pid(front)
        with httpx.Client(base_url=demo.url, timeout=60) as http:
            answer = http.get("/api/v1/distribution", params={**SAMPLE, "by": "text_id"})
            assert answer.status_code == 200 and answer.headers["x-cowbird-served-by"] == "background"
    deadline = time.monotonic() + 15
    while Path(f"/proc/{helper}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    stat = Path(f"/proc/{helper}/stat")
    assert not stat.exists() or stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"


@pytest.mark.e2e
@pytest.mark.parametrize("options", [["--no-background"]])
def test_no_background_answers_everything_in_the_worker(tmp_path: Path, options: list[str]) -> None:
    with running_demo(tmp_path, workers=1, serve_options=options) as demo:
        assert not children(demo.processes[-1].pid)
        answer = httpx.get(f"{demo.url}/api/v1/frequency", params={**SAMPLE, "by": "word"}, timeout=60)
        assert answer.status_code == 200 and "x-cowbird-served-by" not in answer.headers


@pytest.fixture
def background_socket(tmp_path: Path) -> Iterator[str]:
    """A stand-in background process on a Unix socket (real uvicorn): an XLSX-like answer of 400 KB
    that tells the interactive process which charge to give back if the client does not get it all."""
    async def export(request: Request) -> Response:
        return Response(b"x" * 400_000, media_type="application/octet-stream",
                        headers={REFUND.decode(): json.dumps({"key": "ip:192.0.2.7", "rows": 120})})

    path = str(tmp_path / "background.sock")
    with served_in_thread(uvicorn.Config(Starlette(routes=[Route("/api/v1/export", export)]), uds=path,
                                         log_level="warning")):
        yield path


def forward(socket: str, client_leaves: bool) -> tuple[list[tuple[str, int]], list[Message]]:
    """An export request through ``ToBackground`` (as the interactive process forwards it); the client
    leaves after the first bytes of the body, or reads it all. What was given back, and what was sent."""
    refunds: list[tuple[str, int]] = []
    sent: list[Message] = []

    async def run() -> None:
        first_bytes = asyncio.Event()

        async def receive() -> Message:
            if client_leaves:
                await first_bytes.wait()
                return {"type": "http.disconnect"}
            await asyncio.Event().wait()  # never
            raise AssertionError

        async def send(message: Message) -> None:
            sent.append(message)
            if message["type"] == "http.response.body" and message["body"]:
                first_bytes.set()
                await asyncio.sleep(0.01)  # a slow client: the whole answer is already in from the background

        async def inner(scope: Any, receive: Any, send: Any) -> None:  # classes the export heavy: hands it over
            assert scope[HAND_OVER_SCOPE]
            await send({"type": "http.response.start", "status": 202,
                        "headers": [(HAND_OVER, b"1"), (HANDED_OVER, b'{"seconds": 9.5, "reason": "estimated"}')]})
            await send({"type": "http.response.body", "body": b""})

        middleware = ToBackground(inner, socket, refund=lambda key, rows: refunds.append((key, rows)))
        scope = {"type": "http", "method": "GET", "path": "/api/v1/export", "raw_path": b"/api/v1/export",
                 "query_string": b"corpus=web&q=the&format=xlsx", "headers": [(b"host", b"127.0.0.1")],
                 "client": ("192.0.2.7", 5000), "server": ("127.0.0.1", 8000), "scheme": "http"}
        await middleware(scope, receive, send)
        await middleware.client.aclose()

    asyncio.run(run())
    return refunds, sent


def test_a_forwarded_export_the_client_did_not_get_whole_is_given_back(background_socket: str) -> None:
    """The background process has written the whole spreadsheet into the socket before the client
    left: only the interactive process knows it was not delivered, and gives its rows back — once."""
    refunds, sent = forward(background_socket, client_leaves=True)
    assert refunds == [("ip:192.0.2.7", 120)]
    headers = dict(sent[0]["headers"])
    assert REFUND not in headers and sent[0]["status"] == 200  # never shown to the client
    assert sum(len(m.get("body", b"")) for m in sent[1:]) < 400_000


def test_a_forwarded_export_passed_on_whole_keeps_its_charge(background_socket: str) -> None:
    refunds, sent = forward(background_socket, client_leaves=False)
    assert refunds == []
    assert sum(len(m.get("body", b"")) for m in sent[1:]) == 400_000 and sent[-1]["more_body"] is False
    assert REFUND not in dict(sent[0]["headers"])
