"""A query's relative frequency per period, with a confidence band: the trend over time.

The hits per period come from the query's distribution over the periods of a date attribute and the
sizes from the (sub)corpus's tokens in each period (``cowbird.core.periods``), both summed over every
partition first. A period's rate is hits per million tokens; its band is the 95 % Wilson score
interval of the proportion hits/tokens (Wilson 1927; Newcombe 1998, method 3), scaled to a million:
unlike the normal approximation it stays inside [0, 1] and is not zero-width at zero hits, so a
period with little text shows how little it says. A period with fewer than ``sparse_below`` tokens is
``sparse`` (drawn apart); one without any text has no rate at all (a gap, never a zero).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from cowbird.core.periods import Period, periods_between

Z_95 = 1.959963984540054
"""The standard normal quantile of a two-sided 95 % interval."""


def wilson(hits: int, tokens: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of the proportion ``hits / tokens`` (0 ≤ hits ≤ tokens, tokens > 0)."""
    p = min(hits, tokens) / tokens
    denominator = 1 + z * z / tokens
    centre = (p + z * z / (2 * tokens)) / denominator
    half = z * math.sqrt(p * (1 - p) / tokens + z * z / (4 * tokens * tokens)) / denominator
    low = 0.0 if hits <= 0 else max(0.0, centre - half)  # exactly 0 at no hits, not a rounding's 1e-19
    return low, 1.0 if hits >= tokens else min(1.0, centre + half)


@dataclass(frozen=True)
class Point:
    """One period of a trend: its hits, its tokens and texts, the rate per million with its 95 % band
    (None without text), and whether it has less text than a rate can rest on."""

    period: str
    hits: int
    tokens: int
    texts: int
    per_million: float | None
    low: float | None
    high: float | None
    sparse: bool


def points(hits: dict[str, int], sizes: dict[str, tuple[int, int]], period: Period, sparse_below: int) -> list[Point]:
    """Every period from the first to the last with text (the empty key, undated, left out), with its
    rate and band. ``hits``: per period; ``sizes``: (tokens, texts) per period."""
    dated = sorted(k for k in sizes if k)
    if not dated:
        return []
    out = []
    for key in periods_between(dated[0], dated[-1], period):
        tokens, texts = sizes.get(key, (0, 0))
        found = hits.get(key, 0)
        if tokens:
            low, high = wilson(found, tokens)
            out.append(Point(key, found, tokens, texts, found / tokens * 1e6, low * 1e6, high * 1e6,
                             tokens < sparse_below))
        else:
            out.append(Point(key, found, 0, 0, None, None, None, True))
    return out
