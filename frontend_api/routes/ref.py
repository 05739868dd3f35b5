"""Static links: ``GET /ref/{corpus}/{position}`` (a page) and ``GET /api/v1/ref/...`` (its JSON twin)."""

from __future__ import annotations

import datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from frontend_api.corpora import Corpus
from frontend_api.errors import NodesUnavailable, OutOfRange
from frontend_api.fanout import NodeFailure
from frontend_api.routes.deps import Corpora, CurrentUser

router = APIRouter(tags=["static links"])


def _strings(line: dict[str, Any]) -> dict[str, str]:
    return {part: " ".join(t[0] for t in line[part]) for part in ("left", "right")} | {
        "match": " ".join(t[0] for t in line["keyword"])
    }


async def resolve(request: Request, corpus: Corpus, position: int) -> dict[str, Any]:
    if position < 0:
        raise OutOfRange(f"position {position} is outside corpus {corpus.name}")
    partition, local = corpus.locate(position)
    nodes = request.app.state.nodes
    sentence_region = "s" if "s" in corpus.s_attributes else None
    try:
        sentence = await nodes.context(partition, local, tokens=0 if sentence_region else 15,
                                       region=sentence_region, structure=corpus.annotated)
        around = await nodes.context(partition, local, tokens=40)
    except NodeFailure as failure:
        raise NodesUnavailable(f"the partition holding position {position} is not reachable: {failure}",
                               headers={"Retry-After": "10"}) from failure
    metadata = sentence["line"]["structure"]
    url = next((v for k, v in metadata.items() if k.endswith("_url") and v), "")
    today = datetime.date.today().isoformat()
    base = request.app.state.settings.public_url.rstrip("/") or str(request.base_url).rstrip("/")
    link = f"{base}/ref/{corpus.name}/{position}"
    template = corpus.config.citation or "{title}, position {position}. {link}{source} (accessed {date})"
    citation = template.format(title=corpus.config.title or corpus.name, position=position, link=link,
                               source=f", source: {url}" if url else "", date=today, url=url)
    return {
        "corpus": corpus.name, "title": corpus.config.title, "position": position, "partition": partition.id,
        "sentence": _strings(sentence["line"]), "context": _strings(around["line"]),
        "metadata": metadata, "citation": citation, "link": link,
    }


@router.get("/api/v1/ref/{corpus}/{position}")
async def ref_json(
    request: Request, corpus: str, position: int, user: CurrentUser, registry: Corpora
) -> dict[str, Any]:
    return await resolve(request, registry.get(corpus, user.name), position)


@router.get("/ref/{corpus}/{position}", response_class=HTMLResponse)
async def ref_page(
    request: Request, corpus: str, position: int, user: CurrentUser, registry: Corpora
) -> HTMLResponse:
    ref = await resolve(request, registry.get(corpus, user.name), position)
    templates = request.app.state.templates
    response: HTMLResponse = templates.TemplateResponse(request, "ref.html", {"ref": ref})
    return response
