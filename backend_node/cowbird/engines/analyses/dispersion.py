"""Where the hits fall: a partition's part of Gries' DP over the regions of an s-attribute (in a
subcorpus: its regions' tokens there), and its hits in equal stretches of the corpus."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cowbird.engines.analyses.subcorpus import Filters, chosen
from cowbird.engines.base import Deadline
from cowbird.engines.results import Matches
from cowbird.store import CwbCorpus
from cowbird.store.regions import check_attributes


@dataclass
class PartDispersion:
    parts: int
    parts_with_hits: int
    smallest_part: int
    dp_sum: float
    bins: list[int]


def dispersion(deadline: Deadline, corpus: CwbCorpus, matches: Matches, attribute: str, hits: int,
               corpus_size: int, base: int, bins: int, filters: Filters = (),
               tokens: int | None = None) -> PartDispersion:
    """This partition's share of Gries' DP over the regions of ``attribute`` (its tokens outside any
    region are one more part): the sum of |hits share - size share| over its parts, the shares being
    of the corpus's ``hits`` and ``corpus_size``; and its hits (by where they start) in ``bins``
    equal stretches of the corpus. In the subcorpus of ``filters`` (of ``tokens`` over the corpus), the parts are
    the regions with tokens in it, each its tokens there, and the size shares are of ``tokens``."""
    check_attributes(corpus, s_attribute=attribute)
    deadline.check()
    within = chosen(corpus, filters)
    share_of = tokens if tokens is not None else corpus_size
    regions = corpus.s_attribute(attribute)
    sizes = within.region_tokens(regions)
    positions = np.asarray(matches.match, dtype=np.int64)
    numbers = regions.region_numbers(positions)
    inside = numbers >= 0
    per_part = np.bincount(numbers[inside], minlength=len(sizes)) if len(sizes) else np.zeros(0, dtype=np.int64)
    parts = (sizes > 0) | (per_part > 0)  # (a region outside the subcorpus is no part of it)
    sizes, per_part = sizes[parts], per_part[parts]
    outside_tokens = within.tokens - int(sizes.sum())
    outside_hits = int((~inside).sum())
    total = float(np.abs(per_part / hits - sizes / share_of).sum())
    if outside_tokens or outside_hits:
        total += abs(outside_hits / hits - outside_tokens / share_of)
    smallest = [int(sizes.min())] if len(sizes) else []
    if outside_tokens:
        smallest.append(outside_tokens)
    deadline.check()
    where = (positions + base) * bins // corpus_size
    counts = np.bincount(np.minimum(where, bins - 1), minlength=bins)
    return PartDispersion(len(sizes) + (1 if outside_tokens else 0), int((per_part > 0).sum()) + (1 if outside_hits
                          else 0), min(smallest, default=0), total, [int(c) for c in counts.tolist()])
