"""Node settings: a TOML file, ``COWBIRD_NODE_*`` environment variables, then command-line options.

Precedence, highest first: options given to ``cowbird node serve``, environment variables, the
TOML file (``--config``, whose relative paths are relative to the file), defaults. The node refuses
to start without a real token.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import SettingsConfigDict

from cowbird.engines import EngineName, EngineOptions
from cowbird.serving.config import LayeredSettings, load_settings, read_token


class NodeSettings(LayeredSettings):
    """Everything a backend node needs to serve its partitions."""

    model_config = SettingsConfigDict(env_prefix="COWBIRD_NODE_", extra="forbid")

    registry: Path = Field(description="CWB registry directory holding the partitions to serve.")
    corpora: list[str] = Field(default_factory=list, description="Partition ids to serve (default: all).")
    engine: EngineName = Field("native", description="Query engine: native (numpy) or cwb (real CQP).")
    host: str = Field("127.0.0.1", description="Address to listen on.")
    port: int = Field(8701, ge=1, le=65535, description="Port to listen on.")
    token: SecretStr | None = Field(None, description="Bearer token the front end must send (prefer token_file).")
    token_file: Path | None = Field(None, description="File holding the bearer token.")
    tls_cert: Path | None = Field(None, description="TLS certificate (PEM) to serve HTTPS.")
    tls_key: Path | None = Field(None, description="TLS private key (PEM).")
    dev: bool = Field(False, description="Development mode: allows a placeholder token.")
    max_hits_per_request: int = Field(1000, ge=1, description="Most KWIC lines one /v1/hits request may ask for.")
    max_export_hits: int = Field(1_000_000, ge=1, description="Most lines one /v1/export stream may return.")
    max_analysis_rows: int = Field(
        500_000, ge=1,
        description="Most values one frequency, distribution or co-occurrence answer lists (the rest: truncated).",
    )
    max_analysis_bytes: int = Field(
        32 * 1024 * 1024, ge=1024 * 1024,
        description="Most bytes of values one frequency answer may hold: a breakdown whose values would take "
        "more is refused before it runs where its spans are known (limit_exceeded), else when it gets there.",
    )
    max_sort_keys: int = Field(1_000_000, ge=1, description="Most sort keys one /v1/sortkeys request may ask for.")
    max_context_tokens: int = Field(200, ge=0, description="Widest context (tokens each side) a request may ask for.")
    max_ngram_types: int = Field(50_000_000, ge=1, description=(
        "Most distinct n-grams a word list counts on one partition (about 16 bytes each while it is kept)."))
    max_ngram_rows: int = Field(500_000, ge=1, description="Most word-list rows one /v1/ngrams answer carries.")
    query_timeout: float = Field(60.0, gt=0, description="Seconds a query may run before it is stopped.")
    max_concurrent_queries: int = Field(4, ge=1, description="Queries evaluated at once; more wait in line.")
    max_queued_queries: int = Field(64, ge=0, description="Queries waiting in line; more get 503 and Retry-After.")
    queue_seconds: float = Field(10.0, gt=0, description="Longest a query waits in line before it gets 503.")
    heavy_after_seconds: float = Field(
        0.25, gt=0, description="A query running longer is heavy: it gives its place to short ones and runs at the "
        "lowest CPU priority.",
    )
    max_heavy_queries: int = Field(1, ge=1, description="Heavy queries that step on at once; others pause.")
    max_background_queries: int = Field(
        2, ge=1, description="Background evaluations (analyses, exports, deep sorted pages, queries estimated heavy, "
        "as the front end marks them) run at once, beside the interactive ones; more wait up to their deadline.")
    keep_alive_seconds: float = Field(
        30.0, ge=1, description="Seconds an idle connection stays open. Keep it above the front end's 10 s, so "
        "that the front end never sends a request on a connection the node is closing.",
    )
    max_request_bytes: int = Field(64 * 1024, ge=1024, description="Largest request body accepted.")
    max_connections: int = Field(2048, ge=1, description=(
        "Connections open at once; more are answered 503 with Retry-After as they open."))
    max_connections_per_client: int = Field(512, ge=1, description=(
        "Connections open at once from one client address (the front ends: each front-end process keeps up to "
        "[nodes] connections to a node); more are answered 429 with Retry-After as they open."))
    allowed_clients: list[str] = Field(default_factory=list, description=(
        "Addresses or networks (10.0.0.0/8) connections are accepted from: the front ends'. Any other is "
        "answered 403 and closed as it opens, before a byte is read. Empty (the default): any address."))
    cache_max_hits: int = Field(20_000_000, ge=0, description="Hits kept in the result cache (24 bytes each).")
    max_query_hits: int = Field(
        10_000_000, ge=1000,
        description="Hits one query keeps for reading and exports (24 bytes each); more are counted, not kept.",
    )
    cqp_binary: str | None = Field(None, description="Path of the cqp binary for the cwb engine (default: on PATH).")
    engine_threads: int = Field(2, ge=1, le=64, description="Threads a heavy query's ranges are evaluated on at once.")
    memory_budget: int = Field(
        4 * 1024**3, ge=64 * 1024 * 1024,
        description="Bytes the evaluations running at once may hold beyond the node's idle memory (its caches; "
                    "not the corpus's mapped files): new evaluations wait while three quarters are in use, one "
                    "running past the budget pauses while others may free memory, or is stopped "
                    "(limit_exceeded).",
    )
    memory_limit: int | None = Field(
        None, ge=0,
        description="Bytes of data (heap and anonymous memory; not the corpus's mapped files) the node process may "
                    "hold, set as its OS limit (RLIMIT_DATA) by `cowbird node serve`: an allocation past it fails and "
                    "the query is stopped (limit_exceeded) while the node answers on. Default: memory_budget, plus "
                    "what the result cache may hold (cache_max_hits x 24 bytes), plus 1 GiB; 0: no limit.",
    )
    resident_memory_budget: int = Field(
        4 * 1024 * 1024 * 1024, ge=64 * 1024 * 1024,
        description="Resident bytes above which a partition releases its mapped pages after a query "
                    "(when they are half of it or more). Mapped corpus pages are page cache, which the "
                    "kernel reclaims by itself; each page released is read in again by the next query "
                    "that needs it.",
    )
    regex_time_budget: float = Field(
        10.0, gt=0, description="Seconds one regular expression may run over a lexicon (at most query_timeout).",
    )

    @field_validator("corpora", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        return [v for v in value.split(",") if v] if isinstance(value, str) else value

    @field_validator("allowed_clients", mode="before")
    @classmethod
    def _clients(cls, value: Any) -> Any:
        clients = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
        for client in clients if isinstance(clients, list) else ():
            try:
                ipaddress.ip_network(str(client).strip(), strict=False)
            except ValueError:
                raise ValueError(f"allowed_clients: {client!r} is not an IP address or network (10.0.0.0/8)") from None
        return clients

    def engine_options(self) -> EngineOptions:
        """The tunables the engines take; the regex budget never exceeds the query timeout."""
        return EngineOptions(
            threads=self.engine_threads,
            resident_budget=self.resident_memory_budget,
            regex_seconds=min(self.regex_time_budget, self.query_timeout),
            cqp_binary=self.cqp_binary,
            max_hits=self.max_query_hits,
            work_seconds=self.query_timeout,  # work that surely takes longer would be stopped anyway
        )

    def bearer_token(self) -> str:
        """The token, read from ``token_file`` when given; refuses placeholders outside ``dev``."""
        secret = self.token.get_secret_value() if self.token is not None else None
        return read_token(self.token_file, secret, self.dev, "node token")

    @classmethod
    def load(cls, config: Path | None = None, **overrides: Any) -> NodeSettings:
        """Settings from ``config`` (TOML), the environment and ``overrides`` (None values ignored)."""
        return load_settings(NodeSettings, config, overrides)
