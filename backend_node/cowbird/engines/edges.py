"""The tokens just outside a partition, as the analyses and the concordance read them.

A partition is a complete CWB corpus: its first token has no previous one and its last no next one,
though over the corpus in one piece they have. ``cowbird.store.neighbours`` writes, into each
partition's home directory, up to ``NEIGHBOUR_TOKENS`` tokens before and after it; this module loads
them once per opened partition (:func:`around`) and answers in the terms of the code that reads
tokens around a position: a partition's *local* positions run on past its edges, ``-1`` being the
token just before its first and ``size`` the one just after its last, as far as the neighbours
reach (``Around.first`` .. ``Around.stop - 1``).

What reads them: n-grams with ``within=none`` that start in the partition and run past its last
token (``analyses/ngrams.py``), collocation windows without a region (``analyses/cooccurrence.py``)
and KWIC contexts in tokens (``results.py:build_lines``). A partition without the file (encoded
before it existed) has no :class:`Around`, and those stop at its edges as they did before.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

from cowbird.core.errors import CorpusFormatError
from cowbird.query.pcre import compile_pcre
from cowbird.store import CwbCorpus
from cowbird.store.neighbours import Neighbours, NeighbourToken

_LOADED: weakref.WeakKeyDictionary[CwbCorpus, Around | None] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


Mark = tuple[str | None, bool, bool]
"""A neighbour token's place in one s-attribute: its region's value, whether the region starts there,
whether it ends there (``store.neighbours.RegionMark`` as a plain tuple)."""


@dataclass(frozen=True)
class Around:
    """A partition's neighbour tokens seen from inside it: local positions ``first`` .. ``-1`` are the
    tokens before it, ``size`` .. ``stop - 1`` those after it. Held as tuples of strings, which the
    garbage collector does not track (a node's analyses allocate much, and every collection would
    walk the file's objects otherwise)."""

    size: int
    offset: int  # the global position of the partition's first token
    before: int
    after: int
    p_values: dict[str, tuple[tuple[str, ...], tuple[str, ...]]]  # by p-attribute: before, after
    s_marks: dict[str, tuple[tuple[Mark | None, ...], tuple[Mark | None, ...]]]  # by s-attribute

    @staticmethod
    def of(neighbours: Neighbours, size: int) -> Around:
        names = {name for token in [*neighbours.before, *neighbours.after] for name in token.values}
        regions = {name for token in [*neighbours.before, *neighbours.after] for name in token.regions}

        def marks(tokens: list[NeighbourToken], name: str) -> tuple[Mark | None, ...]:
            return tuple(None if (m := t.regions.get(name)) is None else (m.value, m.start, m.end) for t in tokens)

        return Around(size, neighbours.before_offset + len(neighbours.before), len(neighbours.before),
                      len(neighbours.after),
                      {name: (tuple(neighbours.before_values(name)), tuple(neighbours.after_values(name)))
                       for name in names},
                      {name: (marks(neighbours.before, name), marks(neighbours.after, name)) for name in regions})

    @property
    def first(self) -> int:
        return -self.before

    @property
    def stop(self) -> int:
        return self.size + self.after

    def values(self, attribute: str, positions: Sequence[int]) -> list[str]:
        """The values of a p-attribute at local positions outside the partition (each before 0 or from
        ``size`` on, within the neighbours' reach)."""
        if not positions:
            return []
        if attribute not in self.p_values:
            known = ", ".join(sorted(self.p_values))
            raise CorpusFormatError(f"the neighbour tokens have no p-attribute {attribute!r} (they have: {known})")
        before, after = self.p_values[attribute]
        return [before[self.before + p] if p < 0 else after[p - self.size] for p in positions]

    def regions(self, attribute: str, positions: Sequence[int]) -> list[Mark | None]:
        """The regions of an s-attribute at local positions outside the partition (None: in none)."""
        before, after = self.s_marks.get(attribute, ((None,) * self.before, (None,) * self.after))
        return [before[self.before + p] if p < 0 else after[p - self.size] for p in positions]

    def in_subcorpus(self, filters: Sequence[tuple[str, bool, str]], positions: Sequence[int]) -> list[bool]:
        """Whether each local position outside the partition lies in the subcorpus of ``filters``
        (``(s-attribute, negated, CQP regex)``, as ``store.regions.filter_regions`` takes them): inside
        a region of each filter's attribute whose value matches the regex whole (or, negated, does not)."""
        passes = [True] * len(positions)
        for attribute, negated, pattern in filters:
            search = compile_pcre(pattern).search
            for k, mark in enumerate(self.regions(attribute, positions)):
                if mark is None or mark[0] is None or (search(mark[0]) is not None) == negated:
                    passes[k] = False
        return passes


def around(corpus: CwbCorpus) -> Around | None:
    """The neighbours of the partition ``corpus`` (read once per opened corpus), or None when its home
    directory holds no ``neighbours.json``."""
    with _LOCK:
        if corpus in _LOADED:
            return _LOADED[corpus]
    neighbours = Neighbours.load(corpus.entry.home)
    found = None if neighbours is None else Around.of(neighbours, corpus.size)
    with _LOCK:
        _LOADED[corpus] = found
    return found
