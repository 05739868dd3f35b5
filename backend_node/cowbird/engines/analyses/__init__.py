"""Analyses of one partition's hits: frequency breakdowns, distributions, dispersion, co-occurrence
counts and marginals, sort orders; and of a partition itself: word and n-gram lists, subcorpus sizes.

Both engines hold a query's hits as arrays (``cowbird.engines.results.Matches``) over the same
memory-mapped store, so every analysis here works from the store (``CwbCorpus``) and the hits alone
and serves both; what they read of a lexicon or of regions is the store's (``cowbird.store.lexicon``,
``cowbird.store.regions``). Each returns counts that add up across partitions — values with their
frequencies, regions with their sizes, collocates with their marginals — so the front end's sums
are the whole corpus's numbers (``cowbird.core.analysis_merge``).

One module per analysis: ``frequency``, ``distribution``, ``dispersion``, ``cooccurrence``,
``marginals``, ``ngrams``, ``subcorpus``, ``sort_order``; ``spans`` turns the hits' anchors into
positions for them. An analysis a node runs under its scheduler takes the ``Deadline`` first
(``PartitionService.analyse`` passes it; ``spans.NO_DEADLINE`` for callers without a time budget).

CQP's rules are kept where CQP has them (``cqp/ranges.c``): a span runs from its first anchor to
its second, backwards if the second comes first; positions past the corpus's edges are clamped to
its first or last token; ``%c`` is GLib's case folding and ``%d`` strips combining marks (NFD,
marks dropped, NFC) before it; values compare as code points (``strcmp`` on UTF-8); a longer
sequence sorts after its own prefix.
"""
