"""The crawl's WARC files: OUT/warc/crawl-NNNNN.warc.gz, gzip per record, rolled over at a size.

On opening, the last file is checked with warcio: a record cut off by a kill is cut away, so every file
holds only complete records; the target URIs of the response records already written are returned
(`fetched`), which is what the frontier's `recover` needs to tell done URLs from interrupted ones.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

ROLL_OVER = 1 << 30  # bytes: a new file after 1 GB


def complete_length(path: Path) -> tuple[int, dict[str, tuple[int, int]]]:
    """The length of the leading complete records of `path`, and the target URIs of its responses with
    their HTTP status and payload length."""
    fetched: dict[str, tuple[int, int]] = {}
    good = 0
    with path.open("rb") as stream:
        iterator = ArchiveIterator(stream)
        try:
            for record in iterator:
                size = len(record.raw_stream.read())
                uri = record.rec_headers.get_header("WARC-Target-URI")
                if record.rec_type == "response" and uri:
                    status = record.http_headers.get_statuscode() if record.http_headers else "0"
                    fetched[uri] = (int(status or 0), size)
                iterator.read_to_end(record)
                good = iterator.get_record_offset() + iterator.get_record_length()
        except Exception:  # whatever follows the last complete record was cut by a kill
            pass
    return good, fetched


class WarcFiles:
    """Appends request and response records to the crawl's WARC files in `directory`."""

    def __init__(self, directory: Path, roll_over: int = ROLL_OVER) -> None:
        self.directory = directory
        self.roll_over = roll_over
        directory.mkdir(parents=True, exist_ok=True)
        self.fetched: dict[str, tuple[int, int]] = {}  # the responses found on opening: URI -> (status, bytes)
        self.repaired = 0
        files = sorted(directory.glob("crawl-*.warc.gz"))
        for path in files:
            length, uris = complete_length(path)
            self.fetched.update(uris)
            if length < path.stat().st_size:
                self.repaired += path.stat().st_size - length
                with path.open("r+b") as stream:
                    stream.truncate(length)
        self.number = int(files[-1].name[6:11]) if files else 1
        self._stream: BinaryIO = self.path().open("ab")
        self._writer = WARCWriter(self._stream, gzip=True)

    def path(self) -> Path:
        return self.directory / f"crawl-{self.number:05d}.warc.gz"

    def write(self, url: str, ip: str, request_headers: list[tuple[str, str]], method: str, status: str,
              response_headers: list[tuple[str, str]], body: bytes, truncated: str | bool | None = None) -> None:
        """A request record and its response record (the body as it came over the wire); `truncated` is
        WARC-Truncated's reason ("length", "time", "disconnect") when the body was cut."""
        if self._stream.tell() >= self.roll_over:
            self._stream.close()
            self.number += 1
            self._stream = self.path().open("ab")
            self._writer = WARCWriter(self._stream, gzip=True)
        target = url.split("//", 1)[1].split("/", 1)
        path = "/" + (target[1] if len(target) > 1 else "")
        request = self._writer.create_warc_record(
            url, "request", payload=io.BytesIO(b""),
            http_headers=StatusAndHeaders(f"{method} {path} HTTP/1.1", request_headers, is_http_request=True),
            warc_headers_dict={"WARC-IP-Address": ip})
        headers = {"WARC-IP-Address": ip}
        if truncated:
            headers["WARC-Truncated"] = "length" if truncated is True else str(truncated)
        kept = [(k, v) for k, v in response_headers if k.lower() not in ("transfer-encoding", "content-length")]
        response = self._writer.create_warc_record(
            url, "response", payload=io.BytesIO(body), length=len(body),
            http_headers=StatusAndHeaders(status, kept, protocol="HTTP/1.1"), warc_headers_dict=headers)
        self._writer.write_record(request)
        self._writer.write_record(response)
        self._stream.flush()

    def close(self) -> None:
        self._stream.close()
