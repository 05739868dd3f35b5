"""Secrets the front end keeps in the database (the key that signs session cookies), so that every
front-end process and every restart signs alike without a file to distribute."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision, down_revision = "0002", "0001"


def upgrade() -> None:
    op.create_table(
        "app_secrets",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.String(200), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("app_secrets")
