"""CQP's own automaton: the query as a regular expression over its patterns, made deterministic.

CQP numbers the token patterns, tags and lookaheads of a query in the order they are written
(repetitions reuse the number: ``[]{2}`` is pattern 0 twice), writes the query as a regular
expression over those numbers (``tree.c``, ``evaltree2searchstr``: ``x{1,3}`` becomes
``x [x [x]]``), and turns that into a DFA with the derivative construction of ``regex2dfa.c``
(Mark Hopkins' converter: equations over hash-consed expressions, one state per set of
derivatives, then equivalent states merged). Its simulation (``eval.c``, ``simulate``) keeps
*one* corpus position and one set of labels per DFA state, visits states and their transitions
in number order, and lets a later transition into a state overwrite what an earlier one wrote —
so which path's labels, anchors and end survive depends on the numbering. To answer as CQP does
where paths meet (tags inside alternatives, labels and anchors in loops), the native engine
builds the same DFA with the same numbers: this module is a faithful port of ``regex2dfa.c``
(the C file's names are kept in comments), checked against CQP's ``ShowCompDFA`` output by the
differential tests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from cowbird.query import (
    Alternation,
    And,
    Condition,
    LabelComparison,
    Not,
    Or,
    Pattern,
    Repetition,
    Sequence,
    StructuralTag,
    TokenPattern,
)

STACK_MAX = 200
"""regex2dfa.c's parser stack: a deeper expression is "too complex" (CQP exits)."""

MAX_DFA_STATES = 4000
"""States the construction may create before it gives up (the native automaton answers then)."""


class DfaUnavailable(Exception):
    """The query has no CQP automaton: CQP refuses it ("Corrupt expression", "Expression too
    complex"), or it would be larger than ``MAX_DFA_STATES``."""


Leaf = TokenPattern | StructuralTag


def leaves(pattern: Pattern) -> list[Leaf]:
    """The query's patterns in CQP's numbering: in the order they are written, each once."""
    if isinstance(pattern, TokenPattern | StructuralTag):
        return [pattern]
    if isinstance(pattern, Sequence):
        return [leaf for item in pattern.items for leaf in leaves(item)]
    if isinstance(pattern, Alternation):
        return [leaf for option in pattern.options for leaf in leaves(option)]
    if isinstance(pattern, Repetition):
        return leaves(pattern.item)
    raise TypeError(pattern)


def search_string(pattern: Pattern) -> str:
    """The regular expression CQP builds for a pattern (``evaltree2searchstr``)."""
    counter = iter(range(1 << 30))
    numbers: dict[int, int] = {}

    def number(leaf: Leaf) -> int:
        if id(leaf) not in numbers:
            numbers[id(leaf)] = next(counter)
        return numbers[id(leaf)]

    for leaf in leaves(pattern):  # number every leaf in text order, {0} ones included
        number(leaf)

    def text(node: Pattern) -> str:
        if isinstance(node, TokenPattern | StructuralTag):
            return f' "{number(node)}" '
        if isinstance(node, Sequence):
            result = text(node.items[0])
            for item in node.items[1:]:
                result = f"{result} {text(item)}"
            return result
        if isinstance(node, Alternation):
            if len(node.options) == 1:
                return text(node.options[0])
            result = text(node.options[0])
            for option in node.options[1:]:  # CQP's disjunction is left-associative
                result = f"( {result} | {text(option)} )"
            return result
        if isinstance(node, Repetition):
            inner = text(node.item)
            low, high = node.min, node.max
            if low == 0 and high is None:
                return f"( {inner} )*"
            if low == 1 and high is None:
                return f"( {inner} )+"
            if low == 0 and high == 1:
                return f"[ {inner} ]"
            result = "".join(f"{inner} " for _ in range(low))
            if high is None:
                return f"{result}( {inner} )*"
            remain = high - low
            return result + "".join(f"[{inner} " for _ in range(remain)) + "]" * remain
        raise TypeError(node)

    return text(pattern)


@dataclass(frozen=True)
class Dfa:
    """``transitions[state]``: (pattern number, next state) in pattern order; state 0 starts."""

    transitions: tuple[tuple[tuple[int, int], ...], ...]
    final: frozenset[int]
    patterns: int

    @property
    def states(self) -> int:
        return len(self.transitions)

    def describe(self) -> str:
        """The automaton as CQP's ``ShowCompDFA`` writes it (``s1 = 1 s2 | 2 s2``, ``s3 = fin``)."""
        lines = []
        for state, moves in enumerate(self.transitions):
            line = f"s{state} ="
            if state in self.final:
                line += " fin" + (" |" if moves else "")
            for i, (symbol, target) in enumerate(sorted(moves, key=lambda move: str(move[0]))):
                line += (" |" if i else "") + f" {symbol} s{target}"
            lines.append(line)
        return "\n".join(lines)


def build_dfa(pattern: Pattern) -> Dfa:
    """CQP's DFA for a pattern (raises ``DfaUnavailable`` where CQP has none)."""
    count = len(leaves(pattern))
    return _Converter(search_string(pattern)).dfa(count)


# ---------------------------------------------------------------------------- the port


class _Lex(IntEnum):
    END, COMMA, RPAR, RBR, EQUAL, BAR, ZERO, ONE, IDEN, LPAR, LBR, PLUS, STAR = range(13)


class _Stack(IntEnum):
    RULE, EQU, PAR, OPT, OR, AND = range(6)


_ACTION = {  # columns in _Lex order: $ , ) ] = | 0 1 x ( [ + *
    _Stack.RULE: ".ABCH|&&&&&+*",
    _Stack.EQU: "I=BCH|&&&&&+*",
    _Stack.PAR: "DD)FH|&&&&&+*",
    _Stack.OPT: "EEG]H|&&&&&+*",
    _Stack.OR: "vvvvv|&&&&&+*",
    _Stack.AND: "xxxxxx&&&&&+*",
}


class _Tag(IntEnum):
    SYM, ZERO, ONE, AND, OR, STAR, PLUS, OPT = range(8)


@dataclass(eq=False)
class _Exp:
    tag: _Tag
    args: tuple[int, ...] = ()
    leaf: str = ""
    cls: int = -1


@dataclass(eq=False)
class _State:
    slist: tuple[int, ...]
    cls: int
    empty: bool = False
    shifts: list[tuple[str, int]] = field(default_factory=list)


class _Converter:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.last_word = ""
        self.hashed: dict[tuple[_Tag, tuple[int, ...], str], _Exp] = {}  # ExpHash
        self.equations: list[_Exp] = []  # EquTab[].Value
        self.stacked: list[bool] = []  # EquTab[].Stack
        self.states: list[_State] = []  # STab
        self.state_of: dict[tuple[int, ...], int] = {}

    # -- the scanner (LEX)

    def _lex(self) -> _Lex:
        text, n = self.text, len(self.text)
        while self.pos < n and text[self.pos].isspace():
            self.pos += 1
        if self.pos >= n:
            return _Lex.END
        ch = text[self.pos]
        self.pos += 1
        simple = {"|": _Lex.BAR, "(": _Lex.LPAR, ")": _Lex.RPAR, "[": _Lex.LBR, "]": _Lex.RBR, "0": _Lex.ZERO,
                  "1": _Lex.ONE, "*": _Lex.STAR, "+": _Lex.PLUS, "=": _Lex.EQUAL, ",": _Lex.COMMA}
        if ch in simple:
            return simple[ch]
        if ch == '"':
            end = text.find('"', self.pos)
            if end < 0:
                raise DfaUnavailable('missing closing "')
            self.last_word, self.pos = text[self.pos:end], end + 1
            return _Lex.IDEN
        if ch.isalpha() or ch in "_$":
            start = self.pos - 1
            while self.pos < n and (text[self.pos].isalnum() or text[self.pos] in "_$"):
                self.pos += 1
            self.last_word = text[start:self.pos]
            return _Lex.IDEN
        raise DfaUnavailable(f"extra character {ch}")

    # -- hash-consed expressions (MakeExp)

    def _make(self, q: int, tag: _Tag, *args: int, leaf: str = "") -> int:
        key = (tag, args, leaf)
        found = self.hashed.get(key)
        if found is not None:
            if q != -1 and q != found.cls:
                self.equations[q] = found
            return found.cls
        exp = _Exp(tag, args, leaf)
        self.hashed[key] = exp
        if q == -1:
            q = len(self.equations)
            self.equations.append(exp)
            self.stacked.append(False)
            if q > 50 * MAX_DFA_STATES:
                raise DfaUnavailable("the query's automaton would be too large")
        else:
            self.equations[q] = exp
        exp.cls = q
        return q

    # -- the parser (Parse)

    def _parse(self) -> int:
        stack: list[tuple[_Stack, int]] = []

        def push(tag: _Stack, q: int) -> None:
            if len(stack) >= STACK_MAX:
                raise DfaUnavailable("Expression too complex")
            stack.append((tag, q))

        lex = self._lex()
        rhs = -1
        goto = "EXP"
        if lex == _Lex.IDEN:
            word = self.last_word
            lex = self._lex()
            if lex == _Lex.EQUAL:
                raise DfaUnavailable("definitions are not part of CQP's expressions")
            push(_Stack.RULE, -1)
            rhs = self._make(-1, _Tag.SYM, leaf=word)
            goto = "END"
        else:
            push(_Stack.RULE, -1)
        while True:
            if goto == "EXP":
                if lex == _Lex.LPAR:
                    push(_Stack.PAR, -1)
                    lex = self._lex()
                    continue
                if lex == _Lex.LBR:
                    push(_Stack.OPT, -1)
                    lex = self._lex()
                    continue
                if lex == _Lex.ZERO:
                    rhs = self._make(-1, _Tag.ZERO)
                elif lex == _Lex.ONE:
                    rhs = self._make(-1, _Tag.ONE)
                elif lex == _Lex.IDEN:
                    rhs = self._make(-1, _Tag.SYM, leaf=self.last_word)
                else:
                    raise DfaUnavailable("Corrupt expression")
                lex = self._lex()
                goto = "END"
            action = _ACTION[stack[-1][0]][lex]
            if action == ".":
                stack.pop()
                return rhs
            if action == ")":
                stack.pop()
                lex = self._lex()
            elif action == "]":
                lex = self._lex()
                stack.pop()
                rhs = self._make(-1, _Tag.OPT, rhs)
            elif action == "v":
                rhs = self._make(-1, _Tag.OR, stack.pop()[1], rhs)
            elif action == "x":
                rhs = self._make(-1, _Tag.AND, stack.pop()[1], rhs)
            elif action == "*":
                rhs = self._make(-1, _Tag.STAR, rhs)
                lex = self._lex()
            elif action == "+":
                rhs = self._make(-1, _Tag.PLUS, rhs)
                lex = self._lex()
            elif action == "|":
                push(_Stack.OR, rhs)
                lex = self._lex()
                goto = "EXP"
            elif action == "&":
                push(_Stack.AND, rhs)
                goto = "EXP"
            else:  # CQP reports these and goes on with a repaired expression; none arise from a query
                raise DfaUnavailable("Corrupt expression")

    # -- the states (AddState, AddBuf, FormState)

    def _add_state(self, slist: tuple[int, ...]) -> int:
        known = self.state_of.get(slist)
        if known is not None:
            return known
        if len(self.states) >= MAX_DFA_STATES:
            raise DfaUnavailable("the query's automaton would be too large")
        number = len(self.states)
        self.states.append(_State(slist, number))
        self.state_of[slist] = number
        return number

    def _one(self) -> int:
        return self._make(-1, _Tag.ONE)  # MakeExp(-1, OneX)

    def _form_states(self, q: int) -> None:
        self._add_state((q,))
        s = 0
        while s < len(self.states):
            xstack: list[int] = []

            def push(q: int, xstack: list[int] = xstack) -> None:  # PushQ
                if not self.stacked[q]:
                    xstack.append(q)
                    self.stacked[q] = True

            for q in self.states[s].slist:
                push(q)
            buffer: dict[str, set[int]] = {}  # IBuf: symbol -> right-hand sides
            empty = False
            x = 0
            while x < len(xstack):
                qx = xstack[x]
                while True:  # EVALUATE
                    exp = self.equations[qx]
                    tag = exp.tag
                    if tag == _Tag.SYM:
                        buffer.setdefault(exp.leaf, set()).add(self._one())
                    elif tag == _Tag.ONE:
                        empty = True
                    elif tag == _Tag.ZERO:
                        pass
                    elif tag == _Tag.OPT:
                        # C evaluates a call's arguments right to left (gcc, x86-64): order of creation
                        self._make(qx, _Tag.OR, self._one(), exp.args[0])
                        continue
                    elif tag == _Tag.PLUS:
                        q1 = exp.args[0]
                        self._make(qx, _Tag.AND, q1, self._make(-1, _Tag.STAR, q1))
                        continue
                    elif tag == _Tag.STAR:
                        plus = self._make(-1, _Tag.PLUS, exp.args[0])
                        self._make(qx, _Tag.OR, self._one(), plus)
                        continue
                    elif tag == _Tag.OR:
                        push(exp.args[0])
                        push(exp.args[1])
                    else:  # AND
                        q1, q2 = exp.args
                        head = self.equations[q1]
                        if head.tag == _Tag.SYM:
                            buffer.setdefault(head.leaf, set()).add(q2)
                        elif head.tag == _Tag.ONE:
                            self.equations[qx] = self.equations[q2]
                            continue
                        elif head.tag == _Tag.ZERO:
                            self._make(qx, _Tag.ZERO)
                        elif head.tag == _Tag.OPT:
                            a = head.args[0]
                            self._make(qx, _Tag.OR, q2, self._make(-1, _Tag.AND, a, q2))
                            continue
                        elif head.tag == _Tag.PLUS:
                            a = head.args[0]
                            self._make(qx, _Tag.AND, a, self._make(-1, _Tag.OR, q2, qx))
                            continue
                        elif head.tag == _Tag.STAR:
                            a = head.args[0]
                            self._make(qx, _Tag.OR, q2, self._make(-1, _Tag.AND, a, qx))
                            continue
                        elif head.tag == _Tag.OR:
                            a, b = head.args
                            right = self._make(-1, _Tag.AND, b, q2)
                            left = self._make(-1, _Tag.AND, a, q2)
                            self._make(qx, _Tag.OR, left, right)
                            continue
                        else:  # AND
                            a, b = head.args
                            self._make(qx, _Tag.AND, a, self._make(-1, _Tag.AND, b, q2))
                            continue
                    break
                x += 1
            for q in xstack:
                self.stacked[q] = False
            state = self.states[s]
            state.empty = empty
            for symbol in sorted(buffer):  # IBuf is kept in strcmp order of the names
                state.shifts.append((symbol, self._add_state(tuple(sorted(buffer[symbol])))))
            s += 1

    # -- merging equivalent states (AddEquiv, MergeStates)

    def _merge_states(self) -> None:
        states = self.states
        for s in range(len(states)):
            if states[s].cls != s:
                continue
            merged: list[tuple[int, int]] | None = None
            for s1 in range(s):
                if states[s1].cls != s1:
                    continue
                pairs: list[tuple[int, int]] = []

                def equiv(left: int, right: int, pairs: list[tuple[int, int]] = pairs) -> None:  # AddEquiv
                    left, right = states[left].cls, states[right].cls
                    if left == right:
                        return
                    if left > right:
                        left, right = right, left
                    if (left, right) not in pairs:
                        pairs.append((left, right))

                equiv(s, s1)
                equal = True
                e = 0
                while e < len(pairs):
                    ql, qr = states[pairs[e][0]], states[pairs[e][1]]
                    if ql.empty != qr.empty or len(ql.shifts) != len(qr.shifts):
                        equal = False
                        break
                    if any(a[0] != b[0] for a, b in zip(ql.shifts, qr.shifts, strict=True)):
                        equal = False
                        break
                    for a, b in zip(ql.shifts, qr.shifts, strict=True):
                        equiv(a[1], b[1])
                    e += 1
                if equal:
                    merged = pairs
                    break
            if merged is not None:
                for left, right in merged:
                    states[right].cls = states[left].cls
        classes = 0
        for s, state in enumerate(states):
            if state.cls == s:
                state.cls = classes
                classes += 1
            else:
                state.cls = states[state.cls].cls

    def dfa(self, patterns: int) -> Dfa:
        q = self._parse()
        self._form_states(q)
        self._merge_states()
        moves: list[tuple[tuple[int, int], ...]] = []
        final: set[int] = set()
        classes = 0
        for state in self.states:
            if state.cls != classes:
                continue
            classes += 1
            if state.empty:
                final.add(state.cls)
            row = {int(symbol): self.states[target].cls for symbol, target in state.shifts}
            moves.append(tuple(sorted(row.items())))
        return Dfa(tuple(moves), frozenset(final), patterns)


def paths_may_meet(pattern: Pattern) -> bool:
    """Whether the glushkov simulation may answer otherwise than CQP's DFA: where a tag or a
    lookahead sits inside an alternative or a repetition (CQP counts it as a step, and the paths
    through it and around it meet in one DFA state at different positions); where the query has
    StrictRegions (an opening and a closing tag of one attribute) and alternatives (CQP ties a
    closing tag to an opening tag written before it, whatever path was taken); and where a label
    or an anchor sits inside an alternative or a repetition, under every strategy: paths through
    and around it meet in one DFA state, which keeps one set of values, the one its state order
    writes last (``@1[]{0,2} []? [upos="PUNCT"]`` marks the match's first token where the paths
    meet; ``a:[]+ []+ :: a.lemma = matchend.lemma`` tests the label's last value there); and where
    a label or an anchor sits between parts of variable length (``[]* @[] []*`` under longest)."""

    def inside(node: Pattern, nested: bool) -> bool:
        if isinstance(node, StructuralTag):
            return nested
        if isinstance(node, TokenPattern):
            return nested and (node.lookahead or bool(node.label or node.target or node.keyword))
        if isinstance(node, Sequence):
            return any(inside(item, nested) for item in node.items)
        if isinstance(node, Alternation):
            many = nested or len(node.options) > 1
            return any(inside(option, many) for option in node.options)
        if isinstance(node, Repetition):
            return inside(node.item, nested or node.max != 1 or node.min != 1)
        raise TypeError(node)

    if inside(pattern, False) or reads_labels(pattern) or _marked_between_variable_parts(pattern, False, False):
        return True
    tags = [leaf for leaf in leaves(pattern) if isinstance(leaf, StructuralTag)]
    strict = {t.attribute for t in tags if not t.closing} & {t.attribute for t in tags if t.closing}
    return bool(strict) and _has_alternatives(pattern)


def _lengths(node: Pattern) -> tuple[int, int | None]:
    """The fewest and most tokens a pattern consumes (None: no most)."""
    if isinstance(node, TokenPattern):
        return (0, 0) if node.lookahead else (1, 1)
    if isinstance(node, StructuralTag):
        return 0, 0
    if isinstance(node, Sequence):
        spans = [_lengths(item) for item in node.items]
        most = [high for _, high in spans]
        return sum(low for low, _ in spans), None if None in most else sum(h for h in most if h is not None)
    if isinstance(node, Alternation):
        spans = [_lengths(option) for option in node.options]
        highs = [high for _, high in spans]
        return min(low for low, _ in spans), None if None in highs else max(h for h in highs if h is not None)
    if isinstance(node, Repetition):
        low, high = _lengths(node.item)
        if node.max is None:
            return low * node.min, None if high != 0 else 0
        return low * node.min, None if high is None else high * node.max
    raise TypeError(node)


def _variable(node: Pattern) -> bool:
    low, high = _lengths(node)
    return low != high


def _marked_between_variable_parts(node: Pattern, before: bool, after: bool) -> bool:
    """Whether a label or an anchor sits on a token that parts of variable length both precede and
    follow (``[]* @[] []*``): then one match may have it at several positions (the paths meet in one
    DFA state), and which one CQP keeps is its DFA's choice. (Labels and anchors inside repetitions
    and alternatives are ``paths_may_meet``'s other case.)"""
    if isinstance(node, TokenPattern):
        return before and after and bool(node.label or node.target or node.keyword)
    if isinstance(node, Sequence):
        items = node.items
        return any(_marked_between_variable_parts(item, before or any(_variable(i) for i in items[:k]),
                                                  after or any(_variable(i) for i in items[k + 1:]))
                   for k, item in enumerate(items))
    if isinstance(node, Alternation) and len(node.options) == 1:
        return _marked_between_variable_parts(node.options[0], before, after)
    if isinstance(node, Repetition) and node.min == node.max == 1:
        return _marked_between_variable_parts(node.item, before, after)
    return False


def reads_labels(pattern: Pattern) -> bool:
    """Whether a token of the pattern reads labels of earlier tokens (``[lemma = a.lemma]``): only
    CQP's DFA, which keeps labels per state, can evaluate it."""
    return any(isinstance(leaf, TokenPattern) and _condition_reads(leaf.condition) for leaf in leaves(pattern))


def _condition_reads(condition: Condition | None) -> bool:
    if isinstance(condition, LabelComparison):
        return True
    if isinstance(condition, Not):
        return _condition_reads(condition.operand)
    if isinstance(condition, And | Or):
        return any(_condition_reads(c) for c in condition.operands)
    return False


def _has_alternatives(node: Pattern) -> bool:
    if isinstance(node, Alternation):
        return len(node.options) > 1 or any(_has_alternatives(o) for o in node.options)
    if isinstance(node, Sequence):
        return any(_has_alternatives(item) for item in node.items)
    if isinstance(node, Repetition):
        return _has_alternatives(node.item)
    return False
