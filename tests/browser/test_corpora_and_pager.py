"""Several corpora at once and the concordance's pager (issue 65, items 5 and 8), over real HTTP to a real
front end and nodes, and in real Chromium.

Searching ``web`` and ``sample`` together, each corpus's total comes with its rate per million tokens of its
own texts searched (its subcorpus under a filter) and with where its hits begin in corpus order, so that the
page can open the page holding them at once; the frequency table gives each corpus's count and rate, in the
answer and in the file. The pager (above the lines and below them) goes to the first and the last page and to
a page by its number, by keyboard too, keeps the page in the URL, and pages sorted concordances and several
corpora's hits alike."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.pages import api, check_accessibility, shoot
from tests.support import JsonObject, running_demo

pytestmark = [pytest.mark.e2e, pytest.mark.loopback]

BOTH = "web,sample"
PAGE = 100  # the search page's hits a page (search-state.js: PAGE)


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    """The demo's generated web corpus (300,000 tokens) behind two nodes, and the sample corpus, both public."""
    with running_demo(
        tmp_path_factory.mktemp("corpora-site"), prepared=public, generated=True, web_tokens=300_000
    ) as stack:
        yield stack


def public(stack: DemoStack) -> None:
    """The stack's corpora made public (the demo's ``cowbird.toml`` asks for a login)."""
    config = stack.base / "cowbird.toml"
    config.write_text(
        config.read_text(encoding="utf-8").replace('access = "login"', 'access = "public"'), encoding="utf-8"
    )


def sizes(web: DemoStack) -> dict[str, int]:
    listed: list[JsonObject] = api(web, "/api/v1/corpora")["data"]
    return {c["name"]: c["size"] for c in listed}


def test_each_corpus_has_its_total_rate_and_first_hit(web: DemoStack) -> None:
    both = api(web, "/api/v1/query", corpus=BOTH, q="house", limit=0)
    alone = {name: api(web, "/api/v1/query", corpus=name, q="house", limit=0) for name in ("web", "sample")}
    size = sizes(web)
    corpora: list[JsonObject] = both["corpora"]
    assert [c["corpus"] for c in corpora] == ["web", "sample"]
    for each in corpora:
        name = each["corpus"]
        assert each["total"] == alone[name]["total"] > 0
        assert each["tokens"] == size[name]
        assert each["per_million"] == pytest.approx(each["total"] * 1e6 / size[name])
    assert size["web"] > 50 * size["sample"]  # rates compare corpora of very different sizes; counts do not
    web_total = corpora[0]["total"]
    assert [c["first"] for c in corpora] == [0, web_total]  # sample's hits follow all of web's
    # the first hit of sample is exactly there, and the one before it is web's last
    there = api(web, "/api/v1/query", corpus=BOTH, q="house", offset=web_total - 1, limit=PAGE)
    assert [h["corpus"] for h in there["hits"]] == ["web"] + ["sample"] * corpora[1]["total"]
    sample_alone = api(web, "/api/v1/query", corpus="sample", q="house", limit=PAGE)
    assert [h["ref"] for h in there["hits"][1:]] == [h["ref"] for h in sample_alone["hits"]]
    # sorted: the hits of each corpus are spread over the pages, so no first is claimed
    ordered = api(web, "/api/v1/query", corpus=BOTH, q="house", sort="right1.word", limit=0)
    assert [(c["total"], c["first"]) for c in ordered["corpora"]] == [(c["total"], None) for c in corpora]


def test_under_a_filter_each_rate_is_of_that_corpus_subcorpus(web: DemoStack) -> None:
    news: dict[str, str | int] = {"q": "house", "filter": "text_genre~news", "limit": 0}
    both = api(web, "/api/v1/query", corpus=BOTH, **news)
    size = sizes(web)
    for each in both["corpora"]:
        alone = api(web, "/api/v1/query", corpus=each["corpus"], **news)
        assert (each["total"], each["tokens"]) == (alone["total"], alone["tokens"])
        assert 0 < each["tokens"] < size[each["corpus"]]
        assert each["per_million"] == pytest.approx(each["total"] * 1e6 / each["tokens"])
    # the frequency table's rates under the filter: of each corpus's subcorpus, not of its whole size
    frequency = api(
        web, "/api/v1/frequency", corpus=BOTH, q="house", filter="text_genre~news", by="word", on="matchend[1]"
    )
    assert frequency["corpora_tokens"] == {c["corpus"]: c["tokens"] for c in both["corpora"]}
    for row in frequency["rows"]:
        for name, count in row["corpora"].items():
            assert row["corpora_per_million"][name] == pytest.approx(count * 1e6 / frequency["corpora_tokens"][name])


def test_the_frequency_table_gives_each_corpus_count_and_rate(web: DemoStack) -> None:
    searched = {"corpus": BOTH, "q": "[lemma='house']", "syntax": "cqp"}
    asked = {**searched, "by": "word"}
    body = api(web, "/api/v1/frequency", **asked)
    tokens = {c["corpus"]: c["tokens"] for c in api(web, "/api/v1/query", **searched, limit=0)["corpora"]}
    assert body["corpora_tokens"] == tokens == sizes(web)
    assert body["rows"]
    for row in body["rows"]:
        assert set(row["corpora"]) == set(row["corpora_per_million"]) == {"web", "sample"}
        assert sum(row["corpora"].values()) == row["frequency"]
        for name, count in row["corpora"].items():
            assert row["corpora_per_million"][name] == pytest.approx(count * 1e6 / tokens[name])
    answer = httpx.get(f"{web.url}/api/v1/frequency", params={**asked, "format": "tsv", "provenance": 1}, timeout=30)
    assert answer.status_code == 200, answer.text
    for name, size in tokens.items():  # each corpus's base of its rates, in the metadata block
        assert f"# tokens_searched_{name}: {size}\r\n" in answer.text, answer.text[:800]
    skip = sum(1 for line in answer.text.splitlines() if line.startswith("#"))
    table = pd.read_csv(io.StringIO(answer.text), sep="\t", skiprows=skip, keep_default_na=False)
    assert list(table.columns[-4:]) == ["frequency_web", "per_million_web", "frequency_sample", "per_million_sample"]
    for row, line in zip(body["rows"], table.itertuples(), strict=True):
        assert (line.frequency_web, line.frequency_sample) == (row["corpora"]["web"], row["corpora"]["sample"])
        assert line.per_million_sample == pytest.approx(row["corpora_per_million"]["sample"])


def test_the_page_opens_each_corpus_hits(web: DemoStack, page: Page, tmp_path: Path) -> None:
    both = api(web, "/api/v1/query", corpus=BOTH, q="house", limit=0)
    web_hits, sample_hits = (c["total"] for c in both["corpora"])
    page.goto(f"{web.url}/?corpus={BOTH}&q=house&syntax=simple")
    lines = page.locator("#corpus-hits li")
    expect(lines).to_have_count(2)
    expect(lines.nth(1)).to_contain_text(f"sample: {sample_hits:,} hits")
    expect(lines.nth(1)).to_contain_text("per million tokens")
    assert set(page.locator("#kwic tbody td.corpus").all_inner_texts()) == {"web"}
    # one click to the page holding sample's first hit: no paging through web's
    page.get_by_role("button", name=re.compile(f"^Show sample's {sample_hits} hits")).click()
    start = web_hits // PAGE * PAGE
    expect(page).to_have_url(re.compile(f"offset={start}(&|$)"))
    first = page.locator("#kwic tbody tr", has=page.locator("td.corpus", has_text="sample")).first
    expect(first.locator("td.n")).to_have_text(f"{web_hits + 1:,}")
    expect(page.locator("#kwic tbody td.corpus", has_text="sample")).to_have_count(sample_hits)
    expect(page.locator("#pager-top input.page-number")).to_have_value(str(start // PAGE + 1))
    shoot(page, "several-corpora", tmp_path)
    check_accessibility(page)
    # the search of that corpus alone, as a link
    alone = page.locator("#corpus-hits li").nth(1).get_by_role("link", name="search sample alone")
    alone.click()
    expect(page.locator("#summary")).to_contain_text(f"of {sample_hits} hits")
    expect(page.locator("#corpus-hits")).to_be_hidden()
    # the frequency view: each corpus's count and rate beside each other
    page.goto(f"{web.url}/?corpus={BOTH}&q=house&syntax=simple&view=frequency")
    expect(page.locator("body")).to_have_attribute("data-analysed", "frequency")
    expect(page.locator("#freq-table thead th.per-corpus")).to_have_text(["web", "sample"])
    on = page.locator("#freq-on").input_value()  # the page's breakdown, asked of the API too
    frequency = api(
        web,
        "/api/v1/frequency",
        corpus=BOTH,
        q="house",
        by=page.locator("#freq-by").input_value(),
        **({"on": on} if on else {}),
        limit=1000,
    )
    row = page.locator("#freq-table tbody tr").first
    shown = {r["value"]: r for r in frequency["rows"]}[row.locator("td.value").inner_text()]
    cells = row.locator("td.per-corpus")
    for i, name in enumerate(("web", "sample")):
        count, rate = shown["corpora"][name], shown["corpora_per_million"][name]
        expect(cells.nth(i)).to_have_text(re.compile(rf"^{count:,} \(([0-9.,]+) per million\)$"))
        written = re.findall(r"\(([0-9.,]+) per", cells.nth(i).inner_text())[0]
        assert float(written.replace(",", "")) == pytest.approx(rate, rel=0.01, abs=0.01)
    shoot(page, "frequency-several-corpora", tmp_path)


def test_the_pager_goes_to_any_page_by_keyboard_and_keeps_it_in_the_url(
    web: DemoStack, page: Page, tmp_path: Path
) -> None:
    total = api(web, "/api/v1/query", corpus="web", q="the", limit=0)["total"]
    pages = -(-total // PAGE)
    assert pages > 5
    page.goto(f"{web.url}/?corpus=web&q=the&syntax=simple")
    bottom = page.get_by_role("navigation", name="Pages of the hits (at the bottom)")
    expect(bottom).to_be_visible()
    expect(bottom.locator(".pages")).to_have_text(f"of {pages:,}")
    expect(bottom.get_by_role("button", name="First page")).to_be_disabled()
    number = bottom.get_by_role("spinbutton", name=re.compile("Page number"))
    number.fill("4")
    number.press("Enter")
    expect(page).to_have_url(re.compile(f"offset={3 * PAGE}(&|$)"))
    expect(page.locator("#kwic tbody td.n").first).to_have_text(f"{3 * PAGE + 1:,}")
    expect(page.locator("#pager-top input.page-number")).to_have_value("4")
    shoot(page, "pager", tmp_path)
    check_accessibility(page)
    # the last page, by keyboard from the bottom pager's number
    number.focus()
    page.keyboard.press("Tab")  # Go
    page.keyboard.press("Tab")  # Next
    page.keyboard.press("Tab")  # Last
    expect(bottom.get_by_role("button", name="Last page")).to_be_focused()
    page.keyboard.press("Enter")
    last = (total - 1) // PAGE * PAGE
    expect(page).to_have_url(re.compile(f"offset={last}(&|$)"))
    expect(page.locator("#kwic tbody td.n").last).to_have_text(f"{total:,}")
    expect(bottom.get_by_role("button", name="Last page")).to_be_disabled()
    expect(page.locator("#next")).to_be_disabled()
    # a page past the last is the last; Back returns to page 4; reloading keeps the page
    page.go_back()
    expect(page.locator("#kwic tbody td.n").first).to_have_text(f"{3 * PAGE + 1:,}")
    page.reload()
    expect(page.locator("#pager-bottom input.page-number")).to_have_value("4")
    page.locator("#pager-top").get_by_role("button", name="First page").click()
    expect(page.locator("#kwic tbody td.n").first).to_have_text("1")
    expect(page).not_to_have_url(re.compile("offset="))


def test_the_pager_pages_a_sorted_concordance_of_several_corpora(web: DemoStack, page: Page) -> None:
    both = api(web, "/api/v1/query", corpus=BOTH, q="house", sort="right1.word", limit=0)
    pages = -(-both["total"] // PAGE)
    assert pages >= 2
    page.goto(f"{web.url}/?corpus={BOTH}&q=house&syntax=simple&sort_on=right1")
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
    expected = api(web, "/api/v1/query", corpus=BOTH, q="house", sort="right1.word", offset=PAGE, limit=PAGE)
    number = page.locator("#pager-bottom input.page-number")
    number.fill("2")
    page.locator("#pager-bottom").get_by_role("button", name="Go").click()
    expect(page).to_have_url(re.compile(f"offset={PAGE}(&|$)"))
    expect(page.locator("#kwic tbody a.ref").last).to_have_attribute("href", expected["hits"][-1]["ref"])
    assert [a.get_attribute("href") for a in page.locator("#kwic tbody a.ref").all()] == [
        h["ref"] for h in expected["hits"]
    ]
    assert "sort_on=right1" in page.url
    # sorted, each corpus's hits are spread: the way to them is its search alone
    expect(page.locator("#corpus-hits li")).to_have_count(2)
    expect(page.locator("#corpus-hits button")).to_have_count(0)
    alone = page.locator("#corpus-hits li").nth(1).get_by_role("link", name="search sample alone")
    assert "sort_on=right1" in (alone.get_attribute("href") or "")
    page.locator("#pager-bottom").get_by_role("button", name="Last page").click()
    expect(page.locator("#kwic tbody td.n").last).to_have_text(f"{both['total']:,}")
