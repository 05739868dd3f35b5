"""A newcomer's first session in real Chromium, on the platform as ``make demo`` runs it (a generated
web corpus, public, in two partitions on two node processes; the sample corpus for logged-in users):
long matches read whole, a random sample downloads as drawn, pages and samples live in the URL, a
corpus that is not open is said so, analyses with many values come a page at a time, the CQP line is
the CQP that runs, the download dialog, failed and empty searches, the static link page."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect

from cowbird.calf.rows import Columns, read_table, resolve_columns, sentence_of
from cowbird.commands.demo import DemoStack
from tests.browser.pages import check_accessibility, hits_shown, search, shoot
from tests.support import JsonObject, ParamValue, running_demo

pytestmark = pytest.mark.e2e

LONG = '[pos="DT"] [pos="JJ"]+ [pos="NNS?"] [pos="VB.*"]'
VERY_LONG = LONG + " []{8}"


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    """`make demo`'s platform with a smaller generated corpus (60,000 tokens: thousands of sentences)."""
    with running_demo(tmp_path_factory.mktemp("first-session"), generated=True, web_tokens=60_000) as stack:
        yield stack


@pytest.fixture
def phone(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True,
                                  accept_downloads=True)
    yield context.new_page()
    context.close()


def api(demo: DemoStack, path: str, **params: ParamValue) -> JsonObject:
    answer = httpx.get(f"{demo.url}{path}", params=params, timeout=60)
    assert answer.status_code == 200, answer.text
    body: JsonObject = answer.json()
    return body


def open_search(page: Page, demo: DemoStack, **params: str) -> None:
    page.goto(f"{demo.url}/?{urlencode(params)}")
    expect(page.locator("#progress")).to_be_hidden()


def positions_shown(page: Page) -> list[int]:
    links = page.locator("#kwic tbody a").evaluate_all("links => links.map((a) => a.getAttribute('href'))")
    return [int(urlsplit(link).path.rsplit("/", 1)[1]) for link in links]


def clipped_matches(page: Page) -> list[str]:
    """Matches not shown whole: wider than their cell, or reaching out of it (the cell cuts them)."""
    clipped: list[str] = page.locator("#kwic tbody td.match").evaluate_all("""cells => cells.filter((td) => {
        const mark = td.querySelector("mark").getBoundingClientRect(), box = td.getBoundingClientRect();
        return td.scrollWidth > td.clientWidth + 1 || mark.left < box.left - 1 || mark.right > box.right + 1;
    }).map((td) => td.textContent)""")
    return clipped


@pytest.mark.parametrize("query", [LONG, VERY_LONG])
def test_every_match_is_readable_whole_on_a_wide_and_a_phone_screen(
    demo: DemoStack, page: Page, phone: Page, query: str, tmp_path: Path
) -> None:
    expected = [h["match"] for h in api(demo, "/api/v1/query", corpus="web", q=query, syntax="cqp")["hits"]]
    assert max(len(m.split()) for m in expected) >= (4 if query == LONG else 12)
    for screen in (page, phone):
        open_search(screen, demo, corpus="web", q=query, syntax="cqp")
        assert hits_shown(screen) == expected  # the text of each match, every token of it
        assert clipped_matches(screen) == [], screen.viewport_size
        if screen is page:  # the wide screen shows the whole KWIC without scrolling sideways
            assert screen.evaluate("document.documentElement.scrollWidth") <= 1280
            widths = screen.locator("#kwic tbody tr").first.locator("td.left, td.right").evaluate_all(
                "cells => cells.map((td) => td.getBoundingClientRect().width)")
            assert widths[0] > 150 and widths[1] > 150, widths  # the contexts keep room beside the match
        else:  # the phone scrolls the concordance sideways, never the page
            assert screen.evaluate("document.documentElement.scrollWidth") <= 390
    shoot(page, "long-matches", tmp_path)


def test_a_random_sample_downloads_as_drawn_and_lives_in_the_url(demo: DemoStack, page: Page, tmp_path: Path) -> None:
    open_search(page, demo, corpus="web", q="^house")
    page.click("#random")
    expect(page).to_have_url(re.compile(r"[?&]sample=100&seed=\d+"))
    expect(page.locator("#progress")).to_be_hidden()
    seed = parse_qs(urlsplit(page.url).query)["seed"][0]
    drawn = api(demo, "/api/v1/query", corpus="web", q="^house", sample=100, seed=seed)
    expected = [h["position"] for h in drawn["hits"]]
    expect(page.locator("#summary")).to_contain_text(f"Random sample of 100 of {drawn['total']:,} hits (seed {seed})")
    assert positions_shown(page) == expected
    page.reload()  # the sample comes back with the page, not page 1 in corpus order
    expect(page.locator("#progress")).to_be_hidden()
    expect(page.locator("#summary")).to_contain_text("Random sample of 100")
    assert positions_shown(page) == expected
    page.click("#open-download")
    expect(page.locator("#dl-what")).to_contain_text(f"random sample shown: 100 of {drawn['total']:,} hits")
    expect(page.locator("#dl-curl")).to_contain_text(f"sample=100&seed={seed}")
    with page.expect_download() as waiting:
        page.click("#dl-start")
    saved = tmp_path / waiting.value.suggested_filename
    waiting.value.save_as(saved)
    assert saved.name.endswith(f"_sample100of{drawn['total']}.tsv")
    text = saved.read_text(encoding="utf-8")
    skip = int(text.split("skiprows=")[1].split(";")[0])
    meta = {line[2:].split(": ", 1)[0]: json.loads(line[2:].split(": ", 1)[1]) for line in text.splitlines()[1:skip]}
    assert meta["sample"] == 100 and meta["seed"] == int(seed)
    drawn_as = f"a random sample of 100 of the {drawn['total']:,} hits, drawn with seed {seed}"
    assert meta["selection"].startswith(drawn_as)
    rows = list(csv.DictReader(io.StringIO("".join(text.splitlines(keepends=True)[skip:])), delimiter="\t"))
    assert [int(r["position"]) for r in rows] == expected


def test_pages_are_in_the_url_reload_stays_and_back_goes_page_by_page(demo: DemoStack, page: Page) -> None:
    total = api(demo, "/api/v1/query", corpus="web", q="the", limit=0)["total"]
    third = api(demo, "/api/v1/query", corpus="web", q="the", offset=200)["hits"]
    open_search(page, demo, corpus="web", q="the")
    for first in (101, 201):
        page.click("#next")
        expect(page.locator("#summary")).to_contain_text(f"{first:,}–{first + 99:,} of {total:,} hits")
    assert parse_qs(urlsplit(page.url).query)["offset"] == ["200"]
    page.reload()
    expect(page.locator("#summary")).to_contain_text(f"201–300 of {total:,} hits")
    assert positions_shown(page) == [h["position"] for h in third]
    page.go_back()
    expect(page.locator("#summary")).to_contain_text(f"101–200 of {total:,} hits")
    page.go_back()
    expect(page.locator("#summary")).to_contain_text(f"1–100 of {total:,} hits")


@pytest.mark.parametrize("corpus", ["sample", "no_such_corpus"])
def test_a_corpus_that_is_not_open_is_said_so_and_nothing_runs(demo: DemoStack, page: Page, corpus: str) -> None:
    """``sample`` needs a login, ``no_such_corpus`` does not exist: the same words for both, as the API's."""
    queries: list[str] = []
    page.on("request", lambda request: queries.append(request.url) if "/api/v1/query" in request.url else None)
    page.goto(f"{demo.url}/?corpus={corpus}&q=the")
    notice = page.locator("#corpus-problem")
    expect(notice).to_be_visible()
    api_words = httpx.get(f"{demo.url}/api/v1/query", params={"corpus": corpus, "q": "the"}).json()["detail"]
    said = f"There is no corpus '{corpus}' open to you: it does not exist, or it needs a login or a group's right."
    assert api_words.startswith(said[0].lower() + said[1:-1]) and notice.inner_text().startswith(said)
    expect(notice.locator("a")).to_have_attribute("href", "/login")
    page.wait_for_timeout(500)
    assert queries == [] and page.locator("#summary").inner_text() == ""
    assert page.locator("#kwic").is_hidden()


def test_a_distribution_over_a_value_per_sentence_comes_a_page_at_a_time(
    demo: DemoStack, page: Page, tmp_path: Path
) -> None:
    sentences = api(demo, "/api/v1/distribution", corpus="web", q="house", by="s_id", limit=1)["rows_total"]
    assert isinstance(sentences, int) and sentences > 5000
    with page.expect_response(lambda r: "/api/v1/distribution" in r.url) as answer:
        open_search(page, demo, corpus="web", q="house", view="distribution", dist_by="s_id")
    expect(page.locator("body")).to_have_attribute("data-analysed", "distribution")
    # one page of rows, not the whole table (the answer streams: Chromium keeps no body to measure;
    # the same request again, the node's result cached, is measured instead)
    assert len(httpx.get(answer.value.url, timeout=60).content) < 100_000
    assert page.locator("#dist-chart svg a").count() == 30  # a readable number of bars
    expect(page.locator("#dist-table tbody tr")).to_have_count(30)
    expect(page.locator("#dist-pager .range")).to_have_text(f"rows 1–30 of {sentences:,}")
    first = page.locator("#dist-table tbody tr td:first-child").all_inner_texts()
    page.click("#dist-pager .next")
    expect(page.locator("#dist-pager .range")).to_have_text(f"rows 31–60 of {sentences:,}")
    assert parse_qs(urlsplit(page.url).query)["dist_offset"] == ["30"]
    second = api(demo, "/api/v1/distribution", corpus="web", q="house", by="s_id", offset=30, limit=30)
    expect(page.locator("#dist-table tbody tr td:first-child")).to_have_text(
        [r["value"] for r in second["rows"]])
    assert not set(first) & set(page.locator("#dist-table tbody tr td:first-child").all_inner_texts())
    check_accessibility(page)
    with page.expect_download() as waiting:  # the download has every value
        page.click("#dist-download")
    saved = tmp_path / "dist.tsv"
    waiting.value.save_as(saved)
    text = saved.read_text(encoding="utf-8")
    skip = int(text.split("skiprows=")[1].split(";")[0])
    assert len(text.splitlines()) == skip + 1 + sentences


def test_the_cqp_line_shows_the_cqp_that_runs(demo: DemoStack, page: Page) -> None:
    line = page.locator("#cqp-preview")
    open_search(page, demo, corpus="web", q='[word="HOUSE" & pos="NN"]', syntax="cqp")
    page.check("#ignore_case")
    ran = api(demo, "/api/v1/query", corpus="web", q='[word="HOUSE" & pos="NN"]', syntax="cqp", ignore_case=1)["cqp"]
    assert ran == '[word="HOUSE"%c & pos="NN"%c]'
    expect(line).to_have_text(str(ran))  # before the search: the translation of the form as it is
    page.press("#q", "Enter")
    expect(page.locator("#progress")).to_be_hidden()
    expect(line).to_have_text(str(ran))  # after it: what ran
    page.fill("#q", '[lemma="make"]')
    assert line.inner_text() != str(ran)  # never the previous query's CQP, not even for a moment
    expect(line).to_have_text('[lemma="make"%c]')
    page.click("#add-filter")
    row = page.locator("#filter-rows .filter").last
    row.locator("select.attribute").select_option("text_genre")
    row.locator("input").fill("news")
    expect(line).to_have_text('[lemma="make"%c] :: match.text_genre="news"')
    page.press("#q", "Enter")
    expect(page.locator("#progress")).to_be_hidden()
    shown = api(demo, "/api/v1/query", corpus="web", q='[lemma="make"]', syntax="cqp", ignore_case=1,
                filter="text_genre~news")
    expect(line).to_have_text(str(shown["cqp"]))
    expect(page.locator("#summary")).to_contain_text(f"of {shown['total']:,} hits")


def test_the_download_dialog(demo: DemoStack, page: Page, tmp_path: Path) -> None:
    open_search(page, demo, corpus="web", q="^house")
    page.click("#open-download")
    dialog = page.locator("#download")
    # each checkbox sits with its own name, framed: nearer to it than to any other name
    nearest = page.locator("#dl-show label, #dl-meta label").evaluate_all("""labels => labels.map((label) => {
        const box = label.querySelector("input").getBoundingClientRect();
        const distance = (other) => {
            const text = other.querySelector("span").getBoundingClientRect();
            return Math.hypot(Math.max(text.left - box.right, box.left - text.right, 0),
                              Math.max(text.top - box.bottom, box.top - text.bottom, 0));
        };
        const own = distance(label);
        return labels.every((other) => other === label || distance(other) > own + 4);
    })""")
    assert nearest and all(nearest)
    for fmt in ("csv", "xlsx", "tsv"):  # the curl line follows the format chosen
        page.select_option("#dl-format", fmt)
        expect(page.locator("#dl-curl")).to_contain_text(f"format={fmt}")
    expect(page.locator("#dl-curl")).to_contain_text("curl -fsS -OJ")
    page.fill("#dl-rows", "20000")  # over the browser's limit: said, and Close still closes
    expect(page.locator("#dl-rows-error")).to_contain_text("At most 10,000 hits in the browser")
    expect(page.locator("#dl-start")).to_be_disabled()
    page.click("#dl-close")
    expect(dialog).to_be_hidden()
    page.click("#open-download")
    page.fill("#dl-rows", "20000")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    # the whole sentence as context and the page's URL: a file Calf can use
    page.click("#open-download")
    page.fill("#dl-rows", "20")
    page.select_option("#dl-context-kind", "s")
    expect(page.locator("#dl-context")).to_be_hidden()
    expect(page.locator("#dl-calf")).to_contain_text("Calf")
    expect(page.locator("#dl-curl")).to_contain_text("context=s")
    check_accessibility(page)
    with page.expect_download() as waiting:
        page.click("#dl-start")
    saved = tmp_path / waiting.value.suggested_filename
    waiting.value.save_as(saved)
    table = read_table(saved)
    columns = resolve_columns(table.header, Columns())
    assert columns.url == "text_url" and len(table.rows) == 20
    for row in table.rows:
        reference = api(demo, f"/api/v1/ref/web/{row.values['position']}")
        sentence = reference["sentence"]
        whole = " ".join(p for p in (sentence["left"], sentence["match"], sentence["right"]) if p)
        assert sentence_of(row, columns) == whole and row.values["text_url"].startswith("https://")


def test_a_failed_search_is_not_history_and_leaves_no_stale_hits(demo: DemoStack, page: Page) -> None:
    page.goto(f"{demo.url}/")
    search(page, "house")
    before = page.url
    length = page.evaluate("history.length")
    search(page, '[word="house"', syntax="cqp")
    expect(page.locator("#query-error")).to_be_visible()
    assert page.url == before and page.evaluate("history.length") == length
    assert page.locator("#kwic").is_hidden() and page.locator("#summary").inner_text() == ""
    assert page.locator("#actions").is_hidden() and page.locator("#views").is_hidden()


def test_no_hits_say_so_without_sort_tabs_or_paging(demo: DemoStack, page: Page) -> None:
    open_search(page, demo, corpus="web", q="xylophone")
    expect(page.locator("#summary")).to_have_text(re.compile(r"^No hits · \d+ ms$"))
    for hidden in ("#actions", "#views", "#sorting", "#kwic"):
        expect(page.locator(hidden)).to_be_hidden()
    open_search(page, demo, corpus="web", q="xylophone", view="frequency")
    expect(page.locator("#panel-frequency")).to_be_hidden()


def test_the_static_link_shows_the_sentence_once_and_cuts_only_where_the_text_goes_on(
    demo: DemoStack, page: Page, tmp_path: Path
) -> None:
    first = api(demo, "/api/v1/query", corpus="web", q="house", limit=1)["hits"][0]
    reference = api(demo, f"/api/v1/ref/web/{first['position']}")
    sentence = reference["sentence"]
    whole = " ".join(p for p in (sentence["left"], sentence["match"], sentence["right"]) if p)
    page.goto(f"{demo.url}{first['ref']}")
    main = page.locator("main").inner_text()
    assert main.count(whole) == 1, main
    context = page.locator(".in-context").inner_text()
    assert context.startswith("…") == reference["more_before"]
    assert context.rstrip().endswith("…") == reference["more_after"]
    texts = api(demo, "/api/v1/query", corpus="web", q="<text> []", syntax="cqp", limit=1)["hits"]
    opening = api(demo, f"/api/v1/ref/web/{texts[0]['position']}")
    assert opening["more_before"] is False  # the first token of a text: nothing before it to elide
    page.goto(f"{demo.url}/ref/web/{texts[0]['position']}")
    assert not page.locator(".in-context").inner_text().startswith("…")
    check_accessibility(page)
    shoot(page, "static-link-in-context", tmp_path)


def test_the_corpus_chooser_and_the_attributes_fit_a_phone(demo: DemoStack, phone: Page) -> None:
    phone.goto(f"{demo.url}/")
    box = phone.locator("#corpus").bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    phone.locator("#corpus-attributes summary").click()
    expect(phone.locator("#attribute-list")).to_contain_text("Penn Treebank tags")
