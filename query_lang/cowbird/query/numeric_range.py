"""Metadata filters that are not regular expressions, written as the regexes the nodes evaluate.

``text_year=2005`` (equals) is the value escaped: ``a.b`` or ``(x)`` matches only itself.
``text_year:2010..2015`` (a numeric range, both ends included; ``2010..`` or ``..2015`` open) is a
regex built from the digits of its bounds alone — its size grows with the bounds' digits, never with
the values an attribute holds, so a range over 200,000 distinct years is a regex of a few hundred
characters that the nodes test once per value of the attribute's lexicon, as any filter, and the
native and the cwb engine (real CQP, PCRE) choose exactly the same regions.

A value is a number when it is written ``[+-]?[0-9]+(\\.[0-9]+)?`` (``2005``, ``-3``, ``+7``,
``0012.50``: leading zeros and trailing decimal zeros are allowed, ``-0`` is 0); any other value
(``2005a``, ``1e3``, ``12,5``, ``.5``, the empty value) is in no range.
"""

from __future__ import annotations

import re
from decimal import Decimal

from cowbird.query.builder import escape

NUMBER = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")
"""How a number is written, in a value and in a range's bound."""

MAX_BOUND_DIGITS = 15
"""Digits a range's bound may have (its regex grows with them)."""

_ANY_FRACTION = r"(?:\.[0-9]+)?"


def equals_regex(value: str) -> str:
    """A CQP regex matching exactly ``value``; backslashes at its end written ``\\x5c`` (a CQP string
    ending in a backslash reads differently when another quote follows in the query)."""
    body = value.rstrip("\\")
    return escape(body) + "\\x5c" * (len(value) - len(body))


def parse_bound(text: str) -> Decimal:
    """A range's bound as a number; ValueError saying why it is not one."""
    if not NUMBER.fullmatch(text):
        raise ValueError(f"{text!r} is not a number (write digits, a sign, a decimal point: 2010, -3, 12.5)")
    if sum(c.isdigit() for c in text) > MAX_BOUND_DIGITS:
        raise ValueError(f"{text!r} has more than {MAX_BOUND_DIGITS} digits")
    return Decimal(text)


def range_regex(low: Decimal | None, high: Decimal | None) -> str:
    """A CQP regex matching the numbers (``NUMBER``) from ``low`` to ``high``, both included (None:
    open at that end), and nothing else."""
    if low is None and high is None:
        raise ValueError("a range needs a bound: FROM..TO, FROM.. or ..TO")
    if low is not None and high is not None and low > high:
        raise ValueError(f"from {low} is above to {high}")
    parts = []
    if high is None or high >= 0:  # written without a minus: from max(low, 0) to high
        start = Decimal(0) if low is None or low < 0 else low
        parts.append(r"\+?" + _unsigned(start, high))
    if low is None or low <= 0:  # written with a minus: -x for x from max(-high, 0) to -low
        start = Decimal(0) if high is None or high > 0 else -high
        parts.append("-" + _unsigned(start, None if low is None else -low))
    return "(?:" + "|".join(parts) + ")"


def _digits(number: Decimal) -> tuple[int, str]:
    """A non-negative number's integer part and its decimal digits (no trailing zeros)."""
    text = format(number, "f")
    whole, _, fraction = text.partition(".")
    return int(whole), fraction.rstrip("0")


def _unsigned(low: Decimal, high: Decimal | None) -> str:
    """Unsigned numbers (leading zeros allowed) from ``low`` to ``high`` (None: no end), 0 <= low <= high."""
    a, a_fraction = _digits(low)
    options = []
    if high is None:
        options.append(_integers(a + 1, None) + _ANY_FRACTION)
        options.append(str(a) + _fraction(a_fraction, None))
    else:
        b, b_fraction = _digits(high)
        if a == b:
            options.append(str(a) + _fraction(a_fraction, b_fraction))
        else:
            if a + 1 <= b - 1:
                options.append(_integers(a + 1, b - 1) + _ANY_FRACTION)
            options.append(str(a) + _fraction(a_fraction, None))
            options.append(str(b) + _fraction("", b_fraction))
    return "0*(?:" + "|".join(options) + ")"


def _class(low: int, high: int) -> str:
    return str(low) if low == high else f"[{low}-{high}]"


def _fraction(low: str, high: str | None) -> str:
    """The decimals (``.`` and digits, or none) of values whose fraction 0.d is from 0.low to 0.high
    (None: below 1, any), the bounds' digits without trailing zeros."""
    digits = _fraction_digits(low, high, 0, bool(low), high is not None, True)
    return f"(?:\\.{digits})?" if not low else f"\\.{digits}"


def _fraction_digits(low: str, high: str | None, i: int, low_tight: bool, high_tight: bool, need: bool) -> str:
    """The digits from the i-th on, while the ones before equal the low bound's (``low_tight``) or the
    high one's (``high_tight``); ``need``: at least one digit."""
    if low_tight and i >= len(low):
        low_tight = False  # the low bound's remaining digits are zeros: any digit is at least them
    if high_tight and high is not None and i >= len(high):
        return "0+" if need else "0*"  # the high bound's remaining digits are zeros
    if not low_tight and not high_tight:
        return "[0-9]+" if need else "[0-9]*"
    low_digit = int(low[i]) if low_tight else 0
    high_digit = int(high[i]) if high_tight and high is not None else 9
    options = []
    if low_tight and high_tight and low_digit == high_digit:
        options.append(str(low_digit) + _fraction_digits(low, high, i + 1, True, True, False))
    else:
        free_low, free_high = low_digit, high_digit
        if low_tight:
            options.append(str(low_digit) + _fraction_digits(low, high, i + 1, True, False, False))
            free_low += 1
        if high_tight:
            options.append(str(high_digit) + _fraction_digits(low, high, i + 1, False, True, False))
            free_high -= 1
        if free_low <= free_high:
            options.append(_class(free_low, free_high) + "[0-9]*")
    body = "(?:" + "|".join(options) + ")"
    return body if need or low_tight else body + "?"  # ending here: not while below the low bound


def _integers(low: int, high: int | None) -> str:
    """Integers (no leading zeros; 0 is ``0``) from ``low`` to ``high`` (None: no end), 0 <= low <= high."""
    options = []
    top = len(str(low)) if high is None else len(str(high))
    for length in range(len(str(low)), top + 1):
        a = max(low, 10 ** (length - 1) if length > 1 else 0)
        b = 10**length - 1 if high is None else min(high, 10**length - 1)
        if a <= b:
            options.append(_same_length(str(a), str(b), 0, True, True))
    if high is None:
        options.append(f"[1-9][0-9]{{{len(str(low))},}}")
    return "(?:" + "|".join(options) + ")"


def _same_length(low: str, high: str, i: int, low_tight: bool, high_tight: bool) -> str:
    """Digit strings as long as ``low`` and ``high``, from the i-th digit on, between them."""
    left = len(low) - i
    if left == 0:
        return ""
    if not low_tight and not high_tight:
        return "[0-9]" if left == 1 else f"[0-9]{{{left}}}"
    low_digit = int(low[i]) if low_tight else 0
    high_digit = int(high[i]) if high_tight else 9
    if low_tight and high_tight and low_digit == high_digit:
        return str(low_digit) + _same_length(low, high, i + 1, True, True)
    options = []
    free_low, free_high = low_digit, high_digit
    if low_tight:
        options.append(str(low_digit) + _same_length(low, high, i + 1, True, False))
        free_low += 1
    if high_tight:
        options.append(str(high_digit) + _same_length(low, high, i + 1, False, True))
        free_high -= 1
    if free_low <= free_high:
        options.append(_class(free_low, free_high) + _same_length(low, high, i + 1, False, False))
    return options[0] if len(options) == 1 else "(?:" + "|".join(options) + ")"
