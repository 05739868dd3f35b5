"""``GET /api/v1/<name>`` for every declared analysis (``cowbird.core.declared``): one route each, made
from its public operation (``operations.DECLARED``) behind the one prologue. The route runs the
search's ``declared`` (every partition asked, the answers merged by the declaration) through
``Visit.run``, and answers a page of the result's rows with its other fields, or the whole table as
a file whose metadata block says the parameters and those fields."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel

from cowbird.core.search import answered_total
from cowbird.frontend.operations import DECLARED, PublicOperation
from cowbird.frontend.routes.analyses import page_size, searched, statuses_of, table_file
from cowbird.frontend.routes.deps import Visit, Visitor  # noqa: F401  (FastAPI resolves "Visitor" here)
from cowbird.frontend.routes.prologue import declared

router = APIRouter(prefix="/api/v1", tags=["analyses"])


def _route(operation: PublicOperation) -> Callable[..., Awaitable[BaseModel | Response]]:
    analysis = operation.declared
    assert analysis is not None and operation.response is not None
    own = set(analysis.parameters.model_fields)
    columns = list(analysis.row_model().model_fields)
    answer = operation.response

    async def route(visit: Visit, asked: Any) -> BaseModel | Response:
        started = time.perf_counter()
        found = searched(visit, asked)
        mine = analysis.parameters.model_validate(asked.model_dump(include=own))
        statuses, result = await visit.run(found.search.declared(analysis, mine), found.search)
        visit.logged(found.corpus.name, answered_total(statuses))
        fields = result.model_dump(exclude={"rows"})
        rows = result.rows[asked.offset:]
        if asked.format != "json":
            if asked.limit is not None:
                rows = rows[:asked.limit]
            return table_file(found, found.search.cqp, analysis.name, asked.format, asked.provenance,
                              {**mine.model_dump(), **fields}, statuses, bool(fields.get("truncated")), columns,
                              [[getattr(row, c) for c in columns] for row in rows])
        limit = page_size(asked.limit, "json", 1000)
        return answer(corpus=found.corpus.name, cqp=found.search.cqp, **statuses_of(statuses),
                      elapsed_ms=round((time.perf_counter() - started) * 1000, 1), offset=asked.offset,
                      rows_total=len(result.rows), **fields, rows=rows[:limit])

    route.__doc__ = analysis.summary
    route.__name__ = analysis.name
    # FastAPI reads the parameters' model from the signature: the operation's
    route.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter("visit", inspect.Parameter.KEYWORD_ONLY, annotation="Visitor"),  # as every route: a string
        inspect.Parameter("asked", inspect.Parameter.KEYWORD_ONLY,
                          annotation=Annotated[operation.parameters, Query()]),
    ])
    return route


for _operation in DECLARED:
    declared(router, _operation)(_route(_operation))
