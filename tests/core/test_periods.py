"""Dates as periods (``cowbird.core.periods``) and the trend's band (``cowbird.core.trends``): the
filter regex of a period matches exactly the values put in it — through the regex engine the nodes
filter with — and the Wilson interval equals the roots of its quadratic, solved here directly."""

from __future__ import annotations

import itertools
import math
import re
from statistics import NormalDist
from typing import get_args

import pytest

from cowbird.core.periods import PERIODS, Period, period_of, period_regex, periods_between
from cowbird.core.trends import points, wilson
from cowbird.query.pcre import compile_pcre

VALUES = [
    "2012", "2012-05", "2012-05-04", "20120504", "201205", "2012/05/04", "2012.05.04", "2012-05-04T10:20:00Z",
    "2012-05-04 10:20", "2012 spring", "2012T", "1999-12-31", "2000-01-01", "2019-13-01", "2019-00", "2019-1",
    "20125", "2012-05-32", "2012-0504", "12012", "", "n/a", "04.05.2012", "2012-5-4", "１９９９", "2012\n05",
    "2012-05-04T", "2010", "2009-09", "201911", "2019-11-31", "0000", "9999-12",
]  # fmt: skip


@pytest.mark.parametrize("period", PERIODS)
def test_each_periods_regex_matches_exactly_its_values(period: Period) -> None:
    keys = {period_of(v, period) for v in VALUES} - {""}
    assert keys, period
    for key in keys:
        assert re.fullmatch({"year": "[0-9]{4}", "decade": "[0-9]{3}0", "month": "[0-9]{4}-[0-9]{2}"}[period], key)
        matcher = compile_pcre(f"^(?:{period_regex(key, period)})$")
        chosen = {v for v in VALUES if matcher.search(v) is not None}
        assert chosen == {v for v in VALUES if period_of(v, period) == key}, (period, key)


def test_the_forms_taken_and_refused() -> None:
    assert [period_of(v, "year") for v in ("2012-05-04T10:20", "20120504", "2012", "04.05.2012", "2012-13")] == [
        "2012", "2012", "2012", "", ""]
    assert [period_of(v, "month") for v in ("2012-05-04", "201205", "2012/05", "2012", "2012-5")] == [
        "2012-05", "2012-05", "2012-05", "", ""]
    assert [period_of(v, "decade") for v in ("2012-05-04", "1999", "2020")] == ["2010", "1990", "2020"]
    assert set(get_args(Period)) == set(PERIODS)


def test_periods_between_fill_the_gaps() -> None:
    assert periods_between("2011-11", "2012-02", "month") == ["2011-11", "2011-12", "2012-01", "2012-02"]
    assert periods_between("1990", "2010", "decade") == ["1990", "2000", "2010"]
    assert periods_between("2003", "2003", "year") == ["2003"]


def quadratic_roots(hits: int, n: int, z: float) -> tuple[float, float]:
    """The p with (hits/n - p)^2 = z^2 p (1 - p) / n: (n + z^2) p^2 - (2 hits + z^2) p + hits^2 / n = 0."""
    a, b, c = n + z * z, -(2 * hits + z * z), hits * hits / n
    root = math.sqrt(b * b - 4 * a * c)
    return (-b - root) / (2 * a), (-b + root) / (2 * a)


def test_the_wilson_band_is_the_roots_of_its_quadratic() -> None:
    z = NormalDist().inv_cdf(0.975)
    for hits, n in itertools.product((0, 1, 7, 500, 999, 1000), (1000, 12_762, 10**9)):
        low, high = wilson(hits, n)
        expected = quadratic_roots(hits, n, z)
        assert low == pytest.approx(max(0.0, expected[0]), abs=1e-12)
        assert high == pytest.approx(expected[1], rel=1e-9)
        assert low <= hits / n <= high


def test_points_mark_sparse_periods_and_leave_gaps_without_text() -> None:
    found = points({"2001": 3, "2004": 1}, {"2001": (50_000, 4), "2004": (200, 1), "": (10, 1)}, "year", 1000)
    assert [p.period for p in found] == ["2001", "2002", "2003", "2004"]
    assert [(p.per_million, p.sparse) for p in found[1:3]] == [(None, True), (None, True)]
    assert found[0].per_million == pytest.approx(60.0) and not found[0].sparse
    assert found[3].per_million == pytest.approx(5000.0) and found[3].sparse
    assert points({}, {"": (10, 1)}, "year", 1) == []
