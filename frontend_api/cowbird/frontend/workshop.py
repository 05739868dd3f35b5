"""The workshop's corpora in the account database: the published ones as every front-end process
serves them (``published_source``), and the version counter a publish or delete counts up, so that
each process sees the change within ``corpora.REFRESH_SECONDS`` without a restart."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import select, update
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from cowbird.frontend.accounts import Database
from cowbird.frontend.accounts.models import CatalogueVersion, Job, PublishedCorpus, User
from cowbird.frontend.corpora import PublishedSource
from cowbird.frontend.settings import CorpusConfig, WorkshopSettings
from cowbird.frontend.viewer import Viewer
from cowbird.frontend.workshop_runner import read_json, write_json

log = logging.getLogger("cowbird.frontend")


def corpus_config(row: PublishedCorpus) -> CorpusConfig:
    """A published corpus as a configured one is described."""
    return CorpusConfig.model_validate({
        "name": row.name, "title": row.title, "language": row.language, "access": row.access,
        "manifest": row.manifest, "nodes": json.loads(row.partitions),
    })


def published_source(database: Database) -> PublishedSource:
    """Reads the counter (one row); only when it moved, the published corpora."""
    def published(known: int | None) -> tuple[int, list[CorpusConfig]] | None:
        try:
            with database.reading.connect() as connection:
                version = connection.execute(select(CatalogueVersion.version)).scalar() or 0
                if version == known:
                    return None
                rows = connection.execute(select(PublishedCorpus).order_by(PublishedCorpus.name)).all()
        except SQLAlchemyError as exc:  # the database is away for a moment: serve what is known
            log.warning("cannot read the published corpora: %s", exc)
            return None
        configs = []
        for row in rows:
            try:
                configs.append(corpus_config(PublishedCorpus(**row._asdict())))
            except ValueError as exc:
                log.warning("published corpus %s cannot be served: %s", row.name, exc)
        return version, configs

    return published


def count_up(session: Session) -> None:
    """Tell every front-end process that the published corpora changed (in the caller's transaction)."""
    session.execute(update(CatalogueVersion).values(version=CatalogueVersion.version + 1))


# ---------------------------------------------------------------------------------------------------------
# jobs: crawls and builds, run outside the web process (workshop_runner.py)

NAME = re.compile(r"^[a-z][a-z0-9_]{1,39}$")
"""A corpus's name as the workshop takes it: a registry id (lowercase), used in URLs."""
LANGUAGES = frozenset({"de", "en"})  # the languages `cowbird build`'s tagger (HanTa) tags
LIVE = ("queued", "running", "stopping")
UPLOAD_ID = re.compile(r"^[0-9a-f]{16}$")
ARCHIVE_SUFFIXES = (".warc", ".warc.gz", ".arc", ".arc.gz")
ARCHIVE_STARTS = (b"WARC/", b"\x1f\x8b", b"filedesc://")  # a WARC, gzip (per record or whole), an ARC
RUNNERS: list[subprocess.Popen[bytes]] = []  # the runners this process started (a session of their own each)


class WorkshopError(Exception):
    """A request the workshop refuses, said for the user; ``status`` is its HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


def alive(pid: int | None) -> bool:
    if not pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie (a runner this process started and that ended) is not alive
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return True


def build_view(out: Path) -> dict[str, Any]:
    """How far `cowbird build` is in `out`, from its work folder's markers (``work/PHASE/*.done``): shards
    done per phase, the duplicates removed, the tokens and partitions once encoded."""
    work = out / "work"
    if not work.is_dir():
        return {}
    phases = {}
    for phase in ("clean", "dedup", "annotate", "encode"):
        folder = work / phase
        shards = len(list(folder.glob("*.done")))
        phases[phase] = "done" if (folder / "done").exists() else f"{shards} shard{'' if shards == 1 else 's'} done"
    encoded = read_json(work / "encode" / "done")
    return {"phases": phases, "removed": read_json(work / "dedup" / "done").get("removed", {}),
            "tokens": encoded.get("tokens"), "partitions": encoded.get("partitions", [])}


def stale(path: Path, seconds: float = 60.0) -> bool:
    try:
        return time.time() - path.stat().st_mtime > seconds
    except OSError:
        return True


class Workshop:
    """The workshop of one front end: its settings, the account database (jobs, published corpora)."""

    def __init__(self, settings: WorkshopSettings, database: Database, node_token: str,
                 configured: Callable[[], set[str]]) -> None:
        self.settings = settings
        self.database = database
        self.node_token = node_token
        self.configured = configured  # the names of the corpora in cowbird.toml (never taken)

    @property
    def directory(self) -> Path:
        assert self.settings.directory is not None
        return self.settings.directory

    def may_build(self, viewer: Viewer) -> bool:
        return self.settings.enabled and viewer.name is not None and (
            viewer.admin or self.settings.group in viewer.groups)

    # reading -----------------------------------------------------------------------------------------
    def job_dir(self, job: Job) -> Path:
        return Path(job.directory)

    def view(self, job: Job, published: str | None = None) -> dict[str, Any]:
        """A job as the page and the API show it: its spec, state, and each stage's progress and report."""
        folder = self.job_dir(job)
        spec = read_json(folder / "job.json")
        state = read_json(folder / "state.json")
        status = state.get("state", "queued")
        if status in ("running", "stopping") and not alive(state.get("pid")):
            status = "stopped"  # its runner is gone (the machine restarted): resume it
        elif status == "queued" and not alive(state.get("pid")) and stale(folder / "state.json"):
            status = "stopped"  # its runner never started (it would have written state.json within seconds)
        crawl = read_json(folder / "crawl" / "progress.json") if job.kind == "crawl" else {}
        crawl_report = read_json(folder / "crawl" / "report.json") if job.kind == "crawl" else {}
        build = build_view(folder / "corpus")
        manifest = folder / "corpus" / f"{job.name}.manifest.json"
        log = folder / "job.log"
        tail = log.read_bytes()[-3000:].decode("utf-8", "replace").splitlines()[-12:] if log.exists() else []
        return {
            "id": job.id, "kind": job.kind, "name": job.name, "owner": job.owner.name,
            "created": job.created_at.isoformat(timespec="seconds"),
            "language": spec.get("language"), "pages": spec.get("pages"), "seeds": spec.get("seeds", []),
            "state": status, "stage": state.get("stage"), "done": state.get("done", []), "error": state.get("error"),
            "crawl": {k: crawl.get(k) for k in ("state", "pages", "bytes", "good", "good_share", "queued", "hosts",
                                                "elapsed", "stop_reason")} if crawl else None,
            "crawl_report": {
                "good_share_over_time": crawl_report.get("good_share_over_time", []),
                "languages": crawl_report.get("languages", {}), "good_per_host": crawl_report.get("good_per_host"),
                "hosts": crawl_report.get("hosts", [])[:20], "outcomes": crawl_report.get("outcomes", {}),
            } if crawl_report else None,
            "build": build or None,
            "built": manifest.exists() and "build" in state.get("done", []),
            "published": published, "log": tail,
        }

    def jobs(self, viewer: Viewer) -> list[dict[str, Any]]:
        with self.database.session() as session:
            query = select(Job).order_by(Job.created_at.desc())
            rows = list(session.scalars(query))
            published = {row.job_id: row.name for row in session.scalars(select(PublishedCorpus))}
            return [self.view(job, published.get(job.id)) for job in rows
                    if viewer.admin or job.owner.name == viewer.name]

    def _job(self, session: Session, viewer: Viewer, job_id: str) -> Job:
        job = session.get(Job, job_id)
        if job is None or not (viewer.admin or job.owner.name == viewer.name):
            raise WorkshopError(f"no job {job_id!r} of yours", 404)
        return job

    def job(self, viewer: Viewer, job_id: str) -> dict[str, Any]:
        with self.database.session() as session:
            job = self._job(session, viewer, job_id)
            row = session.scalars(select(PublishedCorpus).where(PublishedCorpus.job_id == job.id)).first()
            return self.view(job, row.name if row else None)

    # making ------------------------------------------------------------------------------------------
    def _name_free(self, session: Session, name: str) -> None:
        if not NAME.match(name):
            raise WorkshopError(f"name {name!r}: 2 to 40 lowercase letters, digits or _, starting with a letter")
        if name in self.configured() or session.get(PublishedCorpus, name) is not None:
            raise WorkshopError(f"name {name!r}: a corpus of that name exists; choose another", 409)
        if session.scalars(select(Job).where(Job.name == name)).first() is not None:
            raise WorkshopError(f"name {name!r}: a job of that name exists; choose another", 409)

    def running(self, session: Session) -> int:
        """Jobs whose runner is at work now."""
        states = (read_json(self.job_dir(job) / "state.json") for job in session.scalars(select(Job)))
        return sum(1 for state in states if state.get("state", "queued") in LIVE and alive(state.get("pid")))

    # uploads ---------------------------------------------------------------------------------------
    def staging(self, viewer: Viewer) -> Path:
        """Where a user's uploaded WARC files wait for the build job that takes them."""
        return self.directory / "uploads" / hashlib.sha256((viewer.name or "").encode()).hexdigest()[:16]

    def staged(self, viewer: Viewer) -> int:
        """Bytes a user has uploaded and no job has taken yet."""
        folder = self.staging(viewer)
        return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file()) if folder.exists() else 0

    def take_uploads(self, viewer: Viewer, ids: list[str], into: Path) -> None:
        for upload in ids:
            folder = self.staging(viewer) / upload
            if not UPLOAD_ID.match(upload) or not folder.is_dir():
                raise WorkshopError(f"uploads: no upload {upload!r} of yours (upload the file again)", 404)
        into.mkdir(parents=True, exist_ok=True)
        for upload in ids:
            folder = self.staging(viewer) / upload
            for path in folder.iterdir():
                target = into / path.name
                if target.exists():
                    target = into / f"{upload}-{path.name}"
                shutil.move(str(path), target)
            folder.rmdir()

    def inputs(self) -> list[str]:
        """The WARC and ARC files in the server's input folder (relative paths, at most 1,000)."""
        root = self.settings.inputs
        if root is None or not root.is_dir():
            return []
        found: list[str] = []
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.name.lower().endswith(ARCHIVE_SUFFIXES):
                found.append(path.relative_to(root).as_posix())
                if len(found) >= 1000:
                    break
        return found

    def create(self, viewer: Viewer, kind: str, name: str, language: str, seeds: list[str] | None = None,
               pages: int = 1000, inputs: list[str] | None = None, uploads: list[str] | None = None) -> dict[str, Any]:
        """A new crawl job (seeds, then its build) or build job (server-side WARC files, or the user's
        uploads, moved into the job's folder), started at once."""
        if language not in LANGUAGES:
            raise WorkshopError(f"language {language!r}: the workshop builds {', '.join(sorted(LANGUAGES))} corpora")
        files: list[Path] = []
        if kind == "crawl":
            urls = [s.strip() for s in (seeds or []) if s.strip()]
            bad = [u for u in urls if not u.startswith(("http://", "https://"))]
            if not urls or bad:
                which = f" ({bad[0][:80]!r} is not)" if bad else ""
                raise WorkshopError(f"seeds: give http(s) URLs, one a line{which}")
            if len(urls) > 10_000:
                raise WorkshopError(f"seeds: {len(urls):,} URLs; at most 10,000")
            if not 1 <= pages <= self.settings.max_pages:
                raise WorkshopError(f"pages: from 1 to {self.settings.max_pages:,}")
        elif kind == "build":
            urls = []
            files = [self._server_input(path) for path in (inputs or [])]
            if not files and not uploads:
                raise WorkshopError("inputs: give WARC files (uploaded, or from the server's input folder)")
        else:
            raise WorkshopError(f"kind {kind!r}: crawl or build")
        with self.database.session() as session:
            self._name_free(session, name)
            if self.running(session) >= self.settings.max_running:
                raise WorkshopError(f"{self.settings.max_running} jobs are running, the most this site runs at once: "
                                    "wait for one to end, or stop one", 429)
            user = session.scalars(select(User).where(User.name == viewer.name)).one()
            job_id = secrets.token_hex(8)
            folder = self.directory / job_id
            folder.mkdir(parents=True)
            if kind == "build" and uploads:
                try:
                    self.take_uploads(viewer, uploads, folder / "uploads")
                except WorkshopError:
                    shutil.rmtree(folder, ignore_errors=True)
                    raise
                files.append(folder / "uploads")
            spec = {"kind": kind, "name": name, "language": language, "seeds": urls, "pages": pages,
                    "delay": self.settings.crawl_delay, "allow": list(self.settings.crawl_allow),
                    "inputs": [str(p) for p in files] if kind == "build" else [], "jobs": 1}
            write_json(folder / "job.json", spec)
            if kind == "crawl":
                (folder / "seeds.txt").write_text("\n".join(urls) + "\n", encoding="utf-8")
            write_json(folder / "state.json", {"state": "queued"})
            job = Job(id=job_id, user_id=user.id, kind=kind, name=name, directory=str(folder))
            session.add(job)
            session.flush()
            self._start(folder)
            return self.view(job)

    def _server_input(self, path: str) -> Path:
        root = self.settings.inputs
        if root is None:
            raise WorkshopError("inputs: this site takes no server-side files ([workshop] inputs is not set)")
        resolved = (root / path).resolve()
        if not resolved.is_relative_to(root.resolve()) or not resolved.exists():
            raise WorkshopError(f"inputs: {path!r} is not a file or folder in the server's input folder", 404)
        return resolved

    def _start(self, folder: Path) -> None:
        for runner in list(RUNNERS):  # the ended runners this process started: reaped, not left as zombies
            if runner.poll() is not None:
                RUNNERS.remove(runner)
        RUNNERS.append(subprocess.Popen(
            [sys.executable, "-P", "-m", "cowbird.frontend.workshop_runner", str(folder)], stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, close_fds=True))

    def stop(self, viewer: Viewer, job_id: str) -> dict[str, Any]:
        with self.database.session() as session:
            job = self._job(session, viewer, job_id)
            state = read_json(self.job_dir(job) / "state.json")
            if state.get("state") not in LIVE or not alive(state.get("pid")):
                raise WorkshopError(f"job {job.name} is not running ({state.get('state', 'queued')})", 409)
            os.kill(int(state["pid"]), signal.SIGTERM)
            return self.view(job)

    def resume(self, viewer: Viewer, job_id: str) -> dict[str, Any]:
        with self.database.session() as session:
            job = self._job(session, viewer, job_id)
            view = self.view(job)
            if view["state"] in LIVE:
                raise WorkshopError(f"job {job.name} is {view['state']}", 409)
            if view["state"] == "finished":
                raise WorkshopError(f"job {job.name} has finished: nothing to resume", 409)
            if self.running(session) >= self.settings.max_running:
                raise WorkshopError(f"{self.settings.max_running} jobs are running: wait for one to end", 429)
            write_json(self.job_dir(job) / "state.json", {**read_json(self.job_dir(job) / "state.json"),
                                                          "state": "queued", "error": None})
            self._start(self.job_dir(job))
            return self.view(job)

    def delete_job(self, viewer: Viewer, job_id: str) -> None:
        with self.database.session() as session:
            job = self._job(session, viewer, job_id)
            if session.scalars(select(PublishedCorpus).where(PublishedCorpus.job_id == job.id)).first():
                raise WorkshopError(f"job {job.name} made the published corpus {job.name}: delete the corpus first",
                                    409)
            state = read_json(self.job_dir(job) / "state.json")
            if state.get("state") in LIVE and alive(state.get("pid")):
                raise WorkshopError(f"job {job.name} is running: stop it first", 409)
            session.delete(job)
            shutil.rmtree(self.job_dir(job), ignore_errors=True)

    # publishing --------------------------------------------------------------------------------------
    def _reload_nodes(self) -> None:
        failed = []
        for url in self.settings.nodes:
            try:
                response = httpx.post(f"{url}/v1/registry/reload", timeout=120, trust_env=False,
                                      headers={"Authorization": f"Bearer {self.node_token}"})
                if response.status_code != 200:
                    failed.append(f"{url}: {response.status_code} {response.text[:200]}")
            except httpx.HTTPError as exc:
                failed.append(f"{url}: {type(exc).__name__}")
        if failed:
            raise WorkshopError("the workshop's nodes did not take the corpus: " + "; ".join(failed), 502)

    def publish(self, viewer: Viewer, job_id: str, access: str, title: str = "") -> dict[str, Any]:
        """Serve a finished job's corpus: its registry files into the workshop's registry, the nodes told to
        reload it, the corpus in the database for every front-end process, with its access rights."""
        registry = self.settings.registry
        assert registry is not None
        with self.database.session() as session:
            job = self._job(session, viewer, job_id)
            view = self.view(job)
            if not view["built"]:
                raise WorkshopError(f"job {job.name} has no corpus yet ({view['state']})", 409)
            if not (view["build"] or {}).get("tokens"):
                raise WorkshopError(f"the corpus of job {job.name} has no tokens: no page passed the build's "
                                    "stages (its report says why); nothing to publish", 409)
            if session.get(PublishedCorpus, job.name) is not None:
                raise WorkshopError(f"corpus {job.name} is published already", 409)
            try:
                config = CorpusConfig.model_validate({"name": job.name, "access": access, "manifest": "x", "nodes": {}})
            except ValueError as exc:
                raise WorkshopError(f"access {access!r}: public, login or group:NAME") from exc
            manifest = self.job_dir(job) / "corpus" / f"{job.name}.manifest.json"
            built = self.job_dir(job) / "corpus" / "registry"
            partitions = sorted(p.name for p in built.iterdir() if p.is_file())
            registry.mkdir(parents=True, exist_ok=True)
            for pid in partitions:
                shutil.copyfile(built / pid, registry / pid)
            try:
                self._reload_nodes()
            except WorkshopError:
                for pid in partitions:
                    (registry / pid).unlink(missing_ok=True)
                raise
            row = PublishedCorpus(
                name=job.name, job_id=job.id, user_id=job.user_id, title=title[:300] or job.name,
                language=read_json(self.job_dir(job) / "job.json").get("language", ""), access=str(config.access),
                manifest=str(manifest), partitions=json.dumps({pid: list(self.settings.nodes) for pid in partitions}))
            session.add(row)
            count_up(session)
            return {"name": job.name, "access": row.access, "partitions": partitions}

    def delete_corpus(self, viewer: Viewer, name: str) -> None:
        """A published corpus no longer served: its registry files and its files gone, its sharing with them."""
        registry = self.settings.registry
        assert registry is not None
        with self.database.session() as session:
            row = session.get(PublishedCorpus, name)
            if row is None:
                raise WorkshopError(f"no published corpus {name!r}", 404)
            owner = session.get(User, row.user_id) if row.user_id is not None else None
            if not (viewer.admin or (owner is not None and owner.name == viewer.name)):
                raise WorkshopError(f"corpus {name} is not yours to delete", 403)
            for pid in json.loads(row.partitions):
                (registry / pid).unlink(missing_ok=True)
            self._reload_nodes()
            session.delete(row)
            count_up(session)
            job = session.get(Job, row.job_id) if row.job_id else None
            if job is not None:
                shutil.rmtree(self.job_dir(job) / "corpus", ignore_errors=True)
                state = read_json(self.job_dir(job) / "state.json")
                state["done"] = [s for s in state.get("done", []) if s != "build"]
                state["state"] = "stopped"
                write_json(self.job_dir(job) / "state.json", state)
