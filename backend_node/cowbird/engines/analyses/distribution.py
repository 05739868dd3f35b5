"""Hits per value of an s-attribute, with each value's size — CQP's ``group A match ATT``."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cowbird.engines.base import Deadline
from cowbird.engines.results import Matches
from cowbird.store import CwbCorpus
from cowbird.store.regions import value_table, with_values


@dataclass
class Distribution:
    values: list[str]
    hits: list[int]
    regions_with_hits: list[int]
    tokens: list[int]
    regions: list[int]
    outside: int  # hits outside every region of the attribute
    all_values: bool  # every value of the attribute is listed (else: those with hits)
    truncated: bool


ALL_VALUES_UP_TO = 10_000  # an attribute with more values (an id) lists only those with hits


def distribution(deadline: Deadline, corpus: CwbCorpus, matches: Matches, attribute: str,
                 max_rows: int) -> Distribution:
    """Hits per value of an s-attribute at the match, with each value's size (tokens, regions) and
    the regions with at least one hit — CQP's ``group A match ATT``. Every value is listed, also
    those without hits, when the attribute has at most ``ALL_VALUES_UP_TO`` (genres, years);
    an attribute with more (sentence or text ids) lists the values with hits, as CQP does."""
    deadline.check()
    s = with_values(corpus, attribute, "by")
    table = value_table(s)
    numbers = s.region_numbers(np.asarray(matches.match, dtype=s.starts.dtype)) if len(s) else \
        np.full(len(matches), -1, dtype=np.int64)
    inside = numbers[numbers >= 0]
    hits = np.bincount(table.of_region[inside], minlength=len(table.names))
    hit_regions = np.unique(inside)
    regions_with_hits = np.bincount(table.of_region[hit_regions], minlength=len(table.names))
    all_values = len(table.names) <= min(max_rows, ALL_VALUES_UP_TO)  # a text type, not an id
    chosen = np.arange(len(table.names)) if all_values else np.flatnonzero(hits)
    truncated = len(chosen) > max_rows
    if truncated:
        chosen = chosen[np.argsort(-hits[chosen], kind="stable")[:max_rows]]
    return Distribution(
        [table.names[g] for g in chosen.tolist()], hits[chosen].tolist(), regions_with_hits[chosen].tolist(),
        table.tokens[chosen].tolist(), table.regions[chosen].tolist(), int(len(numbers) - len(inside)),
        all_values, truncated,
    )
