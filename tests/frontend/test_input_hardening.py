"""What clients send that must not turn into a wrong answer or a 500: hosts, bytes, Unicode, seeds."""

from __future__ import annotations

import unicodedata
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI

from tests.frontend.conftest import Partitioned, front_client, front_settings
from tests.support import assert_problem

pytestmark = pytest.mark.anyio


async def test_an_unknown_host_header_is_refused(
    sample_parts: Partitioned, big_parts: Partitioned, nodes: dict[str, FastAPI], tmp_path: Path
) -> None:
    settings = front_settings(sample_parts, big_parts, tmp_path, public_url="https://corpora.example.org")
    async for client in front_client(settings, nodes):
        forged = await client.get("/api/v1/ref/sample/60", headers={"host": "evil.example.com"})
        assert_problem(forged, 400, "bad_host")
        body = (await client.get("/api/v1/ref/sample/60", headers={"host": "corpora.example.org"})).json()
        assert body["link"] == "https://corpora.example.org/ref/sample/60"
        export = await client.get("/api/v1/export", params={"corpus": "sample", "q": "house"})
        assert "\thttps://corpora.example.org/ref/sample/2\t" in export.text


async def test_parameters_that_are_not_utf8_are_refused(client: httpx.AsyncClient) -> None:
    for raw in (b"q=%FF", b"q=%ED%A0%80", b"corpus=sample&q=a&filter=text_genre~%C3"):
        response = await client.get("/api/v1/query?corpus=sample&" + raw.decode())
        body = assert_problem(response, 400, "bad_parameter")
        assert "is not valid UTF-8" in str(body["detail"])


async def test_queries_are_normalised_to_nfc_like_the_corpus(client: httpx.AsyncClient) -> None:
    decomposed = unicodedata.normalize("NFD", "café")
    assert decomposed != "café"
    for syntax, query in (("simple", decomposed), ("cqp", f'[word="{decomposed}"]')):
        body = (await client.get("/api/v1/query", params={"corpus": "sample", "q": query, "syntax": syntax})).json()
        assert body["total"] == 1 and body["cqp"] == '[word="café"]', body
    filtered = await client.get("/api/v1/query", params={"corpus": "sample", "q": "the",
                                                        "filter": f"text_url~.*{decomposed}.*"})
    assert filtered.status_code == 200


async def test_seed_and_recursive_regexes_are_the_clients_error(client: httpx.AsyncClient) -> None:
    base = {"corpus": "sample", "q": "the"}
    assert_problem(await client.get("/api/v1/query", params={**base, "sample": 5, "seed": -1}), 400,
                   "bad_parameter")
    for regex in ("(?R)", "(?0)", "((?1))", "x*(?R)"):
        answer = await client.get("/api/v1/query", params={**base, "q": f'[word="{regex}"]', "syntax": "cqp"})
        assert assert_problem(answer, 400, "query_syntax")["offset"] == 7 + regex.index("(?")
