"""The Trend chart and good examples first (issue 65, items 4 and 7), in real Chromium against real
nodes and a real front end on loopback, at a desktop's and a 390-px phone's width.

The trend is drawn at its container's width (never scaled): every label is inside the chart and at
least 11 px high on a phone, the y ticks are round (1-2-5 steps, 4 to 6 of them, one format) under
the title "per million tokens", the x axis has a title, and a point opens its hits with the filter
row reading "text_year = 2005" while what is sent is the exact expression of the year. Sorted by
GDEX, each line is its sentence, its score is a column of its own (and of the download), the first
page's scores never rise and equal the rules worked out here by hand."""

from __future__ import annotations

import io
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pandas as pd
import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import WEB_COMMON_WORDS, DemoStack
from tests.browser.pages import api, check_accessibility, search, shoot
from tests.support import JsonObject, running_demo

pytestmark = [pytest.mark.e2e, pytest.mark.loopback]

SMALLEST_LABEL = 11
"""The height in CSS pixels every label of the chart has at least (its 12-px text's box is about 14)."""


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DemoStack]:
    """The demo's generated web corpus (300,000 tokens: texts of 2005-2024) behind two nodes."""
    with running_demo(tmp_path_factory.mktemp("trend-gdex-site"), generated=True, web_tokens=300_000) as stack:
        yield stack


CHART = """() => {
  const svg = document.querySelector("#trend-chart svg");
  const box = svg.getBoundingClientRect();
  return { width: box.width, height: box.height, drawn: svg.viewBox.baseVal.width,
    container: document.querySelector("#trend-chart").clientWidth,
    texts: [...svg.querySelectorAll("text")].map((t) => { const r = t.getBoundingClientRect();
      return { text: t.textContent, left: r.left - box.left, right: r.right - box.left, top: r.top - box.top,
               bottom: r.bottom - box.top, height: r.height, anchor: t.getAttribute("text-anchor"),
               kind: t.getAttribute("class") }; }) };
}"""


def check_chart(page: Page, expected: JsonObject) -> None:
    """The chart's labels all inside it and readable, round y ticks in one format, both axes titled."""
    chart: dict[str, Any] = page.evaluate(CHART)
    for text in chart["texts"]:
        assert -0.5 <= text["left"] and text["right"] <= chart["width"] + 0.5, text
        assert -0.5 <= text["top"] and text["bottom"] <= chart["height"] + 0.5, text
        assert text["height"] >= SMALLEST_LABEL, text
    titles = [t["text"] for t in chart["texts"] if t["kind"] == "title"]
    assert titles == ["per million tokens", "year (text_year)"]
    labels = [t["text"] for t in chart["texts"] if t["anchor"] == "end"]
    ticks = [float(label.replace(",", "")) for label in labels]
    assert 4 <= len(ticks) <= 6 and ticks[0] == 0, labels
    steps = {round(b - a, 9) for a, b in zip(ticks, ticks[1:], strict=False)}
    assert len(steps) == 1, labels
    [step] = steps
    mantissa = step / 10 ** int(f"{step:e}".split("e")[1])
    assert round(mantissa, 9) in (1, 2, 5), labels
    assert len({len(label.partition(".")[2]) for label in labels}) == 1, labels  # one format
    highest = max(max(p["high"] or 0, p["per_million"] or 0) for s in expected["series"] for p in s["points"])
    assert ticks[-1] >= highest > ticks[-2], (labels, highest)
    periods = [p["period"] for p in expected["series"][0]["points"]]
    shown = [t["text"] for t in chart["texts"] if t["anchor"] == "middle" and t["kind"] != "title"]
    assert shown[0] == periods[0] and shown[-1] == periods[-1] and set(shown) <= set(periods)
    assert abs(chart["width"] - chart["drawn"]) < 1 and abs(chart["drawn"] - chart["container"]) < 1  # not scaled


def trend(web: DemoStack) -> JsonObject:
    answer = httpx.get(
        f"{web.url}/api/v1/trend", params={"corpus": "web", "q": ["^house", "^car"], "by": "text_year"}, timeout=30
    )
    assert answer.status_code == 200, answer.text
    body: JsonObject = answer.json()
    return body


def test_the_trend_is_readable_at_a_desktop_width_and_its_point_filters_by_the_year(
    web: DemoStack, page: Page, tmp_path: Path
) -> None:
    expected = trend(web)
    page.goto(f"{web.url}/?corpus=web&q=%5Ehouse&syntax=simple&view=trend&trend_q_2=%5Ecar")
    expect(page.locator("body")).to_have_attribute("data-analysed", "trend")
    check_chart(page, expected)
    page.set_viewport_size({"width": 900, "height": 800})  # drawn again at the new width
    expect(page.locator("#trend-chart svg")).to_have_attribute("width", re.compile(r"^(8[0-9]{2})$"))
    check_chart(page, expected)
    # a point opens its year's hits, the filter row reading "text_year equals 2005"
    first = expected["series"][0]["points"][0]
    assert first["period"] == "2005" and parse_qs(urlsplit(first["concordance"]).query)["filter"] == ["text_year=2005"]
    page.locator("#trend-chart svg a").first.click()
    expect(page.locator("#summary")).to_contain_text(f"of {first['hits']:,} hits")
    row = page.locator("#filter-rows .filter")
    expect(row).to_have_count(1)
    expect(row.locator("select.attribute")).to_have_value("text_year")
    assert row.locator("select.operator option:checked").inner_text() == "equals"
    expect(row.locator("input").first).to_have_value("2005")
    page.screenshot(path=str(tmp_path / "trend-filter.png"))
    # over dates: "text_lastmod in the year 2008", sent as the exact expression of every date of 2008
    dated = api(web, "/api/v1/trend", corpus="web", q="^house", by="text_lastmod")
    point = next(p for p in dated["series"][0]["points"] if p["hits"])
    sent = parse_qs(urlsplit(point["concordance"]).query)["filter"]
    assert sent[0].startswith("text_lastmod~") and len(sent[0]) > 60
    page.goto(f"{web.url}{point['concordance']}")
    expect(page.locator("#summary")).to_contain_text(f"of {point['hits']:,} hits")
    assert row.locator("select.operator option:checked").inner_text() == "in the year"
    expect(row.locator("input").first).to_have_value(point["period"])
    assert parse_qs(urlsplit(page.url).query)["filter"] == sent  # what is sent: the exact expression
    # the year changed in the row: that year's hits, exactly
    following = next(p for p in dated["series"][0]["points"] if p["hits"] and p["period"] > point["period"])
    row.locator("input").first.fill(following["period"])
    search(page, "^house")
    expect(page.locator("#summary")).to_contain_text(f"of {following['hits']:,} hits")
    assert parse_qs(urlsplit(page.url).query)["filter"] == parse_qs(urlsplit(following["concordance"]).query)["filter"]
    assert row.locator("select.operator option:checked").inner_text() == "in the year"


def test_the_trend_is_readable_on_a_phone(web: DemoStack, browser_page_phone: Page, tmp_path: Path) -> None:
    page = browser_page_phone
    expected = trend(web)
    page.goto(f"{web.url}/?corpus=web&q=%5Ehouse&syntax=simple&view=trend&trend_q_2=%5Ecar")
    expect(page.locator("body")).to_have_attribute("data-analysed", "trend")
    check_chart(page, expected)
    shoot(page, "trend-phone", tmp_path)
    check_accessibility(page)


def by_hand(words: list[str], start: int, end: int, common: set[str]) -> float:
    """The GDEX score of the default rules (docs/http-api.md, "sort=gdex") worked out for a line of the
    generated corpus, which has no numbers, symbols, URLs or brackets (checked)."""
    assert all(re.fullmatch(r"[A-Za-z]+|[.,!?]", w) for w in words), words
    n = len(words)
    length = 1.0 if 10 <= n <= 25 else n / 10 if n < 10 else 25 / n
    whole = 1.0 if words[0][0].isupper() and words[-1][-1] in ".!?" else 0.0
    rare = max(0.0, 1 - sum(w.isalpha() and w.lower() not in common for w in words) / 3)
    last_word = max((k for k in range(1, n) if words[k].isalpha()), default=0)
    edge = 1.0 if start > 0 and end < last_word else 0.0
    return (2 * length + whole + 2 * rare + 1 + 1 + 1 + edge) / 9


def common_words(web: DemoStack) -> set[str]:
    """The corpus's WEB_COMMON_WORDS most frequent word forms (as written, ties in code-point order), lowercased."""
    listed = api(web, "/api/v1/wordlist", corpus="web", limit=1000)
    counts = Counter({row["value"]: row["frequency"] for row in listed["rows"]})
    top = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:WEB_COMMON_WORDS]
    return {word.lower() for word, _ in top}


def test_good_examples_first_shows_each_score_and_sentence(web: DemoStack, page: Page, tmp_path: Path) -> None:
    expected = api(web, "/api/v1/query", corpus="web", q="^house", sort="gdex", context="s", limit=100)
    page.goto(f"{web.url}/?corpus=web&q=%5Ehouse&syntax=simple")
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
    page.select_option("#sort-on", "gdex")
    expect(page).to_have_url(re.compile("sort_on=gdex"))
    hits: list[JsonObject] = expected["hits"]
    expect(page.locator("#kwic tbody a.ref").nth(99)).to_have_attribute("href", hits[99]["ref"])
    expect(page.locator("#kwic thead th.gdex")).to_have_text("GDEX")
    scores = [float(s) for s in page.locator("#kwic tbody td.gdex").all_inner_texts()]
    assert len(scores) == 100 and all(a >= b for a, b in zip(scores, scores[1:], strict=False))
    assert scores == [round(hit["gdex"]["score"], 3) for hit in hits]
    # each line is its sentence: the left context from its first token, the right to its last
    lefts = page.locator("#kwic tbody td.left").all_inner_texts()
    rights = page.locator("#kwic tbody td.right").all_inner_texts()
    assert [t.strip() for t in lefts] == [hit["left"] for hit in hits]
    assert [t.strip() for t in rights] == [hit["right"] for hit in hits]
    expect(page.locator("#gdex-note")).to_contain_text("Every line here scores 1.000")
    common = common_words(web)
    later = [
        api(web, "/api/v1/query", corpus="web", q="^house", sort="gdex", context="s", offset=offset, limit=1)["hits"][0]
        for offset in (1_000, 2_000, 4_000, 8_000, 12_000, 16_000, 18_000)
    ]
    for hit, shown in [*zip(hits[:5], scores, strict=False), *((h, None) for h in later)]:
        words = [*hit["left"].split(), *hit["match"].split(), *hit["right"].split()]
        start = len(hit["left"].split())
        score = by_hand(words, start, start + len(hit["match"].split()) - 1, common)
        assert abs(score - hit["gdex"]["score"]) < 1e-9, (hit, score)
        assert shown is None or abs(shown - score) <= 0.0005
    later_scores = [h["gdex"]["score"] for h in later]
    assert later_scores == sorted(later_scores, reverse=True) and len(set(later_scores)) >= 5  # told apart
    shoot(page, "good-examples", tmp_path)
    check_accessibility(page)
    # the download of the GDEX-sorted lines: sentences, with the score in columns of unique names
    page.click("#open-download")
    expect(page.locator("#dl-context-kind")).to_have_value("s")
    page.fill("#dl-rows", "100")
    with page.expect_download() as waiting:
        page.click("#dl-start")
    saved = tmp_path / waiting.value.suggested_filename
    waiting.value.save_as(saved)
    text = saved.read_text(encoding="utf-8")
    skip = int(text.split("skiprows=")[1].split(";")[0]) if "skiprows=" in text else 0
    header = text.splitlines()[skip].split("\t")
    assert len(header) == len(set(header)), header
    frame = pd.read_csv(io.StringIO(text), sep="\t", skiprows=skip, keep_default_na=False)
    assert list(frame["left"]) == [hit["left"] for hit in hits]
    assert list(frame["right"]) == [hit["right"] for hit in hits]
    assert [round(s, 3) for s in frame["gdex_score"]] == scores
    assert {"gdex_rare_words", "gdex_number_tokens", "gdex_url_tokens", "gdex_numbers", "gdex_urls"} <= set(header)
