"""Calf's retries (``cowbird.calf.fetching``, ``cowbird.calf.archives``): how many attempts, which
failures are tried again, how long between them (0.5 s doubled each time, at most 8 s; an archive's
``Retry-After`` on 429 and 503, pushing back its every request, refused past ``max_wait``), and the
last failure's words. Pinned on a mock transport, the waits recorded instead of slept."""

from __future__ import annotations

import asyncio
import datetime as dt
import email.utils
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from cowbird.calf.archives import Archive, ArchiveError
from cowbird.calf.fetching import Fetcher, FetchError
from cowbird.core.archives import ArchiveSettings

PAGE = b"<html><body><p>A page of text, at last.</p></body></html>"


@pytest.fixture
def waits(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """The seconds every ``asyncio.sleep`` was asked for (each one a turn of the loop, not a wait)."""
    asked: list[float] = []
    real = asyncio.sleep

    async def sleep(seconds: float, result: Any = None) -> Any:
        asked.append(seconds)
        return await real(0, result)

    monkeypatch.setattr(asyncio, "sleep", sleep)
    yield asked


def answering(*answers: int | type[Exception] | httpx.Response) -> tuple[httpx.MockTransport, list[str]]:
    """A transport giving these answers in turn (the last one again after them): a status, an
    exception to raise, or a whole response; and the paths asked."""
    asked: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        asked.append(request.url.path)
        answer = answers[min(len(asked), len(answers)) - 1]
        if isinstance(answer, httpx.Response):
            return answer
        if isinstance(answer, type):
            raise answer("mock failure", request=request)  # type: ignore[call-arg]
        body = PAGE if answer == 200 else b"no"
        return httpx.Response(answer, content=body, headers={"content-type": "text/html"})

    return httpx.MockTransport(handle), asked


async def fetch(transport: httpx.MockTransport, retries: int) -> str:
    async with Fetcher(delay=0.0, timeout=2.0, retries=retries, respect_robots=False, transport=transport) as fetcher:
        page = await fetcher.get("http://example.org/page")
    return page.html


async def fetch_failing(answer: int | type[Exception], retries: int) -> tuple[str, list[str]]:
    """What fetching a page says when it fails, every answer being ``answer``; and the paths asked."""
    transport, asked = answering(answer)
    with pytest.raises(FetchError) as failed:
        await fetch(transport, retries=retries)
    return str(failed.value), asked


@pytest.mark.anyio
async def test_a_page_is_asked_again_after_a_growing_wait_until_it_comes(waits: list[float]) -> None:
    transport, asked = answering(503, 502, 200)
    assert "at last" in await fetch(transport, retries=2)
    assert len(asked) == 3 and waits == [0.5, 1.0]


@pytest.mark.anyio
@pytest.mark.parametrize(("answer", "why"), [
    (503, "HTTP 503"),
    (500, "HTTP 500"),
    (429, "HTTP 429"),
    (httpx.ConnectTimeout, "timeout (no answer within 2 s)"),
    (httpx.ReadTimeout, "timeout (no answer within 2 s)"),
    (httpx.ConnectError, "cannot connect to example.org (mock failure)"),
    (httpx.RemoteProtocolError, "connection failed (RemoteProtocolError: mock failure)"),
])
async def test_failures_worth_another_try_are_tried_retries_times_more(
    waits: list[float], answer: int | type[Exception], why: str
) -> None:
    said, asked = await fetch_failing(answer, retries=3)
    assert said == why  # the last attempt's failure
    assert len(asked) == 4 and waits == [0.5, 1.0, 2.0]


@pytest.mark.anyio
async def test_the_wait_between_attempts_stops_growing_at_8_s(waits: list[float]) -> None:
    transport, asked = answering(503)
    with pytest.raises(FetchError, match="HTTP 503"):
        await fetch(transport, retries=6)
    assert len(asked) == 7 and waits == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]


@pytest.mark.anyio
@pytest.mark.parametrize(("answer", "why"), [
    (404, "HTTP 404"),
    (403, "HTTP 403"),
    (httpx.DecodingError, "the page's compressed body is broken (mock failure)"),
])
async def test_other_failures_are_not_tried_again(waits: list[float], answer: int | type[Exception], why: str) -> None:
    said, asked = await fetch_failing(answer, retries=3)
    assert said == why and len(asked) == 1 and waits == []


@pytest.mark.anyio
async def test_no_retries_asks_once(waits: list[float]) -> None:
    transport, asked = answering(503, 200)
    with pytest.raises(FetchError, match="HTTP 503"):
        await fetch(transport, retries=0)
    assert len(asked) == 1 and waits == []


@pytest.mark.anyio
async def test_a_page_too_large_is_not_asked_again(waits: list[float]) -> None:
    big = httpx.Response(200, content=b"x" * 2_000, headers={"content-type": "text/html"})
    transport, asked = answering(big)
    async with Fetcher(delay=0.0, timeout=2.0, retries=3, respect_robots=False, transport=transport,
                       max_bytes=1_000) as fetcher:
        with pytest.raises(FetchError, match="too large"):
            await fetcher.get("http://example.org/page")
    assert len(asked) == 1 and waits == []


# -------------------------------------------------------------------------------------------- archives


def archive_of(transport: httpx.MockTransport, **extra: Any) -> tuple[Archive, httpx.AsyncClient]:
    settings = ArchiveSettings.model_validate({"name": "ia", "kind": "cdx", "cdx": "http://archive.test/cdx",
                                               "replay": "http://archive.test/web/", "rate": 100, **extra})
    client = httpx.AsyncClient(transport=transport)
    return Archive(settings, client), client


@pytest.fixture
def unpaced(monkeypatch: pytest.MonkeyPatch) -> None:
    """An archive's turns come at once (its pace is ``test_archives``'s): only the retries wait."""
    async def turn(self: Archive) -> None:
        return None

    monkeypatch.setattr(Archive, "_turn", turn)


def told(status: int, retry_after: str) -> httpx.Response:
    return httpx.Response(status, content=b"slow down", headers={"Retry-After": retry_after})


async def ask(archive: Archive, client: httpx.AsyncClient) -> tuple[int, bytes]:
    try:
        status, _, body = await archive.request("http://archive.test/cdx?url=example.org")
    finally:
        await client.aclose()
    return status, body


@pytest.mark.anyio
@pytest.mark.usefixtures("unpaced")
async def test_an_archive_is_asked_again_after_a_growing_wait(waits: list[float]) -> None:
    transport, asked = answering(503, 500, 504, 200)
    archive, client = archive_of(transport, retries=3)
    status, body = await ask(archive, client)
    assert (status, body) == (200, PAGE) and archive.asked == len(asked) == 4 and waits == [0.5, 1.0, 2.0]


@pytest.mark.anyio
@pytest.mark.usefixtures("unpaced")
@pytest.mark.parametrize(("answer", "why"), [
    (502, "ia: HTTP 502"),
    (httpx.ReadTimeout, "ia: timeout (no answer within 30 s)"),
    (httpx.ConnectError, "ia: cannot connect (ConnectError: mock failure)"),
])
async def test_an_archive_failing_every_time_says_its_last_failure(
    waits: list[float], answer: int | type[Exception], why: str
) -> None:
    transport, asked = answering(answer)
    archive, client = archive_of(transport, retries=2)
    with pytest.raises(ArchiveError) as failed:
        await ask(archive, client)
    assert str(failed.value) == why and len(asked) == 3 and waits == [0.5, 1.0]


@pytest.mark.anyio
@pytest.mark.usefixtures("unpaced")
@pytest.mark.parametrize("status", [501, 404, 410])
async def test_an_archive_s_other_answers_are_answers(waits: list[float], status: int) -> None:
    transport, asked = answering(status)
    archive, client = archive_of(transport, retries=3)
    assert (await ask(archive, client))[0] == status and len(asked) == 1 and waits == []


@pytest.mark.anyio
@pytest.mark.usefixtures("unpaced")
@pytest.mark.parametrize("status", [429, 503])
async def test_retry_after_is_waited_for_and_holds_back_every_request(waits: list[float], status: int) -> None:
    transport, asked = answering(told(status, "7"), 503, 200)
    archive, client = archive_of(transport, retries=3)
    before = time.monotonic()
    assert (await ask(archive, client))[0] == 200
    assert len(asked) == 3 and waits == [7.0, 1.0]  # as asked; then 503 without one: the growing wait
    assert archive._next >= before + 7.0  # the archive's next slot, for every request, not only this one


@pytest.mark.anyio
@pytest.mark.usefixtures("unpaced")
async def test_retry_after_as_a_date(waits: list[float]) -> None:
    when = email.utils.format_datetime(dt.datetime.now(dt.UTC) + dt.timedelta(seconds=4), usegmt=True)
    transport, asked = answering(told(429, when), 200)
    archive, client = archive_of(transport, retries=1)
    assert (await ask(archive, client))[0] == 200
    assert len(asked) == 2 and len(waits) == 1 and 2.0 <= waits[0] <= 4.0  # (the date's whole seconds)


@pytest.mark.anyio
@pytest.mark.usefixtures("unpaced")
async def test_retry_after_on_a_500_is_not_read(waits: list[float]) -> None:
    transport, asked = answering(told(500, "30"), 200)
    archive, client = archive_of(transport, retries=1)
    assert (await ask(archive, client))[0] == 200 and waits == [0.5] and archive._next == 0.0


@pytest.mark.anyio
@pytest.mark.usefixtures("unpaced")
async def test_a_retry_after_longer_than_max_wait_skips_the_archive_at_once(waits: list[float]) -> None:
    transport, asked = answering(told(429, "600"))
    archive, client = archive_of(transport, retries=3, max_wait=120)
    with pytest.raises(ArchiveError, match=r"^ia: HTTP 429, asked to wait 600 s \(more than 120\)$"):
        await ask(archive, client)
    assert len(asked) == 1 and waits == []


@pytest.mark.anyio
@pytest.mark.usefixtures("unpaced")
async def test_the_last_attempt_s_retry_after_still_holds_back_the_archive(waits: list[float]) -> None:
    transport, asked = answering(told(503, "5"))
    archive, client = archive_of(transport, retries=1)
    before = time.monotonic()
    with pytest.raises(ArchiveError, match="^ia: HTTP 503$"):
        await ask(archive, client)
    assert len(asked) == 2 and waits == [5.0] and archive._next >= before + 5.0
