"""The static link page's "Find this sentence on the web" in Chromium when the page is gone: the
front end (real processes over the sample corpus, ``[calf] archives`` configured) finds the sentence
in a Wayback-style archive on loopback, in its capture nearest the text's year, and the page says
which archive, when, and links the capture. Keyboard only; axe finds nothing serious on the result."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.pages import check_accessibility, shoot
from tests.calf.archive_web import LocalArchives, Stored
from tests.calf.web import html
from tests.support import free_ports

pytestmark = pytest.mark.e2e  # Chromium and a demo


@pytest.fixture(scope="module")
def archived(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[DemoStack, LocalArchives]]:
    with LocalArchives() as archives:
        front, node1, node2 = free_ports(3)
        stack = DemoStack(tmp_path_factory.mktemp("calf-archive"), front, (node1, node2), log_level="warning")
        stack.prepare()
        config = stack.base / "cowbird.toml"
        config.write_text(config.read_text(encoding="utf-8") + (
            '\n[calf]\nenabled = true\ntimeout = 2.0\ndate_attribute = "text_year"\n\n'
            f'[[calf.archives]]\nname = "ia"\nkind = "cdx"\ncdx = "{archives.url}/ia/cdx"\n'
            f'replay = "{archives.url}/ia/web/"\nrate = 20\n'), encoding="utf-8")
        stack.start()
        try:
            yield stack, archives
        finally:
            stack.stop()


def test_find_on_the_web_finds_the_sentence_in_an_archive(archived: tuple[DemoStack, LocalArchives], page: Page,
                                                         tmp_path: Path) -> None:
    stack, archives = archived
    ref = httpx.get(f"{stack.url}/api/v1/ref/sample/0", timeout=30).json()
    url, year = ref["meta"]["text_url"], ref["meta"]["text_year"]
    sentence = " ".join(p for p in (ref["sentence"]["left"], ref["sentence"]["match"], ref["sentence"]["right"]) if p)
    archived_page = html(f"<p>The town council met on Monday evening. {sentence} Rain is expected for the weekend.</p>")
    archives.capture(url, Stored(dt.datetime(int(year), 3, 10, 9, 30, tzinfo=dt.UTC), archived_page.encode()))
    archives.capture(url, Stored(dt.datetime(2021, 1, 5, tzinfo=dt.UTC), html("<p>Domain for sale.</p>").encode()))
    page.goto(f"{stack.url}/ref/sample/0")
    button = page.get_by_role("button", name="Find this sentence on the web")
    button.focus()
    page.keyboard.press("Enter")
    result = page.locator("#web-result")
    expect(result).to_contain_text(f"Found in the web archive ia (score 100, exact), in its capture of {year}-03-10",
                                   timeout=30_000)
    link = result.get_by_role("link")
    expect(link).to_have_attribute("href", f"{archives.url}/ia/web/{year}0310093000id_/{url}")
    expect(page.locator("#web-text")).to_contain_text("The town council met on Monday evening.")
    assert all("id_/" in path for path in archives.asked("/ia/web/"))  # never the toolbar-framed page
    check_accessibility(page)
    shoot(page, "calf-archive", tmp_path)
