"""Accounts and access rights: users with approval, groups, API tokens, browser sessions; and the counts
every front-end process shares through the account database (``counting``, ``throttle``)."""

from cowbird.core.errors import Conflict, DatabaseError, NotAllowed
from cowbird.frontend.accounts.database import Database, sqlite_url
from cowbird.frontend.accounts.models import Role, State, User
from cowbird.frontend.accounts.service import Accounts, NewToken

__all__ = [
    "Accounts", "Conflict", "Database", "DatabaseError", "NewToken", "NotAllowed", "Role", "State", "User",
    "sqlite_url",
]  # fmt: skip
