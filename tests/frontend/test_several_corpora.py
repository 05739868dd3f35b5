"""Several corpora at once (``corpus=tricky,sample``; issue 64, item 5), through the front end over HTTP
to a real node: every refusal about an attribute names the corpus that lacks it — ``sample`` has no
``upos``, no ``text_host``, no ``p`` regions — never the union ``tricky,sample``, in every view and
parameter that names one; and an export's lines carry each corpus's own position (which its ``/ref``
link uses) beside their place in the combined run, as the file's header lines say."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cowbird.engines import QueryEngine
from cowbird.frontend import CorpusConfig, FrontendSettings
from cowbird.frontend.settings import NodeAccess
from cowbird.node import NodeSettings
from cowbird.node import create_app as create_node
from tests.frontend.conftest import NODE_TOKEN, TRICKY, Partitioned, api_account, engine, front_client
from tests.support import assert_problem

pytestmark = pytest.mark.anyio

BOTH = f"{TRICKY},sample"
BOXES = json.dumps({"tokens": [{"tests": [{"attribute": "upos", "operator": "is", "value": "NOUN"}]}]})
BOXES_WITHIN = json.dumps(
    {"tokens": [{"tests": [{"attribute": "word", "operator": "is", "value": "house"}]}], "within": "p"}
)


@pytest.fixture
async def multi(
    tricky_five: Partitioned, sample_parts: Partitioned, tmp_path: Path
) -> AsyncIterator[httpx.AsyncClient]:
    engines: dict[str, QueryEngine] = {pid: engine(tricky_five.registry, pid) for pid in tricky_five.ids}
    engines |= {pid: engine(sample_parts.registry, pid) for pid in sample_parts.ids}
    node = create_node(NodeSettings(registry=tricky_five.registry, token=NODE_TOKEN), engines=engines)
    accounts: dict[str, Any] = {"database_file": api_account(tmp_path / "accounts.sqlite3")}
    settings = FrontendSettings(
        corpora=[
            CorpusConfig(
                name=TRICKY,
                title="Tricky",
                manifest=tricky_five.manifest,
                nodes={p: ["http://node-a"] for p in tricky_five.ids},
            ),
            CorpusConfig(
                name="sample",
                title="Sample",
                manifest=sample_parts.manifest,
                nodes={p: ["http://node-a"] for p in sample_parts.ids},
            ),
        ],
        nodes=NodeAccess(token=NODE_TOKEN),
        allowed_hosts=["front"],
        **accounts,
    )
    async for client in front_client(settings, {"node-a": node}):
        yield client


TRICKY_P = "word, pos, upos, lemma"
P_UPOS = "corpus sample has no p-attribute 'upos' (it has: word, pos, lemma)"
S_P = "corpus sample has no s-attribute 'p' (it has: "
META_HOST = "corpus sample has no s-attribute with values named 'text_host' (it has: "


@pytest.mark.parametrize(("path", "params", "words"), [
    ("/api/v1/query", {"q": "house", "show": "upos"}, f"show=upos: {P_UPOS}"),
    ("/api/v1/query", {"q": "house", "inline": "upos"}, f"inline=upos: {P_UPOS}"),
    ("/api/v1/query", {"q": "house", "meta": "p"}, f"meta=p: {S_P}"),
    ("/api/v1/query", {"q": "house", "boundaries": "p"}, f"boundaries=p: {S_P}"),
    ("/api/v1/query", {"q": "house", "context": "p"}, f"context=p: {S_P}"),
    ("/api/v1/query", {"q": "house", "sort": "match.upos"}, f"sort=match.upos: {P_UPOS}"),
    ("/api/v1/query", {"q": "house", "filter": "text_host~x.*"}, f"filter 'text_host~x.*': {META_HOST}"),
    ("/api/v1/export", {"q": "house", "show": "upos"}, f"show=upos: {P_UPOS}"),
    ("/api/v1/export", {"q": "house", "sort": "left1.upos"}, f"sort=left1.upos: {P_UPOS}"),
    ("/api/v1/frequency", {"q": "house", "by": "upos"}, f"by=upos: {P_UPOS}"),
    ("/api/v1/distribution", {"q": "house", "by": "text_host"}, f"by=text_host: {META_HOST}"),
    ("/api/v1/dispersion", {"q": "house", "parts": "p"}, f"parts=p: {S_P}"),
    ("/api/v1/collocations", {"q": "house", "attribute": "upos"}, f"attribute=upos: {P_UPOS}"),
    ("/api/v1/collocations", {"q": "house", "within": "p"}, f"within=p: {S_P}"),
    ("/api/v1/trend", {"q": "house", "by": "text_host"}, f"by=text_host: {META_HOST}"),
    ("/api/v1/wordlist", {"attribute": "upos"}, f"attribute=upos: {P_UPOS}"),
    ("/api/v1/wordlist", {"within": "p"}, f"within=p: {S_P}"),
    ("/api/v1/keywords", {"attribute": "upos", "reference": TRICKY}, f"attribute=upos: {P_UPOS}"),
    ("/api/v1/subcorpus", {"values": "text_host"}, f"values=text_host: {META_HOST}"),
    ("/api/v1/context/tricky,sample/3", {"show": "upos"}, f"show=upos: {P_UPOS}"),
    ("/api/v1/context/tricky,sample/3", {"region": "p"}, f"region=p: {S_P}"),
    ("/api/v1/builder", {"boxes": BOXES}, f"boxes: {P_UPOS}"),
    ("/api/v1/builder", {"boxes": BOXES_WITHIN}, f"boxes: {S_P}"),
])  # fmt: skip
async def test_a_refusal_names_the_corpus_that_lacks_the_attribute(
    multi: httpx.AsyncClient, path: str, params: dict[str, Any], words: str
) -> None:
    answer = await multi.get(path, params=params if "/context/" in path else {"corpus": BOTH, **params})
    detail = assert_problem(answer, 400, "bad_parameter" if "values" in params else "unknown_attribute")["detail"]
    assert words in detail, detail
    assert f"corpus {BOTH}" not in detail
    if path not in ("/api/v1/frequency", "/api/v1/distribution"):  # (these two count each corpus apart)
        assert f"leave it out of corpus={BOTH}" in detail  # what to do: tricky has it


async def test_an_attribute_none_of_them_has_names_them_all(multi: httpx.AsyncClient) -> None:
    answer = await multi.get("/api/v1/query", params={"corpus": BOTH, "q": "house", "show": "tag"})
    detail = assert_problem(answer, 400, "unknown_attribute")["detail"]
    assert detail == f"show=tag: corpus {TRICKY}, sample has no p-attribute 'tag' ({TRICKY} has: {TRICKY_P})"
    alone = await multi.get("/api/v1/query", params={"corpus": "sample", "q": "house", "show": "upos"})
    assert assert_problem(alone, 400, "unknown_attribute")["detail"] == f"show=upos: {P_UPOS}"
