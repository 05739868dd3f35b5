"""Global constraints (``:: match.text_genre="weblog" & a.lemma!="be"``), vectorised over matches.

``label.attribute`` reads a p-attribute at the label's position, or the annotation of the region of
an s-attribute containing it. As in CQP, any comparison involving an unset label is false; a label
(or a label's attribute) standing alone holds where it is set (and, for an s-attribute, inside a
region). A lookahead that compares labels (``[:word = a.word:]``) at a partition's last token looks
at the position just past it (the partition's size): there ``_`` is the next partition's first token
(``NativeCorpus.next_token``), its values read from ``neighbours.json``.
"""

from __future__ import annotations

import re
from typing import assert_never

import numpy as np
import numpy.typing as npt

from cowbird.core.errors import UnknownAttribute
from cowbird.engines.native.compile import PredicateCompiler
from cowbird.engines.native.corpus_state import NativeCorpus
from cowbird.engines.results import Cpos
from cowbird.query import (
    Comparison,
    Constraint,
    ConstraintAnd,
    ConstraintNot,
    ConstraintOr,
    Exists,
    FunctionCall,
    LabelRef,
    NumericComparison,
    RegexValue,
)

Bools = npt.NDArray[np.bool_]


class ConstraintEvaluator:
    """Evaluates one global constraint for arrays of label positions."""

    def __init__(self, corpus: NativeCorpus, constraint: Constraint, predicates: PredicateCompiler) -> None:
        self.corpus = corpus
        self.constraint = constraint
        self.predicates = predicates
        self.labels = sorted(self._labels(constraint))
        self._check(constraint)

    def _labels(self, node: Constraint) -> set[str]:
        if isinstance(node, Comparison):
            found = {node.left.label}
            if isinstance(node.right, LabelRef):
                found.add(node.right.label)
            return found
        if isinstance(node, ConstraintNot):
            return self._labels(node.operand)
        if isinstance(node, ConstraintAnd):
            return set().union(*(self._labels(o) for o in node.operands))
        if isinstance(node, ConstraintOr):
            return set().union(*(self._labels(o) for o in node.operands))
        if isinstance(node, NumericComparison):
            return _number_labels(node.left) | _number_labels(node.right)
        if isinstance(node, Exists):
            return {node.label}
        assert_never(node)

    def _check(self, node: Constraint) -> None:
        """Refuse unknown attributes before any work is done."""
        if isinstance(node, Comparison):
            refs = [node.left] + ([node.right] if isinstance(node.right, LabelRef) else [])
            for ref in refs:
                self._check_ref(ref)
        elif isinstance(node, ConstraintNot):
            self._check(node.operand)
        elif isinstance(node, ConstraintAnd):
            for child in node.operands:
                self._check(child)
        elif isinstance(node, ConstraintOr):
            for child in node.operands:
                self._check(child)
        elif isinstance(node, NumericComparison):
            for number in (node.left, node.right):
                if isinstance(number, FunctionCall):
                    for argument in number.arguments:
                        if isinstance(argument, LabelRef):
                            self._check_ref(argument)
                            if number.name == "f" and argument.attribute not in self.corpus.p_attribute_names:
                                raise UnknownAttribute(f"f({argument.label}.{argument.attribute}): f() counts "
                                                       "the values of a positional attribute")
        elif isinstance(node, Exists):
            if node.attribute is not None:
                self._check_ref(LabelRef(node.label, node.attribute))
        else:
            assert_never(node)

    def _check_ref(self, ref: LabelRef) -> None:
        if ref.attribute in self.corpus.p_attribute_names:
            return
        where = f"{ref.label}.{ref.attribute}"
        if not self.corpus.has_s_attribute(ref.attribute):
            raise UnknownAttribute(f"{where}: the corpus has no attribute {ref.attribute!r}")
        if not self.corpus.s(ref.attribute).has_values:
            raise UnknownAttribute(f"{where}: s-attribute {ref.attribute!r} has no values")

    def holds(self, values: dict[str, Cpos]) -> Bools:
        return self._eval(self.constraint, values)

    def _eval(self, node: Constraint, values: dict[str, Cpos]) -> Bools:
        if isinstance(node, Comparison):
            return self._compare(node, values)
        if isinstance(node, ConstraintNot):
            return ~self._eval(node.operand, values)
        if isinstance(node, ConstraintAnd):
            combined = self._eval(node.operands[0], values)
            for operand in node.operands[1:]:
                combined = combined & self._eval(operand, values)
            return combined
        if isinstance(node, ConstraintOr):
            combined = self._eval(node.operands[0], values)
            for operand in node.operands[1:]:
                combined = combined | self._eval(operand, values)
            return combined
        if isinstance(node, NumericComparison):
            left, left_ok = self._number(node.left, values)
            right, right_ok = self._number(node.right, values)
            compared = {"=": np.equal, "!=": np.not_equal, "<": np.less, ">": np.greater,
                        "<=": np.less_equal, ">=": np.greater_equal}[node.operator](left, right)
            return np.asarray(compared & left_ok & right_ok, dtype=np.bool_)
        if isinstance(node, Exists):
            return self._exists(node, values[node.label])
        assert_never(node)

    def _exists(self, node: Exists, where: Cpos) -> Bools:
        """CQP's existence test: the label is set; for an s-attribute, inside one of its regions."""
        found = where >= 0
        if node.attribute is None or node.attribute in self.corpus.p_attribute_names:
            return found
        rows = np.flatnonzero(found)
        beyond = where[rows] >= self.corpus.size  # the next partition's first token
        found[rows[beyond]] = self._next_value(node.attribute) is not None
        rows = rows[~beyond]
        found[rows] = self.corpus.regions(node.attribute).containing(where[rows]) >= 0
        return found

    def _number(self, number: int | FunctionCall, values: dict[str, Cpos]) -> tuple[Cpos, Bools]:
        """A number per row, and whether it is defined there (no unset label, a value that is a number)."""
        rows = len(next(iter(values.values()))) if values else 0
        if not isinstance(number, FunctionCall):
            return np.full(rows, number, dtype=np.int64), np.ones(rows, dtype=np.bool_)
        if number.name in ("distance", "dist", "distabs"):
            (a, a_ok), (b, b_ok) = (self._position(argument, values, rows) for argument in number.arguments)
            distance = b - a
            return (np.abs(distance) if number.name == "distabs" else distance), a_ok & b_ok
        argument = number.arguments[0]
        assert isinstance(argument, LabelRef)
        where = values[argument.label]
        ok = where >= 0
        result = np.zeros(rows, dtype=np.int64)
        if number.name == "f":
            ok &= where < self.corpus.size  # no frequency in the whole corpus for the next partition's token
            ids = self.corpus.ids(argument.attribute, where[ok])
            result[ok] = self.corpus.frequencies(argument.attribute)[ids]
            return result, ok
        strings = self._strings(argument.attribute, where[ok])
        parsed = [_as_int(text) for text in strings]
        defined = np.array([value is not None for value in parsed], dtype=np.bool_)
        result[np.flatnonzero(ok)[defined]] = [value for value in parsed if value is not None]
        ok[np.flatnonzero(ok)[~defined]] = False
        return result, ok

    @staticmethod
    def _position(argument: str | LabelRef | int, values: dict[str, Cpos], rows: int) -> tuple[Cpos, Bools]:
        if isinstance(argument, str):  # CQP: an unset label is position -1 here (distabs(a, a) is 0)
            return values[argument], np.ones(rows, dtype=np.bool_)
        assert isinstance(argument, int)  # the parser allows labels and numbers here
        return np.full(rows, argument, dtype=np.int64), np.ones(rows, dtype=np.bool_)

    def _compare(self, node: Comparison, values: dict[str, Cpos]) -> Bools:
        right = node.right
        if isinstance(right, LabelRef):
            return self._compare_labels(node, right, values)
        if isinstance(right, RegexValue):
            return self._compare_value(node, right, values)
        assert_never(right)

    def _compare_labels(self, node: Comparison, right: LabelRef, values: dict[str, Cpos]) -> Bools:
        """``a.lemma = b.lemma``: string equality of two attributes at two labels."""
        where = values[node.left.label]
        other = values[right.label]
        result = np.zeros(len(where), dtype=np.bool_)
        rows = np.flatnonzero((where >= 0) & (other >= 0))
        left_strings = self._strings(node.left.attribute, where[rows])
        right_strings = self._strings(right.attribute, other[rows])
        equal = np.fromiter((a == b for a, b in zip(left_strings, right_strings, strict=True)), bool, len(rows))
        result[rows] = ~equal if node.negated else equal
        return result

    def _compare_value(self, node: Comparison, right: RegexValue, values: dict[str, Cpos]) -> Bools:
        """``a.lemma = "be"``: the value test's table (lexicon or region values) at the label."""
        where = values[node.left.label]
        result = np.zeros(len(where), dtype=np.bool_)
        rows = np.flatnonzero(where >= 0)
        attribute = node.left.attribute
        beyond = rows[where[rows] >= self.corpus.size]  # the next partition's first token: its string
        if len(beyond):
            rows = rows[where[rows] < self.corpus.size]
            value = self._next_value(attribute)
            if value is not None:  # (outside any region the value is undefined: the comparison is false)
                passed = bool(self.corpus.neighbour_matches(right, [value])[0])
                result[beyond] = passed != node.negated
        if attribute in self.corpus.p_attribute_names:
            table = self.predicates.table(attribute, right)
            matched = table[self.corpus.ids(attribute, where[rows])]
            if self.predicates.unset_passes(attribute, right, table, node.negated):
                result[where < 0] = True
        else:
            region_ok = self.corpus.region_table(attribute, right)
            assert region_ok is not None
            number = self.corpus.regions(attribute).containing(where[rows])
            inside = number >= 0
            rows = rows[inside]  # outside any region the value is undefined: the comparison is false
            matched = region_ok[number[inside]]
        result[rows] = ~matched if node.negated else matched
        return result

    def _next_value(self, attribute: str) -> str | None:
        """The next partition's first token's value of a p-attribute, or its region's of an
        s-attribute (None: in no region, or no next token)."""
        token = self.corpus.next_token
        if token is None:
            return None
        if attribute in self.corpus.p_attribute_names:
            return token.values.get(attribute)
        mark = token.regions.get(attribute)
        return None if mark is None else mark.value

    def _strings(self, attribute: str, cpos: Cpos) -> list[str | None]:
        beyond = cpos >= self.corpus.size
        if beyond.any():  # the position just past the partition: the next partition's first token
            inside = iter(self._strings(attribute, cpos[~beyond]))
            value = self._next_value(attribute)
            return [value if past else next(inside) for past in beyond.tolist()]
        if attribute in self.corpus.p_attribute_names:
            strings = self.corpus.lexicon(attribute).strings
            return [strings[i] for i in self.corpus.ids(attribute, cpos).tolist()]
        s_attr = self.corpus.s(attribute)
        number = self.corpus.regions(attribute).containing(cpos)
        return [s_attr.value(n) if n >= 0 else None for n in number.tolist()]


def _number_labels(number: int | FunctionCall) -> set[str]:
    if not isinstance(number, FunctionCall):
        return set()
    return {a if isinstance(a, str) else a.label for a in number.arguments if isinstance(a, str | LabelRef)}


_LEADING_INT = re.compile(r"[ \t\n\v\f\r]*([+-]?[0-9]+)")


def _as_int(text: str | None) -> int | None:
    """CQP's int(), which is C's atoi(): the digits the value starts with (after blanks and a sign),
    0 when it starts with none ("one", "3.5" is 3), as a 32-bit int; None only outside any region."""
    if text is None:
        return None
    found = _LEADING_INT.match(text)
    if found is None:
        return 0
    value = max(-(2**63), min(2**63 - 1, int(found.group(1))))  # strtol saturates ...
    value &= 0xFFFFFFFF  # ... and atoi's int keeps the low 32 bits
    return value - 2**32 if value >= 2**31 else value
