"""The analysis tabs stream their progress, in real Chromium against real processes: while one
partition is still counting, the tab says how many partitions have answered ("Counting… 2 of 3
partitions answered") and names those that failed; when the last has answered, the table is the
API's. A tab left while it counts says it was cancelled, and counts again when it is shown again.

The stack is test_progressive's: ``cowbird.commands.demo.DemoStack``'s two nodes and front end as processes,
serving the sample text many times over in three partitions, the last reached through a TCP proxy
that, while held, holds the node's analysis requests (``POST /v1/frequency``, ``/v1/distribution``,
``/v1/cooccurrence``) until released."""

from __future__ import annotations

import asyncio
from urllib.parse import urlencode

import pytest
from playwright.sync_api import Page, expect

from cowbird.commands.demo import DemoStack
from tests.browser.pages import api
from tests.browser.test_progressive import WAIT_S, HoldingProxy, held_stack_fixture
from tests.support import JsonObject

pytestmark = pytest.mark.e2e

ANALYSES = tuple(f"POST /v1/{path} ".encode() for path in ("frequency", "distribution", "cooccurrence"))
QUERY = "the"
FREQUENCY = {"by": "word", "on": "matchend[1]"}  # the word after each "the": a table of many rows
WAITING = "Counting… 2 of 3 partitions answered"


class AnalysisHoldingProxy(HoldingProxy):
    """test_progressive's proxy, holding the node's analysis requests rather than its counts: while
    held, a chunk that opens with an analysis request is not passed on, nor anything after it on its
    connection, until released. ``held`` is set when one is held."""

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        passed = asyncio.StreamReader()  # what the front end sends, as HoldingProxy gets to read it
        passing = asyncio.ensure_future(self._pass(reader, passed))
        try:
            await super()._connection(passed, writer)
        finally:
            passing.cancel()

    async def _pass(self, reader: asyncio.StreamReader, passed: asyncio.StreamReader) -> None:
        try:
            while data := await reader.read(65536):
                if self._holding and data.startswith(ANALYSES):
                    self.held.set()
                    await self._release.wait()
                passed.feed_data(data)
        except OSError:
            pass
        finally:
            passed.feed_eof()


held = held_stack_fixture("held", "analysis-progress", AnalysisHoldingProxy)


def open_search(page: Page, site: DemoStack) -> None:
    """The search page with the hits of QUERY (the frequency counting the word after each), all counted."""
    asked = {"corpus": "sample", "q": QUERY, "syntax": "simple", "freq_by": FREQUENCY["by"], "freq_on": FREQUENCY["on"]}
    page.goto(f"{site.url}/?{urlencode(asked)}")
    expect(page.locator("#kwic tbody tr").first).to_be_visible(timeout=WAIT_S * 1000)
    expect(page.locator("#progress")).to_be_hidden(timeout=WAIT_S * 1000)


def expect_counting(page: Page, summary: str, proxy: AnalysisHoldingProxy, progress: str = WAITING) -> None:
    """The analysis in `summary` says how far it has come while the last partition's answer is held."""
    expect(page.locator(summary)).to_have_text(progress, timeout=WAIT_S * 1000)
    assert proxy.held.wait(WAIT_S)
    expect(page.locator("#results")).to_have_attribute("aria-busy", "true")


def test_the_frequency_tab_shows_its_partitions_answering(held: tuple[DemoStack, AnalysisHoldingProxy],
                                                          page: Page) -> None:
    site, proxy = held
    expected = api(site, "/api/v1/frequency", corpus="sample", q=QUERY, **FREQUENCY)
    rows: list[JsonObject] = expected["rows"]
    assert len(rows) > 1 and expected["complete"]
    open_search(page, site)
    proxy.hold()
    try:
        page.click("#tab-frequency")
        expect_counting(page, "#freq-summary", proxy)
        expect(page.locator("#freq-table")).to_be_hidden()
        expect(page.locator("body")).not_to_have_attribute("data-analysed", "frequency")
    finally:
        proxy.release()
    expect(page.locator("body")).to_have_attribute("data-analysed", "frequency", timeout=WAIT_S * 1000)
    expect(page.locator("#freq-table tbody td.value")).to_have_text([str(r["value"]) for r in rows])
    expect(page.locator("#freq-table tbody td:nth-child(3)")).to_have_text([f"{r['frequency']:,}" for r in rows])
    summary = page.locator("#freq-summary")
    expect(summary).to_contain_text(f"over {expected['counted']:,} hits")
    expect(summary).not_to_contain_text("Counting")
    expect(summary).not_to_contain_text("Incomplete")
    expect(page.locator("#results")).to_have_attribute("aria-busy", "false")


def test_a_tab_left_while_it_counts_is_cancelled(held: tuple[DemoStack, AnalysisHoldingProxy], page: Page) -> None:
    site, proxy = held
    expected = api(site, "/api/v1/frequency", corpus="sample", q=QUERY, **FREQUENCY)
    open_search(page, site)
    proxy.hold()
    try:
        page.click("#tab-frequency")
        expect_counting(page, "#freq-summary", proxy)
        page.click("#tab-distribution")  # the frequency's request is aborted: the distribution's counts
        expect(page.locator("#freq-summary")).to_have_text("Cancelled.", timeout=WAIT_S * 1000)
        expect_counting(page, "#dist-summary", proxy)
    finally:
        proxy.release()
    expect(page.locator("body")).to_have_attribute("data-analysed", "distribution", timeout=WAIT_S * 1000)
    expect(page.locator("#dist-table tbody tr").first).to_be_visible()
    expect(page.locator("#freq-summary")).to_have_text("Cancelled.")  # not counted after all
    page.click("#tab-frequency")  # shown again, it counts again
    expect(page.locator("body")).to_have_attribute("data-analysed", "frequency", timeout=WAIT_S * 1000)
    expect(page.locator("#freq-table tbody td.value")).to_have_text([str(r["value"]) for r in expected["rows"]])


def test_a_partition_that_fails_is_named_while_the_others_count(held: tuple[DemoStack, AnalysisHoldingProxy],
                                                                 page: Page) -> None:
    """Stops a node for good: the module's last test."""
    site, proxy = held
    failing = site.partitions[1]
    index = next(i for i, served in enumerate(site.served) if failing in served)
    assert site.partitions[-1] not in site.served[index]  # the proxied partition lives on the other node
    open_search(page, site)
    site.processes[index].terminate()
    site.processes[index].wait(WAIT_S)
    proxy.hold()
    try:
        page.click("#tab-frequency")
        expect_counting(page, "#freq-summary", proxy, f"{WAITING} ({failing} failed)")
    finally:
        proxy.release()
    expect(page.locator("body")).to_have_attribute("data-analysed", "frequency", timeout=WAIT_S * 1000)
    expect(page.locator("#freq-summary")).to_contain_text(f"Incomplete: partition(s) {failing} did not answer")
    expect(page.locator("#freq-table tbody tr").first).to_be_visible()
    open_search(page, site)  # the concordance says so too, and shows the other partitions' hits
    expect(page.locator("#incomplete")).to_have_text(
        f"Incomplete: partition(s) {failing} did not answer; their hits are missing.", timeout=WAIT_S * 1000)
    expect(page.locator("#incomplete")).to_have_attribute("role", "alert")
    expect(page.locator("#kwic tbody tr").first).to_be_visible()
