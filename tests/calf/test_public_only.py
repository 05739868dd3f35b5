"""``calf --public-only``: an export whose ``text_url``s name loopback, private or translated addresses
(a researcher's own services: ``127.0.0.1``, ``10.x``, ``::ffff:0:a00:1``) is refused line by line,
before anything is sent. Inside the test's network namespace those addresses are put on ``lo`` and
one server listens on all of them, so a request that went out would arrive there: without the flag
the same export reaches it (the control), with it the server gets no request at all."""

from __future__ import annotations

import csv
import ipaddress
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from cowbird.calf.fetching import Blocked, check_public, is_public, not_public
from tests.calf.test_calf import read_output
from tests.calf.web import article
from tests.loopback import require_loopback_namespace

PRIVATE = "10.0.0.1"
TRANSLATED = "::ffff:0:a00:1"  # IPv4-translated (SIIT) 10.0.0.1, which Python takes for a global address


class _DualStack(ThreadingHTTPServer):
    address_family = socket.AF_INET6
    daemon_threads = True

    def server_bind(self) -> None:
        self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)  # IPv4 too, as ::ffff:a.b.c.d
        super().server_bind()


@pytest.fixture
def everywhere() -> Iterator[tuple[int, list[str]]]:
    """A page server listening on every address of the namespace (its port, the paths it was asked),
    with 10.0.0.1 and ::ffff:0:a00:1 added to ``lo``."""
    require_loopback_namespace()
    for address in (f"{PRIVATE}/32", f"{TRANSLATED}/128"):
        subprocess.run(["ip", "addr", "add", address, "dev", "lo"], check=True, capture_output=True)
    asked: list[str] = []
    page = article().encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            asked.append(self.path)
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)

        def log_message(self, *args: Any) -> None:
            pass

    server = _DualStack(("::", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1]), asked
    finally:
        server.shutdown()
        server.server_close()


def _export(path: Path, port: int) -> list[str]:
    urls = [f"http://127.0.0.1:{port}/loopback", f"http://localhost:{port}/by-name", f"http://{PRIVATE}:{port}/ten",
            f"http://[{TRANSLATED}]:{port}/translated", f"http://[::ffff:127.0.0.1]:{port}/mapped",
            f"http://[::1]:{port}/six"]
    with path.open("w", encoding="utf-8", newline="") as out:
        writer = csv.writer(out, delimiter="\t", lineterminator="\n")
        writer.writerow(["position", "left", "match", "right", "text_url"])
        for k, url in enumerate(urls):
            writer.writerow([k, "Nobody has lived", "there", "since 1999 .", url])
    return urls


def _calf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    calf = shutil.which("calf", path=str(Path(sys.executable).parent))
    assert calf is not None, "the calf command is installed next to this Python"
    return subprocess.run([calf, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


@pytest.mark.e2e
@pytest.mark.loopback
def test_public_only_refuses_local_and_private_addresses_before_connecting(everywhere: tuple[int, list[str]],
                                                                           tmp_path: Path) -> None:
    port, asked = everywhere
    urls = _export(tmp_path / "lines.tsv", port)
    control = _calf("lines.tsv", "-o", "open.tsv", "--delay", "0", "--timeout", "2", "--ignore-robots", cwd=tmp_path)
    assert control.returncode == 0, control.stderr
    assert {r["calf_status"] for r in read_output(tmp_path / "open.tsv")} == {"found_url"}  # every one reachable
    assert sorted(asked) == sorted(urlsplit(url).path for url in urls)
    asked.clear()

    done = _calf("lines.tsv", "-o", "public.tsv", "--delay", "0", "--timeout", "2", "--public-only", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert asked == []  # not robots.txt, not the page: nothing reached any address
    rows = read_output(tmp_path / "public.tsv")
    assert [r["calf_status"] for r in rows] == ["fetch_error"] * len(urls)
    assert [r["calf_detail"] for r in rows] == [
        "refused: 127.0.0.1 is a non-public address (loopback)",
        "refused: localhost resolves to a non-public address (127.0.0.1: loopback)",
        "refused: 10.0.0.1 is a non-public address (private)",
        "refused: ::ffff:0:a00:1 is a non-public address (IPv4-translated (SIIT) of 10.0.0.1: private)",
        "refused: ::ffff:127.0.0.1 is a non-public address (IPv4-mapped of 127.0.0.1: loopback)",
        "refused: ::1 is a non-public address (loopback)",
    ]
    block = [line for line in (tmp_path / "public.tsv").read_text(encoding="utf-8").splitlines() if line[:1] == "#"]
    assert "# public_only: true" in block


@pytest.mark.parametrize(("address", "why"), [
    ("::ffff:0:a00:1", "IPv4-translated (SIIT) of 10.0.0.1: private"),
    ("::ffff:0:7f00:1", "IPv4-translated (SIIT) of 127.0.0.1: loopback"),
    ("::ffff:10.0.0.1", "IPv4-mapped of 10.0.0.1: private"),
    ("2002:c0a8:101::1", "6to4 of 192.168.1.1: private"),
    ("64:ff9b::a9fe:a9fe", "NAT64 of 169.254.169.254: link-local"),
    ("64:ff9b:1::808:808", "local-use NAT64"),
    ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "Teredo"),
    ("::7f00:1", "IPv4-compatible of 127.0.0.1: loopback"),
    ("100.64.0.1", "shared (CGNAT)"), ("240.0.0.1", "reserved"), ("255.255.255.255", "reserved"),
    ("192.0.0.8", "reserved"), ("0.0.0.0", "unspecified"), ("::", "unspecified"), ("224.0.0.1", "multicast"),
    ("ff0e::1", "multicast"), ("fe80::1", "link-local"), ("fec0::1", "site-local"), ("fc00::1", "private"),
    ("172.16.0.1", "private"), ("192.168.0.1", "private"),
])
def test_non_public_addresses_and_why(address: str, why: str) -> None:
    assert not_public(ipaddress.ip_address(address)) == why and not is_public(ipaddress.ip_address(address))
    with pytest.raises(Blocked, match="non-public address"):
        check_public(f"http://[{address}]/x" if ":" in address else f"http://{address}/x", ())


@pytest.mark.parametrize("address", ["8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8", "::ffff:0:808:808",
                                     "64:ff9b::808:808", "2002:808:808::1"])
def test_public_addresses_in_any_form_pass(address: str) -> None:
    assert not_public(ipaddress.ip_address(address)) is None


@pytest.mark.e2e
@pytest.mark.loopback
@pytest.mark.anyio
async def test_pages_cached_by_an_unchecked_run_are_not_served_to_a_public_only_one(tmp_path: Path) -> None:
    from cowbird.calf.fetching import Fetcher
    from tests.calf.web import LocalWeb

    require_loopback_namespace()
    with LocalWeb() as local:
        url = local.page("/inside", article())
        async with Fetcher(delay=0.0, timeout=2.0, retries=0, cache_dir=tmp_path) as fetch:
            assert "Nobody has lived there" in (await fetch.get(url)).html
        async with Fetcher(delay=0.0, timeout=2.0, retries=0, cache_dir=tmp_path, public_only=True) as fetch:
            with pytest.raises(Blocked, match=r"^refused: 127\.0\.0\.1 is a non-public address \(loopback\)$"):
                await fetch.get(url)
        assert local.requests == ["/robots.txt", "/inside"]  # the unchecked run's, and nothing since
