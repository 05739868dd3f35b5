"""The estimate line and the question before a long search, in real Chromium against real processes:
as the user types, the search page shows what /api/v1/estimate says the form's search would find
(on the small demo corpus every estimate is exact), and hides it for a query with an error; on a
server whose ``confirm_seconds`` every search exceeds, a search the user starts asks first —
declined (Escape or Cancel) nothing runs and the URL stays, "Run it" runs it — while the pages of
the search and the history's searches (Next, Back) never ask again."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.sync_api import Page, Response, expect

from cowbird.commands.demo import DemoStack
from tests.browser.pages import api, check_accessibility, hits_shown, search, shoot
from tests.support import SAMPLE_VRT, free_ports, sample_options

pytestmark = pytest.mark.e2e

COPIES = 3  # the sample text (93 tokens) three times over: more than a page of hits for []
PAGE = 100
WAIT_MS = 20_000  # the longest any step may take (a busy 2-core machine)
ASKS = " — will ask before running"


def copies_of_the_sample() -> str:
    """The sample text ``COPIES`` times over, its text and sentence ids numbered on."""
    head, body = SAMPLE_VRT.read_text(encoding="utf-8").split("\n", 1)

    def copy(k: int) -> str:
        return re.sub(r'id="([ts])(\d+)"', lambda m: f'id="{m[1]}{int(m[2]) + 100 * k}"', body)

    return head + "\n" + "".join(copy(k) for k in range(COPIES))


@pytest.fixture(scope="module")
def careful(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    """A stack whose front end asks before every search: its confirm_seconds is tiny."""
    base = tmp_path_factory.mktemp("estimate").resolve()
    vrt = base / "sample.vrt"
    vrt.write_text(copies_of_the_sample(), encoding="utf-8")
    encoding = replace(sample_options(base / "data" / "sample", base / "registry" / "sample", partition_tokens=150),
                       input=vrt)
    front, node1, node2 = free_ports(3)
    # no replica: each partition's estimate comes from the node that ran its count, and knows it (its cache)
    stack = DemoStack(base, front, (node1, node2), encoding=encoding, log_level="warning", replica=False)
    stack.prepare()
    config = base / "cowbird.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n[limits]\nconfirm_seconds = 0.000001\n",
                      encoding="utf-8")
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


def estimated(response: Response) -> bool:
    return urlsplit(response.url).path == "/api/v1/estimate"


def test_typing_shows_the_apis_estimate(site: DemoStack, page: Page, tmp_path: Path) -> None:
    page.goto(site.url)
    line = page.locator("#estimate")
    expect(line).to_be_hidden()
    for query in ("the", "house"):
        expected = api(site, "/api/v1/estimate", corpus="sample", q=query)
        assert (expected["exact"], expected["time_class"], expected["confirm"]) == (True, "fast", False), expected
        total = api(site, "/api/v1/query", corpus="sample", q=query, limit=0)["total"]
        assert expected["hits"] == total > 1
        page.fill("#q", query)
        expect(line).to_have_text(f"exactly {expected['hits']:,} hits · fast", timeout=WAIT_MS)
    shoot(page, "estimate", tmp_path)
    check_accessibility(page)
    page.check('input[name="syntax"][value="cqp"]')
    mu = 'MU(meet [pos="DT"] [pos="NN"] s)'
    assert api(site, "/api/v1/estimate", corpus="sample", q=mu, syntax="cqp")["hits"] is None
    page.fill("#q", mu)
    expect(line).to_have_text("no estimate for this query", timeout=WAIT_MS)
    with page.expect_response(estimated, timeout=WAIT_MS) as answer:
        page.fill("#q", '[word="house"')  # a query error: the CQP line says so, the estimate line goes
    assert answer.value.status == 400
    expect(page.locator("#cqp-preview")).to_have_attribute("data-state", "error")
    expect(line).to_be_hidden()
    page.check('input[name="syntax"][value="simple"]')
    page.fill("#q", "house")
    expect(line).to_have_text("exactly 3 hits · fast", timeout=WAIT_MS)
    search(page, "house")  # the estimate does not ask: it runs at once
    expect(page.locator("#confirm-run")).to_be_hidden()
    assert len(hits_shown(page)) == 3


def test_a_long_search_asks_first(careful: DemoStack, page: Page, tmp_path: Path) -> None:
    query = "[]"
    expected = api(careful, "/api/v1/estimate", corpus="sample", q=query, syntax="cqp")  # not run yet: not cached
    assert expected["confirm"] is True and expected["exact"] is True and expected["hits"] > PAGE, expected
    total = int(expected["hits"])
    queries: list[str] = []
    page.on("request", lambda request: queries.append(request.url) if "/api/v1/query" in request.url else None)
    page.goto(careful.url)
    page.check('input[name="syntax"][value="cqp"]')
    page.fill("#q", query)
    line = page.locator("#estimate")
    expect(line).to_have_text(f"exactly {total:,} hits · {expected['time_class']}{ASKS}", timeout=WAIT_MS)
    before, length = page.url, page.evaluate("history.length")
    dialog = page.locator("#confirm-run")
    for decline in ("Escape", "#confirm-run-cancel"):
        page.press("#q", "Enter")
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text(f"(exactly {total:,} hits). Run it?")
        if decline == "Escape":
            shoot(page, "confirm-run", tmp_path)
            check_accessibility(page)
            page.keyboard.press("Escape")
        else:
            page.click(decline)
        expect(dialog).to_be_hidden()
        expect(page.locator("#progress")).to_be_hidden()
        assert page.url == before and page.evaluate("history.length") == length
        expect(page.locator("#kwic")).to_be_hidden()
        expect(page.locator("#summary")).to_have_text("")
    page.press("#q", "Enter")
    expect(dialog).to_be_visible()
    page.click("#confirm-run-go")
    expect(dialog).to_be_hidden()
    summary = page.locator("#summary")
    expect(summary).to_contain_text(f"1–100 of {total:,} hits", timeout=WAIT_MS)
    expect(page.locator("#progress")).to_be_hidden()
    assert len(queries) == 1  # the declined searches sent nothing (a request of theirs would come before this one)
    assert parse_qs(urlsplit(page.url).query)["q"] == [query] and page.evaluate("history.length") == length + 1
    assert api(careful, "/api/v1/query", corpus="sample", q=query, syntax="cqp", limit=0)["total"] == total
    # the search has run: estimated again, it costs nothing now (the nodes' cache) and is not asked about
    expect(line).to_have_text(f"exactly {total:,} hits · fast", timeout=WAIT_MS)
    page.click("#next")  # a page of the search run: not asked again
    expect(summary).to_contain_text(f"101–200 of {total:,} hits", timeout=WAIT_MS)
    expect(dialog).to_be_hidden()
    page.go_back()  # a search of the history: not asked again
    expect(summary).to_contain_text(f"1–100 of {total:,} hits", timeout=WAIT_MS)
    expect(page.locator("#progress")).to_be_hidden()
    expect(dialog).to_be_hidden()
    with page.expect_request(lambda request: "/api/v1/query" in request.url, timeout=WAIT_MS):
        page.press("#q", "Enter")  # the same search again: it runs at once
    expect(summary).to_contain_text(f"1–100 of {total:,} hits", timeout=WAIT_MS)
    expect(page.locator("#progress")).to_be_hidden()
    expect(dialog).to_be_hidden()
    assert len(queries) == 4
