"""Subcorpora users defined by metadata (a corpus and filters), named, and shared with one of their
groups if they like."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    op.create_table(
        "subcorpora",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("slug", sa.String(32), nullable=False, unique=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("group_id", sa.Integer, sa.ForeignKey("groups.id", ondelete="SET NULL"), nullable=True,
                  index=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("name", sa.String(120), nullable=False),
        sa.Column("corpus", sa.String(64), nullable=False),
        sa.Column("filters", sa.Text, nullable=False),  # JSON: ["text_genre~news|blog", ...]
        sa.Column("tokens", sa.BigInteger, nullable=False),  # its size when saved
        sa.Column("texts", sa.BigInteger, nullable=True),
        sa.UniqueConstraint("user_id", "name"),
    )


def downgrade() -> None:
    op.drop_table("subcorpora")
