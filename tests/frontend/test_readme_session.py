"""The README's first session, run as written — its shell lines one after the other, as a newcomer
types them — against the platform as ``make demo`` runs it (real node and front-end processes).
Only the addresses change: the demo's ports and the local web page's port and folder."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cowbird.commands.demo import DemoStack, port_in_use
from tests.accounts_support import user_with_token
from tests.clock import wait_until
from tests.support import free_ports, running_demo

pytestmark = pytest.mark.e2e

README = Path(__file__).resolve().parents[2] / "README.md"


def shell_block(after: str) -> list[str]:
    """The command lines of the first ```sh block after the heading ``after`` (comments dropped)."""
    text = README.read_text(encoding="utf-8")
    block = text[text.index(after):].split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip() and not line.lstrip().startswith("#")]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    with running_demo(tmp_path_factory.mktemp("readme"), generated=True, web_tokens=60_000) as stack:
        yield stack


def test_the_first_session_works_as_written(demo: DemoStack, tmp_path: Path) -> None:
    page_port, archive_port = free_ports(2)
    # COWBIRD, set once in the first query's block, then the session in the same shell
    address = [line for line in shell_block("A first query:") if line.startswith("COWBIRD=")]
    lines = shell_block("### A first session")
    assert address == ["COWBIRD=http://127.0.0.1:8700"] and any(line.startswith("curl -fsS -OJ") for line in lines)
    assert not any("/tmp/" in line or "8700" in line for line in lines)  # folders by mktemp, the address by COWBIRD
    venv = str(Path(sys.executable).parent)
    script = "\n".join(
        line.replace("http://127.0.0.1:8700", demo.url).replace("8799", str(page_port))
        .replace("8798", str(archive_port)).replace(".venv/bin/", f"{venv}/")
        + "\nsleep 0.5"  # a newcomer types the next line a moment later
        for line in address + lines)
    (tmp_path / "session.sh").write_text("set -e -o pipefail\n" + script + "\n", encoding="utf-8")
    # output to files: the web server started in the background keeps a pipe open after bash ends
    with (tmp_path / "out.txt").open("w") as stdout, (tmp_path / "err.txt").open("w") as stderr:
        shell = subprocess.Popen(["bash", "session.sh"], stdout=stdout, stderr=stderr, cwd=tmp_path,
                                 start_new_session=True)
        try:
            shell.wait(timeout=240)
            # the session stopped its two servers itself: both ports are free, nothing is left in its group
            wait_until(lambda: not port_in_use(page_port) and not port_in_use(archive_port), 10,
                       "the README's local servers stopped by its last line")
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(shell.pid, signal.SIGTERM)  # whatever a failed session left running
    out, err = (tmp_path / "out.txt").read_text(), (tmp_path / "err.txt").read_text()
    assert shell.returncode == 0, err
    answer, _ = json.JSONDecoder().raw_decode(out)  # curl prints no newline after the JSON
    assert answer["complete"] is True and answer["total"] > 0 and answer["cqp"] == (
        '[lemma="house"] :: match.text_genre="news"')
    saved = list(tmp_path.glob("web_*_first50of*.tsv"))
    assert len(saved) == 1, list(tmp_path.iterdir())
    rows = list(csv.DictReader(io.StringIO(saved[0].read_text(encoding="utf-8")), delimiter="\t"))
    assert len(rows) == 50 and all(r["text_url"].startswith("https://") and r["left"] + r["right"] for r in rows)
    output = (tmp_path / "line-context.tsv").read_text(encoding="utf-8")
    skip = int(output.split("skiprows=")[1].split(";")[0])  # Calf's metadata block comes first
    found = list(csv.DictReader(io.StringIO("".join(output.splitlines(keepends=True)[skip:])), delimiter="\t"))
    assert [r["calf_status"] for r in found] == ["found_url"]
    assert found[0]["calf_left"].endswith("We walked up the lane.") and found[0]["calf_right"].startswith("Nobody")
    # the gone page, found in the local stand-in for a web archive, as the README's table shows it
    output = (tmp_path / "gone-context.tsv").read_text(encoding="utf-8")
    skip = int(output.split("skiprows=")[1].split(";")[0])
    [archived] = list(csv.DictReader(io.StringIO("".join(output.splitlines(keepends=True)[skip:])), delimiter="\t"))
    assert (archived["calf_status"], archived["calf_source"], archived["calf_capture_date"]) == (
        "found_archive", "ia", "2013-05-17T09:30:00Z")
    assert archived["calf_left"] == "We walked up the lane." and archived["calf_right"] == "Nobody lives there now."
    assert archived["calf_capture_url"] == (f"http://127.0.0.1:{archive_port}/web/20130517093000id_/"
                                            f"http://127.0.0.1:{page_port}/gone.html")


def test_the_first_query_answers_as_the_readme_says(demo: DemoStack) -> None:
    lines = shell_block("A first query:")
    assert len(lines) == 2 and lines[0] == "COWBIRD=http://127.0.0.1:8700" and '"$COWBIRD/api/v1/query?' in lines[1]
    done = subprocess.run("\n".join(lines).replace("http://127.0.0.1:8700", demo.url), shell=True,
                          capture_output=True, text=True, timeout=60)
    answer = json.loads(done.stdout)
    said = README.read_text(encoding="utf-8").split("A first query:", 1)[1]
    assert f"`{answer['cqp']}`" in said  # "returns the CQP that ran (`[word="the"] []? [word="house"]`)"
    assert answer["total"] > 0 and [p["status"] for p in answer["partitions"]] == ["ok", "ok"]
    assert all(re.fullmatch(r"/ref/web/\d+(\?end=\d+)?", hit["ref"]) for hit in answer["hits"])
    assert all("lemma" in hit["attributes"] and "text_url" in hit["meta"] for hit in answer["hits"])


def test_every_example_on_the_api_help_page_finds_hits_on_the_demo_corpus(demo: DemoStack) -> None:
    """/help/api's examples are written for the corpus the page names (the demo's ``web``): each
    answers, and each search in them finds something (one used to find 0 hits on the demo corpus)."""
    import html

    import httpx

    token = user_with_token(demo.base / "cowbird-accounts.sqlite3", "helper", "examples")
    page = httpx.get(f"{demo.url}/help/api", timeout=30)
    urls = re.findall(r"'(http[^']+)'", html.unescape(page.text))
    assert len(urls) >= 12 and all(url.startswith(f"{demo.url}/api/v1/") for url in urls)
    assert "corpus=web" in urls[0]
    frequencies = [url for url in urls if "/api/v1/frequency?" in url]  # "frequency of each lemma" counts lemmas
    assert any("by=lemma" in url for url in frequencies) and "Frequency of each lemma" in page.text
    assert any("inline=pos,lemma" in url for url in urls) and any("/api/v1/context/web/" in url for url in urls)
    for url in urls:
        answer = httpx.get(url, headers={"Authorization": f"Bearer {token}"}, timeout=60)
        assert answer.status_code == 200, (url, answer.text)
        if "/api/v1/history" in url or "/api/v1/saved" in url or "/api/v1/subcorpora" in url:
            assert answer.json()["data"] == []  # the token's owner searched (and saved) nothing in the browser yet
        elif "/api/v1/subcorpus?" in url and "format=" not in url:  # a subcorpus's size and its values' sizes
            body = answer.json()
            assert body["tokens"] > 0 and body["values"] and all(v["tokens"] > 0 for v in body["values"]), url
        elif "/api/v1/context/" in url:  # a line widened in place: its words, around its match
            line = answer.json()
            assert line["match"] and (line["left"] or line["right"]), (url, line)
        elif "/api/v1/sketch?" in url and "format=" not in url:  # a word sketch: collocates in relations
            body = answer.json()
            assert body["frequency"] > 0 and any(r["rows"] for r in body["relations"]), (url, body)
        elif "/api/v1/thesaurus?" in url:  # the words most like the headword
            body = answer.json()
            assert body["rows"] and 0 < body["rows"][0]["score"] <= 1, (url, body)
        elif "/api/v1/sketchdiff?" in url:  # two sketches compared: collocates the two words share
            body = answer.json()
            assert body["other_frequency"] > 0 and any(r["shared"] for r in body["relations"]), (url, body)
        elif "/api/v1/compare?" in url:  # two searches compared: both find hits, and values differ between them
            body = answer.json()
            assert body["first"]["total"] and body["second"]["total"] and body["rows"], (url, body)
        elif "/api/v1/trend?" in url and "format=" not in url:  # per year, with text in each period listed
            body = answer.json()
            assert body["total"] and all(p["tokens"] for s in body["series"] for p in s["points"]), (url, body)
        elif answer.headers["content-type"].startswith("application/json"):
            body = answer.json()
            found = body.get("total", len(body.get("data", [])) if "data" in body else body.get("cqp"))
            if "/api/v1/wordlist" in url or "/api/v1/keywords" in url:  # no query: the rows counted
                found = len(body["rows"])
            assert found, (url, body)
            assert body.get("rows", [1]) and body.get("hits", [1]), url  # a table or a page with something in it
        elif "stream=1" in url:  # the streamed preview: events, the last the result
            events = [json.loads(line) for line in answer.text.splitlines()]
            assert events[0]["event"] == "started" and events[-1]["event"] == "result", (url, events)
            assert events[-1]["total"] > 0 and any(e["event"] == "page" and e["hits"] for e in events), url
        else:
            assert int(answer.headers["x-cowbird-rows"]) > 0, url


def test_the_readme_opens_with_what_exists_and_the_corpora_say_what_their_attributes_hold(demo: DemoStack) -> None:
    """The README's opening used to say "A browser interface, accounts and Calf come next" although
    all three exist; the corpora answer names the tagset the configuration describes."""
    import httpx

    opening = README.read_text(encoding="utf-8").split("## Two commands", 1)[0]
    assert "come next" not in opening
    assert all(word in opening for word in ("in the browser", "accounts", "**Calf**"))
    corpora = {c["name"]: c for c in httpx.get(f"{demo.url}/api/v1/corpora", timeout=30).json()["data"]}
    assert corpora["web"]["attributes"]["pos"].startswith("part of speech, Penn Treebank tags")
    assert set(corpora["web"]["attributes"]) <= set(corpora["web"]["p_attributes"] + corpora["web"]["s_attributes"])
