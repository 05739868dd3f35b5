"""CQP's simulation over CQP's own DFA (``dfa.py``), vectorised over candidate starts.

``eval.c`` (``simulate``) runs one start at a time: every DFA state holds at most one corpus
position and one table of labels; a cycle visits the active states in number order and each
state's transitions in pattern order; a valid transition copies the state's labels into the
target state and sets the target's position (one token on, or the same for a tag, an anchor or a
lookahead) — a later transition into the same state overwrites both. A transition into a final
state whose labels pass the global constraint is a *winner*: with the ``longest`` strategy the
simulation goes on and a later winner replaces it; otherwise it stops at once, and the
transitions after it in the same cycle are not taken. A state vector that no longer changes is
CQP's "infinite loop" (CQP aborts the query; here the start ends with what it had).

Here every candidate start is a row, and every DFA state a column of a position matrix and of
one matrix per tracked label, so a cycle is one pass over the live states and their transitions
for all rows at once; numpy's assignment order (a later write into the same cell wins) is CQP's
overwrite order. The glushkov simulation (``simulate.py``) answers the same wherever paths never
meet in one state with different positions; the engine uses this one where they may (tags
inside alternatives and repetitions, anchors and labels under ``longest``, StrictRegions with
alternatives).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import QueryFailed
from cowbird.engines.native.compile import Always, Automaton, State, label_predicates
from cowbird.engines.native.corpus_state import NativeCorpus
from cowbird.engines.native.dfa import Dfa
from cowbird.engines.native.plan import Planner, SearchSpace
from cowbird.engines.native.simulate import PassesBase, RunSetup
from cowbird.engines.results import Cpos, Matches

Grid = npt.NDArray[np.int64]

ROWS_AT_ONCE = 1 << 20
"""Candidate starts stepped together at most: each DFA state costs 8 bytes per row and matrix."""


class DfaPlanner(Planner):
    """Candidates and boundaries as for the glushkov automaton, with the fixed chain of a pass
    read from the DFA: from the start state, pattern ``p`` leads to one state; while that state
    is not final and has a single transition, every match of the pass takes it."""

    def __init__(self, corpus: NativeCorpus, leaves: Automaton, dfa: Dfa, within: SearchSpace,
                 hard_boundary: int, blind: set[int]) -> None:
        super().__init__(corpus, leaves, within, hard_boundary)
        self.dfa = dfa
        self.moves = [dict(moves) for moves in dfa.transitions]
        self.blind = blind  # patterns that read labels: they cannot be tested without a run

    def chain(self, first: int) -> list[tuple[int, int]]:
        chain = [(first, 0)]
        offset = 1 if self.automaton.states[first].is_token else 0
        state = self.moves[0][first]
        seen = {state}
        while state not in self.dfa.final and len(self.dfa.transitions[state]) == 1:
            symbol, nxt = self.dfa.transitions[state][0]
            if symbol not in self.blind:
                chain.append((symbol, offset))
            offset += 1 if self.automaton.states[symbol].is_token else 0
            if nxt in seen:
                break
            seen.add(nxt)
            state = nxt
        return chain

    def certain_steps(self, first: int) -> int | None:
        """Tokens every candidate surely consumes: the first pattern, then the longest run of
        ``[]`` transitions after it (None: a loop of them)."""
        states = self.automaton.states
        free = [[t for p, t in moves if isinstance(states[p].predicate, Always)] for moves in self.dfa.transitions]
        longest: dict[int, int | None] = {}

        def run(state: int, visiting: frozenset[int]) -> int | None:
            if state in visiting:
                return None
            if state not in longest:
                best: int | None = 0
                for nxt in free[state]:
                    more = run(nxt, visiting | {state})
                    best = None if more is None or best is None else max(best, 1 + more)
                longest[state] = best
            return longest[state]

        rest = run(self.moves[0][first], frozenset())
        return None if rest is None else (1 if states[first].is_token else 0) + rest

    def consumes_after(self, first: int) -> bool:
        return self._reads_token(self.moves[0][first], lambda state: self.dfa.transitions[state])


def _zero_width_cycle(dfa: Dfa, states: list[State]) -> bool:
    """Whether the DFA can return to a state without consuming a token (``(</s> <s>)+``)."""
    graph = [[t for p, t in moves if not states[p].is_token] for moves in dfa.transitions]
    colour = [0] * dfa.states

    def visit(state: int) -> bool:
        colour[state] = 1
        for nxt in graph[state]:
            if colour[nxt] == 1 or (colour[nxt] == 0 and visit(nxt)):
                return True
        colour[state] = 2
        return False

    return any(colour[s] == 0 and visit(s) for s in range(dfa.states))


class DfaRunner(PassesBase):
    """Runs the passes of one query over one corpus on CQP's DFA (one pass per pattern that
    leaves the start state, as CQP's ``simulate_dfa`` runs one per initial transition)."""

    def __init__(self, setup: RunSetup, dfa: Dfa, leaves: Automaton) -> None:
        super().__init__(setup)
        corpus, constraint = setup.corpus, setup.constraint
        self.dfa = dfa
        self.states = leaves.states
        reading = {
            i: label_predicates(s.predicate if s.tag is None else s.tag.look) for i, s in enumerate(leaves.states)
        }
        self.reads = {i: sorted({name for p in found for name in p.labels}) for i, found in reading.items() if found}
        self.plan = DfaPlanner(corpus, leaves, dfa, setup.within, setup.hard_boundary, set(self.reads))
        self.state_count = dfa.states
        self.tests = self.plan.tests
        self.passes = [symbol for symbol, _ in dfa.transitions[0]]
        for symbol in self.passes:
            left = [p for p in reading[symbol] if p.left_label]
            if left:
                raise QueryFailed(
                    f"a token that a match can start with reads a label on the left of a comparison "
                    f"({left[0].left_label}.…): CQP "
                    "refuses this (\"Reference to label not allowed in query initial position\"); write the "
                    "token's own attribute on the left, as in [lemma = a.lemma]"
                )
        read = set(constraint.labels) if constraint is not None else set()
        read |= {name for names in self.reads.values() for name in names}
        self.labels = sorted(read & {s.label for s in self.states if s.label})
        self.anchors = sorted({s.anchor for s in self.states if s.anchor})
        # StrictRegions: an attribute whose closing tag follows one of its opening tags in the text
        opened: set[str] = set()
        self.checks_region: list[bool] = []  # per pattern: a closing tag tied to an opening one
        used: set[str] = set()
        for state in self.states:
            tag = state.tag
            if tag is None or tag.look is not None:
                self.checks_region.append(False)
                continue
            if not tag.closing:
                opened.add(tag.attribute)
                self.checks_region.append(False)
            else:
                tied = tag.attribute in opened
                self.checks_region.append(tied)
                if tied:
                    used.add(tag.attribute)
        self.strict = sorted(used)
        self.grids = [*(f"label:{n}" for n in self.labels), *(f"anchor:{n}" for n in self.anchors),
                      *(f"region:{n}" for n in self.strict)]
        self.looping = _zero_width_cycle(dfa, self.states)

    # ------------------------------------------------------------------ one pass

    def _simulate(self, first: int, starts: Cpos, bound: Cpos) -> Matches:
        if len(starts) > ROWS_AT_ONCE:  # rows are independent: slices bound the position matrices' memory
            return Matches.concatenate([
                self._simulate(first, starts[at : at + ROWS_AT_ONCE], bound[at : at + ROWS_AT_ONCE])
                for at in range(0, len(starts), ROWS_AT_ONCE)
            ])
        count = len(starts)
        if count == 0:
            return Matches.empty()
        size = self.corpus.size
        bound = self.plan.past_the_cut(starts, bound)  # an opening tag may be read just past the cut
        states = self.dfa.states
        final = self.dfa.final
        all_starts = starts
        end = np.full(count, -1, dtype=np.int64)
        anchor_out = {name: np.full(count, -1, dtype=np.int64) for name in self.anchors}
        origin = np.arange(count)
        cpos: Grid = np.full((count, states), -1, dtype=np.int64)
        cpos[:, 0] = starts
        grids: dict[str, Grid] = {name: np.full((count, states), -1, dtype=np.int64) for name in self.grids}
        # with a cycle of tags, a row can go round it forever (CQP then loops or aborts): a row whose
        # positions repeat those of one of its last few steps is cycling, and ends with what it has
        give_up = (bound - starts + 2) * (states + 1) if self.looping else None
        history: list[Grid] = []
        step = 0
        while len(origin):
            self.deadline.check()
            rows_n = len(origin)
            new_cpos: Grid = np.full_like(cpos, -1)
            new_grids = {name: np.full_like(grid, -1) for name, grid in grids.items()}
            won = np.zeros(rows_n, dtype=np.bool_)
            live = np.flatnonzero((cpos >= 0).any(axis=0))
            for s in live.tolist():
                rows_s = np.flatnonzero(cpos[:, s] >= 0)
                if not self.longest:
                    rows_s = rows_s[~won[rows_s]]
                if len(rows_s) == 0:
                    continue
                c_s = cpos[rows_s, s]
                in_corpus = c_s < size
                ids: dict[str, npt.NDArray[np.int32]] = {}
                at_labels = None
                if self.reads:
                    at_labels = {name: grids[f"label:{name}"][rows_s, s] for name in self.labels}
                    at_labels["match"] = all_starts[origin[rows_s]]
                for symbol, target in self.dfa.transitions[s]:
                    if step == 0 and s == 0 and symbol != first:
                        continue  # the other initial transitions are passes of their own
                    keep = ~won[rows_s] if not self.longest else None
                    rows = rows_s if keep is None else rows_s[keep]
                    if len(rows) == 0:
                        break
                    c = c_s if keep is None else c_s[keep]
                    pattern = self.states[symbol]
                    tag = pattern.tag
                    zero_width = tag is not None
                    closing = tag is not None and tag.closing and tag.look is None
                    eff = c - 1 if closing else c
                    limit = bound[rows]
                    ok = (eff <= limit) | (eff == limit + 1) if tag is not None and tag.look is not None \
                        else eff <= limit
                    for name in self.strict:
                        rb = grids[f"region:{name}"][rows, s]
                        ok &= (rb < 0) | (eff <= rb)
                    if not (step == 0 and s == 0):
                        holds = self._holds(pattern, c_s, in_corpus, ids, at_labels if symbol in self.reads else None)
                        ok &= holds if keep is None else holds[keep]
                        if self.checks_region[symbol]:
                            assert tag is not None
                            rb = grids[f"region:{tag.attribute}"][rows, s]
                            ok &= (rb >= 0) & (eff == rb)
                    valid = np.flatnonzero(ok)
                    if len(valid) == 0:
                        continue
                    v, cv, effv = rows[valid], c[valid], eff[valid]
                    for name, grid in grids.items():
                        new_grids[name][v, target] = grid[v, s]
                    if pattern.label is not None and pattern.label in self.labels:
                        new_grids[f"label:{pattern.label}"][v, target] = effv
                    if pattern.anchor is not None:
                        new_grids[f"anchor:{pattern.anchor}"][v, target] = effv
                    if tag is not None and tag.look is None and tag.attribute in self.strict:
                        region = f"region:{tag.attribute}"
                        if not tag.closing:
                            new_grids[region][v, target] = self.tests.entered_ends(tag.attribute, effv)
                        elif self.checks_region[symbol]:
                            new_grids[region][v, target] = -1
                    go = v
                    if target in final:
                        matchend = cv - 1 if zero_width else cv
                        passed = self._passes(new_grids, v, target, all_starts[origin[v]], matchend)
                        w = v[passed]
                        end[origin[w]] = matchend[passed]
                        for name in self.anchors:
                            anchor_out[name][origin[w]] = new_grids[f"anchor:{name}"][w, target]
                        if not self.longest:
                            won[w] = True
                            go, cv = v[~passed], cv[~passed]
                    new_cpos[go, target] = cv if zero_width else cv + 1
            step += 1
            alive = (new_cpos >= 0).any(axis=1) & ~won
            alive &= ~(new_cpos == cpos).all(axis=1)  # CQP's "infinite loop": nothing changes any more
            if give_up is not None:
                alive &= step <= give_up[origin]
                for before in history:
                    alive &= ~(new_cpos == before).all(axis=1)
                history = [before[alive] for before in [cpos, *history][:states]]
            keep_rows = np.flatnonzero(alive)
            cpos = new_cpos[keep_rows]
            grids = {name: grid[keep_rows] for name, grid in new_grids.items()}
            origin, bound = origin[keep_rows], bound[keep_rows]
        done = end >= all_starts
        targets = anchor_out.get("target")
        keywords = anchor_out.get("keyword")
        return Matches(
            all_starts[done], end[done],
            targets[done] if targets is not None else np.full(int(done.sum()), -1, dtype=np.int64),
            keywords[done] if keywords is not None else None,
        )

    def _holds(self, pattern: State, cpos: Cpos, in_corpus: npt.NDArray[np.bool_],
               ids: dict[str, npt.NDArray[np.int32]], labels: dict[str, Cpos] | None) -> npt.NDArray[np.bool_]:
        """Whether the pattern holds at each row's position (a tag: at the boundary before it);
        ``labels``: each row's label positions in this state, for a pattern that reads labels."""
        if pattern.tag is not None:
            if labels is not None and pattern.tag.look is not None:  # a lookahead that reads labels
                result = np.zeros(len(cpos), dtype=np.bool_)
                inside = {name: values[in_corpus] for name, values in labels.items()}
                result[in_corpus] = self.tests.holds(pattern.tag.look, cpos[in_corpus], {}, inside)
                if not in_corpus.all():  # just past the last token: on the next partition's first
                    beyond = {name: values[~in_corpus] for name, values in labels.items()}
                    result[~in_corpus] = self.tests.past_end_labelled(pattern.tag.look, beyond)
                return result
            return self.tests.tag_holds(pattern.tag, cpos)
        assert pattern.predicate is not None
        if isinstance(pattern.predicate, Always):
            return in_corpus.copy()
        result = np.zeros(len(cpos), dtype=np.bool_)
        if labels is None:
            result[in_corpus] = self.tests.holds(pattern.predicate, cpos[in_corpus], ids)
        else:
            inside = {name: values[in_corpus] for name, values in labels.items()}
            result[in_corpus] = self.tests.holds(pattern.predicate, cpos[in_corpus], ids, inside)
        return result

    def _passes(
        self, grids: dict[str, Grid], rows: Cpos, state: int, match: Cpos, matchend: Cpos
    ) -> npt.NDArray[np.bool_]:
        """Whether the global constraint holds for ``rows`` arriving in final ``state``."""
        if self.constraint is None:
            return np.ones(len(rows), dtype=np.bool_)
        values: dict[str, Cpos] = {}
        for name in self.constraint.labels:
            grid = grids.get(f"label:{name}")
            values[name] = grid[rows, state] if grid is not None else np.full(len(rows), -1, dtype=np.int64)
        values["match"] = match
        values["matchend"] = matchend
        for name in ("target", "keyword"):
            grid = grids.get(f"anchor:{name}")
            values[name] = grid[rows, state] if grid is not None else np.full(len(rows), -1, dtype=np.int64)
        return self.constraint.holds(values)
