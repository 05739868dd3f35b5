"""Calf in the platform: the static link's "find this sentence on the web" — off by default,
public addresses only unless allowed, pages cached, a call one of the viewer's queries at once, a
page fetch with a deadline — against a page on a local web server."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from tests.calf.web import Answer, LocalWeb, html
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


@pytest.mark.slow
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


@pytest.mark.slow
async def test_calls_count_as_queries_at_once(web: LocalWeb, tmp_path: Path) -> None:
    """Each call runs as one of the viewer's queries at once, under /query's fair use: a third call
    from one address while two run, and still running after its wait for a place (``queue_seconds``), is
    answered 429 with Retry-After."""
    web.pages["/blog/3"] = replace(web.pages["/blog/3"], delay=1.5)  # slow enough for the calls to overlap
    parts = corpus_citing(web, tmp_path)
    async for client in ewt_client(parts, "blog", calf_enabled=True, calf_allowed_hosts=["127.0.0.1"],
                                   calf_cache_dir=tmp_path / "cache", queue_seconds=0.3):
        answers = await asyncio.gather(*(client.get("/api/v1/ref/blog/7/web") for _ in range(3)))
        assert sorted(a.status_code for a in answers) == [200, 200, 429]
        refused = next(a for a in answers if a.status_code == 429)
        assert refused.headers["Retry-After"] == "2" and "2 queries at once" in refused.json()["detail"]
        assert all(a.json()["status"] == "found_url" and a.headers["X-Cowbird-Queries-Limit"] == "2"
                   for a in answers if a.status_code == 200)
        again = await client.get("/api/v1/ref/blog/7/web")  # the two have finished: their places are free
        assert again.status_code == 200 and again.json()["status"] == "found_url"



@pytest.mark.slow
async def test_a_call_over_the_limit_waits_for_a_place(web: LocalWeb, tmp_path: Path) -> None:
    """Over the limit of queries at once a call first waits for a place (``[fair_use] queue_seconds``,
    5 s by default): a third call while two run is answered once one of them ends. As many calls of
    one address wait as it may run at once (two); a fifth call is refused at once, not queued."""
    web.pages["/blog/3"] = replace(web.pages["/blog/3"], delay=1.5)
    parts = corpus_citing(web, tmp_path)
    for calls, expected in ((3, [200, 200, 200]), (5, [200, 200, 200, 200, 429])):
        async for client in ewt_client(parts, "blog", calf_enabled=True, calf_allowed_hosts=["127.0.0.1"],
                                       calf_cache_dir=tmp_path / f"cache-{calls}"):  # every call fetches the page
            async def timed(client: httpx.AsyncClient = client) -> tuple[int, float]:
                started = time.monotonic()
                answer = await client.get("/api/v1/ref/blog/7/web")
                return answer.status_code, time.monotonic() - started

            answers = await asyncio.gather(*(timed() for _ in range(calls)))
            assert sorted(status for status, _ in answers) == expected
            assert max(seconds for _, seconds in answers) >= 1.5  # (a call waited for a place: not refused)
            refused = [seconds for status, seconds in answers if status == 429]
            # the one past the waiting places: refused at once, before any call that got a place was answered
            assert all(seconds < min(s for status, s in answers if status == 200) for seconds in refused)

@pytest.mark.slow  # a wall-clock bound, generous: 15 s for a 2-s deadline; the whole page takes 30 s
async def test_a_trickling_page_ends_at_the_deadline(web: LocalWeb, tmp_path: Path) -> None:
    """A page that sends a byte every 0.1 s: the call ends after the fetch's deadline (4 × calf_timeout),
    not when the page is done, and says why."""
    body = web.pages["/blog/3"].body
    web.pages["/blog/3"] = Answer(body, trickle=0.1)  # about 30 s for the whole page; no read waits 0.5 s
    parts = corpus_citing(web, tmp_path)
    async for client in ewt_client(parts, "blog", calf_enabled=True, calf_allowed_hosts=["127.0.0.1"],
                                   calf_cache_dir=tmp_path / "cache", calf_timeout=0.5):
        started = time.monotonic()
        answer = (await client.get("/api/v1/ref/blog/7/web")).json()
        assert time.monotonic() - started < 15.0
        assert answer["status"] == "fetch_error" and answer["detail"] == "the page did not arrive within 0.5 s"


@pytest.mark.slow
async def test_a_gone_page_is_found_in_a_web_archive(web: LocalWeb, tmp_path: Path) -> None:
    """[calf] archives: the page is gone (404); its capture nearest the text's crawl date
    (``date_attribute``) holds the sentence, and the answer says which archive, when and where."""
    import datetime as dt

    from tests.calf.archive_web import LocalArchives, Stored

    parts = dated_corpus(web, tmp_path)
    with LocalArchives() as archives:
        page = html("<p>We went there on Sunday. The café near the Haus serves good coffee. We are going to make "
                    "a cake soon.</p>")
        archives.capture(f"{web.url}/blog/9", Stored(dt.datetime(2013, 4, 30, 8, tzinfo=dt.UTC), page.encode()))
        archives.capture(f"{web.url}/blog/9", Stored(dt.datetime(2019, 1, 1, tzinfo=dt.UTC), b"<p>New blog</p>"))
        settings = [{"name": "ia", "kind": "cdx", "cdx": f"{archives.url}/ia/cdx", "replay": f"{archives.url}/ia/web/",
                     "rate": 20}]
        async for client in ewt_client(parts, "dated", calf_enabled=True, calf_allowed_hosts=["127.0.0.1"],
                                       calf_cache_dir=tmp_path / "cache", calf_archives=settings,
                                       calf_date_attribute="text_lastmod"):
            found = (await client.get("/api/v1/ref/dated/3/web")).json()
            assert (found["status"], found["source"], found["score"]) == ("found_archive", "ia", 100)
            assert found["capture_date"] == "2013-04-30T08:00:00Z"
            assert found["capture_url"] == f"{archives.url}/ia/web/20130430080000id_/{web.url}/blog/9"
            assert found["left"].endswith("We went there on Sunday.") and found["source_url"] == f"{web.url}/blog/9"
            assert web.requests.count("/blog/9") == 1 and "from=20100503000000" in archives.asked("/ia/cdx")[0]


def dated_corpus(web: LocalWeb, base: Path) -> Partitioned:
    """One sentence of a text with its URL and the day it was crawled (``text_lastmod``)."""
    tokens = "\n".join("The café near the Haus serves good coffee .".split())
    return tiny_corpus(base, "dated", f'<text id="t9" url="{web.url}/blog/9" lastmod="2013-05-02">\n<s>\n{tokens}\n'
                       "</s>\n</text>\n", "text:0+id+url+lastmod")


@pytest.mark.slow
async def test_an_archive_that_keeps_the_call_waiting_ends_at_the_deadline(web: LocalWeb, tmp_path: Path) -> None:
    """An archive answering 503 with Retry-After: 3, again and again: the call ends at [limits]
    deadline (plus the backstop), with a fetch_error that says so, not after every retry."""
    from tests.calf.archive_web import LocalArchives

    parts = dated_corpus(web, tmp_path)
    with LocalArchives() as archives:
        archives.fail("/ia/cdx", 503, 10, retry_after="3")
        settings = [{"name": "ia", "kind": "cdx", "cdx": f"{archives.url}/ia/cdx", "replay": f"{archives.url}/ia/web/",
                     "rate": 20, "retries": 5}]
        async for client in ewt_client(parts, "dated", calf_enabled=True, calf_allowed_hosts=["127.0.0.1"],
                                       calf_cache_dir=tmp_path / "cache", calf_archives=settings, deadline=1.0):
            started = time.monotonic()
            answer = (await client.get("/api/v1/ref/dated/3/web")).json()
            assert time.monotonic() - started < 9.0
            assert answer["status"] == "fetch_error" and "did not answer within 1 s" in answer["detail"]
