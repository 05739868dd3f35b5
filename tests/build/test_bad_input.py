"""Bad input never stops or corrupts a build (issue 66, "Bad input"): the real ``cowbird build`` command, as a
subprocess, over WARC files full of what crawls hold besides good pages — truncated records (a gzip member
cut, a plain record cut), PDF/JPEG/JSON payloads, binary garbage labelled HTML, a 50 MB page, a page that
declares UTF-8 and is windows-1252, French and Spanish documents, an empty body, HTTP 404 and 301 records,
revisit records and two records sharing a WARC-Record-ID. The build must finish (exit 0), count each skip
with its reason in ``OUT/report.tsv``, and hold every good page, its paragraphs unaltered.
"""

from __future__ import annotations

import csv
import gzip
import html
import os
import random
import re
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.build import pages
from tests.build.pages import GenPage

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = ("query_lang", "frontend_api", "backend_node", "web", "tools/calf", "tools/build")

FRENCH = (
    "Le conseil municipal a décidé mardi soir de reporter d'un an la rénovation de l'école primaire. Le maire a "
    "expliqué que la hausse des coûts de construction pèserait davantage sur le budget que prévu, et les parents "
    "qui assistaient à la réunion ont été déçus par cette décision. Dans un communiqué, la directrice a écrit que "
    "le bâtiment avait besoin de travaux depuis plus de dix ans et que les salles du deuxième étage étaient trop "
    "froides en hiver. Le conseil doit examiner de nouveau les plans au printemps, quand les résultats du nouvel "
    "appel d'offres seront connus."
)
SPANISH = (
    "El ayuntamiento decidió el martes por la noche aplazar un año la reforma de la escuela primaria. El alcalde "
    "explicó que el aumento de los costes de construcción pesaría sobre el presupuesto más de lo previsto, y los "
    "padres que asistieron a la reunión se mostraron decepcionados por la decisión. En un comunicado, la directora "
    "escribió que el edificio necesitaba obras desde hace más de diez años y que las aulas del segundo piso eran "
    "demasiado frías en invierno. El consejo volverá a estudiar los planes en primavera, cuando se conozcan los "
    "resultados del nuevo concurso."
)
BIG_PAGE_BYTES = 50 * 1024 * 1024


@dataclass
class Built:
    """The build's output folder, its report's counts per reason, and what went in."""

    out: Path
    result: subprocess.CompletedProcess[str]
    reasons: Counter[str]
    texts: dict[str, list[str]]  # url -> the text's <p> blocks, tokens joined without spaces
    good: list[GenPage]
    misdeclared: GenPage  # says UTF-8, is windows-1252
    misdeclared_blocks: list[str] | None  # its blocks in the corpus, None if it was left out


def _env() -> dict[str, str]:
    """The environment of the ``cowbird`` subprocess: the checkout's source roots first (an install made
    before tools/build existed does not know ``cowbird.build``)."""
    env = dict(os.environ)
    roots = os.pathsep.join(str(ROOT / r) for r in SOURCE_ROOTS)
    env["PYTHONPATH"] = roots + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def run_build(*args: str | Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    """``cowbird build ARGS`` as a user runs it (``python -m cowbird``), its output captured."""
    return subprocess.run([sys.executable, "-P", "-m", "cowbird", "build", *map(str, args)], cwd=ROOT, env=_env(),
                          capture_output=True, text=True, timeout=timeout, check=False)


def report_counts(report: Path) -> Counter[str]:
    """``OUT/report.tsv`` (columns stage, reason, documents, tokens) as reason -> documents skipped, summed
    over the stages (the rows "in"/"out" of each stage, the languages and the partitions left out)."""
    counts: Counter[str] = Counter()
    with report.open(newline="", encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            if row["stage"] in ("languages", "partition") or row["reason"] in ("in", "out"):
                continue
            if row["documents"].strip().isdigit():
                counts[row["reason"]] += int(row["documents"])
    return counts


_TEXT = re.compile(r'<text\b([^>]*)>')
_ATTRIBUTE = re.compile(r'(\w+)="([^"]*)"')


def corpus_texts(vrt: Path) -> dict[str, list[str]]:
    """The built VRT's texts by url: each <p>'s tokens joined without spaces (so that a paragraph compares
    with the generator's whatever the tokenizer split), XML escapes undone."""
    texts: dict[str, list[str]] = {}
    current: list[str] | None = None
    block: list[str] = []
    with gzip.open(vrt, "rt", encoding="utf-8") as handle:
        for line in handle:
            line = line.rstrip("\n")
            if line.startswith("<text"):
                match = _TEXT.match(line)
                assert match is not None, line
                url = html.unescape(dict(_ATTRIBUTE.findall(match.group(1)))["url"])
                current = texts.setdefault(url, [])
            elif line.startswith("<p"):
                block = []
            elif line == "</p>":
                assert current is not None
                current.append("".join(block))
            elif line and not line.startswith("<"):
                block.append(html.unescape(line.split("\t", 1)[0]))
    return texts


def squeezed(text: str) -> str:
    return "".join(text.split())


def _page(rng: random.Random, number: int, language: str, **fields: object) -> GenPage:
    page = pages.make_page(rng, number, language, kind="article", charset_mix=False)
    for key, value in fields.items():
        setattr(page, key, value)
    return page


def _foreign(url: str, text: str, language: str) -> GenPage:
    body = (f'<!DOCTYPE html>\n<html lang="{language}">\n<head>\n<title>Actualités</title>\n</head>\n<body>\n'
            f'<nav><a href="/">Accueil</a> <a href="/contact">Contact</a></nav>\n<main><article><h1>Actualités</h1>\n'
            + "".join(f"<p>{html.escape(s.strip())}.</p>\n" for s in text.split(". ") if s.strip())
            + "</article></main>\n</body>\n</html>\n")
    return GenPage(url=url, html=body.replace("..</p>", ".</p>"), language=language, kind="article",
                   content_type="text/html; charset=utf-8", declare="header")


def _truncate_last_member(path: Path, keep: float = 0.5) -> None:
    """Cut a gzip-per-record WARC inside its last response record's gzip member."""
    data = path.read_bytes()
    starts = [m.start() for m in re.finditer(b"\x1f\x8b\x08", data)]
    last = starts[-1]
    path.write_bytes(data[: last + int((len(data) - last) * keep)])


def _truncate_plain(path: Path, marker: bytes) -> None:
    """Cut a plain WARC in the middle of the response record whose payload holds ``marker``."""
    data = path.read_bytes()
    at = data.index(marker)
    path.write_bytes(data[: at + len(marker) // 2])


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    base = tmp_path_factory.mktemp("bad-input")
    rng = random.Random(20261202)
    good: list[GenPage] = []
    # the main file: good pages (every charset declaration) between the bad ones
    declarations = [("utf-8", "header"), ("windows-1252", "header"), ("iso-8859-1", "meta"), ("utf-8", "bom"),
                    ("utf-8", "none"), ("windows-1252", "http-equiv"), ("utf-8", "meta"), ("utf-8", "header")]
    records: list[GenPage] = []
    for k, (charset, declare) in enumerate(declarations):
        page = _page(rng, k, ("en", "de")[k % 2], charset=charset, declare=declare,
                     content_encoding="gzip" if k % 3 == 0 else None)
        good.append(page)
        records.append(page)
    bad = [
        GenPage(url="https://files.example.org/report.pdf", body=pages.pdf_bytes(rng), content_type="application/pdf"),
        GenPage(url="https://img.example.org/photo.jpg", body=pages.jpeg_bytes(rng), content_type="image/jpeg"),
        GenPage(url="https://api.example.org/items.json", body=b'{"items": [1, 2, 3], "next": null}',
                content_type="application/json"),
        GenPage(url="https://www.example.org/garbage.html", body=pages.garbage_bytes(rng, 30000),
                content_type="text/html"),
        GenPage(url="https://www.example.org/empty.html", body=b"", content_type="text/html; charset=utf-8"),
        _page(rng, 100, "en", status=404, url="https://www.example.org/missing.html"),
        _page(rng, 101, "en", status=301, url="https://www.example.org/moved.html"),
        _page(rng, 102, "en", record_type="revisit", url="https://www.example.org/revisited.html"),
        _foreign("https://www.exemple.fr/actualites/ecole.html", FRENCH, "fr"),
        _foreign("https://www.ejemplo.es/noticias/escuela.html", SPANISH, "es"),
    ]
    big_html, _ = pages.article(rng, "en")
    filler = "<p>" + pages.paragraph(rng, "en", (6, 8)) + "</p>\n"
    cut = big_html.index('<div class="share">')
    big_html = big_html[:cut] + filler * (BIG_PAGE_BYTES // len(filler) + 1) + big_html[cut:]
    bad.append(GenPage(url="https://www.example.org/huge.html", html=big_html, content_type="text/html"))
    for k, page in enumerate(bad):  # interleaved: a bad record between good ones does not stop the file
        records.insert(1 + 2 * k if 1 + 2 * k < len(records) else len(records), page)
    # mis-declared: says UTF-8, is windows-1252 (German, so umlauts and ß are in it)
    misdeclared = _page(rng, 200, "de", charset="windows-1252", declare="misdeclared")
    records.append(misdeclared)
    # two different good pages with one WARC-Record-ID: both are documents
    same_id = "<urn:uuid:11111111-2222-3333-4444-555555555555>"
    for k in (300, 301):
        page = _page(rng, k, ("en", "de")[k % 2], record_id=same_id)
        good.append(page)
        records.append(page)
    pages.write_warc(base / "in" / "a-mixed.warc.gz", records, gzip=True)

    # a gzip-per-record WARC whose last member is cut: the pages before it are kept
    kept = [_page(rng, 400 + k, ("en", "de")[k % 2]) for k in range(3)]
    lost = _page(rng, 410, "en")
    pages.write_warc(base / "in" / "b-truncated.warc.gz", [*kept, lost], gzip=True)
    _truncate_last_member(base / "in" / "b-truncated.warc.gz")
    good.extend(kept)
    # an uncompressed WARC cut in the middle of a record's payload
    kept_plain = [_page(rng, 500 + k, ("de", "en")[k % 2]) for k in range(2)]
    lost_plain = _page(rng, 510, "de")
    pages.write_warc(base / "in" / "c-cut.warc", [*kept_plain, lost_plain], gzip=False)
    _truncate_plain(base / "in" / "c-cut.warc", lost_plain.main_paragraphs[0].encode("utf-8")[:60])
    good.extend(kept_plain)
    # not an archive at all, though it is named like one
    (base / "in" / "d-garbage.warc.gz").write_bytes(pages.garbage_bytes(rng, 5000))

    out = base / "out"
    result = run_build(*sorted((base / "in").iterdir()), "-o", out, "--name", "bad", "--language", "en,de",
                       "--jobs", "2")
    assert result.returncode == 0, f"cowbird build failed ({result.returncode}):\n{result.stdout}\n{result.stderr}"
    texts = corpus_texts(out / "bad.vrt.gz")
    return Built(out, result, report_counts(out / "report.tsv"), texts, good, misdeclared, texts.get(misdeclared.url))


def test_the_build_finishes_and_writes_the_corpus(built: Built) -> None:
    assert (built.out / "bad.manifest.json").is_file()
    assert (built.out / "report.html").is_file()
    assert len(built.texts) >= len(built.good)


def test_every_skip_is_counted_with_its_reason(built: Built) -> None:
    reasons = built.reasons
    assert reasons["not HTML"] == 3, reasons  # PDF, JPEG, JSON
    assert reasons["page over 8 MB"] == 1, reasons
    assert reasons["language fr"] == 1, reasons
    assert reasons["language es"] == 1, reasons
    assert reasons["not text"] == 1, reasons  # binary garbage labelled text/html
    assert reasons["empty page"] == 1, reasons
    assert reasons["HTTP 404"] == 1 and reasons["HTTP 301"] == 1, reasons
    assert reasons["revisit record"] == 1, reasons
    # b-truncated (a gzip member cut) and c-cut (a record cut); d-garbage is no WARC at all
    assert reasons["truncated record"] >= 2, reasons
    assert reasons["truncated record"] + reasons["unreadable file"] == 3, reasons


def test_non_pages_never_become_documents(built: Built) -> None:
    for url in ("https://files.example.org/report.pdf", "https://img.example.org/photo.jpg",
                "https://api.example.org/items.json", "https://www.example.org/garbage.html",
                "https://www.example.org/empty.html", "https://www.example.org/missing.html",
                "https://www.example.org/moved.html", "https://www.example.org/revisited.html",
                "https://www.example.org/huge.html", "https://www.exemple.fr/actualites/ecole.html",
                "https://www.ejemplo.es/noticias/escuela.html"):
        assert url not in built.texts, url


def test_every_good_page_is_in_the_corpus_unaltered(built: Built) -> None:
    missing = []
    for page in built.good:
        blocks = built.texts.get(page.url)
        assert blocks is not None, f"{page.url} ({page.charset}, {page.declare}) is not in the corpus"
        for paragraph in page.main_paragraphs:
            if squeezed(paragraph) not in blocks:
                missing.append((page.url, page.charset, page.declare, paragraph[:60]))
    assert not missing, missing


def test_a_misdeclared_charset_is_decoded_or_skipped_never_garbled(built: Built) -> None:
    page, texts = built.misdeclared, built.misdeclared_blocks
    if texts is None:  # left out: then counted under a reason (the totals above hold it)
        return
    joined = "".join(texts)
    assert "\ufffd" not in joined and "Ã" not in joined, joined[:200]
    for paragraph in page.main_paragraphs:
        assert squeezed(paragraph) in texts, paragraph[:60]
