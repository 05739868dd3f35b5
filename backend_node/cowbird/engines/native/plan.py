"""Stage 2, plan: where the candidates of each pass start, and how far each may run.

CQP runs one pass per state a match can start with (``Automaton.first``). When a pass starts
with a fixed chain of tests (``[] [word="anyway"]``, ``<s> [pos="UH"]``), its candidate starts
come from the chain's rarest test (the *anchor*) through the reverse index, shifted back by the
anchor's token offset, and the other chain tests are checked with one gather each. Each start
then gets its boundary: the end of the enclosing region with ``within``, else
``start + HardBoundary`` tokens. No Python loop ever runs over corpus positions here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import assert_never

import numpy as np
import numpy.typing as npt

from cowbird.engines.native.compile import (
    AllOf,
    Always,
    AnyOf,
    Automaton,
    Bound,
    LabelPredicate,
    Lookup,
    Negation,
    Predicate,
    RegionTest,
    SameValue,
    TagTest,
    estimate,
    holds_beyond,
    holds_on,
)
from cowbird.engines.native.corpus_state import NativeCorpus, bits_at
from cowbird.engines.results import Cpos
from cowbird.query import Query

ID_READ_COST = 1000
"""Reading one id's slice of the reverse index costs about as much as reading this many positions."""


class TokenTests:
    """Evaluate predicates and tag assertions at arrays of corpus positions."""

    def __init__(self, corpus: NativeCorpus) -> None:
        self.corpus = corpus
        self.whole = False
        """Set while the query is evaluated over the whole corpus (every range): then an id test that
        would decode most of a compressed token stream reads a bitmap made once from the index."""
        self._bitmaps: dict[int, npt.NDArray[np.uint8] | None] = {}
        self._bitmap_lock = threading.Lock()
        self._past_end: dict[int, bool] = {}

    def past_end(self, look: Predicate) -> bool:
        """Whether a lookahead holds at the position just past the last token: on the next partition's
        first token where the partition carries it (``NativeCorpus.next_token``), as CQP reads the
        corpus in one piece; at the corpus end, CQP's past-the-end rule (``holds_beyond``)."""
        key = id(look)
        if key not in self._past_end:
            token = self.corpus.next_token
            self._past_end[key] = holds_beyond(look) if token is None else bool(holds_on(look, [token])[0])
        return self._past_end[key]

    def closes_before(self, tag: TagTest) -> bool:
        """Whether a closing tag (``</s>``) holds at position 0: a region of the previous partition
        ends at its last token (with a value that passes the tag's test); never at the corpus start."""
        token = self.corpus.previous_token
        mark = None if token is None else token.regions.get(tag.attribute)
        if mark is None or not mark.end:
            return False
        return tag.accepts is None or (mark.value is not None and bool(tag.accepts([mark.value])[0]))

    def past_end_labelled(self, look: Predicate, labels: dict[str, Cpos]) -> npt.NDArray[np.bool_]:
        """Per row, whether a lookahead that compares labels (``[:word = a.word:]``) holds just past
        the partition's last token, each row's labels at ``labels``: on the next partition's first
        token, the label's value the partition's own token's (``ConstraintEvaluator`` reads ``_`` at
        the partition's size there); at the corpus end, CQP's past-the-end rule (``past_end``)."""
        rows = len(next(iter(labels.values()))) if labels else 0
        token = self.corpus.next_token
        if token is None or not isinstance(look, LabelPredicate | Negation | AllOf | AnyOf):
            return np.full(rows, self.past_end(look), dtype=np.bool_)
        if isinstance(look, LabelPredicate):
            unset = np.full(rows, -1, dtype=np.int64)
            values = {name: unset for name in (*look.labels, "match")}
            values.update(labels)
            values["_"] = np.full(rows, self.corpus.size, dtype=np.int64)
            return look.check(values)
        if isinstance(look, Negation):
            return ~self.past_end_labelled(look.part, labels)
        combined = self.past_end_labelled(look.parts[0], labels)
        for part in look.parts[1:]:
            more = self.past_end_labelled(part, labels)
            combined = combined & more if isinstance(look, AllOf) else combined | more
        return combined

    def opens_after(self, tag: TagTest) -> bool:
        """Whether an opening tag (``<s>``) holds at the position just past the last token: a region of
        the next partition starts at its first token (with a value that passes the tag's test); never
        at the corpus end."""
        token = self.corpus.next_token
        mark = None if token is None else token.regions.get(tag.attribute)
        if mark is None or not mark.start:
            return False
        return tag.accepts is None or (mark.value is not None and bool(tag.accepts([mark.value])[0]))

    def entered_ends(self, attribute: str, cpos: Cpos) -> Cpos:
        """The last position of the region of ``attribute`` starting at each cpos (StrictRegions), a
        region entered just past the partition's end included: it ends past every position here."""
        regions = self.corpus.regions(attribute)
        ends: Cpos = regions.ends[regions.starting_at(cpos)]
        return np.where(cpos >= self.corpus.size, self.corpus.size + 1, ends)

    def _bitmap(self, predicate: Lookup, cpos: Cpos) -> npt.NDArray[np.uint8] | None:
        """The predicate's bitmap over the corpus when the query is evaluated whole and testing it by
        gathering ids would cost more (``NativeCorpus.gather_costs_more``); else None."""
        if not self.whole or len(cpos) == 0:
            return None
        key = id(predicate.table)
        if key in self._bitmaps:
            return self._bitmaps[key]
        span = int(cpos.max()) - int(cpos.min()) + 1
        ids = int(np.count_nonzero(predicate.table))
        if not self.corpus.gather_costs_more(predicate.attribute, predicate.count, ids, len(cpos), span):
            return None
        with self._bitmap_lock:  # ranges on other threads wait for the one bitmap
            if key not in self._bitmaps:
                self._bitmaps[key] = self.corpus.bitmap(predicate.attribute, predicate.table)
            return self._bitmaps[key]

    def holds(
        self, predicate: Predicate, cpos: Cpos, ids: dict[str, npt.NDArray[np.int32]],
        labels: dict[str, Cpos] | None = None,
    ) -> npt.NDArray[np.bool_]:
        """Whether the predicate holds at each corpus position; ``ids`` caches gathered lexicon ids;
        ``labels``: the positions of the labels a comparison inside may read (else all unset)."""
        if isinstance(predicate, Always):
            return np.ones(len(cpos), dtype=np.bool_)
        if isinstance(predicate, Lookup):
            if predicate.attribute not in ids:  # (ids a step gathered anyway are read as they are)
                bits = self._bitmap(predicate, cpos)
                if bits is not None:
                    return bits_at(bits, cpos)
                if self.corpus.prefers_index(predicate.attribute, predicate.count, len(cpos)):
                    return self.corpus.member(predicate.attribute, predicate.table, predicate.count, cpos)
                ids[predicate.attribute] = self.corpus.ids(predicate.attribute, cpos)
            return predicate.table[ids[predicate.attribute]]
        if isinstance(predicate, Negation):
            return ~self.holds(predicate.part, cpos, ids, labels)
        if isinstance(predicate, AllOf):
            combined = self.holds(predicate.parts[0], cpos, ids, labels)
            for part in predicate.parts[1:]:
                combined &= self.holds(part, cpos, ids, labels)
            return combined
        if isinstance(predicate, AnyOf):
            combined = self.holds(predicate.parts[0], cpos, ids, labels)
            for part in predicate.parts[1:]:
                combined |= self.holds(part, cpos, ids, labels)
            return combined
        if isinstance(predicate, LabelPredicate):
            unset = np.full(len(cpos), -1, dtype=np.int64)
            values = {name: unset for name in (*predicate.labels, "match")}
            values.update(labels or {})
            values["_"] = cpos
            return predicate.check(values)
        if isinstance(predicate, SameValue):
            for attribute in (predicate.left, predicate.right):
                if attribute not in ids:
                    ids[attribute] = self.corpus.ids(attribute, cpos)
            same: npt.NDArray[np.bool_] = predicate.same[ids[predicate.left]] == ids[predicate.right]
            return ~same if predicate.negated else same
        if isinstance(predicate, Bound):
            regions = self.corpus.regions(predicate.attribute)
            number = regions.ending_at(cpos) if predicate.right else regions.starting_at(cpos)
            return np.asarray(number >= 0, dtype=np.bool_)
        if isinstance(predicate, RegionTest):
            number = self.corpus.regions(predicate.attribute).containing(cpos)
            inside = number >= 0
            inside[inside] = predicate.region_ok[number[inside]]
            return inside
        assert_never(predicate)

    def read_cost(self, predicate: Predicate) -> int:
        """What reading the positions where a predicate holds costs (``cpos_where``), in positions read
        from one id's slice of the reverse index: a test of one id, or of a few rare ones, costs its
        positions and a slice per id; a test of many ids with many positions (``[word="a.*"]``) is
        marked in a mask over the corpus and read back from it, which costs about a position per
        corpus position more. (``estimate`` bounds how many positions there are.)"""
        size = self.corpus.size
        if isinstance(predicate, Lookup):
            ids = int(np.count_nonzero(predicate.table))
            if ids <= 1 or predicate.count * 8 < size:
                return predicate.count + ids * ID_READ_COST
            return predicate.count + size
        if isinstance(predicate, AllOf):
            return min(self.read_cost(p) for p in predicate.parts)
        if isinstance(predicate, AnyOf):
            return min(size, sum(self.read_cost(p) for p in predicate.parts))
        return estimate(predicate, size)

    def tag_holds(self, tag: TagTest, cpos: Cpos) -> npt.NDArray[np.bool_]:
        """Whether a region starts at each cpos (``<s>``), or ended just before it (``</s>``),
        with a value that passes the tag's test, if any; for a lookahead, whether the token passes."""
        if tag.look is not None:
            inside = cpos < self.corpus.size  # past the partition's end: the next partition's first token
            result = np.full(len(cpos), self.past_end(tag.look), dtype=np.bool_)
            result[inside] = self.holds(tag.look, cpos[inside], {})
            return result
        regions = self.corpus.regions(tag.attribute)
        number = regions.ending_at(cpos - 1) if tag.closing else regions.starting_at(cpos)
        ok = number >= 0
        if tag.region_ok is not None:
            ok[ok] = tag.region_ok[number[ok]]
        if tag.closing and self.corpus.previous_token is not None:
            ok[cpos == 0] = self.closes_before(tag)  # a region of the partition before ends just before
        if not tag.closing and self.corpus.next_token is not None:
            ok[cpos == self.corpus.size] = self.opens_after(tag)  # a region of the next partition starts
        return ok

    def cpos_where(self, predicate: Predicate, lo: int = 0, hi: int | None = None) -> Cpos:
        """Sorted corpus positions in ``[lo, hi)`` where a predicate holds, from the reverse index
        where it pays, else by reading just that range of the token stream."""
        hi = self.corpus.size if hi is None else min(hi, self.corpus.size)
        lo = max(lo, 0)
        if lo >= hi:
            return np.zeros(0, dtype=np.int64)
        if isinstance(predicate, Always):
            return np.arange(lo, hi, dtype=np.int64)
        if isinstance(predicate, Lookup):
            return self.corpus.cpos_of(predicate.attribute, predicate.table, predicate.count, lo, hi)
        if isinstance(predicate, AllOf):
            parts = sorted(predicate.parts, key=self.read_cost)
            found = self.cpos_where(parts[0], lo, hi)
            for part in parts[1:]:
                found = found[self.holds(part, found, {})]
            return found
        if isinstance(predicate, AnyOf):
            merged = np.concatenate([self.cpos_where(p, lo, hi) for p in predicate.parts])
            merged.sort(kind="stable")  # ascending runs, part after part: timsort merges them
            return merged[np.concatenate(([True], merged[1:] != merged[:-1]))] if len(merged) else merged
        if isinstance(predicate, Bound):
            regions = self.corpus.regions(predicate.attribute)
            found = regions.ends if predicate.right else regions.starts
            first, last = np.searchsorted(found, [lo, hi])
            return np.asarray(found[first:last], dtype=np.int64)
        if isinstance(predicate, Negation | SameValue | LabelPredicate):
            # a negation or a comparison has no index to read: test it at every position of the range
            everything = np.arange(lo, hi, dtype=np.int64)
            return everything[self.holds(predicate, everything, {})]
        if isinstance(predicate, RegionTest):  # every position of the passing regions, clipped to the range
            regions = self.corpus.regions(predicate.attribute)
            starts = np.maximum(regions.starts[predicate.region_ok], lo)
            ends = np.minimum(regions.ends[predicate.region_ok], hi - 1)
            keep = starts <= ends
            starts, lengths = starts[keep], ends[keep] - starts[keep] + 1
            if len(starts) == 0:
                return np.zeros(0, dtype=np.int64)
            offsets = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(np.cumsum(lengths) - lengths, lengths)
            covered: Cpos = np.repeat(starts, lengths) + offsets
            return covered
        assert_never(predicate)

    def tag_cpos(self, tag: TagTest, lo: int = 0, hi: int | None = None) -> Cpos:
        """Sorted corpus positions in ``[lo, hi)`` where a tag assertion holds (region starts, or ends + 1;
        the partition's size where the next partition's first token starts a region or passes a lookahead)."""
        if tag.look is not None:
            found = self.cpos_where(tag.look, lo, hi)
            size = self.corpus.size
            if lo <= size and (hi is None or hi > size) and self.past_end(tag.look):
                found = np.append(found, size)  # a lookahead may look just past the last token
            return found
        regions = self.corpus.regions(tag.attribute)
        keep = np.ones(len(regions), dtype=np.bool_) if tag.region_ok is None else tag.region_ok
        found = (regions.ends[keep] + 1) if tag.closing else regions.starts[keep]
        if tag.closing and self.closes_before(tag):
            found = np.concatenate(([0], np.asarray(found, dtype=np.int64)))
        if not tag.closing and self.opens_after(tag):
            found = np.append(found, self.corpus.size)  # a region of the next partition starts just past the end
        if lo <= 0 and hi is None:
            return found
        first, last = np.searchsorted(found, [lo, self.corpus.size + 1 if hi is None else hi])
        return found[first:last]


def tag_order(automaton: Automaton, sources: list[list[int]]) -> tuple[list[int], bool]:
    """The tag states in an order where a tag's tag sources come first, so that one sweep
    follows chains of zero-width tags (``<text> <s>``) at one corpus position; and whether tags
    repeat among themselves (``<text>+``, ``(</s> <s>)+``): then sweeps go on until nothing new
    is reached, as a tag repeated at one position reaches nothing new."""
    tags = [i for i, p in enumerate(automaton.states) if not p.is_token]
    ordered: list[int] = []
    visiting: set[int] = set()
    cyclic = False

    def visit(i: int) -> None:
        nonlocal cyclic
        if i in ordered:
            return
        if i in visiting:
            cyclic = True
            return
        visiting.add(i)
        for source in sources[i]:
            if not automaton.states[source].is_token:
                visit(source)
        visiting.discard(i)
        ordered.append(i)

    for i in tags:
        visit(i)
    return ordered, cyclic


@dataclass(frozen=True)
class SearchSpace:
    """How far a match may run from its start (CQP's ``within``): to the end of the ``count``-th
    region of ``attribute`` from the start's own, or ``tokens`` tokens on (else the HardBoundary)."""

    attribute: str | None = None
    count: int = 1
    tokens: int | None = None

    @classmethod
    def of(cls, query: Query) -> SearchSpace:
        return cls(query.within, query.within_count, query.within_tokens)


def boundaries(corpus: NativeCorpus, within: SearchSpace, hard_boundary: int, starts: Cpos) -> tuple[Cpos, Cpos]:
    """The starts that may match, each with its last allowed corpus position (CQP's
    ``calculate_rightboundary``): the end of the ``within`` region(s), or ``within N`` tokens on,
    or the HardBoundary; a start outside every region of ``within`` has none."""
    if within.attribute is None:  # CQP: within N tokens replaces the HardBoundary
        reach = hard_boundary if within.tokens is None else within.tokens
        return starts, np.minimum(starts + reach, corpus.size - 1)
    if within.count <= 0:  # within 0 s: CQP finds no region to stay in
        return starts[:0], starts[:0]
    regions = corpus.regions(within.attribute)
    number = regions.containing(starts)
    inside = number >= 0
    last = np.minimum(number[inside] + (within.count - 1), len(regions) - 1)
    return starts[inside], regions.ends[last]


class Planner:
    """Candidate starts and boundaries for the passes of one query over one corpus."""

    def __init__(self, corpus: NativeCorpus, automaton: Automaton, within: SearchSpace, hard_boundary: int) -> None:
        self.corpus = corpus
        self.automaton = automaton
        self.within = within
        self.hard_boundary = hard_boundary
        self.tests = TokenTests(corpus)
        self.sources = automaton.sources
        self.opens = corpus.next_token is not None and any(
            s.tag is not None and not s.tag.closing and s.tag.look is None for s in automaton.states)
        """Whether an opening tag of the query may be read just past the partition's last token (on the
        next partition's first token): the partition has a next one and the query an opening tag."""

    def chain(self, first: int) -> list[tuple[int, int]]:
        """The fixed run of states every match of this pass goes through, with their token offsets."""
        chain = [(first, 0)]
        offset = 1 if self.automaton.states[first].is_token else 0
        current = first
        # the offsets stay fixed only while there is one way on and one way in (and no loop)
        while current not in self.automaton.final and len(self.automaton.follow[current]) == 1:
            nxt = self.automaton.follow[current][0]
            if len(self.sources[nxt]) != 1 or any(nxt == c for c, _ in chain):
                break
            chain.append((nxt, offset))
            offset += 1 if self.automaton.states[nxt].is_token else 0
            current = nxt
        return chain

    def candidates(self, first: int, lo: int = 0, hi: int | None = None) -> Cpos:
        """Candidate start cpos in ``[lo, hi)`` for the pass that begins with state ``first``: the
        chain's rarest state (the anchor) read from the index and shifted back by its offset, then
        every other state of the chain checked with one gather."""
        chain = self.chain(first)
        anchor = min(chain, key=lambda item: self._read_cost(item[0]))
        index, offset = anchor
        starts = self._where(index, lo + offset, None if hi is None else hi + offset)
        if offset:
            starts = starts - offset
            starts = starts[starts >= 0]
        if len(starts) and starts[-1] >= self.corpus.size:
            starts = starts[starts < self.corpus.size]  # a tag read just past the end starts nothing
        for other, other_offset in chain:
            if (other, other_offset) == anchor or len(starts) == 0:
                continue
            starts = starts[self._holds_at(other, starts + other_offset)]
        return starts

    def candidate_bound(self, first: int) -> int:
        """At most how many candidates the pass that begins with ``first`` has: its anchor's cost."""
        return min(self._cost(index) for index, _ in self.chain(first))

    def _read_cost(self, index: int) -> int:
        """What reading the cpos where state ``index`` holds costs (``TokenTests.read_cost``)."""
        state = self.automaton.states[index]
        if state.predicate is not None:
            return self.tests.read_cost(state.predicate)
        if state.tag is not None and state.tag.look is not None:
            return self.tests.read_cost(state.tag.look)
        return self._cost(index)

    def _cost(self, index: int) -> int:
        """An upper bound of the cpos where state ``index`` holds: what reading it would cost."""
        state = self.automaton.states[index]
        if state.predicate is not None:
            return estimate(state.predicate, self.corpus.size)
        if state.tag is not None and state.tag.look is not None:
            return estimate(state.tag.look, self.corpus.size)
        return len(self.corpus.regions(state.tag.attribute)) if state.tag else self.corpus.size

    def _where(self, index: int, lo: int, hi: int | None) -> Cpos:
        """Sorted cpos in ``[lo, hi)`` where state ``index`` holds."""
        state = self.automaton.states[index]
        if state.predicate is not None:
            return self.tests.cpos_where(state.predicate, lo, hi)
        assert state.tag is not None  # a state is a token test or a tag
        return self.tests.tag_cpos(state.tag, lo, hi)

    def _holds_at(self, index: int, at: Cpos) -> npt.NDArray[np.bool_]:
        """Whether state ``index`` holds at each cpos of ``at``."""
        state = self.automaton.states[index]
        if state.predicate is None:
            assert state.tag is not None  # a state is a token test or a tag
            return self.tests.tag_holds(state.tag, at)
        keep = at < self.corpus.size  # a token beyond the corpus end matches nothing
        if not isinstance(state.predicate, Always):
            keep[keep] = self.tests.holds(state.predicate, at[keep], {})
        return keep

    def boundaries(self, starts: Cpos) -> tuple[Cpos, Cpos]:
        """Keep starts that may match and give each its last allowed corpus position."""
        return boundaries(self.corpus, self.within, self.hard_boundary, starts)

    def past_the_cut(self, starts: Cpos, bound: Cpos) -> Cpos:
        """``bound``, with the partition's size instead of its last position for the starts whose
        boundary over the corpus in one piece lies past the partition's last token: there an opening
        tag may be read on the next partition's first token, as CQP reads it (``[pos="NN"] <s>``); a
        token is never consumed there. ``within N`` or the HardBoundary reaching past the partition's
        end, or a ``within`` region going on in the next partition (or ``within 2 s`` taking the next
        partition's region): the partition's end is not the boundary but the cut."""
        if not self.opens or len(starts) == 0:
            return bound
        size = self.corpus.size
        within = self.within
        if within.attribute is None:
            reach = self.hard_boundary if within.tokens is None else within.tokens
            past = starts + reach >= size
        else:
            token = self.corpus.next_token
            mark = None if token is None else token.regions.get(within.attribute)
            if mark is None:  # the next token lies in no region: every region ends where it does in one piece
                return bound
            regions = self.corpus.regions(within.attribute)
            clipped = regions.containing(starts) + (within.count - 1) > len(regions) - 1
            past = clipped if mark.start else clipped | (bound == size - 1)
        return np.where(past, size, bound)

    def certain_steps(self, first: int) -> int | None:
        """Tokens every candidate of this pass surely consumes before it can die: the first state,
        then the longest run of ``[]`` states after it (None: unbounded, a loop of ``[]``). Such
        rows cannot fail a test, so they are stepped whatever the corpus holds."""
        states, follow = self.automaton.states, self.automaton.follow
        free = {j for j, state in enumerate(states) if isinstance(state.predicate, Always)}
        heads = [k for k in follow[first] if k in free] if states[first].is_token else []
        reach: set[int] = set()
        todo = list(heads)
        while todo:
            j = todo.pop()
            if j not in reach:
                reach.add(j)
                todo += [k for k in follow[j] if k in free]
        waiting = {j: 0 for j in reach}
        for j in reach:
            for k in follow[j]:
                if k in reach:
                    waiting[k] += 1
        ready = [j for j, n in waiting.items() if n == 0]
        order = []
        while ready:  # a topological order of the [] states; a loop leaves some out
            j = ready.pop()
            order.append(j)
            for k in follow[j]:
                if k in reach:
                    waiting[k] -= 1
                    if waiting[k] == 0:
                        ready.append(k)
        if len(order) < len(reach):
            return None
        longest: dict[int, int] = {}
        for j in reversed(order):
            longest[j] = 1 + max((longest[k] for k in follow[j] if k in reach), default=0)
        return (1 if states[first].is_token else 0) + max((longest[k] for k in heads), default=0)

    def most_steps(self, first: int) -> int | None:
        """At most how many tokens a match of this pass consumes after its first state (None: no
        bound, a loop): how far ahead of a row its tokens may be worth reading."""
        states, follow = self.automaton.states, self.automaton.follow
        # depth first without recursion (a []{1000} is a chain of 1,000 states); a state met again on
        # the way to it is a loop: no bound
        longest: dict[int, int] = {}  # tokens on the longest way on from a state (the state excluded)
        on_way = {first}
        stack = [(first, iter(follow[first]))]
        while stack:
            i, ahead = stack[-1]
            for k in ahead:
                if k in on_way:
                    return None
                if k not in longest:
                    on_way.add(k)
                    stack.append((k, iter(follow[k])))
                    break
            else:
                stack.pop()
                on_way.discard(i)
                longest[i] = max((longest[k] + (1 if states[k].is_token else 0) for k in follow[i]), default=0)
        return longest[first]

    def consumes_after(self, first: int) -> bool:
        """Whether a match of this pass can consume tokens after its first state (else the
        pass is a few vectorised operations and threads would only add overhead)."""
        return self._reads_token(first, lambda state: ((nxt, nxt) for nxt in self.automaton.follow[state]))

    def _reads_token(self, start: int, moves: Callable[[int], Iterable[tuple[int, int]]]) -> bool:
        """Whether a walk from ``start`` over ``moves`` (per state: the state whose test a move reads
        and the state it reaches) reads a token's test somewhere."""
        seen, todo = {start}, [start]
        while todo:
            for read, nxt in moves(todo.pop()):
                if self.automaton.states[read].is_token:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False
