"""Duplicates: repeated paragraphs of a page, and exact and near-duplicate documents across the corpus.

- ``drop_repeated_blocks``: a block whose normalised text equals an earlier block's of the same page is
  marked ``duplicate`` (texrex's in-document paragraph deduplication; the pipeline leaves it out).
- ``exact_key``: a 16-byte hash of a document's normalised main text; equal keys are exact duplicates.
- ``signature``: the document's MinHash (datasketch, 128 permutations, its ``affine32`` scheme) over its
  word w-shingles; the share of equal values of two signatures estimates the Jaccard similarity of the
  two documents' shingle sets (Broder et al. 1997; texrex's teshi).
- ``save_signatures`` / ``load_signatures``: one ``.npz`` per shard (ids in input order, keys,
  signatures) written by the clean phase.
- ``find_duplicates``: over all shards' signature files, the documents to remove and the document each
  duplicates. Like texrex's tender it SORTS instead of holding a hash table of the corpus: every
  document's LSH band keys (one 64-bit hash per band of ``ROWS`` signature values) are written as
  (band key, document number) records into bucket files by the key's top bits, and each bucket, which
  fits in ``memory`` bytes, is sorted on its own (numpy lexsort): a distribution sort, so the corpus can
  be far larger than RAM. Documents that share a band key are candidates, verified by their estimated
  Jaccard similarity (signatures read from a disk-backed array); verified pairs are joined by
  union-find, and of each group the earliest document in input order is kept. The result depends only
  on the inputs, not on bucket count or worker count.

The parameters (``SHINGLE``, ``BANDS`` x ``ROWS``, ``THRESHOLD``) were chosen by bench/near_duplicates.py:
recall of planted near duplicates with 1-10 % of words changed >= 0.95 at precision >= 0.99
(docs/building-corpora.md).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import unicodedata
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import numpy.typing as npt
from datasketch import MinHash

from cowbird.build.records import Block

SHINGLE = 3
"""w: words per shingle. 10 % of words changed breaks about 1 - 0.9**w of the shingles: 27 % for w = 3
(Jaccard ~0.57), 41 % for w = 5 (~0.42, texrex's n = 5); w = 3 keeps planted near duplicates well above
the threshold while unrelated documents share almost no 3-word sequences."""

NUM_PERM = 128
"""MinHash values per document (texrex: m = 100): the Jaccard estimate's standard error is
sqrt(J (1 - J) / 128) <= 0.044."""

BANDS = 42
ROWS = 3
"""LSH: the first 126 signature values cut into 42 bands of 3; two documents become candidates when any
band is equal, with probability 1 - (1 - J**3)**42: 0.9998 at J = 0.57 (10 % of words changed, w = 3),
0.68 at J = 0.3, 0.04 at J = 0.1. Measured (bench/near_duplicates.py --grid): 32 x 4 lost 1 in 125
of the 10 % near duplicates to the banding, 16 x 8 lost 70 %; 64 x 2 finds the same as 42 x 3 but makes
more candidates to verify (0.47 of the pairs at J = 0.1)."""

THRESHOLD = 0.4
"""A candidate pair is a near duplicate when its estimated Jaccard similarity is at least this."""

WINDOW = 64
"""Documents sharing one band key are compared with at most this many earlier documents of the same key
(in input order), so that a key shared by very many documents (boilerplate-only pages) costs a bounded
number of comparisons per document rather than all pairs."""

KEY_BYTES = 16
_BATCH = 4096

_PERMUTATIONS = MinHash(num_perm=NUM_PERM, seed=1, scheme="affine32").permutations
_WORDS = re.compile(r"\w+")
_DIGITS = re.compile(r"\d+")
_MIX = np.uint64(0x9E3779B97F4A7C15)
_MIX2 = np.uint64(0xBF58476D1CE4E5B9)
_MIX3 = np.uint64(0x94D049BB133111EB)

Signatures = npt.NDArray[np.uint32]


def _tokens(text: str) -> list[str]:
    """The words of ``text`` (runs of letters, digits and underscore), NFKC-normalised and case-folded:
    punctuation, whitespace and case do not make two documents different."""
    return _WORDS.findall(unicodedata.normalize("NFKC", text).casefold())


def block_key(text: str) -> str:
    """A block's text as compared within a page: its words, case-folded, with every number made ``0``
    ("Page 1 of 5" repeats "Page 2 of 5"; "Reply · 12 likes" repeats "Reply · 3 likes")."""
    return " ".join(_DIGITS.sub("0", word) for word in _tokens(text))


def drop_repeated_blocks(blocks: Sequence[Block]) -> list[Block]:
    """The blocks in the same order, each that repeats an earlier block of the page marked ``duplicate``.

    Blocks are compared by ``block_key``; a block without words (a separator, an emoji) is never marked
    (whether it is kept is the boilerplate stage's decision). Blocks already marked stay marked. The
    input blocks are not changed.
    """
    seen: set[str] = set()
    result: list[Block] = []
    for block in blocks:
        key = block_key(block.text)
        repeated = bool(key) and key in seen
        seen.add(key)
        result.append(replace(block, duplicate=block.duplicate or repeated))
    return result


def exact_key(text: str) -> bytes:
    """16 bytes (BLAKE2b) of the document's words in order, case-folded: documents with the same words
    are exact duplicates, whatever their whitespace, punctuation and case."""
    return hashlib.blake2b(" ".join(_tokens(text)).encode("utf-8"), digest_size=KEY_BYTES).digest()


def shingles(text: str, size: int = SHINGLE) -> list[bytes]:
    """The document's word ``size``-shingles (each its words joined by a space, UTF-8); a document of
    fewer words is one shingle, a document without words none."""
    tokens = _tokens(text)
    if len(tokens) <= size:
        return [" ".join(tokens).encode("utf-8")] if tokens else []
    return [" ".join(tokens[i : i + size]).encode("utf-8") for i in range(len(tokens) - size + 1)]


def signature(text: str, size: int = SHINGLE) -> Signatures:
    """The document's MinHash over its word shingles: ``NUM_PERM`` uint32 values (datasketch's MinHash,
    seed 1, scheme ``affine32``; the permutations are made once per process). A document without words
    has every value 2**32 - 1."""
    minhash = MinHash(num_perm=NUM_PERM, permutations=_PERMUTATIONS, scheme="affine32")
    values = shingles(text, size)
    for start in range(0, len(values), _BATCH):  # a batch costs _BATCH x 128 x 4 bytes, however long the page
        minhash.update_batch(values[start : start + _BATCH])
    return np.asarray(minhash.hashvalues, dtype=np.uint32)


def similarity(first: Signatures, second: Signatures) -> float:
    """The Jaccard similarity two signatures estimate: the share of positions where they are equal."""
    return float(np.count_nonzero(first == second)) / len(first)


def save_signatures(path: Path, ids: Sequence[str], keys: Sequence[bytes],
                    signatures: Sequence[Signatures] | Signatures) -> None:
    """Write one shard's documents (ids in input order, exact keys, signatures) to ``path`` (.npz).

    Written to a temporary file beside it and renamed, so that a killed build never leaves a half file.
    Raises ValueError naming the path when the three do not have one entry per document or a key or a
    signature has the wrong size.
    """
    count = len(ids)
    if len(keys) != count or len(signatures) != count:
        raise ValueError(f"{path}: {count} ids, {len(keys)} keys and {len(signatures)} signatures: one each per "
                         "document expected")
    if any(len(key) != KEY_BYTES for key in keys):
        raise ValueError(f"{path}: every exact key must be {KEY_BYTES} bytes (exact_key)")
    key_array = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(count, KEY_BYTES)
    signature_array = np.asarray(signatures, dtype=np.uint32).reshape(count, -1) if count else np.zeros(
        (0, NUM_PERM), dtype=np.uint32)
    if signature_array.shape[1] != NUM_PERM:
        raise ValueError(f"{path}: signatures of {signature_array.shape[1]} values, {NUM_PERM} expected")
    id_array = np.array(list(ids), dtype=np.str_) if count else np.zeros(0, dtype="<U1")
    temporary = path.with_name(path.name + ".part")
    with temporary.open("wb") as stream:
        np.savez(stream, ids=id_array, keys=key_array, signatures=signature_array)
    os.replace(temporary, path)


def load_signatures(path: Path) -> tuple[list[str], npt.NDArray[np.uint8], Signatures]:
    """One shard's (ids, keys as an (n, 16) uint8 array, signatures as an (n, 128) uint32 array).

    Raises ValueError naming the file when it is not a signature file of this format.
    """
    try:
        with np.load(path, allow_pickle=False) as data:
            ids = [str(value) for value in data["ids"]]
            keys = np.asarray(data["keys"], dtype=np.uint8)
            signatures = np.asarray(data["signatures"], dtype=np.uint32)
    except (OSError, KeyError, ValueError) as error:
        raise ValueError(f"{path}: not a signature file of `cowbird build` ({error})") from error
    if keys.shape != (len(ids), KEY_BYTES) or signatures.shape != (len(ids), NUM_PERM):
        raise ValueError(f"{path}: {len(ids)} ids but keys {keys.shape} and signatures {signatures.shape}")
    return ids, keys, signatures


def _ids(path: Path) -> list[str]:
    """Only the ids of one shard's signature file (an .npz reads each array on its own)."""
    try:
        with np.load(path, allow_pickle=False) as data:
            return [str(value) for value in data["ids"]]
    except (OSError, KeyError, ValueError) as error:
        raise ValueError(f"{path}: not a signature file of `cowbird build` ({error})") from error


def band_keys(signatures: Signatures, bands: int = BANDS, rows: int = ROWS) -> npt.NDArray[np.uint64]:
    """(n, bands) 64-bit keys: band ``b`` of each signature (values ``b*rows .. b*rows+rows-1``) hashed
    with its band number (splitmix64 mixing), so equal keys mean, but for 2**-64 collisions, equal bands."""
    count = signatures.shape[0]
    values = signatures[:, : bands * rows].astype(np.uint64).reshape(count, bands, rows)
    key = np.broadcast_to(np.arange(bands, dtype=np.uint64) * _MIX, (count, bands)).copy()
    with np.errstate(over="ignore"):
        for row in range(rows):
            key ^= values[:, :, row]
            key *= _MIX
            key ^= key >> np.uint64(31)
        key ^= key >> np.uint64(30)
        key *= _MIX2
        key ^= key >> np.uint64(27)
        key *= _MIX3
        key ^= key >> np.uint64(31)
    return key


class _UnionFind:
    """Groups of document numbers; each group's root is its smallest number (the earliest document)."""

    def __init__(self) -> None:
        self.parent: dict[int, int] = {}

    def find(self, item: int) -> int:
        root = item
        while (parent := self.parent.get(root, root)) != root:
            root = parent
        while (parent := self.parent.get(item, item)) != root:  # path compression
            self.parent[item] = root
            item = parent
        return root

    def union(self, first: int, second: int) -> None:
        a, b = self.find(first), self.find(second)
        if a != b:
            self.parent[max(a, b)] = min(a, b)


_BAND_RECORD = np.dtype([("key", "<u8"), ("doc", "<u8")])
_EXACT_RECORD = np.dtype([("k0", ">u8"), ("k1", ">u8"), ("doc", "<u8")])


def _bucket_bits(records: int, record_size: int, memory: int) -> int:
    """How many top key bits choose a record's bucket so that one bucket's records (and their sort's
    index arrays, about twice as much again) stay within ``memory`` bytes."""
    bits = 0
    while records * record_size * 3 > memory << bits and bits < 16:
        bits += 1
    return bits


def _neighbours(sorted_keys: npt.NDArray[np.uint64], docs: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """(earlier, later) document pairs that share a key, from records sorted by (key, document): each
    record paired with the up to ``WINDOW`` records before it in its run of equal keys (numpy, one pass
    per distance; it stops at the first distance no run reaches)."""
    found: list[npt.NDArray[np.uint64]] = []
    for lag in range(1, min(WINDOW, len(sorted_keys) - 1) + 1):
        same = sorted_keys[lag:] == sorted_keys[:-lag]
        if not same.any():
            break
        found.append(np.column_stack((docs[:-lag][same], docs[lag:][same])))
    return np.concatenate(found) if found else np.zeros((0, 2), dtype=np.uint64)


def find_duplicates(
    shards: Sequence[Path],
    *,
    threshold: float = THRESHOLD,
    bands: int = BANDS,
    rows: int = ROWS,
    work: Path | None = None,
    memory: int = 256 << 20,
) -> list[tuple[str, str, str]]:
    """The documents to remove from the corpus whose shards' signature files are ``shards`` (in input
    order): (id, ``"exact duplicate"`` or ``"near duplicate"``, id of the document kept), in input order.

    Every document whose exact key equals an earlier document's is an exact duplicate of the earliest
    one (or, when that one is itself a near duplicate, of the document its group keeps: the id kept is
    always a document that stays in the corpus). Of the rest, documents whose estimated Jaccard
    similarity is at least ``threshold`` (found as LSH candidates: a band of ``rows`` values equal) are
    joined into groups; each group's earliest document is kept, the others are near duplicates of it.
    ``work`` is where the bucket files and the disk-backed signature array go (a temporary folder in it,
    removed afterwards; default: the system's temporary folder); ``memory`` bounds the bytes one
    bucket's sort holds.
    """
    if bands * rows > NUM_PERM:
        raise ValueError(f"{bands} bands x {rows} rows need {bands * rows} MinHash values; signatures have "
                         f"{NUM_PERM}")
    counts = [len(_ids(path)) for path in shards]
    total = sum(counts)
    if total == 0:
        return []
    if work is not None:
        work.mkdir(parents=True, exist_ok=True)
    removed: dict[int, tuple[str, int]] = {}
    with tempfile.TemporaryDirectory(prefix="dedup-", dir=work) as folder:
        scratch = Path(folder)
        # pass 1: exact keys, bucketed by their first bits, and every signature into one disk-backed array
        exact_bits = _bucket_bits(total, _EXACT_RECORD.itemsize, memory)
        signature_file = scratch / "signatures.u32"
        exact_files = [scratch / f"exact-{bucket:05d}.bin" for bucket in range(1 << exact_bits)]
        offset = 0
        for path, count in zip(shards, counts, strict=True):
            _, keys, signatures = load_signatures(path)
            with signature_file.open("ab") as stream:
                signatures.tofile(stream)
            records = np.empty(count, dtype=_EXACT_RECORD)
            halves = keys.view(">u8").reshape(count, 2)
            records["k0"], records["k1"] = halves[:, 0], halves[:, 1]
            records["doc"] = np.arange(offset, offset + count, dtype=np.uint64)
            _scatter(records, records["k0"].astype(np.uint64), exact_bits, exact_files)
            offset += count
        for bucket in range(1 << exact_bits):
            if not exact_files[bucket].exists():
                continue
            records = np.fromfile(exact_files[bucket], dtype=_EXACT_RECORD)
            records = records[np.lexsort((records["doc"], records["k1"], records["k0"]))]
            if len(records) > 1:
                same = np.concatenate(([False], (records["k0"][1:] == records["k0"][:-1])
                                       & (records["k1"][1:] == records["k1"][:-1])))
                first = np.maximum.accumulate(np.where(same, 0, np.arange(len(records))))
                for document, kept in zip(records["doc"][same].tolist(), records["doc"][first[same]].tolist(),
                                          strict=True):
                    removed[document] = ("exact duplicate", kept)
            exact_files[bucket].unlink()
        # pass 2: band keys of the documents that are not exact duplicates, bucketed by their top bits
        band_bits = _bucket_bits(total * bands, _BAND_RECORD.itemsize, memory)
        band_files = [scratch / f"bands-{bucket:05d}.bin" for bucket in range(1 << band_bits)]
        exact_removed = np.zeros(total, dtype=bool)
        exact_removed[list(removed)] = True
        chunk = max(1, (memory // 4) // max(1, bands * _BAND_RECORD.itemsize))
        for start in range(0, total, chunk):
            end = min(total, start + chunk)
            keep = np.flatnonzero(~exact_removed[start:end]) + start
            document_keys = band_keys(_rows(signature_file, total, keep), bands, rows)
            records = np.empty(document_keys.size, dtype=_BAND_RECORD)
            records["key"] = document_keys.reshape(-1)
            records["doc"] = np.repeat(keep.astype(np.uint64), bands)
            _scatter(records, records["key"], band_bits, band_files)
        # pass 3: per bucket, sort by (key, document); documents sharing a key are candidate pairs
        pairs: list[npt.NDArray[np.uint64]] = []
        for bucket in range(1 << band_bits):
            if not band_files[bucket].exists():
                continue
            records = np.fromfile(band_files[bucket], dtype=_BAND_RECORD)
            records = records[np.lexsort((records["doc"], records["key"]))]
            found = _neighbours(records["key"], records["doc"])
            if len(found):
                pairs.append(np.unique(found, axis=0))
            band_files[bucket].unlink()
        groups = _UnionFind()
        if pairs:
            candidates = np.unique(np.concatenate(pairs), axis=0)
            step = max(1, (memory // 4) // (2 * NUM_PERM * 4))
            for start in range(0, len(candidates), step):
                block = candidates[start : start + step]
                equal = np.count_nonzero(_rows(signature_file, total, block[:, 0])
                                         == _rows(signature_file, total, block[:, 1]), axis=1)
                for first, second in block[equal >= threshold * NUM_PERM].tolist():
                    groups.union(int(first), int(second))
        for document in sorted(groups.parent):
            root = groups.find(document)
            if root != document:
                removed[document] = ("near duplicate", root)
        for document, (reason, kept) in removed.items():
            if reason == "exact duplicate" and kept in groups.parent:  # a copy of a near duplicate:
                removed[document] = (reason, groups.find(kept))  # name the document that stays
    return _named(shards, counts, removed)


def _rows(path: Path, total: int, numbers: npt.NDArray[np.int64] | npt.NDArray[np.uint64]) -> Signatures:
    """The signatures of documents ``numbers`` from the corpus's signature file, copied out of a mapping
    that is closed again at once (so the mapped pages of a corpus-sized file never stay counted)."""
    mapping = np.memmap(path, dtype=np.uint32, mode="r", shape=(total, NUM_PERM))
    try:
        return np.array(mapping[numbers])
    finally:
        del mapping


def _named(shards: Sequence[Path], counts: Sequence[int],
           removed: dict[int, tuple[str, int]]) -> list[tuple[str, str, str]]:
    """``removed`` (document number -> reason, number kept) with the numbers replaced by the documents'
    ids, read back one shard at a time (the corpus's ids are never all in memory)."""
    wanted = np.array(sorted(set(removed) | {kept for _, kept in removed.values()}), dtype=np.int64)
    names: dict[int, str] = {}
    offset = 0
    for path, count in zip(shards, counts, strict=True):
        low, high = np.searchsorted(wanted, [offset, offset + count])
        if low < high:
            shard_ids = _ids(path)
            for number in wanted[low:high].tolist():
                names[number] = shard_ids[number - offset]
        offset += count
    return [(names[document], reason, names[kept]) for document, (reason, kept) in sorted(removed.items())]


def _scatter(records: npt.NDArray[np.void], keys: npt.NDArray[np.uint64], bits: int,
             files: Sequence[Path]) -> None:
    """Append each record to the bucket file its key's top ``bits`` bits name (each file opened only
    while written, so that thousands of buckets need no more than one open file)."""
    if bits == 0:
        with files[0].open("ab") as stream:
            records.tofile(stream)
        return
    buckets = (keys >> np.uint64(64 - bits)).astype(np.int64)
    order = np.argsort(buckets, kind="stable")
    buckets = buckets[order]
    records = records[order]
    edges = np.searchsorted(buckets, np.arange((1 << bits) + 1))
    for bucket in range(1 << bits):
        if edges[bucket] < edges[bucket + 1]:
            with files[bucket].open("ab") as stream:
                records[edges[bucket] : edges[bucket + 1]].tofile(stream)
