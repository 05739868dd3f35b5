"""Reading a build's inputs: WARC and ARC files (warcio) and folders of HTML files, one page at a time.

``read_input(path, root)`` yields, for one input file, a ``Page`` for every successful HTML response
and a ``Skip`` (stage ``"read"``) for every response left out, with its reason:

- WARC/1.0 and 1.1 and ARC v1 (warcio's ``ArchiveIterator``, ARC records read as WARC ``response``
  records with ``arc2warc=True``), gzip per record (``.warc.gz`` as Common Crawl ships it), the whole
  file gzipped as one stream (warcio refuses that; it is read again through ``gzip`` and the records
  already yielded are not yielded twice), or plain;
- only ``response`` records (and ``resource`` records, which carry a payload without HTTP headers)
  count as pages; ``request``, ``metadata``, ``warcinfo`` and ``conversion`` records are not pages and
  are passed over silently; a ``revisit`` record has no payload: ``Skip("read", "revisit record")``;
- HTTP status other than 200: ``Skip("read", "HTTP 404")``;
- the Content-Type must be HTML (``text/html``, ``application/xhtml+xml``); a response without one
  counts when its first bytes sniff as HTML; otherwise ``Skip("read", "not HTML", content type)``;
- warcio's ``content_stream()`` undoes the transfer encoding (chunked) and the content encoding (gzip,
  deflate, and br when the ``brotli`` module is installed: without it ``Skip("read", "brotli content
  encoding", ...)`` says to install it);
- a payload over ``max_page_size`` bytes: ``Skip("read", "page over 8 MB")`` -- at most that many
  bytes (plus one chunk) of a page are ever held, so one huge page cannot exhaust a worker's memory;
- a truncated or corrupt record ends the file: ``Skip("read", "truncated record")``, everything read
  before it kept (gzip members after a broken one cannot be found reliably, as with texrex).

HTML files: ``.html``, ``.htm``, ``.xhtml`` and ``.gz`` of them, found recursively in a folder (sorted
by path); the url is ``file:`` plus the path relative to the folder given, the crawl date the file's
modification time.
"""

from __future__ import annotations

import gzip
import importlib.util
import io
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from warcio.archiveiterator import ArchiveIterator
from warcio.bufferedreaders import BufferedReader
from warcio.exceptions import ArchiveLoadFailed

from cowbird.build.records import Page, Skip

MAX_PAGE_SIZE = 8 * 1024 * 1024
"""The default ``--max-page-size``: texrex's default too; a longer page is almost never running text."""

HTML_SUFFIXES = (".html", ".htm", ".xhtml")
ARCHIVE_SUFFIXES = (".warc", ".arc", ".warc.gz", ".arc.gz", ".warc.gzip")
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml", "application/xhtml", "text/xhtml"})
UNTYPED = frozenset({"", "unknown", "application/octet-stream", "application/unknown", "text/plain",
                     "binary/octet-stream", "no-type"})
"""Content types that say nothing: such a payload is a page when its first bytes sniff as HTML."""
_CHUNK = 1 << 16
_SNIFF = (b"<!doctype html", b"<html", b"<head", b"<body", b"<title", b"<meta", b"<p>", b"<div", b"<!--",
          b"<script", b"<?xml")


class _Brotli:
    """brotli's decompressor as warcio's readers use a decompressor (``decompress``, ``unused_data``,
    ``flush``): warcio 1.8 sets ``unused_data`` on brotli's own object, which brotli 1.2 no longer allows,
    so every br-encoded page failed."""

    unused_data: bytes | None = None

    def __init__(self) -> None:
        import brotli

        self._decompressor = brotli.Decompressor()

    def decompress(self, data: bytes) -> bytes:
        return bytes(self._decompressor.process(data))

    def flush(self) -> bytes:
        return b""


if importlib.util.find_spec("brotli") is not None:
    BufferedReader.DECOMPRESSORS["br"] = _Brotli


def size_text(size: int) -> str:
    """A byte count as the report names it: ``8 MB`` (MiB, as ``--max-page-size 8MB`` means)."""
    for unit, factor in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    if size >= 1 << 20:
        return f"{size / (1 << 20):.1f} MB"
    return f"{size} bytes"


def parse_size(text: str) -> int:
    """``8MB``, ``512KB``, ``1GB``, ``1000000`` (bytes) as bytes; ValueError saying what was wrong."""
    value = text.strip().upper().replace(" ", "")
    number, factor = value, 1
    for unit, multiple in (("GIB", 1 << 30), ("MIB", 1 << 20), ("KIB", 1 << 10), ("GB", 1 << 30), ("MB", 1 << 20),
                           ("KB", 1 << 10), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10), ("B", 1)):
        if value.endswith(unit):
            number, factor = value[: -len(unit)], multiple
            break
    try:
        size = int(float(number) * factor)
    except ValueError:
        raise ValueError(f"{text!r} is not a size (expected e.g. 8MB, 512KB or a number of bytes)") from None
    if size < 1:
        raise ValueError(f"{text!r}: a size must be positive")
    return size


def is_archive(path: Path) -> bool:
    """A WARC or ARC file, by its name or, for another name, by its first bytes."""
    name = path.name.lower()
    if name.endswith(ARCHIVE_SUFFIXES):
        return True
    if is_html_file(path):
        return False
    try:
        with path.open("rb") as stream:
            head = stream.read(512)
        if head[:2] == b"\x1f\x8b":
            head = _gunzip_head(path)
    except OSError:
        return False
    return head.startswith((b"WARC/", b"filedesc://"))


def _gunzip_head(path: Path) -> bytes:
    try:
        with gzip.open(path, "rb") as stream:
            return stream.read(64)
    except (OSError, EOFError, zlib.error):
        return b""


def is_html_file(path: Path) -> bool:
    """An HTML file by its name: ``.html``, ``.htm``, ``.xhtml``, or one of those with ``.gz``."""
    name = path.name.lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return name.endswith(HTML_SUFFIXES)


def html_files(folder: Path) -> list[Path]:
    """The HTML files under ``folder`` (recursively), sorted by their relative path."""
    return sorted((p for p in folder.rglob("*") if p.is_file() and is_html_file(p)),
                  key=lambda p: p.relative_to(folder).as_posix())


def media_type(content_type: str | None) -> str:
    """``text/html; charset=utf-8`` -> ``text/html``; None -> ``""``."""
    return (content_type or "").split(";", 1)[0].strip().lower()


def sniffs_as_html(body: bytes) -> bool:
    """Whether the first bytes look like HTML (after a BOM and white space), as a browser's sniffer decides."""
    head = body[:1024].lstrip(b"\xef\xbb\xbf\xff\xfe\x00 \t\r\n").lower()
    if head[:4] in (b"\xff\xfe<\x00", b"\xfe\xff\x00<"):
        return True
    return head.startswith(_SNIFF) or b"<html" in head or b"<body" in head


def read_input(path: Path, root: Path, max_page_size: int = MAX_PAGE_SIZE) -> Iterator[Page | Skip]:
    """The pages of one input file (a WARC/ARC file or one HTML file) and the skips, in file order.

    ``root`` is the input the file was given as (itself, or the folder it was found in): names in the
    report and the urls of HTML files are relative to it. Never raises for bad content; an input that
    cannot be opened at all is one ``Skip("read", "unreadable file")``.
    """
    source = _relative(path, root)
    if is_archive(path):
        yield from _read_archive(path, source, max_page_size)
    else:
        yield from _read_html_file(path, source, 0, max_page_size)


def _relative(path: Path, root: Path) -> str:
    if path == root:
        return path.name
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.name


def read_html_file(path: Path, root: Path, index: int, max_page_size: int = MAX_PAGE_SIZE) -> Page | Skip:
    """One HTML file (``.gz`` undone) as a Page, url ``file:`` + its path relative to ``root``."""
    return next(iter(_read_html_file(path, _relative(path, root), index, max_page_size)))


def _read_html_file(path: Path, source: str, index: int, max_page_size: int) -> Iterator[Page | Skip]:
    url = "file:" + source
    try:
        stamp = datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        opener: Any = gzip.open if path.name.lower().endswith(".gz") else open
        with opener(path, "rb") as stream:
            body = stream.read(max_page_size + 1)
    except (OSError, EOFError, zlib.error) as error:
        reason = "unreadable file" if not isinstance(error, (EOFError, zlib.error, gzip.BadGzipFile)) \
            else "truncated file"
        yield Skip("read", reason, source, index, url, str(error))
        return
    if len(body) > max_page_size:
        yield Skip("read", f"page over {size_text(max_page_size)}", source, index, url,
                   f"more than {max_page_size} bytes")
        return
    yield Page(url=url, body=body, content_type=None, last_modified=None, crawl_date=stamp, source=source,
               index=index)


def _read_archive(path: Path, source: str, max_page_size: int) -> Iterator[Page | Skip]:
    yielded = 0
    try:
        with path.open("rb") as stream:
            for item in _records(stream, source, max_page_size):
                yielded += 1
                yield item
        return
    except ArchiveLoadFailed as error:
        if "non-chunked gzip" not in str(error):
            yield Skip("read", "truncated record", source, yielded, "", _first_line(error))
            return
    except OSError as error:
        yield Skip("read", "unreadable file", source, yielded, "", str(error))
        return
    # the whole file is one gzip stream: read it again through gzip, passing over what was yielded
    seen = 0
    with gzip.open(path, "rb") as whole:
        for item in _records(whole, source, max_page_size):
            seen += 1
            if seen > yielded:
                yield item


def _first_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text[:200] or type(error).__name__


def _records(stream: IO[bytes] | gzip.GzipFile, source: str, max_page_size: int) -> Iterator[Page | Skip]:
    """The records of an open archive; a broken record ends it with a Skip (ArchiveLoadFailed for a
    whole-file gzip goes up, so that the caller reads it again)."""
    iterator = iter(ArchiveIterator(stream, arc2warc=True, ensure_http_headers=False))
    index = -1
    while True:
        try:
            record = next(iterator)
        except StopIteration:
            return
        except ArchiveLoadFailed as error:
            if "non-chunked gzip" in str(error):
                raise
            yield Skip("read", "truncated record", source, index + 1, "", _first_line(error))
            return
        except (EOFError, OSError, zlib.error, ValueError, IndexError, KeyError) as error:
            yield Skip("read", "truncated record", source, index + 1, "", _first_line(error))
            return
        index += 1
        try:
            item = _page(record, source, index, max_page_size)
        except ArchiveLoadFailed as error:
            if "non-chunked gzip" in str(error):
                raise
            yield Skip("read", "truncated record", source, index, _url(record), _first_line(error))
            return
        except (EOFError, OSError, zlib.error, ValueError, IndexError, KeyError) as error:
            yield Skip("read", "truncated record", source, index, _url(record), _first_line(error))
            return
        missing = _drain(record)
        if missing:
            yield Skip("read", "truncated record", source, index, _url(record),
                       f"{missing} of the record's {record.length} bytes missing")
            return
        if item is not None:
            yield item


def _drain(record: Any) -> int:
    """Read what is left of a record's block and return how many of its Content-Length bytes the file
    does not hold (0 for a whole record): warcio itself passes over a record cut short silently."""
    raw = record.raw_stream
    while raw.read(_CHUNK):
        pass
    return int(getattr(raw, "limit", 0) or 0)


def _url(record: Any) -> str:
    """WARC-Target-URI, without the angle brackets WARC/1.1's draft (and some crawlers) put around it."""
    uri = str(record.rec_headers.get_header("WARC-Target-URI") or "").strip()
    return uri[1:-1] if uri.startswith("<") and uri.endswith(">") else uri


def _page(record: Any, source: str, index: int, max_page_size: int) -> Page | Skip | None:
    kind = record.rec_type
    if kind not in ("response", "resource", "revisit"):
        return None
    url = _url(record)
    if kind == "revisit":
        return Skip("read", "revisit record", source, index, url, "a revisit record holds no payload")
    http = record.http_headers if kind == "response" else None
    content_type: str | None
    last_modified: str | None = None
    if http is not None:
        status = http.get_statuscode()
        if status != "200":
            return Skip("read", f"HTTP {status}", source, index, url, http.protocol and http.statusline or "")
        content_type = http.get_header("Content-Type")
        last_modified = http.get_header("Last-Modified")
        encoding = (http.get_header("Content-Encoding") or "").strip().lower()
        if encoding == "br" and importlib.util.find_spec("brotli") is None:
            return Skip("read", "brotli content encoding", source, index, url,
                        "install the brotli module (pip install brotli) to read br-encoded pages")
    elif kind == "response" and record.rec_headers.get_header("Content-Type", "").startswith("application/http"):
        return Skip("read", "truncated record", source, index, url, "no HTTP headers")
    else:
        content_type = record.rec_headers.get_header("Content-Type")
    body, over = _read_limited(record.content_stream(), max_page_size)
    if over:
        return Skip("read", f"page over {size_text(max_page_size)}", source, index, url,
                    f"more than {max_page_size} bytes")
    declared = media_type(content_type)
    if declared not in HTML_TYPES and not (declared in UNTYPED and sniffs_as_html(body)):
        return Skip("read", "not HTML", source, index, url, content_type or "no Content-Type")
    date = record.rec_headers.get_header("WARC-Date")
    return Page(url=url, body=body, content_type=content_type, last_modified=last_modified, crawl_date=date,
                source=source, index=index)


def _read_limited(stream: IO[bytes], limit: int) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of ``stream``; True when there was more (the rest is not read: warcio
    passes over it when the next record is asked for)."""
    buffer = io.BytesIO()
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            return buffer.getvalue(), False
        buffer.write(chunk)
        if buffer.tell() > limit:
            return b"", True
