"""Global constraints (``:: match.text_genre="weblog" & a.lemma!="be"``), vectorised over matches.

``label.attribute`` reads a p-attribute at the label's position, or the annotation of the region of
an s-attribute containing it. As in CQP, any comparison involving an unset label is false.
"""

from __future__ import annotations

from typing import assert_never

import numpy as np
import numpy.typing as npt

from backend_node.engines.errors import UnknownAttribute
from backend_node.engines.native.compile import PredicateCompiler
from backend_node.engines.native.corpus_state import NativeCorpus
from backend_node.engines.results import Cpos
from query_lang import (
    Comparison,
    Constraint,
    ConstraintAnd,
    ConstraintNot,
    ConstraintOr,
    LabelRef,
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
        assert_never(node)

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
        if attribute in self.corpus.p_attribute_names:
            table = self.predicates.table(attribute, right)
            matched = table[self.corpus.ids(attribute, where[rows])]
        else:
            region_ok = self.corpus.region_table(attribute, right)
            assert region_ok is not None
            number = self.corpus.regions(attribute).containing(where[rows])
            inside = number >= 0
            rows = rows[inside]  # outside any region the value is undefined: the comparison is false
            matched = region_ok[number[inside]]
        result[rows] = ~matched if node.negated else matched
        return result

    def _strings(self, attribute: str, cpos: Cpos) -> list[str | None]:
        if attribute in self.corpus.p_attribute_names:
            strings = self.corpus.lexicon(attribute).strings
            return [strings[i] for i in self.corpus.ids(attribute, cpos).tolist()]
        s_attr = self.corpus.s(attribute)
        number = self.corpus.regions(attribute).containing(cpos)
        return [s_attr.value(n) if n >= 0 else None for n in number.tolist()]
