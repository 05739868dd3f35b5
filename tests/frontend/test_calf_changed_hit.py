"""The static link's "find this sentence on the web" with the hit replaced on the page: the sentence
is there, the word of the hit is not — ``changed_url``, naming both words, never ``found_url``
(the front end gives Calf the hit's place in the sentence). A local web server on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.calf.web import Answer, LocalWeb, html
from tests.frontend.conftest import ewt_client, tiny_corpus

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]

SENTENCE = "The committee met on Tuesday and approved the new budget for the coming school year ."


@pytest.fixture
def web() -> Iterator[LocalWeb]:
    with LocalWeb() as local:
        local.pages["/robots.txt"] = Answer(b"", content_type="text/plain")
        local.page(
            "/news/1",
            html(
                "<p>It was a long week. The committee met on Tuesday and approved the new "
                "schedule for the coming school year. Parents were told on Friday.</p>"
            ),
        )
        local.page(
            "/news/2",
            html(
                "<p>It was a long week. The committee met on Tuesday and approved the new "
                "budget for the coming school year. Parents were told on Friday.</p>"
            ),
        )
        yield local


async def test_the_hit_replaced_on_the_page_is_changed_not_found(web: LocalWeb, tmp_path: Path) -> None:
    tokens = "\n".join(SENTENCE.split())
    vrt = "".join(f'<text id="t{k}" url="{web.url}/news/{k}">\n<s>\n{tokens}\n</s>\n</text>\n' for k in (1, 2))
    parts = tiny_corpus(tmp_path, "news", vrt)
    budget = SENTENCE.split().index("budget")
    second = budget + len(SENTENCE.split())  # the same word in the second text
    async for client in ewt_client(
        parts, "news", calf_enabled=True, calf_allowed_hosts=["127.0.0.1"], calf_cache_dir=tmp_path / "cache"
    ):
        changed = (await client.get(f"/api/v1/ref/news/{budget}/web")).json()
        assert changed["status"] == "changed_url", changed
        assert changed["detail"] == 'the hit "budget" is "schedule" on the page; 1 of 15 words differ'
        assert (
            changed["page_text"] == "The committee met on Tuesday and approved the new schedule for the "
            "coming school year."
        )
        found = (await client.get(f"/api/v1/ref/news/{second}/web")).json()
        assert (found["status"], found["score"], found["detail"]) == ("found_url", 100.0, "exact"), found
        assert found["left"] == "It was a long week." and found["right"] == "Parents were told on Friday."
