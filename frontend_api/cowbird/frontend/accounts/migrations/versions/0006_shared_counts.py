"""What every front-end process counts together: the queries running per viewer (a row each, with
the process and an expiry, so that a crashed process's queries stop counting), export rows and node
seconds per viewer and day, the throttles' events (failed logins, registrations), and a lock row per
counted key that makes each check-and-increment take turns across processes."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from cowbird.frontend.accounts.migrations.columns import key

revision, down_revision = "0006", "0005"


def upgrade() -> None:
    op.create_table(
        "counter_locks",
        sa.Column("name", sa.String(1000), primary_key=True),  # "fair-use:user:ada", "throttle:address:10.0.0.1"
        sa.Column("at", sa.Float, nullable=False),  # last used (seconds since the epoch): stale rows are pruned
    )
    op.create_table(
        "running_queries",
        key(),
        sa.Column("key", sa.String(1000), nullable=False, index=True),  # "user:ada", "address:10.0.0.1"
        sa.Column("process", sa.String(300), nullable=False),  # host:pid of the front end running it
        sa.Column("hold", sa.Float, nullable=False),  # the node seconds held (its estimate) while it runs
        sa.Column("started_at", sa.Float, nullable=False),
        sa.Column("expires_at", sa.Float, nullable=False, index=True),  # its deadline and a margin
    )
    op.create_table(
        "fair_use_days",
        sa.Column("key", sa.String(1000), primary_key=True),
        sa.Column("day", sa.String(10), primary_key=True),  # UTC, as 2026-11-27 (a plain string on every database)
        sa.Column("export_rows", sa.BigInteger, nullable=False),
        sa.Column("node_seconds", sa.Float, nullable=False),
    )
    op.create_table(
        "throttle_events",
        key(),
        sa.Column("kind", sa.String(16), nullable=False),  # pair, account, address, registration
        sa.Column("key", sa.String(1000), nullable=False),
        sa.Column("at", sa.Float, nullable=False),  # wall clock (seconds since the epoch): processes compare them
    )
    op.create_index("ix_throttle_events_kind_key_at", "throttle_events", ["kind", "key", "at"])
    op.create_index("ix_throttle_events_at", "throttle_events", ["at"])


def downgrade() -> None:
    op.drop_table("throttle_events")
    op.drop_table("fair_use_days")
    op.drop_table("running_queries")
    op.drop_table("counter_locks")
