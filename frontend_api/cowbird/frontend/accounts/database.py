"""The account database: SQLite by default (a file next to the configuration, nothing to start),
PostgreSQL by ``database_url``. ``upgrade`` runs the alembic migrations; they only ever add. Several
front ends starting at once against one PostgreSQL database take turns to migrate it (an advisory
lock): the first brings it up to date, the others find it so."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Engine, create_engine, event, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from cowbird.core.errors import DatabaseError

MIGRATIONS = Path(__file__).parent / "migrations"
MIGRATION_LOCK = 0x636F77626972  # "cowbir": PostgreSQL's advisory lock taken while migrating



def sqlite_url(path: Path) -> str:
    return f"sqlite:///{path.resolve()}"


class Database:
    """One engine and its sessions; ``url`` as SQLAlchemy takes it (``sqlite:///...``,
    ``postgresql+psycopg://user@host/db``). ``counting`` is a second engine on the same database
    for the fair-use counts and the throttles (``counting.py``), written on every query: its commits
    do not wait for the disk (SQLite ``synchronous=NORMAL`` under WAL, PostgreSQL
    ``synchronous_commit=off``) — a power cut may lose the last moments' counts, never corrupt
    anything — where the accounts' own commits still do; and it does not ping connections before
    use (``counting.counted`` tries once more on a new one instead). ``reading`` is a third, in
    autocommit mode, for the counts' reads: no transaction to begin and end around one ``SELECT``."""

    def __init__(self, url: str) -> None:
        self.url = url
        parsed = make_url(url)
        if parsed.get_backend_name() == "sqlite":
            if parsed.database:
                Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
            self.engine: Engine = create_engine(url, connect_args={"check_same_thread": False})
            event.listen(self.engine, "connect", _sqlite_pragmas)
            self.counting: Engine = create_engine(url, connect_args={"check_same_thread": False})
            event.listen(self.counting, "connect", _sqlite_counting_pragmas)
            self.reading: Engine = create_engine(url, connect_args={"check_same_thread": False},
                                                 isolation_level="AUTOCOMMIT")
            event.listen(self.reading, "connect", _sqlite_pragmas)
        else:
            self.engine = create_engine(url, pool_pre_ping=True)
            self.counting = create_engine(url)
            event.listen(self.counting, "connect", _postgresql_counting)
            self.reading = create_engine(url, isolation_level="AUTOCOMMIT")
        self.browser_sessions = sessionmaker(self.engine, expire_on_commit=False)

    def _config(self) -> Config:
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS))
        return config

    def upgrade(self, target: str = "head") -> tuple[str | None, str | None]:
        """Bring the schema to the newest revision (or ``target``); (revision before, revision after)."""
        try:
            with self.engine.begin() as connection:
                if connection.dialect.name == "postgresql":  # released when the transaction ends
                    connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": MIGRATION_LOCK})
                before = MigrationContext.configure(connection).get_current_revision()
                config = self._config()
                config.attributes["connection"] = connection
                command.upgrade(config, target)
                after = MigrationContext.configure(connection).get_current_revision()
        except SQLAlchemyError as exc:
            raise DatabaseError(f"cannot migrate the account database: {exc.__class__.__name__}: {exc}") from exc
        return before, after

    def current(self) -> str | None:
        with self.engine.connect() as connection:
            return MigrationContext.configure(connection).get_current_revision()

    def head(self) -> str | None:
        return ScriptDirectory.from_config(self._config()).get_current_head()

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A unit of work: committed when the block ends, rolled back on an error."""
        session = self.browser_sessions()
        try:
            yield session
            session.commit()
        except BaseException:
            session.rollback()
            raise
        finally:
            session.close()

    def close(self) -> None:
        self.engine.dispose()
        self.counting.dispose()
        self.reading.dispose()


def _sqlite_pragmas(connection: object, _record: object) -> None:
    cursor = connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.close()


def _sqlite_counting_pragmas(connection: object, record: object) -> None:
    _sqlite_pragmas(connection, record)
    cursor = connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()


def _postgresql_counting(connection: object, _record: object) -> None:
    cursor = connection.cursor()  # type: ignore[attr-defined]
    cursor.execute("SET synchronous_commit TO OFF")  # this session's commits only
    cursor.close()
    connection.commit()  # type: ignore[attr-defined]
