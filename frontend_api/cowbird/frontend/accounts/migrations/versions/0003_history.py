"""A logged-in user's last searches in the browser (the search page lists them, re-runnable)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "searches",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False, index=True),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("corpus", sa.String(64), nullable=False),
        sa.Column("q", sa.Text, nullable=False),
        sa.Column("syntax", sa.String(8), nullable=False),
        sa.Column("ignore_case", sa.Boolean, nullable=False),
        sa.Column("filters", sa.Text, nullable=False),  # JSON list of ATTR~REGEX strings
        sa.Column("total", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("searches")
