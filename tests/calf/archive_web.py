"""Web archives on loopback, speaking each protocol as the real services do (one HTTP server in a
thread; each archive under its own path):

- ``/ia/cdx?url=…&output=json&from=…&to=…``: the Internet Archive's CDX server (a JSON table: a header
  row, then rows), ``/ia/web/<timestamp>id_/<url>`` the capture's original bytes with its original
  headers (a timestamp that is not a capture's redirects to the nearest one, a captured redirect to
  the capture of its target), ``/ia/web/<timestamp>/<url>`` the rewritten page framed by the
  archive's toolbar (which Calf must never ask for), ``/ia/web/timemap/link/<url>`` a Memento
  TimeMap and ``/ia/web/<url>`` with ``Accept-Datetime`` a TimeGate;
- ``/pywb/cdx``: pywb's CDX server (JSON lines, ``url``/``status``/``mime`` fields);
- ``/cc/collinfo.json``, ``/cc/<crawl>-index?url=…&output=json`` (JSON lines with each capture's WARC
  file, offset and length; 404 "No Captures found") and ``/data/<file>`` serving real WARC files
  written by warcio (a gzip member per record) to HTTP range requests.

Every request is logged with its time; answers can be made to fail (``fail``: a status and a
``Retry-After`` for the next requests under a path), and the CDX answers of both flavours broken as
a network or a server breaks them (``cut_rows``: those rows cut off in the middle, the rest sent;
``cut_end``: the answer ends there, the rest never sent). The Internet Archive's JSON table is
written one row to a line, as its CDX server writes it."""

from __future__ import annotations

import base64
import datetime as dt
import gzip
import hashlib
import io
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from email.utils import format_datetime, parsedate_to_datetime
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from tests.calf.web import LoopbackServer


@dataclass
class Stored:
    """One capture as the crawler got it: its time, status, headers and body (bytes as sent)."""

    when: dt.datetime
    body: bytes = b""
    status: int = 200
    content_type: str = "text/html; charset=utf-8"
    headers: tuple[tuple[str, str], ...] = ()  # further headers as sent (Content-Encoding: gzip ...)
    location: str = ""  # a captured redirect's target
    escape: bool = False  # the archive sends the redirect's target itself, off the archive (broken or hostile)

    @property
    def stamp(self) -> str:
        return self.when.strftime("%Y%m%d%H%M%S")

    @property
    def digest(self) -> str:
        """The CDX digest of the bytes captured: their SHA-1 in base 32, as the Wayback CDX server gives it."""
        return base64.b32encode(hashlib.sha1(self.body).digest()).decode("ascii")


@dataclass
class Crawl:
    """A Common Crawl crawl: its id, dates, and its WARC file's records (URL -> [(capture, offset, length)])."""

    id: str
    start: dt.datetime
    end: dt.datetime
    records: dict[str, list[tuple[Stored, int, int]]] = field(default_factory=dict)
    warc: io.BytesIO = field(default_factory=io.BytesIO)

    @property
    def filename(self) -> str:
        return f"crawl-data/{self.id}/segments/1368696381249.29/warc/{self.id}-00000.warc.gz"


TOOLBAR = "<div id='wm-ipp'>INTERNET ARCHIVE Wayback Machine — 52 captures, 12 May 2011 - 3 Jan 2019</div>"


def _chunked(body: bytes, size: int = 7) -> bytes:
    out = b"".join(b"%x\r\n%s\r\n" % (len(body[k:k + size]), body[k:k + size]) for k in range(0, len(body), size))
    return out + b"0\r\n\r\n"


class LocalArchives(LoopbackServer):
    def __init__(self) -> None:
        self.captures: dict[str, list[Stored]] = {}  # the Wayback-style archive's (ia, pywb, memento)
        self.crawls: list[Crawl] = []
        self.requests: list[tuple[float, str, dict[str, str]]] = []  # (monotonic time, path, headers)
        self.failures: dict[str, deque[tuple[int, str]]] = {}  # path prefix -> answers to give first
        self.timemap_page = 0  # mementos per TimeMap page (RFC 7089 4.3, ``rel="timemap"`` links); 0: one page
        self.cut_rows: set[int] = set()  # rows of a CDX answer (0: the first capture) cut off in the middle
        self.cut_end = False  # and the answer ends with the first row cut off
        self.lock = threading.Lock()
        archives = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802
                with archives.lock:
                    archives.requests.append((time.monotonic(), self.path, dict(self.headers.items())))
                    failing = next((queue for prefix, queue in archives.failures.items()
                                    if self.path.startswith(prefix) and queue), None)
                    failure = failing.popleft() if failing else None
                if failure is not None:
                    status, retry = failure
                    self._answer(status, b"slow down", "text/plain", (("Retry-After", retry),) if retry else ())
                    return
                archives.route(self)

            def _answer(self, status: int, body: bytes, content_type: str,
                        headers: tuple[tuple[str, str], ...] = ()) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                for name, value in headers:
                    self.send_header(name, value)
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: Any) -> None:
                pass

        self.handler = Handler
        super().__init__(Handler)

    # -- what the archives hold

    def capture(self, url: str, stored: Stored) -> None:
        self.captures.setdefault(url, []).append(stored)
        self.captures[url].sort(key=lambda s: s.when)

    def crawl(self, crawl_id: str, start: dt.datetime) -> Crawl:
        crawl = Crawl(crawl_id, start, start + dt.timedelta(days=12))
        self.crawls.append(crawl)
        return crawl

    def crawled(self, crawl: Crawl, url: str, stored: Stored, chunked: bool = False) -> None:
        """A WARC response record of ``stored`` in the crawl's file (a gzip member of its own)."""
        body = _chunked(stored.body) if chunked else stored.body
        headers = [("Content-Type", stored.content_type), *stored.headers]
        if chunked:
            headers.append(("Transfer-Encoding", "chunked"))
        if stored.location:
            headers.append(("Location", stored.location))
        else:
            headers.append(("Content-Length", str(len(body))))
        reason = {200: "OK", 301: "Moved Permanently", 302: "Found", 404: "Not Found"}.get(stored.status, "Other")
        http_headers = StatusAndHeaders(f"{stored.status} {reason}", headers, protocol="HTTP/1.1")
        writer = WARCWriter(crawl.warc, gzip=True)
        record = writer.create_warc_record(url, "response", payload=io.BytesIO(body), http_headers=http_headers,
                                           warc_headers_dict={"WARC-Date": stored.when.strftime("%Y-%m-%dT%H:%M:%SZ")})
        start = crawl.warc.tell()
        writer.write_record(record)
        crawl.records.setdefault(url, []).append((stored, start, crawl.warc.tell() - start))

    def asked(self, prefix: str) -> list[str]:
        return [path for _, path, _ in self.requests if path.startswith(prefix)]

    def fail(self, prefix: str, status: int, times: int, retry_after: str = "") -> None:
        self.failures[prefix] = deque([(status, retry_after)] * times)

    # -- answering

    def route(self, handler: Any) -> None:
        parts = urlsplit(handler.path)
        query = {k: v[0] for k, v in parse_qs(parts.query).items()}
        path = parts.path
        if path == "/ia/cdx":
            self._cdx_table(handler, query)
        elif path == "/pywb/cdx":
            self._cdx_lines(handler, query)
        elif path.startswith("/ia/web/timemap/link/"):
            self._timemap(handler, handler.path.removeprefix("/ia/web/timemap/link/"))
        elif path.startswith("/ia/web/timemap/page/"):
            page, _, url = handler.path.removeprefix("/ia/web/timemap/page/").partition("/")
            self._timemap(handler, url, int(page))
        elif path.startswith("/ia/web/"):
            self._wayback(handler, handler.path.removeprefix("/ia/web/"))
        elif path == "/cc/collinfo.json":
            body = json.dumps([{"id": c.id, "name": f"{c.id} Index", "timegate": f"{self.url}/cc/{c.id}/",
                                "cdx-api": f"{self.url}/cc/{c.id}-index",
                                "from": c.start.strftime("%Y-%m-%dT%H:%M:%S"),
                                "to": c.end.strftime("%Y-%m-%dT%H:%M:%S")} for c in self.crawls])
            handler._answer(200, body.encode(), "application/json")
        elif path.startswith("/cc/") and path.endswith("-index"):
            self._crawl_index(handler, path.removeprefix("/cc/").removesuffix("-index"), query)
        elif path.startswith("/data/"):
            self._data(handler, path.removeprefix("/data/"))
        else:
            handler._answer(404, b"not here", "text/plain")

    def _within(self, url: str, query: dict[str, str]) -> list[Stored]:
        low, high = query.get("from", "0").ljust(14, "0"), query.get("to", "9").ljust(14, "9")
        return [s for s in self.captures.get(url, []) if low <= s.stamp <= high]

    def _cut(self, rows: list[str]) -> list[str]:
        """The rows of an answer as sent: ``cut_rows`` cut off in the middle, and with ``cut_end`` none
        after the first of them."""
        sent = []
        for k, row in enumerate(rows):
            if k in self.cut_rows:
                sent.append(row[:len(row) // 2])
                if self.cut_end:
                    break
            else:
                sent.append(row)
        return sent

    def _cdx_table(self, handler: Any, query: dict[str, str]) -> None:
        header = ["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"]
        rows = [json.dumps(["key", s.stamp, query["url"], s.content_type.split(";")[0], str(s.status), s.digest,
                            str(len(s.body))]) for s in self._within(query["url"], query)]
        if not rows:
            handler._answer(200, b"[]", "application/json")
            return
        sent = self._cut(rows)
        body = "[" + ",\n".join([json.dumps(header), *sent]) + ("]" if len(sent) == len(rows) else "")
        handler._answer(200, body.encode(), "application/json")

    def _cdx_lines(self, handler: Any, query: dict[str, str]) -> None:
        found = self._within(query["url"], query)
        if not found:
            handler._answer(404, b"No Captures found for: " + query["url"].encode(), "text/plain")
            return
        lines = [json.dumps({"urlkey": "key", "timestamp": s.stamp, "url": query["url"], "mime": "text/html",
                             "status": str(s.status), "digest": s.digest, "length": str(len(s.body))}) for s in found]
        handler._answer(200, "\n".join(self._cut(lines)).encode(), "text/x-ndjson")

    def _nearest(self, url: str, stamp: str) -> Stored | None:
        stored = self.captures.get(url, [])
        if not stored:
            return None
        wanted = dt.datetime.strptime(stamp.ljust(14, "0"), "%Y%m%d%H%M%S").replace(tzinfo=dt.UTC)
        return min(stored, key=lambda s: abs(s.when - wanted))

    def _wayback(self, handler: Any, rest: str) -> None:
        stamp, _, url = rest.partition("/")
        url = unquote(url)
        if not stamp[:14].isdigit():  # /ia/web/<url>: the TimeGate
            self._timegate(handler, unquote(rest))
            return
        raw = stamp.endswith("id_")
        stamp = stamp[:14]
        capture = self._nearest(url, stamp)
        if capture is None:
            handler._answer(404, b"<html><body>Wayback Machine has not archived that URL.</body></html>",
                            "text/html")
            return
        flag = "id_" if raw else ""
        moment = (("Memento-Datetime", format_datetime(capture.when, usegmt=True)),)
        if capture.stamp != stamp:  # the nearest capture, under its own timestamp
            handler._answer(302, b"", "text/html", (("Location", f"/ia/web/{capture.stamp}{flag}/{url}"),))
            return
        if capture.location and capture.escape:
            handler._answer(302, b"", "text/html", (("Location", capture.location),))
            return
        if capture.location:  # a captured redirect: to the capture of its target
            handler._answer(302, b"", "text/html",
                            (("Location", f"/ia/web/{capture.stamp}{flag}/{capture.location}"), *moment))
            return
        if raw:
            handler._answer(capture.status, capture.body, capture.content_type, capture.headers + moment)
            return
        text = (gzip.decompress(capture.body) if ("Content-Encoding", "gzip") in capture.headers else capture.body)
        charset = capture.content_type.partition("charset=")[2] or "utf-8"
        page = text.decode(charset, "replace").replace("<body>", f"<body>{TOOLBAR}", 1)
        page = page.replace("http://", "/ia/web/" + capture.stamp + "/http://")
        handler._answer(capture.status, page.encode("utf-8"), "text/html; charset=utf-8", moment)

    def _timemap(self, handler: Any, url: str, page: int = 0) -> None:
        """The TimeMap of ``url``; paged (``timemap_page`` mementos a page, oldest first) each page links
        to every other with its ``from`` and ``until``, as RFC 7089 4.3 shows."""
        every = sorted(self.captures.get(unquote(url), []), key=lambda s: s.when)
        size = self.timemap_page or max(1, len(every))
        pages = [every[k:k + size] for k in range(0, len(every), size)]
        if not every or page >= len(pages):
            handler._answer(404, b"", "application/link-format")
            return
        stored = pages[page]
        links = [f'<{url}>; rel="original"', f'<{self.url}/ia/web/timemap/link/{url}>; rel="self"; '
                 'type="application/link-format"']
        for k, other in enumerate(pages):
            if k != page:
                where = f"{self.url}/ia/web/timemap/" + (f"page/{k}/{url}" if k else f"link/{url}")
                links.append(f'<{where}>; rel="timemap"; '
                             f'type="application/link-format"; from="{format_datetime(other[0].when, usegmt=True)}"; '
                             f'until="{format_datetime(other[-1].when, usegmt=True)}"')
        for k, s in enumerate(stored):
            rel = "first memento" if k == 0 else "last memento" if k == len(stored) - 1 else "memento"
            links.append(f'<{self.url}/ia/web/{s.stamp}/{url}>; rel="{rel}"; '
                         f'datetime="{format_datetime(s.when, usegmt=True)}"')
        handler._answer(200, ",\n".join(links).encode(), "application/link-format")

    def _timegate(self, handler: Any, url: str) -> None:
        asked = handler.headers.get("Accept-Datetime")
        stored = self.captures.get(url, [])
        if not stored:
            handler._answer(404, b"", "text/html")
            return
        wanted = parsedate_to_datetime(asked) if asked else stored[-1].when
        capture = min(stored, key=lambda s: abs(s.when - wanted))
        handler._answer(302, b"", "text/html", (("Location", f"{self.url}/ia/web/{capture.stamp}/{url}"),
                                                 ("Vary", "accept-datetime")))

    def _crawl_index(self, handler: Any, crawl_id: str, query: dict[str, str]) -> None:
        crawl = next((c for c in self.crawls if c.id == crawl_id), None)
        records = crawl.records.get(query.get("url", ""), []) if crawl else []
        if not records or crawl is None:
            handler._answer(404, json.dumps({"message": f"No Captures found for: {query.get('url')}"}).encode(),
                            "application/json")
            return
        lines = [json.dumps({"urlkey": "key", "timestamp": s.stamp, "url": query["url"], "mime": "text/html",
                             "status": str(s.status), "digest": s.digest, "length": str(length),
                             "offset": str(offset), "filename": crawl.filename}) for s, offset, length in records]
        handler._answer(200, "\n".join(lines).encode(), "text/x-ndjson")

    def _data(self, handler: Any, filename: str) -> None:
        crawl = next((c for c in self.crawls if c.filename == filename), None)
        if crawl is None:
            handler._answer(404, b"NoSuchKey", "application/xml")
            return
        data = crawl.warc.getvalue()
        asked = handler.headers.get("Range", "")
        if not asked.startswith("bytes="):
            handler._answer(200, data, "application/octet-stream")
            return
        first, _, last = asked.removeprefix("bytes=").partition("-")
        start, end = int(first), min(int(last), len(data) - 1)
        handler._answer(206, data[start:end + 1], "application/octet-stream",
                        (("Content-Range", f"bytes {start}-{end}/{len(data)}"),))
