"""cowbird's query languages: the simplified language of Colibri² and checked CQP.

- ``translate(text, ignore_case=False) -> str``: simple query to canonical CQP text.
- ``parse_cqp(text) -> Query``: a CQP query expression to the typed AST (``cqp_ast``).
- ``serialize(query) -> str`` and ``canonical(text) -> str``: the AST back to canonical CQP,
  the only CQP text that is ever sent to a node.

Every failure is a ``QueryError`` (``QuerySyntaxError`` or ``UnsupportedQueryError``) carrying
the offset, line and column of the problem. No Lark object leaves this package.
"""

from cowbird.query.cqp import canonical, parse_cqp
from cowbird.query.cqp_ast import (
    Alternation,
    And,
    AttributeComparison,
    AttributeTest,
    Comparison,
    Condition,
    Constraint,
    ConstraintAnd,
    ConstraintNot,
    ConstraintOr,
    Cooccurrence,
    Exists,
    FunctionCall,
    LabelComparison,
    LabelRef,
    Meet,
    MuTerm,
    MuUnion,
    Not,
    NumericComparison,
    Or,
    Pattern,
    Query,
    RegexValue,
    RegionBound,
    Repetition,
    Sequence,
    StructuralTag,
    Tabular,
    TokenPattern,
    ValueTest,
    reads_past_edges,
)
from cowbird.query.cqp_serialize import serialize
from cowbird.query.errors import QueryError, QuerySyntaxError, UnsupportedQueryError
from cowbird.query.limits import MAX_QUERY_LENGTH, nfc
from cowbird.query.simple import Distance, SimpleQuery, Term, parse_simple, to_cqp, translate, translate_query

__all__ = [
    "reads_past_edges",
    "MAX_QUERY_LENGTH",
    "Alternation",
    "And",
    "AttributeComparison",
    "AttributeTest",
    "Comparison",
    "Condition",
    "Constraint",
    "ConstraintAnd",
    "ConstraintNot",
    "ConstraintOr",
    "Cooccurrence",
    "FunctionCall",
    "Distance",
    "LabelComparison",
    "LabelRef",
    "Meet",
    "MuTerm",
    "MuUnion",
    "Not",
    "NumericComparison",
    "Exists",
    "Or",
    "Pattern",
    "Query",
    "QueryError",
    "QuerySyntaxError",
    "RegexValue",
    "RegionBound",
    "Repetition",
    "Sequence",
    "SimpleQuery",
    "StructuralTag",
    "Tabular",
    "Term",
    "TokenPattern",
    "UnsupportedQueryError",
    "ValueTest",
    "canonical",
    "nfc",
    "parse_cqp",
    "parse_simple",
    "serialize",
    "to_cqp",
    "translate",
    "translate_query",
]
