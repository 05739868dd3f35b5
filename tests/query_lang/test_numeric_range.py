"""The regexes of range and equals filters (``cowbird.query.numeric_range``) against plain Python:
a range's regex matches exactly the numbers (``NUMBER``) from its low to its high bound, whatever
their sign, leading zeros and decimals, and never a value that is not a number; its size grows with
the bounds' digits only; an equals regex matches only its value."""

from __future__ import annotations

import random
import re
from decimal import Decimal

import pytest

from cowbird.query.numeric_range import NUMBER, equals_regex, parse_bound, range_regex

NOT_NUMBERS = [
    "",
    "abc",
    "2005a",
    "1e3",
    "12,5",
    ".5",
    "5.",
    "--3",
    "+-1",
    " 5",
    "2010 ",
    "20 10",
    "\u0663",
    "2010.5.1",
    "0x10",
    "\u00bd",
]


def _number(rnd: random.Random) -> str:
    text = rnd.choice(["", "-", "+"]) + "0" * rnd.choice([0, 0, 0, 1, 2])
    text += str(rnd.choice([0, 1, 5, 9, 10, 99, 100, 2005, 2010, 2015, rnd.randint(0, 30_000)]))
    if rnd.random() < 0.4:
        text += "." + "".join(rnd.choice("0123456789") for _ in range(rnd.randint(1, 4)))
    return text


@pytest.mark.slow  # 1.4 s here (make quick leaves it out)
def test_a_range_regex_matches_exactly_the_numbers_in_the_range() -> None:
    rnd = random.Random(65)
    for _ in range(1_500):
        low = None if rnd.random() < 0.2 else Decimal(_number(rnd))
        high = None if rnd.random() < 0.2 else Decimal(_number(rnd))
        if low is None and high is None:
            continue
        if low is not None and high is not None and low > high:
            low, high = high, low
        regex = re.compile(range_regex(low, high))
        values = [_number(rnd) for _ in range(30)] + [str(low), str(high)]
        for value in values:
            if value == "None":
                continue
            inside = (low is None or Decimal(value) >= low) and (high is None or Decimal(value) <= high)
            assert bool(regex.fullmatch(value)) == inside, (low, high, value)
        assert not [v for v in NOT_NUMBERS if regex.fullmatch(v)], (low, high)


def test_a_range_regex_grows_with_the_bounds_digits_not_with_the_values() -> None:
    assert len(range_regex(Decimal(0), Decimal(200_000))) < 1_000  # 200,001 integers: a regex of a few branches
    assert len(range_regex(Decimal("-999999999999999"), Decimal("999999999999999"))) < 10_000
    assert re.fullmatch(range_regex(Decimal(2010), Decimal(2015)), "2012") is not None


@pytest.mark.parametrize(
    ("low", "high", "says"), [(None, None, "a range needs a bound"), (Decimal(3), Decimal(2), "from 3 is above to 2")]
)
def test_a_range_without_bounds_or_upside_down_is_refused(low: Decimal | None, high: Decimal | None, says: str) -> None:
    with pytest.raises(ValueError, match=says):
        range_regex(low, high)


@pytest.mark.parametrize("text", ["abc", "1e3", "12,5", "", "1" * 16])
def test_a_bound_that_is_not_a_number_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="not a number|more than 15 digits"):
        parse_bound(text)


@pytest.mark.parametrize("value", ["a.b", "(x)", "x|y", "[a]", "a*", "a\\", "\\d", "^$", "{2}", "a+b?"])
def test_an_equals_regex_matches_only_its_value(value: str) -> None:
    regex = re.compile(equals_regex(value).replace("\\x5c", "\\\\"))
    assert regex.fullmatch(value) is not None
    assert [
        v for v in ["axb", "x", "a", "ab", "", value + "x", value.upper() + "!"] if v != value and regex.fullmatch(v)
    ] == []
    assert NUMBER.fullmatch(value) is None
