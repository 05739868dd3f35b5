"""Collocates' marginal frequencies in a partition (in a subcorpus of it), for those it
did not see co-occur: their sums over the partitions are the corpus's (the subcorpus's) frequencies."""

from __future__ import annotations

from cowbird.engines.analyses.kept import Kept
from cowbird.engines.analyses.subcorpus import Filters, chosen
from cowbird.store import CwbCorpus


def marginals(corpus: CwbCorpus, attribute: str, values: list[str], filters: Filters = (),
              kept: Kept | None = None) -> list[int]:
    """The frequency of each value of ``attribute`` in the corpus, or in the subcorpus of ``filters``
    (0 where it does not occur; the subcorpus's counts kept in ``kept``, the node's)."""
    p = corpus.p_attribute(attribute)
    return chosen(corpus, filters, kept).frequencies(p, [p.str2id(value) for value in values])
