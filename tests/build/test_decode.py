"""cowbird.build.decode: a page's bytes to text as a browser decodes them, NFC, no control characters."""

from __future__ import annotations

import gzip
import random

import pytest

from cowbird.build.decode import choose_encoding, clean_text, decode_html
from cowbird.build.records import Rejected

GERMAN = "Die Straße über den Fluß führt zur Bäckerei – „frische Brötchen“ für 2 €."
FRENCH = "À côté de l’église, le café où l’on sert des crêpes et du thé."
RUSSIAN = "Городской совет во вторник решил отложить ремонт начальной школы на год, потому что стоимость работ выросла."


def page(text: str, head: str = "") -> str:
    return f"<html><head>{head}<title>Test</title></head><body><p>{text}</p></body></html>"


def test_utf8_declared_in_the_header() -> None:
    body = page(GERMAN).encode("utf-8")
    assert decode_html(body, "text/html; charset=utf-8") == page(GERMAN)
    assert choose_encoding(body, "text/html; charset=UTF-8") == ("utf-8", "header")


def test_the_header_wins_over_the_meta() -> None:
    body = page(GERMAN, '<meta charset="utf-8">').encode("cp1252")
    assert choose_encoding(body, "text/html; charset=windows-1252") == ("cp1252", "header")
    assert decode_html(body, "text/html; charset=windows-1252") == page(GERMAN, '<meta charset="utf-8">')


@pytest.mark.parametrize("meta", [
    '<meta charset="windows-1252">',
    "<meta charset=iso-8859-1>",
    '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1">',
    "<META HTTP-EQUIV='content-type' CONTENT='text/html;charset=latin1'>",
])
def test_meta_declarations_and_latin1_meaning_windows_1252(meta: str) -> None:
    text = GERMAN + " „Zitat“ … ‰"  # windows-1252's typographic characters in 0x80-0x9F
    body = page(text, meta).encode("cp1252")
    encoding, how = choose_encoding(body, "text/html")
    assert (encoding, how) == ("cp1252", "meta")
    assert decode_html(body, "text/html") == page(text, meta)


def test_labels_as_the_web_means_them() -> None:
    assert choose_encoding(b"<p>a</p>", "text/html; charset=us-ascii")[0] == "cp1252"
    assert choose_encoding(b"<p>a</p>", "text/html; charset=gb2312")[0] == "gb18030"
    assert choose_encoding(b"<p>a</p>", "text/html; charset=iso-8859-9")[0] == "cp1254"
    assert choose_encoding(b"<p>a</p>", "text/html; charset=shift_jis")[0] == "cp932"
    assert choose_encoding(b"<p>a</p>", 'text/html; charset="koi8-r"')[0] == "koi8-r"


def test_an_unknown_label_falls_through_to_the_meta() -> None:
    body = page(GERMAN, '<meta charset="utf-8">').encode("utf-8")
    assert choose_encoding(body, "text/html; charset=x-no-such-thing") == ("utf-8", "meta")


def test_byte_order_marks_win_over_every_declaration() -> None:
    text = page(GERMAN)
    assert decode_html(b"\xef\xbb\xbf" + text.encode("utf-8"), "text/html; charset=iso-8859-1") == text
    assert decode_html(b"\xff\xfe" + text.encode("utf-16-le"), "text/html; charset=utf-8") == text
    assert decode_html(b"\xfe\xff" + text.encode("utf-16-be"), None) == text
    assert choose_encoding(b"\xff\xfe" + text.encode("utf-16-le"), None)[1] == "bom"


def test_undeclared_pages_are_detected() -> None:
    assert decode_html(page(GERMAN).encode("utf-8"), None) == page(GERMAN)
    assert decode_html(page(GERMAN).encode("cp1252"), "text/html") == page(GERMAN)
    assert decode_html(page(FRENCH).encode("cp1252"), None) == page(FRENCH)
    russian = page(RUSSIAN * 3)
    assert decode_html(russian.encode("cp1251"), None) == russian
    assert choose_encoding(russian.encode("cp1251"), None) == ("cp1251", "detected")
    assert choose_encoding(page("plain ascii").encode("ascii"), None) == ("utf-8", "detected")


def test_a_page_that_says_utf8_but_is_windows_1252() -> None:
    body = page(GERMAN, '<meta charset="utf-8">').encode("cp1252")
    assert decode_html(body, "text/html; charset=utf-8") == page(GERMAN, '<meta charset="utf-8">')
    assert choose_encoding(body, "text/html; charset=utf-8") == ("cp1252", "header says UTF-8, bytes are not")


def test_a_page_that_says_latin1_but_is_utf8() -> None:
    body = page(GERMAN, '<meta charset="iso-8859-1">').encode("utf-8")
    assert decode_html(body, None) == page(GERMAN, '<meta charset="iso-8859-1">')
    assert choose_encoding(body, "text/html; charset=ISO-8859-1") == ("utf-8", "header says cp1252, bytes are UTF-8")


def test_a_utf8_page_with_one_stray_byte_stays_utf8() -> None:
    body = page(GERMAN * 5).encode("utf-8")
    at = body.index(b"Br")
    broken = body[:at] + b"\xe4" + body[at:]  # one windows-1252 "ä" in a UTF-8 page
    text = decode_html(broken, "text/html; charset=utf-8")
    assert text.count("\ufffd") == 1 and GERMAN in text
    cut = body[: body.rindex("ß".encode()) + 1]  # cut in the middle of the last "ß"
    assert decode_html(cut, None).endswith("den Flu\ufffd")


def test_nfc_line_ends_and_control_characters() -> None:
    decomposed = "Cafe\u0301 und Mu\u0308ller"
    assert decode_html(page(decomposed).encode("utf-8"), None) == page("Café und Müller")
    raw = "<p>one\r\ntwo\rthree\x00\x01\x07four\x0bfive\x0csix\x7fseven\x85\x9feight\ttab</p>"
    assert decode_html(raw.encode("utf-8"), "text/html; charset=utf-8") == (
        "<p>one\ntwo\nthreefour five sixseveneight\ttab</p>")
    assert clean_text("a\u200bb\u00adc") == "a\u200bb\u00adc"  # format characters are the blocks' business
    polish = "Zażółć gęślą jaźń"
    body = b"<p>" + polish.encode("iso-8859-2") + b"\x85\x9f\x01</p>"  # C1 and C0 controls in ISO-8859-2
    assert decode_html(body, "text/html; charset=iso-8859-2") == f"<p>{polish}</p>"
    assert decode_html(b"\xff\xfe" + "<p>a\x85b\x01c\r\n</p>".encode("utf-16-le"), None) == "<p>abc\n</p>"


@pytest.mark.parametrize(("body", "what"), [
    (b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj", "a PDF"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "a PNG image"),
    (b"\xff\xd8\xff\xe0\x00\x10JFIF", "a JPEG image"),
    (b"GIF89a\x01\x00\x01\x00", "a GIF image"),
    (b"PK\x03\x04\x14\x00\x00\x00", "a ZIP archive"),
    (gzip.compress(b"<html>compressed twice</html>"), "gzip data"),
])
def test_binary_payloads_are_not_text(body: bytes, what: str) -> None:
    with pytest.raises(Rejected) as caught:
        decode_html(body, "text/html")
    assert (caught.value.stage, caught.value.reason, caught.value.detail) == ("decode", "not text", what)


def test_random_bytes_and_nul_bytes_are_not_text() -> None:
    noise = random.Random(66).randbytes(20000)
    with pytest.raises(Rejected, match="decode: not text"):
        decode_html(noise, "text/html; charset=utf-8")
    with pytest.raises(Rejected, match="NUL bytes"):
        decode_html(b"<html>" + b"\x00" * 500 + b"</html>", None)


def test_a_few_stray_control_bytes_do_not_reject_a_page() -> None:
    body = page(GERMAN * 20).encode("utf-8")
    body = body[:100] + b"\x00\x08" + body[100:]
    assert GERMAN in decode_html(body, None)


def test_empty_bodies() -> None:
    for body in (b"", b"   \n\t "):
        with pytest.raises(Rejected) as caught:
            decode_html(body, "text/html")
        assert caught.value.reason == "empty page"


def test_a_large_page_decodes() -> None:
    body = page(GERMAN * 100_000).encode("cp1252")  # 7 MB, undeclared
    text = decode_html(body, None)
    assert text.startswith("<html>") and text.count(GERMAN) == 100_000
