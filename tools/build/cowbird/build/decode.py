"""A page's bytes to text as a browser decodes them (the WHATWG Encoding Standard's sniffing), in NFC.

The order is the browser's: a byte order mark; then the charset of the HTTP Content-Type header;
then a ``<meta charset>`` or ``<meta http-equiv="Content-Type">`` found by the prescan of the page's
start (the standard's 1024 bytes; a declaration a little later, up to 4 KB, is taken too, as Chrome
does); then, for a page that declares nothing, detection: UTF-8 when the bytes are UTF-8, else what
charset-normalizer makes of them among the web's encodings, windows-1252 (the web's default for
Western pages) whenever it reads the bytes as cleanly as the best guess. Labels mean what they mean
on the web (w3lib's table): ISO-8859-1, latin1 and US-ASCII are windows-1252, GB2312 is GB18030,
Shift_JIS is windows-31J, ISO-8859-9 is windows-1254.

Declarations that the bytes contradict are not followed where the bytes tell: a page that says UTF-8
but whose bytes are mostly not UTF-8 is detected (a windows-1252 page served with a UTF-8 header, a
common server default); a page that says a single-byte encoding (ISO-8859-1, windows-1252 ...) but
whose non-ASCII bytes are all well-formed UTF-8 is UTF-8 (the chance that windows-1252 text is valid
UTF-8 is nil beyond a few bytes). A UTF-8 page with a stray broken byte or cut in the middle of a
character stays UTF-8, the broken bytes U+FFFD, as a browser shows them.

The text is then NFC; line ends are ``\\n``; control characters other than tab and newline (C0 and
C1, DEL) are removed (vertical tab and form feed become a space, as HTML takes them for white
space). Binary payloads (a PDF, an image, an archive, bytes with NULs or many control bytes, or bytes
that decode to mostly U+FFFD) raise ``Rejected("decode", "not text")``; an empty body raises
``Rejected("decode", "empty page")``.
"""

from __future__ import annotations

import codecs
import re
import unicodedata

from w3lib.encoding import html_body_declared_encoding, http_content_type_encoding, read_bom, resolve_encoding

from cowbird.build.records import Rejected
from cowbird.core.html import guessed_encoding

PRESCAN_BYTES = 4096
"""How much of the page's start is searched for a ``<meta>`` declaration (WHATWG: 1024; Chrome reads on)."""
SNIFF_BYTES = 8192
"""How much of the page's start is looked at to tell text from binary data."""
DETECT_BYTES = 65536
"""How much of an undeclared, non-UTF-8 page charset-normalizer reads."""
BINARY_SHARE = 0.01
"""Share of the sniffed bytes that may be binary control bytes (WHATWG's "binary data bytes": NUL and the C0
controls other than tab, newline, form feed, carriage return, escape) before a page is not text."""
BINARY_MINIMUM = 8
"""Binary control bytes a page may have whatever its length (a short page with a stray NUL is still text)."""
REPLACEMENT_SHARE = 0.1
"""Share of a decoded page's characters that may be U+FFFD before it is taken for binary data."""
SIGNATURES = (
    (b"%PDF-", "a PDF"), (b"\x89PNG\r\n\x1a\n", "a PNG image"), (b"GIF87a", "a GIF image"),
    (b"GIF89a", "a GIF image"), (b"\xff\xd8\xff", "a JPEG image"), (b"RIFF", "a RIFF file (WebP, WAV, AVI)"),
    (b"PK\x03\x04", "a ZIP archive"), (b"\x1f\x8b", "gzip data"), (b"BZh", "bzip2 data"), (b"\xfd7zXZ\x00", "xz data"),
    (b"7z\xbc\xaf\x27\x1c", "a 7z archive"), (b"\x7fELF", "an executable"), (b"OggS", "an Ogg file"),
    (b"ID3", "an MP3 file"), (b"\x00\x00\x01\x00", "an icon"), (b"wOFF", "a web font"), (b"wOF2", "a web font"),
    (b"\x00asm", "WebAssembly"), (b"\xd0\xcf\x11\xe0", "an Office file"),
)  # fmt: skip
"""Magic numbers of the binary payloads a crawl brings under an HTML content type."""
WEB_ENCODINGS = (
    "utf_8", "cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258", "cp874",
    "iso8859_2", "iso8859_4", "iso8859_5", "iso8859_6", "iso8859_7", "iso8859_8", "iso8859_10", "iso8859_13",
    "iso8859_15", "iso8859_16", "koi8_r", "koi8_u", "shift_jis", "euc_jp", "iso2022_jp", "gb18030", "big5", "euc_kr",
)  # fmt: skip
"""The WHATWG Encoding Standard's encodings as charset-normalizer names them: an undeclared page is guessed
among these only (never as a DOS or Mac code page, which a browser never guesses)."""

_BINARY_BYTES = bytes([*range(0x00, 0x09), 0x0B, *range(0x0E, 0x1B), *range(0x1C, 0x20)])
_CONTROLS = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x9f]+")
_C1 = re.compile(r"[\x80-\x9f]+")
_BYTE_SPACES = bytes.maketrans(b"\x0b\x0c", b"  ")
_C0_BYTES = bytes([*range(0x00, 0x09), *range(0x0E, 0x20), 0x7F])
_UTF8_C1 = re.compile(rb"\xc2[\x80-\x9f]")
_C1_BYTES = bytes(range(0x80, 0xA0))
_NO_C1 = ("cp125", "cp874", "cp932", "cp949", "cp866", "gb18030", "gbk", "big5", "shift_jis", "euc", "koi8", "mac")
"""Codecs (name prefixes) that cannot give a C1 control character: the text needs no search for one."""
_SINGLE_BYTE = frozenset({
    "cp1250", "cp1251", "cp1252", "cp1253", "cp1254", "cp1255", "cp1256", "cp1257", "cp1258", "cp874", "cp437",
    "iso8859-1", "iso8859-2", "iso8859-3", "iso8859-4", "iso8859-5", "iso8859-6", "iso8859-7", "iso8859-8",
    "iso8859-9", "iso8859-10", "iso8859-11", "iso8859-13", "iso8859-14", "iso8859-15", "iso8859-16", "koi8-r", "koi8-u",
    "mac-roman", "mac-cyrillic", "cp866", "ascii", "latin-1",
})  # fmt: skip


def _codec(label: str | None) -> str | None:
    """The Python codec (its canonical name) a charset label means on the web, or None for an unknown label."""
    if not label:
        return None
    resolved = resolve_encoding(label)
    if resolved is None:
        return None
    try:
        return codecs.lookup(resolved).name
    except LookupError:
        return None


def _utf8_share(body: bytes) -> tuple[int, int]:
    """(well-formed non-ASCII characters, malformed bytes) of ``body`` read as UTF-8."""
    if body.isascii():
        return 0, 0
    text = body.decode("utf-8", errors="replace")
    replaced = text.count("\ufffd")
    bad = replaced - body.count(b"\xef\xbf\xbd")  # a real U+FFFD in the page is not a broken byte
    good = len(text) - len(text.encode("ascii", errors="ignore")) - replaced
    return max(0, good), max(0, bad)


def _mostly_utf8(body: bytes) -> bool:
    """Whether the page is UTF-8: no malformed byte, or more well-formed non-ASCII characters than broken bytes
    (a UTF-8 page with a stray byte of another encoding, or cut in the middle of a character)."""
    good, bad = _utf8_share(body)
    return bad == 0 or good > bad


def _detect(body: bytes) -> str:
    """The encoding of a page that declares none (or declares UTF-8 and is not): windows-1252 when it reads
    the bytes as cleanly as charset-normalizer's best guess among the web's encodings, else the best guess."""
    return _codec(guessed_encoding(body[:DETECT_BYTES], WEB_ENCODINGS)) or "cp1252"


def _binary(body: bytes) -> str | None:
    """What binary payload ``body`` is (``"a PDF"``), or None for bytes that may be text."""
    for signature, what in SIGNATURES:
        if body.startswith(signature):
            return what
    sample = body[:SNIFF_BYTES]
    binary = len(sample) - len(sample.translate(None, _BINARY_BYTES))
    if binary > max(BINARY_MINIMUM, BINARY_SHARE * len(sample)):
        nuls = sample.count(0)
        return f"{nuls} NUL bytes in the first {len(sample)}" if nuls else \
            f"{binary} control bytes in the first {len(sample)}"
    return None


def choose_encoding(body: bytes, content_type: str | None) -> tuple[str, str]:
    """(Python codec, how it was chosen) for a page: ``"bom"``, ``"header"``, ``"meta"``, ``"detected"``,
    or ``"header, bytes are UTF-8"`` and the like where the bytes overrule a declaration."""
    bom, _ = read_bom(body)
    if bom:
        return codecs.lookup(bom).name, "bom"
    declared, how = _codec(http_content_type_encoding(content_type)), "header"
    if declared is None:
        declared, how = _codec(html_body_declared_encoding(body[:PRESCAN_BYTES])), "meta"
        if declared is not None and declared.startswith("utf-16"):
            declared = "utf-8"  # WHATWG: a <meta> can only be read if the page is ASCII-compatible
    if declared is None:
        if _mostly_utf8(body):
            return "utf-8", "detected"
        return _detect(body), "detected"
    if declared == "utf-8" and not _mostly_utf8(body):
        return _detect(body), f"{how} says UTF-8, bytes are not"
    if declared in _SINGLE_BYTE:
        good, bad = _utf8_share(body)
        if good and not bad:
            return "utf-8", f"{how} says {declared}, bytes are UTF-8"
    return declared, how


def clean_text(text: str) -> str:
    """``text`` in NFC with ``\\n`` line ends and no control characters but tab and newline."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\x0b", " ").replace("\x0c", " ")
    text = _CONTROLS.sub("", text)
    return unicodedata.normalize("NFC", text)


def _decode(body: bytes, encoding: str) -> str:
    """``body`` decoded, its C0 control bytes removed (vertical tab and form feed a space) before decoding where
    the encoding is ASCII-compatible (bytes.translate is C; ISO-2022-JP needs its escape byte), C1 controls after."""
    if encoding.startswith(("utf-16", "utf-32", "iso2022")):
        return clean_text(body.decode(encoding, errors="replace"))
    body = body.translate(_BYTE_SPACES, _C0_BYTES)
    if encoding == "utf-8":
        body = _UTF8_C1.sub(b"", body)  # U+0080-U+009F: a lead byte C2 is never part of another character
    elif encoding.startswith(("iso8859", "latin")):
        body = body.translate(None, _C1_BYTES)  # the C1 controls are these bytes in every ISO 8859 part
    text = body.decode(encoding, errors="replace")
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if not encoding.startswith(("utf-8", "iso8859", "latin", *_NO_C1)):
        text = _C1.sub("", text)
    return unicodedata.normalize("NFC", text)


def decode_html(body: bytes, content_type: str | None) -> str:
    """The page's text, decoded as a browser decodes it, in NFC, without control characters.

    Raises ``Rejected("decode", "not text")`` for binary data (the detail says what it looked like) and
    ``Rejected("decode", "empty page")`` for a body with nothing in it.
    """
    if not body.strip():
        raise Rejected("decode", "empty page", f"{len(body)} bytes of white space" if body else "no bytes")
    encoding, _ = choose_encoding(body, content_type)
    if not encoding.startswith(("utf-16", "utf-32")):
        what = _binary(body)
        if what is not None:
            raise Rejected("decode", "not text", what)
    text = _decode(body, encoding)
    if text.startswith("\ufeff"):
        text = text[1:]
    undecodable = text.count("\ufffd")
    if undecodable > REPLACEMENT_SHARE * len(text):
        raise Rejected("decode", "not text", f"{undecodable} of {len(text)} characters undecodable as {encoding}")
    return text
