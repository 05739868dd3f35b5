"""Global constraints (``:: match.text_genre="weblog" & a.lemma!="be"``), vectorised over matches.

``label.attribute`` reads a p-attribute at the label's position, or the annotation of the region of
an s-attribute containing it. As in CQP, any comparison involving an unset label is false.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from backend_node.engines.errors import UnknownAttribute
from backend_node.engines.native.compile import PredicateCompiler
from backend_node.engines.native.corpus_state import NativeCorpus
from query_lang.cqp_ast import (
    Comparison,
    Constraint,
    ConstraintAnd,
    ConstraintNot,
    LabelRef,
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
        return set().union(*(self._labels(o) for o in node.operands))

    def _check(self, node: Constraint) -> None:
        """Refuse unknown attributes before any work is done."""
        if isinstance(node, Comparison):
            refs = [node.left] + ([node.right] if isinstance(node.right, LabelRef) else [])
            for ref in refs:
                if ref.attribute in self.corpus.p_attribute_names:
                    continue
                where = f"{ref.label}.{ref.attribute}"
                if not self.corpus.has_s_attribute(ref.attribute):
                    raise UnknownAttribute(f"{where}: the corpus has no attribute {ref.attribute!r}")
                if not self.corpus.s(ref.attribute).has_values:
                    raise UnknownAttribute(f"{where}: s-attribute {ref.attribute!r} has no values")
            return
        for child in [node.operand] if isinstance(node, ConstraintNot) else list(node.operands):
            self._check(child)

    def holds(self, values: dict[str, npt.NDArray[np.int64]]) -> Bools:
        return self._eval(self.constraint, values)

    def _eval(self, node: Constraint, values: dict[str, npt.NDArray[np.int64]]) -> Bools:
        if isinstance(node, Comparison):
            return self._compare(node, values)
        if isinstance(node, ConstraintNot):
            return ~self._eval(node.operand, values)
        results = [self._eval(o, values) for o in node.operands]
        combined = results[0]
        for r in results[1:]:
            combined = combined & r if isinstance(node, ConstraintAnd) else combined | r
        return combined

    def _compare(self, node: Comparison, values: dict[str, npt.NDArray[np.int64]]) -> Bools:
        where = values[node.left.label]
        result = np.zeros(len(where), dtype=np.bool_)
        is_set = where >= 0
        right = node.right
        if isinstance(right, LabelRef):
            other = values[right.label]
            is_set &= other >= 0
            rows = np.flatnonzero(is_set)
            left_strings = self._strings(node.left.attribute, where[rows])
            right_strings = self._strings(right.attribute, other[rows])
            equal = np.fromiter((a == b for a, b in zip(left_strings, right_strings, strict=True)), bool, len(rows))
            result[rows] = ~equal if node.negated else equal
            return result
        rows = np.flatnonzero(is_set)
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

    def _strings(self, attribute: str, positions: npt.NDArray[np.int64]) -> list[str | None]:
        if attribute in self.corpus.p_attribute_names:
            strings = self.corpus.lexicon(attribute).strings
            return [strings[i] for i in self.corpus.ids(attribute, positions).tolist()]
        s_attr = self.corpus.s(attribute)
        number = self.corpus.regions(attribute).containing(positions)
        return [s_attr.value(n) if n >= 0 else None for n in number.tolist()]
