"""Dispatch over a closed set has an entry for every member: formats, measures, error codes."""

from __future__ import annotations

import inspect
from typing import get_args

import numpy as np

from cowbird.core import errors
from cowbird.core.analysis_merge import MEASURE_FUNCTIONS, MEASURES, Measure, scores
from cowbird.frontend.downloads import FORMATS, MEDIA_TYPES, REGISTRY, Format, writer


def test_every_download_format_has_a_writer_and_a_media_type() -> None:
    assert set(REGISTRY) == set(get_args(Format)) == set(FORMATS) == set(MEDIA_TYPES)
    for name in FORMATS:
        out = writer(name, ["a", "b"], None)
        try:
            assert isinstance(out.start() + out.rows([["x", "y"]]), bytes)
        finally:
            out.abort()


def test_every_measure_has_a_function_and_a_value() -> None:
    assert set(MEASURE_FUNCTIONS) == set(get_args(Measure)) == set(MEASURES)
    # a collocate seen 10 times next to a node of 100 hits, 50 times in 10,000 tokens
    e11, values = scores(np.array([10.0]), 100.0, np.array([50.0]), 10_000.0, list(MEASURES))
    assert e11[0] == 0.5
    assert round(float(values["mi"][0]), 6) == round(float(np.log2(10 / 0.5)), 6)
    assert round(float(values["dice"][0]), 6) == round(2 * 10 / 150, 6)
    assert all(np.isfinite(values[m][0]) for m in MEASURES)


def test_every_error_code_names_one_kind_of_failure() -> None:
    kinds = [c for _, c in inspect.getmembers(errors, inspect.isclass)
             if issubclass(c, errors.CowbirdError) and c is not errors.RejectedByNode]
    used = {kind.code for kind in kinds}
    assert used == set(errors.ErrorCode) - {errors.ErrorCode.CSRF_FAILED}  # csrf_failed: the account pages
    # a code is one failure: classes that share one are one kind and its refinements
    for code in errors.ErrorCode:
        sharing = [k for k in kinds if k.code is code]
        roots = [k for k in sharing if not any(issubclass(k, other) and k is not other for other in sharing)]
        assert len(roots) <= 1, (code, roots)
