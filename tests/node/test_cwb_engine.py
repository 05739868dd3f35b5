"""The ``cwb`` engine against real CQP: parity, the same answers as the native engine through real
node processes, the hardening of the CQP child, and compressed corpora.

Needs real CQP (``../shared/reference/build-cqp.sh``) and cwb-ccc (``pip install -e '.[cwb]'``);
outside CI the tests skip without them, under CI they fail.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cowbird.core.errors import QueryCancelled, QueryTimeout
from cowbird.engines import Context, Deadline, EngineOptions
from cowbird.engines.cwb import CwbEngine
from cowbird.engines.native import NativeEngine
from cowbird.engines.results import ArrayResultSet
from cowbird.query import QueryError
from tests.clock import wait_until
from tests.cluster import process_ended, start_node
from tests.node.conftest import TOKEN
from tests.support import copy_reference_ewt, parity_hits, parity_queries, reference_cqp, require_reference, unavailable


def _ccc() -> None:
    try:
        import ccc  # noqa: F401 - only: is cwb-ccc installed?
    except ImportError:
        unavailable("cwb-ccc is not installed: pip install -e '.[cwb]' with cwb-config on PATH")


@pytest.fixture(scope="module")
def cqp() -> Path:
    binary = reference_cqp()
    _ccc()
    return binary


@pytest.fixture(scope="module")
def registry() -> Path:
    return require_reference() / "cwb" / "registry"


@pytest.fixture(scope="module")
def cwb(cqp: Path, registry: Path) -> Iterator[CwbEngine]:
    engine = CwbEngine(registry, "ewt", EngineOptions(cqp_binary=str(cqp)))
    yield engine
    engine.close()


@pytest.fixture(scope="module")
def native(registry: Path) -> NativeEngine:
    return NativeEngine.open(registry, "ewt")


def group_commands(engine: CwbEngine) -> list[str]:
    """Command lines of every process in the cqp child's process group."""
    group = os.getpgid(engine.process_id)
    commands = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[2]) == group:
                commands.append((entry / "cmdline").read_text().replace("\0", " ").strip())
        except (OSError, IndexError):
            continue
    return commands


@pytest.mark.parametrize(("query_id", "query"), parity_queries())
@pytest.mark.slow  # 2.4 s here (make quick leaves it out)
def test_parity_with_real_cqp_and_the_native_engine(
    query_id: str, query: str, cwb: CwbEngine, native: NativeEngine
) -> None:
    expected = parity_hits(query_id)
    assert [(h.match, h.matchend) for h in cwb.hits(query)] == expected
    assert [(h.match, h.matchend) for h in native.hits(query)] == expected


@pytest.mark.parametrize(
    "attempt",
    ['cat Last > "/tmp/cowbird-pwned"', 'set Registry "/tmp"', 'source "/etc/passwd"', 'define $x = "a"',
     'undump Hits < "/etc/passwd"', "unlock 1", '[word="a"]; cat Last > "/tmp/cowbird-pwned"',
     '[word="a"] ; set QueryLock 1', "! ls", 'exit'],
)
def test_commands_never_reach_cqp(attempt: str, cwb: CwbEngine) -> None:
    with pytest.raises(QueryError):
        cwb.run(attempt)
    assert not Path("/tmp/cowbird-pwned").exists()
    assert cwb.run('[word="dog"]').total == 52  # and cqp is unharmed


def test_cqp_runs_in_child_mode_and_spawns_nothing(cwb: CwbEngine, cqp: Path) -> None:
    cwb.run('[lemma="be"] []{0,3} [pos="VBN"]')
    commands = group_commands(cwb)
    real = [c for c in commands if c.startswith(str(cqp))]
    assert len(real) == 1 and " -c -x " in f"{real[0]} "
    assert all(c.startswith(str(cqp)) or c.startswith("/bin/sh -c ") for c in commands), commands


def test_timeout_kills_the_process_group_and_the_next_query_runs(cwb: CwbEngine) -> None:
    before = cwb.process_id
    with pytest.raises(QueryTimeout):  # raised once the process group is gone (checked below)
        cwb.run("[]{0,60} [word=\"qqq\"] []{0,60} [word=\"zzz\"]", deadline=Deadline(0.3))
    assert cwb.run('[word="dog"]').total == 52
    assert cwb.process_id != before  # a new cqp
    with pytest.raises(ProcessLookupError):
        os.kill(before, 0)  # the old one is gone


def test_a_caller_that_goes_away_stops_cqp(cwb: CwbEngine) -> None:
    deadline = Deadline(60)
    before = cwb.process_id
    threading.Timer(0.3, deadline.cancel).start()  # as the node does when the request is dropped
    with pytest.raises(QueryCancelled):
        cwb.run("[]{0,60} [word=\"qqq\"] []{0,60} [word=\"zzz\"]", deadline=deadline)
    with pytest.raises(ProcessLookupError):
        os.kill(before, 0)  # that cqp was killed, not left to finish
    assert cwb.run('[word="dog"]').total == 52


def test_a_crashed_cqp_is_replaced_on_the_next_query(cwb: CwbEngine) -> None:
    crashed = cwb.process_id
    os.killpg(os.getpgid(crashed), signal.SIGKILL)
    wait_until(lambda: process_ended(crashed), timeout=10, every=0.01, what="cqp killed")
    assert cwb.run('[word="dog"]').total == 52


def _answers(url: str, query: str) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    request = {"partition": "ewt", "query": query, "limit": 25, "offset": 3, "context": {"tokens": 5},
               "show": ["lemma", "pos"], "meta": ["text_id", "s_id"]}
    count = httpx.post(f"{url}/v1/count", json=request | {"limit": None}, headers=headers, timeout=60)
    hits = httpx.post(f"{url}/v1/hits", json=request, headers=headers, timeout=60)
    answers: dict[str, Any] = {}
    for name, response in (("count", count), ("hits", hits)):
        body = response.json()
        body.pop("elapsed_ms", None)
        if response.status_code != 200:
            body = {"status": response.status_code, "code": body["code"]}
        answers[name] = body
    return answers


@pytest.mark.e2e
def test_both_engines_answer_alike_through_real_nodes(cqp: Path, registry: Path, tmp_path: Path) -> None:
    token = tmp_path / "node.token"
    token.write_text(TOKEN + "\n")
    os.environ["COWBIRD_NODE_CQP_BINARY"] = str(cqp)
    try:
        cwb_node, cwb_url = start_node(registry, token, "--corpus", "ewt", "--engine", "cwb")
        native_node, native_url = start_node(registry, token, "--corpus", "ewt", "--engine", "native")
    finally:
        del os.environ["COWBIRD_NODE_CQP_BINARY"]
    try:
        queries = [param.values[1] for param in parity_queries()]
        queries += ['[foo="dog"]', "<nope> []", '[word="dog"] within nope', '[word="dog"', '"dog" cut 3',
                    '[pos="DT"] @1[pos="JJ"]? @[pos="NN"]']  # target and keyword positions in the hits
        for query in queries:
            assert _answers(cwb_url, query) == _answers(native_url, query), query
        export = {"partition": "ewt", "query": '[pos="NNP"]', "limit": 5000, "context": {"tokens": 3}}
        lines = []
        for url in (cwb_url, native_url):
            with httpx.stream("POST", f"{url}/v1/export", json=export, headers={"Authorization": f"Bearer {TOKEN}"},
                              timeout=60) as response:
                lines.append([json.loads(line) for line in response.iter_lines() if line])
        assert lines[0] == lines[1] and len(lines[0]) == 5000
        # the analysis routes count the hits either engine holds: the same answers
        analyses: list[tuple[str, dict[str, object]]] = [
            ("/v1/frequency", {"query": '[lemma="go"]', "attribute": "word", "on": "matchend[1]", "fold": "c"}),
            ("/v1/distribution", {"query": '[pos="JJ"] [pos="NN.*"] within s', "attribute": "text_genre"}),
            ("/v1/cooccurrence", {"query": '[lemma="go"]', "attribute": "lemma", "left": 3, "right": 5,
                                  "within": "s"}),
            ("/v1/sortkeys", {"query": '[lemma="go"]', "sort": {"key": "right1.word"}, "limit": 200}),
            ("/v1/frequency", {"query": '[pos="DT"] @1[pos="JJ"]? [pos="NN"]', "attribute": "lemma",
                               "on": "keyword"}),
            ("/v1/sortkeys", {"query": '@1[pos="JJ"] [pos="NN"]', "sort": {"key": "keyword.word"}, "limit": 200}),
        ]
        for path, request in analyses:
            answers = []
            for url in (cwb_url, native_url):
                answer = httpx.post(f"{url}{path}", json={"partition": "ewt", **request}, timeout=60,
                                    headers={"Authorization": f"Bearer {TOKEN}"})
                assert answer.status_code == 200, answer.text
                answers.append({k: v for k, v in answer.json().items() if k != "elapsed_ms"})
            assert answers[0] == answers[1] and answers[0]["total"] > 100, path
    finally:
        for process in (cwb_node, native_node):
            process.terminate()
            process.wait(10)


@pytest.mark.slow  # 1.2 s here (make quick leaves it out)
def test_a_corpus_compressed_by_real_cwb_is_served_by_both_engines(
    cqp: Path, native: NativeEngine, tmp_path: Path
) -> None:
    copy = copy_reference_ewt(tmp_path)
    for tool in ("cwb-huffcode", "cwb-compress-rdx"):
        subprocess.run([str(cqp.parent / tool), "-r", str(copy), "-A", "EWT"], check=True, capture_output=True)
    for name in ("word", "pos", "upos", "lemma"):
        for suffix in (".corpus", ".corpus.rev", ".corpus.rdx"):
            (tmp_path / "data" / f"{name}{suffix}").unlink()
    engine = CwbEngine(copy, "ewt", EngineOptions(cqp_binary=str(cqp)))
    compressed = NativeEngine.open(copy, "ewt")
    try:
        for query in ('[word="the"] [pos="JJ"]', '[lemma="go"] []{0,2} [word="to"]', '"house"'):
            expected = native.run(query).kwic(0, 50, Context(4), ["lemma"], ["text_id"])
            assert engine.run(query).kwic(0, 50, Context(4), ["lemma"], ["text_id"]) == expected
            assert compressed.run(query).kwic(0, 50, Context(4), ["lemma"], ["text_id"]) == expected
            assert engine.run(query).total == native.run(query).total == compressed.run(query).total
    finally:
        engine.close()


def test_analyses_are_the_same_on_either_engine(cwb: CwbEngine, native: NativeEngine) -> None:
    """Frequencies, distributions, co-occurrences and sort orders come from the hits either engine
    holds, over the same store: the cwb engine's answers are the native engine's."""
    from cowbird.core.analysis_spec import parse_sort, parse_span
    from cowbird.engines.analyses.cooccurrence import cooccurrence
    from cowbird.engines.analyses.distribution import distribution
    from cowbird.engines.analyses.frequency import frequency
    from cowbird.engines.analyses.sort_order import sort_order
    from cowbird.engines.analyses.spans import NO_DEADLINE as NONE

    for query in ('[lemma="go"]', '[pos="JJ"] [pos="NN.*"] within s', '@[pos="DT"] [pos="JJ"]? [pos="NNS"]'):
        real, ours = cwb.run(query), native.run(query)
        assert isinstance(real, ArrayResultSet) and isinstance(ours, ArrayResultSet)
        both = [(r.corpus, r.matches) for r in (real, ours)]
        counted = [frequency(NONE, c, m, "lemma", parse_span("target" if "@" in query else None), "c", 10**6)
                   for c, m in both]
        assert counted[0] == counted[1] and counted[0].hits > 100
        assert distribution(NONE, *both[0], "text_genre", 100) == distribution(NONE, *both[1], "text_genre", 100)
        assert cooccurrence(NONE, *both[0], "word", 3, 4, "s", 10**6) == \
            cooccurrence(NONE, *both[1], "word", 3, 4, "s", 10**6)
        key = parse_sort("left1.word%c", "desc")
        orders = [sort_order(NONE, c, m, key, 0).order.tolist() for c, m in both]
        assert orders[0] == orders[1]


@pytest.mark.slow
@pytest.mark.parametrize("query", [
    'MU (meet [pos="JJ"] [pos="NN"] -2 2)', 'MU (union "house" [pos="DT"]) cut 5',
    'TAB [pos="DT"] {0,2} [pos="NN"] within s', 'a:[pos="DT"] [] [lemma = a.lemma]', '[] (</s> | []) []',
    '(?traditional) [pos="JJ"]+ [pos="NN"]', '(?longest) [pos="DT"] [pos="JJ"]*',
])
def test_mu_tab_and_label_reads_on_both_engines(query: str, cwb: CwbEngine, native: NativeEngine) -> None:
    """The query kinds and constructs the native engine learnt last (MU, TAB, labels read in a
    token, tags as steps) give the same hits on the cwb engine, which hands them to real CQP."""
    expected = [(h.match, h.matchend, h.target) for h in cwb.hits(query)]
    assert expected
    assert [(h.match, h.matchend, h.target) for h in native.hits(query)] == expected
