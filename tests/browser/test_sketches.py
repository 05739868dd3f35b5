"""Word sketches in real Chromium against real processes: the sample corpus (Penn tags, the ``penn``
grammar) sketched, compared and searched for similar words from the keyboard, the page showing what
the API answers, each collocate opening its instances, and axe finding nothing serious."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.pages import api, check_accessibility, shoot

pytestmark = pytest.mark.e2e


def open_sketches(page: Page, site: DemoStack) -> None:
    page.goto(site.url)
    section = page.locator("#sketch")
    expect(section).to_be_visible()  # the sample corpus has a sketch grammar
    summary = section.locator("summary")
    summary.focus()
    page.keyboard.press("Enter")  # a <details> opens from the keyboard
    expect(page.locator("#sk-headword")).to_be_visible()


@pytest.mark.timeout(300)
def test_a_word_sketch_from_the_keyboard_shows_what_the_api_answers(site: DemoStack, page: Page,
                                                                    tmp_path: Path) -> None:
    expected = api(site, "/api/v1/sketch", corpus="sample", headword="house")
    relations = [r for r in expected["relations"] if r["rows"]]
    assert relations
    open_sketches(page, site)
    page.locator("#sk-headword").fill("house")
    page.locator("#sk-headword").press("Enter")
    tables = page.locator("#sk-relations table")
    expect(tables).to_have_count(len(relations))
    for table, relation in zip(tables.all(), relations, strict=True):
        instances = f"{relation['head_total']} instance" + ("" if relation["head_total"] == 1 else "s")
        expect(table.locator("caption")).to_contain_text(f"{relation['name']}: {instances}")
        cells = [row.locator("td").all_inner_texts() for row in table.locator("tbody tr").all()]
        assert [(c[0], int(c[1])) for c in cells] == [(r["value"], r["f"]) for r in relation["rows"]]
    expect(page.locator("#sk-summary")).to_contain_text(f"house: {expected['frequency']} occurrences")
    expect(page.locator("#sk-tsv")).to_have_attribute("href", "/api/v1/sketch?" + "corpus=sample&headword=house"
                                                       "&min_freq=1&format=tsv&provenance=1")
    check_accessibility(page)
    shoot(page, "word-sketch", tmp_path)
    # a collocate opens its instances on the search page
    first = relations[0]["rows"][0]
    page.locator("#sk-relations table").first.locator("tbody tr td.value a").first.click()
    expect(page.locator("#summary")).to_contain_text(f"of {first['f']} hit")


@pytest.mark.timeout(300)
def test_a_sketch_difference_and_similar_words(site: DemoStack, page: Page) -> None:
    open_sketches(page, site)
    page.locator("#sk-headword").fill("house")
    page.locator("#sk-other").fill("price")
    page.locator("#sk-other").press("Enter")
    expected = api(site, "/api/v1/sketchdiff", corpus="sample", headword="house", other="price")
    shown = [r for r in expected["relations"]
             if r["shared"] or r["only_first"] or r["only_second"]]
    expect(page.locator("#sk-relations table")).to_have_count(len(shown))
    first = page.locator("#sk-relations table").first
    expect(first.locator("thead")).to_contain_text("logDice with price")
    values = first.locator("tbody td.value").all_inner_texts()
    relation = shown[0]
    assert values == [r["value"] for group in ("only_first", "shared", "only_second") for r in relation[group]]
    check_accessibility(page)
    # similar words: the thesaurus entry, each word a button that sketches it
    page.locator("#sk-other").fill("")
    page.locator("#sk-similar").focus()
    page.keyboard.press("Enter")
    thesaurus = api(site, "/api/v1/thesaurus", corpus="sample", headword="house")
    rows = page.locator("#sk-thesaurus tbody tr")
    expect(rows).to_have_count(len(thesaurus["rows"]))
    assert rows.locator("td.value").all_inner_texts() == [r["word"] for r in thesaurus["rows"]]
    check_accessibility(page)
    word = thesaurus["rows"][0]["word"]
    rows.first.locator("button").click()
    expect(page.locator("#sk-headword")).to_have_value(str(word))
    expect(page.locator("#sk-summary")).to_contain_text(f"{word}: ")
