"""The front end's searches: a :class:`~cowbird.core.search.Search` over the nodes, and its lines
as the public API gives them.

A route checks its parameters, builds the search (:func:`search_of`: the corpus, the query checked
once, what each hit shows) and turns what the search returns into the public models: a line into
a :class:`Hit` with global positions and a static link, a partition's status into a
:class:`PartitionResult`.
"""

from __future__ import annotations

from cowbird.core.search import CheckedQuery, HitView, Located, Partitions, PartitionStatus, Progress, Search
from cowbird.frontend.corpora import CorpusEntry, Partition
from cowbird.frontend.links import ref_path
from cowbird.frontend.schemas import Boundary, Hit, PartitionResult

NodeSearch = Search[Partition]
"""A search over the nodes that serve a corpus's partitions."""


def search_of(nodes: Partitions[Partition], corpus: CorpusEntry, query: CheckedQuery, view: HitView | None = None,
              progress: Progress | None = None) -> NodeSearch:
    """The search over a request's nodes (``NodeClient.bound``)."""
    return Search(nodes, corpus, query, view, progress)


def public_hit(corpus: CorpusEntry, view: HitView, found: Located[Partition]) -> Hit:
    """A node's line as the public API gives it: global positions, KWIC strings, attributes, link."""
    line = found.line
    position, matchend = found.position, found.matchend
    attributes = {name: " ".join(t[k + 1] for t in line.keyword) for k, name in enumerate(view.shown)
                  if name in view.show}
    if "word" in view.show:
        attributes = {"word": " ".join(t[0] for t in line.keyword), **attributes}
    parts = [view.token_texts(line.left), view.token_texts(line.keyword), view.token_texts(line.right)]
    member, local = corpus.member_at(position)  # several corpora searched: the one the hit is in
    return Hit(corpus=member.name, 
        position=position, matchend=matchend, partition=found.partition.id,
        left=" ".join(parts[0]), match=" ".join(parts[1]), right=" ".join(parts[2]),
        attributes=attributes, meta=line.meta,
        ref=ref_path(member.name, local, local + matchend - position), breaks=_breaks(line.breaks, parts),
    )


def _breaks(breaks: dict[str, list[int]], parts: list[list[str]]) -> list[Boundary]:
    """Where a line's regions change, as places in its left, match and right strings (the character
    a boundary comes before): token k of the line counted over left, match and right."""
    places: list[Boundary] = []
    for region, indices in breaks.items():
        for k in indices:
            for name, texts in zip(("left", "match", "right"), parts, strict=True):
                if k < len(texts) or name == "right":
                    places.append(Boundary(region=region, part=name, at=sum(len(t) + 1 for t in texts[:k])))
                    break
                k -= len(texts)
    return sorted(places, key=lambda b: (("left", "match", "right").index(b.part), b.at, b.region))


def partition_result(status: PartitionStatus[Partition]) -> PartitionResult:
    return PartitionResult(id=status.partition.id, status="ok" if status.error is None else "failed",
                           total=status.total, error=status.error)
