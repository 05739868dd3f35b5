"""The browser pages: the search page at ``/`` and a short page of HTTP GET examples.

The search page is rendered with the corpora the viewer may see; everything else happens in
the page's ES modules (``web/cowbird/web/static/search-main.js`` and its siblings) against the public
API. The page gets its data from the server as JSON islands (the corpora, the measures' names).
"""

from __future__ import annotations

import json
from typing import Literal, get_args, get_origin
from urllib.parse import urlencode

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse, RedirectResponse
from pydantic.fields import FieldInfo

from cowbird.core.analysis_merge import MEASURE_NAMES
from cowbird.core.errors import CowbirdError
from cowbird.frontend.corpora import CorpusEntry
from cowbird.frontend.links import public_base
from cowbird.frontend.operations import DECLARED
from cowbird.frontend.routes.comparing import date_attribute
from cowbird.frontend.routes.deps import Corpora, CurrentUser
from cowbird.frontend.state import frontend_state
from cowbird.frontend.subcorpora import saved_subcorpus

router = APIRouter(include_in_schema=False)


def _control(name: str, field: FieldInfo) -> dict[str, object]:
    """A control of a declared analysis's tab, from its parameter: a list of the corpus's attributes
    (``x-cowbird-choose``), of the values a ``Literal`` allows, or a whole number, at its default."""
    extra = field.json_schema_extra if isinstance(field.json_schema_extra, dict) else {}
    options = list(get_args(field.annotation)) if get_origin(field.annotation) is Literal else []
    least = next((m.ge for m in field.metadata if isinstance(getattr(m, "ge", None), int)), None)
    return {"name": name, "title": field.title or name.replace("_", " ").capitalize(), "about": field.description or "",
            "choose": extra.get("x-cowbird-choose"), "options": options, "optional": field.default is None,
            "default": "" if field.default is None else str(field.default), "min": least}


def declared_views() -> list[dict[str, object]]:
    """The declared analyses' tabs (``operations.DECLARED``): name, label, the table's columns and the controls."""
    views: list[dict[str, object]] = []
    for operation in DECLARED:
        analysis = operation.declared
        assert analysis is not None
        fields = analysis.row_model().model_fields
        views.append({"name": analysis.name, "label": analysis.label, "columns": list(fields),
                      "headers": [f.title or name.replace("_", " ").capitalize() for name, f in fields.items()],
                      "controls": [_control(n, f) for n, f in analysis.parameters.model_fields.items()]})
    return views


def _script_json(value: object) -> str:
    """JSON that is safe inside <script>: no '<' can close the element."""
    return json.dumps(value, ensure_ascii=False).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


@router.get("/", response_class=HTMLResponse)
async def search_page(request: Request, user: CurrentUser, catalogue: Corpora) -> Response:
    slug = request.query_params.get("subcorpus")
    if slug:  # a link naming a saved subcorpus: the page with its filters (the page itself knows filters only)
        found = await saved_subcorpus(request, user, slug)
        kept = [(k, v) for k, v in request.query_params.multi_items()
                if k not in ("subcorpus", "corpus", "filter", "token")]  # a token is never put into a URL
        filters = [*found.filters, *request.query_params.getlist("filter")]
        query = urlencode([("corpus", found.corpus), *kept, *(("filter", f) for f in filters)])
        return RedirectResponse(f"/?{query}", status_code=303)
    settings = frontend_state(request).settings
    corpora = [corpus.summary() for corpus in catalogue.visible(user)]
    data = [corpus.model_dump(exclude={"partitions"}) for corpus in corpora]
    response: HTMLResponse = frontend_state(request).templates.TemplateResponse(
        request, "search.html",
        {"corpora": corpora, "corpora_json": _script_json(data), "measures_json": _script_json(MEASURE_NAMES),
         "declared": (declared := declared_views()), "declared_json": _script_json(declared),
         "viewer": user,
         "browser_limit": settings.limits.browser_export_limit, "api_limit": settings.limits.api_export_limit,
         "max_context": settings.limits.max_context},
    )  # fmt: skip
    return response


@router.get("/help/api", response_class=HTMLResponse)
async def api_help(request: Request, user: CurrentUser, catalogue: Corpora) -> HTMLResponse:
    corpora = catalogue.visible(user)
    base = public_base(request)
    response: HTMLResponse = frontend_state(request).templates.TemplateResponse(
        request, "api_help.html", {"base": base, "corpus": corpora[0].name if corpora else "CORPUS",
                                   "url_attribute": next((m for m in (corpora[0].meta if corpora else [])
                                                          if m.endswith("_url")), "text_url"),
                                   # the attribute its trends count over (the API's default)
                                   "date_attribute": _dated(corpora[0]) if corpora else "text_year",
                                   # a second corpus the viewer may search with the first, if any
                                   "other_corpus": corpora[1].name if len(corpora) > 1 else "",
                                   # a position inside the corpus for the examples (the middle of it)
                                   "position": corpora[0].size // 2 if corpora else 12345,
                                   # its word sketches' relations, if it has a sketch grammar
                                   "sketches": [v.name for v in corpora[0].grammar.views]
                                   if corpora and corpora[0].grammar is not None else []}
    )
    return response


def _dated(corpus: CorpusEntry) -> str:
    try:
        return date_attribute(corpus, None)
    except CowbirdError:
        return "text_year"
