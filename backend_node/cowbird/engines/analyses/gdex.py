"""The GDEX score of every hit of a partition (``cowbird.core.gdex``), with arrays: each word form's
properties found once, each sentence's counts summed over its tokens, the rules' values combined in
the same order as ``cowbird.core.gdex.score`` combines them — so that the two give the same floats,
and the same sort keys on any partition. The flags and the sentences' counts are kept for the next
sort in the node's tables (``kept.Kept``: ``flags`` and ``sentences``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from cowbird.core import gdex
from cowbird.core.errors import LimitExceeded, UnknownAttribute
from cowbird.engines.analyses.kept import Kept
from cowbird.engines.analyses.spans import CHUNK_POSITIONS, MAX_SORT_CELLS
from cowbird.engines.base import Deadline
from cowbird.engines.results import Matches
from cowbird.store import CwbCorpus
from cowbird.store.compression import compiled
from cowbird.store.reader import PositionalAttribute, StructuralAttribute

Ints = npt.NDArray[np.int64]

RARE, NUMBER, URL, PUNCTUATION, STARTS, ENDS, BRACKETS = (1 << k for k in range(7))
_KNOWN = 1 << 7  # the flags of this id are computed


def _flags(kept: Kept, p: PositionalAttribute, ids: npt.NDArray[np.int32] | Ints,
           common: frozenset[str]) -> npt.NDArray[np.uint8]:
    """Each id's properties (computed once per word form, kept per partition and common words)."""
    table = kept.flags.get_or_put((p, common), lambda: np.zeros(len(p.strings), dtype=np.uint8))
    missing = ids[(table[ids] & _KNOWN) == 0]
    if len(missing):  # the word forms met for the first time, each once (marked, not sorted)
        seen = np.zeros(len(table), dtype=np.bool_)
        seen[missing] = True
        unknown = np.flatnonzero(seen)
    else:
        unknown = missing
    strings = p.strings
    for i in unknown.tolist():
        token = strings[i]
        if token.isalpha():  # most word forms: a word, no digit, symbol, URL, punctuation or bracket
            bits = _KNOWN | (RARE if token.lower() not in common else 0) | (STARTS if token[0].isupper() else 0)
            table[i] = bits
            continue
        bits = _KNOWN
        if gdex.is_rare(token, common):
            bits |= RARE
        if gdex.is_number_or_symbol(token):
            bits |= NUMBER
        if gdex.is_url(token):
            bits |= URL
        if all(gdex.is_punctuation(c) for c in token):
            bits |= PUNCTUATION
        if gdex.starts_sentence(token):
            bits |= STARTS
        if gdex.ends_sentence(token):
            bits |= ENDS
        if any(c in token for c in '()[]{}"'):
            bits |= BRACKETS
        table[i] = bits
    return table[ids]


def gdex_keys(deadline: Deadline, corpus: CwbCorpus, matches: Matches, spec: gdex.GdexSpec,
              kept: Kept | None = None) -> Ints:
    """Each hit's sort key (``gdex.sort_key`` of its score; hits outside any region score 0); what
    is worked out on the way kept in ``kept`` (the node's), else for this call only."""
    kept = kept or Kept()
    rules = spec.rules
    if rules.region not in corpus.entry.s_attributes:
        raise UnknownAttribute(f"sort=gdex: the corpus has no s-attribute {rules.region!r} to score the hits' "
                               f"sentences on (it has: {', '.join(corpus.entry.s_attributes) or 'none'})")
    s = corpus.s_attribute(rules.region)
    match = np.asarray(matches.match, dtype=np.int64)
    matchend = np.asarray(matches.matchend, dtype=np.int64)
    numbers = s.region_numbers(match) if len(s) else np.full(len(match), -1, dtype=np.int64)
    keys = np.full(len(match), gdex.SCALE, dtype=np.int64)
    inside = np.flatnonzero(numbers >= 0)
    if not len(inside):
        return keys
    sentences, of_hit = _distinct(numbers[inside])
    starts = np.asarray(s.starts, dtype=np.int64)[sentences]
    ends = np.asarray(s.ends, dtype=np.int64)[sentences]
    lengths = ends - starts + 1
    if int(lengths.sum()) > MAX_SORT_CELLS:
        raise LimitExceeded(f"sort=gdex: the {len(sentences):,} sentences of these hits hold more tokens than a "
                            "node scores at once; narrow the query down")
    counts = _counts_of(deadline, kept, corpus, s, sentences, starts, lengths, frozenset(spec.common))
    weights = rules.weights.model_dump()
    total = sum(weights.values())
    length = lengths.astype(np.float64)
    values = {
        "length": np.where(lengths < rules.min_length, length / rules.min_length,
                           np.where(lengths > rules.max_length, rules.max_length / length, 1.0)),
        "whole": (counts["starts"] & counts["ends"]).astype(np.float64),
        "rare": np.ones(len(sentences)) if not rules.common_words
        else np.maximum(0.0, 1 - counts["rare"] / rules.max_rare),
        "numbers": np.maximum(0.0, 1 - counts["number"] / rules.max_rare),
        "urls": np.where(counts["url"] > 0, 0.0, 1.0),
        "brackets": counts["balanced"].astype(np.float64),
    }
    first = match[inside] - starts[of_hit]
    last = matchend[inside] - starts[of_hit]
    edge = ((first > 0) & (last < counts["last_word"][of_hit])).astype(np.float64)
    score = np.zeros(len(inside), dtype=np.float64)
    for name in ("length", "whole", "rare", "numbers", "urls", "brackets"):  # the order of gdex.score
        score = score + weights[name] * values[name][of_hit]
    score = (score + weights["edge"] * edge) / total
    keys[inside] = gdex.SCALE - np.round(score * gdex.SCALE).astype(np.int64)
    return keys


def _distinct(numbers: Ints) -> tuple[Ints, Ints]:
    """``np.unique(numbers, return_inverse=True)``; without sorting where they are in order already
    (hits in corpus order: their sentences' numbers never go down)."""
    if len(numbers) < 2 or bool(np.all(numbers[1:] >= numbers[:-1])):
        new = np.ones(len(numbers), dtype=np.bool_)
        new[1:] = numbers[1:] != numbers[:-1]
        return numbers[new], np.cumsum(new, dtype=np.int64) - 1
    sentences, of_hit = np.unique(numbers, return_inverse=True)
    return sentences, np.asarray(of_hit, dtype=np.int64).reshape(-1)


COUNTS = {"rare": np.uint16, "number": np.uint16, "url": np.bool_, "starts": np.bool_, "ends": np.bool_,
          "balanced": np.bool_, "last_word": np.int32}
"""What is kept of each sentence scored (13 bytes with its mark): its counts, never above 65,535."""
SENTENCES_KEPT = 4_000_000
"""A partition with at most this many sentences keeps what it counted of them (52 MB at most), so that
the next GDEX sort reads the sentences it has scored already; a larger one counts them each time."""


def _counts_of(deadline: Deadline, kept: Kept, corpus: CwbCorpus, s: StructuralAttribute, sentences: Ints,
               starts: Ints, lengths: Ints, common: frozenset[str]) -> dict[str, Ints]:
    """``_sentence_counts`` of these sentences, those counted before read from the partition's table."""
    if len(s) > SENTENCES_KEPT:
        return _sentence_counts(deadline, kept, corpus, starts, lengths, common)

    def empty() -> dict[str, npt.NDArray[Any]]:
        made: dict[str, npt.NDArray[Any]] = {name: np.zeros(len(s), dtype=kind) for name, kind in COUNTS.items()}
        made["known"] = np.zeros(len(s), dtype=np.bool_)
        return made

    table = kept.sentences.get_or_put((s, common), empty)
    new = np.flatnonzero(~table["known"][sentences])
    if len(new):
        counted = _sentence_counts(deadline, kept, corpus, starts[new], lengths[new], common)
        for name in COUNTS:
            table[name][sentences[new]] = np.minimum(counted[name], 65_535)
        table["known"][sentences[new]] = True  # (two threads counting one sentence write the same values)
    return {name: np.asarray(table[name][sentences], dtype=np.int64) for name in COUNTS}


def _sentence_counts(deadline: Deadline, kept: Kept, corpus: CwbCorpus, starts: Ints, lengths: Ints,
                     common: frozenset[str]) -> dict[str, Ints]:
    """Per sentence: its rare words, numbers and symbols, URLs, whether its first token starts one and
    its last ends one, whether its brackets balance, and the index of its last word."""
    p = corpus.p_attribute("word")
    n = len(starts)
    out = {name: np.zeros(n, dtype=np.int64) for name in ("rare", "number", "url", "starts", "ends", "balanced",
                                                            "last_word")}
    first = 0
    while first < n:
        deadline.check()
        # sentences whose tokens make up at most CHUNK_POSITIONS positions (at least one sentence)
        cumulative = np.cumsum(lengths[first:])
        last = first + max(1, int(np.searchsorted(cumulative, CHUNK_POSITIONS, side="right")))
        chunk = slice(first, last)
        size = lengths[chunk]
        positions = np.empty(int(size.sum()), dtype=np.int64)
        _spread(starts[chunk], size, positions)
        ids = p.ids_at(positions)  # int32: a copy to int64 cost more than the gather itself
        flags = _flags(kept, p, ids, common)
        # each bracketed token's net ( [ { and quotes, in token order (the loop reads them in turn)
        marked = np.flatnonzero(flags & BRACKETS)
        kinds, where = np.unique(ids[marked], return_inverse=True)
        brackets = np.asarray([gdex.bracket_counts(p.strings[i]) for i in kinds.tolist()],
                              dtype=np.int64).reshape(-1, 4)[where.reshape(-1)]
        _count_sentences(flags, size, brackets, *(out[name][chunk] for name in _COUNTED))
        first = last
    return out


_COUNTED = ("rare", "number", "url", "starts", "ends", "last_word", "balanced")


def warm() -> None:
    """Load the compiled loops (from numba's cache on disk, or compile it), as a node does at start:
    the first GDEX sort would otherwise wait ~0.6 s for it."""
    one = np.zeros(1, dtype=np.int64)
    _spread(one, np.ones(1, dtype=np.int64), one.copy())
    _count_sentences(np.zeros(1, dtype=np.uint8), np.ones(1, dtype=np.int64), np.zeros((0, 4), dtype=np.int64),
                     *(one.copy() for _ in _COUNTED))


@compiled
def _spread(starts: Ints, sizes: Ints, positions: Ints) -> None:  # pragma: no cover
    """Every position of the sentences, one after the other (``np.repeat`` and ``np.arange`` took
    ten times as long for the 17 M positions of a frequent word's sentences)."""
    at = 0
    for k in range(len(starts)):
        for j in range(sizes[k]):
            positions[at + j] = starts[k] + j
        at += sizes[k]


@compiled
def _count_sentences(flags: npt.NDArray[np.uint8], sizes: Ints, brackets: Ints, rare: Ints, number: Ints,
                     url: Ints, starts: Ints, ends: Ints, last_word: Ints, balanced: Ints) -> None:  # pragma: no cover
    """The sentences' counts, one pass over their tokens (``flags``, sentence after sentence, ``sizes``
    tokens each): the rare words, the numbers and symbols, whether a URL is among them, whether the
    first token starts a sentence and the last ends one, the index of the last token that is not
    punctuation alone (0 when none after the first is), and the brackets rule (``gdex.balanced``:
    each kind's running count never below 0 and 0 at the end, the quotes even) from ``brackets``,
    the net counts of each token marked BRACKETS in turn. Compiled (numba): the reference written
    with arrays took ~0.5 s for a million sentences."""
    position = 0
    marked = 0
    for k in range(len(sizes)):
        size = sizes[k]
        rare_words = numbers = 0
        has_url = False
        last = 0
        round_, square, curly, quotes = 0, 0, 0, 0
        ok = True
        for j in range(size):
            f = flags[position + j]
            if f & RARE:
                rare_words += 1
            if f & NUMBER:
                numbers += 1
            if f & URL:
                has_url = True
            if not f & PUNCTUATION:
                last = j
            if f & BRACKETS:
                round_ += brackets[marked, 0]
                square += brackets[marked, 1]
                curly += brackets[marked, 2]
                quotes += brackets[marked, 3]
                marked += 1
                if round_ < 0 or square < 0 or curly < 0:
                    ok = False
        rare[k] = rare_words
        number[k] = numbers
        url[k] = has_url
        starts[k] = (flags[position] & STARTS) != 0
        ends[k] = (flags[position + size - 1] & ENDS) != 0
        last_word[k] = last
        balanced[k] = ok and round_ == 0 and square == 0 and curly == 0 and quotes % 2 == 0
        position += size
