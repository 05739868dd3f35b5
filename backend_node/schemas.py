"""The wire contract between front end and nodes: request and response models of the node API.

The front end imports these models; a query always travels as CQP text that the front end has
parsed and re-serialised, and the node parses it again before running it.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend_node.engines import DEFAULT_HARD_BOUNDARY, EngineName, Strategy
from cowbird.problems import Problem
from query_lang import MAX_QUERY_LENGTH

EXPORT_BATCH_LINES = 500
"""Lines built and sent together in an export stream (node) and written together (front end)."""

__all__ = [
    "EXPORT_BATCH_LINES",
    "ContextResponse",
    "ContextSpec",
    "CountRequest",
    "CountResponse",
    "ExportRequest",
    "Health",
    "HitsRequest",
    "HitsResponse",
    "Line",
    "PartitionInfo",
    "PartitionList",
    "Problem",
]


class Health(BaseModel):
    status: Literal["ok"] = "ok"
    engine: EngineName
    partitions: int


class PartitionInfo(BaseModel):
    """One served partition (a CWB corpus)."""

    id: str
    size: int = Field(description="Tokens in the partition.")
    p_attributes: list[str]
    s_attributes: list[str]
    meta: list[str] = Field(description="The s-attributes whose regions carry values.")
    engine: EngineName


class PartitionList(BaseModel):
    data: list[PartitionInfo]
    total: int


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid")

    partition: str = Field(description="Partition (corpus id in the node's registry).")
    query: str = Field(min_length=1, max_length=MAX_QUERY_LENGTH, description="Checked CQP query text.")
    strategy: Strategy = "standard"
    hard_boundary: int = Field(DEFAULT_HARD_BOUNDARY, ge=1, le=10_000, description="CQP's HardBoundary (tokens).")


class CountRequest(_Request):
    pass


class CountResponse(BaseModel):
    partition: str
    query: str = Field(description="The canonical CQP the node ran.")
    total: int
    elapsed_ms: float


class ContextSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    tokens: int = Field(default=10, ge=0, description="Tokens of context on each side.")
    region: str | None = Field(default=None, description="Extend the context to the enclosing region (e.g. s).")


class HitsRequest(_Request):
    offset: int = Field(0, ge=0)
    limit: int = Field(100, ge=0)
    indices: list[int] | None = Field(
        None, description="Instead of offset/limit: these hit numbers (0-based, ascending), e.g. for a sample."
    )
    context: ContextSpec = Field(default_factory=ContextSpec)
    show: list[str] = Field(default_factory=list, description="p-attributes shown with each token (word is first).")
    meta: list[str] = Field(default_factory=list, description="s-attributes whose values are reported at each match.")


class ExportRequest(HitsRequest):
    limit: int = Field(10_000, ge=0)


class Line(BaseModel):
    """A KWIC line: positions are local to the partition; tokens are lists of attribute values."""

    match: int
    matchend: int
    target: int | None = None
    left: list[list[str]]
    keyword: list[list[str]]
    right: list[list[str]]
    meta: dict[str, str | None] = Field(
        default_factory=dict, description="Value of each requested s-attribute at the match (None outside regions)."
    )


class HitsResponse(BaseModel):
    partition: str
    query: str
    total: int
    offset: int
    data: list[Line]
    elapsed_ms: float


class ContextResponse(BaseModel):
    partition: str
    cpos: int
    line: Line
