"""The filter row's operators in real Chromium (issue 65, item 9): matches, equals, from – to (two
number fields), each search's hits those of the API's filter, the filter in the URL and read back
from it; and the query builder's value list (Korp's): an attribute's values from the corpus's
lexicon, all of them for an attribute with few (pos), suggestions as it is typed for one with many
(word)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.pages import api, check_accessibility, expect_url_with, search, shoot
from tests.support import running_demo

pytestmark = [pytest.mark.e2e, pytest.mark.loopback]


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    """The demo's generated web corpus (texts of 2005-2024) behind two nodes."""
    with running_demo(tmp_path_factory.mktemp("filter-site"), generated=True, web_tokens=100_000) as stack:
        yield stack


def summary_total(page: Page) -> str:
    return page.locator("#summary").inner_text()


def test_the_filter_row_takes_a_range_and_equals(web: DemoStack, page: Page, tmp_path: Path) -> None:
    page.goto(f"{web.url}/?corpus=web")
    page.click("#add-filter")
    row = page.locator("#filter-rows .filter").last
    row.locator("select.attribute").select_option("text_year")
    row.locator("select.operator").select_option(":")
    expect(row.locator("input.value")).to_be_hidden()  # two number fields instead
    row.locator("input.from").fill("2010")
    row.locator("input.to").fill("2015")
    page.fill("#q", "the")
    expect(page.locator("#subcorpus-size")).to_contain_text("The filters choose")  # the texts' size, as typed
    shoot(page, "filter-range", tmp_path)
    search(page, "the")
    ranged = api(web, "/api/v1/query", corpus="web", q="the", filter="text_year:2010..2015")
    whole = api(web, "/api/v1/query", corpus="web", q="the")
    assert 0 < int(ranged["total"]) < int(whole["total"])
    expect(page.locator("#summary")).to_contain_text(f"of {int(ranged['total']):,} hits")
    expect_url_with(page, "filter=text_year%3A2010..2015")
    years = page.locator("#kwic tbody tr").count()
    assert years > 0
    check_accessibility(page)

    # an open end: from 2020 on
    row.locator("input.to").fill("")
    row.locator("input.from").fill("2020")
    page.press("#q", "Enter")
    later = api(web, "/api/v1/query", corpus="web", q="the", filter="text_year:2020..")
    expect(page.locator("#summary")).to_contain_text(f"of {int(later['total']):,} hits")

    # read back from the URL: the operator and both fields
    page.goto(f"{web.url}/?corpus=web&q=the&filter=text_year%3A2010..2015&filter=text_genre%3Dnews")
    first, second = page.locator("#filter-rows .filter").first, page.locator("#filter-rows .filter").last
    expect(first.locator("select.operator")).to_have_value(":")
    expect(first.locator("input.from")).to_have_value("2010")
    expect(first.locator("input.to")).to_have_value("2015")
    expect(second.locator("select.operator")).to_have_value("=")
    expect(second.locator("input.value")).to_have_value("news")
    both = httpx.get(
        f"{web.url}/api/v1/query",
        timeout=30,
        params={"corpus": "web", "q": "the", "filter": ["text_year:2010..2015", "text_genre=news"]},
    ).json()
    expect(page.locator("#summary")).to_contain_text(f"of {int(both['total']):,} hits")

    # equals is the value exactly: "new." is no genre, though the regex new. matches "news"
    second.locator("input.value").fill("new.")
    page.press("#q", "Enter")
    expect(page.locator("#summary")).to_contain_text("No hits")
    second.locator("select.operator").select_option("~")
    page.press("#q", "Enter")
    expect(page.locator("#summary")).to_contain_text(f"of {int(both['total']):,} hits")


def test_the_builder_lists_an_attributes_values(web: DemoStack, page: Page, tmp_path: Path) -> None:
    page.goto(f"{web.url}/?corpus=web")
    page.click("#builder summary")
    first = page.locator("#builder-tokens > li").first
    test = first.locator(".builder-test").first
    test.locator("select.attribute").select_option("pos")
    listed = api(web, "/api/v1/wordlist", corpus="web", attribute="pos", limit=1000)
    assert listed["more"] is False and len(listed["rows"]) > 5
    options = test.locator("datalist option")
    expect(options).to_have_count(len(listed["rows"]))
    assert options.evaluate_all("os => os.map((o) => o.value)") == [r["value"] for r in listed["rows"]]
    expect(test.locator("input.value")).to_have_attribute(
        "title", f"pos: {len(listed['rows'])} values in this corpus, the most frequent first — pick one, or type"
    )
    test.locator("input.value").fill(str(listed["rows"][0]["value"]))
    expect(page.locator("#q")).to_have_value(f'[pos="{listed["rows"][0]["value"]}"]')
    shoot(page, "query-builder-values", tmp_path)

    # word: more values than are listed whole (the demo's 266 words, the page set to list 100 at most);
    # suggestions start with what is typed
    words = api(web, "/api/v1/wordlist", corpus="web", attribute="word", limit=100)
    assert words["more"] is True
    page.evaluate("document.getElementById('builder').dataset.valuesListed = '100'")
    test.locator("select.attribute").select_option("word")
    test.locator("input.value").fill("th")
    expect(test.locator("input.value")).to_have_attribute(
        "title", "word has more than 100 values: type its first letters for suggestions"
    )
    suggested = api(web, "/api/v1/wordlist", corpus="web", attribute="word", match="th.*", ignore_case="true", limit=30)
    assert 0 < len(suggested["rows"]) < 30
    expect(test.locator("datalist option")).to_have_count(len(suggested["rows"]))
    values = test.locator("datalist option").evaluate_all("os => os.map((o) => o.value)")
    assert values == [r["value"] for r in suggested["rows"]] and all(v.lower().startswith("th") for v in values)
