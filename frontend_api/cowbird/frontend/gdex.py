"""``sort=gdex`` on the front end: the corpus's rules (``[corpora.gdex]``) and its common words,
counted exactly over every partition once (a word list of the ``common_words`` most frequent word
forms, lowercased) and kept per corpus (``corpora.Kept.common_words``, the catalogue's), sent to the
nodes with each sort (``cowbird.core.gdex``).

Each hit of a GDEX-sorted page or export is explained (:class:`~cowbird.frontend.schemas.GdexScore`):
the same sorted hits are asked once more with the whole sentence as context (``explaining``), each
one's score and rule values are recomputed from its sentence by ``cowbird.core.gdex.explain`` — the
rules as written — and the result must give the very key the nodes sorted that hit on, or the answer
is refused as inconsistent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

from cowbird.core import gdex
from cowbird.core.analysis_spec import SortKey
from cowbird.core.errors import BadParameter, NodesUnavailable, UnknownAttribute
from cowbird.core.gdex import GdexSpec
from cowbird.core.search import HitView, Located, Search, Statuses, failed_partitions, no_attribute
from cowbird.core.wordlist import WordListSpec, word_list
from cowbird.frontend.corpora import CorpusEntry, Partition
from cowbird.frontend.hits import NodeSearch
from cowbird.frontend.routes.deps import Visit
from cowbird.frontend.schemas import GdexScore


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
    kept = corpus.kept.common_words.get(key)
    if kept is not None:
        return kept
    spec = WordListSpec("word", 1, None, (), None, False, 1, size)
    found = await visit.run(word_list(visit.nodes, corpus.partitions, spec, visit.nodes.time_limit),
                            reads=len(corpus.partitions), what="the corpus's common words (sort=gdex)",
                            background=False)
    failed = failed_partitions(found.statuses)
    if failed:
        raise NodesUnavailable(f"sort=gdex needs the corpus's most frequent words, and partition(s) "
                               f"{', '.join(failed)} did not answer; try again shortly", headers={"Retry-After": "10"})
    words = tuple(sorted({row[0][0].lower() for row in found.rows}))
    corpus.kept.common_words.put(key, words)
    return words


def explaining(search: NodeSearch, spec: GdexSpec) -> NodeSearch:
    """The same search whose lines are the whole region scored (the sentence: ``context=s``), with
    where the next region begins (``marks``) and whether the match is in one (``meta``)."""
    region = spec.rules.region
    return Search(search.partitions, search.corpus, search.query, HitView(0, ["word"], [region], region=region,
                                                                            marks=[region]))


def explained(spec: GdexSpec, scorer: gdex.Scorer, hit: Located[Partition],
              sentence: Located[Partition]) -> GdexScore:
    """The GDEX score of ``hit`` from the line of its sentence (``explaining``), checked against the
    key the nodes sorted it on."""
    region, weights = spec.rules.region, scorer.weights
    if (sentence.position, sentence.matchend) != (hit.position, hit.matchend):
        raise NodesUnavailable(f"sort=gdex: the nodes' sorted hits differ between two reads (hit {hit.position} "
                               f"against {sentence.position}); try again")
    line = sentence.line
    if line.meta.get(region) is None:  # outside any region: scored 0, as the nodes do
        result = GdexScore(score=0.0, key=gdex.SCALE, region=region, tokens=0, match_start=0,
                           match_end=line.matchend - line.match, values={}, weights=weights, rare=[], numbers=[],
                           urls=[])
    else:
        words = [token[0] for token in (*line.left, *line.keyword, *line.right)]
        ends = min((k for k in line.breaks.get(region, []) if k > 0), default=len(words))  # the next region's start
        start = len(line.left)
        found = scorer.explain(words[:ends], start, start + line.matchend - line.match)
        result = GdexScore(score=found.score, key=found.key, region=region, tokens=found.length, match_start=start,
                           match_end=start + line.matchend - line.match, values=found.values, weights=weights,
                           rare=found.rare, numbers=found.numbers, urls=found.urls)
    if hit.line.sort_key != result.key:
        raise NodesUnavailable(f"sort=gdex: the nodes sorted the hit at {hit.position} on key {hit.line.sort_key}, "
                               f"and its sentence scores {result.key} by the rules; the nodes and the front end "
                               "disagree (a different version?)")
    return result


async def page_scores(search: NodeSearch, order: SortKey, offset: int, found: list[Located[Partition]]
                      ) -> list[GdexScore]:
    """Each hit's explained score of a GDEX-sorted page that starts at ``offset``."""
    spec = order.gdex
    if spec is None or not found:
        return []
    _, sentences = await explaining(search, spec).page(offset, len(found), sort=order)
    if len(sentences) != len(found):
        raise NodesUnavailable(f"sort=gdex: {len(found)} hits on the page, and {len(sentences)} when read again "
                               "with their sentences; try again")
    scorer = gdex.Scorer(spec.rules, frozenset(spec.common))
    return [explained(spec, scorer, hit, sentence) for hit, sentence in zip(found, sentences, strict=True)]


async def streamed_scores(search: NodeSearch, order: SortKey, statuses: Statuses[Partition], offset: int,
                          limit: int, hits: AsyncIterator[Located[Partition]]
                          ) -> AsyncIterator[tuple[Located[Partition], GdexScore]]:
    """The hits of a GDEX-sorted export (``hits``: ``search.stream`` of ``offset``, ``limit``), each
    with its explained score, read beside the same stream of their sentences."""
    spec = order.gdex
    assert spec is not None
    scorer = gdex.Scorer(spec.rules, frozenset(spec.common))
    sentences = explaining(search, spec).stream(statuses, offset, limit, sort=order)
    try:
        async for hit in hits:
            sentence = await anext(sentences, None)
            if sentence is None:
                raise NodesUnavailable(f"sort=gdex: the hits' sentences ended before the hit at {hit.position}")
            yield hit, explained(spec, scorer, hit, sentence)
    finally:
        close = getattr(sentences, "aclose", None)
        if close is not None:
            await close()
