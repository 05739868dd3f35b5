"""Relation tables of word sketches: how often each (headword, collocate) pair of a p-attribute's
values (lemmas) stands in one grammatical relation on a partition.

A relation is one or more CQP queries with the headword at the target (``@``) and the collocate at
the keyword (``@1``) — a sketch grammar's relation (``cowbird.query.sketch_grammar``). Its
**instances** are the distinct (headword position, collocate position) pairs its queries find
(a pair two queries both find counts once). A symmetric relation's instance is a pair of positions
in either order: it counts once in the row of (the first's value, the second's) and once in the row
of (the second's, the first's) — *house and home* once for *house* with *home* and once for *home*
with *house* — and so once only when both values are the same (*time and time*: one instance of
*time* with *time*, the one hit its concordance link finds). The table counts instances by the pair
of their values; a word sketch reads one headword's rows, its total in the relation (``f(x, R)``),
and each collocate's total in the relation (``f(R, y)``).

Tables are built once per partition by ``cowbird sketches build`` (:func:`save`, into
``<corpus home>/sketches/``) and read mapped; where none is saved for a relation's exact queries
(a subcorpus adds its filters to them), the node computes the table from the queries' hits.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import LimitExceeded
from cowbird.engines.base import Deadline
from cowbird.engines.results import Matches
from cowbird.store import CwbCorpus
from cowbird.store.sketch_tables import FORMAT, current, neighbours_stamp, tables_directory

Ints = npt.NDArray[np.int64]


@functools.lru_cache(maxsize=4096)
def table_key(attribute: str, queries: tuple[str, ...], symmetric: bool, strategy: str, hard_boundary: int) -> str:
    """The name of a relation's table: a hash of everything its counts depend on (the canonical queries)."""
    described = json.dumps([FORMAT, attribute, list(queries), symmetric, strategy, hard_boundary])
    return hashlib.sha256(described.encode()).hexdigest()[:32]


@dataclass
class RelationTable:
    """Instances of one relation counted by (headword id, collocate id) of the attribute's lexicon:
    rows sorted by headword then collocate, and the same rows in collocate order (``by_coll``), each
    with running sums, so that any headword's or collocate's total is two look-ups."""

    heads: npt.NDArray[np.int32]
    colls: npt.NDArray[np.int32]
    counts: Ints
    by_coll: Ints  # row order by (collocate, headword)
    instances: int

    @classmethod
    def of_ids(cls, head_ids: npt.NDArray[np.int64], coll_ids: npt.NDArray[np.int64], lexicon: int) -> RelationTable:
        codes, counts = np.unique(head_ids * lexicon + coll_ids, return_counts=True)
        return cls.of_codes(codes, counts.astype(np.int64), lexicon)

    @classmethod
    def of_codes(cls, codes: Ints, counts: Ints, lexicon: int) -> RelationTable:
        """The table of distinct pair codes (headword id × ``lexicon`` + collocate id, ascending) and
        their counts."""
        heads = (codes // lexicon).astype(np.int32)
        colls = (codes % lexicon).astype(np.int32)
        by_coll = np.lexsort((heads, colls)).astype(np.int64)
        return cls(heads, colls, counts, by_coll, int(counts.sum()))

    @property
    def nbytes(self) -> int:
        return int(self.heads.nbytes + self.colls.nbytes + self.counts.nbytes + self.by_coll.nbytes) * 2

    def _cumulative(self) -> tuple[Ints, Ints, npt.NDArray[np.int32]]:
        """The running sums of the counts in headword order and in collocate order, and the collocates in
        collocate order: saved with the table (mapped), or computed once."""
        cached = getattr(self, "_sums", None)
        if cached is None:
            by_head = np.concatenate(([0], np.cumsum(self.counts)))
            by_coll = np.concatenate(([0], np.cumsum(self.counts[self.by_coll])))
            cached = (by_head, by_coll, self.colls[self.by_coll])
            self._sums = cached
        return cached

    def with_sums(self, head_sums: Ints, coll_sums: Ints, colls_sorted: npt.NDArray[np.int32]) -> RelationTable:
        """This table with its running sums given (a saved table's, mapped) rather than computed."""
        self._sums = (head_sums, coll_sums, colls_sorted)
        return self

    def rows(self, word: int, swapped: bool) -> tuple[npt.NDArray[np.int32], Ints, int]:
        """A headword's collocate ids, their counts, and the headword's total in the relation;
        ``swapped``: the headword is the relation's collocate (the inverse of a dual relation)."""
        by_head, by_coll, colls_sorted = self._cumulative()
        if not swapped:
            lo, hi = np.searchsorted(self.heads, [word, word + 1])
            return self.colls[lo:hi], self.counts[lo:hi], int(by_head[hi] - by_head[lo])
        lo, hi = np.searchsorted(colls_sorted, [word, word + 1])
        rows = self.by_coll[lo:hi]
        return self.heads[rows], self.counts[rows], int(by_coll[hi] - by_coll[lo])

    def totals(self, words: npt.NDArray[np.int64], swapped: bool) -> Ints:
        """Each word's total as the relation's collocate (as its headword when ``swapped``)."""
        by_head, by_coll, colls_sorted = self._cumulative()
        if swapped:
            lo, hi = np.searchsorted(self.heads, words), np.searchsorted(self.heads, words + 1)
            return by_head[hi] - by_head[lo]
        lo, hi = np.searchsorted(colls_sorted, words), np.searchsorted(colls_sorted, words + 1)
        return by_coll[hi] - by_coll[lo]


def instance_pairs(deadline: Deadline, matches: Sequence[Matches], symmetric: bool) -> tuple[Ints, Ints]:
    """The distinct (headword, collocate) positions the queries' hits give (``symmetric``: as pairs in
    either order, the smaller position first); hits without either anchor give none."""
    heads: list[Ints] = []
    colls: list[Ints] = []
    for found in matches:
        deadline.check()
        target, keyword = found.target, found.keywords
        valid = (target >= 0) & (keyword >= 0)
        if symmetric:
            heads.append(np.minimum(target[valid], keyword[valid]))
            colls.append(np.maximum(target[valid], keyword[valid]))
        else:
            heads.append(target[valid])
            colls.append(keyword[valid])
    return _distinct(heads, colls)


def both_ways(head_ids: Ints, coll_ids: Ints) -> tuple[Ints, Ints]:
    """A symmetric relation's instances by their values, each in both directions — once where both
    values are the same (the row is one, and so is the instance)."""
    other = head_ids != coll_ids
    return np.concatenate((head_ids, coll_ids[other])), np.concatenate((coll_ids, head_ids[other]))


def _distinct(heads: list[Ints], colls: list[Ints]) -> tuple[Ints, Ints]:
    head = np.concatenate(heads) if heads else np.zeros(0, dtype=np.int64)
    coll = np.concatenate(colls) if colls else np.zeros(0, dtype=np.int64)
    if not len(head):
        return head, coll
    span = int(max(head.max(), coll.max())) + 1
    codes = np.unique(head * span + coll)
    return codes // span, codes % span


class TableCounter:
    """A relation's table counted piece by piece of its queries' hits (``NativeEngine.stream``), so
    that memory follows the table's distinct pairs and one piece's hits, not all the hits at once.

    An instance is a distinct pair of positions, and both lie at or after its hit's start: once no
    later hit can start before a piece's floor, the piece's pairs with a position before the floor
    are final (counted by their values and let go); the others wait for the next piece, where the
    same pair found again counts once."""

    MERGE_ROWS = 4_000_000
    """Counted rows gathered before they are merged into one sorted run (bounds the memory they take)."""

    def __init__(self, corpus: CwbCorpus, attribute: str, symmetric: bool, max_instances: int) -> None:
        self.p = corpus.p_attribute(attribute)
        self.lexicon = max(self.p.lexicon_size, 1)
        self.symmetric = symmetric
        self.max_instances = max_instances
        self.hits = 0
        self.waiting = (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        self.runs: list[tuple[Ints, Ints]] = []  # (pair codes ascending, counts)
        self.gathered = 0

    def add(self, deadline: Deadline, matches: Sequence[Matches], floor: int | None) -> None:
        """The hits of one piece of each query (the same start positions for all of them); ``floor``:
        no later piece has a hit starting before it (None: there is no later piece)."""
        self.hits += sum(len(m) for m in matches) * (2 if self.symmetric else 1)
        if self.hits > self.max_instances:
            raise LimitExceeded(f"the relation's queries have {self.hits:,}+ hits on this partition, more than a node "
                                f"counts at once for a word sketch ({self.max_instances:,}); build the partition's "
                                "sketch tables (cowbird sketches build) or narrow the subcorpus")
        head, coll = instance_pairs(deadline, matches, self.symmetric)
        if len(self.waiting[0]):
            head, coll = _distinct([self.waiting[0], head], [self.waiting[1], coll])
        final = np.ones(len(head), dtype=bool) if floor is None else np.minimum(head, coll) < floor
        self.waiting = (head[~final], coll[~final])
        if not final.any():
            return
        deadline.check()
        head_ids = np.asarray(self.p.ids_at(head[final]), dtype=np.int64)
        coll_ids = np.asarray(self.p.ids_at(coll[final]), dtype=np.int64)
        if self.symmetric:
            head_ids, coll_ids = both_ways(head_ids, coll_ids)
        codes, counts = np.unique(head_ids * self.lexicon + coll_ids, return_counts=True)
        self.runs.append((codes, counts.astype(np.int64)))
        self.gathered += len(codes)
        if self.gathered > self.MERGE_ROWS and len(self.runs) > 1:
            self.runs = [self._merged()]
            self.gathered = len(self.runs[0][0])

    def _merged(self) -> tuple[Ints, Ints]:
        if len(self.runs) == 1:
            return self.runs[0]
        codes, where = np.unique(np.concatenate([c for c, _ in self.runs]), return_inverse=True)
        counts = np.bincount(where, weights=np.concatenate([n for _, n in self.runs]), minlength=len(codes))
        return codes, counts.astype(np.int64)

    def table(self) -> RelationTable:
        assert not len(self.waiting[0]), "the last piece has no floor"
        codes, counts = self._merged() if self.runs else (np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))
        return RelationTable.of_codes(codes, counts, self.lexicon)


def relation_table(deadline: Deadline, corpus: CwbCorpus, attribute: str, matches: Sequence[Matches],
                   symmetric: bool, max_instances: int) -> RelationTable:
    """The relation's table from all its queries' hits on the partition."""
    counter = TableCounter(corpus, attribute, symmetric, max_instances)
    counter.add(deadline, matches, None)
    return counter.table()


@dataclass(frozen=True)
class RelationRows:
    """One relation of a headword's sketch on a partition."""

    values: list[str]
    f: list[int]
    totals: list[int]  # each collocate's total in the relation, f(R, y)
    head_total: int  # the headword's total in the relation, f(x, R)
    instances: int
    asked: list[int]  # totals of the collocates asked for


def sketch_rows(corpus: CwbCorpus, attribute: str, table: RelationTable, headword: str | None, swapped: bool,
                asked: list[str]) -> RelationRows:
    """The headword's rows of the table (all of them, most frequent first), and the totals of the
    collocates in ``asked``; none where the partition does not have the headword."""
    p = corpus.p_attribute(attribute)
    word = p.str2id(headword) if headword is not None else None
    values: list[str] = []
    f: list[int] = []
    totals: list[int] = []
    head_total = 0
    if word is not None:
        found_ids, counts, head_total = table.rows(word, swapped)
        order = np.lexsort((found_ids, -counts))
        ids, counts = found_ids[order].astype(np.int64), counts[order]
        values = [str(v) for v in p.string_array[ids]] if len(ids) else []
        f = counts.tolist()
        totals = table.totals(ids, swapped).tolist()
    found = [p.str2id(value) for value in asked]
    known = np.asarray([i for i in found if i is not None], dtype=np.int64)
    sums = iter(table.totals(known, swapped).tolist() if len(known) else [])
    asked_totals = [0 if i is None else next(sums) for i in found]
    return RelationRows(values, f, totals, head_total, table.instances, asked_totals)


# -- saved tables -----------------------------------------------------------------------------------


_LOADING = threading.Lock()
"""One ``np.load`` at a time: it reads each file's header with ``ast.literal_eval``, and CPython 3.11's
AST constructor is not safe in two threads at once ("AST constructor recursion depth mismatch",
python/cpython#106905: partitions' tables loaded in the node's worker threads together)."""


def saved(corpus: CwbCorpus, key: str) -> RelationTable | None:
    """The table saved under ``key`` for this corpus, mapped, or None."""
    folder = tables_directory(corpus) / key
    meta = folder / "table.json"
    if not meta.is_file():
        return None
    described = json.loads(meta.read_text(encoding="utf-8"))
    if not current(corpus, described):
        return None  # from another build of the corpus: not believed

    def load(name: str) -> Any:
        with _LOADING:
            return np.load(folder / f"{name}.npy", mmap_mode="r")

    table = RelationTable(load("heads"), load("colls"), load("counts"), load("by_coll"), int(described["instances"]))
    # mapped, not computed: a sketch reads only the pages of its headword's rows
    return table.with_sums(load("head_sums"), load("coll_sums"), load("colls_sorted"))


def save(corpus: CwbCorpus, key: str, table: RelationTable, described: dict[str, object]) -> Path:
    """Write the table under ``key`` (a folder written aside and renamed into place: a build that
    stops leaves no half table)."""
    root = tables_directory(corpus)
    root.mkdir(exist_ok=True)
    final = root / key
    partial = root / f".{key}.{os.getpid()}.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir()
    for name in ("heads", "colls", "counts", "by_coll"):
        np.save(partial / f"{name}.npy", np.ascontiguousarray(getattr(table, name)))
    for name, sums in zip(("head_sums", "coll_sums", "colls_sorted"), table._cumulative(), strict=True):
        np.save(partial / f"{name}.npy", np.ascontiguousarray(sums))
    meta = {**described, "format": FORMAT, "size": corpus.size, "neighbours": neighbours_stamp(corpus),
            "instances": table.instances,
            "rows": len(table.counts), "built": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    (partial / "table.json").write_text(json.dumps(meta, ensure_ascii=False, indent=1), encoding="utf-8")
    shutil.rmtree(final, ignore_errors=True)
    partial.rename(final)
    return final

