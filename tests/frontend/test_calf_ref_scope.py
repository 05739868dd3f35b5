"""The front end's "find on the web" (``/api/v1/ref/{corpus}/{position}/web``) runs Calf's own checks:
a web archive's capture that redirects to another port of the archive's host is not followed, and a
text URL on an IPv6 form of a private address (``::ffff:0:a00:1``) is refused before anything is
sent — public addresses only, Calf's ``--public-only`` check."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from tests.calf.archive_web import LocalArchives, Stored
from tests.calf.test_public_only import TRANSLATED, everywhere  # noqa: F401 - the fixture, used by name
from tests.calf.web import LocalWeb, html
from tests.frontend.conftest import Partitioned, ewt_client, tiny_corpus
from tests.loopback import require_loopback_namespace

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.loopback]

TOKENS = "\n".join("The café near the Haus serves good coffee .".split())


def corpus_at(url: str, base: Path) -> Partitioned:
    return tiny_corpus(base, "dated", f'<text id="t9" url="{url}" lastmod="2013-05-02">\n<s>\n{TOKENS}\n'
                       "</s>\n</text>\n", "text:0+id+url+lastmod")


async def test_an_archive_capture_redirecting_to_another_port_is_not_followed(tmp_path: Path) -> None:
    require_loopback_namespace()
    with LocalWeb() as web, LocalWeb() as other_port, LocalArchives() as archives:
        other_port.page("/secret", html("<p>The café near the Haus serves good coffee.</p>"))
        url = f"{web.url}/blog/9"  # gone: 404
        archives.capture(url, Stored(dt.datetime(2013, 4, 30, 8, tzinfo=dt.UTC), status=302,
                                     location=f"{other_port.url}/secret", escape=True))
        settings = [{"name": "ia", "kind": "cdx", "cdx": f"{archives.url}/ia/cdx", "replay": f"{archives.url}/ia/web/",
                     "rate": 20}]
        async for client in ewt_client(corpus_at(url, tmp_path), "dated", calf_enabled=True,
                                       calf_allowed_hosts=["127.0.0.1"], calf_cache_dir=tmp_path / "cache",
                                       calf_archives=settings, calf_date_attribute="text_lastmod"):
            answer = (await client.get("/api/v1/ref/dated/3/web")).json()
            assert answer["status"] == "fetch_error", answer
            assert f"redirects out of the archive (to {other_port.url}/secret)" in answer["detail"]
        assert other_port.requests == [] and archives.asked("/ia/web/")  # the capture asked, its redirect not


async def test_a_text_url_on_a_translated_private_address_is_refused(everywhere: tuple[int, list[str]],  # noqa: F811
                                                                    tmp_path: Path) -> None:
    port, asked = everywhere
    async for client in ewt_client(corpus_at(f"http://[{TRANSLATED}]:{port}/blog/9", tmp_path), "dated",
                                   calf_enabled=True, calf_cache_dir=tmp_path / "cache"):
        answer = (await client.get("/api/v1/ref/dated/3/web")).json()
        assert answer["status"] == "fetch_error", answer
        assert answer["detail"].startswith(
            "refused: ::ffff:0:a00:1 is a non-public address (IPv4-translated (SIIT) of 10.0.0.1: private)")
    assert asked == []  # the server listening on that address got nothing
