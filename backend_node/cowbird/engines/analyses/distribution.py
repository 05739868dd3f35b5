"""Hits per value of an s-attribute, with each value's size — CQP's ``group A match ATT`` — in the
whole partition or in a subcorpus of it (``Chosen``: each value's tokens and regions there)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cowbird.core.periods import Period, period_of
from cowbird.engines.analyses.subcorpus import Filters
from cowbird.engines.analyses.subcorpus import chosen as chosen_in
from cowbird.engines.base import Deadline
from cowbird.engines.results import Matches
from cowbird.store import CwbCorpus
from cowbird.store.regions import ValueTable, value_table, with_values


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
                 max_rows: int, period: Period | None = None, filters: Filters = ()) -> Distribution:
    """Hits per value of an s-attribute at the match, with each value's size (tokens, regions) and
    the regions with at least one hit — CQP's ``group A match ATT``. Every value is listed, also
    those without hits, when the attribute has at most ``ALL_VALUES_UP_TO`` (genres, years);
    an attribute with more (sentence or text ids) lists the values with hits, as CQP does. With a
    ``period``, the values are dates counted per period (``cowbird.core.periods``): every period
    with text is listed, the undated values together as the empty value. In the subcorpus of
    ``filters``, each value's size is its tokens and regions there, and the values listed are those
    it holds."""
    deadline.check()
    s = with_values(corpus, attribute, "by")
    table = value_table(s)
    if filters:
        table = _in_subcorpus(table, chosen_in(corpus, filters).region_tokens(s))
    numbers = s.region_numbers(np.asarray(matches.match, dtype=s.starts.dtype)) if len(s) else \
        np.full(len(matches), -1, dtype=np.int64)
    inside = numbers[numbers >= 0]
    hit_regions = np.unique(inside)
    if period is not None:
        return _periods(table, inside, hit_regions, period, int(len(numbers) - len(inside)))
    hits = np.bincount(table.of_region[inside], minlength=len(table.names))
    regions_with_hits = np.bincount(table.of_region[hit_regions], minlength=len(table.names))
    all_values = len(table.names) <= min(max_rows, ALL_VALUES_UP_TO)  # a text type, not an id
    chosen = np.flatnonzero(table.regions + hits) if all_values else np.flatnonzero(hits)
    truncated = len(chosen) > max_rows
    if truncated:
        chosen = chosen[np.argsort(-hits[chosen], kind="stable")[:max_rows]]
    return Distribution(
        [table.names[g] for g in chosen.tolist()], hits[chosen].tolist(), regions_with_hits[chosen].tolist(),
        table.tokens[chosen].tolist(), table.regions[chosen].tolist(), int(len(numbers) - len(inside)),
        all_values, truncated,
    )


def _in_subcorpus(table: ValueTable, region_tokens: npt.NDArray[np.int64]) -> ValueTable:
    """The values' sizes in a subcorpus: their regions' tokens there, and their regions with any."""
    size = len(table.names)
    tokens = np.bincount(table.of_region, weights=region_tokens, minlength=size).round().astype(np.int64)
    regions = np.bincount(table.of_region, weights=region_tokens > 0, minlength=size).round().astype(np.int64)
    return ValueTable(table.of_region, table.names, tokens, regions)


def _periods(table: ValueTable, inside: npt.NDArray[np.int64], hit_regions: npt.NDArray[np.int64], period: Period,
             outside: int) -> Distribution:
    """The distribution over periods: each value's period found once (the values are few beside the
    regions), then the regions' hits, sizes and counts summed per period."""
    keys = [period_of(name, period) for name in table.names]
    names = sorted(set(keys), key=lambda k: (k == "", k))  # the undated ("") last
    index = {name: n for n, name in enumerate(names)}
    of_value = np.fromiter((index[k] for k in keys), dtype=np.int64, count=len(keys))
    of_region = of_value[table.of_region]
    size = len(names)
    hits = np.bincount(of_region[inside], minlength=size)
    tokens = np.bincount(of_value, weights=table.tokens, minlength=size).round().astype(np.int64)
    kept = np.flatnonzero(tokens + hits)  # (in a subcorpus: the periods it holds)
    return Distribution(
        [names[k] for k in kept.tolist()], hits[kept].tolist(),
        np.bincount(of_region[hit_regions], minlength=size)[kept].tolist(), tokens[kept].tolist(),
        np.bincount(of_value, weights=table.regions, minlength=size).round().astype(np.int64)[kept].tolist(),
        outside, True, False)
