"""A heavy query runs in the background while the user goes on searching, in real Chromium against
real processes (issue 46): on a server whose interactive budget (``interactive_seconds``) a wide
repetition exceeds, the search page lists that query under "Running in the background" at once and
stays usable — a cheap search on the same page answers meanwhile, without cancelling it —; when the
heavy query ends, its line says how many hits it found and links to its page, which shows them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.pages import api, check_accessibility, hits_shown, search, shoot
from tests.support import free_ports

pytestmark = pytest.mark.e2e

HEAVY = '[pos="NN.*"] []{0,80} [word="house"] [word="house"]'
WAIT_MS = 120_000


@pytest.fixture(scope="module")
def heavy_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    front, node1, node2 = free_ports(3)
    stack = DemoStack(tmp_path_factory.mktemp("background-site"), front, (node1, node2), log_level="warning",
                      generated=True, web_tokens=400_000, settings={"interactive_seconds": 0.01})
    stack.prepare()
    stack.start()
    yield stack
    stack.stop()


@pytest.mark.timeout(300)
def test_a_heavy_query_runs_in_the_background_while_a_cheap_search_answers(
    heavy_site: DemoStack, page: Page, tmp_path: Path
) -> None:
    page.goto(f"{heavy_site.url}/?corpus=web")
    page.fill("#q", HEAVY)
    page.check('input[name="syntax"][value="cqp"]')
    page.press("#q", "Enter")
    running = page.locator('#background-searches li[data-state="running"]')
    expect(running).to_have_count(1, timeout=WAIT_MS)
    expect(running).to_contain_text("Running in the background (estimated at")
    expect(running.locator("q")).to_have_text(HEAVY)
    expect(page.locator("#progress")).to_be_hidden()  # the page is free again

    search(page, "house")  # a cheap search on the same page, while the heavy one runs
    assert hits_shown(page) and all(h.lower() == "house" for h in hits_shown(page))
    cheap_total = api(heavy_site, "/api/v1/query", corpus="web", q="house")["total"]
    expect(page.locator("#summary")).to_contain_text(f"{cheap_total:,}")
    assert page.locator('#background-searches li[data-state="running"]').count() == 1, \
        "the heavy query ended before the cheap search answered: no background to show"
    shoot(page, "background-search", tmp_path)
    check_accessibility(page)

    done = page.locator('#background-searches li[data-state="done"]')
    expect(done).to_have_count(1, timeout=WAIT_MS)
    heavy_total = api(heavy_site, "/api/v1/query", corpus="web", q=HEAVY, syntax="cqp")["total"]
    hits_word = "hit" if heavy_total == 1 else "hits"
    expect(done).to_contain_text(re.compile(rf": {heavy_total:,} {hits_word}"))
    assert hits_shown(page) and all(h.lower() == "house" for h in hits_shown(page))  # the cheap search stays
    done.get_by_role("link", name="Show").click()
    shown = f"{heavy_total:,}" if heavy_total else "No hits"  # the query's words never come in that order
    expect(page.locator("#summary")).to_contain_text(shown, timeout=WAIT_MS)
    expect(page.locator("#q")).to_have_value(HEAVY)
    assert page.locator('#background-searches li[data-state="done"]').count() == 0  # a new page
