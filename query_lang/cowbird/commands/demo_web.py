"""The demo's stand-in web: the generated corpus's texts as pages in a small web archive on loopback.

The demo web corpus (``cowbird.data.demo_corpus``) names made-up sites, whose pages exist nowhere.
``build`` writes each text once as the page it stands for — its sentences in order, in paragraphs,
under a title, between a menu and a footer — as a capture dated at the text's ``lastmod``: a WARC
file (warcio, a gzip member per record, as web archives store them) and a CDX index of it.
``serve`` answers as a Wayback CDX server does: ``/cdx?url=…&output=json`` is the Internet
Archive's JSON table of a URL's captures, and ``/web/<timestamp>id_/<url>`` the capture's original
bytes, read from the WARC file at the record's offset. ``cowbird demo`` runs it on 127.0.0.1
(``python -P -m cowbird.commands.demo_web``) and points ``[calf]`` at it, asking it only
(``[calf] fetch_pages = false``: the made-up addresses are never looked up), so that *Find this
sentence on the web* on a static link page finds the sentence on the demo, offline.
"""

from __future__ import annotations

import argparse
import base64
import datetime as dt
import hashlib
import html
import json
import re
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from io import BytesIO
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from cowbird.data import demo_corpus

FOLDER = "web-archive"
"""The archive's folder in the demo's directory: ``captures.warc.gz``, ``index.json`` and a stamp."""
PARAGRAPH = 6
"""Sentences per paragraph of a stand-in page."""
CDX_FIELDS = ["urlkey", "timestamp", "original", "mimetype", "statuscode", "digest", "length"]
"""The columns of the CDX answer, as the Internet Archive's JSON table names them."""


def page_of(meta: dict[str, str], sentences: list[list[demo_corpus.Token]]) -> bytes:
    """The page a text stands for: its sentences in their order, a paragraph to ``PARAGRAPH`` of them,
    with the furniture a real page has around them (Calf finds the running text between)."""
    lines = [_spaced(" ".join(t.word for t in sentence)) for sentence in sentences]
    paragraphs = "".join(f"<p>{html.escape(' '.join(lines[k:k + PARAGRAPH]))}</p>\n"
                         for k in range(0, len(lines), PARAGRAPH))
    host = html.escape(meta["host"])
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{host}: {meta['genre']} "
            f"{meta['id']}</title></head>\n<body><nav><a href=\"/\">Home</a> | <a href=\"/{meta['genre']}\">"
            f"{meta['genre'].title()}</a> | <a href=\"/contact\">Contact</a></nav>\n<main><h1>{host}</h1>\n"
            f"{paragraphs}</main>\n<footer>© {meta['year']} {host} · all rights reserved</footer></body></html>\n"
            ).encode()


def _spaced(text: str) -> str:
    """Tokens as a page writes them: no space before a full stop, comma, ! or ?."""
    return re.sub(r" ([.,!?;:])", r"\1", text)


def _stamp(meta: dict[str, str]) -> str:
    """The capture's time: the text's last modification, at 09:30 (14 digits, as Wayback writes it)."""
    return dt.datetime.strptime(meta["lastmod"], "%Y-%m-%d").strftime("%Y%m%d") + "093000"


def _digest(body: bytes) -> str:
    return base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


def build(base: Path, tokens: int, seed: int = 2024, say: Callable[[], None] = lambda: None) -> Path:
    """The archive of the demo corpus of ``tokens`` tokens (``demo_corpus.write_vrt``'s texts, the same
    seed), written once under ``base``/``FOLDER`` (``say`` is called first): a second call finds it by
    its stamp. Returns the folder."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    folder = base / FOLDER
    stamp, warc, index = folder / "stamp.json", folder / "captures.warc.gz", folder / "index.json"
    wanted = json.dumps({"version": demo_corpus.VERSION, "tokens": tokens, "seed": seed})
    if stamp.exists() and stamp.read_text() == wanted and warc.exists() and index.exists():
        return folder
    say()
    folder.mkdir(parents=True, exist_ok=True)
    rows: dict[str, list[Any]] = {}
    with warc.open("wb") as out:
        writer = WARCWriter(out, gzip=True)
        for meta, sentences in demo_corpus.texts(tokens, seed):
            body = page_of(meta, sentences)
            when = _stamp(meta)
            headers = StatusAndHeaders("200 OK", [("Content-Type", "text/html; charset=utf-8"),
                                                  ("Content-Length", str(len(body)))], protocol="HTTP/1.1")
            record = writer.create_warc_record(meta["url"], "response", payload=BytesIO(body), http_headers=headers,
                                               warc_headers_dict={"WARC-Date": _iso(when)})
            offset = out.tell()
            writer.write_record(record)
            rows[meta["url"]] = [when, "text/html", "200", _digest(body), offset, out.tell() - offset]
    index.write_text(json.dumps(rows), encoding="utf-8")
    stamp.write_text(wanted)
    return folder


def _iso(stamp: str) -> str:
    return dt.datetime.strptime(stamp, "%Y%m%d%H%M%S").strftime("%Y-%m-%dT%H:%M:%SZ")


class Archive:
    """The archive's index and the WARC file its captures are read from."""

    def __init__(self, folder: Path) -> None:
        self.warc = folder / "captures.warc.gz"
        self.index: dict[str, list[Any]] = json.loads((folder / "index.json").read_text(encoding="utf-8"))

    def cdx(self, url: str) -> list[list[str]]:
        """The URL's captures as the Internet Archive's CDX table: a header row, then a row each."""
        row = self.index.get(url)
        if row is None:
            return []
        when, mime, status, digest, _, length = row
        key = urlsplit(url)
        urlkey = ",".join(reversed((key.hostname or "").removeprefix("www.").split("."))) + ")" + key.path
        return [CDX_FIELDS, [urlkey, when, url, mime, status, digest, str(length)]]

    def capture(self, url: str) -> tuple[str, bytes] | None:
        """The capture's content type and original bytes, from its WARC record."""
        from warcio.archiveiterator import ArchiveIterator

        row = self.index.get(url)
        if row is None:
            return None
        with self.warc.open("rb") as file:
            file.seek(row[4])
            for record in ArchiveIterator(file):
                headers = record.http_headers
                kind = headers.get_header("Content-Type") if headers is not None else None
                return kind or "text/html", record.content_stream().read()
        return None


def handler(archive: Archive) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet: the demo's own logs say enough
            pass

        def _send(self, status: int, body: bytes, content_type: str = "text/plain; charset=utf-8") -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            if parts.path == "/cdx":
                url = parse_qs(parts.query).get("url", [""])[0]
                rows = archive.cdx(url)
                table = "[" + ",\n".join(json.dumps(row) for row in rows) + "]\n"  # a row to a line, as IA writes it
                self._send(200, table.encode(), "application/json")
                return
            if parts.path.startswith("/web/") and "id_/" in self.path:
                url = unquote(self.path.split("id_/", 1)[1])
                url = re.sub(r"^(https?):/(?!/)", r"\1://", url)  # a slash a client folded
                found = archive.capture(url)
                if found is None:
                    self._send(404, f"{url} is not in this archive\n".encode())
                    return
                self._send(200, found[1], found[0])
                return
            self._send(404, b"the demo's stand-in web archive answers /cdx?url=... and /web/<timestamp>id_/<url>\n")

    return Handler


def serve(folder: Path, port: int) -> None:
    """Answer on 127.0.0.1:``port`` until stopped."""
    server = ThreadingHTTPServer(("127.0.0.1", port), handler(Archive(folder)))
    try:
        server.serve_forever()
    finally:
        server.server_close()


def calf_settings(port: int) -> str:
    """The demo's ``[calf]`` table: its stand-in archive only (captures looked for around ``text_lastmod``,
    the first date the corpus has of those Calf takes)."""
    url = f"http://127.0.0.1:{port}"
    return ('[calf]\nenabled = true\nfetch_pages = false  # the demo\'s sites are made up: only its stand-in archive\n'
            'timeout = 5.0\n\n'
            f'[[calf.archives]]\nname = "demo-archive"\nkind = "cdx"\ncdx = "{url}/cdx"\nreplay = "{url}/web/"\n'
            'rate = 50\nconcurrency = 4\n\n')


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--dir", type=Path, required=True, help="The demo directory (the archive: web-archive/).")
    parser.add_argument("--port", type=int, required=True, help="Port on 127.0.0.1.")
    options = parser.parse_args()
    serve(options.dir / FOLDER, options.port)


if __name__ == "__main__":
    main()
