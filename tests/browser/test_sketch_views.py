"""Word sketches in the page's URL and the sketch difference's grid (issue 65, item 6), in real
Chromium against the demo's processes: a sketch, a sketch difference and similar words each a new
entry in the history that a reload or a shared link shows again, Back and Forward moving between a
search and the sketches without leaving the site; the difference a grid of relation tables side by
side on a desktop and one column on a 390-px phone, each row shaded by its side with the side also
in words, a legend naming both words; every relation named by its grammar's label."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.pages import api, check_accessibility, expect_url_with, reopen, search, shoot

pytestmark = [pytest.mark.e2e, pytest.mark.loopback]


def sketch_from_the_form(page: Page, site: DemoStack, headword: str, other: str = "") -> None:
    page.goto(site.url)
    page.locator("#sketch summary").click()
    page.locator("#sk-headword").fill(headword)
    page.locator("#sk-other").fill(other)
    page.locator("#sk-run").click()


def labels(found: dict[str, Any], rows: tuple[str, ...]) -> list[str]:
    """The relations' labels the page shows: those with a row to show, in the API's order."""
    return [r["label"] for r in found["relations"] if any(r[group] for group in rows)]


@pytest.mark.timeout(300)
def test_a_sketch_lives_in_the_url_reloads_and_goes_back_to_the_search(
    site: DemoStack, page: Page, tmp_path: Path
) -> None:
    expected = api(site, "/api/v1/sketch", corpus="sample", headword="house")
    shown = labels(expected, ("rows",))
    assert 'modifiers of "house"' in shown
    page.goto(site.url)
    search(page, "house")  # a search first: the sketch comes after it in the history
    expect(page.locator("#summary")).to_contain_text("hit")
    searched = page.url
    page.locator("#sketch summary").click()
    page.locator("#sk-headword").fill("house")
    page.locator("#sk-min").fill("2")
    page.locator("#sk-run").click()
    captions = page.locator("#sk-relations table caption")
    at_least_two = api(site, "/api/v1/sketch", corpus="sample", headword="house", min_freq=2)
    two = labels(at_least_two, ("rows",))
    expect(captions).to_have_count(len(two))
    for caption, label in zip(captions.all(), two, strict=True):
        expect(caption).to_contain_text(f"{label}: ")
    first = [r for r in at_least_two["relations"] if r["rows"]][0]
    expect(page.locator("#sk-relations table").first).to_have_attribute("data-relation", first["name"])
    # a reload (or the link shared) shows the same sketch
    sketched = reopen(page, "q=house", "sketch=house", "sketch_min=2", "corpus=sample")
    expect(page.locator("#sketch")).to_have_attribute("open", "")
    expect(page.locator("#sk-headword")).to_have_value("house")
    expect(page.locator("#sk-min")).to_have_value("2")
    expect(captions).to_have_count(len(two))
    # a sketch difference: another entry in the history
    page.locator("#sk-other").fill("price")
    page.locator("#sk-run").click()
    expect(page.locator("#sk-legend")).to_be_visible()
    expect_url_with(page, "sketch=house", "sketch_other=price")
    differed = page.url
    # Back: the sketch, then the search; Forward: the sketch, the difference; never off the site
    page.go_back()
    expect(page).to_have_url(sketched)
    expect(page.locator("#sk-other")).to_have_value("")
    expect(page.locator("#sk-legend")).to_be_hidden()
    expect(captions).to_have_count(len(two))
    page.go_back()  # the blank page the reload came from, then the sketch before it
    page.go_back()
    expect(page).to_have_url(sketched)
    page.go_back()
    expect(page).to_have_url(searched)
    expect(page.locator("#sk-relations table")).to_have_count(0)
    expect(page.locator("#summary")).to_contain_text("hit")
    page.go_forward()
    expect(page).to_have_url(sketched)
    expect(captions).to_have_count(len(two))
    page.go_forward()
    page.go_forward()
    page.go_forward()
    expect(page).to_have_url(differed)
    expect(page.locator("#sk-other")).to_have_value("price")
    expect(page.locator("#sk-legend")).to_be_visible()
    # similar words too
    page.locator("#sk-other").fill("")
    page.locator("#sk-min").fill("1")  # at its default: out of the URL
    page.locator("#sk-similar").click()
    expect(page.locator("#sk-thesaurus")).to_be_visible()
    similar = reopen(page, "sketch=house", "sketch_similar=1")
    assert "sketch_min" not in similar and "sketch_other" not in similar
    expect(page.locator("#sk-thesaurus")).to_be_visible()
    expect(page.locator("#sk-relations table")).to_have_count(0)


def grid_columns(page: Page) -> list[float]:
    """The left edges of the difference's tables, each once: one per column of the grid."""
    lefts = page.locator("#sk-relations table").evaluate_all("ts => ts.map(t => t.getBoundingClientRect().left)")
    return sorted({round(float(x)) for x in lefts})


@pytest.mark.timeout(300)
def test_a_sketch_difference_is_a_shaded_grid_with_a_legend(site: DemoStack, page: Page, tmp_path: Path) -> None:
    expected = api(site, "/api/v1/sketchdiff", corpus="sample", headword="house", other="price")
    groups = ("only_first", "shared", "only_second")
    shown = [r for r in expected["relations"] if any(r[g] for g in groups)]
    assert len(shown) >= 3
    sketch_from_the_form(page, site, "house", "price")
    tables = page.locator("#sk-relations table")
    expect(tables).to_have_count(len(shown))
    expect(tables.locator("caption")).to_have_text(labels(expected, groups))
    legend = page.locator("#sk-legend")
    expect(legend).to_contain_text("house only ◀")
    expect(legend).to_contain_text("▶ price only")
    expect(legend).to_contain_text("blue for house, orange for price")
    # several columns side by side on a desktop, the page no longer one long column
    assert len(grid_columns(page)) >= 3
    height = page.evaluate("document.body.scrollHeight")
    assert height < 4000, height
    # each row's shade and its side in words, as its difference says
    for table, relation in zip(tables.all(), shown, strict=True):
        rows = table.locator("tbody tr")
        expected_rows = [(group, r) for group in groups for r in relation[group]]
        expect(rows).to_have_count(len(expected_rows))
        for row, (group, r) in zip(rows.all(), expected_rows, strict=True):
            side = row.locator("td.side").inner_text()
            shade = row.get_attribute("class") or ""
            if group == "only_first":
                assert (side, shade) == ("◀ house only", "side-first-4")
            elif group == "only_second":
                assert (side, shade) == ("price only ▶", "side-second-4")
            elif abs(r["difference"]) < 0.5:
                assert (side, shade) == ("= both alike", "side-both")
            else:
                level = sum(abs(r["difference"]) >= step for step in (0.5, 2, 4))
                which = "first" if r["difference"] > 0 else "second"
                assert shade == f"side-{which}-{level}", (r, shade)
                assert side == ("◀ house" if which == "first" else "price ▶")
    colours = page.locator("#sk-relations tr.side-first-4 td").first.evaluate(
        "c => getComputedStyle(c).backgroundColor"
    )
    others = page.locator("#sk-relations tr.side-second-4 td").first.evaluate(
        "c => getComputedStyle(c).backgroundColor"
    )
    assert colours != others
    expect(tables.first.locator("thead")).to_contain_text("logDice with price")
    check_accessibility(page)
    shoot(page, "sketch-difference", tmp_path)


@pytest.mark.timeout(300)
def test_on_a_phone_the_difference_is_one_column(site: DemoStack, browser_page_phone: Page, tmp_path: Path) -> None:
    page = browser_page_phone
    sketch_from_the_form(page, site, "house", "price")
    expect(page.locator("#sk-legend")).to_be_visible()
    assert len(grid_columns(page)) == 1
    width = page.evaluate("document.documentElement.clientWidth")
    widest = page.locator("#sk-relations table").evaluate_all(
        "ts => Math.max(...ts.map(t => t.getBoundingClientRect().right))"
    )
    assert widest <= width + 1, (widest, width)  # no table runs off the screen
    shoot(page, "sketch-difference-phone", tmp_path)
