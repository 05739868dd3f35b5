"""Stage 3, simulate: all candidate starts of a pass stepped through the automaton together.

Each pass takes its candidate starts (``plan.py``) and finds, per start, the first (shortest) end
the automaton accepts — or, for the ``longest`` strategy, the last — within the start's boundary.
The passes are then merged, the matching strategy filters them (``strategy.py``), and ``cut`` and
``expand`` apply (``engine.py``).

A pass is vectorised: every candidate is a row of a boolean matrix ``active`` (rows x automaton
states); one step gathers the token at each row's cursor (a corpus position) and advances all
rows at once, rows that accept, die or pass their boundary drop out. What a row remembers per
state besides being active (labels, anchors, entered regions) is kept in ``Registers``.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import QueryTooExpensive
from cowbird.core.wire import DEFAULT_HARD_BOUNDARY
from cowbird.engines.base import Deadline
from cowbird.engines.native.compile import Always, Automaton, Lookup, Predicate, attributes
from cowbird.engines.native.constraint import ConstraintEvaluator
from cowbird.engines.native.corpus_state import NativeCorpus
from cowbird.engines.native.plan import Planner, SearchSpace, tag_order
from cowbird.engines.native.registers import Registers
from cowbird.engines.results import Cpos, Matches
from cowbird.store.compression import CACHE_BLOCKS

PARALLEL_ROWS = 200_000
"""Passes with at least this many candidate starts are split over two threads."""

ROW_STEP_SECONDS = 3e-8
STATE_STEP_SECONDS = 1.5e-9
"""What stepping one candidate one token costs at least, plus per automaton state (a fast
machine's figures, so that the estimate stays below the real cost)."""


AHEAD_ROWS = CACHE_BLOCKS // 2
"""Above this many rows, a step's gather on a compressed token stream reads ahead (``_Lookahead``)."""

AHEAD_IDS = 1 << 23
"""Ids a read-ahead holds at most (32 MB, and twice that of positions while it is read)."""

AHEAD_TOKENS = 32
"""Tokens a read-ahead reads per row at most."""


class _Lookahead:
    """The ids of the next tokens of every row of a pass, read a window of tokens at a time on a
    compressed token stream when more rows are stepped than its block cache holds: the rows of a
    step each read their own block, and stepping them one token at a time would decode every
    row's block again at every step (a window of W tokens decodes it once per W steps). Rows
    are stepped in lockstep (every cursor moves one token a step), so a window read at one step
    serves the next W - 1; ``origin`` numbers a row among the pass's starts (ascending, whatever
    rows drop out)."""

    def __init__(self, corpus: NativeCorpus, most: int | None = None) -> None:
        self.corpus = corpus
        self.most = AHEAD_TOKENS if most is None else max(1, most)
        """Tokens a row may still read at most (the pass's longest way): a window is no wider."""
        self.windows: dict[str, tuple[npt.NDArray[np.int32], Cpos, Cpos]] = {}

    def ids(self, attribute: str, cursor: Cpos, origin: Cpos) -> npt.NDArray[np.int32]:
        """The id of ``attribute`` at each cursor."""
        if len(cursor) <= AHEAD_ROWS or not self.corpus.p(attribute).compressed[0]:
            self.windows.pop(attribute, None)
            return self.corpus.ids(attribute, cursor)
        held = self.windows.get(attribute)
        if held is not None:
            window, read_origin, read_at = held
            at = np.searchsorted(read_origin, origin)  # rows only drop out: each is still in the window
            offset = cursor - read_at[at]
            if len(offset) and offset.min() >= 0 and offset.max() < window.shape[1]:
                return np.asarray(window[at, offset], dtype=np.int32)
        width = max(1, min(AHEAD_TOKENS, self.most, AHEAD_IDS // len(cursor)))
        positions = np.minimum(cursor[:, None] + np.arange(width), self.corpus.size - 1)
        window = self.corpus.ids(attribute, positions)  # row after row: each row's blocks decoded once
        self.windows[attribute] = (window, origin.copy(), cursor.copy())
        return window[:, 0]


class _Gathered:
    """The ids of one step, read once per attribute however many states test it."""

    def __init__(self, ahead: _Lookahead, cursor: Cpos, origin: Cpos) -> None:
        self.ahead = ahead
        self.cursor = cursor
        self.origin = origin
        self.read: dict[str, npt.NDArray[np.int32]] = {}

    def ids(self, attribute: str) -> npt.NDArray[np.int32]:
        if attribute not in self.read:
            self.read[attribute] = self.ahead.ids(attribute, self.cursor, self.origin)
        return self.read[attribute]


class WorkBudget:
    """The time a query's certain work may take (see ``EngineOptions.work_seconds``)."""

    def __init__(self, seconds: float | None, corpus_size: int) -> None:
        self.seconds = seconds
        self.corpus_size = corpus_size
        self.spent = 0.0
        self._lock = threading.Lock()  # ranges of one query are charged from several threads

    def spend(self, seconds: float, done: int) -> None:
        """Add the estimate for the next candidates; refuse the query when what it will have spent
        by the end of the corpus (``done`` of its positions planned so far) passes the budget."""
        with self._lock:
            self.spent += seconds
            spent = self.spent
        if self.seconds is None:
            return
        projected = spent * self.corpus_size / max(done, 1)
        if projected > self.seconds:
            raise QueryTooExpensive(
                f"this query would take at least {projected:,.0f} s (the limit is {self.seconds:g} s): its "
                "candidates must be stepped through many tokens whatever they hold — make the repeated [] "
                "shorter, start with a rarer token, or add 'within s'"
            )


@dataclass(frozen=True)
class RunSetup:
    """What either simulation is given besides its automaton: the corpus, the global constraint,
    where matches may lie (``within``, ``hard_boundary``), the strategy's one question (``longest``)
    and what the run may spend (threads, deadline, work budget).

    A global constraint that reads only ``match`` (``:: match.text_genre="email"``) is the same on
    every transition into a final state from one start: CQP's rule (tested on each) then either
    keeps every match of that start or none. Such a constraint is ``start_constraint``: the
    candidate starts that fail it are dropped before any stepping, and the simulation runs as
    without a constraint (with its fast paths) — the same matches, per start and after the
    strategy, as testing it on every final transition, and ``cut`` counts the same starts."""

    corpus: NativeCorpus
    constraint: ConstraintEvaluator | None
    within: SearchSpace
    longest: bool
    hard_boundary: int = DEFAULT_HARD_BOUNDARY
    threads: int = 2
    deadline: Deadline | None = None
    work: WorkBudget | None = None
    start_constraint: ConstraintEvaluator | None = None

    @classmethod
    def split(cls, constraint: ConstraintEvaluator | None) -> tuple[ConstraintEvaluator | None,
                                                                     ConstraintEvaluator | None]:
        """``constraint`` as (the one tested on final transitions, the one tested on starts)."""
        if constraint is not None and constraint.labels == ["match"]:
            return None, constraint
        return constraint, None


class PassesBase:
    """What both simulations share: a query's passes (one per way a match can start), each run
    over its candidate starts, split over two threads when there are many, or chunk by chunk for
    ``cut``; and the work estimate charged before a pass runs."""

    plan: Planner
    state_count: int

    def __init__(self, setup: RunSetup) -> None:
        self.corpus = setup.corpus
        self.constraint = setup.constraint
        self.start_constraint = setup.start_constraint
        self.longest = setup.longest
        self.threads = setup.threads
        self.deadline = setup.deadline or Deadline()
        self.work = setup.work

    def _simulate(self, first: int, starts: Cpos, bound: Cpos) -> Matches:
        raise NotImplementedError

    def _direct(self, first: int, candidates: Cpos) -> Matches | None:
        """The matches of these candidates without stepping them, where the plan already knows
        them (``PassRunner``: a pass that is one fixed chain); None where it does not."""
        return None

    def run(self, first: int, limit: int | None = None, lo: int = 0, hi: int | None = None) -> Matches:
        """All matches of the pass starting with ``first`` whose start is in ``[lo, hi)``; with
        ``limit``, those of its first ``limit`` successful starts only (CQP's ``cut``), evaluating
        candidates chunk by chunk."""
        candidates = self.plan.candidates(first, lo, hi)
        if self.start_constraint is not None and len(candidates):
            candidates = candidates[self.start_constraint.holds({"match": candidates})]
        direct = self._direct(first, candidates)  # no stepping: nothing to charge the budget for
        if direct is not None:
            return direct if limit is None else direct.take(slice(0, limit))
        starts, bound = self.plan.boundaries(candidates)
        if self.work is not None:
            self._estimate(first, starts, bound, self.corpus.size if hi is None else hi)
        if limit is None:
            if self.threads > 1 and len(starts) >= PARALLEL_ROWS and self.plan.consumes_after(first):
                # numpy releases the GIL in its array work: halves of the candidates run on both cores
                cut = len(starts) // 2
                halves = [(starts[:cut], bound[:cut]), (starts[cut:], bound[cut:])]
                with ThreadPoolExecutor(2) as pool:
                    return Matches.concatenate(list(pool.map(lambda half: self._simulate(first, *half), halves)))
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
        return Matches.concatenate(found)

    def _estimate(self, first: int, starts: Cpos, bound: Cpos, done: int) -> None:
        """Charge the work budget for the tokens these candidates will surely be stepped through."""
        assert self.work is not None
        steps = self.plan.certain_steps(first)
        if len(starts) == 0 or steps == 1:
            return
        room = bound - starts + 1
        certain = float((room if steps is None else np.minimum(room, steps)).sum())
        self.work.spend(certain * (ROW_STEP_SECONDS + STATE_STEP_SECONDS * self.state_count), done)



class PassRunner(PassesBase):
    """Runs the passes of one query over one corpus."""

    def __init__(self, setup: RunSetup, automaton: Automaton) -> None:
        super().__init__(setup)
        self.automaton = automaton
        self.plan = Planner(setup.corpus, automaton, setup.within, setup.hard_boundary)
        self.state_count = len(automaton.states)
        self.tests = self.plan.tests
        self.sources = self.plan.sources
        self.final = sorted(automaton.final)
        self.final_set = set(automaton.final)
        self.tracked = sorted(set(self.constraint.labels if self.constraint else ()) & set(automaton.labels))
        # CQP's StrictRegions: with both <s> and </s> in the query, a match that entered a region
        # at <s> must not leave it before </s>, and </s> must close that very region
        tags = [p.tag for p in automaton.states if p.tag is not None and p.tag.look is None]
        opened = {t.attribute for t in tags if not t.closing}
        self.strict = sorted(opened & {t.attribute for t in tags if t.closing})
        self.anchors = sorted({p.anchor for p in automaton.states if p.anchor is not None})
        self.tag_order, self.tag_cycle = tag_order(automaton, self.sources)
        self._shapes: dict[int, tuple[tuple[int, int, dict[str, int]] | None, _Gap | None]] = {}
        """Per pass, its fixed chain (``_fixed_chain``) or else its chain and gap (``_gap``), found once.
        One entry, set whole: the engine runs a pass's ranges on several threads at once."""

    @property
    def passes(self) -> list[int]:
        """The first state of each pass."""
        return self.automaton.first

    def _direct(self, first: int, candidates: Cpos) -> Matches | None:
        """A pass whose every match runs through one fixed chain of states to a final one (``[pos="JJ"]
        [pos="NN"]``, ``<s> [pos="UH"]``, ``[lemma="go"] [] @[word="to"]``) has no choices left once
        its candidates passed the chain's tests (``Planner.candidates``): each candidate that fits
        its boundary is a match of the chain's length, its anchors at their offsets. A chain, a gap
        of ``[]`` and a last test is answered by ``_join``. What stepping would give, without
        stepping: not with a global constraint or StrictRegions (they read what a row went
        through), nor, under ``longest``, when the match may go on."""
        shape = self._shapes.get(first)
        if shape is None:
            chain = self._fixed_chain(first)
            shape = self._shapes[first] = (chain, self._gap(first) if chain is None else None)
        fixed, gap = shape
        if fixed is None:
            if gap is None:
                return None
            starts, bound = self.plan.boundaries(candidates)
            return Matches.empty() if len(starts) == 0 else self._join(gap, starts, bound)
        length, reach, anchors = fixed
        within = self.plan.within
        if within.attribute is None:
            # the boundary is min(start + R, the corpus's last position): reach fits it where reach <= R
            # and start + reach is in the corpus (the candidates' tests hold, so it mostly is)
            room = self.plan.hard_boundary if within.tokens is None else within.tokens
            last = self.corpus.size - 1 - reach
            if reach > room:
                return Matches.empty()
            if len(candidates) == 0 or candidates[-1] <= last:
                match = candidates
            else:
                match = candidates[candidates <= last]
        else:
            starts, bound = self.plan.boundaries(candidates)
            keep = starts + reach <= bound
            match = starts[keep] if not keep.all() else starts
        if len(match) == 0:
            return Matches.empty()
        unset = np.full(len(match), -1, dtype=np.int64)
        target = match + anchors["target"] if "target" in anchors else unset
        keyword = None
        if "keyword" in self.anchors:
            keyword = match + anchors["keyword"] if "keyword" in anchors else unset.copy()
        return Matches(match, match + (length - 1), target, keyword)

    def _join(self, gap: _Gap, starts: Cpos, bound: Cpos) -> Matches:
        """The matches of a fixed chain, a gap of ``[]`` and a last token test (``[lemma="go"] []*
        [word="to"]``): per start, the first position (the last, under ``longest``) in its window where
        the last test holds, found among that test's positions by binary search instead of stepping
        every row through the gap token by token (where the window is one position, tested there)."""
        lowest = starts + gap.prefix + gap.shortest
        highest = bound if gap.longest is None else np.minimum(bound, starts + gap.prefix + gap.longest)
        if gap.longest == gap.shortest:  # one place for the last test (([pos="JJ"] | [pos="RB"]) [pos="NN"])
            found = lowest <= highest
            found[found] = self.plan.tests.holds(gap.last, lowest[found], {})
            end = lowest
        else:
            found, end = self._search(gap, lowest, highest)
        match, end = starts[found], end[found]
        unset = np.full(len(match), -1, dtype=np.int64)
        anchors = {name: match + offset for name, offset in gap.anchors.items()}
        if gap.last_anchor is not None:
            anchors[gap.last_anchor] = end
        keyword = anchors.get("keyword", unset.copy()) if "keyword" in self.anchors else None
        return Matches(match, end, anchors.get("target", unset), keyword)

    def _search(self, gap: _Gap, lowest: Cpos, highest: Cpos) -> tuple[npt.NDArray[np.bool_], Cpos]:
        """Per window ``[lowest, highest]``, whether the last test holds in it and where first (last,
        under ``longest``), by binary search among the positions where it holds."""
        ends = self.plan.tests.cpos_where(gap.last, int(lowest.min()), int(highest.max()) + 1)
        if self.longest:
            at = np.searchsorted(ends, highest, side="right") - 1
            found = at >= 0
            end = ends[np.maximum(at, 0)] if len(ends) else np.zeros(len(lowest), dtype=np.int64)
            found &= end >= lowest
        else:
            at = np.searchsorted(ends, lowest, side="left")
            found = at < len(ends)
            end = ends[np.minimum(at, len(ends) - 1)] if len(ends) else np.zeros(len(lowest), dtype=np.int64)
            found &= end <= highest
        return found, end

    def _gap(self, first: int) -> _Gap | None:
        """A pass that is a fixed chain, then only ``[]`` tokens (a gap of some lengths), then one token
        test that ends the match: the shape of ``_join``. None for any other pass (or a gap whose
        lengths are not one interval, or states that carry labels or anchors inside the gap)."""
        if self.constraint is not None or self.strict:
            return None
        states, follow = self.automaton.states, self.automaton.follow
        chain = self.plan.chain(first)
        head = chain[-1][0]
        if head in self.final_set or not states[head].is_token:
            return None

        def free(j: int) -> bool:
            state = states[j]
            return isinstance(state.predicate, Always) and j not in self.final_set and state.anchor is None

        exits: set[int] = set()
        lengths: list[int] = []  # the gap lengths after which the last test may follow
        frontier: set[int] = {head}
        seen: list[set[int]] = []
        while frontier and frontier not in seen and len(seen) <= len(states):
            seen.append(frontier)
            nxt = {k for j in frontier for k in follow[j] if free(k)}
            leaving = {k for j in frontier for k in follow[j] if not free(k)}
            if leaving:
                exits |= leaving
                lengths.append(len(seen) - 1)
            frontier = nxt
        if len(exits) != 1 or not lengths:
            return None
        (last,) = exits
        state = states[last]
        if (last not in self.final_set or state.predicate is None or isinstance(state.predicate, Always)
                or state.label is not None or (self.longest and follow[last])):
            return None
        endless = bool(frontier)  # the gap loops back to a set of states it was in before
        if endless and (frontier not in seen or any(n not in lengths for n in range(seen.index(frontier), len(seen)))):
            return None  # no repetition found, or not every length in the loop leads on: not one interval
        if lengths != list(range(lengths[0], lengths[-1] + 1)):
            return None
        prefix = chain[-1][1] + 1
        anchors = {name: offset for index, offset in chain if (name := states[index].anchor) is not None}
        return _Gap(prefix, lengths[0], None if endless else lengths[-1], state.predicate, anchors, state.anchor)

    def _fixed_chain(self, first: int) -> tuple[int, int, dict[str, int]] | None:
        """For a pass that is one fixed chain: its length in tokens, how far past its start the
        boundary must reach (a token consumed at offset o needs o; a tag looked at there needs o,
        or o - 1 for a closing tag and a lookahead), and the offset of each anchor on it."""
        if self.constraint is not None or self.strict:
            return None
        chain = self.plan.chain(first)
        last = chain[-1][0]
        if last not in self.final_set or (self.longest and self.automaton.follow[last]):
            return None
        states = self.automaton.states
        length = chain[-1][1] + (1 if states[last].is_token else 0)
        if length == 0:
            return None  # only tags: an empty match, which CQP drops (the simulation says so)
        if self.plan.opens and any(offset == length and (tag := states[index].tag) is not None
                                   and not tag.closing and tag.look is None for index, offset in chain):
            return None  # an opening tag after the last token may be read past the cut: the simulation does
        reach = 0
        anchors: dict[str, int] = {}
        for index, offset in chain:
            tag = states[index].tag
            reach = max(reach, offset - (1 if tag is not None and (tag.closing or tag.look is not None) else 0))
            if (name := states[index].anchor) is not None:
                anchors[name] = offset
        return length, reach, anchors

    def _simulate(self, first: int, starts: Cpos, bound: Cpos) -> Matches:
        """Step the candidates of the pass that begins with state ``first`` (one row per start)
        until each row accepts, dies, or passes its ``bound``."""
        head = self.automaton.states[first]
        if head.tag is not None:
            # a closing tag at the start looks at the token before: it too must be in bounds
            effective = starts - 1 if head.tag.closing else starts
            # a lookahead may look at the token just past the boundary, as in CQP
            keep = effective <= bound + (1 if head.tag.look is not None else 0)
            starts, bound = starts[keep], bound[keep]
        if len(starts) == 0:
            return Matches.empty()
        bound = self.plan.past_the_cut(starts, bound)  # an opening tag may be read just past the cut
        size = self.corpus.size
        active, registers = self._begin(first, starts)
        cursor = starts + 1 if head.is_token else starts.copy()
        accepts = _Accepts(starts, self.longest, self.anchors)
        origin = np.arange(len(starts))  # each row's index among the pass's starts
        ahead = _Lookahead(self.corpus, self.plan.most_steps(first))
        while True:
            self.deadline.check()
            self._closure(active, registers, cursor, bound)
            accepted, accepted_anchors, empty = self._accepting(active, registers, starts, cursor)
            accepts.add(origin, starts, cursor, accepted, accepted_anchors)
            alive = active.any(axis=1)
            if not self.longest:
                # the first (shortest) accept of a row is its match; a first accept before any token
                # (<s> []? at a sentence start) ends the start too, and CQP drops the empty match
                alive &= ~accepted & ~empty
            alive &= cursor <= bound
            if self.plan.opens:
                alive &= cursor < size  # the next partition's first token is read by tags, never consumed
            if not alive.all():
                survivors = np.flatnonzero(alive)
                active, starts, bound = active[survivors], starts[survivors], bound[survivors]
                cursor, origin = cursor[survivors], origin[survivors]
                registers = registers.select(survivors)
            if len(starts) == 0:
                break
            active, registers = self._step(active, registers, cursor, ahead, origin, starts)
            cursor = cursor + 1
        return accepts.matches()

    def _begin(self, first: int, starts: Cpos) -> tuple[npt.NDArray[np.bool_], Registers]:
        """Every row in state ``first``, its label, anchor or entered region set at its start."""
        states = self.automaton.states
        head = states[first]
        active = np.zeros((len(starts), len(states)), dtype=np.bool_)
        active[:, first] = True
        registers = Registers.unset(len(starts), len(states), self.tracked, self.anchors, self.strict)
        registers.record(head.label, head.anchor, first, slice(None), starts)
        if head.tag is not None and not head.tag.closing and head.tag.attribute in registers.region_ends:
            regions = self.corpus.regions(head.tag.attribute)
            registers.region_ends[head.tag.attribute][:, first] = regions.ends[regions.starting_at(starts)]
        return active, registers

    def _step(
        self, active: npt.NDArray[np.bool_], registers: Registers, cursor: Cpos, ahead: _Lookahead, origin: Cpos,
        starts: Cpos,
    ) -> tuple[npt.NDArray[np.bool_], Registers]:
        """Consume the token at ``cursor`` in every row (``origin``: each row's number in ``ahead``)."""
        active = registers.inside_regions(active, cursor)  # in a region entered at <s>, no token beyond its end
        new_active = np.zeros_like(active)
        new = registers.cleared()
        gathered = _Gathered(ahead, cursor, origin)
        rows_all = np.arange(len(cursor))
        live = _live(active)
        for j, state in enumerate(self.automaton.states):
            if state.predicate is None or not live.intersection(self.sources[j]):
                continue  # tags are followed in _closure; a state no active state leads to stays off
            reach = self._reach(active, j, live)
            if not reach.any():
                continue
            ok = self._matching_rows(state.predicate, rows_all[reach], cursor, gathered)
            new_active[ok, j] = True
            if self.constraint is not None and j in self.final_set and len(self.sources[j]) > 1:
                self._propagate_passing(registers, new, active, j, ok, cursor, starts)
            else:
                registers.propagate(new, active, self.sources[j], j, ok)
            new.record(state.label, state.anchor, j, ok, cursor)
        return new_active, new

    def _propagate_passing(
        self, registers: Registers, new: Registers, active: npt.NDArray[np.bool_], j: int, ok: Cpos, cursor: Cpos,
        starts: Cpos,
    ) -> None:
        """Into a final state, the values of the first path (source, in order) whose labels pass the
        global constraint: CQP tests the constraint on every transition into a final state, so any
        such path makes the match (the first path's values where none passes)."""
        assert self.constraint is not None
        state = self.automaton.states[j]
        chosen = np.full(len(ok), -1, dtype=np.int64)  # per row of ok: the index of the chosen source
        for k, source in enumerate(self.sources[j]):
            todo = np.flatnonzero((chosen < 0) & active[ok, source])
            if len(todo) == 0:
                continue
            rows = ok[todo]
            values = {name: grid[rows, source] for name, grid in registers.labels.items()}
            for name in self.constraint.labels:
                values.setdefault(name, np.full(len(rows), -1, dtype=np.int64))
            if state.label is not None and state.label in values:
                values[state.label] = cursor[rows]
            values["match"] = starts[rows]
            values["matchend"] = cursor[rows]
            for name in ("target", "keyword"):
                grid = registers.anchors.get(name)
                values[name] = grid[rows, source] if grid is not None else np.full(len(rows), -1)
                if state.anchor == name:
                    values[name] = cursor[rows]
            chosen[todo[self.constraint.holds(values)]] = k
        first = np.full(len(ok), len(self.sources[j]), dtype=np.int64)
        for k, source in reversed(list(enumerate(self.sources[j]))):
            first[active[ok, source]] = k
        chosen = np.where(chosen >= 0, chosen, first)
        for k, source in enumerate(self.sources[j]):
            registers.propagate(new, active, [source], j, ok[chosen == k])

    def _matching_rows(self, predicate: Predicate, rows: Cpos, cursor: Cpos, gathered: _Gathered) -> Cpos:
        """The ``rows`` whose token at ``cursor`` satisfies ``predicate``."""
        if isinstance(predicate, Always):
            return rows
        if isinstance(predicate, Lookup) and self.corpus.prefers_index(predicate.attribute, predicate.count, len(rows)):
            # a compressed stream: the positions where the test holds, from the index, beat a gather
            return rows[self.tests.holds(predicate, cursor[rows], {})]
        # one gather per attribute and step (over all rows), shared by every state that tests it
        ids = {}
        for attribute in attributes(predicate):
            ids[attribute] = gathered.ids(attribute)[rows]
        return rows[self.tests.holds(predicate, cursor[rows], ids)]

    def _reach(self, active: npt.NDArray[np.bool_], j: int, live: set[int]) -> npt.NDArray[np.bool_]:
        """Rows with an active state from which state ``j`` may follow. Only the ``live`` sources (active
        in some row) are read: in a wide repetition a state has hundreds of sources and each row is in a
        few of them, and gathering every source's column was half of such a query's time."""
        columns = [source for source in self.sources[j] if source in live]
        if len(columns) == 1:
            return active[:, columns[0]].copy()
        return np.asarray(active[:, columns].any(axis=1), dtype=np.bool_)

    def _closure(self, active: npt.NDArray[np.bool_], registers: Registers, cursor: Cpos, bound: Cpos) -> None:
        """Follow zero-width tags at each row's cursor (in place)."""
        while self._sweep(active, registers, cursor, bound) and self.tag_cycle:
            pass

    def _sweep(self, active: npt.NDArray[np.bool_], registers: Registers, cursor: Cpos, bound: Cpos) -> bool:
        """One pass over the tag states in order; whether it reached a state a row was not in."""
        grew = False
        live = _live(active) if self.tag_order else set()
        for j in self.tag_order:
            tag = self.automaton.states[j].tag
            assert tag is not None
            if not live.intersection(self.sources[j]):
                continue
            reach = self._reach(active, j, live)
            if not reach.any():
                continue
            rows = np.flatnonzero(reach)
            effective = cursor[rows] - 1 if tag.closing else cursor[rows]
            rows = rows[effective <= bound[rows] + (1 if tag.look is not None else 0)]
            sources = active
            if registers.region_ends:
                # StrictRegions: a tag may only follow states whose entered regions it stays in
                closing = tag.attribute if tag.closing else None
                sources = registers.inside_regions(active, cursor - 1 if tag.closing else cursor, closing)
                rows = rows[sources[rows][:, self.sources[j]].any(axis=1)]
            ok = rows[self.tests.tag_holds(tag, cursor[rows])]
            grew = grew or bool((~active[ok, j]).any())
            active[ok, j] = True
            if len(ok):
                live.add(j)  # a tag followed here can lead on to later tags at the same cpos
            registers.propagate(registers, sources, self.sources[j], j, ok)
            state = self.automaton.states[j]
            registers.record(state.label, state.anchor, j, ok, cursor)  # a lookahead may carry them
            if tag.attribute in registers.region_ends:
                ends = registers.region_ends[tag.attribute]
                if tag.closing:
                    ends[ok, j] = -1  # the region is closed: nothing left to stay inside
                else:
                    ends[ok, j] = self.tests.entered_ends(tag.attribute, cursor[ok])
        return grew

    def _accepting(
        self, active: npt.NDArray[np.bool_], registers: Registers, starts: Cpos, cursor: Cpos
    ) -> tuple[npt.NDArray[np.bool_], dict[str, Cpos], npt.NDArray[np.bool_]]:
        """Rows whose active states include a final one (that passes the global constraint), each
        anchor the query marks (target, keyword) for each such row, -1 where unset, and the rows
        that reached a final state before consuming any token (an empty match, which CQP drops)."""
        ends = cursor - 1
        accepted = np.zeros(len(cursor), dtype=np.bool_)
        chosen = {name: np.full(len(cursor), -1, dtype=np.int64) for name in registers.anchors}
        valid = ends >= starts  # a match must contain at least one token
        live = _live(active)
        for f in self.final:
            if f not in live:
                continue
            rows = np.flatnonzero(active[:, f] & ~accepted)
            if len(rows) == 0:
                continue
            if self.constraint is not None:
                values = {name: grid[rows, f] for name, grid in registers.labels.items()}
                for name in self.constraint.labels:  # a label on no state (a:[]{0}) is never set
                    values.setdefault(name, np.full(len(rows), -1, dtype=np.int64))
                values["match"] = starts[rows]
                values["matchend"] = ends[rows]
                for name in ("target", "keyword"):
                    grid = registers.anchors.get(name)
                    values[name] = grid[rows, f] if grid is not None else np.full(len(rows), -1)
                rows = rows[self.constraint.holds(values)]
            accepted[rows] = True
            for name, grid in registers.anchors.items():
                chosen[name][rows] = grid[rows, f]
        return accepted & valid, chosen, accepted & ~valid


@dataclass(frozen=True)
class _Gap:
    """A pass of the shape ``_join`` answers: ``prefix`` tokens of fixed chain (its anchors at their
    offsets), then ``shortest`` to ``longest`` (None: unbounded) tokens of ``[]``, then the ``last``
    token test, whose anchor (if any) is the match's end."""

    prefix: int
    shortest: int
    longest: int | None
    last: Predicate
    anchors: dict[str, int]
    last_anchor: str | None


def _live(active: npt.NDArray[np.bool_]) -> set[int]:
    """The states active in some row: only states they lead to need looking at (in a long
    repetition such as ``[]{500}`` every row is in one state of 500 at each step)."""
    return set(np.flatnonzero(active.any(axis=0)).tolist())


class _Accepts:
    """The matches one simulation found: each row's first accept, or, for the ``longest``
    strategy, each row's last accept (rows keep running after accepting), with the ``anchors``
    (target, keyword) the query marks."""

    def __init__(self, starts: Cpos, longest: bool, anchors: list[str]) -> None:
        self.starts = starts  # by origin row; never modified in place
        self.longest = longest
        self.anchors = anchors
        self.last_end = np.full(len(starts) if longest else 0, -1, dtype=np.int64)
        self.last_anchor = {name: np.full(len(starts) if longest else 0, -1, dtype=np.int64) for name in anchors}
        self.found_start: list[Cpos] = []
        self.found_end: list[Cpos] = []
        self.found_anchor: dict[str, list[Cpos]] = {name: [] for name in anchors}

    def add(
        self, origin: Cpos, starts: Cpos, cursor: Cpos, accepted: npt.NDArray[np.bool_], anchors: dict[str, Cpos]
    ) -> None:
        """Rows ``accepted`` at this step end just before their ``cursor``."""
        if self.longest:
            self.last_end[origin[accepted]] = cursor[accepted] - 1
            for name in self.anchors:
                self.last_anchor[name][origin[accepted]] = anchors[name][accepted]
        elif accepted.any():
            self.found_start.append(starts[accepted])
            self.found_end.append(cursor[accepted] - 1)
            for name in self.anchors:
                self.found_anchor[name].append(anchors[name][accepted])

    def matches(self) -> Matches:
        if self.longest:
            done = self.last_end >= 0
            match, end = self.starts[done], self.last_end[done]
            anchors = {name: values[done] for name, values in self.last_anchor.items()}
        elif not self.found_start:
            return Matches.empty()
        else:
            match, end = np.concatenate(self.found_start), np.concatenate(self.found_end)
            anchors = {name: np.concatenate(values) for name, values in self.found_anchor.items()}
        target = anchors.get("target")
        unset = np.full(len(match), -1, dtype=np.int64)
        return Matches(match, end, target if target is not None else unset, anchors.get("keyword"))
