"""One search over a partitioned corpus: a query checked once, counted, paged, sampled, sorted,
exported and analysed exactly as if the corpus were one.

A :class:`Search` holds the corpus, the query (parsed once: :class:`CheckedQuery`) and what each
hit shows (:class:`HitView`). It asks a :class:`Partitions` for each partition's answer — over HTTP
to the nodes (``cowbird.frontend.fanout.NodeClient``, with failover across replicas) or in this
process over local partitions (``cowbird.node.local.LocalPartitions``, for ``cowbird query`` and
tests) — and merges the answers: hits are numbered in global corpus order (partition order, then
position); counts, distributions and co-occurrences are summed (``cowbird.core.analysis_merge``)
before shares, rates and association scores are computed; sorted hits are merged like sorted
streams. A partition that cannot be served is reported (``complete: false``) and left out of the
numbering and the sums; when none answers, the search fails (:class:`~cowbird.core.errors.NodesUnavailable`
or :class:`~cowbird.core.errors.QueryTooSlow`).

Every route of the front end and the ``cowbird query`` command are adapters over this package.

The package, by concern: ``partitions`` (what a search runs on: :class:`Partitions`, statuses,
failures, time limits), ``query`` (:class:`CheckedQuery`, :class:`HitView`, :class:`Located`),
``plans`` (where a page lies, from the partitions' totals alone), ``counts`` (the base of a search:
one call per partition, counts and estimates), ``merge`` (the sort-key merge), ``pages`` (windows,
progressive pages, samples, sorted pages), ``exports`` (the export streams) and ``analyses``.
"""

from __future__ import annotations

from cowbird.core.search.analyses import MARGINALS_BYTES, Analyses, Dispersion
from cowbird.core.search.counts import COUNT_SHARE, CostEstimate, time_class
from cowbird.core.search.exports import SAMPLE_BATCH, Exports
from cowbird.core.search.merge import SORT_KEYS_BATCH
from cowbird.core.search.pages import Pages, Step
from cowbird.core.search.partitions import (
    P,
    PartitionFailure,
    PartitionRef,
    Partitions,
    PartitionStatus,
    Progress,
    Statuses,
    T,
    TimeLimit,
    all_failed,
    answered_total,
    failed_partitions,
    no_attribute,
)
from cowbird.core.search.plans import plan_key, plan_sample, plan_window, settled_before
from cowbird.core.search.query import CheckedQuery, HitView, Located
from cowbird.core.search.sketches import Sketches, WordSketch

__all__ = [
    "COUNT_SHARE", "MARGINALS_BYTES", "Progress", "SAMPLE_BATCH", "SORT_KEYS_BATCH",
    "CheckedQuery", "CostEstimate", "Dispersion", "HitView", "Located",
    "PartitionFailure", "PartitionRef", "PartitionStatus", "Partitions", "Search", "Statuses", "Step", "T",
    "TimeLimit", "WordSketch", "all_failed", "answered_total", "failed_partitions", "plan_key", "plan_sample",
    "plan_window", "settled_before", "time_class", "no_attribute",
]


class Search(Pages[P], Exports[P], Analyses[P], Sketches[P]):
    """A query over a corpus's partitions; every answer is exact for the corpus as a whole.

    Its parts: counts and the estimate (``counts.Counts``), pages of hits (``pages.Pages``), sorted
    hits (``merge.Sorting``), exports (``exports.Exports``), analyses (``analyses.Analyses``) and word
    sketches (``sketches.Sketches``)."""

    def refined(self, query: CheckedQuery) -> Search[P]:
        """The same search with another query (the corpus, the partitions and the view kept)."""
        return Search(self.partitions, self.corpus, query, self.view, self.progress)
