"""``cowbird serve``: run the front end, in one process or in ``--workers N`` processes on one port.

The workers share what must be counted once — fair use, throttles, browser sessions — through the
account database (``fair_use.py``, ``accounts/throttle.py``), as front ends on several hosts do.
Each worker makes its own app (``worker_app``, a factory uvicorn calls in the worker) from what
the command put in the environment (``WORKER_SETUP``); the command checks the configuration and
brings the account database up to date first, once, so that the workers neither race to migrate
it nor start on a configuration that cannot work. ``/metrics`` sums every worker's figures
(``query_lang/cowbird/serving/metrics.py``: prometheus_client's multiprocess mode, in a folder made for the run).

Beside the workers, ``serve`` starts the *background process* (``--no-background``: none): the same
app on a Unix socket in a private folder, at a lower CPU priority, to which the workers hand over
background work — what is estimated beyond the interactive budget, and word and keyword lists, word
sketches, trends and comparisons (``frontend_api/cowbird/frontend/background.py``, ``classing.py``);
it ends with ``serve``.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click
from fastapi import FastAPI

from cowbird.frontend.app import create_app
from cowbird.frontend.background import NICENESS
from cowbird.frontend.settings import FrontendSettings
from cowbird.serving.config import ConfigError
from cowbird.serving.metrics import MULTIPROCESS
from cowbird.serving.request_log import LOG_FORMAT, LOG_LEVEL, configure
from cowbird.serving.server import ConnectionLimits, networks, serve

WORKER_SETUP = "COWBIRD_SERVE_WORKER"
"""The environment variable that tells each worker its configuration file, address and logging (JSON)."""


def _settings(config: Path, host: str | None, port: int | None) -> FrontendSettings:
    try:
        return FrontendSettings.load(config, host=host, port=port)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc


def worker_app() -> FastAPI:
    """The app of one interactive worker of ``cowbird serve`` (uvicorn calls it in each worker)."""
    setup = json.loads(os.environ[WORKER_SETUP])
    configure(setup["log_level"], setup["log_format"])
    return create_app(FrontendSettings.load(Path(setup["config"]), host=setup["host"], port=setup["port"]),
                      background=setup.get("background"))


@click.command("serve")
@click.option("--config", type=click.Path(path_type=Path), required=True, help="TOML configuration (cowbird.toml).")
@click.option("--host", default=None, help="Address to listen on (default from the configuration, 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port (default from the configuration, 8700).")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Front-end processes on the port; they share fair use, throttles and sessions through the "
                   "account database (use PostgreSQL for many).")
@click.option("--background/--no-background", default=True, show_default=True,
              help="Answer background work (estimated beyond the interactive budget; word lists, sketches, trends "
                   "and comparisons) in a process of their own at a lower CPU priority, so that interactive work "
                   "never waits for it.")
@click.option("--background-socket", type=click.Path(path_type=Path), default=None, hidden=True,
              help="(Started by cowbird serve itself: be the background process, on this Unix socket.)")
@LOG_LEVEL
@LOG_FORMAT
def serve_command(config: Path, host: str | None, port: int | None, workers: int, background: bool,
                  background_socket: Path | None, log_level: str, log_format: str) -> None:
    """Serve the public HTTP API over the configured corpora and nodes (COWBIRD_* variables apply)."""
    configure(log_level, "json" if log_format == "json" else "text")
    settings = _settings(config, host, port)
    if background_socket is not None:  # the background process (frontend_api/cowbird/frontend/background.py)
        os.nice(NICENESS)
        serve(create_app(settings, forwarded=True), host=settings.host, port=settings.port,
              uds=str(background_socket), proxy_headers=False)  # the client as the worker saw it, only
        return
    try:
        app = create_app(settings)  # checks the configuration and migrates the database, once
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    shown = f"{workers} workers on " if workers > 1 else ""
    click.echo(f"cowbird: {len(settings.corpora)} corpora on {shown}http://{settings.host}:{settings.port}", err=True)
    if workers == 1 and not background:
        serve(app, host=settings.host, port=settings.port, limits=connection_limits(settings), **proxies(settings))
        return
    app.state.frontend.accounts.database.close()
    made = None
    if os.environ.get(MULTIPROCESS):  # a folder of the operator's: the last run's values go
        for stale in Path(os.environ[MULTIPROCESS]).glob("*.db"):
            stale.unlink()
    else:
        made = os.environ[MULTIPROCESS] = tempfile.mkdtemp(prefix="cowbird-metrics-")
    private = _socket_folder() if background else None
    child = None
    try:
        socket = None
        if private is not None:
            socket = str(Path(private) / "background.sock")
            child = _start_background(config, settings, socket, log_level, log_format)
        os.environ[WORKER_SETUP] = json.dumps({
            "config": str(config.resolve()), "host": settings.host, "port": settings.port,
            "log_level": log_level, "log_format": "json" if log_format == "json" else "text", "background": socket,
        })
        serve(f"{__name__}:worker_app", host=settings.host, port=settings.port, workers=workers,
              limits=connection_limits(settings), **proxies(settings))
    finally:
        if child is not None:
            child.terminate()
            try:
                child.wait(10)
            except subprocess.TimeoutExpired:
                child.kill()
        for folder in (made, private):
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)


def proxies(settings: FrontendSettings) -> dict[str, Any]:
    """uvicorn's options for ``trusted_proxies``: X-Forwarded-For believed from them only, and from
    nobody when there are none (uvicorn by default believes 127.0.0.1, so that any local process —
    or a proxy on the same host forwarding whatever a client wrote — could name any address)."""
    if not settings.trusted_proxies:
        return {"proxy_headers": False}
    return {"proxy_headers": True, "forwarded_allow_ips": ",".join(settings.trusted_proxies)}


def connection_limits(settings: FrontendSettings) -> ConnectionLimits:
    """The connections a front-end process admits (``max_connections``, ``max_connections_per_client``),
    a trusted proxy's counted per the client its X-Forwarded-For names."""
    return ConnectionLimits(total=settings.max_connections, per_client=settings.max_connections_per_client,
                            trusted_proxies=networks(settings.trusted_proxies, "trusted_proxies"))


BACKGROUND_START_SECONDS = 120.0
SOCKET_PATH_MOST = 100
"""A Unix socket's path is at most 107 bytes on Linux: a longer TMPDIR is not used for it."""


def _socket_folder() -> str:
    """A private folder (mode 0700) for the background process's socket: in TMPDIR, or in /tmp when
    TMPDIR's path is too long for a socket."""
    folder = tempfile.mkdtemp(prefix="cowbird-background-")
    if len(str(Path(folder) / "background.sock").encode()) <= SOCKET_PATH_MOST:
        return folder
    os.rmdir(folder)
    return tempfile.mkdtemp(prefix="cowbird-background-", dir="/tmp")


def _start_background(config: Path, settings: FrontendSettings, socket: str, log_level: str,
                      log_format: str) -> subprocess.Popen[bytes]:
    """The background process, started and listening on ``socket`` (it ends with this process)."""
    # -P (Python 3.11): the working directory is not put first on sys.path, so a folder named cowbird there
    # cannot shadow the installed package — the same process from any working directory
    command = [sys.executable, "-P", "-m", "cowbird", "serve", "--config", str(config.resolve()),
               "--host", settings.host, "--port", str(settings.port), "--background-socket", socket,
               "--log-level", log_level, "--log-format", log_format]
    child = subprocess.Popen(command, preexec_fn=_end_with_parent)  # noqa: S603  # our own command
    until = time.monotonic() + BACKGROUND_START_SECONDS
    while not Path(socket).exists():
        if child.poll() is not None:
            raise click.ClickException(f"the background process did not start (exit status {child.returncode})")
        if time.monotonic() > until:
            child.kill()
            raise click.ClickException(f"the background process did not listen within {BACKGROUND_START_SECONDS:g} s")
        time.sleep(0.05)
    return child


def _end_with_parent() -> None:
    """In the child, before it runs: it gets SIGTERM when the serving process dies (Linux), so that a
    killed ``cowbird serve`` leaves no background process behind."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


PR_SET_PDEATHSIG = 1
