"""Accounts and access rights: users with approval, groups, API tokens, browser sessions."""

from frontend_api.accounts.database import Database, DatabaseError, sqlite_url
from frontend_api.accounts.models import Role, State, User
from frontend_api.accounts.service import Accounts, Conflict, NewToken, NotAllowed

__all__ = [
    "Accounts", "Conflict", "Database", "DatabaseError", "NewToken", "NotAllowed", "Role", "State", "User",
    "sqlite_url",
]  # fmt: skip
