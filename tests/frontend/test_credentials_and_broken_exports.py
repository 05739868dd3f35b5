"""Issue 65, items 1 and 2, against the platform as ``make demo`` runs it (real nodes, a front end with
its background process, over real HTTP): a bad credential is 401 saying why on background routes as on
the others (an unset ``$COWBIRD_TOKEN`` used to give 503 ``LocalProtocolError`` on export and
frequency); a client's odd header never breaks the forwarding to the background process; the
``/help/api`` examples of saved searches and categorised lines work as written, with and without a
token; a categorised line that is not a hit is refused before the file's first byte; and an export
whose nodes die after its first rows ends with a line saying it is incomplete, on a broken transfer."""

from __future__ import annotations

import html
import json
import os
import re
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from cowbird.commands.demo import DemoStack
from tests.accounts_support import user_with_token
from tests.support import running_demo

pytestmark = [pytest.mark.e2e, pytest.mark.loopback]

API_HELP = Path(__file__).resolve().parents[2] / "web/cowbird/web/templates/api_help.html"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    with running_demo(tmp_path_factory.mktemp("credentials"), generated=True, web_tokens=60_000) as stack:
        yield stack


@pytest.fixture(scope="module")
def token(demo: DemoStack) -> str:
    return user_with_token(demo.base / "cowbird-accounts.sqlite3", "categoriser", "examples")


def raw_get(demo: DemoStack, target: str, *header_lines: bytes) -> tuple[int, dict[str, str], bytes]:
    """A GET written byte by byte (an HTTP client would refuse to send ``Bearer `` with its trailing
    space, as curl does not): the status, the headers and the body."""
    host, port = demo.url.removeprefix("http://").split(":")
    request = b"".join(
        [
            f"GET {target} HTTP/1.1\r\nHost: {host}:{port}\r\nConnection: close\r\n".encode(),
            *(line + b"\r\n" for line in header_lines),
            b"\r\n",
        ]
    )
    with socket.create_connection((host, int(port)), timeout=60) as connection:
        connection.sendall(request)
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    status_line, *fields = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (f.partition(":") for f in fields)}
    if headers.get("transfer-encoding") == "chunked":
        body = dechunked(body)
    return int(status_line.split()[1]), headers, body


def dechunked(body: bytes) -> bytes:
    out = b""
    while body:
        size, _, body = body.partition(b"\r\n")
        length = int(size, 16)
        if length == 0:
            break
        out, body = out + body[:length], body[length + 2 :]
    return out


ROUTES = [
    "/api/v1/export?corpus=web&q=house",
    "/api/v1/frequency?corpus=web&q=house&by=word",
    "/api/v1/sketch?corpus=web&headword=house",
    "/api/v1/query?corpus=web&q=house",
    "/api/v1/corpora",
]
"""Two routes the interactive process classes by cost (and may hand over to its background process),
one it forwards there by its path, two it answers itself."""


@pytest.mark.parametrize(
    ("header", "said"),
    [
        (b"Authorization: Bearer ", "holds 'Bearer ' with no token: set COWBIRD_TOKEN"),
        (b"Authorization:", "the Authorization header is empty"),
        (b"Authorization: Basic dXNlcjpwYXNz", "holds the scheme 'Basic', not Bearer"),
        (b"Authorization: Bearer abc def", "more than one word after 'Bearer'"),
        (b"Authorization: Bearer not-a-token-of-anyone", "the API token is not valid"),
        (b"Authorization: Bearer\t\xff\xfe\x80 ", "the API token is not valid"),
    ],
    ids=["unset-token", "empty", "basic", "two-words", "unknown", "odd-bytes"],
)
def test_a_bad_credential_is_401_saying_why_on_every_kind_of_route(demo: DemoStack, header: bytes, said: str) -> None:
    for target in ROUTES:
        status, headers, body = raw_get(demo, target, header)
        assert status == 401, (target, status, body)
        assert headers["content-type"].startswith("application/problem+json")
        assert headers["www-authenticate"] == "Bearer"
        problem = json.loads(body)
        assert problem["code"] == "unauthorized" and said in problem["detail"], (target, problem)


def test_odd_characters_in_a_clients_headers_never_break_the_forwarding(demo: DemoStack, token: str) -> None:
    forwarded = "/api/v1/sketch?corpus=web&headword=house"  # forwarded to the background process by its path
    status, headers, body = raw_get(
        demo, forwarded, b"X-Note: spaces after it \t ", f"Authorization: Bearer {token}  ".encode()
    )
    assert status == 200 and headers["x-cowbird-served-by"] == "background", body
    assert json.loads(body)["relations"]
    for odd in (b"X-Note: a\x0bb", b"X-Note: a\x0cb", b"X-Note: \x7f\xff"):
        status, headers, body = raw_get(demo, forwarded, odd)
        assert status in (200, 400), (odd, status, body)  # sent on as it is, or refused saying which header
        if status == 400 and headers.get("content-type", "").startswith("application/problem+json"):
            assert "x-note" in json.loads(body)["detail"]
    no_credential = raw_get(demo, forwarded)  # anonymous, as before
    assert no_credential[0] == 200


def curl_lines(heading: str) -> list[str]:
    """The shell lines of the ``<pre class="curl">`` after ``heading`` on /help/api, as the page shows them."""
    page = html.unescape(API_HELP.read_text(encoding="utf-8"))
    block = page[page.index(heading) :].split('<pre class="curl">', 1)[1].split("</pre>", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def run_examples(demo: DemoStack, tmp_path: Path, token: str | None) -> subprocess.CompletedProcess[str]:
    lines = curl_lines("Saved searches: keep one") + curl_lines("Categorise a saved search")
    script = "\n".join(line.replace("{{ base }}", demo.url).replace("{{ corpus }}", "web") for line in lines)
    assert "{{" not in script and "60" not in re.findall(r'"position": (\w+)', script)
    (tmp_path / "examples.sh").write_text("set -e -o pipefail\n" + script + "\n", encoding="utf-8")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    env.pop("COWBIRD_TOKEN", None)
    if token is not None:
        env["COWBIRD_TOKEN"] = token
    return subprocess.run(["bash", "examples.sh"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_the_api_help_examples_of_saved_searches_and_categories_work_as_written(
    demo: DemoStack, token: str, tmp_path: Path
) -> None:
    done = run_examples(demo, tmp_path, token)
    assert done.returncode == 0, (done.stdout, done.stderr)
    exports = [part for part in done.stdout.split("corpus\tposition\t")[1:]]  # the two downloads, in order
    assert len(exports) == 2
    categorised = [line.split("\t") for line in exports[1].splitlines()[1:] if line]
    assert len(categorised) == 1 and categorised[0][-2:] == ["2", ""]  # category 2, no name given to it
    saved = httpx.get(f"{demo.url}/api/v1/saved", headers={"Authorization": f"Bearer {token}"}).json()["data"]
    ids = [s["id"] for s in saved]
    assert ids and all(s["link"] == f"/s/{s['id']}" for s in saved)
    categories = httpx.get(
        f"{demo.url}/api/v1/saved/{ids[0]}/categories", headers={"Authorization": f"Bearer {token}"}
    ).json()
    assert categories["counts"][1] == 1 and categories["lines"][0]["category"] == 2


def test_the_same_examples_without_a_token_stop_at_a_401_that_says_to_set_it(demo: DemoStack, tmp_path: Path) -> None:
    done = run_examples(demo, tmp_path, None)
    assert done.returncode != 0
    assert "holds 'Bearer ' with no token: set COWBIRD_TOKEN" in done.stdout + done.stderr, (done.stdout, done.stderr)


def test_a_categorised_line_that_is_not_a_hit_is_refused_before_the_first_byte(demo: DemoStack, token: str) -> None:
    auth = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=demo.url, headers=auth, timeout=60) as http:
        saved = http.post("/api/v1/saved", json={"name": "not a hit", "url": "/?corpus=web&q=house"}).json()
        assert saved["link"] == f"/s/{saved['id']}"
        hits = http.get("/api/v1/query", params={"corpus": "web", "q": "house", "limit": 100}).json()["hits"]
        starts = {h["position"] for h in hits}
        outside = next(p for p in range(60, 10_000) if p not in starts)  # the old example's position 60, or after
        accepted = http.post(
            f"/api/v1/saved/{saved['id']}/categories", json={"position": outside, "matchend": outside, "category": 2}
        )
        assert accepted.status_code == 200  # any line of the corpus may be categorised: the export's search decides
        for format in ("tsv", "ndjson", "xlsx"):
            refused = http.get(
                "/api/v1/export",
                params={
                    "corpus": "web",
                    "q": "house",
                    "categories": saved["id"],
                    "only_categorised": 1,
                    "format": format,
                },
            )
            assert refused.status_code == 400, refused.text
            assert refused.headers["content-type"].startswith("application/problem+json")
            detail = refused.json()["detail"]
            assert (
                f"1 of the 1 categorised lines are not hits of this search (position-matchend {outside}-{outside})"
                in detail
            ), detail


def test_an_export_whose_nodes_die_after_its_first_rows_ends_saying_it_is_incomplete(demo: DemoStack) -> None:
    """Runs last: it kills the demo's nodes."""
    params: dict[str, str | int] = {
        "corpus": "web",
        "syntax": "cqp",
        "q": "[]",
        "context": 30,
        "show": "lemma,pos",
        "limit": 10_000,
    }
    received, broke = b"", None
    with (
        httpx.Client(base_url=demo.url, timeout=60) as http,
        http.stream("GET", "/api/v1/export", params=params) as response,
    ):
        assert response.status_code == 200 and response.headers["x-cowbird-rows"] == "10000"
        chunks = response.iter_raw()
        while received.count(b"\n") < 3:
            received += next(chunks)
        for node in demo.processes[:-1]:
            node.send_signal(signal.SIGKILL)
            node.wait(timeout=30)
        try:
            for chunk in chunks:
                received += chunk
        except httpx.HTTPError as error:  # the transfer is broken, never a clean short one
            broke = error
    lines = received.decode("utf-8").splitlines()
    assert broke is not None, lines[-1]
    assert lines[0].startswith("corpus\tposition\t") and len(lines) - 2 < 10_000
    last = lines[-1]
    match = re.fullmatch(r'# incomplete: "the export broke off after (\d+) of 10000 rows: .+"', last)
    assert match is not None, last
    assert int(match[1]) == len(lines) - 2  # the rows before it, each whole
