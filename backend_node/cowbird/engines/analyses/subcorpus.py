"""A partition's part in a subcorpus: its tokens and texts in the regions every filter chooses, and
an s-attribute's values in it with their sizes (summed over partitions by ``cowbird.core.subcorpus``)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from cowbird.core.errors import LimitExceeded
from cowbird.core.periods import Period, period_of
from cowbird.query.pcre import compile_pcre
from cowbird.store import CwbCorpus
from cowbird.store.regions import (
    check_attributes,
    covered_before,
    filter_regions,
    intersection,
    tokens_in,
    value_table,
    with_values,
)


@dataclass(frozen=True)
class SubcorpusSize:
    """A partition's part in a subcorpus: its tokens, the texts it touches, and an s-attribute's values
    in it (those with tokens there) with their tokens and regions there."""

    tokens: int
    texts: int | None
    all_texts: int | None
    values: list[str]
    value_tokens: list[int]
    value_regions: list[int]


def subcorpus(corpus: CwbCorpus, filters: list[tuple[str, bool, str]], texts: str | None, attribute: str | None,
              match: str | None, ignore_case: bool, max_values: int, period: Period | None = None) -> SubcorpusSize:
    """The partition's part in the subcorpus the filters choose (the tokens in regions whose value
    matches every filter): its size, and with ``attribute`` that attribute's values in it (with a
    ``period``: the periods of the dates they hold, ``cowbird.core.periods``)."""
    check_attributes(corpus, None, texts)
    starts, ends = intersection([filter_regions(corpus, a, negated, pattern) for a, negated, pattern in filters],
                                corpus.size)
    count = covered_before(starts, ends)
    tokens = int((ends - starts + 1).sum())
    text_regions = tokens_in(count, corpus.s_attribute(texts)) if texts else None
    text_count = None if text_regions is None else int((text_regions > 0).sum())
    all_texts = None if text_regions is None else len(text_regions)
    if attribute is None:
        return SubcorpusSize(tokens, text_count, all_texts, [], [], [])
    s = with_values(corpus, attribute, "values")
    table = value_table(s)
    per_region = tokens_in(count, s)
    value_tokens = np.bincount(table.of_region, weights=per_region, minlength=len(table.names)).round().astype(np.int64)
    value_regions = np.bincount(table.of_region, weights=per_region > 0, minlength=len(table.names)).round().astype(
        np.int64)
    chosen = np.flatnonzero(value_regions > 0)
    if match is not None:
        search = compile_pcre(match, ignore_case).search
        chosen = chosen[np.fromiter((search(table.names[i]) is not None for i in chosen), dtype=np.bool_,
                                    count=len(chosen))]
    if period is not None:
        keys = [period_of(table.names[i], period) for i in chosen.tolist()]
        tokens_of: dict[str, int] = {}
        regions_of: dict[str, int] = {}
        for key, t, r in zip(keys, value_tokens[chosen].tolist(), value_regions[chosen].tolist(), strict=True):
            tokens_of[key] = tokens_of.get(key, 0) + t
            regions_of[key] = regions_of.get(key, 0) + r
        names = sorted(tokens_of, key=lambda k: (k == "", k))
        return SubcorpusSize(tokens, text_count, all_texts, names, [tokens_of[k] for k in names],
                             [regions_of[k] for k in names])
    if len(chosen) > max_values:
        raise LimitExceeded(f"values={attribute}: {len(chosen):,} values on this partition, more than {max_values:,} "
                            "listed at once; choose some with match (a regular expression)")
    return SubcorpusSize(tokens, text_count, all_texts, [table.names[i] for i in chosen], value_tokens[chosen].tolist(),
                         value_regions[chosen].tolist())
