"""Collocates' marginal frequencies in a partition, for those it did not see co-occur: their sums
over the partitions are the corpus's frequencies."""

from __future__ import annotations

from cowbird.store import CwbCorpus


def marginals(corpus: CwbCorpus, attribute: str, values: list[str]) -> list[int]:
    """The frequency of each value of ``attribute`` in the corpus (0 where it does not occur)."""
    p = corpus.p_attribute(attribute)
    ids = [p.str2id(value) for value in values]
    return [0 if i is None else p.frequency(i) for i in ids]
