"""The workshop: its jobs, the corpora published from them, and the catalogue's version counter
(one row, counted up on every publish and delete, so that every front-end process sees the change)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from cowbird.frontend.accounts.migrations.columns import STAMP, key, owner

revision, down_revision = "0007", "0006"


def upgrade() -> None:
    op.create_table(
        "jobs",
        sa.Column("id", sa.String(32), primary_key=True),
        owner(),
        sa.Column("kind", sa.String(16), nullable=False),  # crawl, build
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("directory", sa.Text, nullable=False),  # the job's directory: job.json, job.log, its data
        sa.Column("created_at", STAMP, nullable=False),
    )
    op.create_table(
        "published_corpora",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("job_id", sa.String(32), sa.ForeignKey("jobs.id", ondelete="SET NULL"), nullable=True),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("title", sa.String(300), nullable=False),
        sa.Column("language", sa.String(16), nullable=False),
        sa.Column("access", sa.String(80), nullable=False),  # public, login, group:NAME
        sa.Column("manifest", sa.Text, nullable=False),
        sa.Column("partitions", sa.Text, nullable=False),  # JSON: partition id -> node URLs
        sa.Column("published_at", STAMP, nullable=False),
    )
    version = op.create_table(
        "catalogue_version",
        key(),
        sa.Column("version", sa.BigInteger, nullable=False),
    )
    op.bulk_insert(version, [{"id": 1, "version": 0}])


def downgrade() -> None:
    op.drop_table("catalogue_version")
    op.drop_table("published_corpora")
    op.drop_table("jobs")
