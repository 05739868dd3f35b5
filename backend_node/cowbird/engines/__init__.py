"""Query engines over CWB-format partitions: ``native`` (numpy) and ``cwb`` (real CQP), one interface.

``open_engine(registry, corpus_id, name)`` opens either; both answer ``run(query)`` with a
``ResultSet`` whose concordance lines are built on demand.
"""

from __future__ import annotations

from pathlib import Path

from cowbird.core.errors import (
    EngineError,
    EngineUnavailable,
    InvalidOption,
    LimitExceeded,
    QueryFailed,
    QueryTimeout,
    QueryTooExpensive,
)
from cowbird.core.wire import DEFAULT_HARD_BOUNDARY, ENGINES, STRATEGIES, EngineName, Strategy
from cowbird.engines.base import (
    Context,
    Deadline,
    EngineOptions,
    Estimate,
    Hit,
    KwicLine,
    QueryEngine,
    ResultSet,
)


def open_engine(
    registry_dir: Path,
    corpus_id: str,
    engine: EngineName = "native",
    options: EngineOptions | None = None,
    warm: bool = False,
) -> QueryEngine:
    """An engine serving one corpus of a registry; ``warm`` builds its shared state now (as a node
    does at start) instead of on the first queries."""
    options = options or EngineOptions()
    if engine == "cwb":
        from cowbird.engines.cwb import CwbEngine

        def across_cut() -> QueryEngine:  # a query reading past a partition's edge reads its neighbours
            from cowbird.engines.native import NativeEngine

            return NativeEngine.open(registry_dir, corpus_id, options)

        return CwbEngine(registry_dir, corpus_id, options, across_cut)
    if engine != "native":
        raise InvalidOption(f"unknown engine {engine!r} (available: {', '.join(ENGINES)})")
    from cowbird.engines.native import NativeEngine

    native = NativeEngine.open(registry_dir, corpus_id, options)
    if warm:
        from cowbird.engines.analyses import gdex

        native.warm()
        gdex.warm()
    return native


__all__ = [
    "DEFAULT_HARD_BOUNDARY",
    "ENGINES",
    "STRATEGIES",
    "Context",
    "Deadline",
    "EngineError",
    "EngineName",
    "EngineOptions",
    "EngineUnavailable",
    "Estimate",
    "Hit",
    "InvalidOption",
    "KwicLine",
    "LimitExceeded",
    "QueryEngine",
    "QueryFailed",
    "QueryTimeout",
    "QueryTooExpensive",
    "ResultSet",
    "Strategy",
    "open_engine",
]
