"""Stages 2 and 3, plan and evaluate: all candidate starts of a query stepped forward together.

CQP runs one pass per symbol a match can start with; each pass takes the candidate starts where
that symbol holds and finds, per start, the first (shortest) end the automaton accepts — or, for
the ``longest`` strategy, the last — within the search boundary: the enclosing region with
``within``, else ``start + HardBoundary`` tokens. The passes are merged, the matching strategy
filters them (``strategy.py``), then ``cut`` and ``expand`` apply.

Here a pass is vectorised: every candidate is a row of a boolean matrix ``active`` (rows x
automaton states); one step gathers the token at each row's cursor (a corpus position) and
advances all rows at once. Labels are tracked per row and state as corpus positions (the last
assignment wins).

Planning: when a pass starts with a fixed chain of tests (``[] [word="anyway"]``,
``<s> [pos="UH"]``), candidates come from the chain's rarest test through the reverse index,
shifted by its offset, and the other chain tests are checked with one gather each.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import assert_never

import numpy as np
import numpy.typing as npt

from backend_node.engines.base import DEFAULT_HARD_BOUNDARY, Deadline
from backend_node.engines.native.compile import (
    AllOf,
    Always,
    AnyOf,
    Automaton,
    Lookup,
    Negation,
    Predicate,
    TagTest,
    estimate,
)
from backend_node.engines.native.constraint import ConstraintEvaluator
from backend_node.engines.native.corpus_state import NativeCorpus
from backend_node.engines.native.registers import Registers
from backend_node.engines.results import Cpos, Matches

PARALLEL_ROWS = 200_000
"""Passes with at least this many candidate starts are split over two threads."""


def attributes(predicate: Predicate) -> set[str]:
    """The p-attributes a predicate reads."""
    if isinstance(predicate, Lookup):
        return {predicate.attribute}
    if isinstance(predicate, Negation):
        return attributes(predicate.part)
    if isinstance(predicate, AllOf):
        return set().union(*(attributes(p) for p in predicate.parts))
    if isinstance(predicate, AnyOf):
        return set().union(*(attributes(p) for p in predicate.parts))
    if isinstance(predicate, Always):
        return set()
    assert_never(predicate)


class TokenTests:
    """Evaluate predicates and tag assertions at arrays of corpus positions."""

    def __init__(self, corpus: NativeCorpus) -> None:
        self.corpus = corpus

    def holds(
        self, predicate: Predicate, cpos: Cpos, ids: dict[str, npt.NDArray[np.int32]]
    ) -> npt.NDArray[np.bool_]:
        """Whether the predicate holds at each position; ``ids`` caches gathered lexicon ids."""
        if isinstance(predicate, Always):
            return np.ones(len(cpos), dtype=np.bool_)
        if isinstance(predicate, Lookup):
            if predicate.attribute not in ids:
                ids[predicate.attribute] = self.corpus.ids(predicate.attribute, cpos)
            return predicate.table[ids[predicate.attribute]]
        if isinstance(predicate, Negation):
            return ~self.holds(predicate.part, cpos, ids)
        if isinstance(predicate, AllOf):
            combined = self.holds(predicate.parts[0], cpos, ids)
            for part in predicate.parts[1:]:
                combined &= self.holds(part, cpos, ids)
            return combined
        if isinstance(predicate, AnyOf):
            combined = self.holds(predicate.parts[0], cpos, ids)
            for part in predicate.parts[1:]:
                combined |= self.holds(part, cpos, ids)
            return combined
        assert_never(predicate)

    def tag_holds(self, tag: TagTest, cpos: Cpos) -> npt.NDArray[np.bool_]:
        regions = self.corpus.regions(tag.attribute)
        number = regions.ending_at(cpos - 1) if tag.closing else regions.starting_at(cpos)
        ok = number >= 0
        if tag.region_ok is not None:
            ok[ok] = tag.region_ok[number[ok]]
        return ok

    def cpos_where(self, predicate: Predicate) -> Cpos:
        """Sorted corpus positions where a predicate holds, from the reverse index where it pays."""
        size = self.corpus.size
        if isinstance(predicate, Always):
            return np.arange(size, dtype=np.int64)
        if isinstance(predicate, Lookup):
            return self.corpus.cpos_of(predicate.attribute, predicate.table, predicate.count)
        if isinstance(predicate, AllOf):
            parts = sorted(predicate.parts, key=lambda p: estimate(p, size))
            found = self.cpos_where(parts[0])
            for part in parts[1:]:
                found = found[self.holds(part, found, {})]
            return found
        if isinstance(predicate, AnyOf):
            return np.unique(np.concatenate([self.cpos_where(p) for p in predicate.parts]))
        if isinstance(predicate, Negation):
            # a negation has no index to read: test it at every position
            everything = np.arange(size, dtype=np.int64)
            return everything[self.holds(predicate, everything, {})]
        assert_never(predicate)

    def tag_cpos(self, tag: TagTest) -> Cpos:
        """Sorted corpus positions where a tag assertion holds (region starts, or ends + 1)."""
        regions = self.corpus.regions(tag.attribute)
        keep = np.ones(len(regions), dtype=np.bool_) if tag.region_ok is None else tag.region_ok
        return (regions.ends[keep] + 1) if tag.closing else regions.starts[keep]


class PassRunner:
    """Runs the passes of one query over one corpus."""

    def __init__(
        self,
        corpus: NativeCorpus,
        automaton: Automaton,
        constraint: ConstraintEvaluator | None,
        within: str | None,
        longest: bool,
        hard_boundary: int = DEFAULT_HARD_BOUNDARY,
        threads: int = 2,
        deadline: Deadline | None = None,
    ) -> None:
        self.threads = threads
        self.deadline = deadline or Deadline()
        self.corpus = corpus
        self.automaton = automaton
        self.constraint = constraint
        self.within = within
        self.longest = longest
        self.hard_boundary = hard_boundary
        self.tests = TokenTests(corpus)
        self.sources = automaton.sources
        self.final = sorted(automaton.final)
        self.tracked = sorted(set(constraint.labels if constraint else ()) & set(automaton.labels))
        # CQP's StrictRegions: with both <s> and </s> in the query, a match that entered a region
        # at <s> must not leave it before </s>, and </s> must close that very region
        tags = [p.tag for p in automaton.states if p.tag is not None]
        opened = {t.attribute for t in tags if not t.closing}
        self.strict = sorted(opened & {t.attribute for t in tags if t.closing})
        self.track_target = any(p.target for p in automaton.states)
        # tag states in an order where a tag's tag sources come first (zero-width chains)
        self.tag_order = self._tag_order()

    def _tag_order(self) -> list[int]:
        tags = [i for i, p in enumerate(self.automaton.states) if not p.is_token]
        ordered: list[int] = []
        visiting: set[int] = set()

        def visit(i: int) -> None:
            if i in ordered:
                return
            if i in visiting:
                raise ValueError("a cycle of structural tags cannot consume tokens")  # CQP: infinite loop
            visiting.add(i)
            for source in self.sources[i]:
                if not self.automaton.states[source].is_token:
                    visit(source)
            visiting.discard(i)
            ordered.append(i)

        for i in tags:
            visit(i)
        return ordered

    # -- candidates ------------------------------------------------------------------------

    def _chain(self, first: int) -> list[tuple[int, int]]:
        """The fixed run of states every match of this pass goes through, with their token offsets."""
        chain = [(first, 0)]
        offset = 1 if self.automaton.states[first].is_token else 0
        current = first
        while current not in self.automaton.final and len(self.automaton.follow[current]) == 1:
            nxt = self.automaton.follow[current][0]
            if len(self.sources[nxt]) != 1 or any(nxt == c for c, _ in chain):
                break
            chain.append((nxt, offset))
            offset += 1 if self.automaton.states[nxt].is_token else 0
            current = nxt
        return chain

    def candidates(self, first: int) -> Cpos:
        """Candidate start cpos for the pass that begins with state ``first``."""
        states = self.automaton.states
        size = self.corpus.size

        def cost(item: tuple[int, int]) -> int:
            state = states[item[0]]
            if state.predicate is not None:
                return estimate(state.predicate, size)
            return len(self.corpus.regions(state.tag.attribute)) if state.tag else size

        chain = self._chain(first)
        anchor = min(chain, key=cost)
        index, offset = anchor
        state = states[index]
        if state.predicate is not None:
            found = self.tests.cpos_where(state.predicate)
        else:
            assert state.tag is not None
            found = self.tests.tag_cpos(state.tag)
        starts = found - offset
        starts = starts[starts >= 0]
        for other, other_offset in chain:
            if (other, other_offset) == anchor or len(starts) == 0:
                continue
            item = states[other]
            at = starts + other_offset
            if item.predicate is not None:
                if isinstance(item.predicate, Always):
                    keep = at < size
                else:
                    keep = at < size
                    keep[keep] = self.tests.holds(item.predicate, at[keep], {})
            else:
                assert item.tag is not None
                keep = self.tests.tag_holds(item.tag, at)
            starts = starts[keep]
        return starts

    def boundaries(self, starts: Cpos) -> tuple[Cpos, Cpos]:
        """Keep starts that may match and give each its last allowed corpus position."""
        if self.within is None:
            return starts, np.minimum(starts + self.hard_boundary, self.corpus.size - 1)
        regions = self.corpus.regions(self.within)
        number = regions.containing(starts)
        inside = number >= 0
        return starts[inside], regions.ends[number[inside]]

    # -- one pass ------------------------------------------------------------------------

    def run(self, first: int, limit: int | None = None) -> Matches:
        """All matches of the pass starting with ``first``; with ``limit``, those of its first
        ``limit`` successful starts only (CQP's ``cut``), evaluating candidates chunk by chunk."""
        starts, bound = self.boundaries(self.candidates(first))
        if limit is None:
            if self.threads > 1 and len(starts) >= PARALLEL_ROWS and self._steps_after(first):
                # numpy releases the GIL in its array work: halves of the candidates run on both cores
                cut = len(starts) // 2
                halves = [(starts[:cut], bound[:cut]), (starts[cut:], bound[cut:])]
                with ThreadPoolExecutor(2) as pool:
                    parts = list(pool.map(lambda half: self._simulate(first, *half), halves))
                return Matches(*(np.concatenate([getattr(m, f) for m in parts])
                                 for f in ("match", "matchend", "target")))
            return self._simulate(first, starts, bound)
        chunk = max(1024, 8 * limit)
        found: list[Matches] = []
        total = 0
        for offset in range(0, len(starts), chunk):
            part = self._simulate(first, starts[offset : offset + chunk], bound[offset : offset + chunk])
            found.append(part)
            total += len(part)
            if total >= limit:
                break
        return Matches(*(np.concatenate([getattr(m, f) for m in found]) if found else np.zeros(0, np.int64)
                         for f in ("match", "matchend", "target")))

    def _steps_after(self, first: int) -> bool:
        """Whether a match of this pass can consume tokens after its first state (else the
        pass is a few vectorised operations and threads would only add overhead)."""
        seen, todo = {first}, [first]
        while todo:
            for nxt in self.automaton.follow[todo.pop()]:
                if self.automaton.states[nxt].is_token:
                    return True
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        return False

    def _simulate(self, first: int, starts: Cpos, bound: Cpos) -> Matches:
        """Step the candidates of the pass that begins with state ``first`` (one row per start)
        until each row accepts, dies, or passes its ``bound``."""
        head = self.automaton.states[first]
        if head.tag is not None:
            # a closing tag at the start looks at the token before: it too must be in bounds
            effective = starts - 1 if head.tag.closing else starts
            keep = effective <= bound
            starts, bound = starts[keep], bound[keep]
        if len(starts) == 0:
            return Matches.empty()
        active, registers = self._begin(first, starts)
        cursor = starts + 1 if head.is_token else starts.copy()
        accepts = _Accepts(starts, self.longest, registers.target is not None)
        origin = np.arange(len(starts))  # each row's index among the pass's starts
        while True:
            self.deadline.check()
            self._closure(active, registers, cursor, bound)
            accepted, accepted_target = self._accepting(active, registers, starts, cursor)
            accepts.add(origin, starts, cursor, accepted, accepted_target)
            alive = active.any(axis=1)
            if not self.longest:
                alive &= ~accepted  # the first (shortest) accept of a row is its match
            alive &= cursor <= bound
            if not alive.all():
                survivors = np.flatnonzero(alive)
                active, starts, bound = active[survivors], starts[survivors], bound[survivors]
                cursor, origin = cursor[survivors], origin[survivors]
                registers = registers.select(survivors)
            if len(starts) == 0:
                break
            active, registers = self._step(active, registers, cursor)
            cursor = cursor + 1
        return accepts.matches()

    def _begin(self, first: int, starts: Cpos) -> tuple[npt.NDArray[np.bool_], Registers]:
        """Every row in state ``first``, its label, target or entered region set at its start."""
        states = self.automaton.states
        head = states[first]
        active = np.zeros((len(starts), len(states)), dtype=np.bool_)
        active[:, first] = True
        registers = Registers.unset(len(starts), len(states), self.tracked, self.track_target, self.strict)
        registers.record(head.label, head.target, first, slice(None), starts)
        if head.tag is not None and not head.tag.closing and head.tag.attribute in registers.region_ends:
            regions = self.corpus.regions(head.tag.attribute)
            registers.region_ends[head.tag.attribute][:, first] = regions.ends[regions.starting_at(starts)]
        return active, registers

    def _step(
        self, active: npt.NDArray[np.bool_], registers: Registers, cursor: Cpos
    ) -> tuple[npt.NDArray[np.bool_], Registers]:
        """Consume the token at ``cursor`` in every row."""
        active = registers.inside_regions(active, cursor)  # in a region entered at <s>, no token beyond its end
        new_active = np.zeros_like(active)
        new = registers.cleared()
        gathered: dict[str, npt.NDArray[np.int32]] = {}
        rows_all = np.arange(len(cursor))
        for j, state in enumerate(self.automaton.states):
            if state.predicate is None or not self.sources[j]:
                continue  # tags are followed in _closure; a state without sources only starts a pass
            reach = self._reach(active, j)
            if not reach.any():
                continue
            ok = self._matching_rows(state.predicate, rows_all[reach], cursor, gathered)
            new_active[ok, j] = True
            registers.propagate(new, active, self.sources[j], j, ok)
            new.record(state.label, state.target, j, ok, cursor)
        return new_active, new

    def _matching_rows(
        self, predicate: Predicate, rows: Cpos, cursor: Cpos, gathered: dict[str, npt.NDArray[np.int32]]
    ) -> Cpos:
        """The ``rows`` whose token at ``cursor`` satisfies ``predicate``."""
        if isinstance(predicate, Always):
            return rows
        # one gather per attribute and step (over all rows), shared by every state that tests it
        ids = {}
        for attribute in attributes(predicate):
            if attribute not in gathered:
                gathered[attribute] = self.corpus.ids(attribute, cursor)
            ids[attribute] = gathered[attribute][rows]
        return rows[self.tests.holds(predicate, cursor[rows], ids)]

    def _reach(self, active: npt.NDArray[np.bool_], j: int) -> npt.NDArray[np.bool_]:
        """Rows with an active state from which state ``j`` may follow."""
        return np.asarray(active[:, self.sources[j]].any(axis=1), dtype=np.bool_)

    def _closure(self, active: npt.NDArray[np.bool_], registers: Registers, cursor: Cpos, bound: Cpos) -> None:
        """Follow zero-width tags at each row's cursor (in place)."""
        for j in self.tag_order:
            tag = self.automaton.states[j].tag
            assert tag is not None
            reach = self._reach(active, j)
            if not reach.any():
                continue
            rows = np.flatnonzero(reach)
            effective = cursor[rows] - 1 if tag.closing else cursor[rows]
            rows = rows[effective <= bound[rows]]
            sources = active
            if registers.region_ends:
                # StrictRegions: a tag may only follow states whose entered regions it stays in
                closing = tag.attribute if tag.closing else None
                sources = registers.inside_regions(active, cursor - 1 if tag.closing else cursor, closing)
                rows = rows[sources[rows][:, self.sources[j]].any(axis=1)]
            ok = rows[self.tests.tag_holds(tag, cursor[rows])]
            active[ok, j] = True
            registers.propagate(registers, sources, self.sources[j], j, ok)
            if tag.attribute in registers.region_ends:
                ends = registers.region_ends[tag.attribute]
                if tag.closing:
                    ends[ok, j] = -1  # the region is closed: nothing left to stay inside
                else:
                    regions = self.corpus.regions(tag.attribute)
                    ends[ok, j] = regions.ends[regions.starting_at(cursor[ok])]

    def _accepting(
        self, active: npt.NDArray[np.bool_], registers: Registers, starts: Cpos, cursor: Cpos
    ) -> tuple[npt.NDArray[np.bool_], Cpos]:
        """Rows whose active states include a final one (that passes the global constraint), and
        the target of each such row (an empty array when the query marks no target)."""
        ends = cursor - 1
        target = registers.target
        accepted = np.zeros(len(cursor), dtype=np.bool_)
        chosen_target = np.full(len(cursor) if target is not None else 0, -1, dtype=np.int64)
        valid = ends >= starts  # a match must contain at least one token
        for f in self.final:
            rows = np.flatnonzero(active[:, f] & valid & ~accepted)
            if len(rows) == 0:
                continue
            if self.constraint is not None:
                values = {name: grid[rows, f] for name, grid in registers.labels.items()}
                values["match"] = starts[rows]
                values["matchend"] = ends[rows]
                values["target"] = target[rows, f] if target is not None else np.full(len(rows), -1)
                rows = rows[self.constraint.holds(values)]
            accepted[rows] = True
            if target is not None:
                chosen_target[rows] = target[rows, f]
        return accepted, chosen_target


class _Accepts:
    """The matches one simulation found: each row's first accept, or, for the ``longest``
    strategy, each row's last accept (rows keep running after accepting)."""

    def __init__(self, starts: Cpos, longest: bool, track_target: bool) -> None:
        self.starts = starts  # by origin row; never modified in place
        self.longest = longest
        self.track_target = track_target
        self.last_end = np.full(len(starts) if longest else 0, -1, dtype=np.int64)
        self.last_target = np.full(len(starts) if longest else 0, -1, dtype=np.int64)
        self.found_start: list[Cpos] = []
        self.found_end: list[Cpos] = []
        self.found_target: list[Cpos] = []

    def add(self, origin: Cpos, starts: Cpos, cursor: Cpos, accepted: npt.NDArray[np.bool_], target: Cpos) -> None:
        """Rows ``accepted`` at this step end just before their ``cursor``."""
        if self.longest:
            self.last_end[origin[accepted]] = cursor[accepted] - 1
            if self.track_target:
                self.last_target[origin[accepted]] = target[accepted]
        elif accepted.any():
            self.found_start.append(starts[accepted])
            self.found_end.append(cursor[accepted] - 1)
            if self.track_target:
                self.found_target.append(target[accepted])

    def matches(self) -> Matches:
        if self.longest:
            done = self.last_end >= 0
            targets = self.last_target[done] if self.track_target else np.full(int(done.sum()), -1, dtype=np.int64)
            return Matches(self.starts[done], self.last_end[done], targets)
        if not self.found_start:
            return Matches.empty()
        match = np.concatenate(self.found_start)
        targets = np.concatenate(self.found_target) if self.found_target else np.full(len(match), -1, dtype=np.int64)
        return Matches(match, np.concatenate(self.found_end), targets)
