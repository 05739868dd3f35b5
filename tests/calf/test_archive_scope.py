"""An archive's answers lead Calf nowhere but to the archive itself: its scheme, host *and port*, and
paths under its configured prefixes. A hostile (or broken) archive on loopback answers with a
replay redirect, a TimeGate Location, TimeMap mementos, a crawl list, a WARC file name and a CDX
``original`` pointing at another port of the same host or at ``../../metrics`` (plainly and
percent-encoded); a second server on another port, and the archive's own ``/metrics``, count
whether anything reached them. Every such URL is refused before it is asked, counted as the
archive's refusal and reported as its failure for the line."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cowbird.calf.archives import Archive, outside, readings, scopes
from cowbird.calf.core import Outcome, Reconstructor
from cowbird.calf.fetching import Fetcher
from cowbird.core.archives import ArchiveSettings
from tests.calf.archive_web import LocalArchives, Stored
from tests.calf.web import SENTENCE, Answer, LocalWeb
from tests.loopback import require_loopback_namespace

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.loopback]

CRAWLED = dt.datetime(2013, 5, 17, tzinfo=dt.UTC)
SECRET = "<html><body><p>internal metrics: requests_total 42</p></body></html>"


@pytest.fixture
def other_port() -> Iterator[LocalWeb]:
    """A service on another port of the archive's host: it must get no request at all."""
    require_loopback_namespace()
    with LocalWeb() as local:
        local.page("/metrics", SECRET)
        local.page("/secret", SECRET)
        yield local


@pytest.fixture
def hostile() -> Iterator[LocalWeb]:
    """An archive that answers what the test puts there; its own ``/metrics`` is outside its prefixes."""
    require_loopback_namespace()
    with LocalWeb() as local:
        local.page("/metrics", SECRET)
        yield local


async def run(settings: ArchiveSettings, url: str = "http://gone.example/page") -> tuple[Outcome, Archive]:
    async with Fetcher(delay=0.0, timeout=2.0, retries=0, respect_robots=False) as fetch, \
            httpx.AsyncClient() as client:
        archive = Archive(settings, client)
        calf = Reconstructor(fetch, None, client, context_chars=60, archives=[archive])
        return await calf.line(url, SENTENCE, when=CRAWLED), archive


def cdx_of(web: LocalWeb, **extra: Any) -> ArchiveSettings:
    return ArchiveSettings.model_validate({"name": "ia", "kind": "cdx", "cdx": f"{web.url}/ia/cdx",
                                           "replay": f"{web.url}/ia/web/", "rate": 100, "retries": 0, **extra})


def cdx_rows(*rows: tuple[str, str]) -> Answer:
    table = [["urlkey", "timestamp", "original", "mimetype", "statuscode"]]
    table += [["key", stamp, original, "text/html", "200"] for stamp, original in rows]
    return Answer(json.dumps(table).encode(), content_type="application/json")


async def test_a_replay_redirect_to_another_port_is_not_followed(other_port: LocalWeb) -> None:
    """The stand-in archive (archive_web.py) redirects a capture to another port of its own host."""
    with LocalArchives() as archives:
        url = "http://gone.example/page"
        archives.capture(url, Stored(CRAWLED, status=302, location=f"{other_port.url}/secret", escape=True))
        settings = ArchiveSettings(name="ia", kind="cdx", cdx=f"{archives.url}/ia/cdx",
                                   replay=f"{archives.url}/ia/web/", rate=100, retries=0)
        outcome, archive = await run(settings, url)
    assert other_port.requests == []
    assert outcome.status == "fetch_error" and archive.refused == 1
    assert f"redirects out of the archive (to {other_port.url}/secret)" in outcome.detail


@pytest.mark.parametrize("original", ["../../../../metrics", "%2e%2e/%2e%2e/%2E%2E/%2e%2e/metrics",
                                      "..%2f..%2f..%2f..%2fmetrics", "x/../../../../../metrics"])
async def test_a_cdx_original_climbing_out_of_the_replay_prefix_is_not_asked(hostile: LocalWeb,
                                                                            original: str) -> None:
    hostile.pages["/ia/cdx"] = cdx_rows(("20130517000000", original))
    outcome, archive = await run(cdx_of(hostile))
    assert [path for path in hostile.requests if not path.startswith("/ia/cdx")] == []  # no /metrics
    assert outcome.status == "fetch_error" and archive.refused == 1
    assert "outside the archive (the path" in outcome.detail and "/metrics is outside its prefixes" in outcome.detail


async def test_timemap_mementos_and_pages_on_another_port_are_not_asked(hostile: LocalWeb,
                                                                       other_port: LocalWeb) -> None:
    url = "http://gone.example/page"
    hostile.pages[f"/web/timemap/link/{url}"] = Answer(",\n".join([
        f'<{url}>; rel="original"',
        f'<{other_port.url}/web/timemap/link/{url}>; rel="timemap"; from="Fri, 17 May 2013 00:00:00 GMT"',
        f'<{other_port.url}/web/20130517000000/{url}>; rel="memento"; datetime="Fri, 17 May 2013 00:00:00 GMT"',
        f'<{hostile.url}/web/20130517000000/../../../metrics>; rel="memento"; '
        'datetime="Fri, 17 May 2013 00:00:00 GMT"',
    ]).encode(), content_type="application/link-format")
    settings = ArchiveSettings(name="mem", kind="memento", timemap=f"{hostile.url}/web/timemap/link/", rate=100,
                               retries=0)
    outcome, archive = await run(settings, url)
    assert other_port.requests == [] and hostile.requests == [f"/web/timemap/link/{url}"]
    assert archive.refused == 3 and outcome.status == "fetch_error"
    assert "mem: every memento the TimeMap lists (2) is outside the archive" in outcome.detail


async def test_a_timegate_pointing_at_another_port_is_the_archives_failure(hostile: LocalWeb,
                                                                          other_port: LocalWeb) -> None:
    url = "http://gone.example/page"
    hostile.pages[f"/web/{url}"] = Answer(status=302, headers=(("Location", f"{other_port.url}/web/2013/{url}"),))
    settings = ArchiveSettings(name="gate", kind="memento", timegate=f"{hostile.url}/web/", rate=100, retries=0)
    outcome, archive = await run(settings, url)
    assert other_port.requests == [] and archive.refused == 1
    assert f"gate: the TimeGate's memento {other_port.url}/web/2013/{url} is outside the archive" in outcome.detail


@pytest.mark.parametrize("filename", ["../../../../metrics", "..%2F..%2Fmetrics", "%2e%2e/metrics", "OTHER"])
async def test_common_crawl_file_names_and_apis_stay_in_the_archive(hostile: LocalWeb, other_port: LocalWeb,
                                                                   filename: str) -> None:
    """A crawl index's ``filename`` is joined to ``data``: one that climbs out of it (or a crawl API on
    another port in collinfo.json) is refused, the other crawl still asked."""
    if filename == "OTHER":
        filename = f"{other_port.url}/metrics"  # an absolute URL: urljoin takes it as it is
    url = "http://gone.example/page"
    hostile.pages["/cc/collinfo.json"] = Answer(json.dumps([
        {"id": "CC-MAIN-2013-20", "cdx-api": f"{other_port.url}/cc/CC-MAIN-2013-20-index",
         "from": "2013-05-10T00:00:00", "to": "2013-05-24T00:00:00"},
        {"id": "CC-MAIN-2013-48", "cdx-api": f"{hostile.url}/cc/CC-MAIN-2013-48-index",
         "from": "2013-11-10T00:00:00", "to": "2013-11-24T00:00:00"}]).encode(), content_type="application/json")
    hostile.pages["/cc/CC-MAIN-2013-48-index"] = Answer(json.dumps(
        {"timestamp": "20131115000000", "url": url, "status": "200", "offset": "0", "length": "100",
         "filename": filename}).encode(), content_type="text/x-ndjson")
    settings = ArchiveSettings(name="cc", kind="commoncrawl", index=f"{hostile.url}/cc/",
                               data=f"{hostile.url}/data/", rate=100, retries=0)
    outcome, archive = await run(settings, url)
    assert other_port.requests == []
    assert hostile.requests[0] == "/cc/collinfo.json" and not any("metrics" in p for p in hostile.requests)
    assert hostile.requests[1].startswith("/cc/CC-MAIN-2013-48-index?")  # the crawl inside is still asked
    assert outcome.status == "fetch_error" and archive.refused == 2  # the crawl API, the WARC file
    why = "is not one of its addresses" if filename.startswith("http") else "/metrics is outside its prefixes"
    assert "cc: not in 1 capture (2013-11-15 (refused " in outcome.detail and why in outcome.detail


async def test_a_crawl_list_wholly_outside_the_archive_is_its_failure(hostile: LocalWeb,
                                                                     other_port: LocalWeb) -> None:
    hostile.pages["/cc/collinfo.json"] = Answer(json.dumps([
        {"id": "CC-MAIN-2013-20", "cdx-api": f"{other_port.url}/cc/CC-MAIN-2013-20-index"}]).encode(),
        content_type="application/json")
    settings = ArchiveSettings(name="cc", kind="commoncrawl", index=f"{hostile.url}/cc/",
                               data=f"{hostile.url}/data/", rate=100, retries=0)
    outcome, archive = await run(settings)
    assert other_port.requests == [] and archive.refused == 1
    assert "cc: every crawl collinfo.json lists (1) is outside the archive" in outcome.detail


def test_what_is_inside_an_archive() -> None:
    settings = ArchiveSettings(name="ia", kind="cdx", cdx="https://web.archive.org/cdx/search/cdx",
                               replay="https://web.archive.org/web/")
    within = scopes(settings)
    assert outside("https://web.archive.org/web/2013id_/http://a.example/x/../y", within) is None
    assert outside("https://web.archive.org:443/cdx/search/cdx?url=a", within) is None
    assert outside("HTTPS://Web.Archive.Org/web/2013/x", within) is None
    assert "is not one of its addresses" in (outside("https://web.archive.org:8443/web/x", within) or "")
    assert "is not one of its addresses" in (outside("http://web.archive.org/web/x", within) or "")
    assert "outside its prefixes" in (outside("https://web.archive.org/metrics", within) or "")
    assert "outside its prefixes" in (outside("https://web.archive.org/cdx/search/cdx/../../x", within) or "")
    assert "outside its prefixes" in (outside("https://web.archive.org/web/%2e%2e/metrics", within) or "")
    assert "outside its prefixes" in (outside("https://web.archive.org/web/%252e%252e/metrics", within) or "")
    assert "outside its prefixes" in (outside("https://web.archive.org/web/x//../../../m", within) or "")
    assert "outside its prefixes" in (outside("https://web.archive.org/web/..\\metrics", within) or "")
    assert readings("/a/b/../c") == ["/a/c"] and readings("/a/b/..") == ["/a/"]
    memento = scopes(ArchiveSettings(name="m", kind="memento", timemap="https://arquivo.pt/wayback/timemap/link/",
                                     hosts=["web.archive.org", "https://webarchive.loc.gov/all/"]))
    assert outside("https://arquivo.pt/wayback/20130517000000id_/http://a.example/", memento) is None
    assert outside("https://arquivo.pt/noFrame/x", memento) is not None
    assert outside("https://web.archive.org/web/2013id_/x", memento) is None  # a named host: its default ports
    assert outside("https://web.archive.org:8080/web/2013id_/x", memento) is not None
    assert outside("https://webarchive.loc.gov/all/2013id_/x", memento) is None
    assert outside("https://webarchive.loc.gov/legacy/x", memento) is not None
