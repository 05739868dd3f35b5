"""Fetching safely for the platform: the address checked is the address connected to (a name that
answers a public address for the check and 127.0.0.1 for the connection reaches nothing inside),
IPv6 forms that carry a private IPv4 address are refused; and every page fetch has a deadline that
a page trickling a byte at a time cannot outlast, nor make its host's other pages wait behind it.

"The internet" here is a transport that sends requests for a few public addresses to local servers;
anything else it connects to as asked, resolving names with whatever resolver the test put in place."""

from __future__ import annotations

import asyncio
import socket
import ssl
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import trustme

from cowbird.calf.fetching import DEADLINE_TIMEOUTS, Blocked, Fetcher, FetchError, check_public
from tests.calf.web import Answer, LocalWeb, article, html
from tests.clock import until

pytestmark = pytest.mark.anyio

PUBLIC = "93.184.215.14"  # a global address: routed by the test's "internet" to a local server
ROBOTS = Answer(b"User-agent: *\nDisallow: /private/\n", content_type="text/plain")


class Internet(httpx.AsyncBaseTransport):
    """Requests for the addresses in ``routes`` go to those local servers (the Host header and TLS
    name as they were); any other goes out as asked."""

    def __init__(self, routes: dict[str, LocalWeb], verify: Any = True) -> None:
        self.routes = routes
        self.inner = httpx.AsyncHTTPTransport(verify=verify)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        web = self.routes.get(request.url.host)
        if web is not None:
            request.url = request.url.copy_with(host="127.0.0.1", port=web.port)
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


Resolver = Callable[[str], list[str]]


@pytest.fixture
def resolver(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Resolver]]:
    """Names the test answers itself (name -> a function giving its addresses, asked each time);
    other names go to the system's resolver. ``socket.getaddrinfo`` is what both the address check
    and the connection (asyncio's resolver) ask."""
    real = socket.getaddrinfo
    names: dict[str, Resolver] = {}

    def getaddrinfo(host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        name = host.decode() if isinstance(host, bytes) else host
        if name not in names:
            return real(host, port, *args, **kwargs)
        number = int(port) if port not in (None, "") else 0
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "",
                 (a, number, 0, 0) if ":" in a else (a, number)) for a in names[name](name)]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    yield names


def rebinding(first: str, then: str) -> tuple[Resolver, list[str]]:
    """A resolver answering ``first`` once, then ``then``; and the list of names it was asked."""
    asked: list[str] = []

    def answer(name: str) -> list[str]:
        asked.append(name)
        return [first if len(asked) == 1 else then]

    return answer, asked


@pytest.fixture
def inside() -> Iterator[LocalWeb]:
    """A server on loopback that a public-only fetcher must never reach."""
    with LocalWeb() as local:
        local.pages["/robots.txt"] = ROBOTS
        local.page("/secret", html("<p>The internal admin secret is hunter2 and nobody outside should see it.</p>"))
        yield local


@pytest.fixture
def outside() -> Iterator[LocalWeb]:
    """The public server behind ``PUBLIC``."""
    with LocalWeb() as local:
        local.pages["/robots.txt"] = ROBOTS
        local.page("/secret", article())
        yield local


def public_fetcher(routes: dict[str, LocalWeb], **extra: Any) -> Fetcher:
    options: dict[str, Any] = {"delay": 0.0, "timeout": 2.0, "retries": 0, "public_only": True,
                               "transport": Internet(routes, extra.pop("verify", True))} | extra
    return Fetcher(**options)


async def test_dns_rebinding_reaches_nothing_inside(resolver: dict[str, Resolver], inside: LocalWeb,
                                                    outside: LocalWeb) -> None:
    """rebind.test answers a public address for the check and 127.0.0.1 afterwards: the fetcher
    connects to the address it checked (robots.txt too), under the name, and resolves once."""
    resolver["rebind.test"], asked = rebinding(PUBLIC, "127.0.0.1")
    url = f"http://rebind.test:{inside.port}/secret"
    async with public_fetcher({PUBLIC: outside}) as fetch:
        page = await fetch.get(url)
    assert inside.requests == []  # nothing reached the loopback server
    assert "hunter2" not in page.html and "Nobody has lived there" in page.html and page.url == url
    assert outside.requests == ["/robots.txt", "/secret"]
    assert outside.hosts == [f"rebind.test:{inside.port}"] * 2  # the Host header names the host, not the address
    assert asked == ["rebind.test"]  # resolved once, for the check; the connection used its answer


async def test_every_redirect_is_checked_again(resolver: dict[str, Resolver], inside: LocalWeb,
                                               outside: LocalWeb) -> None:
    resolver["public.test"] = lambda name: [PUBLIC]
    resolver["inside.test"] = lambda name: ["127.0.0.1"]
    outside.pages["/to-name"] = Answer(status=302, headers=(("Location", f"http://inside.test:{inside.port}/secret"),))
    outside.pages["/to-address"] = Answer(status=301, headers=(("Location", f"{inside.url}/secret"),))
    async with public_fetcher({PUBLIC: outside}) as fetch:
        for path in ("/to-name", "/to-address"):
            with pytest.raises(Blocked, match="non-public address"):
                await fetch.get(f"http://public.test/{path.lstrip('/')}")
    assert inside.requests == []


def trusting(ca: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    ca.configure_trust(context)
    return context


async def test_tls_goes_to_the_checked_address_under_its_name(resolver: dict[str, Resolver],
                                                              tmp_path: Path) -> None:
    """Over https the checked address is connected to, and the host's name is sent for SNI and the
    certificate is verified for it (a certificate for another name fails)."""
    ca = trustme.CA()
    ca.issue_cert("public.test").private_key_and_cert_chain_pem.write_to_path(str(tmp_path / "public.pem"))
    ca.issue_cert("other.test").private_key_and_cert_chain_pem.write_to_path(str(tmp_path / "other.pem"))
    resolver["public.test"], asked = rebinding(PUBLIC, "127.0.0.1")
    with LocalWeb(str(tmp_path / "public.pem")) as secure, LocalWeb(str(tmp_path / "other.pem")) as wrong:
        secure.pages["/robots.txt"] = ROBOTS
        secure.page("/house", article())
        async with public_fetcher({PUBLIC: secure}, verify=trusting(ca)) as fetch:
            page = await fetch.get("https://public.test/house")
        assert "Nobody has lived there" in page.html and secure.requests == ["/robots.txt", "/house"]
        assert secure.hosts == ["public.test", "public.test"] and asked == ["public.test"]
        resolver["wrong.test"] = lambda name: [PUBLIC]
        async with public_fetcher({PUBLIC: wrong}, verify=trusting(ca)) as fetch:
            with pytest.raises(FetchError):
                await fetch.get("https://wrong.test/house")
        assert wrong.requests == []


async def test_an_allowed_host_is_fetched_as_any_other(inside: LocalWeb) -> None:
    async with Fetcher(delay=0.0, timeout=2.0, retries=0, public_only=True, allowed_hosts=("127.0.0.1",)) as fetch:
        page = await fetch.get(f"{inside.url}/secret")
    assert "hunter2" in page.html and inside.hosts == [f"127.0.0.1:{inside.port}"] * 2
    async with Fetcher(delay=0.0, timeout=2.0, retries=0, public_only=True) as fetch:
        with pytest.raises(Blocked):
            await fetch.get(f"{inside.url}/secret")


@pytest.mark.parametrize("address", [
    "64:ff9b::7f00:1",  # NAT64 of 127.0.0.1
    "64:ff9b::a00:1",  # NAT64 of 10.0.0.1
    "64:ff9b::a9fe:a9fe",  # NAT64 of 169.254.169.254 (cloud metadata)
    "64:ff9b:1::808:808",  # local-use NAT64
    "2002:7f00:1::",  # 6to4 of 127.0.0.1
    "2002:c0a8:101::1",  # 6to4 of 192.168.1.1
    "::ffff:127.0.0.1",  # IPv4-mapped
    "::ffff:10.1.2.3",
    "::7f00:1",  # IPv4-compatible 127.0.0.1
    "::1", "::", "fe80::1", "fc00::1", "ff02::1",
    "127.0.0.1", "10.1.2.3", "172.16.0.1", "192.168.0.1", "169.254.169.254", "100.64.0.1", "0.0.0.0", "224.0.0.1",
])
def test_addresses_that_are_not_public_are_refused(address: str) -> None:
    host = f"[{address}]" if ":" in address else address
    with pytest.raises(Blocked):
        check_public(f"http://{host}/x", ())


def test_public_addresses_are_connected_to(resolver: dict[str, Resolver]) -> None:
    assert check_public("http://8.8.8.8/x", ()) == "8.8.8.8"
    assert check_public("http://[2606:4700:4700::1111]/x", ()) == "2606:4700:4700::1111"
    resolver["dual.test"] = lambda name: ["2606:4700:4700::1111", PUBLIC]
    assert check_public("http://dual.test/", ()) == PUBLIC  # IPv4 first
    resolver["mixed.test"] = lambda name: [PUBLIC, "10.0.0.7"]
    with pytest.raises(Blocked, match=r"10\.0\.0\.7"):  # every address the name has is checked
        check_public("http://mixed.test/", ())
    resolver["sneaky.test"] = lambda name: [PUBLIC, "64:ff9b::7f00:1"]
    with pytest.raises(Blocked):
        check_public("http://sneaky.test/", ())
    assert check_public("http://mixed.test/", ("mixed.test",)) is None  # allowed by name: not resolved here


# ------------------------------------------------------------------ the deadline


@pytest.fixture
def web() -> Iterator[LocalWeb]:
    with LocalWeb() as local:
        local.pages["/robots.txt"] = ROBOTS
        yield local


def test_the_deadline_is_a_few_timeouts_unless_given() -> None:
    assert Fetcher(timeout=10.0).time_allowed == DEADLINE_TIMEOUTS * 10.0
    assert Fetcher(timeout=10.0, deadline=12.5).time_allowed == 12.5


@pytest.mark.slow
async def test_a_trickling_page_fails_at_the_deadline(web: LocalWeb) -> None:
    """A byte every 50 ms never lets a 1-s read timeout fire; the deadline ends it."""
    web.pages["/trickle"] = Answer(article().encode(), trickle=0.05)
    started = time.monotonic()
    async with Fetcher(delay=0.0, timeout=1.0, deadline=1.5, retries=0) as fetch:
        with pytest.raises(FetchError, match=r"^the page did not arrive within 1\.5 s$"):
            await fetch.get(f"{web.url}/trickle")
    assert time.monotonic() - started < 3.0


@pytest.mark.slow
async def test_a_trickling_page_holds_up_no_other_page_of_its_host(web: LocalWeb) -> None:
    web.pages["/trickle"] = Answer(article().encode(), trickle=0.05)
    fast = web.page("/fast", article())
    async with Fetcher(delay=0.0, timeout=1.0, deadline=2.0, retries=0) as fetch:
        slow = asyncio.create_task(fetch.get(f"{web.url}/trickle"))
        await until(lambda: "/trickle" in web.requests)  # robots.txt read; the trickling page is being read
        page = await fetch.get(fast)
        assert not slow.done()  # got while the trickling page of its host was still being read
        with pytest.raises(FetchError, match="did not arrive"):
            await slow
    assert "Nobody has lived there" in page.html


async def test_a_stopped_fetch_strands_none_of_those_waiting_for_it(web: LocalWeb) -> None:
    """A fetch whose caller went away (the front end cancels it) is fetched by whoever waited for it."""
    url = web.page("/slow", article(), delay=0.5)
    async with Fetcher(delay=0.0, timeout=2.0, retries=0) as fetch:
        first = asyncio.create_task(fetch.get(url))
        await until(lambda: "/slow" in web.requests)  # the first's fetch is under way
        second = asyncio.create_task(fetch.get(url))  # waits for the first's fetch ...
        await asyncio.sleep(0)  # (a turn of the event loop: the second task runs up to that wait)
        first.cancel()
        page = await asyncio.wait_for(second, 5.0)
    assert "Nobody has lived there" in page.html
