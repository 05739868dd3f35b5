"""Small things of a first hour in Chromium (issue 65, item 11): each metadata column's box sits by
its own name, a static link's heading and citation name the same positions, and a saved search's
share link has a button that copies it (the Clipboard API, or a fallback where it is missing)."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.conftest import PASSWORD, USER
from tests.browser.pages import api, check_accessibility, search, shoot

pytestmark = pytest.mark.e2e


def test_each_metadata_box_sits_by_its_own_name(site: DemoStack, page: Page, tmp_path: Path) -> None:
    """The gap between a box and its own name is smaller than the gap to the name before it, and
    every box lies left of its own name: a box is read with the name it belongs to."""
    page.goto(site.url)
    search(page, "the")
    page.locator("#kwic-columns > summary").click()
    labels = page.locator("#kwic-meta-boxes label")
    expect(labels.first).to_be_visible()
    assert labels.count() >= 3  # text_id, text_genre, text_year ...
    boxes = labels.evaluate_all("""labels => labels.map((label) => {
        const box = label.querySelector("input").getBoundingClientRect();
        const name = label.querySelector("span").getBoundingClientRect();
        return {box: [box.left, box.right, box.top], name: [name.left, name.right, name.top]};
    })""")
    for before, this in zip(boxes, boxes[1:], strict=False):
        if this["box"][2] != before["box"][2]:
            continue  # on a new line
        own = this["name"][0] - this["box"][1]
        previous = this["box"][0] - before["name"][1]
        assert 0 <= own < previous, (before, this)
        assert previous >= 2 * own, (before, this)  # visibly apart: the gap to the previous name at least twice
    shoot(page, "metadata-columns", tmp_path)
    check_accessibility(page)


def test_a_static_link_heading_and_citation_name_the_same_positions(
    site: DemoStack, page: Page, tmp_path: Path
) -> None:
    page.goto(site.url)
    search(page, "the old house")
    page.locator("#kwic tbody a").first.click()
    hit = api(site, "/api/v1/query", corpus="sample", q="the old house")["hits"][0]
    positions = f"positions {hit['position']}–{hit['matchend']}"
    expect(page.locator("h1")).to_have_text(f"cowbird sample corpus, {positions}")
    today = datetime.date.today().isoformat()
    expect(page.locator("#citation")).to_contain_text(f"cowbird sample corpus, {positions}. ")
    expect(page.locator("#citation")).to_contain_text(f"(retrieved from cowbird on {today})")
    expect(page.locator("#citation")).not_to_contain_text("accessed")
    shoot(page, "static-link-positions", tmp_path)
    check_accessibility(page)


def test_a_share_link_is_copied_with_one_click(site: DemoStack, browser: Browser) -> None:
    """Saved, the search's share link is copied by "Copy link" (in the dialog and in the list), and the
    page says so; where the Clipboard API is missing the fallback copies it too."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    page = context.new_page()
    page.goto(f"{site.url}/login")
    page.fill('input[name="login"]', USER)
    page.fill('input[name="password"]', PASSWORD)
    page.press('input[name="password"]', "Enter")
    expect(page).to_have_url(f"{site.url}/")
    search(page, "house")
    page.click("#open-save")
    page.fill("#save-name", "houses to share")
    page.press("#save-name", "Enter")
    said = page.locator("#save-said")
    expect(said).to_contain_text("Share link: ")
    said.get_by_role("button", name="Copy link").click()
    expect(said.get_by_role("status")).to_have_text("Copied.")
    link = page.evaluate("navigator.clipboard.readText()")
    assert link.startswith(f"{site.url}/s/"), link
    page.click("#save-close")
    item = page.locator("#saved-list li", has_text="houses to share")
    assert f"{site.url}{item.locator('a.share').get_attribute('href')}" == link
    page.evaluate("navigator.clipboard.writeText('')")
    item.get_by_role("button", name="Copy the share link of houses to share").click()
    expect(item.locator(".copied")).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == link
    check_accessibility(page)

    plain = context.new_page()  # as on plain HTTP from another host: no navigator.clipboard
    plain.add_init_script("Object.defineProperty(Navigator.prototype, 'clipboard', {get: () => undefined})")
    plain.goto(site.url)
    plain.locator("#saved > summary").click()
    page.evaluate("navigator.clipboard.writeText('')")
    fallback = plain.locator("#saved-list li", has_text="houses to share")
    fallback.get_by_role("button", name="Copy the share link of houses to share").click()
    expect(fallback.locator(".copied")).to_have_text("Copied.")
    assert page.evaluate("navigator.clipboard.readText()") == link  # execCommand("copy") reached the clipboard
    item.locator("button.delete").click()
    expect(item).to_have_count(0)
    context.close()
