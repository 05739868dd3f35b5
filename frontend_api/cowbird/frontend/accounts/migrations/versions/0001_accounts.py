"""Accounts: users, groups, memberships, state changes, API tokens, browser sessions."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from cowbird.frontend.accounts.migrations.columns import STAMP, key, owner

revision, down_revision = "0001", None


def upgrade() -> None:
    op.create_table(
        "users",
        key(),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("email", sa.String(254), nullable=False),
        sa.Column("email_key", sa.String(254), nullable=False, unique=True),
        sa.Column("affiliation", sa.String(300), nullable=False),
        sa.Column("abstract", sa.Text, nullable=False),
        sa.Column("password_hash", sa.String(200), nullable=False),
        sa.Column("role", sa.String(16), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("api_bulk", sa.Boolean, nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.Column("password_changed_at", STAMP, nullable=False),
    )
    op.create_table(
        "groups",
        key(),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
    )
    op.create_table(
        "memberships",
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("group_id", sa.Integer, sa.ForeignKey("groups.id", ondelete="CASCADE"), primary_key=True),
    )
    op.create_table(
        "state_changes",
        key(),
        owner(),
        sa.Column("what", sa.String(200), nullable=False),
        sa.Column("actor", sa.String(100), nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("at", STAMP, nullable=False),
    )
    op.create_table(
        "api_tokens",
        key(),
        owner(),
        sa.Column("name", sa.String(100), nullable=False),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(12), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.Column("last_used_at", STAMP, nullable=True),
        sa.Column("revoked_at", STAMP, nullable=True),
        sa.UniqueConstraint("user_id", "name"),
    )
    op.create_table(
        "web_sessions",
        key(),
        sa.Column("digest", sa.String(64), nullable=False, unique=True),
        owner(),
        sa.Column("csrf", sa.String(64), nullable=False),
        sa.Column("created_at", STAMP, nullable=False),
        sa.Column("expires_at", STAMP, nullable=False),
        sa.Column("revoked_at", STAMP, nullable=True),
    )


def downgrade() -> None:
    for table in ("web_sessions", "api_tokens", "state_changes", "memberships", "groups", "users"):
        op.drop_table(table)
