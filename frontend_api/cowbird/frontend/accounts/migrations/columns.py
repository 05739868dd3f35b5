"""Columns that several migrations' tables have, written once.

What a function here makes is part of every migration that calls it, and a database upgraded long
ago has it as it was then: never change one (a new migration alters what must change).
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from alembic import op

STAMP = sa.DateTime(timezone=True)
"""A moment, with its time zone."""


def key() -> sa.Column[int]:
    """The table's own id, its primary key."""
    return sa.Column("id", sa.Integer, primary_key=True)


def owner() -> sa.Column[int]:
    """The user a row belongs to (indexed), deleted with the user."""
    return sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False,
                     index=True)


def create_shared_table(name: str, *columns: Any) -> None:
    """A table of what a user keeps and shares by link (``/s/<slug>``): its id, its link's slug and its
    owner come first, then ``columns``."""
    op.create_table(name, key(), sa.Column("slug", sa.String(32), nullable=False, unique=True), owner(), *columns)
