"""Dates in s-attribute values as periods (a year, a month, a decade), for trends over time.

A value holds a date when it is a year (``2012``) or an ISO 8601 date, in the extended or the basic
form (``2012-05``, ``2012-05-04``, ``20120504``; ``/`` or ``.`` also separate), optionally followed by
a time after ``T`` or a space (``2012-05-04T10:20``, ``2012-05-04 10:20:00``) — the forms COW's
``text_lastmod``, EWT's ``text_date`` and GERMAPARL's ``sitzung_date`` take. Any other value
(empty, ``n/a``, ``04.05.2012``, a month ``13``) is undated: counted apart, never put in a period.

``period_of`` says which period a value falls in; ``period_regex`` is the regular expression that
matches exactly the values ``period_of`` puts in a period — the filter (``text_date~REGEX``) of
that period's hits, so that a point of a trend links to the very hits it counts. Both are built
from the same pieces, and the tests hold them to each other.
"""

from __future__ import annotations

import re
from typing import Literal

Period = Literal["year", "month", "decade"]
PERIODS: tuple[Period, ...] = ("year", "month", "decade")

_SEPARATOR = "[-/.]?"
_MONTH = "(?:0[1-9]|1[0-2])"
_DAY = "(?:0[1-9]|[12][0-9]|3[01])"
_TIME = "(?:[T ].*)?"
_DAY_PART = f"(?:{_SEPARATOR}{_DAY})?"
_DATE = re.compile(f"([0-9]{{4}})(?:{_SEPARATOR}({_MONTH}){_DAY_PART})?{_TIME}", re.DOTALL)


def period_of(value: str, period: Period) -> str:
    """The period ``value`` falls in — ``2012``, ``2012-05`` or ``2010`` (the decade 2010–2019) — or
    ``""`` when it holds no date (or, for ``month``, only a year)."""
    found = _DATE.fullmatch(value)
    if found is None:
        return ""
    year, month = found.group(1), found.group(2)
    if period == "year":
        return year
    if period == "decade":
        return year[:3] + "0"
    return f"{year}-{month}" if month else ""


def period_regex(key: str, period: Period) -> str:
    """The regular expression matching exactly the values ``period_of`` puts in period ``key``."""
    if period == "month":
        year, month = key.split("-")
        return f"{year}{_SEPARATOR}{month}{_DAY_PART}{_TIME}"
    rest = f"(?:{_SEPARATOR}{_MONTH}{_DAY_PART})?{_TIME}"
    if period == "decade":
        return f"{key[:3]}[0-9]{rest}"
    return f"{key}{rest}"


def periods_between(first: str, last: str, period: Period) -> list[str]:
    """Every period from ``first`` to ``last`` (both included), in order: the periods without text
    between those with text are shown as such, not skipped."""
    if period == "month":
        y, m = (int(p) for p in first.split("-"))
        end = tuple(int(p) for p in last.split("-"))
        out = []
        while (y, m) <= end:
            out.append(f"{y:04d}-{m:02d}")
            y, m = (y + 1, 1) if m == 12 else (y, m + 1)
        return out
    step = 10 if period == "decade" else 1
    return [f"{y:04d}" for y in range(int(first), int(last) + 1, step)]
