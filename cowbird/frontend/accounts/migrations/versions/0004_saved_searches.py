"""Searches a user saved by name, each with a share link (``/s/<slug>``).

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "saved_searches",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("slug", sa.String(32), nullable=False, unique=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("name", sa.String(120), nullable=False),
        sa.Column("corpus", sa.String(64), nullable=False),
        sa.Column("url", sa.Text, nullable=False),  # the search page's query string: ?corpus=…&q=…
        sa.UniqueConstraint("user_id", "name"),
    )


def downgrade() -> None:
    op.drop_table("saved_searches")
