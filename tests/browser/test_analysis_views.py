"""The views next to the concordance in real Chromium: a sorted concordance, and the Frequency,
Distribution and Collocations tabs — the numbers shown are the API's, every row opens its hits,
the tables download as files pandas reads, the state lives in the URL, and each view passes axe."""

from __future__ import annotations

import io
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.pages import api, check_accessibility, expect_url_with, hits_shown, search, shoot
from tests.support import JsonObject, ParamValue

pytestmark = pytest.mark.e2e


def open_view(page: Page, view: str) -> None:
    page.click(f"#tab-{view}")
    expect(page.locator("body")).to_have_attribute("data-analysed", view)


def cells(page: Page, table: str, column: int) -> list[str]:
    return page.locator(f"{table} tbody tr td:nth-child({column})").all_inner_texts()


def downloaded(page: Page, link: str, tmp_path: Path) -> pd.DataFrame:
    with page.expect_download() as waiting:
        page.click(link)
    download = waiting.value
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)
    text = saved.read_text(encoding="utf-8")
    skip = int(text.split("skiprows=")[1].split(";")[0])
    return pd.read_csv(io.StringIO(text), sep="\t", skiprows=skip, keep_default_na=False, dtype={"value": str})


def test_sorting_the_concordance(site: DemoStack, page: Page) -> None:
    expected = api(site, "/api/v1/query", corpus="sample", q="the", sort="right1.word")
    backwards = api(site, "/api/v1/query", corpus="sample", q="the", sort="right1.word", direction="desc")
    plain = api(site, "/api/v1/query", corpus="sample", q="the")
    page.goto(site.url)
    search(page, "the")
    page.select_option("#sort-on", "right1")
    page.select_option("#sort-attribute", "word")
    expect(page).to_have_url(f"{site.url}/?corpus=sample&q=the&syntax=simple&sort_on=right1")
    expect(page.locator("#kwic tbody td.right")).to_have_text([h["right"] for h in expected["hits"]])
    page.select_option("#sort-direction", "desc")
    expect(page.locator("#kwic tbody td.right")).to_have_text([h["right"] for h in backwards["hits"]])
    bookmark = page.url
    page.goto("about:blank")
    page.goto(bookmark)  # the sort comes back with the page
    expect(page.locator("#sort-direction")).to_have_value("desc")
    expect(page.locator("#kwic tbody td.right")).to_have_text([h["right"] for h in backwards["hits"]])
    page.select_option("#sort-on", "")
    assert page.locator("#sort-attribute").is_hidden()
    expect(page.locator("#kwic tbody td.right")).to_have_text([h["right"] for h in plain["hits"]])


def test_the_frequency_tab_opens_on_something_that_varies(site: DemoStack, page: Page) -> None:
    """Every hit of house is the word house: rather than a one-row table, the tab counts the word
    after the match, says so, and keeps it in the URL."""
    after = api(site, "/api/v1/frequency", corpus="sample", q="house", by="word", on="matchend[1]")
    page.goto(f"{site.url}/?corpus=sample&q=house&syntax=simple")
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
    open_view(page, "frequency")
    expect(page.locator("#freq-summary")).to_contain_text("Every hit is “house”: counting the word after it instead.")
    expect(page.locator("#freq-table tbody td.value")).to_have_text([str(r["value"]) for r in after["rows"]])
    expect(page.locator("#freq-on")).to_have_value("matchend[1]")
    expect_url_with(page, r"freq_on=matchend(%5B|\[)1(%5D|\])")


def test_frequency_tab_counts_links_and_downloads(site: DemoStack, page: Page, tmp_path: Path) -> None:
    expected = api(site, "/api/v1/frequency", corpus="sample", q="the 0-1 ^house", by="word")  # the default
    folded = api(site, "/api/v1/frequency", corpus="sample", q="the 0-1 ^house", by="word", on="matchend", fold="c")
    page.goto(f"{site.url}/?corpus=sample&q=the 0-1 ^house&syntax=simple")
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
    open_view(page, "frequency")
    rows: list[JsonObject] = expected["rows"]
    assert cells(page, "#freq-table", 2) == [r["value"] for r in rows]
    assert cells(page, "#freq-table", 3) == [str(r["frequency"]) for r in rows]
    expect(page.locator("#freq-summary")).to_contain_text(f"over {expected['counted']} hits")
    page.select_option("#freq-on", "matchend")  # one token: every row links to its hits
    page.select_option("#freq-by", "word")
    page.check("#freq-fold-c")
    expect(page.locator("#freq-table tbody a").first).to_be_visible()
    rows = folded["rows"]
    expect(page.locator("#freq-table tbody td.value")).to_have_text([str(r["value"]) for r in rows])
    expect_url_with(page, "view=frequency", "freq_on=matchend", "freq_fold_c=1")
    shoot(page, "frequency", tmp_path)
    check_accessibility(page)
    frame = downloaded(page, "#freq-download", tmp_path)
    assert list(frame["value"]) == [r["value"] for r in rows]
    assert list(frame["frequency"]) == [r["frequency"] for r in rows]
    page.locator("#freq-table tbody a").first.click()  # the hits behind the first row
    expect(page.locator("#kwic tbody tr")).to_have_count(int(rows[0]["frequency"]))
    assert parse_qs(urlsplit(page.url).query)["syntax"] == ["cqp"]


def test_target_and_keyword_are_offered_when_the_query_marks_them(site: DemoStack, page: Page) -> None:
    query = '@1[word="the"] @[]'
    expected = api(site, "/api/v1/frequency", corpus="sample", q=query, syntax="cqp", by="word", on="target")
    sorted_hits = api(site, "/api/v1/query", corpus="sample", q=query, syntax="cqp", sort="target.word",
                      direction="desc")
    page.goto(f"{site.url}/?corpus=sample&q=the&syntax=simple")
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
    assert page.locator('#freq-on option[value="keyword"]').get_attribute("hidden") is not None
    page.goto(f"{site.url}/?corpus=sample&q={query}&syntax=cqp&view=frequency&freq_by=word&freq_on=target")
    expect(page.locator("body")).to_have_attribute("data-analysed", "frequency")
    rows: list[JsonObject] = expected["rows"]
    expect(page.locator("#freq-table tbody td.value")).to_have_text([str(r["value"]) for r in rows])
    assert page.locator('#sort-on option[value="keyword"]').get_attribute("hidden") is None
    page.click("#tab-kwic")
    page.select_option("#sort-on", "target")
    page.select_option("#sort-attribute", "word")
    page.select_option("#sort-direction", "desc")
    expect(page.locator("#kwic tbody td.match")).to_have_text([h["match"] for h in sorted_hits["hits"]])
    page.check('input[name="syntax"][value="simple"]')  # a simple query marks no anchor
    expect(page.locator('#sort-on option[value="target"]')).to_be_hidden()
    expect(page.locator("#sort-on")).to_have_value("")


def test_distribution_tab_draws_bars_that_open_their_hits(site: DemoStack, page: Page, tmp_path: Path) -> None:
    expected = api(site, "/api/v1/distribution", corpus="sample", q="the", by="text_genre")
    by_hits = api(site, "/api/v1/distribution", corpus="sample", q="the", by="text_genre", order="hits")
    page.goto(f"{site.url}/?corpus=sample&q=the&syntax=simple&view=distribution&dist_by=text_genre")
    expect(page.locator("body")).to_have_attribute("data-analysed", "distribution")
    rows: list[JsonObject] = expected["rows"]
    assert cells(page, "#dist-table", 1) == [r["value"] for r in rows]
    assert cells(page, "#dist-table", 2) == [str(r["hits"]) for r in rows]
    bars = page.locator("#dist-chart svg a")
    expect(bars).to_have_count(len(rows))
    widths = [float(w.rstrip("%")) for w in page.locator("#dist-chart rect").evaluate_all(
        "rects => rects.map(r => r.getAttribute('width'))")]
    top = max(float(r["per_million"]) for r in rows)
    assert widths == pytest.approx([58 * float(r["per_million"]) / top for r in rows])
    shoot(page, "distribution", tmp_path)
    check_accessibility(page)
    page.select_option("#dist-order", "hits")
    expect(page.locator("#dist-table tbody td.value")).to_have_text([str(r["value"]) for r in by_hits["rows"]])
    frame = downloaded(page, "#dist-download", tmp_path)
    assert list(frame["hits"]) == [r["hits"] for r in by_hits["rows"]]
    assert list(frame["tokens"]) == [r["tokens"] for r in by_hits["rows"]]
    first = by_hits["rows"][0]
    bars.first.click()  # clicking a bar shows that subcorpus's hits
    expect(page.locator("#summary")).to_contain_text(f"of {first['hits']} hits")
    assert parse_qs(urlsplit(page.url).query)["filter"] == [f"text_genre~{first['value']}"]


def significant(n: float) -> str:
    """A score as the page shows it: three significant digits, whole numbers from 100 on."""
    if abs(n) >= 100:  # JavaScript rounds halves away from zero
        return f"{int(abs(n) + 0.5) * (1 if n > 0 else -1):,}"
    shown = f"{float(f'{n:.3g}'):,}"
    return shown.removesuffix(".0") if "e" not in shown else shown


def test_collocations_tab_sorts_by_each_measure(site: DemoStack, page: Page, tmp_path: Path) -> None:
    params: dict[str, ParamValue] = {"corpus": "sample", "q": "the", "window": 3, "min_freq": 1}
    expected = api(site, "/api/v1/collocations", **params)
    by_mi = api(site, "/api/v1/collocations", **params, order="mi")
    page.goto(f"{site.url}/?corpus=sample&q=the&syntax=simple")
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
    open_view(page, "collocations")
    page.fill("#coll-window", "3")
    page.fill("#coll-min", "1")
    page.press("#coll-min", "Enter")  # a number field commits its value on Enter or when it is left
    page.locator("#coll-window").dispatch_event("change")
    values = [r["value"] for r in expected["rows"]]
    expect(page.locator("#coll-table tbody td.value")).to_have_text(values)
    heads = page.locator("#coll-table thead th").all_inner_texts()
    assert heads[2:5] == ["In the corpus", "Expected", "In texts"], heads
    first = page.locator("#coll-table tbody tr").first.locator("td").all_inner_texts()
    top = expected["rows"][0]
    assert first[3] == significant(top["expected"]) and first[4] == f"{top['texts']:,}", (first, top)
    dice = heads.index("Dice")
    cells = page.locator("#coll-table tbody tr").evaluate_all(f"rows => rows.map(r => r.cells[{dice}].textContent)")
    assert cells == [significant(r["scores"]["dice"]) for r in expected["rows"]]
    assert all(c not in ("0.00", "0.01") for c in cells), cells  # three significant digits, not two decimals
    expect(page.locator('#coll-table th[aria-sort="descending"]')).to_have_text("Log-likelihood")
    page.click('#coll-table button[data-order="mi"]')
    expect(page.locator("#coll-table tbody td.value")).to_have_text([r["value"] for r in by_mi["rows"]])
    expect(page.locator('#coll-table th[aria-sort="descending"]')).to_have_text("MI")
    expect_url_with(page, "coll_order=mi", "coll_window=3")
    shoot(page, "collocations", tmp_path)
    check_accessibility(page)
    collocate = by_mi["rows"][0]["value"]
    page.locator("#coll-table tbody td.value a").first.click()
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
    for match in hits_shown(page):  # each hit runs from "the" to the collocate
        words = match.lower().split(" ")
        assert "the" in (words[0], words[-1]) and collocate.lower() in (words[0], words[-1])


def test_tabs_work_from_the_keyboard(site: DemoStack, page: Page) -> None:
    page.goto(f"{site.url}/?corpus=sample&q=house&syntax=simple")
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
    page.focus("#tab-kwic")
    page.keyboard.press("ArrowRight")
    expect(page.locator("#tab-frequency")).to_be_focused()
    expect(page.locator("#panel-frequency")).to_be_visible()
    expect(page.locator("#panel-kwic")).to_be_hidden()
    page.keyboard.press("End")  # the last tab
    expect(page.locator("#tab-ttr")).to_have_attribute("aria-selected", "true")  # a declared analysis's
    page.keyboard.press("Home")
    expect(page.locator("#panel-kwic")).to_be_visible()


def test_the_type_token_tab_is_the_declared_analysis(site: DemoStack, page: Page, tmp_path: Path) -> None:
    """The worked example of a declared analysis (cowbird.core.analyses.ttr): its tab and controls come
    from the declaration, its rows are the API's, a label opens that text's hits, the table downloads,
    and the tab with its settings lives in the URL."""
    expected = api(site, "/api/v1/ttr", corpus="sample", q="[]", syntax="cqp", label="text_id", order="tokens")
    rows: list[JsonObject] = expected["rows"]
    assert len(rows) > 1 and all(r["types"] <= r["tokens"] for r in rows)
    page.goto(f"{site.url}/?corpus=sample&q=%5B%5D&syntax=cqp")
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
    open_view(page, "ttr")
    expect(page.locator("#ttr-parts")).to_have_value("text")
    expect(page.locator("#ttr-attribute")).to_have_value("word")
    page.select_option("#ttr-label", "text_id")
    page.select_option("#ttr-order", "tokens")
    expect(page.locator("#ttr-table tbody td:nth-child(3)")).to_have_text([str(r["label"]) for r in rows])
    expect(page.locator("#ttr-table tbody td:nth-child(5)")).to_have_text([str(r["types"]) for r in rows])
    expect(page.locator("#ttr-table tbody td:nth-child(6)")).to_have_text([f"{r['ttr']:.3f}" for r in rows])
    expect(page.locator("#ttr-summary")).to_contain_text(f"mean type/token ratio of the word values "
                                                         f"{expected['mean_ttr']:.3f}")
    expect_url_with(page, "view=ttr", "ttr_label=text_id", "ttr_order=tokens")
    shoot(page, "type-token", tmp_path)
    check_accessibility(page)
    frame = downloaded(page, "#ttr-download", tmp_path)
    assert list(frame["label"]) == [r["label"] for r in rows] and list(frame["types"]) == [r["types"] for r in rows]
    bookmark = page.url
    page.locator("#ttr-table tbody a").first.click()  # the hits in the text with the most tokens: all of its tokens
    expect(page.locator("#kwic tbody tr")).to_have_count(min(100, int(rows[0]["tokens"])))
    page.goto(bookmark)  # the tab and its settings come back with the page
    expect(page.locator("#tab-ttr")).to_have_attribute("aria-selected", "true")
    expect(page.locator("#ttr-table tbody td:nth-child(3)")).to_have_text([str(r["label"]) for r in rows])
