"""No analysis depends on where EWT is cut (issue 64, item 2), on data the feature was not built with:
the reference corpus cut at text boundaries into five partitions gives the ``within=none`` n-grams,
the collocation table and the lines at every cut that plain Python counts over ``ewt.vrt`` in one
piece. Skips without ``../shared/reference`` (fails under CI)."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import AsyncIterator
from functools import cache

import httpx
import pytest

from cowbird.core.manifest import Manifest
from tests.frontend.conftest import Partitioned, encode_parts, ewt_client
from tests.support import ewt_options, require_reference

pytestmark = pytest.mark.anyio

_ENTITY = re.compile(r"&(?:#x([0-9A-Fa-f]+)|#([0-9]+)|(lt|gt|amp|quot|apos));")
_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


@cache
def ewt_words() -> tuple[tuple[str, str, int], ...]:
    """(word, upos, the number of its text) of every token of ewt.vrt, read as cwb-encode -xsB reads it
    (NFC, fields stripped, XML entities decoded)."""
    tokens: list[tuple[str, str, int]] = []
    text = -1
    for raw in (require_reference() / "ewt.vrt").read_text(encoding="utf-8").split("\n"):
        line = unicodedata.normalize("NFC", raw)
        text += line.startswith("<text ")
        if not line.strip() or line.startswith("<"):
            continue
        fields = [
            _ENTITY.sub(
                lambda m: chr(int(m[1], 16)) if m[1] else chr(int(m[2])) if m[2] else _NAMED[m[3]], f.strip(" ")
            )
            for f in line.split("\t")
        ]
        tokens.append((fields[0], fields[2], text))
    return tuple(tokens)


@pytest.fixture(scope="module")
def ewt_five(tmp_path_factory: pytest.TempPathFactory) -> Partitioned:
    base = tmp_path_factory.mktemp("ewt-five")
    return encode_parts(ewt_options(base / "data", base / "registry" / "ewt", partition_tokens=55_000), 5)


@pytest.fixture
async def ewt(ewt_five: Partitioned) -> AsyncIterator[httpx.AsyncClient]:
    async for client in ewt_client(ewt_five):
        yield client


async def get(client: httpx.AsyncClient, path: str, **params: str | int) -> dict[str, object]:
    answer = await client.get(path, params={"corpus": "ewt", **params})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert isinstance(body, dict) and body.get("complete", True), body
    return body


@pytest.mark.slow
@pytest.mark.parametrize(("n", "limit", "least"), [(2, 3_000, 1), (3, 100_000, 2)])
async def test_ewt_ngrams_across_the_cuts_equal_plain_python(
    ewt: httpx.AsyncClient, n: int, limit: int, least: int
) -> None:
    words = [w for w, _, _ in ewt_words()]
    counts = Counter(tuple(words[k : k + n]) for k in range(len(words) - n + 1))
    ranked = sorted(((k, c) for k, c in counts.items() if c >= least), key=lambda item: (-item[1], item[0]))
    body = await get(ewt, "/api/v1/wordlist", attribute="word", n=n, within="none", limit=limit, min=least)
    rows = body["rows"]
    assert isinstance(rows, list)
    assert [(tuple(r["tokens"]), r["frequency"]) for r in rows] == ranked[:limit]
    assert body["ngrams"] == len(words) - n + 1 and body["uncounted"] == 0


@pytest.mark.slow
@pytest.mark.parametrize(
    ("query", "upos", "left", "right"), [('[upos="PROPN"]', "PROPN", 5, 5), ('[upos="PUNCT"]', "PUNCT", 2, 30)]
)
async def test_ewt_collocates_across_the_cuts_equal_plain_python(
    ewt: httpx.AsyncClient, query: str, upos: str, left: int, right: int
) -> None:
    tokens = ewt_words()
    hits = [k for k, (_, tag, _) in enumerate(tokens) if tag == upos]
    inside = set(hits)
    window = {p for k in hits for p in [*range(max(0, k - left), k), *range(k + 1, min(len(tokens), k + right + 1))]}
    window -= inside
    expected = Counter(tokens[p][0] for p in window)
    body = await get(
        ewt, "/api/v1/collocations", q=query, syntax="cqp", attribute="word", left=left, right=right, within="none",
        min_freq=1, limit=100_000, order="f",
    )  # fmt: skip
    rows = body["rows"]
    assert isinstance(rows, list)
    assert body["f1"] == len(window) and body["n"] == len(tokens) - len(inside)
    assert {r["value"]: r["f"] for r in rows} == dict(expected)
    texts: dict[str, set[int]] = {}  # issue 65: each collocate's texts, each once, and E11 = f1 * f2 / N
    for p in window:
        texts.setdefault(tokens[p][0], set()).add(tokens[p][2])
    assert {r["value"]: r["texts"] for r in rows if r["f"]} == {w: len(t) for w, t in texts.items()}
    outside = Counter(tokens[p][0] for p in range(len(tokens)) if p not in inside)
    n = len(tokens) - len(inside)
    assert all(r["expected"] == pytest.approx(len(window) * outside[r["value"]] / n, rel=1e-12) for r in rows)


@pytest.mark.slow  # 1.6 s here (make quick leaves it out)
async def test_ewt_lines_at_every_cut_equal_plain_python(ewt: httpx.AsyncClient, ewt_five: Partitioned) -> None:
    """Each partition's first and last token widened by 100 tokens each side across texts."""
    tokens = ewt_words()
    cuts = [p.offset for p in Manifest.load(ewt_five.manifest).partitions][1:]
    for position in [*cuts, *(c - 1 for c in cuts)]:
        answer = await ewt.get(
            f"/api/v1/context/ewt/{position}", params={"tokens": 100, "region": "none", "show": "upos"}
        )
        assert answer.status_code == 200, answer.text
        line = answer.json()
        assert line["left"] == [[w, upos] for w, upos, _ in tokens[position - 100 : position]], position
        assert line["right"] == [[w, upos] for w, upos, _ in tokens[position + 1 : position + 101]], position
        texts = [t for _, _, t in tokens[position - 100 : position + 101]]
        assert line["breaks"]["text"] == [k for k in range(1, len(texts)) if texts[k] != texts[k - 1]]
        assert (100 if position in cuts else 101) in line["breaks"]["text"]  # the cut: a new text
