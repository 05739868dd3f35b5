"""Static links: ``GET /ref/{corpus}/{position}`` (a page) and ``GET /api/v1/ref/...`` (its JSON twin)."""

from __future__ import annotations

import datetime

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from backend_node.schemas import Line
from cowbird.errors import OutOfRange
from frontend_api.corpora import CorpusEntry
from frontend_api.errors import NodesUnavailable
from frontend_api.fanout import NodeClient, NodeFailure
from frontend_api.routes.deps import Corpora, CurrentUser
from frontend_api.schemas import RefResult, RefText

router = APIRouter(tags=["static links"])


def _text(line: Line) -> RefText:
    return RefText(left=" ".join(t[0] for t in line.left), match=" ".join(t[0] for t in line.keyword),
                   right=" ".join(t[0] for t in line.right))


async def resolve(request: Request, corpus: CorpusEntry, position: int) -> RefResult:
    if position < 0:
        raise OutOfRange(f"position {position} is outside corpus {corpus.name}")
    partition, local = corpus.locate(position)
    nodes: NodeClient = request.app.state.nodes
    sentence_region = "s" if "s" in corpus.s_attributes else None
    try:
        sentence = await nodes.context(partition, local, tokens=0 if sentence_region else 15,
                                       region=sentence_region, meta=corpus.meta)
        around = await nodes.context(partition, local, tokens=40)
    except NodeFailure as failure:
        raise NodesUnavailable(f"the partition holding position {position} is not reachable: {failure}",
                               headers={"Retry-After": "10"}) from failure
    meta = sentence.line.meta
    url = next((v for k, v in meta.items() if k.endswith("_url") and v), "")
    today = datetime.date.today().isoformat()
    base = request.app.state.settings.public_url.rstrip("/") or str(request.base_url).rstrip("/")
    link = f"{base}/ref/{corpus.name}/{position}"
    template = corpus.config.citation or "{title}, position {position}. {link}{source} (accessed {date})"
    citation = template.format(title=corpus.config.title or corpus.name, position=position, link=link,
                               source=f", source: {url}" if url else "", date=today, url=url)
    return RefResult(
        corpus=corpus.name, title=corpus.config.title, position=position, partition=partition.id,
        sentence=_text(sentence.line), context=_text(around.line), meta=meta, citation=citation, link=link,
    )


@router.get("/api/v1/ref/{corpus}/{position}", response_model=RefResult)
async def ref_json(request: Request, corpus: str, position: int, user: CurrentUser, registry: Corpora) -> RefResult:
    return await resolve(request, registry.get(corpus, user.name), position)


@router.get("/ref/{corpus}/{position}", response_class=HTMLResponse)
async def ref_page(
    request: Request, corpus: str, position: int, user: CurrentUser, registry: Corpora
) -> HTMLResponse:
    ref = await resolve(request, registry.get(corpus, user.name), position)
    templates = request.app.state.templates
    response: HTMLResponse = templates.TemplateResponse(request, "ref.html", {"ref": ref})
    return response
