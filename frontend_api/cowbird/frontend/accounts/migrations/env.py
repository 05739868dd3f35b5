"""Alembic environment: the connection comes from ``Database.upgrade`` (config attribute
``connection``); there is no alembic.ini to keep in step."""

from __future__ import annotations

from alembic import context

from cowbird.frontend.accounts.models import Base

connection = context.config.attributes["connection"]
context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True)
with context.begin_transaction():
    context.run_migrations()
