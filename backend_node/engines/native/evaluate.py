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
from dataclasses import dataclass
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

Cpos = npt.NDArray[np.int64]
"""An array of corpus positions."""
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


@dataclass
class Matches:
    """Hits as parallel arrays, sorted by (match, matchend); ``target`` is -1 where unset."""

    match: Cpos
    matchend: Cpos
    target: Cpos

    def __len__(self) -> int:
        return len(self.match)

    @staticmethod
    def empty() -> Matches:
        zero = np.zeros(0, dtype=np.int64)
        return Matches(zero, zero.copy(), zero.copy())


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
        self.tracked += [f"<{name}>" for name in self.strict]
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
        states = self.automaton.states
        n_states = len(states)
        head = states[first]
        if not head.is_token:
            assert head.tag is not None
            effective = starts - 1 if head.tag.closing else starts
            keep = effective <= bound
            starts, bound = starts[keep], bound[keep]
        rows = len(starts)
        if rows == 0:
            return Matches.empty()
        active = np.zeros((rows, n_states), dtype=np.bool_)
        active[:, first] = True
        cursor = starts + 1 if head.is_token else starts.copy()
        labels = {name: np.full((rows, n_states), -1, dtype=np.int64) for name in self.tracked}
        target = np.full((rows, n_states), -1, dtype=np.int64) if self.track_target else None
        if head.label in labels:
            labels[head.label][:, first] = starts
        if head.tag is not None and not head.tag.closing and head.tag.attribute in self.strict:
            regions = self.corpus.regions(head.tag.attribute)
            labels[f"<{head.tag.attribute}>"][:, first] = regions.ends[regions.starting_at(starts)]
        if target is not None and head.target:
            target[:, first] = starts
        origin = np.arange(rows)
        origin_starts = starts.copy()
        found_start: list[Cpos] = []
        found_end: list[Cpos] = []
        found_target: list[Cpos] = []
        last_end = np.full(rows if self.longest else 0, -1, dtype=np.int64)
        last_target = np.full(rows if self.longest else 0, -1, dtype=np.int64)
        while True:
            self.deadline.check()
            self._closure(active, labels, target, cursor, bound)
            accepted, accepted_target = self._accepting(active, labels, target, starts, cursor)
            if self.longest:
                last_end[origin[accepted]] = cursor[accepted] - 1
                if target is not None:
                    last_target[origin[accepted]] = accepted_target[accepted]
                alive = active.any(axis=1)
            else:
                if accepted.any():
                    found_start.append(starts[accepted])
                    found_end.append(cursor[accepted] - 1)
                    if target is not None:
                        found_target.append(accepted_target[accepted])
                alive = active.any(axis=1) & ~accepted
            alive &= cursor <= bound
            if not alive.all():
                survivors = np.flatnonzero(alive)
                active, starts, bound = active[survivors], starts[survivors], bound[survivors]
                cursor, origin = cursor[survivors], origin[survivors]
                labels = {name: values[survivors] for name, values in labels.items()}
                target = target[survivors] if target is not None else None
            if len(starts) == 0:
                break
            active, labels, target = self._step(active, labels, target, cursor)
            cursor = cursor + 1
        if self.longest:
            done = last_end >= 0
            targets = last_target[done] if self.track_target else np.full(int(done.sum()), -1, dtype=np.int64)
            return Matches(origin_starts[done], last_end[done], targets)
        if not found_start:
            return Matches.empty()
        match = np.concatenate(found_start)
        targets = np.concatenate(found_target) if found_target else np.full(len(match), -1, dtype=np.int64)
        return Matches(match, np.concatenate(found_end), targets)

    def _step(
        self,
        active: npt.NDArray[np.bool_],
        labels: dict[str, npt.NDArray[np.int64]],
        target: npt.NDArray[np.int64] | None,
        cursor: Cpos,
    ) -> tuple[npt.NDArray[np.bool_], dict[str, npt.NDArray[np.int64]], npt.NDArray[np.int64] | None]:
        """Consume the token at ``cursor`` in every row."""
        states = self.automaton.states
        for name in self.strict:  # inside a region entered at <s>, no token beyond its end
            region_end = labels[f"<{name}>"]
            active = active & ((region_end < 0) | (cursor[:, None] <= region_end))
        new_active = np.zeros_like(active)
        new_labels = {name: np.full_like(values, -1) for name, values in labels.items()}
        new_target = np.full_like(target, -1) if target is not None else None
        gathered: dict[str, npt.NDArray[np.int32]] = {}
        rows_all = np.arange(len(cursor))
        for j, state in enumerate(states):
            if not state.is_token or not self.sources[j]:
                continue
            reach = self._reach(active, j)
            if not reach.any():
                continue
            rows = rows_all[reach]
            assert state.predicate is not None
            if isinstance(state.predicate, Always):
                ok = rows
            else:
                # one gather per attribute and step, shared by every state that tests it
                ids = {}
                for attribute in attributes(state.predicate):
                    if attribute not in gathered:
                        gathered[attribute] = self.corpus.ids(attribute, cursor)
                    ids[attribute] = gathered[attribute][rows]
                ok = rows[self.tests.holds(state.predicate, cursor[rows], ids)]
            new_active[ok, j] = True
            self._propagate(active, labels, target, new_labels, new_target, j, ok)
            if state.label in new_labels:
                new_labels[state.label][ok, j] = cursor[ok]
            if new_target is not None and state.target:
                new_target[ok, j] = cursor[ok]
        return new_active, new_labels, new_target

    def _reach(self, active: npt.NDArray[np.bool_], j: int) -> npt.NDArray[np.bool_]:
        """Rows with an active state from which state ``j`` may follow."""
        return np.asarray(active[:, self.sources[j]].any(axis=1), dtype=np.bool_)

    def _propagate(
        self,
        active: npt.NDArray[np.bool_],
        labels: dict[str, npt.NDArray[np.int64]],
        target: npt.NDArray[np.int64] | None,
        new_labels: dict[str, npt.NDArray[np.int64]],
        new_target: npt.NDArray[np.int64] | None,
        j: int,
        rows: npt.NDArray[np.int64],
    ) -> None:
        """Label values flow from the source states into state ``j``; the last source in order wins."""
        if not labels and target is None:
            return
        for i in self.sources[j]:
            live = rows[active[rows, i]]
            for name, values in labels.items():
                new_labels[name][live, j] = values[live, i]
            if target is not None and new_target is not None:
                new_target[live, j] = target[live, i]

    def _closure(
        self,
        active: npt.NDArray[np.bool_],
        labels: dict[str, npt.NDArray[np.int64]],
        target: npt.NDArray[np.int64] | None,
        cursor: Cpos,
        bound: Cpos,
    ) -> None:
        """Follow zero-width tags at each row's cursor (in place)."""
        states = self.automaton.states
        for j in self.tag_order:
            tag = states[j].tag
            assert tag is not None
            reach = self._reach(active, j)
            if not reach.any():
                continue
            rows = np.flatnonzero(reach)
            effective = cursor[rows] - 1 if tag.closing else cursor[rows]
            rows = rows[effective <= bound[rows]]
            sources = active
            if self.strict:
                sources = self._strict_sources(active, labels, cursor, tag, j)
                rows = rows[sources[rows][:, self.sources[j]].any(axis=1)]
            ok = rows[self.tests.tag_holds(tag, cursor[rows])]
            active[ok, j] = True
            self._propagate(sources, labels, target, labels, target, j, ok)
            if tag.attribute in self.strict:
                key = f"<{tag.attribute}>"
                if tag.closing:
                    labels[key][ok, j] = -1
                else:
                    regions = self.corpus.regions(tag.attribute)
                    labels[key][ok, j] = regions.ends[regions.starting_at(cursor[ok])]

    def _strict_sources(
        self,
        active: npt.NDArray[np.bool_],
        labels: dict[str, npt.NDArray[np.int64]],
        cursor: Cpos,
        tag: TagTest,
        j: int,
    ) -> npt.NDArray[np.bool_]:
        """Source states from which tag state ``j`` may follow under StrictRegions."""
        allowed = active.copy()
        effective = (cursor - 1 if tag.closing else cursor)[:, None]
        for name in self.strict:
            region_end = labels[f"<{name}>"]
            if tag.closing and name == tag.attribute:
                allowed &= (region_end < 0) | (effective == region_end)
            else:
                allowed &= (region_end < 0) | (effective <= region_end)
        return allowed

    def _accepting(
        self,
        active: npt.NDArray[np.bool_],
        labels: dict[str, npt.NDArray[np.int64]],
        target: npt.NDArray[np.int64] | None,
        starts: Cpos,
        cursor: Cpos,
    ) -> tuple[npt.NDArray[np.bool_], Cpos]:
        """Rows whose active states include a final one (that passes the global constraint)."""
        ends = cursor - 1
        accepted = np.zeros(len(cursor), dtype=np.bool_)
        chosen_target = np.full(len(cursor) if target is not None else 0, -1, dtype=np.int64)
        valid = ends >= starts  # a match must contain at least one token
        for f in self.final:
            rows = np.flatnonzero(active[:, f] & valid & ~accepted)
            if len(rows) == 0:
                continue
            if self.constraint is not None:
                values = {name: labels[name][rows, f] for name in labels}
                values["match"] = starts[rows]
                values["matchend"] = ends[rows]
                values["target"] = target[rows, f] if target is not None else np.full(len(rows), -1)
                rows = rows[self.constraint.holds(values)]
            accepted[rows] = True
            if target is not None:
                chosen_target[rows] = target[rows, f]
        return accepted, chosen_target
