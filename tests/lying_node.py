"""A node that lies: a real HTTP process that forwards every request to a real node and alters some
of its answers, the way the attack of issue 63 did.

``python -m tests.lying_node PORT UPSTREAM`` listens on 127.0.0.1:PORT and forwards to UPSTREAM.
It tells the truth until told otherwise: ``POST /lie`` with ``{"lie": NAME, "partition": ID}``
makes it tell lie NAME (one of :data:`LIES`) in every answer about partition ID, and
``{"lie": null}`` makes it honest again; ``GET /lie`` says how many answers it altered so far.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

Json = dict[str, Any]
Lie = tuple[str, Callable[[Json, Json], Json | None]]
"""The node route a lie alters, and how: the request and the true answer to the answer sent (None:
this answer is left true)."""


def _sorted_twice(request: Json, answer: Json) -> Json | None:
    """A sorted page with its 9th hit sent again in place of the 10th (the real 10th missing)."""
    if request.get("sort") is None or len(answer["data"]) < 10:
        return None
    data = list(answer["data"])
    data[9] = data[8]
    return {**answer, "data": data}


def _plus(*fields: str, by: int = 1) -> Callable[[Json, Json], Json]:
    def change(request: Json, answer: Json) -> Json:
        return {**answer, **{field: answer[field] + by for field in fields}}
    return change


LIES: dict[str, Lie] = {
    "sorted page: a hit twice": ("/v1/hits", _sorted_twice),
    "count -1": ("/v1/count", _plus("total", by=-1)),
    "count +1000": ("/v1/count", _plus("total", by=1000)),
    "collocations: total +1": ("/v1/cooccurrence", _plus("total")),
    "collocations: total -1": ("/v1/cooccurrence", _plus("total", by=-1)),
    "collocations: window tokens +1": ("/v1/cooccurrence", _plus("context_tokens")),
    "collocations: hit tokens +1": ("/v1/cooccurrence", _plus("node_tokens")),
    "collocations: total and hit tokens +1": ("/v1/cooccurrence", _plus("total", "node_tokens")),
    "frequency: hits without a match": ("/v1/frequency", _plus("total", "unset")),
}
"""Every lie the stand-in tells, by name."""
NEXT_FOR_LAST = "sorted page: the next hit for the last"
"""And one more, which asks the node for more than it was asked: a sorted page whose last hit is the
one after it (in order, each once, but not the hit at that rank)."""


def create_app(upstream: str) -> Starlette:
    state: Json = {"lie": None, "partition": None, "told": 0}
    client = httpx.AsyncClient(base_url=upstream, timeout=120)

    async def control(request: Request) -> Response:
        if request.method == "POST":
            asked = await request.json()
            if asked.get("lie") is not None and asked["lie"] not in (*LIES, NEXT_FOR_LAST):
                return JSONResponse({"detail": f"no lie named {asked['lie']!r}"}, status_code=400)
            state.update(lie=asked.get("lie"), partition=asked.get("partition"), told=0)
        return JSONResponse(state)

    async def forward(request: Request) -> Response:
        body = await request.body()
        headers = {k: v for k, v in request.headers.items() if k.lower() not in ("host", "content-length")}
        real = await client.request(request.method, request.url.path, params=request.url.query, content=body,
                                    headers=headers)
        passed = {k: v for k, v in real.headers.items()
                  if k.lower() not in ("content-length", "content-encoding", "transfer-encoding", "connection")}
        if state["lie"] == NEXT_FOR_LAST and request.url.path == "/v1/hits" and real.status_code == 200:
            asked = httpx.Response(200, content=body).json()
            page = real.json()
            if asked.get("partition") == state["partition"] and asked.get("sort") is not None and page["data"]:
                following = {**asked, "offset": asked.get("offset", 0) + len(page["data"]), "limit": 1}
                beyond = (await client.post("/v1/hits", json=following, headers=headers)).json()["data"]
                if beyond:
                    state["told"] += 1
                    return JSONResponse({**page, "data": [*page["data"][:-1], *beyond]})
        lie = LIES.get(state["lie"] or "")
        if lie is not None and request.url.path == lie[0] and real.status_code == 200 and body:
            asked = httpx.Response(200, content=body).json()
            if asked.get("partition") == state["partition"]:
                altered = lie[1](asked, real.json())
                if altered is not None:
                    state["told"] += 1
                    return JSONResponse(altered)
        return Response(real.content, status_code=real.status_code, headers=passed)

    return Starlette(routes=[Route("/lie", control, methods=["GET", "POST"]),
                             Route("/{path:path}", forward, methods=["GET", "POST", "PUT", "DELETE", "HEAD"])])


def main(argv: list[str]) -> None:
    port, upstream = int(argv[0]), argv[1]
    uvicorn.run(create_app(upstream), host="127.0.0.1", port=port, log_level="warning")


if __name__ == "__main__":
    main(sys.argv[1:])
