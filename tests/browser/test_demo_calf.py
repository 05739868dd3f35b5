"""*Find this sentence on the web* on the demo as ``cowbird demo`` runs it: the generated corpus's
texts are pages of made-up sites, which the demo serves as captures in its own stand-in web archive
on loopback (``cowbird.commands.demo_web``: a CDX index and a WARC file), with ``[calf]`` asking that
archive only. A static link's button finds the sentence there, in Chromium, and the page links the
capture; over HTTP the same answer, and the made-up address itself is never fetched."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.pages import check_accessibility, shoot
from tests.support import running_demo

pytestmark = [pytest.mark.e2e, pytest.mark.loopback]


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    with running_demo(tmp_path_factory.mktemp("demo-calf"), archive=True, generated=True, web_tokens=20_000) as stack:
        yield stack


def test_the_demo_finds_a_sentence_in_its_stand_in_archive(demo: DemoStack, page: Page, tmp_path: Path) -> None:
    config = tomllib.loads((demo.base / "cowbird.toml").read_text(encoding="utf-8"))
    assert config["calf"]["enabled"] is True and config["calf"]["fetch_pages"] is False
    assert config["calf"]["archives"][0]["cdx"] == f"http://127.0.0.1:{demo.archive_port}/cdx"
    hit = httpx.get(
        f"{demo.url}/api/v1/query",
        params={"corpus": "web", "q": "house", "limit": 1, "meta": "text_url,text_lastmod"},
        timeout=30,
    ).json()["hits"][0]
    url, lastmod = hit["meta"]["text_url"], hit["meta"]["text_lastmod"]
    page.goto(f"{demo.url}{hit['ref']}")
    page.get_by_role("button", name="Find this sentence on the web").click()
    result = page.locator("#web-result")
    expect(result).to_contain_text(
        f"Found in the web archive demo-archive (score 100, exact), in its capture of {lastmod}", timeout=30_000
    )
    capture = f"http://127.0.0.1:{demo.archive_port}/web/{lastmod.replace('-', '')}093000id_/{url}"
    expect(result.get_by_role("link")).to_have_attribute("href", capture)
    expect(result.get_by_role("link")).to_have_text(url)
    expect(page.locator("#web-text")).to_contain_text(hit["match"])
    expect(page.locator("#crawled")).to_have_count(0)  # a last modification is not a crawl date
    check_accessibility(page)
    shoot(page, "demo-calf", tmp_path)
    # over HTTP: the same answer, its context from the capture, which holds the page as a WARC record
    end = {"end": hit["matchend"]} if hit["matchend"] != hit["position"] else {}
    answer = httpx.get(f"{demo.url}/api/v1/ref/web/{hit['position']}/web", params=end, timeout=60)
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert (body["status"], body["source"], body["score"]) == ("found_archive", "demo-archive", 100)
    assert body["capture_url"] == capture and body["source_url"] == url
    stored = httpx.get(capture, timeout=10)
    assert stored.status_code == 200 and stored.headers["content-type"].startswith("text/html")
    assert body["page_text"].split()[0] in stored.text
