"""Word and n-gram lists: a partition's n-grams counted once (``ngram_table``, kept by the node for
the requests of one list that follow), and the rows and counts a request asks of them (``ngram_rows``).

An n-gram belongs to the partition where it starts. With ``within=none`` the n-grams that start in a
partition's last n-1 tokens run on into the next partition: they are completed with its first tokens,
which the partition carries (``cowbird.engines.edges``), so that a corpus's n-grams are the same however
it is cut. Their tokens need not be in the partition's lexicon; those that are not are kept as strings
(``NgramTable.strays``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import LimitExceeded
from cowbird.engines.analyses.spans import Ints
from cowbird.engines.base import Deadline
from cowbird.engines.edges import around
from cowbird.query.pcre import compile_pcre
from cowbird.store import CwbCorpus, PositionalAttribute
from cowbird.store.lexicon import matching
from cowbird.store.regions import check_attributes, filter_regions, painted

NGRAM_CHUNK = 1 << 22
"""Start positions whose n-grams are counted at once."""
TALLY_BITS = 22
"""N-grams whose packed ids take at most this many bits are counted in an array of a count per possible
key (4M counts, 32 MB) instead of sorted."""


@dataclass
class NgramTable:
    """Every n-gram of a partition (or of its part in a subcorpus) with its count: ``keys`` ascending,
    each n-gram's ids packed into one int64 (``bits`` per id) or, when they do not fit, an (n,) row
    of big-endian int32 ids seen as one opaque value (so that the bytes order as the ids do);
    ``tokens`` of the subcorpus, ``ngrams`` occurrences counted; ``strays``: the n-grams across the
    cut after the partition with a token its lexicon does not hold, by their tokens; ``across``:
    whether the n-grams running past the partition's last token were completed (within=none, with
    its neighbours' tokens) or could not be (a partition without them)."""

    attribute: PositionalAttribute
    n: int
    bits: int  # 0: keys are rows
    keys: npt.NDArray[Any]
    counts: Ints
    tokens: int
    ngrams: int
    strays: dict[tuple[str, ...], int] = field(default_factory=dict)
    across: bool = True

    def ids(self, rows: Ints) -> npt.NDArray[np.int64]:
        """The ids of the n-grams at these rows of the table, (len(rows), n)."""
        if self.bits:
            return _unpacked(self.keys[rows], self.n, self.bits)
        return np.asarray(self.keys[rows].view(ROW_ID).reshape(len(rows), self.n), dtype=np.int64)


ROW_ID = np.dtype(">i4")
"""An id in a row key: big-endian, so that rows compared byte by byte order as their ids do."""


def _packed(ids: Ints, starts: Ints, n: int, bits: int) -> Ints:
    """The ids at ``starts`` .. ``starts + n - 1`` packed into one int64 each (``bits`` per id)."""
    key = ids[starts].copy()
    for k in range(1, n):
        key = (key << bits) | ids[starts + k]
    return key


def _unpacked(keys: Ints, count: int, bits: int) -> npt.NDArray[np.int64]:
    """The ``count`` ids packed into each key, (len(keys), count)."""
    shifts = np.arange(count - 1, -1, -1, dtype=np.int64) * bits
    return np.asarray((np.asarray(keys, dtype=np.int64)[:, None] >> shifts) & ((1 << bits) - 1), dtype=np.int64)


def _void(n: int) -> np.dtype[Any]:
    return np.dtype((np.void, 4 * n))


def ngram_table(deadline: Deadline, corpus: CwbCorpus, attribute: str, n: int, within: str | None,
                filters: list[tuple[str, bool, str]], max_types: int, match: str | None = None,
                ignore_case: bool = False) -> NgramTable:
    """Count the n-grams of ``attribute`` in the partition: n consecutive tokens within one region of
    ``within`` (when given) and all inside the subcorpus (the tokens every filter lets through); with
    ``match``, only those with a token matching it are kept (and sorted: a few of the partition's
    millions), though ``ngrams`` counts them all, as the table without ``match`` does."""
    check_attributes(corpus, attribute, within)
    p = corpus.p_attribute(attribute)
    size = corpus.size
    regions = [filter_regions(corpus, a, negated, pattern) for a, negated, pattern in filters]
    bounds = corpus.s_attribute(within) if within else None
    bits = max(1, (max(1, p.lexicon_size) - 1).bit_length())
    packed = bits * n <= 63
    if n == 1 and not regions:  # the whole partition's word list: its lexicon frequencies
        counts = np.asarray(p.frequencies, dtype=np.int64)
        keys = np.flatnonzero(counts).astype(np.int64)
        return NgramTable(p, 1, bits, keys, counts[keys], size, size)
    token_ok = matching(p, match, ignore_case) if match is not None else None
    # one count per possible key, when there are few (a word list, n-grams of a small tagset): no sorting
    tallied = n == 1 or bits * n <= TALLY_BITS
    tally = np.zeros(p.lexicon_size if n == 1 else (1 << (bits * n)) if tallied else 0, dtype=np.int64)
    parts_keys: list[npt.NDArray[Any]] = []
    parts_counts: list[Ints] = []
    tokens = ngrams = 0
    held = 0
    for lo in range(0, size, NGRAM_CHUNK):
        deadline.check()
        hi = min(size, lo + NGRAM_CHUNK)
        stop = min(size, hi + n - 1)
        ids = np.asarray(p.id_range(lo, stop), dtype=np.int64)
        allowed = np.ones(stop - lo, dtype=np.bool_)
        for starts, ends in regions:
            allowed &= painted(starts, ends, lo, stop)[0]
        tokens += int(allowed[: hi - lo].sum())
        count = max(0, stop - n + 1 - lo)  # starts whose n-gram lies in the partition
        if count == 0:
            continue
        valid = allowed[:count].copy()
        for k in range(1, n):
            valid &= allowed[k : k + count]
        if bounds is not None:  # its first and last token inside one region of `within`
            inside, begun = painted(bounds.starts, bounds.ends, lo, stop)
            valid &= inside[:count] & inside[n - 1 : n - 1 + count] & (begun[:count] == begun[n - 1 : n - 1 + count])
        if token_ok is not None:
            ngrams += int(valid.sum())
            ok = token_ok[ids]
            wanted = ok[:count].copy()
            for k in range(1, n):
                wanted |= ok[k : k + count]
            valid &= wanted
        starts_at = np.flatnonzero(valid)
        if token_ok is None:
            ngrams += len(starts_at)
        if not len(starts_at):
            continue
        if tallied:  # a count per lexicon id, or per packed key
            key = ids[starts_at] if n == 1 else _packed(ids, starts_at, n, bits)
            tally += np.bincount(key, minlength=len(tally))
            continue
        if packed:
            found, counted = np.unique(_packed(ids, starts_at, n, bits), return_counts=True)
        else:  # rows of ids
            rows = np.stack([ids[starts_at + k] for k in range(n)], axis=1).astype(ROW_ID)
            found, counted = np.unique(np.ascontiguousarray(rows).view(_void(n)).ravel(), return_counts=True)
        parts_keys.append(found)
        parts_counts.append(counted.astype(np.int64))
        held += len(found)
        if held > 2 * max_types:  # fold the chunks' counts before they outgrow the limit
            merged = _merge_counts(parts_keys, parts_counts)
            parts_keys, parts_counts, held = [merged[0]], [merged[1]], len(merged[0])
            if held > max_types:
                raise LimitExceeded(f"more than {max_types:,} distinct {n}-grams on this partition: narrow the "
                                    "subcorpus down or count shorter n-grams")
    strays: dict[tuple[str, ...], int] = {}
    edge_keys: list[int] = []  # packed keys of the n-grams across the cut: added to the table's at the end
    across = bounds is not None
    if bounds is None:
        edge = _across_the_cut(corpus, p, n, filters, match, ignore_case)
        across = edge is not None
        for tokens_of, ids_of, kept in edge or []:
            ngrams += 1
            if not kept:
                continue
            if any(i is None for i in ids_of):
                strays[tokens_of] = strays.get(tokens_of, 0) + 1
                continue
            row = np.asarray(ids_of, dtype=np.int64)
            if tallied:
                tally[int(_packed(row, np.zeros(1, dtype=np.int64), n, bits)[0])] += 1
            elif packed:
                edge_keys.append(int(_packed(row, np.zeros(1, dtype=np.int64), n, bits)[0]))
            else:
                parts_keys.append(np.ascontiguousarray(row[None, :].astype(ROW_ID)).view(_void(n)).ravel())
                parts_counts.append(np.ones(1, dtype=np.int64))
    if tallied:
        keys = np.flatnonzero(tally).astype(np.int64)
        return NgramTable(p, n, bits, keys, tally[keys], tokens, ngrams, strays, across)
    keys, counts = _merge_counts(parts_keys, parts_counts) if parts_keys else (
        np.zeros(0, dtype=np.int64 if packed else _void(n)), np.zeros(0, dtype=np.int64))
    if edge_keys:
        keys, counts = _with_keys(keys, counts, edge_keys)
    if len(keys) > max_types:
        raise LimitExceeded(f"{len(keys):,} distinct {n}-grams on this partition, more than {max_types:,}: narrow "
                            "the subcorpus down or count shorter n-grams")
    return NgramTable(p, n, bits if packed else 0, keys, counts, tokens, ngrams, strays, across)


def _across_the_cut(corpus: CwbCorpus, p: PositionalAttribute, n: int, filters: list[tuple[str, bool, str]],
                    match: str | None,
                    ignore_case: bool) -> list[tuple[tuple[str, ...], list[int | None], bool]] | None:
    """The n-grams that start in the partition's last n-1 tokens and end in the tokens after it
    (``within=none``): each with its tokens, their lexicon ids here (None for a token the lexicon does
    not hold) and whether a token matches ``match``; only those whose every token is in the subcorpus
    of ``filters``, and none past the corpus's end. None when the partition carries no neighbours."""
    found = around(corpus)
    if found is None:
        return None
    size = corpus.size
    first = max(0, size - n + 1)
    stop = min(found.stop, size + n - 1)
    if stop <= size:  # the corpus ends here (or n is 1)
        return []
    own = np.asarray(p.id_range(first, size), dtype=np.int64).tolist()
    outside = list(range(size, stop))
    words = [p.strings[i] for i in own] + found.values(p.name, outside)
    ids: list[int | None] = [*own, *(p.str2id(w) for w in words[len(own):])]
    allowed = [True] * len(words)
    for attribute, negated, pattern in filters:
        starts, ends = filter_regions(corpus, attribute, negated, pattern)
        inside = painted(starts, ends, first, size)[0].tolist()
        allowed[: len(own)] = [a and b for a, b in zip(allowed[: len(own)], inside, strict=True)]
    allowed[len(own):] = [a and b for a, b in zip(allowed[len(own):], found.in_subcorpus(filters, outside),
                                                  strict=True)]
    search = compile_pcre(match, ignore_case).search if match is not None else None
    hits = [search is None or search(w) is not None for w in words]
    edge = []
    for start in range(first, size):
        at = start - first
        if start + n > stop or not all(allowed[at : at + n]):
            continue
        edge.append((tuple(words[at : at + n]), ids[at : at + n], any(hits[at : at + n])))
    return edge


def _with_keys(keys: Ints, counts: Ints, more: list[int]) -> tuple[Ints, Ints]:
    """The ascending packed ``keys`` with their ``counts``, each key of ``more`` (a few) counted once more:
    found by binary search, inserted where new (no sort of the whole table)."""
    counts = counts.copy()
    for key in more:
        at = int(np.searchsorted(keys, key))
        if at < len(keys) and int(keys[at]) == key:
            counts[at] += 1
        else:
            keys, counts = np.insert(keys, at, key), np.insert(counts, at, 1)
    return keys, counts


def _merge_counts(keys: list[npt.NDArray[Any]], counts: list[Ints]) -> tuple[npt.NDArray[Any], Ints]:
    """One ascending key per n-gram with the sum of its counts."""
    if len(keys) == 1:
        return keys[0], counts[0]
    found, inverse = np.unique(np.concatenate(keys), return_inverse=True)
    return found, np.bincount(inverse.ravel(), weights=np.concatenate(counts), minlength=len(found)).round().astype(
        np.int64)


def ngram_rows(deadline: Deadline, table: NgramTable, match: str | None, ignore_case: bool, threshold: int | None,
               top: int, max_rows: int,
               values: list[list[str]]) -> tuple[list[tuple[list[str], int]], list[int], int]:
    """The rows with at least ``threshold`` occurrences and the ``top`` most frequent (the most frequent
    first), of the n-grams with a token matching ``match``; the counts of ``values`` (0 where an
    n-gram does not occur or does not pass ``match``); and how many n-grams pass ``match``."""
    p = table.attribute
    passing = None
    if match is not None:
        token_ok = matching(p, match, ignore_case)
        ids = table.ids(np.arange(len(table.counts)))
        passing = token_ok[ids].any(axis=1)
    deadline.check()
    counts = table.counts if passing is None else np.where(passing, table.counts, 0)
    types = len(counts) if passing is None else int(passing.sum())
    chosen = np.zeros(0, dtype=np.int64)
    if threshold is not None:
        chosen = np.flatnonzero(counts >= threshold)
    if top:
        best = np.argsort(-counts, kind="stable")[:top]
        best = best[counts[best] > 0]
        if len(best) == top:  # ties at the last count: the first by their tokens, as the list is ordered
            last = counts[best[-1]]
            tied = np.flatnonzero(counts == last)
            if len(tied) > 1:
                strings = [tuple(row) for row in p.string_array[table.ids(tied)].tolist()]
                room = top - int((counts > last).sum())
                ordered = sorted(range(len(tied)), key=strings.__getitem__)[:room]
                best = np.concatenate([np.flatnonzero(counts > last), tied[ordered]])
        chosen = np.union1d(chosen, best)
    if len(chosen) > max_rows:
        raise LimitExceeded(f"{len(chosen):,} n-grams to send from this partition, more than {max_rows:,}: raise "
                            "the minimum frequency or narrow the subcorpus down")
    chosen = chosen[np.argsort(-counts[chosen], kind="stable")]
    ids = table.ids(chosen)
    rows = list(zip(p.string_array[ids].tolist() if len(ids) else [], counts[chosen].tolist(), strict=True))
    asked = _counts_of(table, counts, values)
    if not table.strays:
        return rows, asked, types
    search = compile_pcre(match, ignore_case).search if match is not None else None
    strays = {key: count for key, count in table.strays.items()
              if search is None or any(search(token) is not None for token in key)}
    return _with_strays(rows, strays, threshold, top), [
        count + strays.get(tuple(value), 0) for value, count in zip(values, asked, strict=True)], types + len(strays)


def _with_strays(rows: list[tuple[list[str], int]], strays: dict[tuple[str, ...], int], threshold: int | None,
                 top: int) -> list[tuple[list[str], int]]:
    """The rows with the stray n-grams (a few, across the cut, not in the table): those with at least
    ``threshold`` occurrences, and those among the ``top`` most frequent of rows and strays together
    (ties by their tokens, as the table's are), the most frequent first."""
    table = [(tuple(tokens), count) for tokens, count in rows]
    kept = {key: count for key, count in strays.items() if threshold is not None and count >= threshold}
    if top:
        best = sorted([*table, *strays.items()], key=lambda row: (-row[1], row[0]))[:top]
        kept.update((key, count) for key, count in best if key in strays)
        # a table row pushed out of the top by strays stays only where the threshold keeps it
        ranked = {key for key, _ in best}
        table = [(key, count) for key, count in table
                 if key in ranked or (threshold is not None and count >= threshold)]
    merged = sorted([*table, *kept.items()], key=lambda row: -row[1])
    return [(list(key), count) for key, count in merged]


def _counts_of(table: NgramTable, counts: Ints, values: list[list[str]]) -> list[int]:
    """The counts of these n-grams (0 where one does not occur), looked up all at once."""
    p = table.attribute
    found = [[p.str2id(token) for token in value] if len(value) == table.n else [None] for value in values]
    known = [k for k, ids in enumerate(found) if all(i is not None for i in ids)]
    asked = np.zeros(len(values), dtype=np.int64)
    if not known or not len(table.keys):
        return asked.tolist()
    ids = np.asarray([found[k] for k in known], dtype=np.int64)
    if table.bits:
        keys: npt.NDArray[Any] = _packed(ids.ravel(), np.arange(len(known), dtype=np.int64) * table.n, table.n,
                                         table.bits)
    else:
        keys = np.ascontiguousarray(ids.astype(ROW_ID)).view(table.keys.dtype).ravel()
    at = np.minimum(np.searchsorted(table.keys, keys), len(table.keys) - 1)
    hit = table.keys[at] == keys
    asked[np.asarray(known, dtype=np.int64)[hit]] = counts[at[hit]]
    return asked.tolist()
