"""``GET /api/v1/corpora``: the corpora the user may see."""

from __future__ import annotations

from fastapi import APIRouter

from cowbird.frontend.routes.deps import Corpora, CurrentUser
from cowbird.frontend.schemas import CorpusList

router = APIRouter(prefix="/api/v1", tags=["corpora"])


@router.get("/corpora", response_model=CorpusList)
async def list_corpora(user: CurrentUser, catalogue: Corpora) -> CorpusList:
    data = [corpus.summary() for corpus in catalogue.visible(user)]
    return CorpusList(data=data, total=len(data))
