"""The stages of ``cowbird build`` wired together: ``clean_page`` for one page, the step of each phase for
one shard (``run_clean_shard``, ``run_dedup``, ``run_annotate_shard``, ``run_encode``) and the local
driver ``run_local`` that runs the steps on every core.

Phases (docs/building-corpora.md, "Every core, bounded, resumable"):

1. clean, per shard: read -> decode -> blocks and boilerplate -> repeated blocks -> language ->
   badness -> exact key and MinHash signature. ``OUT/work/clean/SHARD.jsonl.gz`` (the documents),
   ``SHARD.sig.npz`` (ids, keys, signatures), ``SHARD.skips.tsv``, then ``SHARD.done``.
2. dedup, once: ``OUT/work/dedup/removed.tsv`` (id, reason, id kept), then ``done``.
3. annotate, per shard: tokens, sentences, tags and lemmas of the documents not removed (sentences
   shuffled with ``--shuffle SEED``) -> ``OUT/work/annotate/SHARD.vrt.gz``, then ``SHARD.done``.
4. encode, once: the shards' VRT in shard order -> ``OUT/NAME.vrt.gz``, encoded by ``cowbird.store``
   (as ``cowbird encode``) into ``OUT/data/`` and ``OUT/registry/``, partitions of
   ``--partition-tokens`` cut before ``<text>``, the manifest ``OUT/NAME.manifest.json``; then
   ``OUT/report.tsv`` and ``OUT/report.html``.

Document ids are ``SHARD-NNNNNNN``: the shard's number and the position (from 0) of the page's item
among everything read from the shard (pages and skipped records alike), so an id names the same page
in every run, with any number of workers, and a report line names a record one can find again.

Memory: a worker holds one page at a time (at most ``--max-page-size`` bytes of payload, its decoded
text and blocks) plus, in the clean phase, the shard's exact keys and signatures (528 bytes per
document: 40,000 pages of a Common Crawl WARC file are 21 MB); bench/build_speed.py measures it.
"""

from __future__ import annotations

import csv
import functools
import gzip
import ipaddress
import json
import math
import multiprocessing
import os
import random
import shutil
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import asdict, dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import numpy as np

from cowbird.build import annotate, blocks, decode, dedup, language
from cowbird.build.inputs import MAX_PAGE_SIZE, read_html_file, read_input
from cowbird.build.records import Block, Document, Page, Rejected, Skip
from cowbird.build.vrt_out import P_ATTRIBUTES, S_ATTRIBUTES, document_vrt, token_count
from cowbird.build.work import (
    BuildError,
    ShardFile,
    atomic_gzip,
    differing,
    files_of,
    is_done,
    load_settings,
    mark_done,
    plan_shards,
    read_marker,
    read_shards,
    save_settings,
    shard_count,
    shard_name,
    work_dir,
    write_shards,
    write_text,
)

DEFAULT_PARTITION_TOKENS = 1_000_000_000
SETTINGS_VERSION = 1
SKIP_COLUMNS = ("id", "stage", "reason", "source", "index", "url", "detail")


@dataclass(frozen=True)
class BuildOptions:
    """What a build makes; every field but ``jobs`` decides the output (and is kept in OUT/build.json)."""

    inputs: tuple[Path, ...]
    out: Path
    name: str = "web"
    languages: tuple[str, ...] = ("en",)  # documents in other languages are skipped; () keeps every language
    partition_tokens: int = DEFAULT_PARTITION_TOKENS
    shuffle: int | None = None  # seed of COW's sentence shuffle; None: documents as they were
    keep_boilerplate: bool = False
    max_badness: float = language.BADNESS_LIMIT
    max_page_size: int = MAX_PAGE_SIZE
    tagger: str = "hanta"
    jobs: int = field(default_factory=lambda: os.cpu_count() or 1)

    def settings(self) -> dict[str, Any]:
        """The options that decide the output, as OUT/build.json keeps them (``jobs`` is not one)."""
        return {
            "version": SETTINGS_VERSION,
            "inputs": sorted({p.resolve().as_posix() for p in self.inputs}),  # their order does not matter
            "name": self.name,
            "language": list(self.languages),
            "partition_tokens": self.partition_tokens,
            "shuffle": self.shuffle,
            "keep_boilerplate": self.keep_boilerplate,
            "max_badness": self.max_badness,
            "max_page_size": self.max_page_size,
            "tagger": self.tagger,
        }

    @classmethod
    def from_settings(cls, out: Path, settings: dict[str, Any], jobs: int | None = None) -> BuildOptions:
        return cls(
            inputs=tuple(Path(p) for p in settings["inputs"]), out=out, name=str(settings["name"]),
            languages=tuple(settings["language"]), partition_tokens=int(settings["partition_tokens"]),
            shuffle=settings["shuffle"], keep_boilerplate=bool(settings["keep_boilerplate"]),
            max_badness=float(settings["max_badness"]), max_page_size=int(settings["max_page_size"]),
            tagger=str(settings["tagger"]), jobs=jobs or os.cpu_count() or 1,
        )


OPTION_NAMES = {"inputs": "the inputs (INPUT...)", "name": "--name", "language": "--language",
                "partition_tokens": "--partition-tokens", "shuffle": "--shuffle",
                "keep_boilerplate": "--keep-boilerplate", "max_badness": "--max-badness",
                "max_page_size": "--max-page-size", "tagger": "--tagger", "version": "the build's format"}


# ---------------------------------------------------------------------------------------------------------
# metadata


def host_of(url: str) -> str:
    """The url's host, lowercase, without port and user ("" for a ``file:`` url or none)."""
    try:
        return (urlsplit(url).hostname or "").rstrip(".").lower()
    except ValueError:
        return ""


def tld_of(host: str) -> str:
    """The host's last label; ``""`` for ``localhost``, a bare name and an IP address."""
    if not host or "." not in host:
        return ""
    try:
        ipaddress.ip_address(host.strip("[]"))
        return ""
    except ValueError:
        return host.rsplit(".", 1)[1]


def day(value: str | None) -> str:
    """An HTTP date (RFC 7231: ``Sun, 24 Dec 2023 10:00:00 GMT``, also RFC 850 and asctime) or an ISO 8601
    date (WARC-Date) as YYYY-MM-DD; ``""`` for None or a date that cannot be read."""
    if not value:
        return ""
    text = value.strip()
    if len(text) >= 10 and text[4] == "-" and text[7] == "-" and text[:4].isdigit():
        return text[:10] if text[5:7].isdigit() and text[8:10].isdigit() else ""
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return ""
    return moment.strftime("%Y-%m-%d") if 1 <= moment.year <= 9999 else ""


# ---------------------------------------------------------------------------------------------------------
# one page


@functools.cache
def taggable(code: str, tagger: str) -> bool:
    """Whether ``tagger`` can tag ``code`` here (with ``--language all`` the others are left out)."""
    try:
        annotate.check_tagger(code, tagger)
    except annotate.UnsupportedTagger:
        return False
    return True


def main_text(kept: Sequence[Block]) -> str:
    """The text language, badness and the duplicate keys look at: the main-text blocks, one a line."""
    return "\n".join(block.text for block in kept if block.main)


def clean_page(page: Page, options: BuildOptions, document_id: str = "") -> Document | Skip:
    """One page through decode, blocks and boilerplate, repeated blocks, language and badness.

    Returns the Document (its blocks: the main-text ones, or all with ``keep_boilerplate``; repeated
    blocks left out) or the Skip saying which stage left it out and why. A stage's unexpected exception
    is a Skip too (that stage, reason ``"error"``, the exception as detail): one bad page never stops a
    build, and the report counts it.
    """
    def skip(stage: str, reason: str, detail: str = "") -> Skip:
        return Skip(stage, reason, page.source, page.index, page.url, detail)

    stage = "decode"
    try:
        html = decode.decode_html(page.body, page.content_type)
        stage = "blocks"
        found = blocks.extract_blocks(html, page.url, options.languages or None)
        unique = dedup.drop_repeated_blocks(found)
        kept = [b for b in unique if not b.duplicate and b.text.strip() and (b.main or options.keep_boilerplate)]
        text = main_text(kept)
        if not text.strip():
            return skip("boilerplate", "no main text", f"{len(found)} blocks, none main text")
        stage = "language"
        code, confidence = language.identify(text)
        if options.languages and code not in options.languages:
            return skip("language", f"language {code}", f"confidence {confidence:.2f}")
        if not options.languages and not taggable(code, options.tagger):
            return skip("language", f"language {code}", f"confidence {confidence:.2f}; no tagger for it")
        stage = "badness"
        bad = language.badness(text, code)
    except Rejected as rejected:
        return skip(rejected.stage, rejected.reason, rejected.detail)
    except Exception as error:  # noqa: BLE001 - one page's failure is that page's skip, never the build's end
        return skip(stage, "error", f"{type(error).__name__}: {error}"[:300])
    if bad is not None and bad > options.max_badness:
        return skip("badness", f"badness over {options.max_badness:g}", f"badness {bad:.2f}")
    host = host_of(page.url)
    return Document(
        id=document_id, url=page.url, host=host, tld=tld_of(host), crawl_date=day(page.crawl_date),
        last_modified=day(page.last_modified), language=code, language_confidence=confidence,
        badness=float("nan") if bad is None else round(bad, 4), blocks=kept, source=page.source,
        index=page.index,
    )


def document_json(document: Document) -> str:
    """One line of ``SHARD.jsonl.gz`` (without sentences; NaN badness as null)."""
    value = asdict(document)
    value.pop("sentences")
    if math.isnan(document.badness):
        value["badness"] = None
    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False)


def document_from_json(line: str) -> Document:
    value = json.loads(line)
    value["blocks"] = [Block(**b) for b in value["blocks"]]
    value["badness"] = float("nan") if value["badness"] is None else float(value["badness"])
    value.pop("sentences", None)
    return Document(**value)


# ---------------------------------------------------------------------------------------------------------
# the steps (one phase of one shard each; the SLURM jobs run them through `cowbird build step`)


def load_options(out: Path) -> BuildOptions:
    settings = load_settings(out)
    if settings is None:
        raise BuildError(f"{out / 'build.json'}: not found; is {out} the output folder of a cowbird build?")
    return BuildOptions.from_settings(out, settings)


def shard_items(files: Sequence[ShardFile], max_page_size: int) -> Iterator[Page | Skip]:
    """Everything read from a shard's files in order: an archive's records, or a group of HTML files."""
    for number, entry in enumerate(files):
        if entry.kind == "archive":
            yield from read_input(entry.path, entry.root, max_page_size)
        else:
            yield read_html_file(entry.path, entry.root, number, max_page_size)


def _skip_row(document_id: str, item: Skip) -> str:
    values = (document_id, item.stage, item.reason, item.source, str(item.index), item.url, item.detail)
    return "\t".join(" ".join(v.split()) for v in values)


def run_clean_shard(out: Path, shard: int) -> dict[str, Any]:
    """The clean phase of one shard; does nothing (returns its counts) when its marker is there."""
    if is_done(out, "clean", shard):
        return read_marker(out, "clean", shard)
    options = load_options(out)
    files = files_of(read_shards(out), shard)
    if not files:
        raise BuildError(f"{work_dir(out) / 'shards.tsv'}: no shard {shard_name(shard)}")
    gone = [entry.path for entry in files if not entry.path.is_file()]
    if gone:  # an input removed or moved since the build began: not a bad page, a changed build
        raise BuildError(f"shard {shard_name(shard)}: input {gone[0]} is gone (it was there when the build began; "
                         "put it back, or build anew into another folder)")
    folder = work_dir(out) / "clean"
    name = shard_name(shard)
    ids: list[str] = []
    keys: list[bytes] = []
    signatures: list[np.ndarray[Any, Any]] = []
    skips: list[str] = []
    reasons: Counter[str] = Counter()
    languages: Counter[str] = Counter()
    read = 0
    with atomic_gzip(folder / f"{name}.jsonl.gz") as documents:
        for position, item in enumerate(shard_items(files, options.max_page_size)):
            document_id = f"{name}-{position:07d}"
            read += 1
            outcome = item if isinstance(item, Skip) else clean_page(item, options, document_id)
            if isinstance(outcome, Skip):
                skips.append(_skip_row(document_id, outcome))
                reasons[f"{outcome.stage}\t{outcome.reason}"] += 1
                continue
            text = main_text(outcome.blocks)
            ids.append(document_id)
            keys.append(dedup.exact_key(text))
            signatures.append(dedup.signature(text))
            languages[outcome.language] += 1
            documents.write(document_json(outcome) + "\n")
    write_text(folder / f"{name}.skips.tsv", "\t".join(SKIP_COLUMNS) + "\n" + "".join(r + "\n" for r in skips))
    dedup.save_signatures(folder / f"{name}.sig.npz", ids, keys, signatures)
    summary = {"read": read, "documents": len(ids), "skipped": dict(sorted(reasons.items())),
               "languages": dict(sorted(languages.items()))}
    mark_done(out, "clean", shard, summary)
    return summary


def run_dedup(out: Path) -> dict[str, Any]:
    """Exact and near-duplicate documents over all shards (every clean shard must be done)."""
    if is_done(out, "dedup"):
        return read_marker(out, "dedup")
    shards = shard_count(read_shards(out))
    missing = [shard_name(k) for k in range(shards) if not is_done(out, "clean", k)]
    if missing:
        raise BuildError(f"dedup needs every shard cleaned; not yet: {', '.join(missing[:10])}"
                         + (" ..." if len(missing) > 10 else ""))
    folder = work_dir(out) / "dedup"
    folder.mkdir(parents=True, exist_ok=True)
    files = [work_dir(out) / "clean" / f"{shard_name(k)}.sig.npz" for k in range(shards)]
    removed = dedup.find_duplicates(files, work=folder)
    lines = ["id\treason\tkept"] + [f"{i}\t{reason}\t{kept}" for i, reason, kept in removed]
    write_text(folder / "removed.tsv", "\n".join(lines) + "\n")
    summary = {"removed": dict(sorted(Counter(reason for _, reason, _ in removed).items()))}
    mark_done(out, "dedup", None, summary)
    return summary


def removed_ids(out: Path, shard: int) -> set[str]:
    """The ids of one shard that dedup removed (only that shard's: the whole list is never held)."""
    prefix = shard_name(shard) + "-"
    found: set[str] = set()
    with (work_dir(out) / "dedup" / "removed.tsv").open(encoding="utf-8") as stream:
        next(stream, None)
        for line in stream:
            if line.startswith(prefix):
                found.add(line.split("\t", 1)[0])
    return found


_ANNOTATORS: dict[tuple[str, str], annotate.Annotator] = {}


def annotator(code: str, tagger: str) -> annotate.Annotator:
    """One Annotator per language and tagger per process (a model is loaded once per worker)."""
    key = (code, tagger)
    if key not in _ANNOTATORS:
        _ANNOTATORS[key] = annotate.Annotator(code, tagger)
    return _ANNOTATORS[key]


def shuffle_document(document: Document, seed: int) -> None:
    """COW's sentence shuffle, seeded per document (``SEED:id``, so any worker gives the same order): the
    order of the blocks and of the sentences in each block. A block keeps its own sentences and
    attributes; the text can no longer be read as it was, its sentences and metadata can."""
    rng = random.Random(f"{seed}:{document.id}")
    pairs = list(zip(document.blocks, document.sentences, strict=True))
    rng.shuffle(pairs)
    for _, sentences in pairs:
        rng.shuffle(sentences)
    document.blocks = [b for b, _ in pairs]
    document.sentences = [s for _, s in pairs]


def run_annotate_shard(out: Path, shard: int) -> dict[str, Any]:
    """The annotate phase of one shard: VRT of its documents that dedup kept."""
    if is_done(out, "annotate", shard):
        return read_marker(out, "annotate", shard)
    if not is_done(out, "dedup"):
        raise BuildError("annotate needs the dedup phase finished first")
    options = load_options(out)
    name = shard_name(shard)
    removed = removed_ids(out, shard)
    documents = tokens = sentences = 0
    failed: list[str] = []
    with gzip.open(work_dir(out) / "clean" / f"{name}.jsonl.gz", "rt", encoding="utf-8") as lines, \
            atomic_gzip(work_dir(out) / "annotate" / f"{name}.vrt.gz") as vrt:
        for line in lines:
            document = document_from_json(line)
            if document.id in removed:
                continue
            try:
                document.sentences = annotator(document.language, options.tagger).annotate(
                    [b.text for b in document.blocks])
            except annotate.UnsupportedTagger as error:
                raise BuildError(f"document {document.id} ({document.language}): {error}") from error
            except Exception as error:  # noqa: BLE001 - one document's failure is its skip, not the build's end
                failed.append(f"{document.id}\tannotate\terror\t{document.source}\t{document.index}\t"
                              f"{document.url}\t{' '.join(f'{type(error).__name__}: {error}'.split())[:300]}")
                continue
            if options.shuffle is not None:
                shuffle_document(document, options.shuffle)
            text = document_vrt(document)
            if not text:
                continue
            vrt.write(text)
            documents += 1
            tokens += token_count(document)
            sentences += sum(len(s) for s in document.sentences)
    write_text(work_dir(out) / "annotate" / f"{name}.skips.tsv",
               "\t".join(SKIP_COLUMNS) + "\n" + "".join(row + "\n" for row in failed))
    summary = {"documents": documents, "tokens": tokens, "sentences": sentences, "removed": len(removed),
               "failed": len(failed)}
    mark_done(out, "annotate", shard, summary)
    return summary


def run_encode(out: Path) -> dict[str, Any]:
    """Concatenate the shards' VRT, encode it into partitions, write the report."""
    from cowbird.build.report import write_report
    from cowbird.store.encoder import EncodeOptions, Encoder
    from cowbird.store.registry import parse_s_declaration

    if is_done(out, "encode"):
        return read_marker(out, "encode")
    options = load_options(out)
    shards = shard_count(read_shards(out))
    missing = [shard_name(k) for k in range(shards) if not is_done(out, "annotate", k)]
    if missing:
        raise BuildError(f"encode needs every shard annotated; not yet: {', '.join(missing[:10])}")
    vrt = out / f"{options.name}.vrt.gz"
    temporary = vrt.with_name(vrt.name + ".tmp")
    with temporary.open("wb") as joined:  # gzip members one after the other are one gzip file
        for k in range(shards):
            with (work_dir(out) / "annotate" / f"{shard_name(k)}.vrt.gz").open("rb") as part:
                shutil.copyfileobj(part, joined, 1 << 20)
    os.replace(temporary, vrt)
    data, registry = out / "data", out / "registry"
    for stale in (data, registry):
        if stale.exists():
            shutil.rmtree(stale)  # a killed encode's half: encoding starts over
    registry.mkdir(parents=True)
    manifest = out / f"{options.name}.manifest.json"
    warnings: list[str] = []
    tokens = sum(int(read_marker(out, "annotate", k).get("tokens", 0)) for k in range(shards))
    partitions: list[dict[str, Any]] = []
    if tokens:
        encode_options = EncodeOptions(
            input=vrt, data_dir=data / options.name.lower(), registry_file=registry / options.name.lower(),
            p_attributes=["word", *P_ATTRIBUTES], s_attributes=[parse_s_declaration(s) for s in S_ATTRIBUTES],
            charset="utf8", xml=True, skip_blank=True, strip_blanks=False,
            partition_tokens=options.partition_tokens, partition_at="text", manifest=manifest,
            data_dir_arg=str((data / options.name.lower()).resolve()),
        )
        result = Encoder(encode_options, warn=warnings.append, jobs=min(2, options.jobs)).run()
        partitions = [{"name": part.id, "tokens": part.size} for part in result.partitions]
        if not partitions:
            partitions = [{"name": result.corpus_id, "tokens": result.size}]
    summary = {"tokens": tokens, "partitions": partitions, "warnings": warnings[:20], "vrt": vrt.name,
               "manifest": manifest.name if tokens else ""}
    write_report(out, summary)
    mark_done(out, "encode", None, summary)
    return summary


STEPS: dict[str, Callable[..., dict[str, Any]]] = {
    "clean": run_clean_shard, "dedup": run_dedup, "annotate": run_annotate_shard, "encode": run_encode}


def run_step(out: Path, phase: str, shard: int | None = None) -> dict[str, Any]:
    """One phase (of one shard): what ``cowbird build step PHASE OUT [--shard K]`` runs."""
    if phase not in STEPS:
        raise BuildError(f"no phase {phase!r}: the phases are {', '.join(STEPS)}")
    if phase in ("clean", "annotate"):
        if shard is None:
            raise BuildError(f"the {phase} phase runs per shard: give --shard K")
        return STEPS[phase](out, shard)
    return STEPS[phase](out)


# ---------------------------------------------------------------------------------------------------------
# preparing and running a build


def prepare(options: BuildOptions) -> int:
    """Check the tagger, write (or compare) OUT/build.json and the shard list; the number of shards.

    A second build into the same OUT with other settings stops naming the options that differ.
    """
    for code in options.languages or ("en",):  # with --language all: documents the tagger cannot tag are skipped
        try:
            annotate.check_tagger(code, options.tagger)
        except annotate.UnsupportedTagger as error:
            raise BuildError(f"--language {code} --tagger {options.tagger}: {error}") from error
    out = options.out
    settings = options.settings()
    old = load_settings(out)
    if old is not None:
        changed = differing(old, settings)
        if changed:
            names = ", ".join(OPTION_NAMES.get(key, key) for key in changed)
            raise BuildError(f"{out} holds a build made with other settings ({names} differ: "
                             f"{'; '.join(f'{OPTION_NAMES.get(k, k)} was {old.get(k)!r}, now {settings.get(k)!r}' for k in changed)}); "  # noqa: E501
                             f"give another -o, or delete {out} to build anew")
        return shard_count(read_shards(out))
    if out.exists() and any(out.iterdir()):
        raise BuildError(f"{out} is not empty and holds no cowbird build (no build.json): give an empty or new "
                         "folder with -o")
    shards = plan_shards(options.inputs)
    out.mkdir(parents=True, exist_ok=True)
    write_shards(out, shards)
    save_settings(out, settings)
    return shard_count(shards)


def pending(out: Path, shards: int) -> dict[str, set[int]]:
    """Per phase, the shards still to do (dedup and encode: ``{0}`` or empty), from the markers."""
    return {
        "clean": {k for k in range(shards) if not is_done(out, "clean", k)},
        "dedup": set() if is_done(out, "dedup") else {0},
        "annotate": {k for k in range(shards) if not is_done(out, "annotate", k)},
        "encode": set() if is_done(out, "encode") else {0},
    }


def finished(out: Path) -> Callable[[str, int | None], bool]:
    """``finished(phase, shard)`` from the markers (the SLURM path's ``finished``)."""
    return lambda phase, shard: is_done(out, phase, shard if phase in ("clean", "annotate") else None)


class Progress:
    """Progress per phase on stderr: rich's bars (documents, tokens, ETA) on a terminal, else one line
    per finished shard."""

    def __init__(self, enabled: bool | None = None) -> None:
        self.live = sys.stderr.isatty() if enabled is None else enabled
        self._progress: Any = None

    def start(self, phase: str, total: int) -> None:
        self.phase, self.total, self.done, self.documents, self.tokens = phase, total, 0, 0, 0
        self.started = time.monotonic()
        if self.live:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
            from rich.progress import Progress as Bars

            self._progress = Bars(TextColumn(f"{phase:9}"), BarColumn(), MofNCompleteColumn(),
                                  TextColumn("shards  {task.fields[documents]:,} documents  "
                                             "{task.fields[tokens]:,} tokens"),
                                  TimeRemainingColumn(), console=Console(stderr=True), transient=False)
            self._progress.start()
            self._task = self._progress.add_task(phase, total=total, documents=0, tokens=0)

    def advance(self, shard: int | None, summary: dict[str, Any]) -> None:
        self.done += 1
        self.documents += int(summary.get("documents", 0))
        self.tokens += int(summary.get("tokens", 0))
        if self._progress is not None:
            self._progress.update(self._task, advance=1, documents=self.documents, tokens=self.tokens)
            return
        elapsed = time.monotonic() - self.started
        eta = elapsed / self.done * (self.total - self.done)
        what = f"shard {shard_name(shard)}" if shard is not None else "done"
        counts = ", ".join(f"{key} {value:,}" for key, value in summary.items()
                           if isinstance(value, int) and key in ("read", "documents", "tokens"))
        removed = summary.get("removed")
        if isinstance(removed, dict):  # dedup: how many of each kind of duplicate
            counts = ", ".join(f"{value:,} {key}s" for key, value in removed.items()) or "no duplicates"
        print(f"{self.phase}: {what}{f' ({counts})' if counts else ''}; {self.done}/{self.total}, "
              f"{self.documents:,} documents, "
              f"{self.tokens:,} tokens, ETA {eta:.0f} s", file=sys.stderr, flush=True)

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()
            self._progress = None


def _context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")


def _run_phase(out: Path, phase: str, todo: Sequence[int | None], jobs: int, progress: Progress) -> None:
    if not todo:
        return
    progress.start(phase, len(todo))
    try:
        if jobs <= 1 or len(todo) == 1:
            for shard in todo:
                progress.advance(shard, run_step(out, phase, shard))
            return
        with ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=_context()) as pool:
            futures: dict[Future[dict[str, Any]], int | None] = {
                pool.submit(run_step, out, phase, shard): shard for shard in todo}
            remaining = set(futures)
            while remaining:
                done, remaining = wait(remaining, return_when=FIRST_COMPLETED)
                for future in sorted(done, key=lambda f: futures[f] or 0):
                    try:
                        summary = future.result()
                    except BaseException:
                        for other in remaining:
                            other.cancel()
                        raise
                    progress.advance(futures[future], summary)
    finally:
        progress.stop()


def run_local(options: BuildOptions, progress: Progress | None = None) -> dict[str, Any]:
    """The whole build on this machine, ``options.jobs`` processes: prepare, then each phase's pending
    steps. Resumes: finished steps (their markers) are not run again. Returns the encode summary."""
    shards = prepare(options)
    out = options.out
    shown = progress or Progress()
    todo = pending(out, shards)
    _run_phase(out, "clean", sorted(todo["clean"]), options.jobs, shown)
    _run_phase(out, "dedup", [None] if todo["dedup"] else [], 1, shown)
    _run_phase(out, "annotate", sorted(todo["annotate"]), options.jobs, shown)
    _run_phase(out, "encode", [None] if todo["encode"] else [], 1, shown)
    return read_marker(out, "encode")


def skip_rows(out: Path, shard: int) -> Iterator[dict[str, str]]:
    """The rows of one shard's ``SHARD.skips.tsv``."""
    with (work_dir(out) / "clean" / f"{shard_name(shard)}.skips.tsv").open(encoding="utf-8", newline="") as f:
        yield from csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
