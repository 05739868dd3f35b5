"""``cowbird serve``: run the front end."""

from __future__ import annotations

from pathlib import Path

import click

from cowbird.core.config import ConfigError
from cowbird.core.request_log import LOG_FORMAT, LOG_LEVEL, configure
from cowbird.core.serving import serve
from cowbird.frontend.app import create_app
from cowbird.frontend.settings import FrontendSettings


@click.command("serve")
@click.option("--config", type=click.Path(path_type=Path), required=True, help="TOML configuration (cowbird.toml).")
@click.option("--host", default=None, help="Address to listen on (default from the configuration, 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port (default from the configuration, 8700).")
@LOG_LEVEL
@LOG_FORMAT
def serve_command(config: Path, host: str | None, port: int | None, log_level: str, log_format: str) -> None:
    """Serve the public HTTP API over the configured corpora and nodes (COWBIRD_* variables apply)."""
    configure(log_level, "json" if log_format == "json" else "text")
    try:
        settings = FrontendSettings.load(config, host=host, port=port)
        app = create_app(settings)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    click.echo(f"cowbird: {len(settings.corpora)} corpora on http://{settings.host}:{settings.port}", err=True)
    serve(app, host=settings.host, port=settings.port)
