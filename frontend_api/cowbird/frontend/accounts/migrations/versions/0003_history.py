"""A logged-in user's last searches in the browser (the search page lists them, re-runnable)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from cowbird.frontend.accounts.migrations.columns import STAMP, key, owner

revision, down_revision = "0003", "0002"


def upgrade() -> None:
    op.create_table(
        "searches",
        key(),
        owner(),
        sa.Column("at", STAMP, nullable=False),
        sa.Column("corpus", sa.String(64), nullable=False),
        sa.Column("q", sa.Text, nullable=False),
        sa.Column("syntax", sa.String(8), nullable=False),
        sa.Column("ignore_case", sa.Boolean, nullable=False),
        sa.Column("filters", sa.Text, nullable=False),  # JSON list of ATTR~REGEX strings
        sa.Column("total", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("searches")
