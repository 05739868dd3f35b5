"""Front-end settings: a TOML file (``cowbird serve --config``), then ``COWBIRD_*`` environment variables.

A corpus names its manifest (written by ``cowbird encode --partition-tokens``) and the node URLs of
each partition; a partition may be served by several nodes, tried in order. Relative paths in the
file are relative to the file. Everything is checked at start: a node URL without a scheme, an
unknown access level or a setting out of range is a one-line error naming it.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    SecretStr,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from cowbird.core.archives import ArchiveSettings
from cowbird.core.gdex import GdexRules
from cowbird.frontend.accounts.mail import Mailer
from cowbird.serving.config import ConfigError, LayeredSettings, load_settings, read_token


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
    citation: str = Field("", description=(
        "Citation text for static links; {title}, {positions} ('positions 479–481'), {position}, {link}, {url}, "
        "{source}, {crawled} (', crawled 2013-05-02' where the text has a crawl date) and {date} (the day it was "
        "retrieved from cowbird) are filled in."))
    attributes: dict[str, str] = Field(default_factory=dict, description=(
        "What an attribute holds, shown to users: [corpora.attributes] pos = \"Penn Treebank tags (NN, VBZ ...)\"."))
    sketch_grammar: str | None = Field(None, description=(
        "Word sketches: a shipped sketch grammar (penn: Penn Treebank tags in pos; ud: Universal Dependencies' "
        "upos; stts: German STTS tags in pos) or the path of a grammar file (docs/word-sketches.md). Checked "
        "against the corpus's attributes at start."))
    gdex: GdexRules = Field(default_factory=GdexRules, description=(
        "Good examples first (sort=gdex): the rules a concordance line is scored by — [corpora.gdex] region, "
        "min_length, max_length, max_rare, common_words and [corpora.gdex.weights] (cowbird.core.gdex)."))

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


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NodeAccess(_Group):
    """``[nodes]``: how the front end reaches the nodes."""

    token: SecretStr | None = Field(None, description="Bearer token for the nodes (prefer token_file).")
    token_file: Path | None = Field(None, description="File with the node token.")
    ca_file: Path | None = Field(
        None, description="CA certificate(s) (PEM) that https:// nodes' certificates must chain to (a private CA)."
    )
    fanout: Literal["parallel", "serial"] = Field("parallel", description="Call nodes in parallel or one by one.")
    max_parallel: int = Field(8, ge=1, description="Nodes called at once in parallel mode.")
    connections: int = Field(
        16, ge=1, description="Connections to each node at most (a pool per node); more requests wait for one."
    )
    connect_timeout: float = Field(5.0, gt=0, description="Seconds to connect to a node.")
    timeout: float = Field(60.0, gt=0, description="Seconds one node request may take.")
    health_probe_timeout: float = Field(
        1.0, gt=0, description="Seconds a node has to answer its health check before it counts as down.",
    )
    hedge_after: float = Field(0.5, gt=0, description=(
        "Seconds a call waits for a node before, while a replica could answer, it checks that the node still "
        "answers (one health check per node, shared); a node that does not is left for the replica at once."))
    max_response_bytes: int = Field(
        64 * 1024 * 1024, ge=1024 * 1024, description="Largest answer read from a node (an export line by line).",
    )


class LimitSettings(_Group):
    """``[limits]``: how long and how large a request may be."""

    deadline: float = Field(120.0, gt=0, description="Seconds a whole query may take across all nodes.")
    export_deadline: float = Field(3600.0, gt=0, description="Seconds a whole export may take.")
    preview_size: int = Field(100, ge=1, description="Most hits a preview (/api/v1/query) returns.")
    max_request_bytes: int = Field(1024 * 1024, ge=16 * 1024, description=(
        "Largest request body accepted (forms, saved searches, line categories); larger: 413, unread."))
    request_body_seconds: float = Field(30.0, gt=0, description=(
        "Seconds a request body has to arrive whole after its headers; slower: 408."))
    browser_export_limit: int = Field(10_000, ge=1, description="Most rows of an export without an API token.")
    api_export_limit: int = Field(1_000_000, ge=1, description="Most rows of an export in API mode.")
    max_context: int = Field(50, ge=0, description=(
        "Widest context (tokens each side) a request may ask for; across a cut between partitions a context "
        "reads at most the 128 tokens each partition carries of its neighbours."))
    max_line_context: int = Field(100, ge=0, description=(
        "Widest context (tokens each side) one concordance line may be widened to in place "
        "(/api/v1/context); below the nodes' max_context_tokens, and across a cut at most the 128 tokens each "
        "partition carries of its neighbours."))
    interactive_seconds: float = Field(0.1, gt=0, description=(
        "The interactive budget: a request estimated to cost more (its query's estimated seconds on the nodes, "
        "plus its hits' work: classing.py) runs as background work (beside interactive work, never in its "
        "place), one within it at once as interactive work, whatever its kind; one estimated beyond deadline "
        "is refused with its estimate before it runs."))
    background_slots: int = Field(3, ge=1, description=(
        "Background requests (estimated beyond the interactive budget, or background work of their kind) one "
        "front-end process works on at once, shared per user by cost (the least node seconds first); interactive "
        "ones never wait for them."))
    long_background_slots: int = Field(1, ge=1, description=(
        "Of background_slots, how many may go to long work at once (estimated at 2 node seconds or more: a heavy "
        "query, a wide export): the others stay for short background work, which never waits behind it."))
    confirm_seconds: float = Field(30.0, gt=0, description=(
        "A query estimated to take longer (/api/v1/estimate) is run by the search page only after the user "
        "confirms it."))


class FairUseSettings(_Group):
    """``[fair_use]``: queries at once and rows per day, by kind of viewer."""

    anonymous_running_queries: int = Field(2, ge=1, description="Queries one address runs at once without login.")
    anonymous_estimates: int = Field(2, ge=1, description=(
        "Estimates (/api/v1/estimate) without login at work at once in one front-end process, all addresses "
        "together, one per address; more are answered 429 with Retry-After. They run at the nodes as background "
        "work, never in a preview's place."))
    user_running_queries: int = Field(4, ge=1, description="Queries one user runs at once.")
    bulk_running_queries: int = Field(4, ge=1, description="Queries one api_bulk user runs at once by API token.")
    queue_seconds: float = Field(5.0, ge=0, description=(
        "Seconds a query waits for one of the viewer's running queries to end when they already run as many as "
        "they may, before it is refused (429); 0: refused at once."))
    anonymous_rows_per_day: int = Field(50_000, ge=0, description="Rows one address exports per day without login.")
    user_rows_per_day: int = Field(200_000, ge=0, description="Rows one user exports per day.")
    bulk_rows_per_day: int = Field(
        20_000_000, ge=0, description="Rows one api_bulk user exports per day by API token."
    )
    anonymous_node_seconds_per_day: float = Field(
        3_600.0, gt=0, description="Seconds of the nodes' time one address's queries take per day without login.")
    user_node_seconds_per_day: float = Field(
        14_400.0, gt=0, description="Seconds of the nodes' time one user's queries take per day.")
    bulk_node_seconds_per_day: float = Field(
        86_400.0, gt=0, description="Seconds of the nodes' time one api_bulk user's queries take per day.")


class AccountSettings(_Group):
    """``[accounts]``: where the accounts are kept."""

    database_url: str = Field(
        "", description="Account database (SQLAlchemy URL, e.g. postgresql+psycopg://user@host/cowbird); "
        "empty: the SQLite file database_file."
    )
    database_file: Path | None = Field(
        None, description="SQLite file of the accounts (default: cowbird-accounts.sqlite3 next to the configuration)."
    )
    api_tokens_file: Path | None = Field(
        None, description="Old flat file of API tokens; move them into accounts with `cowbird users import-tokens`."
    )


class SmtpSettings(_Group):
    """``[smtp]``: the server that tells users the decision on their account."""

    host: str = Field("", description="SMTP server (empty: no e-mail).")
    port: int = Field(25, ge=1, le=65535, description="SMTP port.")
    sender: str = Field("cowbird@localhost", description="Sender address of those e-mails.")
    starttls: bool = Field(False, description="Use STARTTLS.")
    user: str = Field("", description="SMTP login (empty: none).")
    password_file: Path | None = Field(None, description="File with the SMTP password.")


class CalfSettings(_Group):
    """``[calf]``: finding a static link's sentence on the web."""

    enabled: bool = Field(False, description="Offer 'find this sentence on the web' on static link pages.")
    fetch_pages: bool = Field(True, description=(
        "Fetch the text's own page first; false: look in the web archives only (the demo, whose sites are made up)."))
    allowed_hosts: list[str] = Field(
        default_factory=list,
        description="Hosts Calf may fetch although they are not public addresses (tests: 127.0.0.1).",
    )
    search_url: str = Field("", description="SearXNG-compatible search API Calf asks when a page is gone.")
    cache_dir: Path | None = Field(None, description="Where Calf keeps fetched pages (default: a temporary folder).")
    cache_seconds: float = Field(86_400.0, gt=0, description="How long a fetched page is kept.")
    timeout: float = Field(10.0, gt=0, description="Seconds per page Calf fetches.")
    archives: list[ArchiveSettings] = Field(default_factory=list, description=(
        "Web archives asked, in order, when the page is gone or the sentence is not on it ([[calf.archives]] "
        "tables, as in Calf's --archives file: name, kind = cdx, memento or commoncrawl, their addresses, "
        "rate, concurrency)."))
    archive_window_days: int = Field(1095, ge=1, le=36_500, description=(
        "Captures this many days either side of the text's crawl date."))
    date_attribute: str = Field("", description=(
        "The s-attribute with the text's crawl date (default: the first of text_crawl_date, text_lastmod, "
        "text_date, text_year ... the corpus has)."))


def networks(key: str, values: list[str], what: str) -> list[str]:
    """``values`` checked as IP addresses or networks (CIDR); the first that is not one is named."""
    for value in values:
        try:
            ipaddress.ip_network(value, strict=False)
        except ValueError:
            raise ValueError(f"{key}: {value!r} {what}") from None
    return values


class WorkshopSettings(_Group):
    """``[workshop]``: building corpora in the browser (docs/workshop.md)."""

    enabled: bool = Field(False, description="Offer the workshop: crawl and build jobs, publishing corpora.")
    directory: Path | None = Field(None, description="Where the jobs' directories live (needed when enabled).")
    registry: Path | None = Field(None, description=(
        "The registry directory published corpora are put in; the nodes in nodes serve it."))
    nodes: list[str] = Field(default_factory=list, description=(
        "Base URLs of the nodes serving registry; each is told to reload it (POST /v1/registry/reload)."))
    group: str = Field("builders", pattern=r"^[A-Za-z0-9_.-]+$", description=(
        "The group whose members may build (administrators always may)."))
    inputs: Path | None = Field(None, description=(
        "A server-side directory whose WARC files a build may use (none: uploads only)."))
    max_upload_bytes: int = Field(2 * 1024**3, ge=1024, description="Largest upload of WARC files to one job.")
    crawl_allow: list[str] = Field(default_factory=list, description=(
        "Address ranges (CIDR) the crawler may connect to (empty: public unicast addresses only)."))
    crawl_delay: float = Field(1.0, ge=0, description="Seconds between a crawl's requests to one host.")
    max_running: int = Field(2, ge=1, description="Jobs running at once; a new one is refused beyond.")
    max_pages: int = Field(100_000, ge=1, description="The largest page budget a crawl job may ask for.")

    @field_validator("nodes")
    @classmethod
    def _node_urls(cls, nodes: list[str]) -> list[str]:
        return [check_node_url(url) for url in nodes]

    @field_validator("crawl_allow")
    @classmethod
    def _ranges(cls, ranges: list[str]) -> list[str]:
        return networks("crawl_allow", ranges, "is not an address range (127.0.0.0/8)")

    @model_validator(mode="after")
    def _places(self) -> WorkshopSettings:
        if self.enabled and (self.directory is None or self.registry is None):
            raise ValueError("[workshop] enabled needs directory (for the jobs) and registry (for published corpora)")
        return self


FLAT_KEYS: dict[str, tuple[str, str]] = {
    "node_token": ("nodes", "token"), "node_token_file": ("nodes", "token_file"),
    "node_ca_file": ("nodes", "ca_file"), "fanout": ("nodes", "fanout"), "max_parallel": ("nodes", "max_parallel"),
    "node_connections": ("nodes", "connections"), "node_connect_timeout": ("nodes", "connect_timeout"),
    "node_timeout": ("nodes", "timeout"), "health_probe_timeout": ("nodes", "health_probe_timeout"),
    "hedge_after": ("nodes", "hedge_after"),
    "max_node_response_bytes": ("nodes", "max_response_bytes"),
    **{name: ("limits", name) for name in LimitSettings.model_fields},
    **{name: ("fair_use", name) for name in FairUseSettings.model_fields},
    **{name: ("accounts", name) for name in AccountSettings.model_fields},
    "smtp_host": ("smtp", "host"), "smtp_port": ("smtp", "port"), "smtp_from": ("smtp", "sender"),
    "smtp_starttls": ("smtp", "starttls"), "smtp_user": ("smtp", "user"),
    "smtp_password_file": ("smtp", "password_file"),
    **{f"calf_{name}": ("calf", name) for name in CalfSettings.model_fields},
}  # fmt: skip
"""The settings' names before they were grouped (``node_timeout``, now ``[nodes] timeout``): a
configuration file, ``COWBIRD_NODE_TIMEOUT`` or a keyword argument that uses them still works."""


def nest_flat_keys(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the flat names of ``FLAT_KEYS`` moved into their groups; a setting given both
    ways is an error naming both, never one silently taken over the other."""
    nested = {key: value for key, value in data.items() if key not in FLAT_KEYS}
    for key, value in data.items():
        if key not in FLAT_KEYS:
            continue
        group, name = FLAT_KEYS[key]
        section = nested.get(group)
        if isinstance(section, BaseModel):  # FrontendSettings(nodes=NodeAccess(...), node_timeout=...)
            section = section.model_dump(exclude_unset=True)
        section = dict(section) if isinstance(section, dict) else {}
        if name in section:
            raise ValueError(f"{key} and [{group}] {name} are one setting: give it once (as [{group}] {name})")
        section[name] = value
        nested[group] = section
    return nested


class FrontendSettings(LayeredSettings):
    """Everything the front end needs: the corpora and where it listens at the top, the rest in
    groups (``[nodes]``, ``[limits]``, ``[fair_use]``, ``[accounts]``, ``[smtp]``, ``[calf]``; in the
    environment ``COWBIRD_NODES__TIMEOUT``). The flat names of earlier versions still work
    (``FLAT_KEYS``)."""

    model_config = SettingsConfigDict(env_prefix="COWBIRD_", extra="forbid", env_nested_delimiter="__")

    corpora: list[CorpusConfig] = Field(default_factory=list, description="The corpora served.")
    host: str = Field("127.0.0.1", description="Address to listen on.")
    port: int = Field(8700, ge=1, le=65535, description="Port to listen on.")
    public_url: str = Field("", description="Base URL for links in exports (default: from the request).")
    trusted_proxies: list[str] = Field(default_factory=list, description=(
        "Addresses or networks (10.0.0.0/8) of the reverse proxies in front of the front end: only from them "
        "are X-Forwarded-For and X-Forwarded-Proto believed (the client's address counts for fair use and "
        "throttles). Empty (the default): never; the connection's own address is the client's."))
    max_connections: int = Field(2048, ge=1, description=(
        "Connections one front-end process has open at once; more are answered 503 with Retry-After as they open."))
    max_connections_per_client: int = Field(64, ge=1, description=(
        "Connections one front-end process has open at once from one client address (an IPv6 client by its /64; "
        "behind a trusted proxy, requests at work per forwarded address); more are answered 429 with Retry-After "
        "as they open. A browser opens 6 to a host."))
    allowed_hosts: list[str] = Field(
        default_factory=lambda: ["127.0.0.1", "localhost", "[::1]"],
        description="Host names clients may use to reach the front end (the Host header is checked, so "
        "links in answers cannot be forged); the host of public_url is always allowed. '*' allows any.",
    )
    metrics_token_file: Path | None = Field(
        None, description="File with the bearer token Prometheus sends to /metrics (an admin's API token works too)."
    )
    dev: bool = Field(False, description="Development mode: allows a placeholder node token.")
    nodes: NodeAccess = Field(default_factory=NodeAccess, description="How the nodes are reached.")
    limits: LimitSettings = Field(default_factory=LimitSettings, description="Deadlines and sizes.")
    fair_use: FairUseSettings = Field(default_factory=FairUseSettings, description="Queries and rows per viewer.")
    accounts: AccountSettings = Field(default_factory=AccountSettings, description="The account database.")
    smtp: SmtpSettings = Field(default_factory=SmtpSettings, description="E-mail to users.")
    calf: CalfSettings = Field(default_factory=CalfSettings, description="Sentences found on the web.")
    workshop: WorkshopSettings = Field(default_factory=WorkshopSettings, description=(
        "Building corpora in the browser."))

    @staticmethod
    def upgrade_keys(data: dict[str, Any]) -> dict[str, Any]:
        """The flat names in a TOML file or the overrides, nested (``serving.config.load_settings``)."""
        return nest_flat_keys(data)

    @model_validator(mode="before")
    @classmethod
    def _flat_keys(cls, data: Any) -> Any:
        return nest_flat_keys(data) if isinstance(data, dict) else data

    @classmethod
    def extra_sources(cls, settings_cls: type[BaseSettings]) -> tuple[PydanticBaseSettingsSource, ...]:
        return (FlatEnvironment(settings_cls),)

    @field_validator("trusted_proxies")
    @classmethod
    def _proxy_addresses(cls, proxies: list[str]) -> list[str]:
        return networks("trusted_proxies", proxies, "is not an IP address or network (10.0.0.0/8)")

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
        """The token the nodes expect (``[nodes] token_file`` preferred)."""
        secret = self.nodes.token.get_secret_value() if self.nodes.token is not None else None
        return read_token(self.nodes.token_file, secret, self.dev, "node token")

    @classmethod
    def load(cls, config: Path | None = None, **overrides: Any) -> FrontendSettings:
        """Settings from the TOML file, the environment and ``overrides`` (None values ignored)."""
        settings = load_settings(FrontendSettings, config, overrides)
        if not settings.accounts.database_url and settings.accounts.database_file is None:
            folder = config.resolve().parent if config is not None else Path.cwd()
            accounts = settings.accounts.model_copy(update={"database_file": folder / DEFAULT_DATABASE_FILE})
            settings = settings.model_copy(update={"accounts": accounts})
        return settings

    def mailer(self) -> Mailer | None:
        """Who sends decisions by e-mail, or None when no SMTP server is configured."""
        smtp = self.smtp
        if not smtp.host:
            return None
        password = ""
        if smtp.password_file is not None:
            try:
                password = smtp.password_file.read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(f"cannot read [smtp] password_file {smtp.password_file}: {exc.strerror}") from exc
        return Mailer(smtp.host, smtp.port, smtp.sender, smtp.starttls, smtp.user, password, self.public_url)

    def database_address(self) -> str:
        """The SQLAlchemy URL of the account database."""
        if self.accounts.database_url:
            return self.accounts.database_url
        return f"sqlite:///{(self.accounts.database_file or Path(DEFAULT_DATABASE_FILE)).resolve()}"


class FlatEnvironment(PydanticBaseSettingsSource):
    """``COWBIRD_NODE_TIMEOUT`` and the other flat names of ``FLAT_KEYS`` in the environment, nested
    into their groups (a list, such as ``COWBIRD_CALF_ALLOWED_HOSTS``, as JSON)."""

    def get_field_value(self, field: Any, field_name: str) -> tuple[Any, str, bool]:  # pragma: no cover - unused
        return None, field_name, False

    def __call__(self) -> dict[str, Any]:
        environment = {key.upper(): value for key, value in os.environ.items()}
        found: dict[str, Any] = {}
        for key in FLAT_KEYS:
            value = environment.get(f"COWBIRD_{key.upper()}")
            if value is None:
                continue
            if value.lstrip().startswith("["):
                try:
                    value = json.loads(value)
                except ValueError as exc:
                    raise ConfigError(f"COWBIRD_{key.upper()}: not a JSON list ({exc})") from exc
            found[key] = value
        return nest_flat_keys(found)
