"""Helpers shared by the tests and the benchmarks: where things are, the test corpora, free ports,
and the rule for the reference data.

The rule: tests that need ``../shared/reference`` skip with a message when it is missing — except
under CI (``CI=true``), where a missing reference is a failure, so that parity is never skipped
silently where it counts.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import threading
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import httpx
import pytest

from cowbird.store import EncodeOptions, Encoder, EncodeResult, parse_s_declaration
from tests.clock import wait_until

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = Path(os.environ.get("COWBIRD_REFERENCE") or ROOT / ".." / "shared" / "reference").resolve()
"""The reference data (EWT, real CQP's hits, build-cqp.sh): ``COWBIRD_REFERENCE``, else ``../shared/reference``."""
SAMPLE_VRT = ROOT / "backend_node" / "cowbird" / "data" / "sample.vrt"
PARITY_QUERIES = REFERENCE / "parity" / "queries.tsv"

JsonObject = dict[str, Any]
"""A decoded JSON object (a response body, a manifest): the tests index into it and compare what
they find, so its values are typed as whatever the test reads them as."""

ParamValue = str | int | float | bool | None
Params = dict[str, ParamValue | Sequence[ParamValue]]
"""A request's query parameters as httpx takes them (a list: the parameter repeated); annotate a
dict of mixed values with it, which mypy would otherwise infer as ``dict[str, object]``."""

SAMPLE_P = ["word", "pos", "lemma"]
SAMPLE_S = ["text:0+id+genre+year+url", "s:0+id"]
EWT_P = ["word", "pos", "upos", "lemma"]
EWT_S = ["text:0+id+genre+host+year+date+url", "p:0", "s:0+id"]
"""The reference README's cwb-encode declarations for ewt.vrt."""
TRICKY_VRT = ROOT / "tests" / "fixtures" / "tricky.vrt"
"""A small invented corpus in EWT's shape, with the tokens that break downloads (written by
``tests/fixtures/make_tricky.py``): the download and analysis fidelity tests run on it without
``../shared``."""
TRICKY_P = list(EWT_P)
TRICKY_S = list(EWT_S)
TRICKY_TOKENS = 12_762
"""Tokens of tricky.vrt: its lines that are neither tags nor blank (``grep -vc '^<\\|^$'``)."""
TRICKY_SENTENCES = 1_199
"""Its <s> regions, each with its own id (``grep -c '^<s '``)."""
TRICKY_WORDS = [
    '"', "-", "=", "@", "+1", "None", "NA", "nan", "TRUE", "True", "FALSE", "null", "NULL", "N/A", "#N/A", "NaN",
    "inf", "-inf", "nil", "=SUM(A1:A3)", "+1+1", "-2+3", "@SUM(1)", "=1+2", "-1", "-0", "@Dana",
    '=HYPERLINK("http://evil.example/x?a=1","click")', "=cmd|'/C calc'!A0", ";", "a;b", ",c", "3,50", "1,000,000",
    "rock'n'roll", "'s", "'alive'", "'", "AT&T", "&", "Q&A", "<3", "<br>", "007", "1e5", "1E-3", "0x1F", "12:30",
    "3/4", "2020-01-02", "½", "10\u00a0000", "#hashtag", "#1", "C:\\Users\\me", "\\n", "C:\\", "\\", "_x0041_",
    "Grüße", "Straße", "STRASSE", "straße", "Ärger", "ÄRGER", "über", "Öl", "Müller", "MÜLLER", "café", "naïve",
    "NAÏVE", "Zoë", "Søren", "Łukasz", "Καλημέρα", "Αθήνα", "ΑΘΉΝΑ", "ΟΔΟΣ", "οδός", "Ελένη", "ΕΛΈΝΗ", "€", "🙂",
    "👍🏽", "👩\u200d💻", "❤️", "🇩🇪", "東京", "שלום", "…", "—", "„", "“", "”", "«", "»",
]
"""Tokens of tricky.vrt that break downloads in the wild, as the corpus holds them (entities decoded)."""


def in_ci() -> bool:
    return os.environ.get("CI", "").lower() == "true"


def unavailable(reason: str) -> NoReturn:
    """Skip the test saying why — or, under CI, fail it: CI must run everything."""
    if in_ci():
        pytest.fail(f"{reason}; under CI every tool and the reference data must be present", pytrace=False)
    pytest.skip(reason)


def require_reference() -> Path:
    """``../shared/reference``, or skip (fail under CI) when it is not there."""
    if not (REFERENCE / "ewt.vrt").is_file() or not PARITY_QUERIES.is_file():
        unavailable(f"reference data not found at {REFERENCE} (the shared/ folder beside the project, or set "
                    "COWBIRD_REFERENCE to where it is)")
    return REFERENCE


def reference_cqp() -> Path:
    """The real ``cqp`` (CWB 3.4.16): on PATH, or where ``build-cqp.sh`` builds it; else skip (fail
    under CI, where ``.ci/run`` builds it first)."""
    on_path = shutil.which("cqp")
    if on_path:
        return Path(on_path)
    home = Path(os.environ.get("COWBIRD_REFERENCE_CWB", Path.home() / ".cache" / "cowbird-reference-cwb"))
    if (home / "bin" / "cqp").is_file():  # cwb-ccc runs cqp from PATH: put it there for this run
        os.environ["PATH"] = f"{home / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        return home / "bin" / "cqp"
    unavailable("real CQP is not built here: run ../shared/reference/build-cqp.sh (about a minute)")


def parity_queries() -> list[Any]:
    """The 44 parity queries as ``pytest.param(query_id, query)``; without the reference data one
    placeholder whose test calls :func:`require_reference` and so skips (or fails under CI)."""
    if not PARITY_QUERIES.is_file():
        return [pytest.param("none", "", id="no-reference-data")]
    rows = []
    for line in PARITY_QUERIES.read_text(encoding="utf-8").splitlines():
        if line.startswith("q"):
            query_id, query = line.split("\t", 1)
            rows.append(pytest.param(query_id, query, id=query_id))
    return rows


def parity_hits(query_id: str) -> list[tuple[int, int]]:
    """Every (match, matchend) real CQP returned for a parity query on EWT."""
    text = (require_reference() / "parity" / "hits" / f"{query_id}.tsv").read_text()
    return [(int(a), int(b)) for a, b in (line.split("\t") for line in text.splitlines() if line.strip())]


@contextmanager
def served_in_thread(config: Any) -> Iterator[Any]:
    """A ``uvicorn.Server`` of ``config`` in a daemon thread, started (10 s at most), stopped at the end."""
    import threading

    import uvicorn

    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    wait_until(lambda: server.started, 10, "the server started")
    try:
        yield server
    finally:
        server.should_exit = True
        thread.join(10)


def free_ports(count: int) -> list[int]:
    """``count`` distinct TCP ports that are free on loopback right now."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def sample_options(data_dir: Path, registry_file: Path, **extra: Any) -> EncodeOptions:
    """The encoding the README uses for the sample corpus."""
    return EncodeOptions(
        input=SAMPLE_VRT, data_dir=data_dir, registry_file=registry_file, p_attributes=list(SAMPLE_P),
        s_attributes=[parse_s_declaration(d) for d in SAMPLE_S], charset="utf8", xml=True, skip_blank=True,
        strip_blanks=True, **extra,
    )


def ewt_options(data_dir: Path, registry_file: Path, **extra: Any) -> EncodeOptions:
    """``ewt.vrt`` encoded with the reference README's flags (what real cwb-encode was given)."""
    return EncodeOptions(
        input=require_reference() / "ewt.vrt", data_dir=data_dir, registry_file=registry_file,
        p_attributes=list(EWT_P), s_attributes=[parse_s_declaration(d) for d in EWT_S], charset="utf8",
        xml=True, skip_blank=True, strip_blanks=True, **extra,
    )


EWT_LONGEST_TEXT = 5_875
"""EWT's longest text, in tokens: no partition of EWT cut at texts can be smaller."""


def ewt_cut(where: Path, parts: int) -> EncodeResult:
    """EWT encoded into ``where`` cut at text boundaries into about ``parts`` partitions (the
    partitioner cuts before a ``<text>`` that would overflow; none smaller than its longest text)."""
    size = (require_reference() / "cwb" / "data" / "ewt" / "word.corpus").stat().st_size // 4
    limit = max(-(-size // parts) + 3_000 // parts, EWT_LONGEST_TEXT)
    return Encoder(ewt_options(where / "data", where / "registry" / "ewt", partition_tokens=limit)).run()


def tricky_options(data_dir: Path, registry_file: Path, **extra: Any) -> EncodeOptions:
    """``tricky.vrt`` encoded as ``ewt.vrt`` is (:func:`ewt_options`): XML entities decoded, blanks stripped."""
    return EncodeOptions(
        input=TRICKY_VRT, data_dir=data_dir, registry_file=registry_file, p_attributes=list(TRICKY_P),
        s_attributes=[parse_s_declaration(d) for d in TRICKY_S], charset="utf8", xml=True, skip_blank=True,
        strip_blanks=True, **extra,
    )


@dataclass(frozen=True)
class TrickyToken:
    word: str
    pos: str
    upos: str
    lemma: str
    text: dict[str, str]  # the <text> element's attributes
    s: int  # the number of its sentence, from 0


_XML_ENTITY = re.compile(r"&(?:#x([0-9A-Fa-f]+)|#([0-9]+)|(lt|gt|amp|quot|apos));")
_XML_NAMED = {"lt": "<", "gt": ">", "amp": "&", "quot": '"', "apos": "'"}


def _xml_text(value: str) -> str:
    return _XML_ENTITY.sub(lambda m: chr(int(m[1], 16)) if m[1] else chr(int(m[2])) if m[2] else _XML_NAMED[m[3]],
                           value)


@dataclass(frozen=True)
class VrtToken:
    fields: tuple[str, ...]  # its columns (word, pos, ...)
    text: dict[str, str]  # the attributes of its <text>
    s: dict[str, str]  # ... and of its <s>
    text_number: int  # from 0
    s_number: int  # from 0


def read_vrt_tokens(path: Path) -> Iterator[VrtToken]:
    """Every token of a VRT file as cwb-encode ``-x -B`` sees it (lines in NFC, fields stripped of
    spaces, XML entities decoded), with its text's and sentence's attributes and numbers: read with
    plain Python, no cowbird."""
    text: dict[str, str] = {}
    sentence: dict[str, str] = {}
    texts = sentences = -1
    for raw in path.read_text(encoding="utf-8").split("\n"):  # not splitlines: U+0085 and kin are text
        line = unicodedata.normalize("NFC", raw)
        if not line.strip() or line.startswith("<?"):
            continue
        if line.startswith("<text ") or line == "<text>":
            text = {k: _xml_text(v) for k, v in re.findall(r'(\w+)="([^"]*)"', line)}
            texts += 1
        elif line.startswith("<s ") or line == "<s>":
            sentence = {k: _xml_text(v) for k, v in re.findall(r'(\w+)="([^"]*)"', line)}
            sentences += 1
        elif not line.startswith("<"):
            fields = tuple(_xml_text(field.strip(" ")) for field in line.split("\t"))
            yield VrtToken(fields, text, sentence, texts, sentences)


def read_tricky() -> list[TrickyToken]:
    """Every token of tricky.vrt as cwb-encode ``-x -B`` sees it (:func:`read_vrt_tokens`): expected counts
    are taken from it."""
    tokens: list[TrickyToken] = []
    for token in read_vrt_tokens(TRICKY_VRT):
        word, pos, upos, lemma = token.fields
        tokens.append(TrickyToken(word, pos, upos, lemma, token.text, token.s_number))
    return tokens


def write_synthetic_vrt(path: Path) -> None:
    """60 texts (genre news/blog) of 100 sentences of 10 tokens: words w0..w99, tags P0..P4.

    Position p holds tag P{p % 5} (so P1 is at 1, 6, 11, ...): 60,000 tokens whose hits are easy
    to count, for streams, paging and deliberately slow queries.
    """
    lines = []
    for t in range(60):
        lines.append(f'<text id="t{t}" genre="{"news" if t % 2 else "blog"}">')
        for s in range(100):
            lines.append("<s>")
            lines += [f"w{(t * 7 + s * 3 + k) % 100}\tP{k % 5}" for k in range(10)]
            lines.append("</s>")
        lines.append("</text>")
    path.write_text("\n".join(lines) + "\n")


def synthetic_options(base: Path, **extra: Any) -> EncodeOptions:
    source = base / "big.vrt"
    write_synthetic_vrt(source)
    return EncodeOptions(
        source, base / "data", base / "registry" / "big", ["word", "pos"],
        [parse_s_declaration("text:0+id+genre"), parse_s_declaration("s:0")], charset="utf8", xml=True,
        skip_blank=True, strip_blanks=True, **extra,
    )


def copy_reference_ewt(target: Path) -> Path:
    """A copy of the reference EWT (real cwb-encode's files) in ``target/data``, with a registry in
    ``target/registry`` naming the copy by its absolute path; returns the registry directory."""
    registry = require_reference() / "cwb" / "registry"
    text = (registry / "ewt").read_text()
    home = next(line.split(None, 1)[1].strip().strip('"') for line in text.splitlines() if line.startswith("HOME "))
    data = target / "data"
    shutil.copytree((Path.cwd() / home).resolve(), data)
    (target / "registry").mkdir()
    lines = [f'HOME "{data}"' if line.startswith("HOME ") else line for line in text.splitlines()]
    (target / "registry" / "ewt").write_text("\n".join(lines) + "\n")
    return target / "registry"


@contextmanager
def running_demo(
    base: Path, *, archive: bool = False, prepared: Callable[[Any], None] | None = None, **options: Any
) -> Iterator[Any]:
    """The platform as ``make demo`` runs it (``cowbird.commands.demo.DemoStack``: two node processes and the
    front end on free loopback ports), quiet, stopped at the end; ``options`` go to the stack
    (``generated=True, web_tokens=60_000``: the generated web corpus, smaller). ``archive``: its stand-in
    web archive on a free port too; ``prepared`` is given the stack once prepared, before it starts
    (to edit its ``cowbird.toml``)."""
    from cowbird.commands.demo import DemoStack

    front, node1, node2, *rest = free_ports(4 if archive else 3)
    if archive:
        options["archive_port"] = rest[0]
    stack = DemoStack(base, front, (node1, node2), log_level="warning", **options)
    stack.prepare()
    if prepared is not None:
        prepared(stack)
    stack.start()
    try:
        yield stack
    finally:
        stack.stop()


def assert_problem(response: httpx.Response, status: int, code: str) -> JsonObject:
    """``response`` is an ``application/problem+json`` answer with this status and code, a title
    and a detail; its body."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body: JsonObject = response.json()
    assert body["status"] == status and body["code"] == code and body["detail"] and body["title"]
    return body


def own_mb(pid: int) -> float:
    """A process's own resident memory in MB (not its mapped files), as a node's memory budget counts it."""
    fields = Path(f"/proc/{pid}/statm").read_text().split()
    return (int(fields[1]) - int(fields[2])) * os.sysconf("SC_PAGE_SIZE") / 2**20


@dataclass
class MemoryPeaks:
    """The processes' own memory (``own_mb``) when watching began (``idle``) and at its highest since."""

    idle: list[float]
    peaks: list[float]


@contextmanager
def memory_peaks(pids: list[int], every: float = 0.02) -> Iterator[MemoryPeaks]:
    """Watch the processes' own memory while the block runs, sampled every ``every`` seconds in a thread."""
    idle = [own_mb(pid) for pid in pids]
    seen = MemoryPeaks(idle, list(idle))
    done = threading.Event()

    def watch() -> None:
        while not done.wait(every):
            seen.peaks = [max(peak, own_mb(pid)) for peak, pid in zip(seen.peaks, pids, strict=True)]

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        yield seen
    finally:
        done.set()
        watcher.join()
