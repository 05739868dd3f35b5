"""A built corpus is searched with every cowbird view exactly as a VRT-encoded one (issue 66's target).

``cowbird build`` (the real command) makes a corpus of generated English web pages; ``cowbird encode`` encodes
the VRT that build wrote (``OUT/NAME.vrt.gz``) once more with the design's attribute declarations; the demo
stack serves both (``DemoStack(built=...)``, as ``cowbird demo --corpus`` does: a node of its own for each,
public). Then every view of the workbench — concordance (sorted, with tokens inline, a line widened),
frequency, distribution over metadata, dispersion, collocations, word sketch, trend, comparison of two
searches, keywords, word lists, subcorpus sizes, export and the reference page ``/api/v1/ref`` — is asked
of both over HTTP, and the answers must be the same (but for the corpus's name).

A second test starts ``cowbird demo --corpus OUT/NAME.manifest.json`` (the README's second line) and searches
the built corpus over HTTP beside the demo's own.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cowbird.commands.demo import DemoStack
from tests.build import pages
from tests.build.test_bad_input import ROOT, _env, run_build
from tests.frontend.test_demo_command import until_greeted
from tests.support import free_ports

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

BUILT, ENCODED = "webbuilt", "webvrt"
PARTITION_TOKENS = 15_000
S_DECLARATIONS = ("text:0+id+url+host+tld+crawl_date+last_modified+lang+lang_conf+badness", "p:0+kind+bpc+bpv", "s:0")
VOLATILE = frozenset({"elapsed", "elapsed_ms", "seconds", "took", "took_ms", "cached", "served_by", "queued",
                      "deadline", "started", "id", "request_id", "retrieved"})
"""Members of an answer that say how it was computed, not what it is (timings, caches, request ids)."""


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path]]:
    """The built corpus's manifest and the manifest of its VRT encoded by ``cowbird encode``."""
    base = tmp_path_factory.mktemp("built-views")
    rng = random.Random(6606)
    inputs = []
    for k in range(3):  # three WARC files, three shards
        batch = [pages.make_page(rng, 100 * k + i, "en") for i in range(30)]
        inputs.append(pages.write_warc(base / "in" / f"crawl-{k}.warc.gz", batch, gzip=k != 1))
    out = base / BUILT
    result = run_build(*inputs, "-o", out, "--name", BUILT, "--language", "en", "--jobs", "2",
                       "--partition-tokens", str(PARTITION_TOKENS))
    assert result.returncode == 0, f"cowbird build failed:\n{result.stdout}\n{result.stderr}"
    manifest = out / f"{BUILT}.manifest.json"
    encoded = base / ENCODED
    declarations = [arg for d in S_DECLARATIONS for arg in ("-S", d)]
    encode = subprocess.run(
        [sys.executable, "-P", "-m", "cowbird", "encode", "-f", str(out / f"{BUILT}.vrt.gz"), "-d",
         str(encoded / "data"), "-R", str(encoded / "registry" / ENCODED), "-c", "utf8", "-x", "-s",
         "-P", "pos", "-P", "lemma", *declarations, "--partition-tokens", str(PARTITION_TOKENS), "--manifest",
         str(encoded / f"{ENCODED}.manifest.json")],
        cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=600, check=False)
    assert encode.returncode == 0, encode.stderr
    yield manifest, encoded / f"{ENCODED}.manifest.json"


@pytest.fixture(scope="module")
def stack(corpora: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    front, node1, node2, built_node, encoded_node = free_ports(5)
    settings: dict[str, object] = {"anonymous_running_queries": 100, "anonymous_rows_per_day": 10**9}
    demo = DemoStack(tmp_path_factory.mktemp("demo"), front, (node1, node2), log_level="warning",
                     settings=settings, built=list(corpora), built_ports=(built_node, encoded_node))
    demo.prepare()
    demo.start()
    try:
        yield demo
    finally:
        demo.stop()


def normalised(value: Any, name: str) -> Any:
    """An answer with the corpus's name replaced by CORPUS (in its partitions' ids and links too) and the
    members that say how it was computed left out."""
    if isinstance(value, dict):
        return {k: normalised(v, name) for k, v in value.items() if k not in VOLATILE}
    if isinstance(value, list):
        return [normalised(v, name) for v in value]
    if isinstance(value, str):
        return value.replace(name, "CORPUS")
    return value


def ask(client: httpx.Client, path: str, corpus: str, params: dict[str, Any]) -> Any:
    """GET ``path`` for ``corpus`` (``{corpus}`` in the path too); the JSON answer, or the text of a file."""
    asked = params if "{corpus}" in path else {"corpus": corpus, **params}
    answer = client.get(path.format(corpus=corpus), params=asked)
    assert answer.status_code == 200, f"{path} {params} on {corpus}: {answer.status_code} {answer.text[:500]}"
    if answer.headers["content-type"].startswith("application/json"):
        return normalised(answer.json(), corpus)
    return answer.text.replace(corpus, "CORPUS")


def views(client: httpx.Client) -> list[tuple[str, str, dict[str, Any]]]:
    """Every view, with arguments taken from the corpus itself (its most frequent noun and a hit's position)."""
    nouns = client.get("/api/v1/frequency", params={"corpus": BUILT, "q": '[pos="NN"]', "syntax": "cqp",
                                                     "by": "lemma", "limit": 1}).json()
    noun = nouns["rows"][0]["values"][0] if "rows" in nouns else "time"
    hits = client.get("/api/v1/query", params={"corpus": BUILT, "q": noun, "limit": 1}).json()["hits"]
    position = hits[0]["position"]
    q = {"q": '[pos="JJ"] [pos="NNS?"]', "syntax": "cqp"}
    return [
        ("concordance, tokens inline", "/api/v1/query", {**q, "inline": "pos,lemma", "limit": 100,
                                                         "meta": "text_url,text_host,text_lang,p_bpc"}),
        ("concordance sorted on three keys", "/api/v1/query",
         {**q, "sort": "right1.word,left1.pos,match.word", "direction": "asc,desc,asc", "limit": 100}),
        ("concordance of a simple query", "/api/v1/query", {"q": f"the {noun}", "limit": 50}),
        ("a line widened", "/api/v1/context/{corpus}/" + str(position), {"end": position + 1, "tokens": 40}),
        ("its sentence", "/api/v1/context/{corpus}/" + str(position), {"end": position + 1, "tokens": 100,
                                                                        "region": "s"}),
        ("frequency by two keys", "/api/v1/frequency", {**q, "by": "word,pos", "on": "match,matchend", "limit": 500}),
        ("distribution over hosts", "/api/v1/distribution", {**q, "by": "text_host"}),
        ("distribution over top-level domains", "/api/v1/distribution", {"q": noun, "by": "text_tld"}),
        ("dispersion over texts", "/api/v1/dispersion", {**q, "parts": "text"}),
        ("dispersion in bins", "/api/v1/dispersion", {"q": noun, "bins": 10}),
        ("collocations", "/api/v1/collocations", {"q": noun, "window": 3, "measures": "mi,log_dice", "order": "f"}),
        ("word sketch", "/api/v1/sketch", {"headword": noun}),
        ("trend over last-modified years", "/api/v1/trend",
         {"q": noun, "by": "text_last_modified", "period": "year", "sparse_below": 0}),
        ("two searches compared", "/api/v1/compare",
         {**q, "other_q": '[pos="DT"] [pos="NN"]', "other_syntax": "cqp", "by": "word", "on": "matchend", "min": 1}),
        ("keywords of one host's texts", "/api/v1/keywords",
         {"filter": "text_host~www.example.org", "reference_filter": "text_host!~www.example.org", "min": 2}),
        ("word list", "/api/v1/wordlist", {"attribute": "lemma", "limit": 1000}),
        ("2-grams of tags", "/api/v1/wordlist", {"attribute": "pos", "n": 2, "limit": 1000}),
        ("subcorpus sizes by host", "/api/v1/subcorpus", {"values": "text_host"}),
        ("export", "/api/v1/export", {**q, "limit": 500, "meta": "text_url,text_crawl_date"}),
        ("reference of a position", "/api/v1/ref/{corpus}/" + str(position), {}),
    ]


def test_every_view_answers_a_built_corpus_as_its_encoded_vrt(stack: DemoStack) -> None:
    listed = httpx.get(f"{stack.url}/api/v1/corpora", timeout=30).json()["data"]
    sizes = {c["name"]: c["size"] for c in listed}
    assert sizes[BUILT] == sizes[ENCODED] > PARTITION_TOKENS  # public, both, the same size, 2+ partitions
    differing = []
    with httpx.Client(base_url=stack.url, timeout=300) as client:
        for name, path, params in views(client):
            built, encoded = ask(client, path, BUILT, params), ask(client, path, ENCODED, params)
            assert built, f"{name}: empty answer"
            if built != encoded:
                differing.append((name, json.dumps(built)[:300], json.dumps(encoded)[:300]))
    assert not differing, differing


def test_cowbird_demo_serves_a_built_corpus(corpora: tuple[Path, Path], tmp_path: Path) -> None:
    """The README's second line: ``cowbird demo --corpus OUT/NAME.manifest.json``."""
    manifest, _ = corpora
    port = free_ports(1)[0]
    while any(not _free(p) for p in range(port, port + 5)):
        port = free_ports(1)[0]
    process = subprocess.Popen([sys.executable, "-m", "cowbird", "demo", "--dir", str(tmp_path / "demo"), "--port",
                                str(port), "--web-tokens", "20000", "--corpus", str(manifest)], cwd=ROOT, env=_env(),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        lines = "".join(until_greeted(process))
        assert f"built corpus '{BUILT}' (public)" in lines and f"port {port + 4}" in lines, lines
        listed = httpx.get(f"http://127.0.0.1:{port}/api/v1/corpora", timeout=30).json()["data"]
        assert [c["name"] for c in listed] == ["web", BUILT]  # public beside the demo's web corpus
        answer = httpx.get(f"http://127.0.0.1:{port}/api/v1/query", params={
            "corpus": BUILT, "q": '[pos="DT"] [pos="NN"]', "syntax": "cqp", "meta": "text_url", "inline": "lemma"},
            timeout=60).json()
        assert answer["total"] > 100
        assert all(hit["meta"]["text_url"].startswith("https://") for hit in answer["hits"])
        page = httpx.get(f"http://127.0.0.1:{port}/", params={"corpus": BUILT}, timeout=30)
        assert page.status_code == 200 and BUILT in page.text
    finally:
        process.terminate()
        process.wait(30)


def _free(port: int) -> bool:
    from cowbird.commands.demo import port_in_use

    return not port_in_use(port)
