"""Typed AST of a CQP query expression: frozen, hashable dataclasses and nothing else.

The parser (``cowbird.query.cqp``) builds it, the serializer (``cowbird.query.cqp_serialize``) turns it
back into canonical CQP text, and the native engine walks it. Shapes are normalised so that
``parse_cqp(serialize(q)) == q``:

- ``Sequence`` has at least two items, none of them a ``Sequence``; ``Alternation`` has at least
  two options, none of them an ``Alternation``; ``And``/``Or`` (and the constraint variants) have
  at least two operands, none of the same class. A parenthesised single item is the item itself.
- A bare ``"house"`` is ``TokenPattern(AttributeTest("word", False, RegexValue("house")))``.
- ``Repetition`` keeps the bounds as written: ``?`` is (0, 1), ``*`` is (0, None), ``+`` is
  (1, None), ``{,m}`` is (0, m); ``x{1}`` stays a ``Repetition`` (it is not simplified to ``x``).

Regular expressions follow CQP: PCRE syntax, matched against the *whole* attribute value (an
implicit ``^(?:...)$``), ``%c`` folds case, ``%d`` ignores diacritics, ``%l`` makes the value a
literal string instead of a regex.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeAlias

# ------------------------------------------------------------------ values


@dataclass(frozen=True)
class RegexValue:
    """A quoted value: the regex exactly as the regex engine must see it, plus CQP's flags.

    ``pattern`` is the text between the quotes with CQP's quote doubling undone (``"a""b"`` is
    ``a"b``); backslashes are kept as written, so ``"\\$"`` is the regex ``\\$``. With ``literal``
    (``%l``) the pattern is a plain string, compared as a whole, and the other flags are off.
    """

    pattern: str
    ignore_case: bool = False
    ignore_diacritics: bool = False
    literal: bool = False


@dataclass(frozen=True)
class ValueTest:
    """``="..."`` or ``!="..."`` on a structural tag: ``<text_genre!="email">``."""

    negated: bool
    value: RegexValue


# ------------------------------------------------------------------ conditions inside [...]


@dataclass(frozen=True)
class AttributeTest:
    """``word="x"`` (``negated`` False) or ``word!="x"`` (``negated`` True); with ``this``,
    ``_.text_year="2010"``: the attribute at the current token, which may be an s-attribute's value
    (of the region around the token)."""

    attribute: str
    negated: bool
    value: RegexValue
    this: bool = False


@dataclass(frozen=True)
class Not:
    """``!condition``."""

    operand: Condition


@dataclass(frozen=True)
class And:
    """``a & b & ...``."""

    operands: tuple[Condition, ...]


@dataclass(frozen=True)
class Or:
    """``a | b | ...``."""

    operands: tuple[Condition, ...]


@dataclass(frozen=True)
class AttributeComparison:
    """``word = lemma`` (``negated`` False) or ``word != lemma``: two p-attributes of the token, as strings."""

    left: str
    negated: bool
    right: str


@dataclass(frozen=True)
class RegionBound:
    """``lbound(s)`` (``right`` False) or ``rbound(s)``: the token is the first (last) of a region."""

    right: bool
    attribute: str


@dataclass(frozen=True)
class LabelComparison:
    """A comparison that reads labels set by earlier tokens, inside a token: ``lemma = a.lemma``,
    ``a.pos = "NN"``, ``_.text_id != a.text_id``. The label ``_`` is the token itself (a bare
    attribute name is ``_.name``); the others are set in tokens written before this one. Unset
    (the labelled token was skipped), a label compares as in a global constraint."""

    left: LabelRef  # label "" for a bare attribute name (to CQP no label at all; "_" is one)
    negated: bool
    right: RegexValue | LabelRef


Condition: TypeAlias = AttributeTest | Not | And | Or | AttributeComparison | RegionBound | LabelComparison

# ------------------------------------------------------------------ token-level pattern


@dataclass(frozen=True)
class TokenPattern:
    """One corpus position: ``[condition]``, or ``[]`` (``condition`` None) for any token.

    ``label`` is the name set by ``a:[...]``; ``target`` is True for ``@[...]`` (or ``@0[...]``),
    ``keyword`` for ``@1[...]`` (CQP's second anchor; a token is at most one of the two).
    ``lookahead``: ``[: condition :]``, a test of the next token that does not consume it.
    """

    condition: Condition | None
    label: str | None = None
    target: bool = False
    keyword: bool = False
    lookahead: bool = False


@dataclass(frozen=True)
class StructuralTag:
    """A zero-width assertion: region start ``<s>``, end ``</s>``, or ``<text_genre="x">``.

    ``attribute`` is the s-attribute as written (``text_genre``); only opening tags have a test.
    """

    attribute: str
    closing: bool = False
    test: ValueTest | None = None


@dataclass(frozen=True)
class Sequence:
    """Items matched one after the other."""

    items: tuple[Pattern, ...]


@dataclass(frozen=True)
class Alternation:
    """Any one of the options (``a | b``)."""

    options: tuple[Pattern, ...]


@dataclass(frozen=True)
class Repetition:
    """``item`` repeated between ``min`` and ``max`` times; ``max`` None means unbounded."""

    item: Pattern
    min: int
    max: int | None


Pattern: TypeAlias = TokenPattern | StructuralTag | Sequence | Alternation | Repetition

@dataclass(frozen=True)
class Meet:
    """CQP's MU query ``(meet A B -2 3)``: the hits of ``left`` (one token each) that have a hit of
    ``right`` from ``low`` to ``high`` tokens away (``(meet A B)`` is 1 1: right after), or, with
    ``region``, in the same region (``(meet A B s)``)."""

    left: MuTerm
    right: MuTerm
    low: int = 1
    high: int = 1
    region: str | None = None


@dataclass(frozen=True)
class MuUnion:
    """CQP's MU query ``(union A B)``: the hits of either."""

    left: MuTerm
    right: MuTerm


MuTerm: TypeAlias = TokenPattern | Meet | MuUnion


@dataclass(frozen=True)
class Tabular:
    """CQP's TAB query ``TAB [pos="DT"] {0,2} [pos="NN"]``: one token per column, in order, with
    ``gaps[i]`` (min, max; None: any) tokens between column i and i + 1; CQP matches greedily, the
    nearest token of each column after the previous one, from the first column to the last."""

    columns: tuple[TokenPattern, ...]
    gaps: tuple[tuple[int, int | None], ...]


Cooccurrence: TypeAlias = Meet | MuUnion | Tabular
"""The queries that are not one pattern: MU (meet, union) and TAB."""


# ------------------------------------------------------------------ global constraint after ::


@dataclass(frozen=True)
class LabelRef:
    """``label.attribute``: ``match.text_genre``, ``a.lemma``; labels are ``match``,
    ``matchend``, ``target`` or a label set in the pattern."""

    label: str
    attribute: str


@dataclass(frozen=True)
class FunctionCall:
    """CQP's built-in functions that give a number: ``distance(a, b)`` (also ``dist``: b - a),
    ``distabs(a, b)`` (|b - a|), ``f(a.lemma)`` (the value's corpus frequency), ``int(a.word)`` (the
    value read as C's atoi reads it: its leading digits, else 0). An argument is a label (its
    position), a label reference or a number."""

    name: str
    arguments: tuple[str | LabelRef | int, ...]


Number: TypeAlias = int | FunctionCall


@dataclass(frozen=True)
class NumericComparison:
    """``distabs(a, b) > 2``: two numbers compared with ``=``, ``!=``, ``<``, ``>``, ``<=`` or ``>=``;
    a label that is unset is position -1 to distance(), dist() and distabs(), and makes f() and int()
    of its value false."""

    left: Number
    operator: str
    right: Number


@dataclass(frozen=True)
class Comparison:
    """``left = right`` or ``left != right`` (``negated``); right is a regex or another label."""

    left: LabelRef
    negated: bool
    right: RegexValue | LabelRef


@dataclass(frozen=True)
class Exists:
    """A label or a label's attribute as a condition of its own (CQP's existence test): ``:: a`` holds
    where the label is set, ``:: a.lemma`` too, ``:: a.text_id`` where it is set inside a region of
    ``text_id`` (whose value it would read). ``attribute`` None: the bare label (``match``,
    ``matchend``, ``target``, ``keyword`` or one set in the pattern)."""

    label: str
    attribute: str | None = None


@dataclass(frozen=True)
class ConstraintNot:
    """``!constraint``."""

    operand: Constraint


@dataclass(frozen=True)
class ConstraintAnd:
    """``a & b & ...`` in a global constraint."""

    operands: tuple[Constraint, ...]


@dataclass(frozen=True)
class ConstraintOr:
    """``a | b | ...`` in a global constraint."""

    operands: tuple[Constraint, ...]


Constraint: TypeAlias = Comparison | ConstraintNot | ConstraintAnd | ConstraintOr | NumericComparison | Exists

# ------------------------------------------------------------------ the query


@dataclass(frozen=True)
class Query:
    """A whole query: ``pattern [:: constraint] [within [N] s | within N] [cut N] [expand [left|right] to [N] s | N]``.

    ``within`` is an s-attribute; ``within_count`` regions of it (``within 2 s``: the start's region and
    the next) bound a match. ``within_tokens`` is ``within N`` (N tokens after the start; without it,
    the HardBoundary). ``expand`` widens each match to ``expand_count`` regions of an s-attribute on
    either side, or ``expand_tokens`` tokens; ``expand_direction`` "left" or "right" widens one side.
    An MU query has a ``Meet`` or ``MuUnion`` for its pattern (and maybe ``cut``), a TAB query a
    ``Tabular`` (and maybe ``within``). ``strategy`` is an embedded modifier before the pattern
    (``(?longest) [pos="JJ"]+``, one of :data:`STRATEGIES`): the matching strategy for this query, in place
    of the one it is run with.
    """

    pattern: Pattern | Cooccurrence
    within: str | None = None
    constraint: Constraint | None = None
    cut: int | None = None
    expand: str | None = None
    within_count: int = 1
    within_tokens: int | None = None
    expand_count: int = 1
    expand_tokens: int | None = None
    expand_direction: str | None = None
    strategy: str | None = None


STRATEGIES = ("standard", "shortest", "longest", "traditional")
"""CQP's matching strategies (``set MatchingStrategy``, or ``(?longest)`` before a query)."""

SPECIAL_LABELS = frozenset({"match", "matchend", "target", "keyword"})
"""Labels every query defines; a constraint may refer to them without setting them."""


def marked_anchors(pattern: Pattern) -> frozenset[str]:
    """The anchors the pattern's tokens mark: ``target`` (``@[...]``) and ``keyword`` (``@1[...]``)."""
    if isinstance(pattern, TokenPattern):
        return frozenset(name for name, marked in (("target", pattern.target), ("keyword", pattern.keyword)) if marked)
    if isinstance(pattern, Sequence):
        return frozenset().union(*(marked_anchors(item) for item in pattern.items))
    if isinstance(pattern, Alternation):
        return frozenset().union(*(marked_anchors(option) for option in pattern.options))
    if isinstance(pattern, Repetition):
        return marked_anchors(pattern.item)
    return frozenset()


def reads_past_edges(query: Query) -> bool:
    """Whether evaluating the query can read a token just outside the corpus: a lookahead (which
    tests the token after the match's last), a closing tag (which reads the region of the token
    before), an opening tag after a token (``[pos="NN"] <s>``: a region starting at the token after
    the match's last), or an MU ``meet`` window in tokens. Over a partition of a corpus cut in several, those are
    where CQP's answer over the partition alone can differ from its answer over the corpus in one piece."""
    return _reads_past_edges(query.pattern)


def _reads_past_edges(pattern: Pattern | Cooccurrence) -> bool:
    if isinstance(pattern, TokenPattern):
        return pattern.lookahead
    if isinstance(pattern, StructuralTag):
        return pattern.closing
    if isinstance(pattern, Sequence):
        first = next((k for k, item in enumerate(pattern.items) if not isinstance(item, StructuralTag)), None)
        return any(_reads_past_edges(item) for item in pattern.items) or (
            first is not None and any(_opens(item) for item in pattern.items[first + 1 :]))
    if isinstance(pattern, Alternation):
        return any(_reads_past_edges(option) for option in pattern.options)
    if isinstance(pattern, Repetition):
        return _reads_past_edges(pattern.item)
    if isinstance(pattern, Meet):
        return pattern.region is None or _reads_past_edges(pattern.left) or _reads_past_edges(pattern.right)
    if isinstance(pattern, MuUnion):
        return _reads_past_edges(pattern.left) or _reads_past_edges(pattern.right)
    return False  # TAB columns are single tokens, their gaps read nothing past a cut


def _opens(pattern: Pattern | Cooccurrence) -> bool:
    """Whether the pattern holds an opening tag (``<s>``, ``<text_id="t3">``)."""
    if isinstance(pattern, StructuralTag):
        return not pattern.closing
    if isinstance(pattern, Sequence):
        return any(_opens(item) for item in pattern.items)
    if isinstance(pattern, Alternation):
        return any(_opens(option) for option in pattern.options)
    if isinstance(pattern, Repetition):
        return _opens(pattern.item)
    return False


WIDE_REPETITION = 10
"""A repetition that may repeat more often than this (or without bound) may make a query slow."""


def may_be_slow(query: Query) -> bool:
    """Whether the query has what can make CQP walk many starts or paths — a repetition wider than
    ``WIDE_REPETITION`` or unbounded, a global constraint (``::``) that compares labels with each
    other or calls a function, an MU or TAB query — so that it is estimated before it runs. Queries
    of tokens and short gaps only are not, nor are filters (``match.text_genre = "..."``): their cost is
    their tokens' frequencies, which the count itself meets at once."""
    if not isinstance(query.pattern, TokenPattern | Sequence | Alternation | Repetition | StructuralTag):
        return True
    return _wide(query.pattern) or (query.constraint is not None and _relates(query.constraint))


def _relates(constraint: Constraint) -> bool:
    """Whether a global constraint compares labels with each other, or counts (functions, numbers)."""
    if isinstance(constraint, Comparison):
        return isinstance(constraint.right, LabelRef)
    if isinstance(constraint, ConstraintNot):
        return _relates(constraint.operand)
    if isinstance(constraint, ConstraintAnd | ConstraintOr):
        return any(_relates(operand) for operand in constraint.operands)
    return True


def _wide(pattern: Pattern) -> bool:
    if isinstance(pattern, Sequence):
        return any(_wide(item) for item in pattern.items)
    if isinstance(pattern, Alternation):
        return any(_wide(option) for option in pattern.options)
    if isinstance(pattern, Repetition):
        return pattern.max is None or pattern.max > WIDE_REPETITION or _wide(pattern.item)
    return False
