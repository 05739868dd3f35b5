"""The events of the streamed answers (``stream=1``), one JSON object a line (NDJSON), as models:
the routes write each event from its model, and the OpenAPI description (``x-ndjson`` content of
each streamed route, the models among its components) gives the page's generated types
(``api-types.d.ts``) and any client the same fields.

- ``GET /api/v1/query?stream=1``: :class:`QueryStarted`, a :class:`BackgroundNotice` when it runs
  as background work, then (in corpus order) :class:`QueryPage` and a :class:`QueryCount` per
  partition, then ``result`` (the plain answer with ``"event": "result"``) or ``error`` (a problem's
  members with ``"event": "error"``);
- an analysis with ``stream=1``: :class:`AnalysisStarted`, an :class:`AnalysisPartition` as each
  partition answers (or fails), then ``result`` or ``error``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from cowbird.frontend.schemas import Hit, PartitionResult


class QueryStarted(BaseModel):
    """A streamed search has started."""

    event: Literal["started"]
    corpus: str
    cqp: str = Field(description="The CQP that runs on every partition.")
    partitions: int
    anchors: list[Literal["target", "keyword"]] = Field(description="The anchors the query marks.")
    early: bool = Field(description="Whether the page and the counts come before the result (false: a sorted page, "
                                    "or a sample).")
    background: bool = Field(description="Whether it runs as background work (a background event follows).")


class BackgroundNotice(BaseModel):
    """The search runs as background work (a sorted page deep in the hits, or estimated beyond the
    interactive budget): said before it waits for its turn."""

    event: Literal["background"]
    estimated_seconds: float | None
    reason: str
    message: str


class QueryPage(BaseModel):
    """The page of hits asked for, before every partition has counted (the result's are authoritative)."""

    event: Literal["page"]
    offset: int
    elapsed_ms: float
    hits: list[Hit]


class QueryCount(BaseModel):
    """A partition has counted (or failed): the hits counted so far, a lower bound of the total."""

    event: Literal["count"]
    partition: PartitionResult
    total_at_least: int
    counted: int = Field(description="Partitions counted or failed.")
    partitions: int
    failed: list[str]
    elapsed_ms: float


class AnalysisStarted(BaseModel):
    """A streamed analysis has started."""

    event: Literal["started"]
    partitions: int = Field(description="The corpus's partitions.")


class AnalysisPartition(BaseModel):
    """A partition has answered (or failed)."""

    event: Literal["partition"]
    partition: PartitionResult
    done: int = Field(description="Partitions answered (or failed) so far.")
    partitions: int
    failed: list[str] = Field(description="The partitions that failed so far.")


QUERY_EVENTS: tuple[type[BaseModel], ...] = (QueryStarted, BackgroundNotice, QueryPage, QueryCount)
ANALYSIS_EVENTS: tuple[type[BaseModel], ...] = (AnalysisStarted, AnalysisPartition)


def event(model: BaseModel) -> dict[str, Any]:
    """An event as its line holds it (JSON values)."""
    return model.model_dump(mode="json")
