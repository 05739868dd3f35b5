"""From Lark's parse tree of ``cqp.lark`` to the typed AST of ``cqp_ast``, checking as it goes.

Everything the grammar cannot say is checked here, with the offending token's offset: flags,
regexes, repetition bounds, reserved words, a single target marker, labels used in the global
constraint but never set, and the constructs parsed only to be reported as unsupported.
The transformer is non-recursive, so tree depth never meets Python's recursion limit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from lark import Token
from lark.visitors import Transformer_NonRecursive, v_args

from cowbird.query import cqp_ast as ast
from cowbird.query.cqp_lexical import ANCHOR_TAGS, RESERVED_WORDS, unquote, unrepresentable_reason
from cowbird.query.errors import QuerySyntaxError, UnsupportedQueryError
from cowbird.query.limits import MAX_CUT, MAX_REPETITION
from cowbird.query.regex_check import MAX_REGEX_SIZE, check_regex

Bounds = tuple[int, int | None]


@dataclass(frozen=True)
class _Context:
    """A ``within`` or ``expand`` context: ``count`` regions of ``attribute``, or tokens (None)."""

    attribute: str | None
    count: int
    direction: str | None = None


_Operator = TypeVar("_Operator", ast.Or, ast.And, ast.ConstraintOr, ast.ConstraintAnd)


def _operator(kind: type[_Operator]) -> Callable[..., _Operator]:
    """The callback of a Boolean operator's rule: ``kind`` of the operands, nested operands of the same
    operator merged (``a & (b & c)`` is ``a & b & c``)."""

    def build(builder: AstBuilder, *operands: Any) -> _Operator:
        flat: list[Any] = []
        for operand in operands:
            flat.extend(operand.operands if type(operand) is kind else (operand,))
        return kind(tuple(flat))

    return build


@v_args(inline=True)
class AstBuilder(Transformer_NonRecursive[Token, Any]):
    """Builds one ``Query``; make a new instance per query (it collects labels and targets)."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text
        self.labels: set[str] = set()
        self.label_refs: list[tuple[str, int]] = []
        self.targets: list[int] = []
        self.keywords: list[int] = []
        self.label_offsets: dict[str, int] = {}
        self.token_reads: list[tuple[str, int]] = []  # labels read inside the token being built
        self.regex_budget = MAX_REGEX_SIZE

    def _error(self, message: str, token: Token | int) -> QuerySyntaxError:
        offset = token if isinstance(token, int) else _offset(token)
        return QuerySyntaxError(message, self.text, offset)

    def _unsupported(self, message: str, token: Token) -> UnsupportedQueryError:
        return UnsupportedQueryError(message, self.text, _offset(token))

    def _name(self, token: Token, what: str) -> str:
        name = str(token)
        if name in RESERVED_WORDS:
            raise self._error(f"'{name}' is a CQP keyword and cannot be used as {what}", token)
        return name

    def _int(self, token: Token, low: int, high: int, what: str) -> int:
        # Bounding the digits first keeps int() away from Python's long-string conversion limit.
        value = int(token) if len(token) <= 12 else high + 1
        if not low <= value <= high:
            raise self._error(f"{what} must be between {low:,} and {high:,}", token)
        return value

    # ------------------------------------------------------------------ query and clauses

    def modifier(self, name: Token) -> str:
        strategy = str(name).lower()  # CQP: find_matching_strategy() ignores case
        if strategy not in ast.STRATEGIES:
            raise self._error(
                f"embedded modifier (?{name}) is not one CQP knows: (?longest), (?shortest), (?standard) or "
                "(?traditional) set the matching strategy for the query", name)
        return strategy

    def start(
        self,
        strategy: str | None,
        pattern: ast.Pattern,
        constraint: ast.Constraint | None,
        within: _Context | None,
        cut: int | None,
        expand: _Context | None,
    ) -> ast.Query:
        for label, offset in self.label_refs:
            if label == "target" and not self.targets:
                raise self._error("'target' is not set in the pattern (mark a token with @, as in @[...])", offset)
            if label == "keyword" and not self.keywords:
                raise self._error("'keyword' is not set in the pattern (mark a token with @1, as in @1[...])", offset)
            if label not in ast.SPECIAL_LABELS and label not in self.labels:
                raise self._error(
                    f"label '{label}' is not set in the pattern (set it with {label}:[...])", offset
                )
        read = {label for label, _ in self.label_refs}
        for label, offset in self.label_offsets.items():
            if label not in read:  # CQP: "Illegal use of labels"
                raise self._error(
                    f"label '{label}' is set but never read: compare it after '::' (as in :: {label}.word = ...) "
                    "or remove it",
                    offset,
                )
        if not _has_symbols(pattern):  # CQP: "Query is vacuous"
            raise self._error("the query is vacuous: every token and tag in it is repeated zero times", 0)
        if matches_empty(pattern):  # CQP: "Query matches empty string"
            raise self._error(
                "the query matches the empty string (every token and tag in it is optional), so it would "
                "match everywhere: make at least one token or tag obligatory",
                0,
            )
        query = _within(ast.Query(pattern, constraint=constraint, cut=cut, strategy=strategy), within)
        if expand is not None:
            query = replace(query, expand=expand.attribute, expand_count=expand.count if expand.attribute else 1,
                            expand_tokens=None if expand.attribute else expand.count,
                            expand_direction=expand.direction)
        return query

    # ------------------------------------------------------------------ MU and TAB queries

    def mu_query(self, term: ast.MuTerm, cut: int | None) -> ast.Query:
        """``MU (meet A B s) cut 10``; ``MU A`` alone is A's hits, as CQP's union of A with itself."""
        return ast.Query(ast.MuUnion(term, term) if isinstance(term, ast.TokenPattern) else term, cut=cut)

    def meet(self, left: ast.MuTerm, right: ast.MuTerm, window: tuple[int, int] | str | None) -> ast.Meet:
        if window is None:
            return ast.Meet(left, right)  # CQP's default window: the token right after
        if isinstance(window, str):
            return ast.Meet(left, right, region=window)
        return ast.Meet(left, right, window[0], window[1])

    def mu_union(self, left: ast.MuTerm, right: ast.MuTerm) -> ast.MuUnion:
        return ast.MuUnion(left, right)

    def mu_bracket(self, condition: ast.Condition | None) -> ast.TokenPattern:
        return self._token(condition, None, None)

    def mu_string(self, value: ast.RegexValue) -> ast.TokenPattern:
        return self._token(ast.AttributeTest("word", False, value), None, None)

    def meet_window(self, first: int | Token, second: int | None = None) -> tuple[int, int] | str:
        if isinstance(first, Token):
            return self._name(first, "a structural attribute")
        assert second is not None  # the grammar gives two numbers or a name
        return (first, second)

    def signed(self, number: Token) -> int:
        return self._int(number, 0, MAX_CUT, "a distance")

    def negative(self, number: Token) -> int:
        return -self._int(number, 0, MAX_CUT, "a distance")

    def tab_gap(self, bounds: Bounds) -> Bounds:
        return bounds

    def tab_query(self, *items: ast.TokenPattern | Bounds | _Context | None) -> ast.Query:
        """``TAB [pos="DT"] {0,2} [pos="NN"] within s``: columns, the tokens allowed between each
        two (none written: adjacent), and a ``within`` clause."""
        within = items[-1]
        columns: list[ast.TokenPattern] = []
        gaps: list[tuple[int, int | None]] = []
        gap: tuple[int, int | None] | None = None
        for item in items[:-1]:
            if isinstance(item, ast.TokenPattern):
                if columns:
                    gaps.append(gap or (0, 0))
                columns.append(item)
                gap = None
            elif isinstance(item, tuple):
                gap = item
        assert within is None or isinstance(within, _Context)
        return _within(ast.Query(ast.Tabular(tuple(columns), tuple(gaps))), within)

    def constraint_clause(self, constraint: ast.Constraint) -> ast.Constraint:
        return constraint

    def within_clause(self, direction: Token | None, context: _Context) -> _Context:
        return context

    def expand_clause(self, direction: Token | None, context: _Context) -> _Context:
        return _Context(context.attribute, context.count, str(direction) if direction is not None else None)

    def context(self, first: Token, name: Token | None = None) -> _Context:
        """``s``, ``3 s``, ``3``, ``3 words`` (CQP's Description: a count of regions or of tokens)."""
        if first.type != "INT":
            return _Context(self._name(first, "a structural attribute"), 1)
        count = self._int(first, 0, MAX_CUT, "the number of tokens or regions")
        if name is None or str(name) in ("word", "words"):
            return _Context(None, count)
        return _Context(self._name(name, "a structural attribute"), count)

    def cut_clause(self, count: Token) -> int | None:
        """``cut N``; ``cut 0`` is no cut, as in CQP."""
        value = self._int(count, 0, MAX_CUT, "the number after 'cut'")
        return value or None

    # ------------------------------------------------------------------ pattern

    def pattern(self, *options: ast.Pattern) -> ast.Alternation:
        flat: list[ast.Pattern] = []
        for option in options:
            flat.extend(option.options if isinstance(option, ast.Alternation) else (option,))
        return ast.Alternation(tuple(flat))

    def sequence(self, *items: ast.Pattern) -> ast.Sequence:
        flat: list[ast.Pattern] = []
        for item in items:
            flat.extend(item.items if isinstance(item, ast.Sequence) else (item,))
        return ast.Sequence(tuple(flat))

    def repetition(self, item: ast.Pattern, bounds: Bounds) -> ast.Repetition:
        return ast.Repetition(item, bounds[0], bounds[1])

    def optional(self) -> Bounds:
        return (0, 1)

    def any_number(self) -> Bounds:
        return (0, None)

    def at_least_one(self) -> Bounds:
        return (1, None)

    def exactly(self, count: Token) -> Bounds:
        value = self._int(count, 0, MAX_REPETITION, "a repetition count")
        return (value, value)

    def at_least(self, low: Token) -> Bounds:
        return (self._int(low, 0, MAX_REPETITION, "a repetition bound"), None)

    def between(self, low: Token, high: Token) -> Bounds:
        minimum = self._int(low, 0, MAX_REPETITION, "a repetition bound")
        maximum = self._int(high, minimum, MAX_REPETITION, "the upper bound of {n,m}")
        return (minimum, maximum)

    def at_most(self, high: Token) -> Bounds:
        return (0, self._int(high, 0, MAX_REPETITION, "the upper bound of {,m}"))

    def bracket_token(
        self, target: Token | None, label: Token | None, condition: ast.Condition | None
    ) -> ast.TokenPattern:
        return self._token(condition, target, label)

    def lookahead_token(
        self, target: Token | None, label: Token | None, condition: ast.Condition | None
    ) -> ast.TokenPattern:
        """``[: condition :]``: CQP's lookahead constraint, a zero-width test of the next token."""
        return replace(self._token(condition, target, label), lookahead=True)

    def string_token(self, target: Token | None, label: Token | None, value: ast.RegexValue) -> ast.TokenPattern:
        return self._token(ast.AttributeTest("word", False, value), target, label)

    def _token(self, condition: ast.Condition | None, marker: Token | None, label: Token | None) -> ast.TokenPattern:
        # the transformer builds tokens in text order, each right after its condition: the labels a
        # condition reads must be set by tokens built before (CQP: "used before it was defined")
        reads, self.token_reads = self.token_reads, []
        for name, offset in reads:
            if name not in self.labels:
                raise self._error(
                    f"label '{name}' is read before it is set: a token can only read labels set by tokens "
                    f"written before it (as in {name}:[] [lemma = {name}.lemma])",
                    offset,
                )
            self.label_refs.append((name, offset))
        anchor = self._anchor(marker)
        return ast.TokenPattern(
            condition, label=self._label(label), target=anchor == "target", keyword=anchor == "keyword"
        )

    def _label(self, token: Token | None) -> str | None:
        if token is None:
            return None
        name = self._name(Token("LABEL", token[:-1], start_pos=token.start_pos), "a label")
        self.labels.add(name)
        self.label_offsets.setdefault(name, _offset(token))
        return name

    def _anchor(self, token: Token | None) -> str | None:
        """``@``/``@0`` mark the target, ``@1`` the keyword (CQP's default AnchorNumberTarget 0 and
        AnchorNumberKeyword 1); ``@2`` to ``@9`` mark nothing, as in CQP, which ignores them."""
        if token is None:
            return None
        number = str(token).strip("@:")
        if number in ("", "0"):
            self.targets.append(_offset(token))
            return "target"
        if number == "1":
            self.keywords.append(_offset(token))
            return "keyword"
        if len(number) == 1:
            return None
        raise self._error("an anchor marker is @ followed by at most one digit (@0 target, @1 keyword)", token)

    def open_tag(
        self, tag: Token, operator: Token | None = None, value: ast.RegexValue | None = None
    ) -> ast.StructuralTag:
        name = str(tag)[1:]
        if name in ANCHOR_TAGS:
            raise self._unsupported(f"anchor points such as <{name}> are not supported", tag)
        test = None if value is None else ast.ValueTest(operator == "!=", value)
        return ast.StructuralTag(name, closing=False, test=test)

    open_tag_test = open_tag

    def close_tag(self, tag: Token) -> ast.StructuralTag:
        name = str(tag)[2:-1]
        if name in ANCHOR_TAGS:
            raise self._unsupported(f"anchor points such as </{name}> are not supported", tag)
        return ast.StructuralTag(name, closing=True)

    # ------------------------------------------------------------------ conditions

    or_condition = _operator(ast.Or)
    and_condition = _operator(ast.And)

    def negation(self, operand: ast.Condition) -> ast.Not:
        return ast.Not(operand)

    def attribute_test(self, name: Token, operator: Token, value: ast.RegexValue) -> ast.AttributeTest:
        return ast.AttributeTest(self._name(name, "an attribute name"), operator == "!=", value)

    def attribute_comparison(self, left: Token, operator: Token, right: Token) -> ast.AttributeComparison:
        return ast.AttributeComparison(self._name(left, "an attribute name"), operator == "!=",
                                   self._name(right, "an attribute name"))

    def bound_function(self, function: Token, argument: Token) -> ast.RegionBound:
        """``lbound(s)`` and ``rbound(s)``, CQP's built-in tests of a region's first and last token."""
        if str(function) not in ("lbound", "rbound"):
            raise self._unsupported(
                f"the function {function}() is not supported in a token (lbound() and rbound() are)", function
            )
        return ast.RegionBound(str(function) == "rbound", self._name(argument, "a structural attribute"))

    def this_test(
        self, reference: Token, operator: Token, value: ast.RegexValue
    ) -> ast.AttributeTest | ast.LabelComparison:
        """``_.text_year="2010"``: CQP's label ``_`` is the current token; ``a.pos="NN"`` reads the
        label ``a`` of an earlier token."""
        label, attribute = str(reference).split(".", 1)
        if label != "_":
            return ast.LabelComparison(self._token_ref(reference), operator == "!=", value)
        if attribute in RESERVED_WORDS:
            raise self._error(f"'{attribute}' is a CQP keyword and cannot be used as an attribute name", reference)
        return ast.AttributeTest(attribute, operator == "!=", value, this=True)

    def label_comparison(self, left: Token, operator: Token, right: Token) -> ast.LabelComparison:
        """``lemma = a.lemma``, ``_.text_id != a.text_id``, ``a.pos = pos``: values at labels set by
        earlier tokens, compared inside a token (a bare name is an attribute of the token itself)."""
        return ast.LabelComparison(self._token_ref(left), operator == "!=", self._token_ref(right))

    def _token_ref(self, token: Token) -> ast.LabelRef:
        if token.type == "NAME":  # the token's own attribute, written bare (CQP: no label at all)
            return ast.LabelRef("", self._name(token, "an attribute name"))
        label, attribute = str(token).split(".", 1)
        if label in ast.SPECIAL_LABELS and label != "match":
            raise self._unsupported(
                f"'{token}': inside a token only '_' (the token itself), 'match' and labels set by earlier "
                f"tokens can be read; compare {label} after '::'",
                token,
            )
        if attribute in RESERVED_WORDS:
            raise self._error(f"'{attribute}' is a CQP keyword and cannot be used as an attribute name", token)
        if label not in ("_", "match"):
            self.token_reads.append((self._name(Token("NAME", label, start_pos=token.start_pos), "a label"),
                                     _offset(token)))
        return ast.LabelRef(label, attribute)

    def value(self, string: Token, flags: Token | None) -> ast.RegexValue:
        ignore_case, ignore_diacritics, literal = self._flags(flags)
        pattern, offsets = unquote(str(string))
        reason = unrepresentable_reason(pattern)
        if reason is not None:
            raise self._error(reason, _offset(string) + len(string) - 1)
        if not literal:
            problem, size = check_regex(pattern, self.regex_budget)
            if problem is not None:
                index = offsets[problem.index] if problem.index < len(offsets) else len(string) - 1
                raise self._error(problem.message, _offset(string) + index)
            self.regex_budget -= size
        return ast.RegexValue(pattern, ignore_case, ignore_diacritics, literal)

    def _flags(self, flags: Token | None) -> tuple[bool, bool, bool]:
        letters = "" if flags is None else str(flags)[1:]
        for index, letter in enumerate(letters):
            if letter not in "cdl":
                raise self._error(
                    f"unknown flag '%{letter}' (use %c, %d, %cd or %l)", _offset(flags) + 1 + index
                )
        if "l" in letters and set(letters) != {"l"}:
            raise self._error("%l (literal) cannot be combined with %c or %d", _offset(flags))
        return "c" in letters, "d" in letters, "l" in letters

    # ------------------------------------------------------------------ global constraint

    or_constraint = _operator(ast.ConstraintOr)
    and_constraint = _operator(ast.ConstraintAnd)

    def constraint_negation(self, operand: ast.Constraint) -> ast.ConstraintNot:
        return ast.ConstraintNot(operand)

    def comparison(self, left: ast.LabelRef, operator: Token, right: ast.RegexValue | ast.LabelRef) -> ast.Comparison:
        return ast.Comparison(left, operator == "!=", right)

    def numeric_comparison(self, left: ast.Number, operator: str, right: ast.Number) -> ast.NumericComparison:
        return ast.NumericComparison(left, operator, right)

    def existence(self, ref: ast.LabelRef) -> ast.Exists:
        return ast.Exists(ref.label, ref.attribute)

    def label_existence(self, name: Token) -> ast.Exists:
        return ast.Exists(self.name_argument(name))

    def nonzero(self, call: ast.FunctionCall) -> ast.NumericComparison:
        """A function's value as a condition (CQP: true where it is defined and not 0)."""
        return ast.NumericComparison(call, "!=", 0)

    def int_number(self, number: Token) -> int:
        return self._int(number, 0, MAX_CUT, "a number")

    _POSITIONS = ("distance", "dist", "distabs")
    _VALUES = ("f", "int")

    def function_number(self, name: Token, *arguments: str | ast.LabelRef | int) -> ast.FunctionCall:
        """``distabs(a, b)``, ``distance(a, b)``, ``dist(a, b)`` of two positions (labels or numbers);
        ``f(a.lemma)`` and ``int(a.word)`` of a label's value."""
        function = str(name)
        if function in self._POSITIONS:
            if len(arguments) != 2 or any(isinstance(a, ast.LabelRef) for a in arguments):
                raise self._error(f"{function}() takes two positions: labels (a, match, ...) or numbers", name)
        elif function in self._VALUES:
            if len(arguments) != 1 or not isinstance(arguments[0], ast.LabelRef):
                raise self._error(f"{function}() takes one attribute of a label, as in {function}(a.lemma)", name)
        else:
            raise self._unsupported(
                f"the function {function}() is not supported (distance, dist, distabs, f and int are)", name
            )
        return ast.FunctionCall(function, arguments)

    def qid_argument(self, qid: Token) -> ast.LabelRef:
        return self.label_ref(qid)

    def name_argument(self, name: Token) -> str:
        label = str(name)
        self.label_refs.append((label, _offset(name)))
        return label

    def int_argument(self, number: Token) -> int:
        return self._int(number, 0, MAX_CUT, "a position")

    def rel_eq(self, _: Token) -> str:
        return "="

    def rel_ne(self, _: Token) -> str:
        return "!="

    def rel_lt(self) -> str:
        return "<"

    def rel_gt(self) -> str:
        return ">"

    def rel_le(self) -> str:
        return "<="

    def rel_ge(self) -> str:
        return ">="

    def label_ref(self, qid: Token) -> ast.LabelRef:
        label, attribute = str(qid).split(".")
        self.label_refs.append((label, _offset(qid)))
        return ast.LabelRef(label, attribute)


def _within(query: ast.Query, within: _Context | None) -> ast.Query:
    """The query with its ``within`` clause; CQP's within ignores a direction: a match only ever
    runs to the right."""
    if within is None:
        return query
    return replace(query, within=within.attribute, within_count=within.count if within.attribute else 1,
                   within_tokens=None if within.attribute else within.count)


def _has_symbols(pattern: ast.Pattern) -> bool:
    """Whether any token or tag of the pattern is left once ``x{0}`` repetitions are dropped."""
    if isinstance(pattern, ast.TokenPattern | ast.StructuralTag):
        return True
    if isinstance(pattern, ast.Repetition):
        return pattern.max != 0 and _has_symbols(pattern.item)
    parts = pattern.items if isinstance(pattern, ast.Sequence) else pattern.options
    return any(_has_symbols(part) for part in parts)


def matches_empty(pattern: ast.Pattern) -> bool:
    """Whether the pattern matches without a token or a tag (CQP counts a tag as a symbol here)."""
    if isinstance(pattern, ast.TokenPattern | ast.StructuralTag):
        return False
    if isinstance(pattern, ast.Repetition):
        return pattern.min == 0 or matches_empty(pattern.item)
    if isinstance(pattern, ast.Sequence):
        return all(matches_empty(item) for item in pattern.items)
    return any(matches_empty(option) for option in pattern.options)


def _offset(token: Token | None) -> int:
    return 0 if token is None or token.start_pos is None else token.start_pos


