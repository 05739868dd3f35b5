"""``cowbird compress``: what ``cwb-huffcode -A`` then ``cwb-compress-rdx -A`` do, byte for byte,
but safely: each compressed file is written under a temporary name, decoded again and compared with
the uncompressed original, and only then put in place; the originals are removed after that (unless
``keep``). A failure leaves the attribute as it was — never a partial set of compressed files, which
CWB's library would prefer over the intact originals.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cowbird.core.errors import CorpusFormatError
from cowbird.store.compression import (
    SYNC,
    GolombIndex,
    HuffmanCode,
    HuffmanStream,
    Ints,
    write_index,
    write_stream,
)
from cowbird.store.cwbformat import BE_INT32
from cowbird.store.reader import map_bytes, map_ints
from cowbird.store.registry import RegistryEntry

STREAM = (".hcd", ".huf", ".huf.syn")
INDEX = (".crc", ".crx")
VERIFY_CHUNK = 1 << 22  # tokens (a multiple of SYNC) or positions compared at a time


@dataclass(frozen=True)
class Compressed:
    """What ``compress_attribute`` did to one p-attribute (sizes in bytes; 0 where a step was skipped)."""

    name: str
    stream_before: int
    stream_after: int
    index_before: int
    index_after: int
    skipped: tuple[str, ...]  # "stream" / "index" when they were compressed already


def compress_corpus(entry: RegistryEntry, attributes: list[str] | None = None, keep: bool = False,
                    report: Callable[[str], None] = lambda _: None) -> list[Compressed]:
    """Compress the token stream and the reverse index of each p-attribute (all by default)."""
    names = list(entry.p_attributes) if not attributes else attributes
    unknown = [name for name in names if name not in entry.p_attributes]
    if unknown:
        raise CorpusFormatError(f"corpus {entry.corpus_id} has no p-attribute {unknown[0]!r} "
                                f"(it has: {', '.join(entry.p_attributes)})")
    done = []
    for name in names:
        report(f"{name}: compressing")
        done.append(compress_attribute(entry.home, name, keep))
    return done


def compress_attribute(home: Path, name: str, keep: bool = False) -> Compressed:
    """Compress one p-attribute: both parts are written and verified before either is put in
    place, so that a failure leaves the attribute exactly as it was."""
    prefix = home / name
    corpus, rev, rdx = (Path(f"{prefix}{suffix}") for suffix in (".corpus", ".corpus.rev", ".corpus.rdx"))
    skipped: list[str] = []
    tokens = _tokens(home, name)
    frequencies = np.asarray(map_ints(Path(f"{prefix}.corpus.cnt")), dtype=np.int64)
    temporary = _temporary(home, name)
    do_stream, do_index = corpus.exists(), rev.exists() and rdx.exists()
    if not do_stream and not _complete(prefix, STREAM):
        raise CorpusFormatError(f"p-attribute {name!r}: neither {corpus} nor a complete compressed stream")
    if not do_index and not _complete(prefix, INDEX):
        raise CorpusFormatError(f"p-attribute {name!r}: neither {rev} (with .rdx) nor a complete compressed index")
    if do_index and len(frequencies) and frequencies.min() <= 0:
        unused = int(np.flatnonzero(frequencies <= 0)[0])
        raise CorpusFormatError(f"p-attribute {name!r}: lexicon id {unused} occurs nowhere (frequency 0), and "
                                "a Golomb-coded index cannot hold it (cwb-compress-rdx refuses it too); nothing "
                                "was changed")
    try:
        if do_stream:
            _compress_stream(home, name, frequencies)
        else:
            skipped.append("stream")
        if do_index:
            _compress_index(home, name, frequencies, tokens)
        else:
            skipped.append("index")
        stream_before = corpus.stat().st_size if do_stream else 0
        index_before = rev.stat().st_size + rdx.stat().st_size if do_index else 0
        stream_after = _install(temporary, prefix, STREAM) if do_stream else 0
        index_after = _install(temporary, prefix, INDEX) if do_index else 0
    finally:
        _discard(temporary, STREAM + INDEX)
    if not keep:
        for path, done in ((corpus, do_stream), (rev, do_index), (rdx, do_index)):
            if done:
                path.unlink()
    return Compressed(name, stream_before, stream_after, index_before, index_after, tuple(skipped))


def _complete(prefix: Path, suffixes: tuple[str, ...]) -> bool:
    return all(Path(f"{prefix}{suffix}").exists() for suffix in suffixes)


def _tokens(home: Path, name: str) -> int:
    corpus = home / f"{name}.corpus"
    if corpus.exists():
        return corpus.stat().st_size // 4
    return HuffmanCode.read(home / f"{name}.hcd").length


def _temporary(home: Path, name: str) -> Path:
    return home / f".{name}.compressing"


def _install(temporary: Path, prefix: Path, suffixes: tuple[str, ...]) -> int:
    """Move the verified files into place (the descriptor last: until every file of the set is
    there, CWB's library and cowbird's reader keep reading the originals). Returns their size."""
    size = 0
    for suffix in sorted(suffixes, key=lambda s: s in (".hcd", ".crx")):
        os.replace(f"{temporary}{suffix}", f"{prefix}{suffix}")
        size += Path(f"{prefix}{suffix}").stat().st_size
    return size


def _discard(temporary: Path, suffixes: tuple[str, ...]) -> None:
    for suffix in suffixes:
        Path(f"{temporary}{suffix}").unlink(missing_ok=True)


def _compress_stream(home: Path, name: str, frequencies: Ints) -> None:
    """Write the Huffman-coded stream under the temporary prefix and check that it decodes to ``.corpus``."""
    prefix, temporary = home / name, _temporary(home, name)
    ids = map_ints(Path(f"{prefix}.corpus"))
    if len(ids) == 0:
        raise CorpusFormatError(f"p-attribute {name!r} has no tokens: there is nothing to compress")
    code = HuffmanCode.build(frequencies, len(ids))
    code.write(Path(f"{temporary}.hcd"))
    write_stream(temporary, ids, code)
    stream = HuffmanStream(str(temporary), HuffmanCode.read(Path(f"{temporary}.hcd")),
                           map_bytes(Path(f"{temporary}.huf")), map_ints(Path(f"{temporary}.huf.syn")))
    step = VERIFY_CHUNK - VERIFY_CHUNK % SYNC
    for start in range(0, len(ids), step):
        stop = min(start + step, len(ids))
        if not np.array_equal(stream.range(start, stop), ids[start:stop]):
            raise CorpusFormatError(f"{name}: the Huffman-coded stream does not decode to {name}.corpus "
                                    f"(positions {start:,}-{stop - 1:,}); nothing was changed")


def _compress_index(home: Path, name: str, frequencies: Ints, tokens: int) -> None:
    """Write the Golomb-coded index under the temporary prefix and check that it decodes to ``.corpus.rev``."""
    prefix, temporary = home / name, _temporary(home, name)
    rev = map_ints(Path(f"{prefix}.corpus.rev"))
    rdx = map_ints(Path(f"{prefix}.corpus.rdx"))
    if len(rev) != int(frequencies.sum()) or len(rdx) != len(frequencies):
        raise CorpusFormatError(f"{name}: .corpus.rev/.rdx do not match .corpus.cnt; run cowbird encode again")
    write_index(temporary, rev, frequencies, tokens)
    index = GolombIndex(str(temporary), map_bytes(Path(f"{temporary}.crc")),
                        map_ints(Path(f"{temporary}.crx")), frequencies.astype(BE_INT32), tokens)
    ends = np.cumsum(frequencies)
    first = 0
    while first < len(frequencies):
        done = int(ends[first - 1]) if first else 0
        last = max(first + 1, int(np.searchsorted(ends, done + VERIFY_CHUNK, side="right")))
        if not np.array_equal(index.positions(np.arange(first, last)), rev[done : int(ends[last - 1])]):
            raise CorpusFormatError(f"{name}: the Golomb-coded index does not decode to {name}.corpus.rev "
                                    f"(ids {first:,}-{last - 1:,}); nothing was changed")
        first = last
