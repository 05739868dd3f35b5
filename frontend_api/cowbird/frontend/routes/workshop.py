"""The workshop: crawl and build jobs in the browser and over the API, and publishing their corpora
(docs/workshop.md). ``GET /workshop`` is the page; ``GET/POST /api/v1/jobs``, ``GET /api/v1/jobs/{id}``,
``POST /api/v1/jobs/{id}/stop|resume|publish``, ``DELETE /api/v1/jobs/{id}`` and ``DELETE
/api/v1/corpora/{name}`` are what it calls. Administrators and members of ``[workshop] group`` may use it;
a browser session's changes carry its CSRF token."""

from __future__ import annotations

import asyncio
import json
import re
import secrets
import shutil
from typing import Any, Literal
from urllib.parse import unquote

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import HTMLResponse, Response
from pydantic import BaseModel, Field

from cowbird.core.errors import (
    BadParameter,
    Conflict,
    CowbirdError,
    Forbidden,
    HttpError,
    NotFound,
    SlowBody,
    TooLarge,
    TooManyRequests,
    Unauthorized,
)
from cowbird.frontend.accounts.web import LoginRequired, _page
from cowbird.frontend.routes.deps import CurrentUser, current_user
from cowbird.frontend.routes.saved import account_owner
from cowbird.frontend.state import frontend_state
from cowbird.frontend.viewer import Viewer
from cowbird.frontend.workshop import ARCHIVE_STARTS, ARCHIVE_SUFFIXES, Workshop, WorkshopError

router = APIRouter(tags=["workshop"])


class NewJob(BaseModel):
    kind: Literal["crawl", "build"] = Field(description="crawl: from seed URLs, then a build; build: of WARC files.")
    name: str = Field(max_length=40, description="The corpus's name (lowercase letters, digits, _).")
    language: str = Field("de", max_length=3, description="The corpus's language: de or en.")
    seeds: list[str] = Field(default_factory=list, max_length=10_000, description="Seed URLs (crawl).")
    pages: int = Field(1000, ge=1, description="The crawl's page budget.")
    inputs: list[str] = Field(default_factory=list, max_length=1000,
                              description="WARC files or folders in the server's input folder (build).")
    uploads: list[str] = Field(default_factory=list, max_length=1000,
                               description="The ids of your uploaded WARC files (POST /api/v1/uploads) (build).")


class Publish(BaseModel):
    access: str = Field("public", max_length=80, description="public, login or group:NAME.")
    title: str = Field("", max_length=300)


class CrawlProgress(BaseModel):
    """The crawl's OUT/progress.json, in part (docs/crawling.md)."""

    state: str | None = None
    pages: int | None = None
    bytes: int | None = None
    good: int | None = None
    good_share: float | None = None
    queued: int | None = None
    hosts: int | None = Field(None, description="Hosts the crawl knows of (found in links), fetched or not.")
    elapsed: float | None = None
    stop_reason: str | None = None


class Part(BaseModel):
    pages: int
    good: int
    good_share: float


class CrawlReport(BaseModel):
    """The crawl's OUT/report.json, in part: the good-document share over the crawl, per language, per host."""

    good_share_over_time: list[Part] = Field(default_factory=list)
    languages: dict[str, int] = Field(default_factory=dict)
    good_per_host: dict[str, float] | None = None
    hosts: list[dict[str, Any]] = Field(default_factory=list, description="The 20 hosts with most pages.")
    outcomes: dict[str, int] = Field(default_factory=dict)


class BuildProgress(BaseModel):
    """How far the build is: each phase's shards done, the duplicates removed, the tokens once encoded."""

    phases: dict[str, str] = Field(default_factory=dict)
    removed: dict[str, int] = Field(default_factory=dict)
    tokens: int | None = None
    partitions: list[dict[str, Any]] = Field(default_factory=list)


class JobOut(BaseModel):
    id: str
    kind: str
    name: str
    owner: str
    created: str
    language: str | None = None
    pages: int | None = None
    seeds: list[str] = Field(default_factory=list)
    state: str = Field(description="queued, running, stopping, stopped, finished or failed.")
    stage: str | None = None
    done: list[str] = Field(default_factory=list, description="The stages finished: crawl, build.")
    error: str | None = None
    crawl: CrawlProgress | None = None
    crawl_report: CrawlReport | None = None
    build: BuildProgress | None = None
    built: bool = Field(description="The corpus is made: it may be published.")
    published: str | None = Field(None, description="The name of the corpus published from it.")
    log: list[str] = Field(default_factory=list, description="The last lines of the job's log.")


class JobList(BaseModel):
    data: list[JobOut]


class PublishedCorpusOut(BaseModel):
    name: str
    access: str
    partitions: list[str]


class DeletedCorpus(BaseModel):
    name: str
    deleted: bool = True


class UploadOut(BaseModel):
    id: str = Field(description="Name it in a build job's uploads.")
    filename: str
    bytes: int


class InputList(BaseModel):
    data: list[str] = Field(description="WARC and ARC files in the server's input folder, relative to it.")


UPLOAD_PATH = "/api/v1/uploads"
"""The one route whose body is not read whole first (``BodyLimit``): it streams a file to disk, bounded."""
CHUNK_SECONDS = 60.0
"""An upload whose next part does not arrive within this is given up (a client that stalls)."""
FILENAME = re.compile(r"[^A-Za-z0-9._-]+")


def workshop_of(request: Request, user: Viewer, changes: bool = False) -> Workshop:
    """The workshop, for a user who may use it; a browser's change must carry the session's CSRF token."""
    workshop: Workshop | None = getattr(frontend_state(request), "workshop", None)
    if workshop is None or not workshop.settings.enabled:
        raise NotFound("this site has no workshop ([workshop] enabled is false)")
    if user.name is None:
        raise Unauthorized("the workshop is for logged-in users: log in first (or send your API token)")
    account_owner(request, user, changes=changes)
    if not workshop.may_build(user):
        raise Forbidden(f"building corpora is for administrators and the group {workshop.settings.group!r}: "
                        "ask an administrator")
    return workshop


def workshop_link(request: Request) -> dict[str, Any]:
    """The templates' context processor: whether the header shows *Workshop* (to those who may build)."""
    workshop: Workshop | None = getattr(frontend_state(request), "workshop", None)
    if workshop is None or not request.cookies:
        return {"workshop_link": False}
    try:
        viewer = current_user(request)
    except CowbirdError:
        return {"workshop_link": False}
    return {"workshop_link": workshop.may_build(viewer)}


async def _call(work: Any) -> Any:
    try:
        return await run_in_threadpool(work)
    except WorkshopError as error:
        kinds = {404: NotFound, 409: Conflict, 429: TooManyRequests, 403: Forbidden}
        kind = kinds.get(error.status)
        if kind is not None:
            raise kind(str(error)) from None
        raise HttpError(error.status, str(error)) from None


@router.get("/workshop", response_class=HTMLResponse, include_in_schema=False)
async def workshop_page(request: Request, user: CurrentUser) -> Response:
    if user.name is None:
        raise LoginRequired
    workshop = workshop_of(request, user)
    jobs = await _call(lambda: workshop.jobs(user))
    inputs = await run_in_threadpool(workshop.inputs)
    return _page(request, "workshop.html", jobs_json=json.dumps(jobs).replace("</", "<\\/"),
                 max_pages=workshop.settings.max_pages, inputs=inputs, groups=sorted(user.groups),
                 max_upload_bytes=workshop.settings.max_upload_bytes)


@router.post(UPLOAD_PATH, response_model=UploadOut)
async def upload(request: Request, user: CurrentUser) -> UploadOut:
    """One WARC or ARC file as the request's body (its name in ``X-File-Name``), kept until a build job takes
    it (``uploads``); at most ``[workshop] max_upload_bytes`` waiting per user."""
    workshop = workshop_of(request, user, changes=True)
    raw = unquote(request.headers.get("x-file-name", "")).rsplit("/", 1)[-1]
    name = FILENAME.sub("_", raw).strip("._")[:120]
    if not name.lower().endswith(ARCHIVE_SUFFIXES):
        raise BadParameter(f"X-File-Name {raw[:80]!r}: name a .warc, .warc.gz, .arc or .arc.gz file")
    room = workshop.settings.max_upload_bytes - await run_in_threadpool(workshop.staged, user)
    length = request.headers.get("content-length", "")
    if length.isdigit() and int(length) > room:
        raise TooLarge(f"{int(length):,} bytes are more than the {max(room, 0):,} bytes left of your uploads' "
                       f"{workshop.settings.max_upload_bytes:,}: start a build with what you uploaded first")
    upload_id = secrets.token_hex(8)
    folder = workshop.staging(user) / upload_id
    folder.mkdir(parents=True)
    path = folder / name
    size = 0
    try:
        with path.open("wb") as out:
            stream = request.stream().__aiter__()
            while True:
                try:
                    async with asyncio.timeout(CHUNK_SECONDS):
                        chunk = await stream.__anext__()
                except StopAsyncIteration:
                    break
                except TimeoutError:
                    raise SlowBody(f"the upload stalled: nothing arrived for {CHUNK_SECONDS:g} s") from None
                if size == 0 and chunk and not chunk.startswith(ARCHIVE_STARTS) and len(chunk) >= 16:
                    raise BadParameter(f"{name}: not a WARC or ARC file (it starts with {chunk[:16]!r})")
                size += len(chunk)
                if size > room:
                    raise TooLarge(f"{name}: over the {max(room, 0):,} bytes left of your uploads")
                out.write(chunk)
        if size == 0:
            raise BadParameter(f"{name}: the file is empty")
    except BaseException:  # a refusal, a client gone (ClientDisconnect), a stop: nothing half kept
        shutil.rmtree(folder, ignore_errors=True)
        raise
    return UploadOut(id=upload_id, filename=name, bytes=size)


@router.get("/api/v1/inputs", response_model=InputList)
async def server_inputs(request: Request, user: CurrentUser) -> InputList:
    """The WARC files a build job may take from the server's input folder (``[workshop] inputs``)."""
    workshop = workshop_of(request, user)
    return InputList(data=await run_in_threadpool(workshop.inputs))


@router.get("/api/v1/jobs", response_model=JobList)
async def list_jobs(request: Request, user: CurrentUser) -> JobList:
    """Your jobs (an administrator's: everyone's), newest first, each with its state and progress."""
    workshop = workshop_of(request, user)
    return JobList(data=await _call(lambda: workshop.jobs(user)))


@router.post("/api/v1/jobs", response_model=JobOut)
async def create_job(request: Request, user: CurrentUser, asked: NewJob) -> JobOut:
    """Start a crawl (seeds, language, page budget; then its build) or a build of server-side WARC files."""
    workshop = workshop_of(request, user, changes=True)
    return JobOut.model_validate(await _call(lambda: workshop.create(
        user, asked.kind, asked.name, asked.language, asked.seeds, asked.pages, asked.inputs, asked.uploads)))


@router.get("/api/v1/jobs/{job_id}", response_model=JobOut)
async def get_job(request: Request, user: CurrentUser, job_id: str) -> JobOut:
    """One of your jobs: its state, stage, progress, report and the end of its log."""
    workshop = workshop_of(request, user)
    return JobOut.model_validate(await _call(lambda: workshop.job(user, job_id)))


@router.post("/api/v1/jobs/{job_id}/stop", response_model=JobOut)
async def stop_job(request: Request, user: CurrentUser, job_id: str) -> JobOut:
    """Stop a running job: the crawl stops cleanly (its WARC files complete), the build where it is."""
    workshop = workshop_of(request, user, changes=True)
    return JobOut.model_validate(await _call(lambda: workshop.stop(user, job_id)))


@router.post("/api/v1/jobs/{job_id}/resume", response_model=JobOut)
async def resume_job(request: Request, user: CurrentUser, job_id: str) -> JobOut:
    """Go on with a stopped or failed job where it was."""
    workshop = workshop_of(request, user, changes=True)
    return JobOut.model_validate(await _call(lambda: workshop.resume(user, job_id)))


@router.post("/api/v1/jobs/{job_id}/publish", response_model=PublishedCorpusOut)
async def publish_job(request: Request, user: CurrentUser, job_id: str, asked: Publish) -> PublishedCorpusOut:
    """Serve the job's corpus, with its access rights, from the workshop's nodes: searchable at once."""
    workshop = workshop_of(request, user, changes=True)
    return PublishedCorpusOut.model_validate(
        await _call(lambda: workshop.publish(user, job_id, asked.access, asked.title)))


@router.delete("/api/v1/jobs/{job_id}", response_model=JobList)
async def delete_job(request: Request, user: CurrentUser, job_id: str) -> JobList:
    """Delete a job that is not running and made no published corpus, with everything it fetched; answers
    with the jobs you keep."""
    workshop = workshop_of(request, user, changes=True)
    await _call(lambda: workshop.delete_job(user, job_id))
    return JobList(data=await _call(lambda: workshop.jobs(user)))


@router.delete("/api/v1/corpora/{name}", response_model=DeletedCorpus)
async def delete_corpus(request: Request, user: CurrentUser, name: str) -> DeletedCorpus:
    """A published corpus no longer served: its files, registry entries and sharing are removed."""
    workshop = workshop_of(request, user, changes=True)
    await _call(lambda: workshop.delete_corpus(user, name))
    return DeletedCorpus(name=name)
