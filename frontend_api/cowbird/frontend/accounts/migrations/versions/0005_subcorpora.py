"""Subcorpora users defined by metadata (a corpus and filters), named, and shared with one of their
groups if they like."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from cowbird.frontend.accounts.migrations.columns import STAMP, create_shared_table

revision, down_revision = "0005", "0004"


def upgrade() -> None:
    create_shared_table(
        "subcorpora",
        sa.Column("group_id", sa.Integer, sa.ForeignKey("groups.id", ondelete="SET NULL"), nullable=True,
                  index=True),
        sa.Column("at", STAMP, nullable=False),
        sa.Column("name", sa.String(120), nullable=False),
        sa.Column("corpus", sa.String(64), nullable=False),
        sa.Column("filters", sa.Text, nullable=False),  # JSON: ["text_genre~news|blog", ...]
        sa.Column("tokens", sa.BigInteger, nullable=False),  # its size when saved
        sa.Column("texts", sa.BigInteger, nullable=True),
        sa.UniqueConstraint("user_id", "name"),
    )


def downgrade() -> None:
    op.drop_table("subcorpora")
