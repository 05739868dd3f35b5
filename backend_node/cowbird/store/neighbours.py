"""The tokens around a partition: the last tokens of the partitions before it and the first ones after it.

A partition is a complete CWB corpus, so at its last token there is no next one; over the corpus in
one piece there is. So that no answer depends on where the corpus was cut, each partition's home
directory holds ``neighbours.json``: up to ``NEIGHBOUR_TOKENS`` tokens just before the partition's
first position (``before``, in corpus order) and just after its last (``after``), read from the CWB
files of the partitions around it. Each token carries every p-attribute's value and, for each
s-attribute, the value of the region it lies in (``null`` for a region without values) and whether
that region starts or ends at it; an s-attribute is absent from a token that lies in none of its
regions. The first partition has no ``before`` tokens and the last no ``after`` tokens: there the
corpus really begins or ends.

The file also carries what CQP's rule for a value test past the corpus end (and for an unset label)
reads of the corpus in one piece: its size and, for each p-attribute whose whole lexicon has fewer
than ``SMALL_LEXICON`` types, that lexicon with each string's frequency (``corpus_size``,
``small_lexicons``), so that the rule does not depend on the partition's own lexicon.

The encoder writes the files after the partitions are in place (``write_neighbours``); ``cowbird
partitions neighbours`` writes them for a corpus encoded before. The native engine reads ``after``
for a lookahead (one comparing labels too) or an opening tag at the partition's end; n-grams,
collocation windows and contexts read both. ``Neighbours.load`` is None when the file is absent (a
corpus encoded before it existed), and such a partition behaves as before.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from cowbird.core.errors import CorpusFormatError
from cowbird.core.manifest import read_json
from cowbird.store.reader import CwbCorpus

NEIGHBOUR_TOKENS = 128
"""How many tokens of the corpus before and after a partition it carries. A lookahead reads one; an
n-gram or a collocation window across a cut reads a few (windows and n-grams are far shorter); a
KWIC context of 40 tokens fits too. The file is small beside any partition: on EWT about 180 KB (each token
repeats the values of its regions, URLs included), written in some 50 ms per partition."""

SMALL_LEXICON = 1000
"""CQP compiles a regex over a lexicon of fewer types than this into a list of ids (parse_actions.c,
OptimizeStringConstraint), which changes what it holds past the corpus end: the whole corpus's
lexicons this small are carried whole; a larger one is only said to be larger."""

NEIGHBOURS_FILE = "neighbours.json"
"""The file in a partition's home directory."""

NEIGHBOURS_FORMAT = "cowbird-neighbours/1"
"""The ``format`` member of the file; a reader refuses another."""


@dataclass(frozen=True)
class RegionMark:
    """A neighbour token's place in one s-attribute: its region's value and whether it starts or ends there."""

    value: str | None
    start: bool
    end: bool


@dataclass(frozen=True)
class NeighbourToken:
    """One token of a neighbouring partition: ``values`` by p-attribute, ``regions`` by s-attribute
    (an s-attribute whose regions do not cover the token is absent)."""

    values: dict[str, str]
    regions: dict[str, RegionMark]

    def to_json(self) -> dict[str, Any]:
        return {"p": self.values,
                "s": {name: {"value": mark.value, "start": mark.start, "end": mark.end}
                      for name, mark in self.regions.items()}}

    @staticmethod
    def from_json(data: Any, where: str) -> NeighbourToken:
        try:
            values = {str(k): str(v) for k, v in data["p"].items()}
            regions = {str(name): RegionMark(None if mark["value"] is None else str(mark["value"]),
                                             bool(mark["start"]), bool(mark["end"]))
                       for name, mark in data["s"].items()}
        except (KeyError, TypeError, AttributeError) as exc:
            raise CorpusFormatError(f"{where}: a token is malformed ({exc!r})") from exc
        return NeighbourToken(values, regions)


@dataclass(frozen=True)
class Neighbours:
    """The tokens before and after one partition, in corpus order: ``before[-1]`` is the token just
    before the partition's first position, ``after[0]`` the one just after its last."""

    before: list[NeighbourToken]
    after: list[NeighbourToken]
    before_offset: int  # global position of before[0] (the partition's offset when before is empty)
    after_offset: int  # global position of after[0] (the partition's end)
    corpus_size: int | None = None  # tokens in the whole corpus (None: an older file)
    small_lexicons: dict[str, dict[str, int]] | None = None  # whole lexicons under SMALL_LEXICON types

    @staticmethod
    def load(home: Path) -> Neighbours | None:
        """The neighbours written into a partition's home directory, or None when it has no such file."""
        path = home / NEIGHBOURS_FILE
        if not path.exists():
            return None
        data = read_json(path, CorpusFormatError)
        if not isinstance(data, dict) or data.get("format") != NEIGHBOURS_FORMAT:
            found = data.get("format") if isinstance(data, dict) else None
            raise CorpusFormatError(f"{path}: format {found!r} is not {NEIGHBOURS_FORMAT!r}; write it again "
                                    "with cowbird partitions neighbours")
        try:
            small = data.get("small_lexicons")
            return Neighbours([NeighbourToken.from_json(t, str(path)) for t in data["before"]],
                              [NeighbourToken.from_json(t, str(path)) for t in data["after"]],
                              int(data["before_offset"]), int(data["after_offset"]),
                              None if data.get("corpus_size") is None else int(data["corpus_size"]),
                              None if small is None else {str(name): {str(k): int(v) for k, v in lexicon.items()}
                                                          for name, lexicon in small.items()})
        except (KeyError, TypeError, ValueError) as exc:
            raise CorpusFormatError(f"{path}: missing or malformed member ({exc!r})") from exc

    def write(self, home: Path) -> Path:
        path = home / NEIGHBOURS_FILE
        data = {"format": NEIGHBOURS_FORMAT, "before_offset": self.before_offset, "after_offset": self.after_offset,
                "corpus_size": self.corpus_size, "small_lexicons": self.small_lexicons,
                "before": [t.to_json() for t in self.before], "after": [t.to_json() for t in self.after]}
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8")
        partial.replace(path)
        return path

    def small_lexicon(self, attribute: str) -> dict[str, int] | None:
        """The whole corpus's lexicon of a p-attribute with each string's frequency, when it has fewer
        than ``SMALL_LEXICON`` types; None when it has more (or the file predates these members)."""
        return None if self.small_lexicons is None else self.small_lexicons.get(attribute)

    def before_values(self, attribute: str) -> list[str]:
        """The ``before`` tokens' values of a p-attribute, in corpus order."""
        return [_value(token, attribute) for token in self.before]

    def after_values(self, attribute: str) -> list[str]:
        """The ``after`` tokens' values of a p-attribute, in corpus order."""
        return [_value(token, attribute) for token in self.after]

    def before_regions(self, attribute: str) -> list[RegionMark | None]:
        """The ``before`` tokens' regions of an s-attribute (None: the token lies in none)."""
        return [token.regions.get(attribute) for token in self.before]

    def after_regions(self, attribute: str) -> list[RegionMark | None]:
        """The ``after`` tokens' regions of an s-attribute (None: the token lies in none)."""
        return [token.regions.get(attribute) for token in self.after]


def _value(token: NeighbourToken, attribute: str) -> str:
    try:
        return token.values[attribute]
    except KeyError:
        known = ", ".join(token.values)
        raise CorpusFormatError(f"the neighbour tokens have no p-attribute {attribute!r} (they have: {known})") \
            from None


def read_tokens(corpus: CwbCorpus, start: int, stop: int) -> list[NeighbourToken]:
    """Tokens ``start`` .. ``stop - 1`` of one CWB corpus (positions of that corpus), with every
    attribute, read through its lexicon one string at a time (a big lexicon is never decoded whole)."""
    if stop <= start:
        return []
    values: dict[str, list[str]] = {}
    for name in corpus.p_attribute_names:
        attribute = corpus.p_attribute(name)
        ids = attribute.id_range(start, stop)
        values[name] = [attribute.id2str(int(i)) for i in ids]
    positions = np.arange(start, stop, dtype=np.int64)
    regions: dict[str, list[RegionMark | None]] = {}
    for name in corpus.s_attribute_names:
        s_attribute = corpus.s_attribute(name)
        numbers = s_attribute.region_numbers(positions) if len(s_attribute) else np.full(len(positions), -1)
        found = {number: s_attribute.region(number) for number in set(numbers.tolist()) if number >= 0}
        regions[name] = [None if number < 0 else
                         RegionMark(found[number].value, found[number].start == cpos, found[number].end == cpos)
                         for cpos, number in zip(positions.tolist(), numbers.tolist(), strict=True)]
    tokens = []
    for k in range(stop - start):
        tokens.append(NeighbourToken({name: column[k] for name, column in values.items()},
                                     {name: mark for name, column in regions.items()
                                      if (mark := column[k]) is not None}))
    return tokens


def small_lexicons(partitions: Sequence[CwbCorpus]) -> dict[str, dict[str, int]]:
    """Per p-attribute whose lexicon over all partitions has fewer than ``SMALL_LEXICON`` types, that
    lexicon with each string's frequency (a larger one is given up as soon as it is seen to be larger)."""
    found: dict[str, dict[str, int]] = {}
    for name in partitions[0].p_attribute_names if partitions else []:
        counts: dict[str, int] = {}
        for partition in partitions:
            attribute = partition.p_attribute(name)
            if attribute.lexicon_size >= SMALL_LEXICON:
                break
            for string, frequency in zip(attribute.strings, np.asarray(attribute.frequencies).tolist(), strict=True):
                counts[string] = counts.get(string, 0) + int(frequency)
            if len(counts) >= SMALL_LEXICON:
                break
        else:
            found[name] = counts
    return found


def neighbours_of(partitions: Sequence[CwbCorpus], index: int, tokens: int = NEIGHBOUR_TOKENS,
                  lexicons: dict[str, dict[str, int]] | None = None) -> Neighbours:
    """The neighbours of ``partitions[index]``, the partitions in corpus order: the last ``tokens``
    tokens before it and the first ``tokens`` after it, taken from as many partitions as they span
    (``lexicons``: the corpus's ``small_lexicons``, computed when not given)."""
    before: list[NeighbourToken] = []
    for previous in reversed(partitions[:index]):
        if len(before) >= tokens:
            break
        wanted = tokens - len(before)
        before = read_tokens(previous, max(0, previous.size - wanted), previous.size) + before
    after: list[NeighbourToken] = []
    for following in partitions[index + 1:]:
        if len(after) >= tokens:
            break
        after += read_tokens(following, 0, min(following.size, tokens - len(after)))
    offset = sum(p.size for p in partitions[:index])
    return Neighbours(before, after, offset - len(before), offset + partitions[index].size,
                      sum(p.size for p in partitions), small_lexicons(partitions) if lexicons is None else lexicons)


def write_neighbours(partitions: Sequence[CwbCorpus], tokens: int = NEIGHBOUR_TOKENS) -> list[Path]:
    """Write ``neighbours.json`` into every partition's home directory (partitions in corpus order);
    a corpus of one partition gets an empty one, which says that its ends are the corpus's."""
    names = {tuple(p.p_attribute_names) for p in partitions}
    if len(names) > 1:
        raise CorpusFormatError("the partitions do not have the same p-attributes: "
                                + "; ".join(", ".join(n) for n in sorted(names)))
    lexicons = small_lexicons(partitions)
    return [neighbours_of(partitions, k, tokens, lexicons).write(p.entry.home) for k, p in enumerate(partitions)]
