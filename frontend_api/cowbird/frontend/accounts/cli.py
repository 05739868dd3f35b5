"""``cowbird db upgrade`` and ``cowbird users ...``: the account database from the command line.

Every command takes ``--config`` (the front end's TOML: its ``[accounts] database_url``/``database_file``);
changes are recorded with the actor ``cli:<login name>``.
"""

from __future__ import annotations

import getpass
import itertools
import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from cowbird.core.errors import CowbirdError
from cowbird.frontend.accounts.database import Database
from cowbird.frontend.accounts.models import State, User
from cowbird.frontend.accounts.service import MIN_IMPORTED_TOKEN, Accounts
from cowbird.frontend.settings import FrontendSettings
from cowbird.serving.config import ConfigError

CONFIG = click.option("--config", type=click.Path(path_type=Path), required=True,
                      help="The front end's TOML configuration (cowbird.toml).")


def _database(config: Path) -> Database:
    """The account database of this configuration, migrated to the newest revision."""
    try:
        settings = FrontendSettings.load(config)
    except ConfigError as exc:
        raise click.ClickException(str(exc)) from exc
    return Database(settings.database_address())


def _open(config: Path) -> Accounts:
    database = _database(config)
    try:
        database.upgrade()
    except CowbirdError as exc:
        database.close()
        raise click.ClickException(str(exc)) from exc
    return Accounts(database)


def _actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


def _run(config: Path, work: Callable[[Accounts, Any], None]) -> None:
    accounts = _open(config)
    try:
        with accounts.database.session() as session:
            work(accounts, session)
    except CowbirdError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        accounts.database.close()


@click.group("db")
def db_group() -> None:
    """The account database."""


@db_group.command("upgrade")
@CONFIG
def db_upgrade(config: Path) -> None:
    """Create or migrate the account tables (cowbird serve does this at start too); never drops data."""
    database = _database(config)
    try:
        before, after = database.upgrade()
    except CowbirdError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        database.close()
    click.echo(f"account database at revision {after}" + ("" if before == after else f" (was {before})"))


@click.group("users")
def users_group() -> None:
    """Accounts: list, review, add, grant rights, import old API tokens."""


def _line(user: User) -> str:
    groups = ",".join(user.group_names) or "-"
    rights = ",".join(r for r, on in (("admin", user.is_admin), ("api_bulk", user.api_bulk)) if on) or "-"
    return f"{user.name}\t{user.email}\t{user.state}\t{rights}\t{groups}\t{user.created_at:%Y-%m-%d}"


@users_group.command("list")
@CONFIG
@click.option("--state", type=click.Choice([s.value for s in State]), default=None, help="Only users in this state.")
def users_list(config: Path, state: str | None) -> None:
    """One line per user: name, e-mail, state, rights, groups, registered."""

    def work(accounts: Accounts, session: Any) -> None:
        for user in accounts.users.all(session, State(state) if state else None):
            click.echo(_line(user))

    _run(config, work)


def _on_a_user(verb: str) -> Callable[[Callable[[Accounts, Any, User], None]], click.Command]:
    """``cowbird users NAME USER``: the decorated function (its docstring the help) gets the accounts,
    the session and the user named (a name or e-mail address)."""

    def command(action: Callable[[Accounts, Any, User], None]) -> click.Command:
        def run(config: Path, name: str) -> None:
            _run(config, lambda accounts, session: action(accounts, session, accounts.users.get(session, name)))

        run.__doc__ = action.__doc__
        return users_group.command(verb)(CONFIG(click.argument("name")(run)))

    return command


@_on_a_user("show")
def users_show(accounts: Accounts, session: Any, user: User) -> None:
    """A user's details, research abstract, tokens and history."""
    click.echo(_line(user))
    click.echo(f"affiliation: {user.affiliation or '-'}")
    click.echo(f"abstract: {user.abstract or '-'}")
    for token in accounts.tokens.of(session, user):
        status = f"revoked {token.revoked_at:%Y-%m-%d}" if token.revoked_at else "active"
        click.echo(f"token {token.name} ({token.prefix}...) {status}")
    for change in accounts.users.changes(session, user):
        reason = f" — {change.reason}" if change.reason else ""
        click.echo(f"{change.at:%Y-%m-%d %H:%M} {change.actor}: {change.what}{reason}")


def _decision(name: str, state: State, needs_reason: bool) -> click.Command:
    @click.command(name)
    @CONFIG
    @click.argument("user")
    @(click.option("--reason", required=True, help="Why (recorded, and told to the user).") if needs_reason
      else click.option("--reason", default="", help="Why (recorded)."))
    def command(config: Path, user: str, reason: str) -> None:
        decided: list[User] = []

        def work(accounts: Accounts, session: Any) -> None:
            target = accounts.users.get(session, user)
            accounts.users.decide(session, target, state, _actor(), reason)
            decided.append(target)
            click.echo(f"{user}: {state.value}")

        _run(config, work)
        mailer = FrontendSettings.load(config).mailer()
        problem = None if mailer is None else mailer.send(decided[0], state, reason)
        if problem is not None:
            click.echo(f"warning: {problem}", err=True)

    command.help = f"Make USER {state.value}."
    return command


for _name, _state, _reason in (("approve", State.APPROVED, False), ("deny", State.DENIED, True),
                               ("suspend", State.SUSPENDED, True), ("reinstate", State.APPROVED, False)):
    users_group.add_command(_decision(_name, _state, _reason))


@users_group.command("add")
@CONFIG
@click.argument("name")
@click.option("--email", required=True, help="E-mail address (unique).")
@click.option("--admin", is_flag=True, help="Make the user an administrator.")
def users_add(config: Path, name: str, email: str, admin: bool) -> None:
    """Add an approved user; prints a one-time password (change it after the first login)."""

    def work(accounts: Accounts, session: Any) -> None:
        user, password = accounts.users.add(session, name, email, _actor(), admin=admin)
        click.echo(f"{user.name} added ({user.role}); one-time password: {password}")

    _run(config, work)


@_on_a_user("reset-password")
def users_reset_password(accounts: Accounts, session: Any, user: User) -> None:
    """Give USER (a name or e-mail address) a new one-time password, printed once; every session of the
    user ends. For a forgotten password, the demo's administrator's included."""
    password = secrets.token_urlsafe(15)
    accounts.users.set_password(session, user, password, _actor())
    click.echo(f"{user.name}: new one-time password: {password}  (log in and change it on /account)")
    live = sum(token.revoked_at is None for token in accounts.tokens.of(session, user))
    if live:
        click.echo(f"{user.name}'s {live} API token(s) keep working; `cowbird users revoke-tokens {user.name}` "
                   "ends them")


@_on_a_user("revoke-tokens")
def users_revoke_tokens(accounts: Accounts, session: Any, user: User) -> None:
    """Revoke every API token of USER at once (a new password leaves them working)."""
    count = accounts.tokens.revoke_all(session, user, _actor())
    click.echo(f"{user.name}: {count} API token(s) revoked")


def _right(name: str, on: bool) -> click.Command:
    @click.command(name)
    @CONFIG
    @click.argument("user")
    @click.argument("right")
    @click.option("--reason", default="", help="Why (recorded).")
    def command(config: Path, user: str, right: str, reason: str) -> None:
        def work(accounts: Accounts, session: Any) -> None:
            target = accounts.users.get(session, user)
            (accounts.users.grant if on else accounts.users.revoke)(session, target, right, _actor(), reason)
            click.echo(f"{user}: {'+' if on else '-'}{right}")

        _run(config, work)

    command.help = f"{'Grant' if on else 'Revoke'} RIGHT: api_bulk, admin or group:NAME."
    return command


users_group.add_command(_right("grant", True))
users_group.add_command(_right("revoke", False))


@users_group.command("import-tokens")
@CONFIG
@click.argument("tokens_file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--user", "owner", required=True, help="The user who will own the imported tokens.")
@click.option("--api-bulk/--no-api-bulk", default=True, show_default=True,
              help="Grant the owner api_bulk (the old file's tokens allowed large exports).")
def users_import_tokens(config: Path, tokens_file: Path, owner: str, api_bulk: bool) -> None:
    """Move the tokens of an old api_tokens_file (one per line, # comments) into accounts. A token
    shorter than 20 characters is refused (easy to guess), and then nothing is imported."""

    def work(accounts: Accounts, session: Any) -> None:
        user = accounts.users.get(session, owner)
        lines = [line.strip() for line in tokens_file.read_text(encoding="utf-8").splitlines()]
        numbered = [(k + 1, line) for k, line in enumerate(lines) if line and not line.startswith("#")]
        short = [str(number) for number, line in numbered if len(line) < MIN_IMPORTED_TOKEN]
        if short:
            raise click.ClickException(
                f"{tokens_file}: the token{'s' if len(short) > 1 else ''} on line{'s' if len(short) > 1 else ''} "
                f"{', '.join(short)} {'are' if len(short) > 1 else 'is'} shorter than {MIN_IMPORTED_TOKEN} "
                "characters and too easy to guess; nothing was imported. Remove them (their users make new "
                "tokens on /account) and run the command again.")
        secrets = [line for _, line in numbered]
        actor = _actor()
        names = {token.name for token in accounts.tokens.of(session, user)}  # of an earlier import too
        free = (f"imported-{k}" for k in itertools.count(1) if f"imported-{k}" not in names)
        name, added = next(free), 0
        for secret in secrets:
            if accounts.tokens.import_secret(session, user, name, secret, actor):
                name, added = next(free), added + 1
        if api_bulk and not user.api_bulk:
            accounts.users.grant(session, user, "api_bulk", _actor(), "imported API tokens")
        click.echo(f"{added} of {len(secrets)} tokens imported for {owner} (the others were already known); "
                   "remove [accounts] api_tokens_file from the configuration")

    _run(config, work)
