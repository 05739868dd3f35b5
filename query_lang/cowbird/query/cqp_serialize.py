"""The AST back to canonical CQP text: the only CQP text cowbird ever sends to a node.

Canonical form: one space between sequence items and around ``|``, ``&``, ``::``; flags right
after the string (``[word="x"%c]``); parentheses only where precedence needs them; quantifiers in
their shortest spelling (``?``, ``*``, ``+``, ``{n}``, ``{n,}``, ``{0,m}``); a bare ``"x"`` comes
out as ``[word="x"]``.

Because the output is what the CQP process reads, it must be impossible to smuggle anything else
through it: every name is checked against CQP's identifier syntax and reserved words, and every
value is quoted by ``cqp_lexical.quote``, which refuses values that could end their string early
or late. Such ASTs raise ``QuerySyntaxError`` instead of producing text.
"""

from __future__ import annotations

from typing import TypeVar, assert_never

from cowbird.query import cqp_ast as ast
from cowbird.query.cqp_lexical import ANCHOR_TAGS, NAME_RE, is_name, misread_string, quote, unrepresentable_reason
from cowbird.query.errors import QuerySyntaxError

_T = TypeVar("_T")


def serialize(query: ast.Query) -> str:
    """Canonical CQP text for ``query``; ``parse_cqp(serialize(q)) == q``."""
    parts = [_head(query)]
    if query.strategy is not None:
        if query.strategy not in ast.STRATEGIES or isinstance(query.pattern, ast.Meet | ast.MuUnion | ast.Tabular):
            raise QuerySyntaxError(f"a matching strategy (?{query.strategy}) comes before a standard query, and is "
                                   f"one of {', '.join(ast.STRATEGIES)}")
        parts.insert(0, f"(?{query.strategy})")
    if query.constraint is not None:
        parts += ["::", _constraint(query.constraint)]
    if query.within is not None:
        parts += ["within", *_count(query.within_count), _name(query.within)]
    elif query.within_tokens is not None:
        parts += ["within", str(_checked_count(query.within_tokens))]
    if query.cut is not None:
        if isinstance(query.cut, bool) or not isinstance(query.cut, int) or query.cut < 1:
            raise QuerySyntaxError(f"cut must be a positive integer, not {query.cut!r}")
        parts += ["cut", str(query.cut)]
    if query.expand is not None or query.expand_tokens is not None:
        if query.expand_direction not in (None, "left", "right"):
            raise QuerySyntaxError(f"the direction of expand must be left or right, not {query.expand_direction!r}")
        parts += ["expand", *([query.expand_direction] if query.expand_direction else []), "to"]
        if query.expand is not None:
            parts += [*_count(query.expand_count), _name(query.expand)]
        else:
            parts.append(str(_checked_count(query.expand_tokens)))
    text = " ".join(parts)
    misread = misread_string(text)
    if misread is not None:
        start, flex_end = misread
        raise QuerySyntaxError(
            f"CQP would read the string at {text[start:start + 20]!r} on to a later quote (its lexer lets a "
            "backslash stand for itself): a value ending in a backslash pair cannot come before another "
            "quote in the query; write its final backslash as \\x5c"
        )
    return text


def _head(query: ast.Query) -> str:
    """The pattern; or ``MU (meet ...)``, ``TAB ...``, which take only ``cut`` (MU) or ``within`` (TAB)."""
    pattern = query.pattern
    if isinstance(pattern, ast.Meet | ast.MuUnion):
        if query.constraint is not None or query.within is not None or query.within_tokens is not None \
                or query.expand is not None or query.expand_tokens is not None:
            raise QuerySyntaxError("an MU query takes no constraint, within or expand (only cut)")
        return f"MU {_mu(pattern)}"
    if isinstance(pattern, ast.Tabular):
        if query.constraint is not None or query.cut is not None or query.expand is not None \
                or query.expand_tokens is not None:
            raise QuerySyntaxError("a TAB query takes no constraint, cut or expand (only within)")
        if not pattern.columns or len(pattern.gaps) != len(pattern.columns) - 1:
            raise QuerySyntaxError("a TAB query needs one gap between each two of its columns")
        parts = [_mu_token(pattern.columns[0])]
        for gap, column in zip(pattern.gaps, pattern.columns[1:], strict=True):
            if gap != (0, 0):
                parts.append(_quantifier(*gap))
            parts.append(_mu_token(column))
        return "TAB " + " ".join(parts)
    return _pattern(pattern)


def _mu(term: ast.MuTerm) -> str:
    if isinstance(term, ast.Meet):
        window = f" {_name(term.region)}" if term.region is not None else f" {int(term.low)} {int(term.high)}"
        return f"(meet {_mu(term.left)} {_mu(term.right)}{window})"
    if isinstance(term, ast.MuUnion):
        return f"(union {_mu(term.left)} {_mu(term.right)})"
    return _mu_token(term)


def _mu_token(token: ast.TokenPattern) -> str:
    """A token of an MU or TAB query: a test only (no label, anchor or lookahead)."""
    if not isinstance(token, ast.TokenPattern) or token.label or token.target or token.keyword or token.lookahead:
        raise QuerySyntaxError("an MU or TAB query is made of plain tokens ([...] or \"...\")")
    return _pattern(token)


def _checked_count(count: object) -> int:
    if isinstance(count, bool) or not isinstance(count, int) or count < 0:
        raise QuerySyntaxError(f"a number of tokens or regions must be a non-negative integer, not {count!r}")
    return count


def _count(count: int) -> list[str]:
    """``2`` in ``within 2 s``; nothing for one region."""
    return [] if _checked_count(count) == 1 else [str(count)]


def _name(name: str, *, reserved_ok: bool = False) -> str:
    valid = NAME_RE.fullmatch(name) is not None if reserved_ok else is_name(name)
    if not valid:
        raise QuerySyntaxError(f"{name!r} cannot be written as a CQP name")
    return name


def _value(value: ast.RegexValue) -> str:
    reason = unrepresentable_reason(value.pattern)
    if reason is not None:
        raise QuerySyntaxError(reason)
    if value.literal and (value.ignore_case or value.ignore_diacritics):
        raise QuerySyntaxError("%l (literal) cannot be combined with %c or %d")
    flags = (
        "l"
        if value.literal
        else ("c" if value.ignore_case else "") + ("d" if value.ignore_diacritics else "")
    )
    return quote(value.pattern) + (f"%{flags}" if flags else "")


# ------------------------------------------------------------------ pattern


def _pattern(pattern: ast.Pattern) -> str:
    if isinstance(pattern, ast.Alternation):
        return " | ".join(_pattern(option) for option in _at_least_two(pattern.options))
    if isinstance(pattern, ast.Sequence):
        return " ".join(
            f"({_pattern(item)})" if isinstance(item, ast.Alternation) else _pattern(item)
            for item in _at_least_two(pattern.items)
        )
    if isinstance(pattern, ast.Repetition):
        item = _pattern(pattern.item)
        if not isinstance(pattern.item, ast.TokenPattern | ast.StructuralTag):
            item = f"({item})"
        return item + _quantifier(pattern.min, pattern.max)
    if isinstance(pattern, ast.TokenPattern):
        prefix = ("@" if pattern.target else "@1 " if pattern.keyword else "") + (
            "" if pattern.label is None else _name(pattern.label) + ":"
        )
        body = "" if pattern.condition is None else _condition(pattern.condition)
        if pattern.lookahead:  # CQP's lexer would read "a.upos:" as a label: a name keeps a space before ":]"
            return f"{prefix}[:{body}{' ' if body[-1:].isalnum() or body[-1:] == '_' else ''}:]"
        return f"{prefix}[{body}]"
    if isinstance(pattern, ast.StructuralTag):
        name = _name(pattern.attribute, reserved_ok=True)
        if name in ANCHOR_TAGS:
            raise QuerySyntaxError(f"<{name}> would be read by CQP as an anchor point")
        if pattern.closing:
            if pattern.test is not None:
                raise QuerySyntaxError("a closing tag cannot test a value")
            return f"</{name}>"
        if pattern.test is None:
            return f"<{name}>"
        operator = "!=" if pattern.test.negated else "="
        return f"<{name}{operator}{_value(pattern.test.value)}>"
    assert_never(pattern)


def _quantifier(low: int, high: int | None) -> str:
    if low < 0 or (high is not None and high < low):
        raise QuerySyntaxError(f"invalid repetition bounds {{{low},{high}}}")
    if high is None:
        return {0: "*", 1: "+"}.get(low, f"{{{low},}}")
    if (low, high) == (0, 1):
        return "?"
    return f"{{{low}}}" if low == high else f"{{{low},{high}}}"


def _at_least_two(items: tuple[_T, ...]) -> tuple[_T, ...]:
    if len(items) < 2:
        raise QuerySyntaxError("a sequence, alternation or Boolean operator needs two operands")
    return items


# ------------------------------------------------------------------ conditions


def _condition(condition: ast.Condition) -> str:
    if isinstance(condition, ast.AttributeTest):
        operator = "!=" if condition.negated else "="
        this = "_." if condition.this else ""
        return f"{this}{_name(condition.attribute)}{operator}{_value(condition.value)}"
    if isinstance(condition, ast.AttributeComparison):
        operator = "!=" if condition.negated else "="
        return f"{_name(condition.left)}{operator}{_name(condition.right)}"
    if isinstance(condition, ast.RegionBound):
        return f"{'rbound' if condition.right else 'lbound'}({_name(condition.attribute)})"
    if isinstance(condition, ast.LabelComparison):
        return _comparison(condition.left, condition.negated, condition.right)
    if isinstance(condition, ast.Not):
        return _negation(_condition(condition.operand), isinstance(condition.operand, ast.And | ast.Or))
    if isinstance(condition, ast.And):
        return _conjunction([(_condition(op), isinstance(op, ast.Or)) for op in _at_least_two(condition.operands)])
    if isinstance(condition, ast.Or):
        return " | ".join(_condition(op) for op in _at_least_two(condition.operands))
    assert_never(condition)


def _negation(operand: str, compound: bool) -> str:
    """``!x``, with parentheses around an ``&`` or ``|`` operand (``!`` binds tighter)."""
    return f"!({operand})" if compound else f"!{operand}"


def _conjunction(operands: list[tuple[str, bool]]) -> str:
    """``a & b``, with parentheses around each operand that is an ``|`` (``&`` binds tighter)."""
    return " & ".join(f"({text})" if disjunction else text for text, disjunction in operands)


# ------------------------------------------------------------------ global constraint


def _label_ref(ref: ast.LabelRef) -> str:
    if ref.label == "":  # a bare attribute of the token itself, inside a token
        return _name(ref.attribute)
    label = ref.label if ref.label in ast.SPECIAL_LABELS or ref.label == "_" else _name(ref.label)
    return f"{label}.{_name(ref.attribute, reserved_ok=True)}"


def _comparison(left: ast.LabelRef, negated: bool, right: ast.LabelRef | ast.RegexValue) -> str:
    """``a.lemma = b.lemma``, ``a.pos != "NN"``: in a token (``LabelComparison``) or the constraint."""
    rhs = _label_ref(right) if isinstance(right, ast.LabelRef) else _value(right)
    return f"{_label_ref(left)}{'!=' if negated else '='}{rhs}"


def _constraint(constraint: ast.Constraint) -> str:
    if isinstance(constraint, ast.Comparison):
        return _comparison(constraint.left, constraint.negated, constraint.right)
    if isinstance(constraint, ast.ConstraintNot):
        operand = constraint.operand
        compound = isinstance(operand, ast.ConstraintAnd | ast.ConstraintOr | ast.NumericComparison)
        return _negation(_constraint(operand), compound)
    if isinstance(constraint, ast.ConstraintAnd):
        operands = _at_least_two(constraint.operands)
        return _conjunction([(_constraint(op), isinstance(op, ast.ConstraintOr)) for op in operands])
    if isinstance(constraint, ast.ConstraintOr):
        return " | ".join(_constraint(op) for op in _at_least_two(constraint.operands))
    if isinstance(constraint, ast.NumericComparison):
        if constraint.operator not in ("=", "!=", "<", ">", "<=", ">="):
            raise QuerySyntaxError(f"{constraint.operator!r} is not a comparison operator")
        return f"{_number(constraint.left)} {constraint.operator} {_number(constraint.right)}"
    if isinstance(constraint, ast.Exists):
        if constraint.attribute is None:
            return _argument(constraint.label)
        return _label_ref(ast.LabelRef(constraint.label, constraint.attribute))
    assert_never(constraint)


def _number(number: int | ast.FunctionCall) -> str:
    if isinstance(number, ast.FunctionCall):
        return f"{_name(number.name, reserved_ok=True)}({', '.join(_argument(a) for a in number.arguments)})"
    if isinstance(number, bool) or not isinstance(number, int) or number < 0:
        raise QuerySyntaxError(f"a number in a constraint must be a non-negative integer, not {number!r}")
    return str(number)


def _argument(argument: str | ast.LabelRef | int) -> str:
    if isinstance(argument, ast.LabelRef):
        return _label_ref(argument)
    if isinstance(argument, str):
        return argument if argument in ast.SPECIAL_LABELS else _name(argument)
    return _number(argument)
