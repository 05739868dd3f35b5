"""``cowbird serve``: run the front end, in one process or in ``--workers N`` processes on one port.

The workers share what must be counted once — fair use, throttles, browser sessions — through the
account database (``fair_use.py``, ``accounts/throttle.py``), as front ends on several hosts do.
Each worker makes its own app (``worker_app``, a factory uvicorn calls in the worker) from what
the command put in the environment (``WORKER_SETUP``); the command checks the configuration and
brings the account database up to date first, once, so that the workers neither race to migrate
it nor start on a configuration that cannot work. ``/metrics`` sums every worker's figures
(``cowbird/core/metrics.py``: prometheus_client's multiprocess mode, in a folder made for the run).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import click
from fastapi import FastAPI

from cowbird.core.config import ConfigError
from cowbird.core.metrics import MULTIPROCESS
from cowbird.core.request_log import LOG_FORMAT, LOG_LEVEL, configure
from cowbird.core.serving import serve
from cowbird.frontend.app import create_app
from cowbird.frontend.settings import FrontendSettings

WORKER_SETUP = "COWBIRD_SERVE_WORKER"
"""The environment variable that tells each worker its configuration file, address and logging (JSON)."""


def _settings(config: Path, host: str | None, port: int | None) -> FrontendSettings:
    try:
        return FrontendSettings.load(config, host=host, port=port)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc


def worker_app() -> FastAPI:
    """The app of one worker of ``cowbird serve --workers N`` (uvicorn calls it in each worker)."""
    setup = json.loads(os.environ[WORKER_SETUP])
    configure(setup["log_level"], setup["log_format"])
    return create_app(FrontendSettings.load(Path(setup["config"]), host=setup["host"], port=setup["port"]))


@click.command("serve")
@click.option("--config", type=click.Path(path_type=Path), required=True, help="TOML configuration (cowbird.toml).")
@click.option("--host", default=None, help="Address to listen on (default from the configuration, 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port (default from the configuration, 8700).")
@click.option("--workers", type=click.IntRange(1, 64), default=1, show_default=True,
              help="Front-end processes on the port; they share fair use, throttles and sessions through the "
                   "account database (use PostgreSQL for many).")
@LOG_LEVEL
@LOG_FORMAT
def serve_command(config: Path, host: str | None, port: int | None, workers: int, log_level: str,
                  log_format: str) -> None:
    """Serve the public HTTP API over the configured corpora and nodes (COWBIRD_* variables apply)."""
    configure(log_level, "json" if log_format == "json" else "text")
    settings = _settings(config, host, port)
    try:
        app = create_app(settings)  # with workers: checks the configuration and migrates the database, once
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    shown = f"{workers} workers on " if workers > 1 else ""
    click.echo(f"cowbird: {len(settings.corpora)} corpora on {shown}http://{settings.host}:{settings.port}", err=True)
    if workers == 1:
        serve(app, host=settings.host, port=settings.port)
        return
    app.state.frontend.accounts.database.close()
    os.environ[WORKER_SETUP] = json.dumps({
        "config": str(config.resolve()), "host": settings.host, "port": settings.port,
        "log_level": log_level, "log_format": "json" if log_format == "json" else "text",
    })
    made = None
    if os.environ.get(MULTIPROCESS):  # a folder of the operator's: the last run's values go
        for stale in Path(os.environ[MULTIPROCESS]).glob("*.db"):
            stale.unlink()
    else:
        made = os.environ[MULTIPROCESS] = tempfile.mkdtemp(prefix="cowbird-metrics-")
    try:
        serve(f"{__name__}:worker_app", host=settings.host, port=settings.port, workers=workers)
    finally:
        if made is not None:
            shutil.rmtree(made, ignore_errors=True)
