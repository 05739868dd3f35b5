"""The account tables (SQLAlchemy 2): users, their groups, every change of state, API tokens and
browser sessions; and what every front-end process counts together (fair use, throttles). The
schema itself is made by the migrations (``migrations/versions``), never by ``create_all``, so
that an upgrade never destroys data."""

from __future__ import annotations

import datetime
from enum import StrEnum

from sqlalchemy import (
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship


def now() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC)


class State(StrEnum):
    """Where a user is in the account lifecycle: ``pending → approved | denied``, ``suspended``."""

    PENDING = "pending"
    APPROVED = "approved"
    DENIED = "denied"
    SUSPENDED = "suspended"


class Role(StrEnum):
    USER = "user"
    ADMIN = "admin"


class Base(DeclarativeBase):
    pass


class Membership(Base):
    __tablename__ = "memberships"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    group_id: Mapped[int] = mapped_column(ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True)


class Group(Base):
    __tablename__ = "groups"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)


class User(Base):
    __tablename__ = "users"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    email: Mapped[str] = mapped_column(String(254))
    email_key: Mapped[str] = mapped_column(String(254), unique=True)  # case-folded: unique regardless of case
    affiliation: Mapped[str] = mapped_column(String(300), default="")
    abstract: Mapped[str] = mapped_column(Text, default="")
    password_hash: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(16), default=Role.USER.value)
    state: Mapped[str] = mapped_column(String(16), default=State.PENDING.value)
    api_bulk: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime.datetime] = mapped_column(DateTime(timezone=True), default=now)
    password_changed_at: Mapped[datetime.datetime] = mapped_column(DateTime(timezone=True), default=now)

    groups: Mapped[list[Group]] = relationship(secondary="memberships", lazy="selectin", order_by=Group.name)

    @property
    def group_names(self) -> list[str]:
        return [group.name for group in self.groups]

    @property
    def is_admin(self) -> bool:
        return self.role == Role.ADMIN.value

    @property
    def active(self) -> bool:
        """Only approved users may log in or use tokens."""
        return self.state == State.APPROVED.value


class StateChange(Base):
    """One change of a user's state, role or rights: who, when and why."""

    __tablename__ = "state_changes"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    what: Mapped[str] = mapped_column(String(200))  # "state: pending -> approved", "group +lab", ...
    actor: Mapped[str] = mapped_column(String(100))  # a user name, or "cli:<login>" for the command line
    reason: Mapped[str] = mapped_column(Text, default="")
    at: Mapped[datetime.datetime] = mapped_column(DateTime(timezone=True), default=now)


class ApiToken(Base):
    """A personal API token: only its SHA-256 digest is stored; the token is shown once."""

    __tablename__ = "api_tokens"
    __table_args__ = (UniqueConstraint("user_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(100))
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(12))  # shown in lists, so that users tell tokens apart
    created_at: Mapped[datetime.datetime] = mapped_column(DateTime(timezone=True), default=now)
    last_used_at: Mapped[datetime.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    revoked_at: Mapped[datetime.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    user: Mapped[User] = relationship(lazy="joined")


class WebSession(Base):
    """A browser session, server side (revocable): the cookie carries the session id, the table its digest."""

    __tablename__ = "web_sessions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    digest: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    csrf: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime.datetime] = mapped_column(DateTime(timezone=True), default=now)
    expires_at: Mapped[datetime.datetime] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime.datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    user: Mapped[User] = relationship(lazy="joined")


class AppSecret(Base):
    """A secret of the installation (``session-key``), made on first use."""

    __tablename__ = "app_secrets"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(200))


class Search(Base):
    """One search a user ran in the browser; the newest ``HISTORY_SIZE`` are kept."""

    __tablename__ = "searches"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    at: Mapped[datetime.datetime] = mapped_column(DateTime(timezone=True), default=now)
    corpus: Mapped[str] = mapped_column(String(64))
    q: Mapped[str] = mapped_column(Text)
    syntax: Mapped[str] = mapped_column(String(8))
    ignore_case: Mapped[bool] = mapped_column(Boolean)
    filters: Mapped[str] = mapped_column(Text)
    total: Mapped[int] = mapped_column(Integer)


class SavedSearch(Base):
    """A search a user named and kept: the search page's URL (query, corpus, filters, view, sort, tab),
    reachable by anyone who may read its corpus through its share link ``/s/<slug>``."""

    __tablename__ = "saved_searches"
    __table_args__ = (UniqueConstraint("user_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(32), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    at: Mapped[datetime.datetime] = mapped_column(DateTime(timezone=True), default=now)
    name: Mapped[str] = mapped_column(String(120))
    corpus: Mapped[str] = mapped_column(String(64))
    url: Mapped[str] = mapped_column(Text)
    labels: Mapped[str] = mapped_column(Text, default="[]")  # JSON: the names of categories 1-9


class LineCategory(Base):
    """The category (1-9) a user gave one concordance line of a saved search: the hit is named by its
    global positions, so the categories come back whatever the order or page it is shown in."""

    __tablename__ = "line_categories"
    __table_args__ = (UniqueConstraint("saved_id", "position", "matchend"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    saved_id: Mapped[int] = mapped_column(ForeignKey("saved_searches.id", ondelete="CASCADE"), index=True)
    position: Mapped[int] = mapped_column(BigInteger)
    matchend: Mapped[int] = mapped_column(BigInteger)
    category: Mapped[int] = mapped_column(Integer)


class Subcorpus(Base):
    """A subcorpus a user defined by metadata: a corpus and the filters (``text_genre~news|blog``) that
    choose its texts, under a name; shared with one of the user's groups if ``group_id`` is set. Its
    size when saved is kept for lists; searches within it count afresh."""

    __tablename__ = "subcorpora"
    __table_args__ = (UniqueConstraint("user_id", "name"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    slug: Mapped[str] = mapped_column(String(32), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    group_id: Mapped[int | None] = mapped_column(ForeignKey("groups.id", ondelete="SET NULL"), nullable=True,
                                                 index=True)
    at: Mapped[datetime.datetime] = mapped_column(DateTime(timezone=True), default=now)
    name: Mapped[str] = mapped_column(String(120))
    corpus: Mapped[str] = mapped_column(String(64))
    filters: Mapped[str] = mapped_column(Text)  # JSON: a list of filters as filter= writes them (ATTR~REGEX ...)
    tokens: Mapped[int] = mapped_column(BigInteger)
    texts: Mapped[int | None] = mapped_column(BigInteger, nullable=True)

    owner: Mapped[User] = relationship(lazy="joined")
    group: Mapped[Group | None] = relationship(lazy="joined")


class CounterLock(Base):
    """One row per counted key (``fair-use:user:ada``, ``throttle:address:10.0.0.1``), written first
    in every check-and-increment of that key: its write lock (a row lock on PostgreSQL, the database's
    write lock on SQLite) makes concurrent checks take turns, in any process on any host."""

    __tablename__ = "counter_locks"

    name: Mapped[str] = mapped_column(String(1000), primary_key=True)
    at: Mapped[float] = mapped_column(Float)  # last used (seconds since the epoch): stale rows are pruned


class RunningQuery(Base):
    """A query or export running now, in the front-end process ``process``; it counts until it ends
    or, if its process died, until ``expires_at`` (its deadline and a margin)."""

    __tablename__ = "running_queries"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    key: Mapped[str] = mapped_column(String(1000), index=True)
    process: Mapped[str] = mapped_column(String(300))
    hold: Mapped[float] = mapped_column(Float)
    started_at: Mapped[float] = mapped_column(Float)
    expires_at: Mapped[float] = mapped_column(Float, index=True)


class FairUseDay(Base):
    """A viewer's export rows and node seconds on one day (UTC)."""

    __tablename__ = "fair_use_days"

    key: Mapped[str] = mapped_column(String(1000), primary_key=True)
    day: Mapped[str] = mapped_column(String(10), primary_key=True)  # UTC, as 2026-11-27
    export_rows: Mapped[int] = mapped_column(BigInteger)
    node_seconds: Mapped[float] = mapped_column(Float)


class ThrottleEvent(Base):
    """A failed login (under each of its keys) or a registration, at a wall-clock time (seconds since
    the epoch: processes on several hosts compare them)."""

    __tablename__ = "throttle_events"
    __table_args__ = (Index("ix_throttle_events_kind_key_at", "kind", "key", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    key: Mapped[str] = mapped_column(String(1000))
    at: Mapped[float] = mapped_column(Float, index=True)


class Job(Base):
    """A workshop job (a crawl and its build, or a build of WARC files): its files and its state live
    in its directory (``job.json``, written by its runner); the row says whose it is and where."""

    __tablename__ = "jobs"

    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))  # crawl, build
    name: Mapped[str] = mapped_column(String(64))
    directory: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime.datetime] = mapped_column(DateTime(timezone=True), default=now)

    owner: Mapped[User] = relationship(lazy="joined")


class PublishedCorpus(Base):
    """A corpus published from a workshop job: it joins the configured corpora in every front-end
    process (``catalogue_version`` tells them that the list changed)."""

    __tablename__ = "published_corpora"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    job_id: Mapped[str | None] = mapped_column(ForeignKey("jobs.id", ondelete="SET NULL"), nullable=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    title: Mapped[str] = mapped_column(String(300), default="")
    language: Mapped[str] = mapped_column(String(16), default="")
    access: Mapped[str] = mapped_column(String(80))  # public, login, group:NAME
    manifest: Mapped[str] = mapped_column(Text)  # the manifest's path (absolute)
    partitions: Mapped[str] = mapped_column(Text)  # JSON: partition id -> node URLs
    published_at: Mapped[datetime.datetime] = mapped_column(DateTime(timezone=True), default=now)


class CatalogueVersion(Base):
    """One row: counted up on every publish and delete, read by each front-end process at most once a
    second to see whether its list of corpora is still current."""

    __tablename__ = "catalogue_version"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    version: Mapped[int] = mapped_column(BigInteger)
