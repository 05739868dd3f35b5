"""Calf in the platform: the static link's "find this sentence on the web" — off by default,
public addresses only unless allowed, pages cached — against a page on a local web server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.calf.test_calf import html
from tests.calf.web import Answer, LocalWeb
from tests.frontend.conftest import Partitioned, ewt_client, tiny_corpus

pytestmark = pytest.mark.anyio


@pytest.fixture
def web() -> Iterator[LocalWeb]:
    with LocalWeb() as local:
        local.pages["/robots.txt"] = Answer(b"", content_type="text/plain")
        local.page("/blog/3", html("<p>We went there on Sunday. The café near the Haus serves good coffee. "
                                   "We are going to make a cake soon.</p>"))
        yield local


def corpus_citing(web: LocalWeb, base: Path) -> Partitioned:
    tokens = "\n".join("The café near the Haus serves good coffee .".split())
    return tiny_corpus(base, "blog", f'<text id="t3" url="{web.url}/blog/3">\n<s>\n{tokens}\n</s>\n</text>\n')


async def test_find_a_static_link_on_the_web(web: LocalWeb, tmp_path: Path) -> None:
    parts = corpus_citing(web, tmp_path)
    async for client in ewt_client(parts, "blog", calf_cache_dir=tmp_path / "cache"):
        off = await client.get("/api/v1/ref/blog/7/web")
        assert off.status_code == 404 and "not enabled" in off.json()["detail"]
        assert "Find this sentence on the web" not in (await client.get("/ref/blog/7")).text
    async for client in ewt_client(parts, "blog", calf_enabled=True, calf_allowed_hosts=["127.0.0.1"],
                                   calf_cache_dir=tmp_path / "cache"):
        assert "Find this sentence on the web" in (await client.get("/ref/blog/7")).text
        found = (await client.get("/api/v1/ref/blog/7/web")).json()
        assert found["status"] == "found_url" and found["score"] == 100
        assert found["left"].endswith("We went there on Sunday.") and found["right"].startswith("We are going")
        assert found["sentence"] == "The café near the Haus serves good coffee ."
        again = (await client.get("/api/v1/ref/blog/7/web")).json()
        assert again == found and web.requests.count("/blog/3") == 1  # the page is cached
    async for client in ewt_client(parts, "blog", calf_enabled=True, calf_cache_dir=tmp_path / "other-cache"):
        refused = (await client.get("/api/v1/ref/blog/7/web")).json()
        assert refused["status"] == "fetch_error" and "non-public address" in refused["detail"]
        assert web.requests.count("/blog/3") == 1  # nothing was sent to the loopback address
