"""Several corpora at once (``corpus=tricky,sample``; issue 64, item 5), through the front end over HTTP
to a real node: every refusal about an attribute names the corpus that lacks it — ``sample`` has no
``upos``, no ``text_host``, no ``p`` regions — never the union ``tricky,sample``, in every view and
parameter that names one; and an export's lines carry each corpus's own position (which its ``/ref``
link uses) beside their place in the combined run, as the file's header lines say."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pandas as pd
import pytest

from cowbird.engines import QueryEngine
from cowbird.frontend import CorpusConfig, FrontendSettings
from cowbird.frontend.settings import NodeAccess
from cowbird.node import NodeSettings
from cowbird.node import create_app as create_node
from tests.frontend.conftest import NODE_TOKEN, TRICKY, Partitioned, api_account, engine, front_client
from tests.support import assert_problem, read_tricky

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
@pytest.mark.slow  # 2.0 s here (make quick leaves it out)
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


async def export(client: httpx.AsyncClient, corpus: str, **params: Any) -> tuple[pd.DataFrame, str]:
    """An export read back with pandas (its ``#`` lines skipped as the first one says), and its text."""
    answer = await client.get(
        "/api/v1/export", params={"corpus": corpus, "q": "house", "format": "tsv", "limit": 10_000, **params}
    )
    assert answer.status_code == 200, answer.text
    skip = int(answer.text.split("skiprows=")[1].split(";")[0].split(")")[0]) if "provenance" in params else 0
    return pd.read_csv(io.StringIO(answer.text), sep="\t", skiprows=skip, keep_default_na=False), answer.text


@pytest.mark.parametrize("sort", [None, "match.word"])
@pytest.mark.slow  # 2.3 s here (make quick leaves it out)
async def test_an_export_gives_each_corpus_own_position_beside_the_combined_one(
    multi: httpx.AsyncClient, sort: str | None
) -> None:
    ordered = {"sort": sort} if sort else {}
    both, text = await export(multi, BOTH, provenance=1, **ordered)
    alone = {name: (await export(multi, name, **ordered))[0] for name in (TRICKY, "sample")}
    tricky_size = len(read_tricky())
    assert list(both.columns[:6]) == ["corpus", "position", "matchend", "combined_position", "combined_matchend", "ref"]
    assert "combined_position" not in alone[TRICKY].columns  # one corpus: its positions are the only ones
    assert len(alone[TRICKY]) > 10 and len(alone["sample"]) >= 3
    for name, offset in ((TRICKY, 0), ("sample", tricky_size)):
        mine = both[both["corpus"] == name]
        # each corpus's lines are its own export's lines, at its own positions
        assert list(zip(mine["position"], mine["matchend"], mine["match"], strict=True)) == list(
            zip(alone[name]["position"], alone[name]["matchend"], alone[name]["match"], strict=True)
        )
        assert list(mine["combined_position"]) == [p + offset for p in mine["position"]]
        assert list(mine["combined_matchend"]) == [p + offset for p in mine["matchend"]]
        assert all(
            ref.endswith(f"/ref/{name}/{p}") or f"/ref/{name}/{p}?end=" in ref
            for ref, p in zip(mine["ref"], mine["position"], strict=True)
        )
    if sort is None:  # the combined run: tricky's positions, then sample's after them
        assert list(both["combined_position"]) == sorted(both["combined_position"])
        assert list(both["corpus"].unique()) == [TRICKY, "sample"]
    # the header lines say which position is which
    metadata = [line for line in text.splitlines() if line.startswith("#")]
    assert any(
        "position and matchend are each line's first and last token in its own corpus" in line
        and f"{TRICKY}, then sample" in line
        for line in metadata
    )
    assert any('"combined_offset": 0' in line and f'"combined_offset": {tricky_size}' in line for line in metadata)


async def test_an_ndjson_export_of_several_corpora_has_both_positions(multi: httpx.AsyncClient) -> None:
    answer = await multi.get(
        "/api/v1/export", params={"corpus": BOTH, "q": "house", "format": "ndjson", "provenance": 1}
    )
    assert answer.status_code == 200, answer.text
    first, *rows = [json.loads(line) for line in answer.text.splitlines()]
    assert "own corpus" in first["metadata"]["positions"]
    last = rows[-1]  # a hit of sample, the second corpus
    assert last["corpus"] == "sample" and last["combined_position"] == last["position"] + len(read_tricky())
    assert last["ref"].split("/ref/")[1].split("?")[0] == f"sample/{last['position']}"
