"""``sort=gdex`` on the front end: the corpus's rules (``[corpora.gdex]``) and its common words,
counted exactly over every partition once (a word list of the ``common_words`` most frequent word
forms, lowercased) and kept per corpus, sent to the nodes with each sort (``cowbird.core.gdex``)."""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import replace

from cowbird.core.analysis_spec import SortKey
from cowbird.core.errors import BadParameter, NodesUnavailable, UnknownAttribute
from cowbird.core.gdex import GdexSpec
from cowbird.core.search import failed_partitions, no_attribute
from cowbird.core.wordlist import WordListSpec, word_list
from cowbird.frontend.corpora import CorpusEntry
from cowbird.frontend.routes.deps import Visit

COMMON_KEPT = 64
"""Corpora (and rules) whose common words are kept in this process."""
_common: OrderedDict[tuple[str, str, str, int], tuple[str, ...]] = OrderedDict()


async def with_gdex(visit: Visit, corpus: CorpusEntry, order: SortKey | None) -> SortKey | None:
    """``order`` with the corpus's GDEX rules and common words when it is ``sort=gdex``; as it is otherwise."""
    if order is None or order.gdex is None:
        return order
    rules = corpus.config.gdex
    differ = [m.name for m in corpus.members if m.config.gdex != rules]
    if differ:
        raise BadParameter(f"sort=gdex over {corpus.name}: the corpora's good-example rules ([corpora.gdex]) differ "
                           f"({corpus.members[0].name}'s from {', '.join(differ)}'s), so one order cannot hold "
                           "for all; sort each corpus alone, or give them the same rules")
    if rules.region not in corpus.s_attributes:
        raise UnknownAttribute(f"sort=gdex scores each hit's {rules.region!r} region: "
                               f"{no_attribute(corpus, 's', rules.region)}; its [corpora.gdex] region names another")
    return replace(order, gdex=GdexSpec(rules=rules, common=await common_words(visit, corpus, rules.common_words)))


async def common_words(visit: Visit, corpus: CorpusEntry, size: int) -> tuple[str, ...]:
    """The corpus's ``size`` most frequent word forms, lowercased, counted exactly over every partition
    (a partition that does not answer makes the list unknown: refused, never a list of some partitions)."""
    if not size:
        return ()
    key = (corpus.name, str(corpus.config.manifest), corpus.config.version or "", size)
    if key in _common:
        _common.move_to_end(key)
        return _common[key]
    spec = WordListSpec("word", 1, None, (), None, False, 1, size)
    found = await visit.run(word_list(visit.nodes, corpus.partitions, spec, visit.nodes.time_limit),
                            reads=len(corpus.partitions), what="the corpus's common words (sort=gdex)",
                            background=False)
    failed = failed_partitions(found.statuses)
    if failed:
        raise NodesUnavailable(f"sort=gdex needs the corpus's most frequent words, and partition(s) "
                               f"{', '.join(failed)} did not answer; try again shortly", headers={"Retry-After": "10"})
    words = tuple(sorted({row[0][0].lower() for row in found.rows}))
    _common[key] = words
    while len(_common) > COMMON_KEPT:
        _common.popitem(last=False)
    return words
