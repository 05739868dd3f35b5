"""A real PostgreSQL server for the account tests: ``initdb`` + ``pg_ctl`` in a temporary folder
(Debian's postgresql package; ``.ci/run`` installs it, elsewhere the tests skip saying so)."""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support import unavailable


def postgres_bin() -> Path | None:
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return Path(candidates[-1]).parent if candidates else None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def postgres_server() -> Iterator[str]:
    """Start a throwaway server in a temporary folder of its own (the server's user must be able to
    reach it: pytest's folders are private to root); yield its SQLAlchemy URL (database
    ``postgres``, user ``cowbird``); stop it and remove the folder afterwards."""
    binaries = postgres_bin()
    if binaries is None:
        unavailable("PostgreSQL server binaries (initdb, pg_ctl) are not installed (apt-get install postgresql)")
    base = Path(tempfile.mkdtemp(prefix="cowbird-pg-"))
    data, log = base / "data", base / "server.log"
    as_user: list[str] = []
    if os.geteuid() == 0:  # initdb refuses to run as root: run the server as the postgres user
        shutil.chown(base, "postgres")
        as_user = ["runuser", "-u", "postgres", "--"]
    port = _free_port()
    subprocess.run([*as_user, str(binaries / "initdb"), "-D", str(data), "-U", "cowbird", "--auth=trust",
                    "-E", "UTF8", "--no-sync"], check=True, capture_output=True, timeout=120)
    options = f"-p {port} -k {base} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run([*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-o", options, "-l", str(log), "-w",
                    "start"], check=True, capture_output=True, timeout=120)
    try:
        yield f"postgresql+psycopg://cowbird@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run([*as_user, str(binaries / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=120)
        shutil.rmtree(base, ignore_errors=True)


def user_with_token(database_file: Path, name: str, label: str = "script") -> str:
    """A new user ``name`` in the account database of a running stack, and the secret of an API token
    of theirs (not approved: an anonymous user's rights, by token)."""
    from cowbird.frontend.accounts import Accounts, Database, sqlite_url

    database = Database(sqlite_url(database_file))
    database.upgrade()
    accounts = Accounts(database)
    try:
        with database.session() as session:
            user, _ = accounts.users.add(session, name, f"{name}@uni.example", "tests")
            return accounts.tokens.create(session, user, label).secret
    finally:
        database.close()
