"""The computations of the declared analyses (``cowbird.core.declared``): each one's module of this
package, named as the analysis, registers its function with ``@computes(ANALYSIS)``; the node finds
it by the analysis's name (``computation``) and runs it as every analysis, under its scheduler, on
the partition's store and the query's hits, every hit held."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from cowbird.core.declared import HitAnalysis
from cowbird.engines.base import Deadline
from cowbird.engines.results import Matches
from cowbird.store import CwbCorpus

Pa = TypeVar("Pa", bound=BaseModel)
An = TypeVar("An", bound=BaseModel)

Computation = Callable[[Deadline, CwbCorpus, Matches, Pa, int], An]
"""A partition's answer from its store, the hits, the analysis's parameters and the most rows a node answers."""

_COMPUTED: dict[str, Callable[..., BaseModel]] = {}


def computes(analysis: HitAnalysis[Pa, An, Any]) -> Callable[[Computation[Pa, An]], Computation[Pa, An]]:
    """Declare the function that computes ``analysis`` on a partition (mypy checks it against the
    analysis's parameters and answer)."""

    def register(function: Computation[Pa, An]) -> Computation[Pa, An]:
        assert analysis.name not in _COMPUTED, f"{analysis.name} is computed twice"
        _COMPUTED[analysis.name] = function
        return function

    return register


def computation(analysis: HitAnalysis[Any, Any, Any]) -> Callable[..., BaseModel]:
    """The function computing ``analysis``: the one its module (``cowbird.engines.analyses.<name>``) registers."""
    if analysis.name not in _COMPUTED:
        importlib.import_module(f"cowbird.engines.analyses.{analysis.name}")
    if analysis.name not in _COMPUTED:
        raise TypeError(f"cowbird.engines.analyses.{analysis.name} computes nothing for {analysis!r} (@computes)")
    return _COMPUTED[analysis.name]
