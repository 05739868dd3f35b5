"""``[calf] fetch_pages = false`` (the demo's setting, whose sites are made up): the text's own page is
never asked for, even where it answers; the web archive's capture gives the sentence and its context."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.calf.archive_web import LocalArchives, Stored
from tests.calf.web import Answer, LocalWeb, html
from tests.frontend.conftest import ewt_client
from tests.frontend.test_calf_ref import dated_corpus

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]


async def test_only_the_archives_are_asked_when_pages_are_not_fetched(tmp_path: Path) -> None:
    with LocalWeb() as web, LocalArchives() as archives:
        web.pages["/robots.txt"] = Answer(b"", content_type="text/plain")
        web.page("/blog/9", html("<p>The café near the Haus serves good coffee. Live today.</p>"))
        captured = html("<p>We went there on Sunday. The café near the Haus serves good coffee. We left.</p>")
        archives.capture(f"{web.url}/blog/9", Stored(dt.datetime(2013, 5, 3, 8, tzinfo=dt.UTC), captured.encode()))
        parts = dated_corpus(web, tmp_path)
        settings = [
            {
                "name": "ia",
                "kind": "cdx",
                "cdx": f"{archives.url}/ia/cdx",
                "replay": f"{archives.url}/ia/web/",
                "rate": 20,
            }
        ]
        for fetch_pages, source in ((False, "ia"), (True, "live")):
            async for client in ewt_client(
                parts,
                "dated",
                calf_enabled=True,
                calf_allowed_hosts=["127.0.0.1"],
                calf_cache_dir=tmp_path / f"cache-{fetch_pages}",
                calf_archives=settings,
                calf_fetch_pages=fetch_pages,
            ):
                found = (await client.get("/api/v1/ref/dated/3/web")).json()
                assert (found["source"], found["score"]) == (source, 100), found
                if not fetch_pages:
                    assert found["status"] == "found_archive" and found["left"].endswith("We went there on Sunday.")
                    assert web.requests.count("/blog/9") == 0 and not web.requests  # not even robots.txt
        assert web.requests.count("/blog/9") == 1  # asked when pages are fetched (the default)
