"""``GET /api/v1/context/{corpus}/{position}``: one concordance line widened in place — more tokens
each side, the whole sentence or paragraph — without leaving the concordance (CQPweb's, NoSketch
Engine's and Korp's "more context")."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request

from cowbird.core.errors import BadParameter, NodesUnavailable, OutOfRange, UnknownAttribute
from cowbird.core.search import no_attribute
from cowbird.core.wire import MAX_KEYWORD_TOKENS
from cowbird.frontend.fanout import NodeClient, NodeFailure
from cowbird.frontend.params import LineContextParameters, Position, split
from cowbird.frontend.routes.deps import Corpora, CurrentUser
from cowbird.frontend.routes.ref import DOCUMENT_REGION
from cowbird.frontend.schemas import LineContext, RefText
from cowbird.frontend.state import frontend_state

router = APIRouter(prefix="/api/v1", tags=["static links"])


@router.get("/context/{corpus}/{position}", response_model=LineContext)
async def line_context(request: Request, corpus: str, position: Position, user: CurrentUser, catalogue: Corpora,
                       asked: Annotated[LineContextParameters, Query()]) -> LineContext:
    """The hit at ``position`` (to ``end``) with ``tokens`` of context each side, inside ``region``
    (the sentence, the paragraph; by default the text): what the concordance line shows when widened."""
    target = catalogue.get(corpus, user)
    widest = frontend_state(request).settings.limits.max_line_context
    if asked.tokens > widest:
        raise BadParameter(f"tokens={asked.tokens}: a line is widened to at most {widest} tokens each side")
    region = asked.region or (DOCUMENT_REGION if DOCUMENT_REGION in target.s_attributes else None)
    if region == "none":  # tokens each side across texts, past the partition's edges into its neighbours' tokens
        region = None
    elif region is not None and region not in target.s_attributes:
        raise UnknownAttribute(f"region={region}: {no_attribute(target, 's', region)}")
    shown = [a for a in split(asked.show) if a != "word"]
    for name in shown:
        if name not in target.p_attributes:
            raise UnknownAttribute(f"show={name}: {no_attribute(target, 'p', name)}")
    if not 0 <= position < target.size:
        raise OutOfRange(f"position {position} is outside corpus {target.name} (0 to {target.size - 1})")
    partition, local = target.locate(position)
    end = position if asked.end is None else asked.end
    if not position <= end < partition.offset + partition.size:
        raise BadParameter(f"end={end}: the match end must be at or after position {position} and in the same "
                           f"partition (at most {partition.offset + partition.size - 1})")
    if end - position > MAX_KEYWORD_TOKENS:
        raise BadParameter(f"end={end}: a match widened in place spans at most {MAX_KEYWORD_TOKENS:,} tokens "
                           f"(at most end={position + MAX_KEYWORD_TOKENS})")
    marks = [name for name in BOUNDARIES if name in target.s_attributes]
    nodes: NodeClient = frontend_state(request).nodes
    try:  # one token more each side than shown: whether the region goes on
        answer = await nodes.context(partition, local, tokens=asked.tokens + 1, region=region, show=shown,
                                     end=end - partition.offset, marks=marks)
    except NodeFailure as failure:
        raise NodesUnavailable(f"the partition holding position {position} is not reachable: {failure.public()}",
                               headers={"Retry-After": "10"}) from failure
    line = answer.line
    dropped = max(0, len(line.left) - asked.tokens)  # the token more each side is not shown
    left, right = line.left[dropped:], line.right[:asked.tokens]
    shown_length = len(left) + len(line.keyword) + len(right)
    breaks = {name: [k - dropped for k in at if 0 < k - dropped < shown_length] for name, at in line.breaks.items()}

    def words(tokens: list[list[str]]) -> str:
        return " ".join(t[0] for t in tokens)

    return LineContext(
        corpus=target.name, position=position, matchend=end, region=region, tokens=asked.tokens,
        attributes=["word", *shown], left=left, match=line.keyword, right=right,
        text=RefText(left=words(left), match=words(line.keyword), right=words(right)),
        more_before=len(line.left) > asked.tokens, more_after=len(line.right) > asked.tokens, breaks=breaks)


BOUNDARIES = ("text", "s")
"""The regions whose boundaries a widened line marks (where the corpus has them)."""
