"""Encode a VRT file into CWB-format corpora: what cwb-encode and cwb-makeall write, byte for byte.

Optionally the corpus is cut into partitions at the start of a boundary element (``<text>`` by
default): each partition is a complete CWB corpus with its own registry entry (``ID_p01``, ...)
and a manifest records their sizes and global token offsets.

Nothing half-written is left behind: partitions are encoded into a scratch directory next to the
data directory and moved into place, registry files last, only when the whole input was read.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path

import numpy as np

from cowbird.core.errors import StoreError
from cowbird.core.manifest import Manifest, ManifestPartition
from cowbird.store.batch import Batch
from cowbird.store.cwbformat import MAX_CORPUS_SIZE
from cowbird.store.neighbours import write_neighbours
from cowbird.store.partitioner import Partitioner
from cowbird.store.pattr_writer import PAttributeWriter
from cowbird.store.reader import CwbCorpus
from cowbird.store.registry import SAttributeDecl, format_registry, parse_registry
from cowbird.store.sattr_writer import ElementEncoder
from cowbird.store.strings import Budget, default_memory
from cowbird.store.vrt import VrtOptions, VrtReader

DEFAULT_PARTITION_TOKENS = 1_000_000_000


@dataclass
class EncodeOptions:
    """What ``cowbird encode`` was asked to do, in cwb-encode's terms."""

    input: Path
    data_dir: Path
    registry_file: Path
    p_attributes: list[str]  # word (unless -p -) first, then -P in order
    s_attributes: list[SAttributeDecl] = field(default_factory=list)
    charset: str = "latin1"
    xml: bool = False
    skip_blank: bool = False
    strip_blanks: bool = False
    partition_tokens: int | None = None
    partition_at: str | None = None  # boundary element; default "text" or the first declared
    manifest: Path | None = None
    data_dir_arg: str | None = None  # -d as typed, for HOME (cwb-encode writes it verbatim)
    memory: int | None = None  # bytes the distinct-string tables may use (None: a quarter of RAM)


@dataclass
class EncodeResult:
    """What was written."""

    corpus_id: str
    size: int
    partitions: list[ManifestPartition]
    registry_files: list[Path]
    manifest: Path | None


class CorpusWriter:
    """Writes one CWB corpus (a whole corpus or one partition) from batches.

    ``columns`` picks the p-attributes this writer handles and ``structure`` whether it writes the
    s-attributes: two processes can share one corpus, each writing its own files.
    """

    def __init__(
        self,
        directory: Path,
        options: EncodeOptions,
        offset: int,
        warn: Callable[[str], None],
        columns: list[int],
        structure: bool,
        memory: int | None = None,
    ) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self.offset = offset
        self.size = 0
        self.columns = columns
        # lexicons and s-attribute values share the process's budget; past it they spill to disk
        budget = Budget(memory)
        self.p_writers = [PAttributeWriter(directory, options.p_attributes[k], budget) for k in columns]
        decls = options.s_attributes if structure else []
        self.elements = [ElementEncoder(directory, decl, options.strip_blanks, warn, budget) for decl in decls]
        self.source = str(options.input)

    def add(self, batch: Batch) -> None:
        if self.size + batch.size > MAX_CORPUS_SIZE:
            raise StoreError(
                f"a CWB corpus holds at most {MAX_CORPUS_SIZE} tokens; use --partition-tokens to split the input"
            )
        for writer, k in zip(self.p_writers, self.columns, strict=True):
            writer.add(batch.columns[k])
        self.size += batch.size
        tags = batch.tags
        if len(self.elements) == 1:
            self.elements[0].feed(tags, self.offset, self.source)
            return
        for code, element in enumerate(self.elements):
            mine = np.flatnonzero(tags.element == code)
            if len(mine):
                element.feed(tags.take(mine), self.offset, self.source)

    def open_elements(self) -> list[str]:
        return [element.decl.name for element in self.elements if element.is_open or element.level > 0]

    def finish(self, where: str) -> None:
        for element in self.elements:
            element.finish(self.size, where)
        for writer in self.p_writers:
            writer.finish()

    def abort(self) -> None:
        for writer in self.p_writers:
            writer.abort()
        for element in self.elements:
            element.abort()


def _silent(message: str) -> None:
    """Warnings of the helper process: the main process reads the same input and reports them."""


class Encoder:
    """Drives reading, optional partitioning and writing.

    With ``jobs`` 2 (the default where ``fork`` exists) a helper process reads the input too and
    writes half of the p-attributes, so both cores work; the main process writes the rest, the
    s-attributes, and reports warnings and progress.
    """

    def __init__(
        self,
        options: EncodeOptions,
        warn: Callable[[str], None] = lambda message: None,
        progress: Callable[[int], None] | None = None,
        jobs: int = 2,
    ) -> None:
        self.options = options
        self.warn = warn
        self.progress = progress
        self.jobs = jobs if "fork" in multiprocessing.get_all_start_methods() else 1
        registry_id = options.registry_file.name
        self.registry_id = registry_id.lower()
        names = [d.name for d in options.s_attributes]
        if options.partition_tokens is not None:
            boundary = options.partition_at or ("text" if "text" in names else (names[0] if names else None))
            if boundary is None or boundary not in names:
                raise StoreError(
                    f"cannot partition at <{boundary}>: declare it with -S (declared: {', '.join(names) or 'none'})"
                )
            if options.partition_tokens < 1:
                raise StoreError("--partition-tokens must be a positive number of tokens")
            self.boundary: str | None = boundary
        else:
            self.boundary = None

    def _reader(self, warn: Callable[[str], None]) -> VrtReader:
        options = self.options
        return VrtReader(
            options.input,
            VrtOptions(
                columns=len(options.p_attributes),
                s_attributes=tuple(d.name for d in options.s_attributes),
                charset=options.charset,
                xml=options.xml,
                skip_blank=options.skip_blank,
                strip_blanks=options.strip_blanks,
                warn=warn,
            ),
        )

    def run(self) -> EncodeResult:
        options = self.options
        options.data_dir.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=f".{options.data_dir.name}.partial-", dir=options.data_dir.parent))
        columns = list(range(len(options.p_attributes)))
        # word and lemma (big lexicons) land in different processes when they are columns 0 and 3
        mine, theirs = (columns[0::2], columns[1::2]) if self.jobs > 1 and len(columns) > 1 else (columns, [])
        collecting = gc.isenabled()
        gc.disable()  # no reference cycles here; the collector would only rescan millions of strings
        helper: multiprocessing.process.BaseProcess | None = None
        try:
            if theirs:
                context = multiprocessing.get_context("fork")
                receive, send = context.Pipe(duplex=False)
                helper = context.Process(target=self._helper, args=(scratch, theirs, send), daemon=True)
                helper.start()
                send.close()
            sizes = self._encode(scratch, mine, True, self.warn, self.progress)
            if helper is not None:
                outcome = receive.recv() if receive.poll(None) else ("error", "helper process ended without a word")
                helper.join()
                if outcome[0] != "ok":
                    raise StoreError(f"encoding failed in the helper process: {outcome[1]}")
                if outcome[1] != sizes:
                    raise StoreError("internal error: the two encoding processes disagree about partition sizes")
            return self._install(scratch, sizes)
        except EOFError as exc:
            raise StoreError("the helper encoding process died") from exc
        finally:
            if helper is not None and helper.is_alive():
                helper.terminate()
                helper.join()
            if collecting:
                gc.enable()
            shutil.rmtree(scratch, ignore_errors=True)

    def _helper(self, scratch: Path, columns: list[int], send: Connection) -> None:
        try:
            sizes = self._encode(scratch, columns, False, _silent, None)
            send.send(("ok", sizes))
        except BaseException as exc:  # the main process reports it; a traceback here would only confuse
            send.send(("error", str(exc)))
        finally:
            send.close()

    def _encode(
        self,
        scratch: Path,
        columns: list[int],
        structure: bool,
        warn: Callable[[str], None],
        progress: Callable[[int], None] | None,
    ) -> list[tuple[int, int]]:
        """Read the input and write the chosen attributes; returns (size, offset) per partition."""
        reader = self._reader(warn)
        writers: list[CorpusWriter] = []

        memory = self.options.memory if self.options.memory is not None else default_memory()
        share = memory // 2 if self.jobs > 1 and len(self.options.p_attributes) > 1 else memory  # per process

        def new_writer(directory: Path, offset: int) -> CorpusWriter:
            writer = CorpusWriter(directory, self.options, offset, warn, columns, structure, share)
            writers.append(writer)
            return writer

        def report() -> None:
            if progress is not None:
                progress(reader.bytes_read)

        try:
            if self.boundary is None:
                writer = new_writer(scratch, 0)
                for batch in reader:
                    writer.add(batch)
                    report()
                writer.finish(f"{self.options.input}:end of input")
            else:
                assert self.options.partition_tokens is not None
                boundary_code = [d.name for d in self.options.s_attributes].index(self.boundary)
                Partitioner(
                    self.options.partition_tokens, self.boundary, boundary_code, str(self.options.input),
                    lambda offset: new_writer(scratch / f"p{len(writers) + 1:02d}", offset),
                ).run(reader, report)
        except BaseException:
            for writer in writers:
                writer.abort()
            raise
        return [(writer.size, writer.offset) for writer in writers]

    # -- installing the result -----------------------------------------------------------------

    def _install(self, scratch: Path, sizes: list[tuple[int, int]]) -> EncodeResult:
        options = self.options
        data_dir = options.data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        home = options.data_dir_arg if options.data_dir_arg is not None else str(data_dir)
        registry_dir = options.registry_file.parent
        registry_dir.mkdir(parents=True, exist_ok=True)
        partitions: list[ManifestPartition] = []
        entries: list[tuple[str, str]] = []
        if self.boundary is None:
            for item in os.listdir(scratch):
                os.replace(scratch / item, data_dir / item)
            entries.append((self.registry_id, home))
            partitions.append(ManifestPartition(id=self.registry_id, size=sizes[0][0], offset=0, data=data_dir))
        else:
            for number, (size, offset) in enumerate(sizes, start=1):
                target = data_dir / f"p{number:02d}"
                if target.exists():
                    shutil.rmtree(target)
                os.replace(scratch / f"p{number:02d}", target)
                partition_id = f"{self.registry_id}_p{number:02d}"
                entries.append((partition_id, f"{home.rstrip('/')}/p{number:02d}"))
                partitions.append(ManifestPartition(id=partition_id, size=size, offset=offset, data=target))
        registry_files: list[Path] = []
        for registry_id, home_dir in entries:
            path = registry_dir / registry_id
            text = format_registry(registry_id, home_dir, options.charset, options.p_attributes, options.s_attributes)
            path.write_text(text, encoding="utf-8")
            registry_files.append(path)
        if self.boundary is not None:  # each partition carries the tokens around it (store/neighbours.py)
            write_neighbours([CwbCorpus(parse_registry(path)) for path in registry_files])
        manifest = options.manifest
        if manifest is None and self.boundary is not None:
            manifest = data_dir / f"{self.registry_id}.manifest.json"
        if manifest is not None:
            manifest_of(self.registry_id, options, partitions).write(manifest)
        total = sum(p.size for p in partitions)
        return EncodeResult(self.registry_id, total, partitions, registry_files, manifest)


def manifest_of(corpus_id: str, options: EncodeOptions, partitions: list[ManifestPartition]) -> Manifest:
    """The corpus manifest the front end reads: attributes and partitions with global offsets."""
    return Manifest(
        corpus=corpus_id,
        size=sum(p.size for p in partitions),
        charset=options.charset,
        p_attributes=options.p_attributes,
        s_attributes=[name for decl in options.s_attributes for name in decl.attribute_names],
        meta=[name for decl in options.s_attributes for name in decl.annotated_names],
        registry=options.registry_file.parent.resolve(),
        partitions=[p.model_copy(update={"data": p.data.resolve()}) for p in partitions],
    )
