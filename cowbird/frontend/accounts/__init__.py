"""Accounts and access rights: users with approval, groups, API tokens, browser sessions."""

from cowbird.frontend.accounts.database import Database, DatabaseError, sqlite_url
from cowbird.frontend.accounts.models import Role, State, User
from cowbird.frontend.accounts.service import Accounts, Conflict, NewToken, NotAllowed

__all__ = [
    "Accounts", "Conflict", "Database", "DatabaseError", "NewToken", "NotAllowed", "Role", "State", "User",
    "sqlite_url",
]  # fmt: skip
