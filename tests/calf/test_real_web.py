"""Calf on a web that looks like the real one: gzip-compressed pages, declared and undeclared
charsets, German (ß and other letters whose folded form is longer or shorter), ligatures and
decomposed accents, pages with navigation, counters, repeated interjections and ``<pre>`` blocks,
lines edited by one word, unrelated pages in the same frame, lines exported with tokens of context
— and every row with a status and the reason for it, the export's provenance kept."""

from __future__ import annotations

import csv
import gzip
import io
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cowbird.calf.core import Reconstructor, texts_of
from cowbird.calf.fetching import Fetcher, decode
from cowbird.calf.matching import Line, PageLetters, folded, locate
from cowbird.calf.pages import page_text
from cowbird.calf.search import SearxngSearch
from tests.calf.exports import write_xlsx
from tests.calf.web import Answer, LocalWeb

pytestmark = pytest.mark.anyio

NAV = "<nav><a href='/'>Startseite</a> | <a href='/archiv'>Archiv</a> | <a href='/kontakt'>Kontakt</a></nav>"
COUNTER = "<div class='counter'>Besucher seit 1996 | 1234567</div>"
FOOTER = "<footer>Impressum | Datenschutz | © 2024 Deutscher Bundestag</footer>"


def german_page(paragraphs: list[str], charset: str = "utf-8") -> str:
    body = "".join(f"<p>{p}</p>" for p in paragraphs)
    return (f"<html><head><meta charset='{charset}'><title>Plenarprotokoll 13/86</title></head><body>{NAV}"
            f"{COUNTER}<main><h1>Deutscher Bundestag – 86. Sitzung</h1>{body}</main>{FOOTER}</body></html>")


SPEECH = [
    "Präsident Dr. Wolfgang Schäuble: Ich rufe den Tagesordnungspunkt 4 auf: Beratung der Beschlußempfehlung "
    "des Wirtschaftsausschusses zu dem Antrag der Fraktion der SPD.",
    "Meine Damen und Herren, die Straße nach Süden ist seit Jahren in schlechtem Zustand, und das weiß jeder hier.",
    "Wir müssen uns vor dieser Aufgabe nicht fürchten. Schiß haben wir nicht. Die Bürger können doch nichts dafür.",
    "Ich komme zum Schluß und danke Ihnen für Ihre Aufmerksamkeit.",
]
LINE = "Schiß haben wir nicht ."  # as the corpus has it: tokens and spaces


async def reconstruct(web: LocalWeb, url: str, *texts: str, search: bool = False, **fetcher: object) -> object:
    import httpx

    options = {"delay": 0.0, "timeout": 2.0, "retries": 0} | fetcher
    async with Fetcher(**options) as fetch, httpx.AsyncClient() as client:  # type: ignore[arg-type]
        provider = SearxngSearch(f"{web.url}/search") if search else None
        return await Reconstructor(fetch, provider, client, context_chars=200).line(url, *(texts or (LINE,)))


# 1 ------------------------------------------------------------------------------------------------

async def test_a_gzip_compressed_page_is_decompressed_once(web: LocalWeb) -> None:
    """httpx had decompressed the body, and Calf rebuilt the answer with its Content-Encoding: gzip
    header, so reading it decompressed it again (httpx.DecodingError: incorrect header check)."""
    body = gzip.compress(german_page(SPEECH).encode("utf-8"))
    web.pages["/gz"] = Answer(body, headers=(("Content-Encoding", "gzip"),))
    outcome = await reconstruct(web, f"{web.url}/gz")
    assert outcome.status == "found_url" and outcome.score == 100.0  # type: ignore[attr-defined]
    web.pages["/broken"] = Answer(b"\x1f\x8bnot gzip at all", headers=(("Content-Encoding", "gzip"),))
    broken = await reconstruct(web, f"{web.url}/broken")
    assert broken.status == "fetch_error" and "compressed body is broken" in broken.detail  # type: ignore[attr-defined]


# 2 ------------------------------------------------------------------------------------------------

def test_every_folded_letter_keeps_its_place_on_the_page() -> None:
    text = "Schiß: ﬁne İstanbul Cafe\u0301 ＡＢ"
    letters, starts, ends = folded(text)
    assert letters == "schissfineistanbulcaféab"
    assert [text[starts[k]:ends[k]] for k in range(len(letters))] == [
        "S", "c", "h", "i", "ß", "ß", "ﬁ", "ﬁ", "n", "e", "İ", "s", "t", "a", "n", "b", "u", "l", "C", "a", "f",
        "e\u0301", "Ａ", "Ｂ"]


async def test_sharp_s_ligatures_and_accents_before_the_line_leave_its_context_in_place(web: LocalWeb) -> None:
    """"ß" folded to "ss" kept one place for two letters: locate crashed (IndexError), and without
    the crash the context came back one letter late for every "ß" before the line."""
    before = ("Die Straße, der Fluß und die Maße: ﬁnanzielle Einflüsse, İzmir und Cafe\u0301s, ＡＢＣ. "
              "Wir müssen uns vor dieser Aufgabe nicht fürchten.")
    url = web.page("/speech", german_page([f"{before} Schiß haben wir nicht. Die Bürger können doch nichts dafür."]))
    outcome = await reconstruct(web, url)
    assert outcome.status == "found_url", outcome  # type: ignore[attr-defined]
    assert outcome.page_text == "Schiß haben wir nicht."  # type: ignore[attr-defined]
    assert outcome.left.endswith("Wir müssen uns vor dieser Aufgabe nicht fürchten.")  # type: ignore[attr-defined]
    assert outcome.right == "Die Bürger können doch nichts dafür."  # type: ignore[attr-defined]


# 3 ------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("declared", ["header", "meta", "http-equiv", "nothing", "bom"])
@pytest.mark.slow  # 3.3 s here (make quick leaves it out)
async def test_the_declared_charset_is_read(web: LocalWeb, declared: str) -> None:
    """A page in windows-1252 (declared ISO-8859-1 in the header, in <meta> or in http-equiv, or not
    at all), or UTF-8 with a BOM, comes back as the page shows it, not as "Wirtsschaftsausschu▀"."""
    page = german_page(SPEECH, charset="iso-8859-1").replace(
        "<meta charset='iso-8859-1'>", {"meta": "<meta charset='iso-8859-1'>",
                                        "http-equiv": "<meta http-equiv='Content-Type' content='text/html; "
                                                      "charset=windows-1252'>"}.get(declared, ""))
    content_type = "text/html; charset=ISO-8859-1" if declared == "header" else "text/html"
    body = "\ufeff".encode() + page.encode("utf-8") if declared == "bom" else page.encode("cp1252")
    web.pages["/page"] = Answer(body, content_type=content_type)
    outcome = await reconstruct(web, f"{web.url}/page")
    assert outcome.status == "found_url", outcome  # type: ignore[attr-defined]
    first = await reconstruct(web, f"{web.url}/page", SPEECH[1].replace(",", " ,").replace(".", " ."))
    assert first.left.endswith("Beratung der Beschlußempfehlung des Wirtschaftsausschusses zu dem Antrag der "  # type: ignore[attr-defined]
                               "Fraktion der SPD.")
    assert "Wirtschaftsausschusses" in first.left and "▀" not in first.left  # type: ignore[attr-defined]


UNDECLARED = [  # (language, encoding, text): pages that declare no charset, each in its region's encoding
    ("en", "cp1252", "October 12. \u201cWait, wait, is this 50 questions?\u201d asked Bush \u2013 in answering "
                     "the question about the leader\u2019s plans."),
    ("fr", "cp1252", "Le président a déclaré que la réunion à Genève était très importante. « Nous sommes prêts »."),
    ("de", "cp1252", "Die Bürger können doch nichts dafür. „Schiß haben wir nicht“ – im Wirtschaftsausschuß."),
    ("pl", "cp1250", "Zażółć gęślą jaźń. Polski tekst na stronie, który zawiera znaki: ą, ę, ś, ć, ż, ź, ł, ó, ń."),
    ("cs", "cp1250", "Příliš žluťoučký kůň úpěl ďábelské ódy. Česká republika je stát ve střední Evropě."),
    ("ru", "cp1251", "Привет, как дела? Это тестовая страница на русском языке, без объявленной кодировки."),
    ("ja", "shift_jis", "日本語のテキストです。これはテストページです。文字コードの宣言はありません。"),
]


@pytest.mark.parametrize(("language", "encoding", "text"), UNDECLARED, ids=[u[0] for u in UNDECLARED])
def test_a_page_that_declares_no_charset_is_read_as_a_browser_reads_it(language: str, encoding: str,
                                                                       text: str) -> None:
    """An English page in windows-1252 that declares nothing came back as "ōWait … questions?ö" (the
    guess was the DOS code page cp775): pages are guessed among the web's encodings only, Western
    text as windows-1252, other text in its own encoding."""
    body = f"<html><head><title>{language}</title></head><body><p>{text}</p></body></html>".encode(encoding)
    found, page = decode(body, "text/html")
    assert text in page, (found, page)


# 4, 5 ---------------------------------------------------------------------------------------------

async def test_the_same_frame_around_another_sentence_is_not_the_line(web: LocalWeb) -> None:
    """A line from a page that is gone was "found" at exactly the threshold on an unrelated page
    holding another sentence in the same frame: found must mean the line itself."""
    line = ("Ich rufe den Tagesordnungspunkt 4 auf : Beratung der Beschlußempfehlung und des Berichts des "
            "Ausschusses für Wirtschaft zu dem Antrag der Fraktion der SPD .")
    other = ("Ich rufe den Tagesordnungspunkt 7 auf: Erste Beratung des von der Bundesregierung eingebrachten "
             "Entwurfs eines Gesetzes zur Änderung des Tierschutzgesetzes.")
    unrelated = web.page("/unrelated", german_page([SPEECH[1], other, SPEECH[3]]))
    web.pages["/search"] = Answer(json.dumps({"results": [{"url": unrelated}]}).encode(),
                                  content_type="application/json")
    outcome = await reconstruct(web, f"{web.url}/gone", line, search=True)
    assert outcome.status == "not_found", outcome  # type: ignore[attr-defined]
    assert "HTTP 404" in outcome.detail and "words differ" in outcome.detail  # type: ignore[attr-defined]


@pytest.mark.parametrize(("edit", "page_says"), [
    ("a word changed", "Die Bürger können wirklich nichts dafür."),
    ("a word more", "Die Bürger können doch gar nichts dafür."),
    ("a word less", "Die Bürger können nichts dafür."),
])
@pytest.mark.slow  # 1.7 s here (make quick leaves it out)
async def test_a_line_with_one_word_edited_on_the_page_is_found_and_the_score_says_so(
    web: LocalWeb, edit: str, page_says: str
) -> None:
    line = "Die Bürger können doch nichts dafür , meine Damen und Herren ."
    url = web.page("/edited", german_page([SPEECH[1], f"{page_says[:-1]}, meine Damen und Herren.", SPEECH[3]]))
    outcome = await reconstruct(web, url, line)
    assert outcome.status == "found_url", (edit, outcome)  # type: ignore[attr-defined]
    assert outcome.score < 100 and outcome.detail == "1 of 10 words differ", (edit, outcome)  # type: ignore[attr-defined]
    assert outcome.page_text == f"{page_says[:-1]}, meine Damen und Herren."  # type: ignore[attr-defined]


# 6 ------------------------------------------------------------------------------------------------

def test_the_context_is_the_running_text_in_order_without_furniture() -> None:
    applause = "(Beifall bei der CDU/CSU und der F.D.P.)"
    paragraphs = []
    for k in range(15):
        paragraphs += [f"Das ist der {k + 1}. Absatz der Rede, und er ist lang genug, um als Text zu zählen, "
                       "wie jeder Absatz einer Rede.", applause]
    html = german_page(paragraphs[:-1]).replace(
        "</main>", "<pre>Tabelle 1: Arbeitslose 1995\n  West  2,5 Mio\n  Ost   1,1 Mio</pre>"
                   "Und hier geht der Text nach dem pre weiter. Schiß haben wir nicht. Das ist das Ende.</main>")
    page = page_text(html)
    assert [b.text for b in page.blocks].count(applause) == 14  # every interjection, in its place
    letters = PageLetters.of(page)
    found = locate(Line.of("Das ist der 9. Absatz der Rede , und er ist lang genug , um als Text zu zählen , wie "
                           "jeder Absatz einer Rede ."), letters, 400)
    assert found is not None and found.found(90)
    assert found.left.endswith(f"wie jeder Absatz einer Rede. {applause}")
    assert found.right.startswith(f"{applause} Das ist der 10. Absatz der Rede")
    first = locate(Line.of("Das ist der 1. Absatz der Rede , und er ist lang genug , um als Text zu zählen , wie "
                           "jeder Absatz einer Rede ."), letters, 400)
    # the heading is text; the counter, the navigation and the footer are not
    assert first is not None and first.left == "Deutscher Bundestag – 86. Sitzung"
    after_pre = locate(Line.of(LINE), letters, 400)
    assert after_pre is not None and after_pre.found(90)
    assert after_pre.left.endswith("Ost 1,1 Mio Und hier geht der Text nach dem pre weiter.")
    assert after_pre.right == "Das ist das Ende."  # and no footer after it


# 7 ------------------------------------------------------------------------------------------------

def test_a_line_with_tokens_of_context_beyond_its_sentence_is_looked_for_by_its_sentence() -> None:
    texts = texts_of("Ende eines anderen Textes . Wir müssen uns vor dieser Aufgabe nicht fürchten .",
                     "Schiß", "haben wir nicht . Ganz woanders steht dieser Satz")
    assert texts == ["Ende eines anderen Textes . Wir müssen uns vor dieser Aufgabe nicht fürchten . Schiß haben "
                     "wir nicht . Ganz woanders steht dieser Satz", "Schiß haben wir nicht ."]
    assert texts_of("Der Satz", "geht", "weiter .") == ["Der Satz geht weiter ."]


def write_export(path: Path, rows: list[dict[str, str]], provenance: dict[str, object]) -> None:
    if path.suffix == ".xlsx":
        write_xlsx(path, rows, provenance)
        return
    lines = [f"# {k}: {json.dumps(v)}" for k, v in provenance.items()]
    with path.open("w", encoding="utf-8", newline="") as out:
        out.write(f"# cowbird export: {len(lines) + 1} lines of metadata starting with '#' come before the header "
                  f"(pandas: skiprows={len(lines) + 1}; R: skip={len(lines) + 1})\r\n")
        out.write("".join(line + "\r\n" for line in lines))
        writer = csv.DictWriter(out, list(rows[0]), delimiter="\t", lineterminator="\r\n")
        writer.writeheader()
        writer.writerows(rows)


def run_calf(folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    calf = shutil.which("calf", path=str(Path(sys.executable).parent))
    assert calf is not None
    return subprocess.run([calf, *arguments, "--delay", "0", "--timeout", "2"], cwd=folder, capture_output=True,
                          text=True, timeout=180)


def read_output(path: Path) -> tuple[dict[str, object], list[dict[str, str]]]:
    text = path.read_text(encoding="utf-8")
    skip = int(text.split("skiprows=")[1].split(";")[0])
    lines = text.splitlines(keepends=True)
    meta = {line[2:].split(": ", 1)[0]: json.loads(line[2:].split(": ", 1)[1]) for line in lines[1:skip]}
    return meta, list(csv.DictReader(io.StringIO("".join(lines[skip:])), delimiter="\t"))


@pytest.mark.e2e
@pytest.mark.parametrize("suffix", [".tsv", ".xlsx"])
def test_lines_with_tokens_of_context_are_found_tsv_and_xlsx(web: LocalWeb, tmp_path: Path, suffix: str) -> None:
    """The browser dialog's "10 tokens each side": the context reaches into sentences around the
    match's, on the page (found whole) or not (a COW corpus shuffles sentences; found by its sentence)."""
    url = web.page("/speech", german_page(SPEECH))
    rows = [
        {"position": "1", "left": "Süden ist seit Jahren in schlechtem Zustand , und das weiß jeder hier . Wir",
         "match": "müssen", "right": "uns vor dieser Aufgabe nicht fürchten . Schiß haben wir nicht", "text_url": url},
        {"position": "2", "left": "aus einer ganz anderen Rede , die hier nicht steht . Wir müssen uns",
         "match": "vor", "right": "dieser Aufgabe nicht fürchten . Zufällig danach gemischt , wie im COW",
         "text_url": url},
    ]
    write_export(tmp_path / f"web{suffix}", rows, {"query": "müssen", "corpus": "web", "context": 10})
    done = run_calf(tmp_path, f"web{suffix}", "-o", "out.tsv")
    assert done.returncode == 0, done.stderr
    _, written = read_output(tmp_path / "out.tsv")
    assert [r["calf_status"] for r in written] == ["found_url", "found_url"], written
    assert written[0]["calf_page_text"].startswith("Süden ist seit Jahren") and written[0]["calf_detail"] == "exact"
    assert written[1]["calf_page_text"] == "Wir müssen uns vor dieser Aufgabe nicht fürchten."
    assert written[1]["calf_left"].endswith("und das weiß jeder hier.")


# 8 ------------------------------------------------------------------------------------------------

@pytest.mark.e2e
def test_every_row_has_a_status_and_its_reason_and_the_export_s_provenance_is_kept(
    web: LocalWeb, tmp_path: Path
) -> None:
    web.pages["/robots.txt"] = Answer(b"User-agent: cowbird-calf\nDisallow: /private/\n", content_type="text/plain")
    web.pages["/gz"] = Answer(gzip.compress(german_page(SPEECH).encode()), headers=(("Content-Encoding", "gzip"),))
    web.pages["/private/speech"] = Answer(german_page(SPEECH).encode())
    web.pages["/huge"] = Answer(b"<html><body><p>" + b"Wort " * 2_000_000 + b"</p></body></html>")
    web.pages["/slow"] = Answer(german_page(SPEECH).encode(), delay=4)
    web.pages["/gone"] = Answer(b"<html><body>Gone</body></html>", status=410)
    web.pages["/moved"] = Answer(status=301, headers=(("Location", "../gz"),))
    cases = [("gz", "found_url", "exact"), ("private/speech", "fetch_error", "refused by robots.txt"),
             ("huge", "fetch_error", "too large"), ("slow", "fetch_error", "timeout"),
             ("gone", "fetch_error", "HTTP 410"), ("missing", "fetch_error", "HTTP 404"),
             ("a/moved", "found_url", "exact")]
    rows = [{"left": "Schiß", "match": "haben", "right": "wir nicht .", "text_url": f"{web.url}/{path}"}
            for path, _, _ in cases]
    rows += [{"left": "Schiß", "match": "haben", "right": "wir nicht .", "text_url": "http://calf-test.invalid/x"},
             {"left": "Schiß", "match": "haben", "right": "wir nicht .", "text_url": "http://127.0.0.1:9/closed"}]
    cases += [("", "fetch_error", "cannot resolve calf-test.invalid"), ("", "fetch_error", "connection refused")]
    web.pages["/a/moved"] = Answer(status=308, headers=(("Location", "/moved"),))  # a chain, relative
    write_export(tmp_path / "web.tsv", rows, {"query": "^haben", "cqp": '[lemma="haben"]', "corpus": "web"})
    done = run_calf(tmp_path, "web.tsv", "-o", "out.tsv", "--min-score", "90")
    assert done.returncode == 0, done.stderr
    meta, written = read_output(tmp_path / "out.tsv")
    assert [(r["calf_status"], r["calf_detail"][: len(reason)]) for r, (_, _, reason) in
            zip(written, cases, strict=True)] == [(status, reason) for _, status, reason in cases]
    assert meta["export.query"] == "^haben" and meta["export.cqp"] == '[lemma="haben"]'
    assert meta["calf"] and meta["min_score"] == 90.0 and meta["inputs"] == ["web.tsv"] and meta["run_at"]


async def test_a_short_frame_with_another_word_for_the_match_is_not_the_line(web: LocalWeb) -> None:
    """"Warum reden Sie nicht von Überstunden?" is not "… von Teilzeit?": when the word that differs
    is the match itself, the hit is not on the page, and a short sentence around it proves nothing."""
    url = web.page("/frame", german_page(["Warum reden Sie nicht von Teilzeit? Das wäre ein Anfang.", SPEECH[3]]))
    line = "Warum reden Sie nicht von Überstunden ?"
    import httpx

    async with Fetcher(delay=0.0, timeout=2.0, retries=0) as fetch, httpx.AsyncClient() as client:
        calf = Reconstructor(fetch, None, client, context_chars=200)
        frame = await calf.line(url, line, core=(5, 6))
        assert frame.status == "not_found" and "1 of 6 words differ" in frame.detail
        other = await calf.line(url, line.replace("Überstunden", "Teilzeit").replace("reden", "sprechen"),
                                core=(5, 6))  # another word than the match edited: found, not exact
        assert other.status == "found_url" and other.detail == "1 of 6 words differ"


async def test_a_run_of_words_around_the_match_finds_a_line_whose_context_is_from_elsewhere(web: LocalWeb) -> None:
    """Tokens of context from a corpus that shuffles its sentences (COW) come from other pages, with no
    full stop to cut at; the match with the words around it that the page has, in order, finds it —
    but the first word of another sentence next to the context does not."""
    url = web.page("/run", german_page(["Vorher steht etwas anderes. Meine Damen und Herren die Lage am "
                                        "Arbeitsmarkt ist ernst und wir müssen handeln. Danach kommt mehr."]))
    import httpx

    async with Fetcher(delay=0.0, timeout=2.0, retries=0) as fetch, httpx.AsyncClient() as client:
        calf = Reconstructor(fetch, None, client, context_chars=200)
        line = "Namen einer Liste ohne Punkt Meine Damen und Herren die Lage am Arbeitsmarkt ist ernst und wir"
        found = await calf.line(url, line, core=(11, 12), runs=True)  # the match: "Lage"
        assert found.status == "found_url" and found.page_text == "Meine Damen und Herren die Lage am " \
            "Arbeitsmarkt ist ernst und wir", found
        assert "its context) are not beside it" in found.detail and found.left.endswith("Vorher steht etwas anderes.")
        edge = "Vorher steht etwas anderes . Meine Fraktion lehnt das ab ."
        other = await calf.line(url, edge, core=(5, 6), runs=True)  # the page's "Meine" starts another sentence
        assert other.status == "not_found", other


@pytest.mark.slow
def test_the_rest_of_the_evaluation_web_every_row_a_status_and_no_false_positive(
    web: LocalWeb, tmp_path: Path
) -> None:
    """The evaluation web's other classes, each in a row of one run: a server error, a soft 404 and a
    redirect to the home page are no false positive; a 2-MB page (under the cap) and a slow page that
    arrives in time are found; a page whose text around the line was rewritten still has the line; a
    page with the line's words scattered over it does not; a body over the cap once decompressed is
    too large; and an NDJSON line without a ``match`` key is a bad row while the others go on."""
    home = german_page(["Willkommen beim Deutschen Bundestag.", "Aktuelle Meldungen aus dem Plenum."])
    web.pages["/"] = Answer(home.encode())
    web.pages["/error"] = Answer(b"<html><body>Internal Server Error</body></html>", status=500)
    web.pages["/soft404"] = Answer(german_page(["Die Seite wurde nicht gefunden.", "Zur Startseite"]).encode())
    web.pages["/to-home"] = Answer(status=302, headers=(("Location", "/"),))
    filler = [f"Absatz {k}: Der Ausschuss hat die Vorlage in seiner {k}. Sitzung beraten." for k in range(26_000)]
    big = german_page(filler[:13_000] + SPEECH + filler[13_000:]).encode()
    assert 2_000_000 < len(big) < 5 * 1024 * 1024
    web.pages["/big"] = Answer(big)
    web.pages["/slow"] = Answer(german_page(SPEECH).encode(), delay=1)
    edited = [SPEECH[0].replace("Beratung", "Aussprache über"), "Wir müssen uns vor dieser Aufgabe wirklich "
              "nicht fürchten. Schiß haben wir nicht. Die Bürgerinnen und Bürger können nichts dafür.", SPEECH[3]]
    web.pages["/edited"] = Answer(german_page(edited).encode())
    web.pages["/trap"] = Answer(german_page(["Haben Sie das gelesen?", "Wir fragen nicht.", "Der Schiß ist weg.",
                                             "Nicht wir, sondern die anderen."]).encode())
    web.pages["/bomb"] = Answer(gzip.compress(b"<html><body>" + b"a" * (6 * 1024 * 1024) + b"</body></html>"),
                                headers=(("Content-Encoding", "gzip"),))
    cases = [("error", "fetch_error", "HTTP 500"), ("soft404", "not_found", ""), ("to-home", "not_found", ""),
             ("big", "found_url", "exact"), ("slow", "found_url", "exact"), ("edited", "found_url", "exact"),
             ("trap", "not_found", ""), ("bomb", "fetch_error", "too large")]
    line = {"left": "Schiß", "match": "haben", "right": "wir nicht ."}
    rows: list[dict[str, str]] = [dict(line, text_url=f"{web.url}/{path}") for path, _, _ in cases]
    rows.insert(3, {"left": "Schiß", "right": "wir nicht .", "text_url": f"{web.url}/big"})  # no "match"
    cases.insert(3, ("big", "bad_row", "no 'match'"))
    source = tmp_path / "web.ndjson"
    source.write_text(json.dumps({"metadata": {"query": "^haben", "corpus": "web"}}) + "\n"
                      + "".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    done = run_calf(tmp_path, "web.ndjson", "-o", "out.tsv")
    assert done.returncode == 0, done.stderr
    meta, written = read_output(tmp_path / "out.tsv")
    assert [(r["calf_status"], r["calf_detail"][: len(reason)]) for r, (_, _, reason) in
            zip(written, cases, strict=True)] == [(status, reason) for _, status, reason in cases]
    found = {row["text_url"].rsplit("/", 1)[1]: row for row in written if row["calf_status"] == "found_url"}
    assert found["big"]["calf_left"].endswith("Wir müssen uns vor dieser Aufgabe nicht fürchten.")
    assert found["edited"]["calf_left"].endswith("vor dieser Aufgabe wirklich nicht fürchten.")
    assert found["edited"]["calf_right"].startswith("Die Bürgerinnen und Bürger können nichts dafür.")
    assert meta["export.query"] == "^haben"
