"""The type/token ratio of the hits per text (or per region of another s-attribute): how many
distinct values of a p-attribute (types: word forms, lemmas) the hits' tokens in each part hold, over
how many tokens — with ``q=[]`` each text's own TTR, with ``[pos="JJ"]`` the variety of its
adjectives. Texts lie whole in one partition (partitions are cut before a ``<text>``), so each
partition's parts are exact and the merge only puts them in order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, Field

from cowbird.core.analysis_spec import AttributeKind
from cowbird.core.declared import HitAnalysis, Merging, declare
from cowbird.core.operations import expect


class TtrParameters(BaseModel):
    parts: str = Field("text", title="Parts", json_schema_extra={"x-cowbird-choose": "s"},
                       description="The s-attribute whose regions are the parts (text).")
    attribute: str = Field("word", title="Types of", json_schema_extra={"x-cowbird-choose": "p"},
                           description="The p-attribute whose distinct values are the types (word, lemma).")
    label: str | None = Field(None, title="Label", json_schema_extra={"x-cowbird-choose": "meta"},
                              description="Metadata shown for each part (text_id, text_url); none: its position.")
    min_size: int = Field(1, ge=1, title="At least (tokens)", description=(
        "Only parts whose hits hold at least this many tokens (a TTR of few tokens says little)."))
    order: Literal["position", "ttr", "tokens"] = Field("position", title="Order", description=(
        "The rows in corpus order, by TTR (lowest first) or by tokens (most first)."))


class TtrPart(BaseModel):
    """A part with hits: where it lies, and the tokens and types of the hits in it."""

    start: int = Field(title="From", description=(
        "The part's first token (in the partition's answer: the partition's own position; in the result: the "
        "corpus's)."))
    end: int = Field(title="To", description="Its last token.")
    label: str | None = Field(description="Its value of the label attribute (none without label=).")
    tokens: int = Field(description="Tokens of the hits in the part (each once, where hits overlap).")
    types: int = Field(description="Distinct values of the attribute among them.")


class TtrAnswer(BaseModel):
    parts: list[TtrPart] = Field(description="The parts with hits, in corpus order.")
    truncated: bool = Field(description="More parts had hits than a node answers (the first ones are given).")


class TtrRow(TtrPart):
    ttr: float = Field(title="TTR", description="types / tokens.")


class TtrResult(BaseModel):
    parts_attribute: str
    attribute: str
    label: str | None = Field(description="The metadata each part is labelled with, if any.")
    parts_with_hits: int = Field(description="Parts holding hits (before min_size).")
    mean_ttr: float | None = Field(description="The mean TTR of the parts in the table (none without any).")
    truncated: bool = Field(description="A partition had more parts with hits than it answers: some are missing.")
    rows: list[TtrRow]


def _attributes(asked: TtrParameters) -> dict[str, tuple[AttributeKind, str]]:
    named: dict[str, tuple[AttributeKind, str]] = {"parts": ("s", asked.parts), "attribute": ("p", asked.attribute)}
    if asked.label is not None:
        named["label"] = ("meta", asked.label)
    return named


def _check(asked: TtrParameters, answer: TtrAnswer, size: int) -> None:
    parts = answer.parts
    expect(all(0 <= p.start <= p.end < size for p in parts), "gives a part outside the partition")
    expect(all(a.end < b.start for a, b in zip(parts, parts[1:], strict=False)), "gives parts out of order or twice")
    expect(all(1 <= p.types <= p.tokens <= p.end - p.start + 1 for p in parts),
           "gives a part with more types than tokens, or more tokens than it holds")
    expect(sum(p.tokens for p in parts) >= len(parts), "gives parts without tokens")


def _merge(asked: TtrParameters, answers: Sequence[tuple[str, TtrAnswer]], merging: Merging) -> TtrResult:
    offsets = {partition: offset for partition, offset, _ in merging.partitions}
    rows = [TtrRow(start=offsets[p] + part.start, end=offsets[p] + part.end, label=part.label, tokens=part.tokens,
                   types=part.types, ttr=part.types / part.tokens)
            for p, answer in answers for part in answer.parts]
    with_hits = len(rows)
    rows = [row for row in rows if row.tokens >= asked.min_size]
    if asked.order == "ttr":
        rows.sort(key=lambda row: (row.ttr, row.start))
    elif asked.order == "tokens":
        rows.sort(key=lambda row: (-row.tokens, row.start))
    mean = sum(row.ttr for row in rows) / len(rows) if rows else None
    return TtrResult(parts_attribute=asked.parts, attribute=asked.attribute, label=asked.label,
                     parts_with_hits=with_hits, mean_ttr=mean,
                     truncated=any(a.truncated for _, a in answers), rows=rows)


TTR = declare(HitAnalysis(
    "ttr", "Type/token", "The type/token ratio of the hits per text (or other region).",
    "each partition's parts are whole (partitions are cut between texts): put in corpus order, then ranked",
    TtrParameters, TtrAnswer, TtrResult, _check, _merge, _attributes))
