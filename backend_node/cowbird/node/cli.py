"""``cowbird node serve``: run a backend node over HTTP(S)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from cowbird.core.errors import CowbirdError
from cowbird.node.app import create_app, open_engines
from cowbird.node.memory import apply_memory_limit, memory_limit
from cowbird.node.settings import NodeSettings
from cowbird.serving.config import ConfigError
from cowbird.serving.request_log import LOG_FORMAT, LOG_LEVEL, configure
from cowbird.serving.server import ConnectionLimits, networks, serve

SWITCH_INTERVAL = 0.0005
"""Seconds a thread holds the interpreter lock while another asks for it (Python's default: 5 ms).
The node's event loop gives the lock up at every read and write and asks for it back; while a heavy
query's thread computes, each time back could take a whole interval, and a cheap preview's calls
add up dozens of them: a tenth of the default keeps them short (the heavy thread pays a few more
switches)."""


@click.group("node")
def node_group() -> None:
    """Backend nodes: serve CWB-format partitions to the front end."""


@node_group.command("serve")
@click.option("--config", type=click.Path(path_type=Path), default=None, help="TOML file with node settings.")
@click.option("--registry", type=click.Path(path_type=Path), default=None, help="Registry directory.")
@click.option("--corpus", "corpora", multiple=True, help="Partition to serve (repeatable; default: all).")
@click.option("--engine", type=click.Choice(["native", "cwb"]), default=None, help="Query engine (default native).")
@click.option("--host", default=None, help="Address to listen on (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Port (default 8701).")
@click.option("--token-file", type=click.Path(path_type=Path), default=None, help="File with the bearer token.")
@click.option("--tls-cert", type=click.Path(path_type=Path), default=None, help="TLS certificate (PEM).")
@click.option("--tls-key", type=click.Path(path_type=Path), default=None, help="TLS private key (PEM).")
@click.option("--dev", is_flag=True, default=None, help="Development mode: allow a placeholder token.")
@LOG_LEVEL
@LOG_FORMAT
def serve_command(config: Path | None, log_level: str, log_format: str, **options: object) -> None:
    """Serve the partitions of a registry, each request authenticated with the node token.

    Settings come from --config (TOML), COWBIRD_NODE_* environment variables and these options.
    """
    configure(log_level, "json" if log_format == "json" else "text")
    try:
        overrides = {k: (list(v) if isinstance(v, tuple) else v) for k, v in options.items()}
        settings = NodeSettings.load(config, **overrides)
        token = settings.bearer_token()
        engines = open_engines(settings)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    except CowbirdError as exc:
        raise click.ClickException(exc.detail) from exc
    limit = memory_limit(settings.memory_budget, settings.cache_max_hits * 24, settings.memory_limit)
    if limit is not None:  # after the partitions are open: what opening them held counts, it stays
        limit = apply_memory_limit(limit)
    app = create_app(settings, engines=engines, token=token)
    sys.setswitchinterval(SWITCH_INTERVAL)
    scheme = "https" if settings.tls_cert else "http"
    click.echo(f"cowbird node: {len(engines)} partition(s) with the {settings.engine} engine on "
               f"{scheme}://{settings.host}:{settings.port}"
               + (f", its data limited to {limit / 2**20:,.0f} MB" if limit is not None else ""), err=True)
    limits = ConnectionLimits(total=settings.max_connections, per_client=settings.max_connections_per_client,
                              allowed=networks(settings.allowed_clients, "allowed_clients"))
    serve(
        app, host=settings.host, port=settings.port, limits=limits,
        timeout_keep_alive=int(settings.keep_alive_seconds),
        ssl_certfile=str(settings.tls_cert) if settings.tls_cert else None,
        ssl_keyfile=str(settings.tls_key) if settings.tls_key else None,
    )
