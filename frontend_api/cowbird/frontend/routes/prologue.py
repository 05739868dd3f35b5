"""The one prologue of the public operations (``operations.py``), applied by the table.

``declared(router, OPERATION)`` registers an operation's route as the table declares it — its path,
parameter and answer models, files and events in the OpenAPI description, its cost class and merge
— and wraps it in the same steps for every operation, in one order:

1. the parameters checked by their model (FastAPI, before the route: ``params.py``), the viewer
   found and the request's visit made (``deps.Visitor``: credential, fair-use key, corpora, nodes);
2. a saved subcorpus (``subcorpus=ID``) expanded into filters (``Visit.subcorpus``), and the
   request classed interactive or background by its operation and estimated cost
   (``Visit.classify``, ``classing.py``): background work is handed over to the background process
   where there is one;
3. ``stream=1`` answered as events where the operation streams its partitions (``_streamed``);
4. the route itself, whose work goes through ``Visit.run`` (or ``Visit.admit`` for a stream): a
   query that may be slow estimated and refused past the deadline (``deps.tiered``), its cost
   afforded on the viewer's day, a place among the viewer's queries, the background turn,
   stopped when the client goes or the deadline passes, the request log told what it searched.

A route declared here takes its visit as ``visit`` and its parameters as ``asked``.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import replace
from typing import Any, TypeVar

from fastapi import APIRouter
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel
from starlette.responses import Response

from cowbird.core.errors import BadParameter, CowbirdError
from cowbird.core.search import PartitionStatus
from cowbird.frontend.events import AnalysisPartition, AnalysisStarted, event
from cowbird.frontend.hits import partition_result
from cowbird.frontend.operations import PublicOperation
from cowbird.frontend.params import DispersionParameters, TableParameters
from cowbird.frontend.routes.deps import Visit, ndjson_line
from cowbird.serving.asgi import hands_over
from cowbird.serving.problems import problem_body

R = TypeVar("R", bound=Callable[..., Awaitable[Any]])


def declared(router: APIRouter, operation: PublicOperation) -> Callable[[R], R]:
    """Register the route of ``operation`` on ``router`` (whose prefix is ``/api/v1``), behind the
    prologue; its docstring goes first in the description, then the table's cost and merge."""

    def register(route: R) -> R:
        signature = inspect.signature(route)
        if "visit" not in signature.parameters or "asked" not in signature.parameters:
            raise TypeError(f"{route.__name__}: a declared route takes its visit as `visit` and its parameters "
                            "as `asked`")
        if router.prefix + f"/{operation.name}" != operation.path:
            raise TypeError(f"{route.__name__}: {operation!r} is served at {operation.path}, not under {router.prefix}")
        answer = _prologue(operation, route)
        told = inspect.getdoc(route) or operation.summary
        router.get(
            f"/{operation.name}", response_model=operation.response, summary=operation.summary,
            description=f"{told}\n\n{operation.about()}",
            responses=operation.responses(), openapi_extra=operation.openapi_extra(),
            response_class=StreamingResponse if operation.response is None else JSONResponse,
        )(answer)
        return answer

    return register


def _prologue(operation: PublicOperation, route: R) -> R:
    @functools.wraps(route)
    async def answer(*args: Any, **kwargs: Any) -> Any:
        visit: Visit = kwargs["visit"]
        asked = kwargs["asked"] = await visit.subcorpus(kwargs["asked"])
        if operation.stream == "partitions" and asked.stream:
            again = {**kwargs, "asked": asked.model_copy(update={"stream": False})}

            async def classed_then_run(streaming: Visit, answering: Callable[[], bool]) -> BaseModel | Response:
                # classed inside the stream's work: its events start after FIRST_EVENT_SECONDS even while
                # the estimate runs (then it can no longer be handed over, and runs here)
                handed_over = await streaming.classify(operation, asked, answering)
                if handed_over is not None:
                    return handed_over
                result: BaseModel | Response = await route(*args, **{**again, "visit": streaming})
                return result

            return await _streamed(asked, visit, classed_then_run)
        handed_over = await visit.classify(operation, asked)
        if handed_over is not None:
            return handed_over
        return await route(*args, **kwargs)

    return answer  # type: ignore[return-value]


FIRST_EVENT_SECONDS = 1.0
"""A streamed analysis's ``started`` event comes when the first partition answers, or after this long."""


async def _streamed(asked: TableParameters | DispersionParameters, visit: Visit,
                    work: Callable[[Visit, Callable[[], bool]], Awaitable[BaseModel | Response]]) -> Response:
    """An analysis as NDJSON events: ``started``, a ``partition`` event as each partition answers (or
    fails), then the ``result`` (the plain answer) or an ``error``. What fails before any partition
    has answered or ``FIRST_EVENT_SECONDS`` have passed (a bad parameter, an unknown attribute) is a
    problem answer, as without stream; a long analysis starts its stream by then all the same."""
    if asked.format != "json":
        raise BadParameter(f"stream=1 answers JSON events; format={asked.format} is a file: ask for one or the other")
    partitions = len(visit.corpus(asked.corpus).partitions)
    answers: list[PartitionStatus[Any]] = []
    arrived = asyncio.Event()

    def report(status: PartitionStatus[Any]) -> None:
        answers.append(status)
        arrived.set()

    # the work reports each partition's answer; the stream's response watches the client
    answering = False
    task = asyncio.ensure_future(work(replace(visit, progress=report, streamed=True), lambda: answering))
    waiter = asyncio.ensure_future(arrived.wait())
    first: list[asyncio.Future[Any]] = [task, waiter]
    await asyncio.wait(first, timeout=FIRST_EVENT_SECONDS, return_when=asyncio.FIRST_COMPLETED)
    waiter.cancel()
    if not answers and task.done():
        result = task.result()  # its problem, as a plain answer (raises), or a result without partitions
        if isinstance(result, Response) and hands_over({"type": "http.response.start",
                                                        "headers": result.raw_headers}):
            return result  # classed background before anything was sent: handed over
    answering = True
    return StreamingResponse(_analysis_events(task, answers, arrived, partitions), media_type="application/x-ndjson",
                             headers={"Cache-Control": "no-store"})


async def _analysis_events(task: asyncio.Future[BaseModel | Response], answers: list[PartitionStatus[Any]],
                           arrived: asyncio.Event, partitions: int) -> AsyncIterator[bytes]:
    sent = 0
    try:
        yield ndjson_line(event(AnalysisStarted(event="started", partitions=partitions)))
        while True:
            while sent < len(answers):  # every answer is in before the task ends: it reports synchronously
                status = answers[sent]
                sent += 1
                yield ndjson_line(event(AnalysisPartition(
                    event="partition", partition=partition_result(status), done=sent, partitions=partitions,
                    failed=[s.partition.id for s in answers[:sent] if s.failure is not None])))
            if task.done():
                break
            arrived.clear()
            waiter = asyncio.ensure_future(arrived.wait())
            either: list[asyncio.Future[Any]] = [task, waiter]
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
            waiter.cancel()
        result = task.result()
        assert isinstance(result, BaseModel)  # format=json
        yield ndjson_line({"event": "result", **result.model_dump(mode="json")})
    except CowbirdError as error:
        yield ndjson_line({"event": "error", **problem_body(error)})
    finally:
        task.cancel()


