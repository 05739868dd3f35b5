"""``/ref/{corpus}/{position}``: the whole match highlighted, context inside its own text, and a
position outside any text said to be so."""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.frontend.conftest import Partitioned, ewt_client, tiny_corpus

pytestmark = pytest.mark.anyio


@pytest.fixture
async def ewt(ewt_parts: Partitioned) -> AsyncIterator[httpx.AsyncClient]:
    async for c in ewt_client(ewt_parts):
        yield c


@pytest.mark.slow  # 1.6 s here (make quick leaves it out)
async def test_a_multi_token_match_is_highlighted_whole(ewt: httpx.AsyncClient) -> None:
    page = (await ewt.get("/api/v1/query", params={"corpus": "ewt", "q": "the 1 of", "limit": 1})).json()
    hit = page["hits"][0]
    assert hit["matchend"] == hit["position"] + 2 and hit["ref"].endswith(f"?end={hit['matchend']}")
    answer = await ewt.get(f"/api/v1{hit['ref']}")
    assert answer.status_code == 200, answer.text
    ref = answer.json()
    assert ref["sentence"]["match"] == hit["match"] and len(hit["match"].split()) == 3
    assert ref["context"]["match"] == hit["match"] and ref["matchend"] == hit["matchend"]
    assert ref["link"].endswith(hit["ref"]) and ref["note"] is None
    html = (await ewt.get(hit["ref"])).text
    assert f"<mark>{hit['match']}</mark>" in html
    bad = await ewt.get(f"/api/v1/ref/ewt/{hit['position']}", params={"end": hit["position"] - 1})
    assert bad.status_code == 400 and "end=" in bad.json()["detail"]


async def test_context_stays_inside_the_text(ewt: httpx.AsyncClient) -> None:
    """The last token of one text and the first of the next: the 40-token context of each stops at
    the text's edge, and each citation names its own text."""
    last = (await ewt.get("/api/v1/query", params={"corpus": "ewt", "q": "[] </text>", "syntax": "cqp",
                                                   "meta": "text_url", "limit": 3})).json()["hits"]
    for hit in last:
        ref = (await ewt.get(f"/api/v1/ref/ewt/{hit['position']}")).json()
        assert ref["context"]["right"] == "" and ref["context"]["left"] != ""
        following = (await ewt.get(f"/api/v1/ref/ewt/{hit['position'] + 1}")).json()
        assert following["context"]["left"] == ""
        url, next_url = ref["meta"]["text_url"], following["meta"]["text_url"]
        assert url == hit["meta"]["text_url"] and url != next_url
        assert url in ref["citation"] and next_url in following["citation"]


@pytest.fixture(scope="module")
def loose(tmp_path_factory: pytest.TempPathFactory) -> Partitioned:
    """A corpus with a sentence between its two texts, outside any of them."""
    return tiny_corpus(
        tmp_path_factory.mktemp("loose"), "loose",
        '<text id="a" url="http://example.org/a">\n<s>\nfirst\nline\n</s>\n</text>\n'
        "<s>\nstray\nwords\n</s>\n"
        '<text id="b" url="http://example.org/b">\n<s>\nlast\nline\n</s>\n</text>\n',
    )


async def test_a_position_outside_any_text_says_so(loose: Partitioned) -> None:
    async for client in ewt_client(loose, name="loose"):
        inside = (await client.get("/api/v1/ref/loose/0")).json()
        assert inside["note"] is None and inside["meta"]["text_url"] == "http://example.org/a"
        assert inside["context"] == {"left": "", "match": "first", "right": "line"}
        stray = (await client.get("/api/v1/ref/loose/2")).json()
        assert stray["note"] == "position 2 is not inside any text of loose: it has no document metadata"
        assert stray["meta"]["text_url"] is None and stray["sentence"]["match"] == "stray"
        assert "not inside any text" in (await client.get("/ref/loose/2")).text
        assert (await client.get("/api/v1/ref/loose/99")).status_code == 404



async def test_the_heading_and_the_citation_name_the_same_positions_and_dates(tmp_path: Path) -> None:
    """A match of three tokens: the page's heading and the citation both say "positions 1–3"; the
    citation says the day it was retrieved from cowbird, and the text's crawl date apart from it."""
    words = "\n".join("We saw the old house today .".split())
    parts = tiny_corpus(tmp_path, "crawled", f'<text id="a" url="http://example.org/a" crawl_date="2013-05-02">\n'
                        f"<s>\n{words}\n</s>\n</text>\n", text="text:0+id+url+crawl_date")
    today = datetime.date.today().isoformat()
    async for client in ewt_client(parts, "crawled"):
        ref = (await client.get("/api/v1/ref/crawled/1", params={"end": 3})).json()
        assert ref["positions"] == "positions 1–3" and ref["crawl_date"] == "2013-05-02" and ref["retrieved"] == today
        assert ref["citation"] == (f"CRAWLED, positions 1–3. http://front/ref/crawled/1?end=3, source: "
                                   f"http://example.org/a, crawled 2013-05-02 (retrieved from cowbird on {today})")
        page = (await client.get("/ref/crawled/1", params={"end": 3})).text
        assert "<h1>CRAWLED, positions 1–3</h1>" in page and "The text was crawled on 2013-05-02." in page
        one = (await client.get("/api/v1/ref/crawled/4")).json()
        assert one["positions"] == "position 4" and one["citation"].startswith("CRAWLED, position 4. ")
        assert "<h1>CRAWLED, position 4</h1>" in (await client.get("/ref/crawled/4")).text
    (tmp_path / "undated").mkdir()
    undated = tiny_corpus(tmp_path / "undated", "undated", f'<text id="a" url="http://example.org/a">\n<s>\n{words}\n'
                          "</s>\n</text>\n")
    async for client in ewt_client(undated, "undated"):
        ref = (await client.get("/api/v1/ref/undated/1")).json()
        assert ref["crawl_date"] is None and "crawled" not in ref["citation"]
        assert ref["citation"].endswith(f"source: http://example.org/a (retrieved from cowbird on {today})")
        assert "was crawled" not in (await client.get("/ref/undated/1")).text
