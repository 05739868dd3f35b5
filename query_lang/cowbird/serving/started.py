"""What an app makes in its lifespan (the node's open partitions, the front end's node client),
asked for: there, or a clear error when the app has not started."""

from __future__ import annotations

from typing import TypeVar

T = TypeVar("T")


def started(made: T | None, what: str) -> T:
    """``made`` once the app's lifespan has made it; before, a ``RuntimeError`` saying ``what`` is missing."""
    if made is None:
        raise RuntimeError(what)
    return made
