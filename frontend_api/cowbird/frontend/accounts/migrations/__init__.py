"""Alembic migrations of the account tables (run by ``cowbird db upgrade`` and on ``cowbird serve``)."""
