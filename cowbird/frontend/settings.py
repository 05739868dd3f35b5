"""Front-end settings: a TOML file (``cowbird serve --config``), then ``COWBIRD_*`` environment variables.

A corpus names its manifest (written by ``cowbird encode --partition-tokens``) and the node URLs of
each partition; a partition may be served by several nodes, tried in order. Relative paths in the
file are relative to the file. Everything is checked at start: a node URL without a scheme, an
unknown access level or a setting out of range is a one-line error naming it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, BeforeValidator, Field, PlainSerializer, SecretStr, WithJsonSchema, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from cowbird.core.config import ConfigError, load_settings, read_token
from cowbird.frontend.accounts.mail import Mailer


class AccessLevel(StrEnum):
    """Who may use a corpus."""

    PUBLIC = "public"
    LOGIN = "login"
    GROUP = "group"


_GROUP = re.compile(r"^group:([A-Za-z0-9_.-]+)$")


@dataclass(frozen=True)
class Access:
    """An access level, with the group for ``group:NAME``."""

    level: AccessLevel
    group: str | None = None

    @classmethod
    def parse(cls, value: object) -> object:
        if not isinstance(value, str):
            return value
        if value in (AccessLevel.PUBLIC, AccessLevel.LOGIN):
            return cls(AccessLevel(value))
        found = _GROUP.match(value)
        if found is None:
            raise ValueError(f"access {value!r} is not one of: public, login, group:NAME")
        return cls(AccessLevel.GROUP, found.group(1))

    def __str__(self) -> str:
        return f"group:{self.group}" if self.level is AccessLevel.GROUP else self.level.value


AccessSetting = Annotated[
    Access,
    BeforeValidator(Access.parse),
    PlainSerializer(str, return_type=str),
    WithJsonSchema({"type": "string", "pattern": r"^(public|login|group:[A-Za-z0-9_.-]+)$"}),
]


def check_node_url(url: str) -> str:
    """A node's base URL: ``http(s)://host:port`` (a path prefix is allowed), without a trailing slash."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not a node URL: write http://host:port or https://host:port")
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError as exc:
        raise ValueError(f"{url!r} has an invalid port") from exc
    if parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"{url!r}: a node URL has no user, query or fragment")
    return url.rstrip("/")


class CorpusConfig(BaseModel):
    """One corpus as users see it."""

    name: str = Field(pattern=r"^[A-Za-z0-9_-]+$", description="Short name used in URLs.")
    title: str = Field("", description="Human-readable title.")
    description: str = Field("", description="What the corpus is.")
    language: str = Field("", description="ISO code of the language.")
    version: str = Field("", description="Edition of the corpus as it should be cited (e.g. 2024-03); in downloads.")
    access: AccessSetting = Field(Access(AccessLevel.PUBLIC), description="public, login, or group:NAME.")
    manifest: Path = Field(description="Corpus manifest JSON written by cowbird encode.")
    nodes: dict[str, list[str]] = Field(description="Partition id -> node base URLs (http(s)://host:port), in order.")
    citation: str = Field("", description="Citation text for static links; {url} and {position} are filled in.")
    attributes: dict[str, str] = Field(default_factory=dict, description=(
        "What an attribute holds, shown to users: [corpora.attributes] pos = \"Penn Treebank tags (NN, VBZ ...)\"."))

    @field_validator("nodes")
    @classmethod
    def _node_urls(cls, nodes: dict[str, list[str]]) -> dict[str, list[str]]:
        checked: dict[str, list[str]] = {}
        for partition, urls in nodes.items():
            try:
                checked[partition] = [check_node_url(url) for url in urls]
            except ValueError as exc:
                raise ValueError(f"partition {partition}: {exc}") from None
        return checked


DEFAULT_DATABASE_FILE = "cowbird-accounts.sqlite3"


class FrontendSettings(BaseSettings):
    """Everything the front end needs."""

    model_config = SettingsConfigDict(env_prefix="COWBIRD_", extra="forbid", env_nested_delimiter="__")

    corpora: list[CorpusConfig] = Field(default_factory=list, description="The corpora served.")
    host: str = Field("127.0.0.1", description="Address to listen on.")
    port: int = Field(8700, ge=1, le=65535, description="Port to listen on.")
    public_url: str = Field("", description="Base URL for links in exports (default: from the request).")
    node_token: SecretStr | None = Field(None, description="Bearer token for the nodes (prefer node_token_file).")
    node_token_file: Path | None = Field(None, description="File with the node token.")
    node_ca_file: Path | None = Field(
        None, description="CA certificate(s) (PEM) that https:// nodes' certificates must chain to (a private CA)."
    )
    api_tokens_file: Path | None = Field(
        None, description="Old flat file of API tokens; move them into accounts with `cowbird users import-tokens`."
    )
    database_url: str = Field(
        "", description="Account database (SQLAlchemy URL, e.g. postgresql+psycopg://user@host/cowbird); "
        "empty: the SQLite file database_file."
    )
    database_file: Path | None = Field(
        None, description="SQLite file of the accounts (default: cowbird-accounts.sqlite3 next to the configuration)."
    )
    fanout: Literal["parallel", "serial"] = Field("parallel", description="Call nodes in parallel or one by one.")
    max_parallel: int = Field(8, ge=1, description="Nodes called at once in parallel mode.")
    node_connections: int = Field(
        16, ge=1, description="Connections to each node at most (a pool per node); more requests wait for one."
    )
    node_connect_timeout: float = Field(5.0, gt=0, description="Seconds to connect to a node.")
    node_timeout: float = Field(60.0, gt=0, description="Seconds one node request may take.")
    deadline: float = Field(120.0, gt=0, description="Seconds a whole query may take across all nodes.")
    export_deadline: float = Field(3600.0, gt=0, description="Seconds a whole export may take.")
    health_probe_timeout: float = Field(
        2.0, gt=0, description="Seconds a node has to answer its health check before it counts as down.",
    )
    max_node_response_bytes: int = Field(
        64 * 1024 * 1024, ge=1024 * 1024, description="Largest answer read from a node (an export line by line).",
    )
    allowed_hosts: list[str] = Field(
        default_factory=lambda: ["127.0.0.1", "localhost", "[::1]"],
        description="Host names clients may use to reach the front end (the Host header is checked, so "
        "links in answers cannot be forged); the host of public_url is always allowed. '*' allows any.",
    )
    preview_size: int = Field(100, ge=1, description="Most hits a preview (/api/v1/query) returns.")
    browser_export_limit: int = Field(10_000, ge=1, description="Most rows of an export without an API token.")
    api_export_limit: int = Field(1_000_000, ge=1, description="Most rows of an export in API mode.")
    smtp_host: str = Field("", description="SMTP server that tells users the decision on their account (empty: none).")
    smtp_port: int = Field(25, ge=1, le=65535, description="SMTP port.")
    smtp_from: str = Field("cowbird@localhost", description="Sender address of those e-mails.")
    smtp_starttls: bool = Field(False, description="Use STARTTLS.")
    smtp_user: str = Field("", description="SMTP login (empty: none).")
    smtp_password_file: Path | None = Field(None, description="File with the SMTP password.")
    metrics_token_file: Path | None = Field(
        None, description="File with the bearer token Prometheus sends to /metrics (an admin's API token works too)."
    )
    calf_enabled: bool = Field(False, description="Offer 'find this sentence on the web' on static link pages.")
    calf_allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Hosts Calf may fetch although they are not public addresses (tests: 127.0.0.1).",
    )
    calf_search_url: str = Field("", description="SearXNG-compatible search API Calf asks when a page is gone.")
    calf_cache_dir: Path | None = Field(
        None, description="Where Calf keeps fetched pages (default: a temporary folder)."
    )
    calf_cache_seconds: float = Field(86_400.0, gt=0, description="How long a fetched page is kept.")
    calf_timeout: float = Field(10.0, gt=0, description="Seconds per page Calf fetches.")
    anonymous_running_queries: int = Field(2, ge=1, description="Queries one address runs at once without login.")
    user_running_queries: int = Field(4, ge=1, description="Queries one user runs at once.")
    bulk_running_queries: int = Field(4, ge=1, description="Queries one api_bulk user runs at once by API token.")
    anonymous_rows_per_day: int = Field(50_000, ge=0, description="Rows one address exports per day without login.")
    user_rows_per_day: int = Field(200_000, ge=0, description="Rows one user exports per day.")
    bulk_rows_per_day: int = Field(
        20_000_000, ge=0, description="Rows one api_bulk user exports per day by API token."
    )
    max_context: int = Field(50, ge=0, description="Widest context (tokens each side) a request may ask for.")
    dev: bool = Field(False, description="Development mode: allows a placeholder node token.")

    def trusted_hosts(self) -> list[str]:
        """The Host names requests may use: ``allowed_hosts``, the host of ``public_url`` and the
        address the front end listens on."""
        hosts = list(self.allowed_hosts)
        public = urlsplit(self.public_url).hostname if self.public_url else None
        for host in (public, self.host):
            if host and host not in hosts and host not in ("0.0.0.0", "::"):
                hosts.append(f"[{host}]" if ":" in host else host)
        return hosts

    def node_bearer(self) -> str:
        """The token the nodes expect (``node_token_file`` preferred)."""
        secret = self.node_token.get_secret_value() if self.node_token is not None else None
        return read_token(self.node_token_file, secret, self.dev, "node token")

    @classmethod
    def load(cls, config: Path | None = None, **overrides: Any) -> FrontendSettings:
        """Settings from the TOML file, the environment and ``overrides`` (None values ignored)."""
        settings = load_settings(FrontendSettings, config, overrides)
        if not settings.database_url and settings.database_file is None:
            folder = config.resolve().parent if config is not None else Path.cwd()
            settings = settings.model_copy(update={"database_file": folder / DEFAULT_DATABASE_FILE})
        return settings

    def mailer(self) -> Mailer | None:
        """Who sends decisions by e-mail, or None when no SMTP server is configured."""
        if not self.smtp_host:
            return None
        password = ""
        if self.smtp_password_file is not None:
            try:
                password = self.smtp_password_file.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(f"cannot read smtp_password_file {self.smtp_password_file}: {exc.strerror}") from exc
        return Mailer(self.smtp_host, self.smtp_port, self.smtp_from, self.smtp_starttls, self.smtp_user, password,
                      self.public_url)

    def database_address(self) -> str:
        """The SQLAlchemy URL of the account database."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.database_file or Path(DEFAULT_DATABASE_FILE)).resolve()}"
