"""Searches a user saved by name, each with a share link (``/s/<slug>``), and the categories (1-9) the
user gave its concordance lines."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from cowbird.frontend.accounts.migrations.columns import STAMP, create_shared_table, key

revision, down_revision = "0004", "0003"


def upgrade() -> None:
    create_shared_table(
        "saved_searches",
        sa.Column("at", STAMP, nullable=False),
        sa.Column("name", sa.String(120), nullable=False),
        sa.Column("corpus", sa.String(64), nullable=False),
        sa.Column("url", sa.Text, nullable=False),  # the search page's query string: ?corpus=…&q=…
        sa.Column("labels", sa.Text, nullable=False, server_default="[]"),  # JSON: the names of categories 1-9
        sa.UniqueConstraint("user_id", "name"),
    )
    op.create_table(
        "line_categories",
        key(),
        sa.Column("saved_id", sa.Integer, sa.ForeignKey("saved_searches.id", ondelete="CASCADE"), nullable=False,
                  index=True),
        sa.Column("position", sa.BigInteger, nullable=False),
        sa.Column("matchend", sa.BigInteger, nullable=False),
        sa.Column("category", sa.Integer, nullable=False),
        sa.UniqueConstraint("saved_id", "position", "matchend"),
    )


def downgrade() -> None:
    op.drop_table("line_categories")
    op.drop_table("saved_searches")
