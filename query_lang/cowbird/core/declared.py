"""Analyses of a query's hits declared in one module each (``cowbird.core.analyses.<name>``).

A declaration (:class:`HitAnalysis`) says once what the rest of cowbird needs to know of an analysis
that each partition computes over the hits and the front end merges:

- its own **parameters** (a pydantic model: the public route takes them beside the query's, the node
  gets them in its request), which attribute each names (checked against the corpus before any
  partition is asked), and its **label** and summary (the page's tab, OpenAPI);
- a partition's **answer** (its own fields; the node adds ``partition``, ``query``, ``total`` and
  ``elapsed_ms``) and its **check** against the request and the partition's size;
- the **merge** of the partitions' answers into the **result**, whose ``rows`` are the table the JSON
  pages and the files hold whole (the other fields go into a file's metadata block).

From the declaration follow: the node operation (``operation``: request and response models made
from the parameters and the answer, served at ``POST /v1/<name>`` like every operation of
``cowbird.core.operations``), the search's call (``Analyses.declared``), the public operation
(``GET /api/v1/<name>``: ``cowbird.frontend.operations``, a background analysis with ``stream=1``
and TSV/CSV/XLSX), its route (``cowbird.frontend.routes.declared``), the page's tab (its label; the
controls from the parameters' schema) and the generated API types. What is left to write is the
computation — ``cowbird.engines.analyses.<name>``, registered with the node by ``@computes`` — and
the page module that shows the result (``web/.../static/analysis-<name>.js``).
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, create_model

from cowbird.core import wire
from cowbird.core.analysis_spec import AttributeKind
from cowbird.core.operations import OPERATIONS, Operation, expect

Pa = TypeVar("Pa", bound=BaseModel)
An = TypeVar("An", bound=BaseModel)
Re = TypeVar("Re", bound=BaseModel)


class Answered(BaseModel):
    """What the node adds to every declared analysis's answer (``_Answer``'s fields and its time)."""

    partition: str
    query: str = Field(description="The canonical CQP the node ran.")
    total: int = Field(description="Hits of the query on the partition.")
    elapsed_ms: float


@dataclass(frozen=True)
class Merging:
    """What a merge knows besides the answers: each answering partition's id, first token's global
    position and size, in corpus order, and whether every partition answered."""

    partitions: Sequence[tuple[str, int, int]]
    complete: bool


@dataclass(frozen=True, eq=False)
class HitAnalysis(Generic[Pa, An, Re]):
    """One analysis of a query's hits, declared once (see the module's docstring)."""

    name: str
    label: str
    """The page's tab."""
    summary: str
    merged: str
    """How the partitions' answers become the one answer (said in the OpenAPI description)."""
    parameters: type[Pa]
    answer: type[An]
    result: type[Re]
    check: Callable[[Pa, An, int], None]
    """Refuse a partition's answer that cannot be true (``expect``); the int is the partition's size."""
    merge: Callable[[Pa, Sequence[tuple[str, An]], Merging], Re]
    """The result from the answers of the partitions that answered (partition id, answer), in corpus order."""
    attributes: Callable[[Pa], dict[str, tuple[AttributeKind, str]]] = lambda _: {}
    """The attributes its parameters name: parameter -> (kind, name: a p-attribute, an s-attribute, or
    metadata), checked on the corpus first."""
    operation: Operation[Any, Any] = field(init=False)

    def __post_init__(self) -> None:
        if "rows" not in self.result.model_fields:
            raise TypeError(f"{self.name}: a declared analysis's result has its table as `rows`")
        title = "".join(part.capitalize() for part in self.name.split("_"))
        request = create_model(f"{title}Request", __base__=(wire.QueryRequest, wire.InSubcorpus, self.parameters),
                               __doc__=f"{self.summary} (``POST /v1/{self.name}``)")
        request.model_config = ConfigDict(extra="forbid")
        response = create_model(f"{title}Response", __base__=(Answered, self.answer),
                                __doc__=f"A partition's answer to ``POST /v1/{self.name}``.")
        check = self.check

        def checked(asked: Any, answer: Any, size: int) -> None:
            expect(answer.partition == asked.partition and answer.query == asked.query, "answered another request")
            expect(0 <= answer.total <= size, f"claims {answer.total} hits")
            check(asked, answer, size)

        object.__setattr__(self, "operation", Operation(self.name, request, response, checked, self.summary))

    def row_model(self) -> type[BaseModel]:
        """The model of a row of its table (the type of ``rows``' items)."""
        annotation = self.result.model_fields["rows"].annotation
        (row,) = getattr(annotation, "__args__", (None,))
        assert isinstance(row, type) and issubclass(row, BaseModel), f"{self.name}: rows is a list of a model"
        return row

    def request(self, asked: Pa, **query: Any) -> BaseModel:
        """The node request for a partition: the query's fields (``query``) and its own parameters."""
        request: BaseModel = self.operation.request(**query, **asked.model_dump())
        return request

    def __repr__(self) -> str:
        return f"HitAnalysis({self.name})"


PACKAGE = "cowbird.core.analyses"
_DECLARED: dict[str, HitAnalysis[Any, Any, Any]] = {}


def declare(analysis: HitAnalysis[Pa, An, Re]) -> HitAnalysis[Pa, An, Re]:
    """Add an analysis to the table (each module of ``cowbird.core.analyses`` declares its own)."""
    taken = {o.name for o in OPERATIONS} | set(_DECLARED)
    if analysis.name in taken:
        raise TypeError(f"{analysis!r}: an operation named {analysis.name!r} exists already")
    _DECLARED[analysis.name] = analysis
    return analysis


@functools.cache
def analyses() -> tuple[HitAnalysis[Any, Any, Any], ...]:
    """Every declared analysis, by name: each module of ``cowbird.core.analyses`` imported (once: the
    table is made the first time it is asked for, a node asks it on every request)."""
    package = importlib.import_module(PACKAGE)
    for module in sorted(m.name for m in pkgutil.iter_modules(package.__path__)):
        importlib.import_module(f"{PACKAGE}.{module}")
    return tuple(_DECLARED[name] for name in sorted(_DECLARED))


def all_operations() -> tuple[Operation[Any, Any], ...]:
    """The node's operations: the table of ``cowbird.core.operations`` and every declared analysis's."""
    return OPERATIONS + tuple(a.operation for a in analyses())


def analysis_named(name: str) -> HitAnalysis[Any, Any, Any] | None:
    """The declared analysis of that name (its operation's), if one is."""
    return next((a for a in analyses() if a.name == name), None)
