"""What the browser tests do on a page: search, read the hits, take a screenshot, check accessibility,
and ask the API for the same answer."""

from __future__ import annotations

import os
import re
from pathlib import Path

import httpx
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.conftest import SCREENSHOTS
from tests.support import JsonObject, ParamValue


def api(site: DemoStack, path: str, **params: ParamValue) -> JsonObject:
    answer = httpx.get(f"{site.url}{path}", params=params, timeout=30)
    assert answer.status_code == 200, answer.text
    body: JsonObject = answer.json()
    return body


def search(page: Page, query: str, syntax: str = "simple") -> None:
    # the page's modules must have run (they attach the form's handlers): on a loaded machine a page just
    # reached by a redirect (the login's) may still be loading them, and Enter would submit nothing
    page.wait_for_load_state("load")
    page.fill("#q", query)
    page.check(f'input[name="syntax"][value="{syntax}"]')
    page.press("#q", "Enter")  # Enter submits
    expect(page.locator("#progress")).to_be_hidden()


def expect_url_with(page: Page, *parts: str) -> None:
    """Wait until the page's URL holds every one of `parts` (regular expressions): the page writes its
    URL once a search's last answer is in, which may come after its first rows are drawn."""
    expect(page).to_have_url(re.compile("".join(f"(?=.*{part})" for part in parts)))


def reopen(page: Page, *parts: str) -> str:
    """Once the page's URL holds every one of `parts` (as in `expect_url_with`), that URL opened again
    from a blank page, as a reload or a shared link opens it; returns the URL."""
    expect_url_with(page, *parts)
    url = page.url
    page.goto("about:blank")
    page.goto(url)
    return url


def hits_shown(page: Page) -> list[str]:
    return page.locator("#kwic tbody td.match").all_inner_texts()


def shoot(page: Page, name: str, tmp_path: Path) -> None:
    """A screenshot in the test's output folder; also in docs/screenshots/ (the README's) when
    COWBIRD_SCREENSHOTS=1, so that an ordinary test run leaves the working tree alone."""
    folders = [tmp_path] + ([SCREENSHOTS] if os.environ.get("COWBIRD_SCREENSHOTS") == "1" else [])
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(folder / f"{name}.png"), full_page=True)


def check_accessibility(page: Page) -> None:
    results = Axe().run(page)
    serious = [v for v in results.response["violations"] if v["impact"] in ("serious", "critical")]
    assert not serious, [(v["id"], v["help"], [n["target"] for n in v["nodes"]][:3]) for v in serious]
