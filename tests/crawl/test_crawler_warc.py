"""The crawl's WARC files: records warcio reads back, a record cut by a kill cut away on reopening."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from cowbird.crawl.warc import WarcFiles


def test_records_read_back_and_a_cut_record_is_removed(tmp_path: Path) -> None:
    files = WarcFiles(tmp_path / "warc")
    body = b"<html><body><p>Hallo Welt</p></body></html>"
    files.write("http://127.0.0.1:8081/a", "127.0.0.1", [("User-Agent", "cowbird-crawler")], "GET", "200 OK",
                [("Content-Type", "text/html"), ("Content-Length", "99")], body)
    files.write("http://127.0.0.1:8081/b", "127.0.0.1", [], "GET", "200 OK", [("Content-Type", "text/html")],
                body[:10], truncated=True)
    files.close()
    path = tmp_path / "warc" / "crawl-00001.warc.gz"
    whole = path.stat().st_size
    with path.open("ab") as stream:  # a record half written when the crawler was killed
        stream.write(path.read_bytes()[:40])
    reopened = WarcFiles(tmp_path / "warc")
    reopened.close()
    assert reopened.fetched == {"http://127.0.0.1:8081/a": (200, len(body)), "http://127.0.0.1:8081/b": (200, 10)}
    assert path.stat().st_size == whole and reopened.repaired > 0
    with path.open("rb") as stream:
        records = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.rec_headers.get_header("WARC-Truncated"),
                    r.http_headers.get_header("Content-Length"), r.content_stream().read())
                   for r in ArchiveIterator(stream)]
    assert [r[0] for r in records] == ["request", "response", "request", "response"]
    assert records[1][4] == body and records[1][3] is None  # the stale Content-Length header is dropped
    assert records[3][2] == "length" and records[3][4] == body[:10]


GERMAN = (
    "<html><head><title>Der Garten im Herbst</title></head><body><article>"
    + "".join(
        f"<p>Im Herbst wird der Garten ruhiger, und die Beete werden für den Winter vorbereitet. "
        f"Wir schneiden die Stauden zurück, sammeln das Laub und decken die empfindlichen Pflanzen ab, "
        f"damit sie die kalten Nächte gut überstehen. Absatz {i} erzählt davon, wie die Äpfel geerntet "
        f"und im Keller gelagert werden, wo es kühl und dunkel ist.</p>"
        for i in range(6)
    )
    + "</article></body></html>"
).encode()


@pytest.mark.slow
def test_cowbird_build_reads_the_crawl_warc(tmp_path: Path) -> None:
    import subprocess
    import sys

    files = WarcFiles(tmp_path / "warc")
    files.write("http://127.0.0.1:8081/garten", "127.0.0.1", [("Accept-Encoding", "gzip, deflate, br")], "GET",
                "200 OK", [("Content-Type", "text/html; charset=utf-8")], GERMAN)
    files.close()
    result = subprocess.run(
        [sys.executable, "-m", "cowbird", "build", str(tmp_path / "warc" / "crawl-00001.warc.gz"),
         "-o", str(tmp_path / "corpus"), "--name", "garten", "--language", "de", "-j", "1"],
        capture_output=True, text=True, timeout=100)
    assert result.returncode == 0, result.stderr
    vrt = gzip.decompress((tmp_path / "corpus" / "garten.vrt.gz").read_bytes()).decode("utf-8")
    assert 'url="http://127.0.0.1:8081/garten"' in vrt and "\nStauden\t" in vrt
