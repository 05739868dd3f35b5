"""The linguist's workbench in real Chromium against real processes (issue 36): each feature used as
a CQPweb or NoSketch Engine user reaches for it — with the mouse and the keyboard — and what the page
shows compared with what the API answers; and word sketches (issue 51): the sample corpus (Penn tags,
the ``penn`` grammar) sketched, compared and searched for similar words from the keyboard, each
collocate opening its instances, axe finding nothing serious."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from cowbird.commands.demo import DemoStack
from cowbird.frontend.accounts import Accounts, Database, sqlite_url
from tests.browser.conftest import PASSWORD, USER
from tests.browser.pages import api, check_accessibility, expect_url_with, reopen, search, shoot

pytestmark = pytest.mark.e2e


def logged_in(site: DemoStack, page: Page) -> Page:
    """The page, with the test user logged in."""
    page.goto(f"{site.url}/login")
    page.fill('input[name="login"]', USER)
    page.fill('input[name="password"]', PASSWORD)
    page.press('input[name="password"]', "Enter")
    expect(page).to_have_url(f"{site.url}/")  # logging in lands on the search
    return page


def shown(line: dict[str, Any]) -> str:
    """The widened line's text as the page writes it: "…" where the text goes on, ‖ where another
    text begins and | where another sentence does (each named for screen readers)."""
    texts, sentences = set(line["breaks"].get("text", [])), set(line["breaks"].get("s", []))
    parts = ["… " if line["more_before"] else ""]
    for at, token in enumerate(line["left"] + line["match"] + line["right"]):
        if at:
            parts.append(" ")
        if at in texts:
            parts.append("‖ another text  ")
        elif at in sentences:
            parts.append("| another sentence  ")
        parts.append("/".join(token))
    return re.sub(r"\s+", " ", "".join(parts) + (" …" if line["more_after"] else "")).strip()


@pytest.mark.timeout(300)
def test_a_line_is_widened_in_place(site: DemoStack, page: Page, tmp_path: Path) -> None:
    hits = api(site, "/api/v1/query", corpus="sample", q="house")["hits"]
    assert isinstance(hits, list) and len(hits) == 3
    page.goto(site.url)
    search(page, "house")
    rows = page.locator("#kwic tbody tr")
    expect(rows).to_have_count(3)
    rate = api(site, "/api/v1/query", corpus="sample", q="house", limit=0)["per_million"]
    assert rate == pytest.approx(3 * 1_000_000 / 93)  # the sample corpus: 93 tokens
    expect(page.locator("#summary")).to_contain_text("1–3 of 3 hits · 32,258 per million tokens · ")
    described = api(site, "/api/v1/corpora")["data"][0]["attributes"]["pos"]
    expect(page.locator("#sort-attribute option[value=pos]")).to_have_attribute("title", described)
    first = rows.nth(0).locator("button.widen")
    expect(first).to_have_attribute("aria-label", "More context for hit 1")
    first.click()
    wide = page.locator("#kwic tbody tr.wide")
    expect(wide).to_have_count(1)
    expect(rows.nth(1)).to_have_class("wide")  # right under its line
    expect(first).to_have_attribute("aria-expanded", "true")
    position = hits[0]["position"]
    thirty = api(site, f"/api/v1/context/sample/{position}", tokens=30, region="none")  # across texts
    assert thirty["breaks"]["text"]  # the sample's texts are short: the line runs into the next one
    expect(wide.locator(".wide-text")).to_have_text(shown(thirty))
    expect(wide.locator(".wide-text mark")).to_have_text("house")
    expect(wide.locator(".wide-text .edge.text")).to_have_count(len(thirty["breaks"]["text"]))
    expect(wide.locator(".wide-note")).to_have_text(
        "Showing 30 tokens each side. ‖ marks where another text begins or ends.")
    expect(wide.locator("button.paragraph")).to_be_hidden()  # the sample corpus has no <p>
    wide.locator("button.sentence").click()
    sentence = api(site, f"/api/v1/context/sample/{position}", tokens=100, region="s")
    expect(wide.locator(".wide-text")).to_have_text(shown(sentence))
    expect(wide.locator(".wide-note")).to_have_text("Showing its sentence.")
    shoot(page, "context-in-place", tmp_path)
    wide.locator("button.less").click()
    expect(wide.locator(".wide-text")).to_have_text(shown(api(site, f"/api/v1/context/sample/{position}", tokens=0,
                                                              region="none")))
    expect(wide.locator("button.less")).to_be_disabled()
    check_accessibility(page)
    second = page.locator("#kwic tbody tr:not(.wide)").nth(1).locator("button.widen")
    second.focus()
    page.keyboard.press("Enter")  # the keyboard opens it too
    expect(page.locator("#kwic tbody tr.wide")).to_have_count(2)
    page.locator("#kwic tbody tr.wide").nth(1).locator("button.close").click()
    expect(page.locator("#kwic tbody tr.wide")).to_have_count(1)
    expect(second).to_be_focused()
    expect(second).to_have_attribute("aria-expanded", "false")
    # closed before its context came, a line stays closed when the context comes
    held: list[Route] = []
    def hold(route: Route) -> None:
        held.append(route)

    page.route("**/api/v1/context/**", hold)
    third = page.locator("#kwic tbody tr:not(.wide)").nth(2).locator("button.widen")
    third.click()
    expect(page.locator("#kwic tbody tr.wide")).to_have_count(2)
    expect(third).to_have_attribute("aria-expanded", "true")
    page.locator("#kwic tbody tr.wide").nth(1).locator("button.close").click()
    expect(third).to_have_attribute("aria-expanded", "false")
    for _ in range(100):  # the page's request reaches the route while playwright dispatches events
        if held:
            break
        page.wait_for_timeout(50)
    with page.expect_response("**/api/v1/context/**"):
        held[0].continue_()
    page.unroute("**/api/v1/context/**", hold)
    expect(third).to_have_attribute("aria-expanded", "false")
    expect(page.locator("#kwic tbody tr.wide")).to_have_count(1)


def test_lines_are_numbered_with_a_metadata_column_across_the_window(site: DemoStack, browser: Browser,
                                                                     tmp_path: Path) -> None:
    """Each line has its number in the order shown; a metadata column (any s-attribute with values)
    is chosen beside the lines, lives in the URL and shows each hit's value as the API gives it;
    the concordance takes the window's width."""
    context = browser.new_context(viewport={"width": 1920, "height": 900})
    page = context.new_page()
    page.goto(site.url)
    search(page, "the")
    expected = api(site, "/api/v1/query", corpus="sample", q="the", meta="text_genre")["hits"]
    assert isinstance(expected, list) and len(expected) > 3
    expect(page.locator("#kwic tbody td.n")).to_have_text([str(k + 1) for k in range(len(expected))])
    marked = api(site, "/api/v1/query", corpus="sample", q="the", boundaries="text,s")["hits"]
    assert isinstance(marked, list)
    texts = sum(1 for h in marked for b in h["breaks"] if b["region"] == "text")
    assert texts  # the sample's texts are short: lines run across them
    expect(page.locator("#kwic tbody td .edge.text")).to_have_count(texts)
    expect(page.locator("#kwic tbody td.right")).to_have_text([h["right"] for h in marked])  # the text as it is
    first = page.locator("#kwic tbody td .edge.text").first
    expect(first).to_have_attribute("aria-label", "another text")
    expect(page.locator("#kwic thead th.meta")).to_have_count(0)
    page.locator("#kwic-columns > summary").click()
    page.check('#kwic-meta-boxes input[value="text_genre"]')
    expect(page.locator("#kwic thead th.meta")).to_have_text(["text_genre"])
    expect(page.locator("#kwic tbody td.meta")).to_have_text([h["meta"]["text_genre"] for h in expected])
    page.check('#kwic-meta-boxes input[value="text_year"]')  # any metadata, as many columns as ticked
    both = api(site, "/api/v1/query", corpus="sample", q="the", meta="text_genre,text_year")["hits"]
    assert isinstance(both, list)
    expect(page.locator("#kwic thead th.meta")).to_have_text(["text_genre", "text_year"])
    expect(page.locator("#kwic tbody tr").first.locator("td.meta")).to_have_text(
        [both[0]["meta"]["text_genre"], both[0]["meta"]["text_year"]])
    expect_url_with(page, "column=text_genre(%2C|,)text_year")
    page.reload()
    expect(page.locator('#kwic-meta-boxes input[value="text_year"]')).to_be_checked()
    expect(page.locator("#kwic tbody td.meta").first).to_have_text(expected[0]["meta"]["text_genre"])
    width = page.locator("#kwic").evaluate("table => table.getBoundingClientRect().width")
    assert width > 1800, width  # not the 72rem of the reading pages
    shoot(page, "numbered-lines-with-a-column", tmp_path)
    check_accessibility(page)
    context.close()


def test_tokens_are_shown_with_their_attributes(site: DemoStack, page: Page, tmp_path: Path) -> None:
    """"Tokens as word/pos/lemma" writes every token of the concordance with its attributes, as the
    API's inline= does; it lives in the URL, the widened line and the download follow it."""
    page.goto(site.url)
    search(page, "house")
    choice = page.locator("#kwic-inline")
    expect(choice.locator("option")).to_have_text(["word", "word/pos", "word/lemma", "word/pos/lemma"])
    choice.select_option(label="word/pos/lemma")
    expected = api(site, "/api/v1/query", corpus="sample", q="house", inline="pos,lemma")["hits"]
    assert isinstance(expected, list)
    expect(page.locator("#kwic tbody td.match")).to_have_text([h["match"] for h in expected])
    expect(page.locator("#kwic tbody td.right")).to_have_text([h["right"] for h in expected])
    expect_url_with(page, "inline=pos(%2C|,)lemma")
    page.reload()
    expect(page.locator("#kwic tbody td.match").first).to_have_text("house/NN/house")
    expect(page.locator("#kwic-inline")).to_have_value("pos,lemma")
    page.locator("#kwic tbody button.widen").first.click()
    line = api(site, f"/api/v1/context/sample/{expected[0]['position']}", tokens=30, show="pos,lemma")
    left = line["left"]
    assert isinstance(left, list)
    expect(page.locator("#kwic tbody tr.wide .wide-text")).to_contain_text(" ".join("/".join(t) for t in left))
    shoot(page, "tokens-as-word-pos-lemma", tmp_path)
    page.click("#open-download")
    expect(page.locator("#dl-curl")).to_contain_text("inline=pos%2Clemma")


def test_hits_sort_on_three_keys(site: DemoStack, page: Page, tmp_path: Path) -> None:
    """Sort by the word after the match, then (its ties) by the part of speech before it, Z → A, then
    by the match ignoring case: the page shows the API's order, the URL keeps it, Download follows it."""
    page.goto(site.url)
    search(page, '[pos="DT"]', syntax="cqp")
    expect(page.locator("#sort-level-2")).to_be_hidden()
    page.select_option("#sort-on", "right1")
    page.select_option("#sort-attribute", "word")
    expect(page.locator("#sort-level-2")).to_be_visible()
    expect(page.locator("#sort-level-3")).to_be_hidden()
    expect(page.locator("#sort-on-2 option[value=random]")).to_have_count(0)
    page.select_option("#sort-on-2", "left1")
    page.select_option("#sort-attribute-2", "pos")
    page.select_option("#sort-direction-2", "desc")
    page.select_option("#sort-on-3", "match")
    page.check("#sort-fold-3")
    expected = api(site, "/api/v1/query", corpus="sample", q='[pos="DT"]', syntax="cqp",
                   sort="right1.word,left1.pos,match.word%c", direction="asc,desc,asc")["hits"]
    assert isinstance(expected, list) and len(expected) > 5
    expect(page.locator("#kwic tbody td.right")).to_have_text([h["right"] for h in expected])
    expect(page.locator("#kwic tbody td.left")).to_have_text([h["left"] for h in expected])
    expect_url_with(page, "sort_on_2=left1", "direction_2=desc", "sort_fold_3=")
    page.reload()
    expect(page.locator("#sort-on-2")).to_have_value("left1")
    expect(page.locator("#kwic tbody td.left")).to_have_text([h["left"] for h in expected])
    shoot(page, "sort-three-keys", tmp_path)
    check_accessibility(page)
    page.click("#open-download")
    expect(page.locator("#dl-curl")).to_contain_text("sort=right1.word%2Cleft1.pos%2Cmatch.word%25c")
    expect(page.locator("#dl-curl")).to_contain_text("direction=asc%2Cdesc%2Casc")


def test_a_frequency_breakdown_by_two_keys(site: DemoStack, page: Page, tmp_path: Path) -> None:
    """Count the word before the match and the part of speech after it at once: the table is the API's
    breakdown by two keys, each row both values; the second key lives in the URL."""
    page.goto(site.url)
    search(page, "the")
    page.click("#tab-frequency")
    page.select_option("#freq-by", "word")
    page.select_option("#freq-on", "match[-1]")
    page.select_option("#freq-by-2", "pos")
    page.select_option("#freq-on-2", "matchend[1]")
    expected = api(site, "/api/v1/frequency", corpus="sample", q="the", by="word,pos", on="match[-1],matchend[1]")
    rows = expected["rows"]
    assert isinstance(rows, list) and rows and all(len(r["values"]) == 2 for r in rows)
    expect(page.locator("#freq-table tbody td.value")).to_have_text([r["value"] for r in rows])
    expect(page.locator("#freq-summary")).to_contain_text("match[-1].word and matchend[1].pos")
    expect_url_with(page, "freq_by_2=pos", "freq_on_2=matchend")
    shoot(page, "frequency-two-keys", tmp_path)
    check_accessibility(page)


def test_the_dispersion_of_the_hits(site: DemoStack, page: Page, tmp_path: Path) -> None:
    """The Dispersion tab: Gries' DP over the texts and the partitions as the API computes them, the
    hits in 50 stretches of the corpus as columns, and each partition's hits."""
    page.goto(site.url)
    search(page, "the")
    page.click("#tab-dispersion")
    expected = api(site, "/api/v1/dispersion", corpus="sample", q="the", parts="text", bins=50)
    assert isinstance(expected["dp"], float) and 0 <= expected["dp"] <= 1
    summary = page.locator("#disp-summary")
    expect(summary).to_contain_text(f"DP {expected['dp']:.3f} over {expected['parts']} text regions")
    expect(summary).to_contain_text(f"over the partitions {expected['dp_partitions']:.3f}")
    bins = expected["bins"]
    assert isinstance(bins, list) and len(bins) == 50
    expect(page.locator("#disp-chart svg rect")).to_have_count(50)
    partitions = expected["partitions_hits"]
    assert isinstance(partitions, list)
    expect(page.locator("#disp-table tbody td.value")).to_have_text([p["id"] for p in partitions])
    # tiny parts (the sample's texts: 93 tokens in all) are explained beside the chart
    parts = expected["parts"]
    assert isinstance(parts, int)
    expect(page.locator("#disp-note")).to_contain_text(
        f"The {parts} text regions hold {round(93 / parts)} tokens each on average")
    expect_url_with(page, "view=dispersion")
    shoot(page, "dispersion", tmp_path)
    check_accessibility(page)


def test_a_word_list_of_the_corpus_and_of_its_news_texts(site: DemoStack, page: Page, tmp_path: Path) -> None:
    """The word list below the form: no query needed; lemmas, then 2-grams with a token matching a
    regex (typed, run with Enter), then the news texts only (a filter of the form); each entry opens
    its hits, and the rows download with what was counted."""
    page.goto(site.url)
    page.locator("#wordlist > summary").click()
    page.select_option("#wl-attribute", "lemma")
    page.click("#wl-run")
    lemmas = api(site, "/api/v1/wordlist", corpus="sample", attribute="lemma")
    rows = lemmas["rows"]
    assert isinstance(rows, list) and rows[0]["frequency"] > 1
    expect(page.locator("#wl-table tbody td.value")).to_have_text([r["value"] for r in rows])
    expect(page.locator("#wl-table tbody tr").first.locator("td").nth(2)).to_have_text(str(rows[0]["frequency"]))
    expect(page.locator("#wl-summary")).to_contain_text(f"The {len(rows)} most frequent lemma values in 93 tokens.")
    page.select_option("#wl-n", "2")
    page.fill("#wl-match", "the")
    page.locator("#wl-match").press("Enter")  # the keyboard lists too
    pairs = api(site, "/api/v1/wordlist", corpus="sample", attribute="lemma", n=2, match="the")["rows"]
    assert isinstance(pairs, list) and pairs and all("the" in r["tokens"] for r in pairs)
    expect(page.locator("#wl-table tbody td.value")).to_have_text([r["value"] for r in pairs])
    page.click("#add-filter")
    page.select_option("#filter-rows .filter select.attribute", "text_genre")
    page.fill("#filter-rows .filter input", "news")
    page.click("#wl-run")
    news = api(site, "/api/v1/wordlist", corpus="sample", attribute="lemma", n=2, match="the", filter="text_genre~news")
    tokens = news["tokens"]
    assert isinstance(tokens, int) and 0 < tokens < 93
    expect(page.locator("#wl-summary")).to_contain_text(f"in {tokens} tokens in the texts the filters choose")
    news_rows = news["rows"]
    assert isinstance(news_rows, list)
    expect(page.locator("#wl-table tbody td.value")).to_have_text([r["value"] for r in news_rows])
    download = page.locator("#wl-xlsx")
    expect(download).to_be_visible()
    href = download.get_attribute("href") or ""
    assert "format=xlsx" in href and "filter=text_genre%7Enews" in href and "provenance=1" in href
    shoot(page, "wordlist", tmp_path)
    check_accessibility(page)
    first = page.locator("#wl-table tbody td.value a").first
    first.focus()
    page.keyboard.press("Enter")  # the entry's hits, in the news texts
    expect(page.locator("#summary")).to_contain_text(f"of {news_rows[0]['frequency']} hit")
    expect(page.locator("#filter-rows .filter input")).to_have_value("news")


def test_keywords_of_the_news_texts_against_the_others(site: DemoStack, page: Page, tmp_path: Path) -> None:
    """Compare with: the texts the filter leaves out turns the word list into keywords, ranked by the
    measure chosen, as the API computes them; the n-gram and regex controls are off meanwhile."""
    page.goto(site.url)
    page.click("#add-filter")
    page.select_option("#filter-rows .filter select.attribute", "text_genre")
    page.fill("#filter-rows .filter input", "news")
    page.locator("#wordlist > summary").click()
    page.select_option("#wl-reference", "rest")
    expect(page.locator("#wl-n")).to_be_disabled()
    expect(page.locator("#wl-order")).to_be_visible()
    expect(page.locator("#wl-min")).to_have_value("5")
    page.fill("#wl-min", "2")
    page.select_option("#wl-order", "log_ratio")
    page.select_option("#wl-attribute", "lemma")
    expect(page.locator("#kw-p")).to_have_value("0.05")  # significant items only, by default
    expect(page.locator("#kw-bonferroni")).to_be_checked()
    page.click("#wl-run")
    tested = api(site, "/api/v1/keywords", corpus="sample", attribute="lemma", min=2, order="log_ratio",
                 filter="text_genre~news", reference_filter="text_genre!~news")
    assert tested["not_significant"] > 0  # 93 tokens: little is significant
    expect(page.locator("#wl-summary")).to_contain_text(
        f"those significant at p < 0.05 with the Bonferroni correction (log-likelihood at least "
        f"{tested['critical_log_likelihood']:.2f}): {tested['listed']}")
    expect(page.locator("#wl-summary")).to_contain_text(f"{tested['not_significant']} not listed")
    page.select_option("#kw-p", "1")  # every item compared
    page.click("#wl-run")
    expected = api(site, "/api/v1/keywords", corpus="sample", attribute="lemma", min=2, order="log_ratio",
                   filter="text_genre~news", reference_filter="text_genre!~news", p=1)
    rows = expected["rows"]
    assert isinstance(rows, list) and rows
    expect(page.locator("#kw-table tbody td.value")).to_have_text([r["value"] for r in rows])
    expect(page.locator("#wl-table")).to_be_hidden()
    assert isinstance(rows[0]["hits"], str)
    expect(page.locator("#kw-table tbody td.value a").first).to_have_attribute("href", rows[0]["hits"])
    first = page.locator("#kw-table tbody tr").first.locator("td")
    expect(first.nth(7)).to_contain_text(f"{rows[0]['log_ratio']:.2f} (")
    expect(page.locator("#wl-summary")).to_contain_text(
        f"against the texts of sample where text_genre!~news ({expected['reference_tokens']} tokens)")
    href = page.locator("#wl-csv").get_attribute("href") or ""
    assert href.startswith("/api/v1/keywords?") and "format=csv" in href
    shoot(page, "keywords", tmp_path)
    check_accessibility(page)
    # the list's settings live in the URL: reload, Back and a shared link show the same list
    reopen(page, "list=1", "wl_reference=rest", "kw_p=1")
    expect(page.locator("#wordlist")).to_have_attribute("open", "")
    expect(page.locator("#kw-p")).to_have_value("1")
    expect(page.locator("#wl-order")).to_have_value("log_ratio")
    expect(page.locator("#kw-table tbody td.value")).to_have_text([r["value"] for r in rows])
    page.select_option("#wl-reference", "")
    expect(page.locator("#wl-n")).to_be_enabled()
    page.click("#wl-run")  # a word list now: a new entry in the history
    expect(page.locator("#wl-table")).to_be_visible()
    page.go_back()
    expect(page.locator("#kw-table tbody td.value")).to_have_text([r["value"] for r in rows])
    expect(page.locator("#wl-reference")).to_have_value("rest")


def test_a_saved_search_is_listed_shared_and_deleted(site: DemoStack, browser: Browser, tmp_path: Path) -> None:
    """A logged-in user saves the search shown — its view and sort too — under a name (keyboard: Enter);
    it is listed with its share link, which a colleague without a login opens on the public corpus;
    Delete removes it. Without a login, the searches run are kept in this browser and listed."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = logged_in(site, context.new_page())
    page.goto(site.url)
    search(page, "house")
    page.select_option("#sort-on", "right1")
    expect(page).to_have_url(re.compile(r"sort_on=right1"))
    page.click("#open-save")
    expect(page.locator("#save-name")).to_have_value("house")
    page.fill("#save-name", "houses, sorted")
    page.press("#save-name", "Enter")
    expect(page.locator("#save-said")).to_contain_text("Saved as “houses, sorted”. Share link: ")
    page.click("#save-close")
    item = page.locator("#saved-list li")
    expect(item).to_have_count(1)
    expect(item.locator("a.run")).to_have_text("houses, sorted")
    saved_url = item.locator("a.run").get_attribute("href") or ""
    assert "sort_on=right1" in saved_url and "q=house" in saved_url
    link = item.locator("a.share").get_attribute("href") or ""
    assert link.startswith("/s/")
    shoot(page, "saved-searches", tmp_path)
    check_accessibility(page)
    colleague = browser.new_context().new_page()  # no login: the corpus is public
    colleague.goto(f"{site.url}{link}")
    expect(colleague.locator("#kwic tbody tr")).to_have_count(3)
    expect(colleague.locator("#sort-on")).to_have_value("right1")
    colleague.locator("#local-history summary").click()  # the colleague's browser keeps the search it ran
    expect(colleague.locator("#local-history-list li").first).to_contain_text("house — sample: 3 hits")
    colleague.reload()
    colleague.locator("#local-history summary").click()
    expect(colleague.locator("#local-history-list li")).to_have_count(1)
    colleague.click("#local-history-clear")
    expect(colleague.locator("#local-history-list li")).to_have_count(0)
    colleague.context.close()
    item.locator("button.delete").click()
    expect(page.locator("#saved-list li")).to_have_count(0)
    expect(page.locator("#saved-none")).to_be_visible()
    context.close()


def test_the_lines_of_a_saved_search_are_categorised_with_the_keys(site: DemoStack, browser: Browser,
                                                                    tmp_path: Path) -> None:
    """From a saved search, *categorise its lines*: keys 1-9 on a line (0 takes it away) or its select,
    the names of the categories, the counts; they come back after a reload, and the download has them."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = logged_in(site, context.new_page())
    page.goto(site.url)
    search(page, "old")
    page.click("#open-save")
    page.fill("#save-name", "old, categorised")
    page.click("#save-go")
    expect(page.locator("#save-said")).to_contain_text("Saved as")
    page.click("#save-close")
    page.locator("#saved-list li", has_text="old, categorised").locator("a.categorise").click()
    bar = page.locator("#categories-bar")
    expect(bar).to_be_visible()
    expect(page.locator("#cat-about")).to_contain_text("Categorising the lines of “old, categorised”")
    rows = page.locator("#kwic tbody tr")
    count = rows.count()
    assert count >= 2
    rows.nth(0).locator("button.widen").focus()
    page.keyboard.press("2")  # the key on the line
    expect(rows.nth(0).locator("select.category")).to_have_value("2")
    rows.nth(1).locator("select.category").select_option("1")
    expect(page.locator("#cat-counts")).to_have_text("Lines: 1: 1 · 2: 1.")
    page.fill("#cat-labels", "literal, figurative")
    page.press("#cat-labels", "Tab")
    expect(page.locator("#cat-counts")).to_have_text("Lines: 1 literal: 1 · 2 figurative: 1.")
    expect(rows.nth(0).locator("select.category option:checked")).to_have_text("2 figurative")
    shoot(page, "categories", tmp_path)
    check_accessibility(page)
    page.reload()  # kept in the account, by the hits' positions
    expect(page.locator("#kwic tbody tr").nth(0).locator("select.category")).to_have_value("2")
    expect(page.locator("#cat-counts")).to_have_text("Lines: 1 literal: 1 · 2 figurative: 1.")
    page.locator("#kwic tbody tr").nth(1).locator("button.widen").focus()
    page.keyboard.press("0")
    expect(page.locator("#cat-counts")).to_have_text("Lines: 2 figurative: 1.")
    # the row itself takes the keys: focus a line, ↓ to the next, a digit categorises it
    page.locator("#kwic tbody tr").nth(0).focus()
    page.keyboard.press("ArrowDown")
    expect(page.locator("#kwic tbody tr").nth(1)).to_be_focused()
    page.keyboard.press("1")
    expect(page.locator("#kwic tbody tr").nth(1).locator("select.category")).to_have_value("1")
    expect(page.locator("#cat-counts")).to_have_text("Lines: 1 literal: 1 · 2 figurative: 1.")
    page.keyboard.press("0")
    expect(page.locator("#cat-counts")).to_have_text("Lines: 2 figurative: 1.")
    href = page.locator("#cat-download").get_attribute("href") or ""
    assert href.startswith("/api/v1/export?") and "categories=" in href
    exported = page.request.get(f"{site.url}{href}")
    lines = [line.split("\t") for line in exported.text().splitlines() if not line.startswith("#")]
    assert lines[0][-2:] == ["category", "category_label"] and lines[1][-2:] == ["2", "figurative"]
    only = page.request.get(f"{site.url}{page.locator('#cat-only').get_attribute('href')}")
    lines = [line.split("\t") for line in only.text().splitlines() if not line.startswith("#")]
    assert [line[-2:] for line in lines[1:]] == [["2", "figurative"]]  # the categorised lines, all of them
    page.select_option("#sort-on", "right1")  # the downloads follow the page's order
    expect(page.locator("#cat-download")).to_have_attribute("href", re.compile(r"sort=right1\.word"))
    expect(page.locator("#cat-only")).to_have_attribute("href", re.compile(r"sort=right1\.word.*only_categorised=1"))
    page.click("#cat-stop")
    expect(page.locator("#categories-bar")).to_be_hidden()
    expect(page.locator("#kwic select.category")).to_have_count(0)
    context.close()


def test_a_subcorpus_is_picked_by_its_values_saved_shared_and_used(site: DemoStack, browser: Browser,
                                                                    tmp_path: Path) -> None:
    """Choose texts by their metadata: the picker lists a genre's values with their sizes (as the API
    counts them), the ticked ones (keyboard: Space) become a filter whose size shows under the filters;
    saved as a subcorpus shared with a group, a colleague in the group sees it and searches within it
    with Use; its owner deletes it."""
    database = Database(sqlite_url(site.base / "cowbird-accounts.sqlite3"))
    accounts = Accounts(database)
    with database.session() as session:
        ada = accounts.users.get(session, USER)
        if "lab" not in ada.group_names:
            accounts.users.grant(session, ada, "group:lab", "tests")
        if accounts.users.find(session, "bob") is None:
            bob, _ = accounts.users.add(session, "bob", "bob@uni.example", "tests")
            accounts.users.set_password(session, bob, PASSWORD, "tests")
            accounts.users.grant(session, bob, "group:lab", "tests")
    database.close()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = logged_in(site, context.new_page())
    page.goto(site.url)
    page.click("#open-picker")
    expect(page.locator("#picker-dialog")).to_be_visible()
    # it opens on an attribute with few values (not text_id or text_url), the largest first
    expect(page.locator("#picker-attribute")).to_have_value("text_genre")
    by_size = api(site, "/api/v1/subcorpus", corpus="sample", values="text_genre", order="tokens")["values"]
    assert isinstance(by_size, list)
    expect(page.locator("#picker-table tbody td.value")).to_have_text([v["value"] for v in by_size])
    expect(page.locator("#picker-hint")).to_contain_text("A “text” is one of the corpus's <text> regions")
    page.select_option("#picker-order", "value")
    genres = api(site, "/api/v1/subcorpus", corpus="sample", values="text_genre")
    values = genres["values"]
    assert isinstance(values, list) and [v["value"] for v in values] == ["blog", "forum", "news"]
    expect(page.locator("#picker-table tbody td.value")).to_have_text(["blog", "forum", "news"])
    expect(page.locator("#picker-table tbody tr").nth(2).locator("td").nth(2)).to_have_text(str(values[2]["tokens"]))
    expect(page.locator("#picker-status")).to_contain_text("3 values of text_genre in the corpus: 93 tokens")
    check_accessibility(page)
    page.locator("#picker-table tbody input").nth(0).focus()
    page.keyboard.press("Space")
    page.locator("#picker-table tbody input").nth(2).focus()
    page.keyboard.press("Space")
    chosen = values[0]["tokens"] + values[2]["tokens"]
    expect(page.locator("#picker-chosen")).to_have_text(f"2 ticked: {chosen} tokens in 3 texts.")
    shoot(page, "subcorpus-picker", tmp_path)
    page.click("#picker-use")
    expect(page.locator("#picker-dialog")).to_be_hidden()
    expect(page.locator("#filter-rows .filter select.attribute")).to_have_value("text_genre")
    expect(page.locator("#filter-rows .filter input")).to_have_value("(blog|news)")
    size = api(site, "/api/v1/subcorpus", corpus="sample", filter="text_genre~(blog|news)")
    assert size["tokens"] == chosen and size["texts"] == 3
    expect(page.locator("#subcorpus-size")).to_have_text(
        f"The filters choose {chosen} tokens ({chosen * 100 / 93:.1f} % of the corpus) in 3 of 4 texts "
        "(<text> regions).")
    search(page, "the")
    total = api(site, "/api/v1/query", corpus="sample", q="the", filter="text_genre~(blog|news)", limit=0)["total"]
    expect(page.locator("#summary")).to_contain_text(f"of {total} hits")
    within, whole = round(total * 1e6 / chosen), round(total * 1e6 / 93)  # the rate within the texts searched
    expect(page.locator("#summary")).to_contain_text(
        f"{within:,} per million tokens of the {chosen} searched ({whole:,} per million of the corpus)")
    page.click("#open-save-subcorpus")
    page.fill("#subcorpus-name", "news and blogs")
    page.select_option("#subcorpus-group", "lab")
    page.press("#subcorpus-name", "Enter")
    expect(page.locator("#subcorpus-said")).to_have_text(
        f"Saved “news and blogs”: {chosen} tokens in 3 texts, shared with the group lab.")
    page.click("#subcorpus-close")
    item = page.locator("#subcorpora-list li")
    expect(item).to_have_count(1)
    expect(item).to_contain_text(f"news and blogs — sample: {chosen} tokens in 3 texts (text_genre~(blog|news)); "
                                 "shared with the group lab.")
    shoot(page, "subcorpora", tmp_path)
    check_accessibility(page)
    # the whole corpus's keywords against the subcorpus: a reference of the word list
    page.click("#filter-rows .filter button.remove")
    expect(page.locator("#subcorpus-size")).to_be_hidden()
    page.locator("#wordlist > summary").click()
    page.select_option("#wl-reference", label="subcorpus news and blogs (sample)")
    page.fill("#wl-min", "2")
    page.select_option("#kw-p", "1")
    page.click("#wl-run")
    keywords = api(site, "/api/v1/keywords", corpus="sample", min=2, reference_filter="text_genre~(blog|news)", p=1)
    rows = keywords["rows"]
    assert isinstance(rows, list) and rows
    expect(page.locator("#kw-table tbody td.value")).to_have_text([r["value"] for r in rows])
    expect(page.locator("#wl-summary")).to_contain_text(
        f"against the texts of sample where text_genre~(blog|news) ({chosen} tokens)")

    colleague = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    colleague.goto(f"{site.url}/login")
    colleague.fill('input[name="login"]', "bob")
    colleague.fill('input[name="password"]', PASSWORD)
    colleague.press('input[name="password"]', "Enter")
    expect(colleague).to_have_url(f"{site.url}/")  # logging in lands on the search
    colleague.goto(site.url)
    colleague.locator("#subcorpora summary").click()
    shared = colleague.locator("#subcorpora-list li")
    expect(shared).to_contain_text("ada's, shared with the group lab")
    expect(shared.locator("button.delete")).to_be_hidden()
    shared.locator("button.use").click()
    expect(colleague.locator("#filter-rows .filter input")).to_have_value("(blog|news)")
    expect(colleague.locator("#subcorpus-size")).to_contain_text(f"The filters choose {chosen} tokens")
    expect(colleague.locator("#q")).to_be_focused()
    colleague.fill("#q", "the")
    colleague.press("#q", "Enter")
    expect(colleague.locator("#summary")).to_contain_text(f"of {total} hits")
    colleague.context.close()
    item.locator("button.delete").click()
    expect(page.locator("#subcorpora-list li")).to_have_count(0)
    expect(page.locator("#subcorpora-none")).to_be_visible()
    context.close()


# ---------------------------------------------------------------- word sketches (issue 51)


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
        expect(table.locator("caption")).to_contain_text(f"{relation['label']}: {instances}")  # the grammar's label
        expect(table).to_have_attribute("data-relation", relation["name"])
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
