"""Static links: ``GET /ref/{corpus}/{position}`` (a page) and ``GET /api/v1/ref/...`` (its JSON twin)."""

from __future__ import annotations

import datetime
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response
from fastapi.responses import HTMLResponse

from cowbird.core.archives import DATE_COLUMNS, parse_date
from cowbird.core.errors import BadParameter, DeadlinePassed, NodesUnavailable, NotFound, OutOfRange
from cowbird.core.wire import Line
from cowbird.frontend.caller import Caller
from cowbird.frontend.corpora import CorpusEntry
from cowbird.frontend.fanout import NodeClient, NodeFailure
from cowbird.frontend.links import public_base, ref_path
from cowbird.frontend.params import Position, RefParameters
from cowbird.frontend.routes.deps import Corpora, CurrentUser, Quota, until_disconnected
from cowbird.frontend.schemas import RefResult, RefText, WebContext
from cowbird.frontend.state import frontend_state

router = APIRouter(tags=["static links"])


def _text(line: Line, window: int | None = None) -> RefText:
    """The line's words; with ``window``, at most that many tokens each side (the nearest)."""
    left, right = line.left, line.right
    if window is not None:
        left, right = left[max(0, len(left) - window):], right[:window]
    return RefText(left=" ".join(t[0] for t in left), match=" ".join(t[0] for t in line.keyword),
                   right=" ".join(t[0] for t in right))


DOCUMENT_REGION = "text"
"""The s-attribute of a corpus's documents (COW's and cowbird's ``<text>``): the context of a static
link stays inside it, and a position outside any of them is said to be so."""
WINDOW = 40
DEFAULT_CITATION = "{title}, {positions}. {link}{source}{crawled} (retrieved from cowbird on {date})"
"""The citation unless the corpus has its own (``[[corpora]] citation``): the positions of the whole
match, the text's crawl date where the corpus has one, and the day the reader took it from cowbird."""
CRAWL_DATES = ("text_crawl_date", "text_crawldate", "text_crawled")
"""The s-attributes taken as the text's crawl date, unless ``[calf] date_attribute`` names one
(a year or a last modification is not a crawl date: those stay in the metadata table)."""


def crawl_date(meta: dict[str, str | None], named: str = "") -> str | None:
    """The text's crawl date as the corpus has it: ``[calf] date_attribute`` when set (the date Calf
    looks for captures around), else the first of ``CRAWL_DATES`` the text has."""
    return next((meta[name] for name in ((named,) if named else CRAWL_DATES) if meta.get(name)), None)


async def resolve(request: Request, corpus: CorpusEntry, position: int, end: int | None = None) -> RefResult:
    if position < 0:
        raise OutOfRange(f"position {position} is outside corpus {corpus.name}")
    partition, local = corpus.locate(position)
    if end is not None and not position <= end < partition.offset + partition.size:
        raise BadParameter(
            f"end={end}: the match end must be at or after position {position} and in the same partition "
            f"(at most {partition.offset + partition.size - 1})"
        )
    local_end = None if end is None or end == position else end - partition.offset
    nodes: NodeClient = frontend_state(request).nodes
    sentence_region = "s" if "s" in corpus.s_attributes else None
    document = DOCUMENT_REGION if DOCUMENT_REGION in corpus.s_attributes else None
    keyword = {} if local_end is None else {"end": local_end}
    try:
        sentence = await nodes.context(partition, local, tokens=0 if sentence_region else 15, region=sentence_region,
                                       meta=[*corpus.meta, *([document] if document else [])], **keyword)
        # one token more than shown each side: whether the text goes on beyond the context shown
        around = await nodes.context(partition, local, tokens=WINDOW + 1, region=document, **keyword)
    except NodeFailure as failure:
        raise NodesUnavailable(f"the partition holding position {position} is not reachable: {failure.public()}",
                               headers={"Retry-After": "10"}) from failure
    meta = {k: v for k, v in sentence.line.meta.items() if k != document}
    outside = document is not None and sentence.line.meta.get(document) is None
    url = next((v for k, v in meta.items() if k.endswith("_url") and v), "")
    today = datetime.date.today().isoformat()
    base = public_base(request)
    link = base + ref_path(corpus.name, position, end)
    matchend = position if end is None else end
    positions = f"position {position}" if matchend == position else f"positions {position}–{matchend}"
    crawled = crawl_date(meta, frontend_state(request).settings.calf.date_attribute)
    template = corpus.config.citation or DEFAULT_CITATION
    citation = template.format(title=corpus.config.title or corpus.name, position=position, positions=positions,
                               link=link, source=f", source: {url}" if url else "", date=today, url=url,
                               crawled=f", crawled {crawled}" if crawled else "")
    return RefResult(
        corpus=corpus.name, title=corpus.config.title, position=position, matchend=matchend, positions=positions,
        crawl_date=crawled, retrieved=today, partition=partition.id,
        sentence=_text(sentence.line), context=_text(around.line, WINDOW), meta=meta, citation=citation, link=link,
        more_before=len(around.line.left) > WINDOW, more_after=len(around.line.right) > WINDOW,
        note=f"position {position} is not inside any text of {corpus.name}: it has no document metadata"
        if outside else None,
    )


Ref = Annotated[RefParameters, Query()]


@router.get("/api/v1/ref/{corpus}/{position}", response_model=RefResult)
async def ref_json(
    request: Request, corpus: str, position: Position, user: CurrentUser, catalogue: Corpora, asked: Ref
) -> RefResult:
    return await resolve(request, catalogue.get(corpus, user), position, asked.end)


@router.get("/ref/{corpus}/{position}", response_class=HTMLResponse)
async def ref_page(
    request: Request, corpus: str, position: Position, user: CurrentUser, catalogue: Corpora, asked: Ref
) -> HTMLResponse:
    ref = await resolve(request, catalogue.get(corpus, user), position, asked.end)
    templates = frontend_state(request).templates
    calf = frontend_state(request).settings.calf.enabled and any(k.endswith("_url") and v for k, v in ref.meta.items())
    response: HTMLResponse = templates.TemplateResponse(
        request, "ref.html", {"ref": ref, "calf": calf, "before": _outside(ref.context.left, ref.sentence.left, True),
                              "after": _outside(ref.context.right, ref.sentence.right, False)})
    return response


def _outside(context: str, sentence: str, before: bool) -> str:
    """The words of the context before (or after) the sentence, so that the page shows the sentence
    once, in its context; nothing when the sentence reaches further than the context window."""
    if not sentence:
        return context
    if before:
        return context[: -len(sentence)].rstrip() if context == sentence or context.endswith(" " + sentence) else ""
    return context[len(sentence):].lstrip() if context == sentence or context.startswith(sentence + " ") else ""


@router.get("/api/v1/ref/{corpus}/{position}/web", response_model=WebContext)
async def ref_on_the_web(
    request: Request, response: Response, corpus: str, position: Position, user: CurrentUser, quota: Quota,
    catalogue: Corpora, asked: Ref,
) -> WebContext:
    """Calf for one static link: the page of the hit's text is fetched (public addresses only),
    the sentence found in it — else in the configured web archives' captures of the page nearest the
    text's crawl date (``[calf] archives``, ``date_attribute``) — and its context returned. Off unless
    ``[calf] enabled``. It runs as one of the viewer's queries at once (fair use: 429 over the limit,
    as ``/api/v1/query``); each page fetch has a deadline, and a client that goes away stops it."""
    settings = frontend_state(request).settings
    if not settings.calf.enabled:
        raise NotFound("finding sentences on the web is not enabled on this server ([calf] enabled)")
    key = quota.key(user, request)
    await quota.room(user, key, request)
    with quota.running(user, key):
        ref = await resolve(request, catalogue.get(corpus, user), position, asked.end)
        url = next((v for k, v in ref.meta.items() if k.endswith("_url") and v), "")
        if not url:
            raise NotFound(f"position {position} has no URL in its metadata to look on")
        sentence = " ".join(part for part in (ref.sentence.left, ref.sentence.match, ref.sentence.right) if part)
        calf = frontend_state(request).calf
        assert calf is not None  # made in the lifespan when [calf] enabled
        named = settings.calf.date_attribute
        dated = named or next((name for name in DATE_COLUMNS if ref.meta.get(name)), "")
        when = parse_date(str(ref.meta.get(dated) or "")) if dated else None
        deadline = settings.limits.deadline  # the page, the search engine and the archives together
        from cowbird.calf.core import core_of  # (Calf is loaded: [calf] enabled)

        core = core_of(ref.sentence.left, ref.sentence.match)  # found only with the hit's own words
        try:
            outcome = await until_disconnected(request, Caller(), calf.line(url, sentence, core=core, when=when),
                                               deadline)
        except DeadlinePassed:
            response.headers.update(quota.headers(user, key))
            return WebContext(status="fetch_error", score=None, source_url=url, sentence=sentence, left="", right="",
                              detail=f"the page, the search engine and the web archives did not answer within "
                                     f"{deadline:g} s ([limits] deadline)")
    response.headers.update(quota.headers(user, key))
    return WebContext(status=outcome.status, score=outcome.score, source_url=outcome.source_url, sentence=sentence,
                      left=outcome.left, right=outcome.right, detail=outcome.detail, page_text=outcome.page_text,
                      source=outcome.source, capture_date=outcome.capture_date, capture_url=outcome.capture_url)
