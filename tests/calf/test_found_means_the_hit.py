"""Calf reports found only what it found: a line whose hit (the match) was replaced on the page — the
sentence otherwise intact — is ``changed_*`` with the words that differ, never ``found_*``, live or
archived; CDX answers read row by row (a row cut off is skipped, the rest kept, and such an answer
is not cached as lasting); an undeclared German windows-1252 page read as windows-1252, not
mac_roman; captures after the line's date tried first, and more than ``captures`` when those fail,
at the archive's rate; contexts that start and end at the sentence's own edges. Real HTTP on
loopback: the pages (``tests/calf/web.py``) and the archives (``tests/calf/archive_web.py``)."""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner

from cowbird.calf.archives import Archive, ArchiveCache, ArchiveError, read_cdx
from cowbird.calf.cli import main
from cowbird.calf.core import CHANGED, FOUND, Outcome, Reconstructor, core_of
from cowbird.calf.fetching import Fetcher, decode
from cowbird.core.archives import ArchiveSettings
from tests.calf.archive_web import LocalArchives, Stored
from tests.calf.web import Answer, LocalWeb, html

pytestmark = [pytest.mark.anyio, pytest.mark.loopback]

CRAWLED = dt.datetime(2013, 5, 17, tzinfo=dt.UTC)
BEFORE = "Vorher steht ein anderer Satz auf der Seite."
AFTER = "Danach folgt noch ein Satz mit anderen Worten."

# (left, match, right as the corpus has them; the word the page has instead of the match)
CHANGED_HITS = [
    ("Die Regierung hat den", "Antrag", "der Opposition gestern im Ausschuss abgelehnt .", "Vorschlag"),
    ("Wir haben im vergangenen Jahr mehr als", "zweitausend", "neue Wohnungen in der Stadt gebaut .", "dreitausend"),
    ("Der Minister sagte , die", "Steuern", "würden im nächsten Jahr sicher nicht erhöht werden .", "Abgaben"),
    ("The committee met on Tuesday and approved the new", "budget", "for the coming school year .", "schedule"),
    ("She told reporters that the old", "bridge", "would be closed for repairs until the end of May .", "tunnel"),
    ("After the storm , hundreds of", "volunteers", "helped to clear the streets and repair the roofs .", "soldiers"),
    (
        "Die Bürger der Gemeinde haben sich in einer",
        "Umfrage",
        "klar für den Bau der neuen Schule ausgesprochen .",
        "Abstimmung",
    ),
    (
        "The museum will open a new",
        "exhibition",
        "of paintings from the early twentieth century next month .",
        "gallery",
    ),
    (
        "Meine Damen und Herren , wir",
        "lehnen",
        "diesen Gesetzentwurf der Bundesregierung aus guten Gründen ab .",
        "prüfen",
    ),
]


def detokenized(tokens: str) -> str:
    """Tokens as a page writes them: no space before a comma or a full stop."""
    return tokens.replace(" ,", ",").replace(" .", ".")


def page_with(sentence: str) -> str:
    return html(
        f"<h1>Bericht</h1><p>{BEFORE} {sentence} {AFTER}</p>"
        "<p>Ein weiterer Absatz mit genug Wörtern, um als Text der Seite zu zählen.</p>"
    )


def sentence_of(left: str, match: str, right: str) -> str:
    return " ".join((left, match, right))


def cdx(archives: LocalArchives, path: str = "ia", **extra: Any) -> ArchiveSettings:
    return ArchiveSettings.model_validate(
        {
            "name": path,
            "kind": "cdx",
            "cdx": f"{archives.url}/{path}/cdx",
            "replay": f"{archives.url}/ia/web/",
            "rate": 50,
            "retries": 0,
            **extra,
        }
    )


async def reconstruct(
    url: str,
    sentence: str,
    core: tuple[int, int] | None = None,
    settings: tuple[ArchiveSettings, ...] = (),
    when: dt.datetime | None = CRAWLED,
    cache: Path | None = None,
) -> Outcome:
    async with Fetcher(delay=0.0, timeout=2.0, retries=0, respect_robots=False) as fetch, httpx.AsyncClient() as client:
        kept = ArchiveCache(cache) if cache else None
        calf = Reconstructor(
            fetch, None, client, context_chars=80, archives=[Archive(s, client, kept) for s in settings]
        )
        return await calf.line(url, sentence, core=core, when=when)


# ------------------------------------------------------------------------------- a changed hit


async def test_a_sentence_whose_hit_was_replaced_on_the_live_page_is_changed_never_found(web: LocalWeb) -> None:
    """Each line's match was replaced on its page, the sentence otherwise intact: 7 of 8 such lines
    were ``found_url`` (score 84–96, "1 of 11 words differ") with the context of a sentence without
    the word searched for. Every one is ``changed_url`` now, naming the hit and the page's word."""
    outcomes = []
    for k, (left, match, right, instead) in enumerate(CHANGED_HITS):
        url = web.page(f"/changed/{k}", page_with(detokenized(sentence_of(left, instead, right))))
        outcomes.append(await reconstruct(url, sentence_of(left, match, right), core_of(left, match)))
    assert [o.status for o in outcomes] == ["changed_url"] * len(CHANGED_HITS), outcomes
    for outcome, (left, match, right, instead) in zip(outcomes, CHANGED_HITS, strict=True):
        words = sum(1 for token in sentence_of(left, match, right).split() if token.isalnum())
        assert outcome.detail == f'the hit "{match}" is "{instead}" on the page; 1 of {words} words differ', outcome
        assert outcome.page_text == detokenized(sentence_of(left, instead, right))
        assert outcome.source == "live" and outcome.score is not None and outcome.score < 100
    # the same pages: the line as the page has it is found, and so is one with another word than the hit edited
    left, match, right, instead = CHANGED_HITS[0]
    url = f"{web.url}/changed/0"
    same = await reconstruct(url, sentence_of(left, instead, right), core_of(left, instead))
    assert (same.status, same.score, same.detail) == ("found_url", 100.0, "exact")
    edited = await reconstruct(
        url, sentence_of(left, instead, right.replace("gestern", "heute")), core_of(left, instead)
    )
    assert (edited.status, edited.detail) == ("found_url", "1 of 11 words differ")
    assert edited.right.startswith(AFTER) and edited.left.endswith(BEFORE)


async def test_a_changed_hit_in_a_capture_is_changed_and_the_older_capture_with_the_hit_is_found(
    web: LocalWeb, archives: LocalArchives
) -> None:
    """The live page and the capture after the crawl have another word where the hit was; the capture
    before the crawl has the hit: that one is found, in the archive. Where no capture has the hit,
    the line is ``changed_archive``, with the capture it was seen in."""
    left, match, right, instead = CHANGED_HITS[3]
    line, core = sentence_of(left, match, right), core_of(left, match)
    web.page("/budget", page_with(detokenized(sentence_of(left, instead, right))))
    url = f"{web.url}/budget"
    archives.capture(
        url,
        Stored(
            dt.datetime(2013, 6, 1, tzinfo=dt.UTC), page_with(detokenized(sentence_of(left, instead, right))).encode()
        ),
    )
    archives.capture(url, Stored(dt.datetime(2013, 4, 1, tzinfo=dt.UTC), page_with(detokenized(line)).encode()))
    found = await reconstruct(url, line, core, (cdx(archives),))
    assert (found.status, found.capture_date, found.score) == ("found_archive", "2013-04-01T00:00:00Z", 100.0), found
    gone = f"{web.url}/gone"  # 404 live; its one capture has the other word
    archives.capture(
        gone,
        Stored(
            dt.datetime(2013, 6, 1, tzinfo=dt.UTC), page_with(detokenized(sentence_of(left, instead, right))).encode()
        ),
    )
    changed = await reconstruct(gone, line, core, (cdx(archives),))
    assert (changed.status, changed.source, changed.capture_date) == (
        "changed_archive",
        "ia",
        "2013-06-01T00:00:00Z",
    ), changed
    assert (
        changed.detail == 'the hit "budget" is "schedule" on the page; 1 of 15 words differ; HTTP 404; '
        "ia: not in 1 capture (2013-06-01)"
    )


def test_the_command_counts_changed_lines_apart_from_found_ones(web: LocalWeb, tmp_path: Path) -> None:
    """An export (left, match, right) through the command: each changed line's ``calf_status`` is
    ``changed_url``, and the summary counts it apart from the lines found."""
    rows = []
    for k, (left, match, right, instead) in enumerate(CHANGED_HITS):
        url = web.page(f"/cli/{k}", page_with(detokenized(sentence_of(left, instead, right))))
        rows.append({"left": left, "match": match, "right": right, "text_url": url})
    left, match, right, _ = CHANGED_HITS[0]
    rows.append(
        {
            "left": left,
            "match": match,
            "right": right,
            "text_url": web.page("/cli/kept", page_with(detokenized(sentence_of(left, match, right)))),
        }
    )
    source = tmp_path / "lines.tsv"
    with source.open("w", encoding="utf-8", newline="") as out:
        writer = csv.DictWriter(out, ["left", "match", "right", "text_url"], delimiter="\t")
        writer.writeheader()
        writer.writerows(rows)
    done = CliRunner().invoke(
        main, [str(source), "-o", str(tmp_path / "out.tsv"), "--delay", "0", "--timeout", "2", "--ignore-robots"]
    )
    assert done.exit_code == 0, done.output
    text = (tmp_path / "out.tsv").read_text(encoding="utf-8")
    skip = int(text.split("skiprows=")[1].split(";")[0])
    written = list(csv.DictReader(io.StringIO("".join(text.splitlines(keepends=True)[skip:])), delimiter="\t"))
    assert [r["calf_status"] for r in written] == ["changed_url"] * len(CHANGED_HITS) + ["found_url"]
    assert f"1 found (10%); found_url 1, changed_url {len(CHANGED_HITS)}" in " ".join(done.output.split())
    assert set(FOUND).isdisjoint(CHANGED)


# ------------------------------------------------------------------------------- CDX answers


def test_cdx_answers_are_read_row_by_row() -> None:
    """A row cut off in a JSON-lines answer, a JSON table cut off at its end or with a broken row, a
    plain line without its fields: each skipped and counted, every other row kept."""
    lines = (
        '{"timestamp": "20130101000000", "url": "http://a/", "status": "200"}\n'
        '{"timestamp": "20130601000000", "url": "http://a/", "sta\n'
        '{"timestamp": "20130901000000", "url": "http://a/", "status": "200"}\n'
    )
    rows, bad = read_cdx(lines)
    assert ([r["timestamp"] for r in rows], bad) == (["20130101000000", "20130901000000"], 1)
    table = (
        '[["urlkey","timestamp","original"],\n["k","20130101000000","http://a/"],\n'
        '["k","2013060100\n["k","20130901000000","http://a/"]]'
    )
    rows, bad = read_cdx(table)
    assert ([r["timestamp"] for r in rows], bad) == (["20130101000000", "20130901000000"], 1)
    rows, bad = read_cdx('[["urlkey","timestamp","original"],\n["k","20130101000000","http://a/"],\n["k","2013')
    assert ([r["timestamp"] for r in rows], bad) == (["20130101000000"], 1)
    rows, bad = read_cdx("k 20130101000000 http://a/ text/html 200 D1 12\nk 2013060\n")
    assert ([r["timestamp"] for r in rows], bad) == (["20130101000000"], 1)


@pytest.mark.parametrize("flavour", ["pywb", "ia"])
async def test_a_cut_off_cdx_row_loses_only_itself_and_is_not_cached(
    web: LocalWeb, archives: LocalArchives, tmp_path: Path, flavour: str
) -> None:
    """pywb's JSON lines with one line cut off (and the Internet Archive's table cut off after that
    row) lost every capture of the URL, and the failure was cached for good: the other rows are
    kept, the line found in one of them, and the look-up asked again next time."""
    url = f"{web.url}/cdx-{flavour}"
    line = sentence_of(*CHANGED_HITS[4][:3])
    holding = 8 if flavour == "pywb" else 6  # the table ends in its second row: the line is in the first
    for month in (6, 7, 8):
        body = detokenized(line) if month == holding else f"Im Monat {month} stand hier etwas anderes."
        archives.capture(url, Stored(dt.datetime(2013, month, 1, tzinfo=dt.UTC), page_with(body).encode()))
    archives.cut_rows = {1}  # the second capture's row
    archives.cut_end = flavour == "ia"
    cache = tmp_path / "archives"
    found = await reconstruct(url, line, core_of(*CHANGED_HITS[4][:2]), (cdx(archives, flavour),), cache=cache)
    assert found.status == "found_archive", found
    async with httpx.AsyncClient() as client:
        archive = Archive(cdx(archives, flavour), client, ArchiveCache(cache))
        listed = await archive.captures(url, CRAWLED, dt.timedelta(days=1095))
        assert archive.unreadable == 1 and archive.unreadable_in[url] == 1
        assert [c.date[:10] for c in listed] == (["2013-06-01", "2013-08-01"] if flavour == "pywb" else ["2013-06-01"])
    assert len(archives.asked(f"/{flavour}/cdx")) == 2  # asked again: the answer was cut off, so not kept


async def test_a_cdx_answer_of_only_a_cut_off_row_is_a_passing_failure(
    web: LocalWeb, archives: LocalArchives, tmp_path: Path
) -> None:
    url = f"{web.url}/cut"
    line = sentence_of(*CHANGED_HITS[5][:3])
    archives.capture(url, Stored(dt.datetime(2013, 6, 1, tzinfo=dt.UTC), page_with(detokenized(line)).encode()))
    archives.cut_rows = {0}
    cache = tmp_path / "archives"
    failed = await reconstruct(url, line, core_of(*CHANGED_HITS[5][:2]), (cdx(archives, "pywb"),), cache=cache)
    assert failed.status == "fetch_error", failed
    assert "pywb: the CDX server's answer is not CDX (1 unreadable row, perhaps cut off)" in failed.detail
    archives.cut_rows = set()  # the archive answers whole again: the failure was not kept
    found = await reconstruct(url, line, core_of(*CHANGED_HITS[5][:2]), (cdx(archives, "pywb"),), cache=cache)
    assert found.status == "found_archive", found
    async with httpx.AsyncClient() as client:
        with pytest.raises(ArchiveError, match="perhaps cut off"):
            archives.cut_rows = {0}
            await Archive(cdx(archives, "pywb"), client).captures(url, CRAWLED, dt.timedelta(days=1095))


async def test_a_line_not_in_the_captures_says_how_many_cdx_rows_were_unreadable(
    web: LocalWeb, archives: LocalArchives
) -> None:
    url = f"{web.url}/none"
    for month in (6, 7, 8):
        archives.capture(
            url,
            Stored(
                dt.datetime(2013, month, 1, tzinfo=dt.UTC),
                page_with(f"Im Monat {month} stand hier etwas anderes.").encode(),
            ),
        )
    archives.cut_rows = {1}
    outcome = await reconstruct(
        url, sentence_of(*CHANGED_HITS[6][:3]), core_of(*CHANGED_HITS[6][:2]), (cdx(archives, "pywb"),)
    )
    assert outcome.status == "not_found"
    assert "pywb: not in 2 captures (2013-06-01, 2013-08-01); 1 unreadable CDX row skipped" in outcome.detail


# ------------------------------------------------------------------------------- an undeclared German page


GERMAN = (
    "<p>Wir wollen die beschäftigungsintensiven Betriebe entlasten, damit die Arbeitslosigkeit sinkt.</p>"
    "<p>Das Gesetz über die Förderung der Arbeit ist gut.</p>"
)


async def test_an_undeclared_windows_1252_german_page_is_read_as_windows_1252(web: LocalWeb) -> None:
    """charset-normalizer ranks this German windows-1252 page, which declares nothing, as mac_roman
    ("besch‰ftigungsintensiven", "¸ber"): a browser reading German reads windows-1252."""
    body = f"<html><head><title>Rede</title></head><body>{GERMAN}</body></html>".encode("cp1252")
    encoding, text = decode(body, "text/html")
    assert (encoding, "beschäftigungsintensiven" in text, "über die Förderung" in text) == ("cp1252", True, True)
    web.pages["/rede"] = Answer(body, content_type="text/html")  # no charset in the header, none in the page
    line = "Wir wollen die beschäftigungsintensiven Betriebe entlasten , damit die Arbeitslosigkeit sinkt ."
    found = await reconstruct(f"{web.url}/rede", line, (3, 4))
    assert (found.status, found.score) == ("found_url", 100.0), found
    assert (
        found.page_text == "Wir wollen die beschäftigungsintensiven Betriebe entlasten, damit die "
        "Arbeitslosigkeit sinkt."
    )
    assert found.right == "Das Gesetz über die Förderung der Arbeit ist gut."


# ------------------------------------------------------------------------------- which captures


def at(month: int, day: int) -> dt.datetime:
    return dt.datetime(2013, month, day, 12, tzinfo=dt.UTC)


async def test_captures_after_the_last_modification_are_tried_first(web: LocalWeb, archives: LocalArchives) -> None:
    """The line's page was last modified on 17 May 2013: the three captures before it, nearer, are the
    page before that modification; of the 4 nearest only one is after it, a maintenance page. The
    captures after the date come first, and the line is in the second."""
    url = f"{web.url}/modified"
    line = sentence_of(*CHANGED_HITS[7][:3])
    for month, day in ((5, 10), (5, 1), (4, 20)):
        archives.capture(url, Stored(at(month, day), page_with(f"Die alte Fassung vom {day}. {month}.").encode()))
    archives.capture(url, Stored(at(6, 20), page_with("Wegen Wartungsarbeiten nicht erreichbar.").encode()))
    archives.capture(url, Stored(at(7, 15), page_with(detokenized(line)).encode()))
    outcome = await reconstruct(url, line, core_of(*CHANGED_HITS[7][:2]), (cdx(archives),))
    assert (outcome.status, outcome.capture_date) == ("found_archive", "2013-07-15T12:00:00Z"), outcome
    assert [p.split("/ia/web/")[1][:8] for p in archives.asked("/ia/web/")] == ["20130620", "20130715"]


async def test_more_captures_are_tried_when_the_first_do_not_hold_the_line_at_the_archive_s_rate(
    web: LocalWeb, archives: LocalArchives
) -> None:
    """Six captures after the date do not hold the line (three of them the same bytes, tried once), the
    seventh does: found, past the 4 captures that were all that was tried; every request to the
    archive at most ``rate`` a second."""
    url = f"{web.url}/many"
    line = sentence_of(*CHANGED_HITS[8][:3])
    for day in (18, 19, 20):
        archives.capture(url, Stored(at(5, day), page_with("Wegen Wartungsarbeiten nicht erreichbar.").encode()))
    for day in (21, 22, 23):
        archives.capture(url, Stored(at(5, day), page_with(f"Heute, am {day}. Mai, nur Neuigkeiten.").encode()))
    archives.capture(url, Stored(at(5, 24), page_with(detokenized(line)).encode()))
    settings = cdx(archives, rate=10)
    outcome = await reconstruct(url, line, core_of(*CHANGED_HITS[8][:2]), (settings,))
    assert (outcome.status, outcome.capture_date) == ("found_archive", "2013-05-24T12:00:00Z"), outcome
    asked = [p.split("/ia/web/")[1][:8] for p in archives.asked("/ia/web/")]
    assert asked == ["20130518", "20130521", "20130522", "20130523", "20130524"]
    times = [moment for moment, path, _ in archives.requests]
    assert all(later - earlier >= 1 / 10 - 0.01 for earlier, later in zip(times, times[1:], strict=False))


# ------------------------------------------------------------------------------- the sentence's edges


@pytest.mark.parametrize(
    ("page", "line", "matched"),
    [
        ("Wir haben dafür nichts getan .", "Wir haben dafür nichts getan .", "Wir haben dafür nichts getan ."),
        ("Wir haben dafür nichts getan.", "Wir haben dafür nichts getan", "Wir haben dafür nichts getan."),
        ("„Wir haben dafür nichts getan.“", "Wir haben dafür nichts getan .", "„Wir haben dafür nichts getan.“"),
        ("(Wir haben dafür nichts getan.)", "Wir haben dafür nichts getan .", "(Wir haben dafür nichts getan.)"),
        ("Wir haben dafür nichts getan ! “", "Wir haben dafür nichts getan ! “", "Wir haben dafür nichts getan ! “"),
        (
            "„ Wir haben dafür nichts getan “ .",
            "„ Wir haben dafür nichts getan “ .",
            "„ Wir haben dafür nichts getan “ .",
        ),
    ],
)
async def test_the_context_starts_and_ends_at_the_sentence_s_own_edges(
    web: LocalWeb, page: str, line: str, matched: str
) -> None:
    """A page that writes its text tokenized (a space before the full stop) left the line's own full
    stop at the start of the right context, and so did a line without its full stop; quotes or
    brackets around the sentence on the page were left on either side."""
    url = web.page("/edges", html(f"<p>Vorher ein Satz . {page} Danach ein Satz .</p>"))
    outcome = await reconstruct(url, line, (1, 2) if line[0] != "„" else (2, 3))
    assert outcome.status == "found_url", outcome
    assert (outcome.left, outcome.page_text, outcome.right) == ("Vorher ein Satz .", matched, "Danach ein Satz .")
