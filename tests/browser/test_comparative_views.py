"""Korp's comparative views in real Chromium: several corpora in one search, the Trend tab (several
queries per year, each with its band, each point a link to its hits), the Compare tab (the values
two searches prefer) and the query builder — the numbers are the API's, the links find what they
count, the files download, the keyboard reaches every point, and each view passes axe."""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.pages import api, check_accessibility, shoot
from tests.support import JsonObject, free_ports

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    """The demo's generated web corpus (300,000 tokens: texts of 2005-2024, six genres) behind two nodes."""
    front, node1, node2 = free_ports(3)
    stack = DemoStack(tmp_path_factory.mktemp("comparative-site"), front, (node1, node2), log_level="warning",
                      generated=True, web_tokens=300_000)
    stack.prepare()
    config = stack.base / "cowbird.toml"  # the sample corpus public too: two corpora to search at once
    config.write_text(config.read_text(encoding="utf-8").replace('access = "login"', 'access = "public"'),
                      encoding="utf-8")
    stack.start()
    yield stack
    stack.stop()


def test_the_trend_draws_each_query_per_year_and_each_point_opens_its_hits(web: DemoStack, page: Page,
                                                                            tmp_path: Path) -> None:
    answer = httpx.get(f"{web.url}/api/v1/trend", params={"corpus": "web", "q": ["^house", "^car"],
                                                            "by": "text_year"}, timeout=30)
    assert answer.status_code == 200, answer.text
    expected: JsonObject = answer.json()
    page.goto(f"{web.url}/?corpus=web&q=%5Ehouse&syntax=simple&view=trend&trend_q_2=%5Ecar")
    expect(page.locator("body")).to_have_attribute("data-analysed", "trend")
    series: list[JsonObject] = expected["series"]
    points = [p for s in series for p in s["points"]]
    expect(page.locator("#trend-table tbody tr")).to_have_count(len(points))
    assert page.locator("#trend-table tbody td.value").all_inner_texts() == [p["period"] for p in points]
    assert page.locator("#trend-table tbody td:nth-child(3)").all_inner_texts() == [
        f"{p['hits']:,}" for p in points]
    expect(page.locator("#trend-chart svg a")).to_have_count(sum(p["tokens"] > 0 for p in points))
    expect(page.locator("#trend-legend li")).to_have_count(2)
    expect(page.locator("#trend-summary")).to_contain_text(f"{series[0]['total']:,} hits of ^house")
    shoot(page, "trend", tmp_path)
    check_accessibility(page)
    with page.expect_download() as waiting:  # the whole table as a file, a row per query and period
        page.click("#trend-download")
    saved = tmp_path / waiting.value.suggested_filename
    waiting.value.save_as(saved)
    text = saved.read_text(encoding="utf-8")
    frame = pd.read_csv(io.StringIO(text), sep="\t", skiprows=int(text.split("skiprows=")[1].split(";")[0]),
                        dtype={"period": str})
    assert list(frame["hits"]) == [p["hits"] for p in points] and set(frame["query"]) == {"^house", "^car"}
    # the keyboard reaches the points: the first link of the chart, then Enter opens its hits
    first = series[0]["points"][0]
    page.locator("#trend-chart svg a").first.focus()
    page.keyboard.press("Enter")
    expect(page.locator("#summary")).to_contain_text(f"of {first['hits']:,} hits")
    assert parse_qs(urlsplit(page.url).query)["filter"] == [f"text_year={first['period']}"]  # every text: a year


def test_compare_lists_the_values_each_search_prefers(web: DemoStack, page: Page, tmp_path: Path) -> None:
    expected = api(web, "/api/v1/compare", corpus="web", q="^house", other_q="^car", by="word",
                   on="matchend[1]", p=1, limit=100)
    assert expected["rows"]
    page.goto(f"{web.url}/?corpus=web&q=%5Ehouse&syntax=simple")
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
    page.click("#tab-compare")
    page.fill("#cmp-q", "^car")
    page.select_option("#cmp-on", "matchend[1]")
    page.select_option("#cmp-p", "1")
    page.locator("#cmp-q").dispatch_event("change")
    rows: list[JsonObject] = expected["rows"]
    expect(page.locator("#cmp-table tbody td.value")).to_have_text([str(r["value"]) for r in rows])
    assert page.locator("#cmp-table tbody td.side").all_inner_texts() == [
        "this search" if r["preferred"] == "first" else "the other" for r in rows]
    expect(page.locator("#cmp-summary")).to_contain_text(f"{expected['compared']:,} values of word compared")
    shoot(page, "compare", tmp_path)
    check_accessibility(page)
    first = rows[0]
    page.locator("#cmp-table tbody td.value a").first.click()  # the value's hits on the side preferring it
    count = first["frequency"] if first["preferred"] == "first" else first["other_frequency"]
    expect(page.locator("#summary")).to_contain_text(f"of {count:,} hits")


def test_a_comparison_listing_nothing_offers_the_setting_that_lists_rows(web: DemoStack, page: Page,
                                                                        tmp_path: Path) -> None:
    """The README's example at the page's default p < 0.05: no value passes, the page says so and offers
    the answer's next setting as a button, which lists the rows the answer said it would."""
    params: dict[str, str | int | float] = {"corpus": "web", "q": "^house", "other_q": "^car", "by": "word",
                                            "on": "matchend[1]", "limit": 100}
    strict = api(web, "/api/v1/compare", **params, p=0.05)
    assert strict["rows"] == [] and strict["next_setting"]["parameter"] == "p"
    looser = api(web, "/api/v1/compare", **params, p=strict["next_setting"]["value"])
    assert len(looser["rows"]) == strict["next_setting"]["rows"] > 0
    page.goto(f"{web.url}/?corpus=web&q=%5Ehouse&syntax=simple")
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
    page.click("#tab-compare")
    page.fill("#cmp-q", "^car")
    page.select_option("#cmp-on", "matchend[1]")
    page.locator("#cmp-q").dispatch_event("change")
    hint = page.locator("#cmp-next")
    expect(hint).to_be_visible()
    expect(hint).to_contain_text("Nothing listed: none of the")
    expect(page.locator("#cmp-table")).to_be_hidden()
    button = hint.locator("button")
    rows = f"{strict['next_setting']['rows']:,}"
    expect(button).to_have_text(f"List all {rows} values (any p)" if strict["next_setting"]["value"] >= 1
                                else f"Use p < {strict['next_setting']['value']:g} ({rows} values)")
    shoot(page, "compare-nothing-listed", tmp_path)
    button.click()
    expect(page.locator("#cmp-table tbody td.value")).to_have_text([str(r["value"]) for r in looser["rows"]])
    expect(hint).to_be_hidden()
    assert page.locator("#cmp-p").input_value() == str(strict["next_setting"]["value"]).removesuffix(".0")
    check_accessibility(page)


def test_the_query_builder_writes_cqp_and_reads_it_back(web: DemoStack, page: Page, tmp_path: Path) -> None:
    page.goto(f"{web.url}/?corpus=web")
    page.click("#builder summary")
    first = page.locator("#builder-tokens > li").first  # opening it with no query gives a first token
    expect(first.locator("legend")).to_have_text("Token 1")
    first.locator("select.attribute").select_option("lemma")
    first.locator("input.value").fill("house")  # typed: the CQP follows
    expect(page.locator("#q")).to_have_value('[lemma="house"]')
    expect(page.locator('input[name="syntax"][value="cqp"]')).to_be_checked()
    page.click("#builder-add")  # the new token's value has the focus: type straight into it
    page.keyboard.type("NN")
    second = page.locator("#builder-tokens > li").nth(1)
    second.locator("select.operator").select_option("starts")
    second.locator("select.attribute").select_option("pos")
    second.locator("select.repeat").select_option("0,1")
    page.select_option("#builder-within", "s")
    expect(page.locator("#q")).to_have_value('[lemma="house"] [pos="NN.*"]? within s')
    expect(page.locator("#builder-status")).to_contain_text('CQP: [lemma="house"] [pos="NN.*"]? within s')
    shoot(page, "query-builder", tmp_path)
    check_accessibility(page)
    page.press("#q", "Enter")  # the built query runs as any typed one
    total = api(web, "/api/v1/query", corpus="web", q='[lemma="house"] [pos="NN.*"]? within s', syntax="cqp",
                limit=0)["total"]
    expect(page.locator("#summary")).to_contain_text(f"of {total:,} hits")
    # CQP typed into the field is read back into boxes where they can show it …
    page.fill("#q", "")
    page.locator("#q").type('[word="the"%c] []{0,2} [lemma!="car"]')
    expect(page.locator("#builder-tokens > li")).to_have_count(3)
    expect(page.locator("#builder-tokens > li").nth(1).locator("legend")).to_have_text("Token 2 (any token)")
    expect(page.locator("#builder-tokens > li").nth(1).locator("select.repeat")).to_have_value("range")
    expect(page.locator("#builder-tokens > li").nth(2).locator("select.operator")).to_have_value("is_not")
    expect(page.locator("#builder-tokens > li").first.locator("input.case")).to_be_checked()
    # … and what they cannot show is said, the CQP left as it is
    page.fill("#q", "")
    page.locator("#q").type('[pos="JJ"] ([lemma="car"] | [lemma="house"])')
    expect(page.locator("#builder-status")).to_contain_text("cannot show this query")
    expect(page.locator("#builder-tokens > li")).to_have_count(3)
    expect(page.locator("#q")).to_have_value('[pos="JJ"] ([lemma="car"] | [lemma="house"])')


def test_several_corpora_in_one_search(web: DemoStack, page: Page, tmp_path: Path) -> None:
    both = api(web, "/api/v1/query", corpus="web,sample", q="house", limit=0)
    corpora: list[JsonObject] = both["corpora"]
    assert [c["corpus"] for c in corpora] == ["web", "sample"] and all(c["total"] for c in corpora)
    page.goto(f"{web.url}/?corpus=web")
    page.click("#more-corpora summary")
    page.check('#more-corpora-list input[value="sample"]')
    page.fill("#q", "house")
    page.press("#q", "Enter")
    expect(page.locator("#summary")).to_contain_text(
        f"of {both['total']:,} hits (web {corpora[0]['total']:,}")
    expect(page.locator("#summary")).to_contain_text(f"sample {corpora[1]['total']:,}")
    expect(page.locator("#kwic thead th.corpus")).to_have_text("Corpus")
    assert set(page.locator("#kwic tbody td.corpus").all_inner_texts()) == {"web"}  # the first corpus's lines first
    assert "corpus=web%2Csample" in page.url or "corpus=web,sample" in page.url
    check_accessibility(page)
    last = (both["total"] - 1) // 100 * 100  # the last page holds the second corpus's lines
    page.goto(f"{web.url}/?corpus=web,sample&q=house&syntax=simple&offset={last}")
    expect(page.locator("#kwic tbody td.corpus").last).to_have_text("sample")
    expect(page.locator('#more-corpora-list input[value="sample"]')).to_be_checked()
    link = page.locator("#kwic tbody tr").last.locator("a.ref")
    assert (link.get_attribute("href") or "").startswith("/ref/sample/")
    page.click("#tab-frequency")
    expect(page.locator("body")).to_have_attribute("data-analysed", "frequency")
    expect(page.locator("#freq-table thead th.per-corpus")).to_have_text(["web", "sample"])
    shoot(page, "several-corpora", tmp_path)
    check_accessibility(page)


def test_good_examples_first(web: DemoStack, page: Page, tmp_path: Path) -> None:
    expected = api(web, "/api/v1/query", corpus="web", q="^house", sort="gdex", limit=20)
    page.goto(f"{web.url}/?corpus=web&q=%5Ehouse&syntax=simple")
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
    page.select_option("#sort-on", "gdex")
    expect(page.locator("#sort-attribute")).to_be_hidden()  # GDEX is one score: no attribute, no direction
    expect(page).to_have_url(re.compile("sort_on=gdex"))
    expected_links = [hit["ref"] for hit in expected["hits"]]
    expect(page.locator("#kwic tbody a.ref").nth(19)).to_have_attribute("href", expected_links[19])
    assert [link.get_attribute("href") for link in page.locator("#kwic tbody a.ref").all()[:20]] == expected_links
    # each line shows its score (three decimals) in a column of its own, and what made it in its title
    shown = page.locator("#kwic tbody td.gdex").all_inner_texts()[:20]
    assert all(abs(float(text) - hit["gdex"]["score"]) <= 0.0005 + 1e-9
               for text, hit in zip(shown, expected["hits"], strict=True))
    title = page.locator("#kwic tbody td.gdex").first.get_attribute("title") or ""
    assert f"{expected['hits'][0]['gdex']['score']:.6f}" in title and "length" in title and "edge" in title
    check_accessibility(page)  # its screenshot: tests/browser/test_trend_and_gdex.py
