"""Word sketch figures computed by brute force from counted instances, for the tests to judge
cowbird's by: logDice of every (word, relation, collocate) and every word's thesaurus score."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable

Contexts = dict[str, dict[tuple[str, str], float]]
"""Per word, its contexts (view, collocate) with a positive logDice."""


def contexts(views: Iterable[tuple[str, Counter[tuple[str, str]]]]) -> Contexts:
    """Each word's contexts from each view's instances by (headword, collocate)."""
    scores: Contexts = {}
    for name, pairs in views:
        heads: Counter[str] = Counter()
        colls: Counter[str] = Counter()
        for (head, coll), n in pairs.items():
            heads[head] += n
            colls[coll] += n
        for (head, coll), n in pairs.items():
            score = 14 + math.log2(2 * n / (heads[head] + colls[coll]))
            if score > 0:
                scores.setdefault(head, {})[(name, coll)] = score
    return scores


def similar(scores: Contexts, headword: str) -> list[tuple[str, float, int]]:
    """Every word sharing a context with ``headword``: its similarity (Rychlý and Kilgarriff 2007) and
    the contexts shared, the most similar first."""
    mine = scores[headword]
    found = []
    for word, theirs in scores.items():
        shared = mine.keys() & theirs.keys()
        if word != headword and shared:
            top = sum(mine[c] + theirs[c] - (mine[c] - theirs[c]) ** 2 / 50 for c in shared)
            found.append((word, top / (sum(mine.values()) + sum(theirs.values())), len(shared)))
    found.sort(key=lambda item: (-item[1], item[0]))
    return found
