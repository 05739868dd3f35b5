"""Parse-time checks of the regular expressions inside CQP values.

CQP hands values to PCRE; we check them as ``cowbird.query.pcre`` translates them for the ``regex``
module, which then compiles them (the native engine matches with the same translation). Remember
that CQP regexes match the *whole* value: ``"the"`` finds only *the*, never *other*.

Compiling can itself be an attack: ``regex`` unrolls counted repetitions, and
``((a{1000}){1000}){1000}`` exhausts memory. So before compiling, a small scanner bounds the
counted repetitions (the native engine matches with ``regex`` too): the product of nested bounds
may not exceed ``MAX_REGEX_REPEAT``, and a query's regexes together may not unroll to more than
``MAX_REGEX_SIZE`` atoms.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from cowbird.query.pcre import compile_error

MAX_REGEX_REPEAT = 1_000
"""Largest product of nested ``{n,m}`` bounds in one regex."""

MAX_REGEX_SIZE = 20_000
"""Largest number of atoms all regexes of one query unroll to."""

_COUNTED = re.compile(r"\{(\d+)(?:,(\d*))?\}")
# Escapes followed by a braced argument, such as \p{L} or \x{263A}, whose braces are no quantifier.
_BRACED_ESCAPES = frozenset("pPxNgk")


@dataclass(frozen=True)
class RegexProblem:
    """What is wrong with a regex and at which index of the pattern."""

    message: str
    index: int


class _Group:
    """Running totals for one parenthesised group while scanning."""

    __slots__ = ("size", "last_size", "product", "last_product")

    def __init__(self) -> None:
        self.size = 0  # atoms after unrolling
        self.last_size = 0  # atoms of the item a quantifier would apply to
        self.product = 1  # largest product of nested bounds seen inside
        self.last_product = 1

    def add(self, size: int, product: int) -> None:
        self.size += size
        self.last_size = size
        self.last_product = product
        self.product = max(self.product, product)


def unrolled_size(pattern: str) -> tuple[int, int, int]:
    """(largest product of nested counted bounds, atoms after unrolling, index of the worst bound).

    A deliberately rough scan (it does not need to understand every construct): it only has to
    see parentheses, character classes, escapes and ``{n,m}``.
    """
    groups = [_Group()]
    worst_product, worst_index = 1, 0
    i, n = 0, len(pattern)
    while i < n:
        char = pattern[i]
        group = groups[-1]
        if char == "\\":
            i += 2
            if pattern[i - 1 : i] in _BRACED_ESCAPES and pattern[i : i + 1] == "{":
                close = pattern.find("}", i)
                i = n if close < 0 else close + 1
            group.add(1, 1)
            continue
        if char == "[":
            i = _class_end(pattern, i)
            group.add(1, 1)
            continue
        if char == "{" and (match := _COUNTED.match(pattern, i)):
            low, high = match.group(1), match.group(2)
            # Only the order of magnitude matters; capping the digits keeps int() cheap.
            bound = max(1, int(low[:7]), int(high[:7]) if high else 0)
            group.size += group.last_size * (bound - 1)
            group.last_size *= bound
            group.last_product *= bound
            group.product = max(group.product, group.last_product)
            if group.last_product > worst_product:
                worst_product, worst_index = group.last_product, i
            i = match.end()
            continue
        if char == "(":
            groups.append(_Group())
        elif char == ")" and len(groups) > 1:
            inner = groups.pop()
            groups[-1].add(inner.size, inner.product)
        elif char not in "|*+?":
            group.add(1, 1)
        i += 1
    while len(groups) > 1:
        inner = groups.pop()
        groups[-1].add(inner.size, inner.product)
    return max(worst_product, groups[0].product), groups[0].size, worst_index


def _class_end(pattern: str, start: int) -> int:
    """Index just after the character class opening at ``start`` (or the end of the pattern)."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern.startswith("[:", i):
            close = pattern.find(":]", i + 2)
            if close >= 0:
                i = close + 2
                continue
        if pattern[i] == "]":
            return i + 1
        i += 1
    return len(pattern)


_RECURSION = re.compile(r"\(\?(?:R\)|[+-]?\d|&|P>)|\\g[<']")
"""Recursion and subroutine calls: ``(?R)``, ``(?0)``, ``(?+1)``, ``(?&name)``, ``(?P>name)``,
PCRE's ``\\g<name>``. Recursion can exhaust memory while compiling or matching."""


def recursion_at(pattern: str) -> int | None:
    """Index of the first recursion or subroutine call outside a character class, or None."""
    i = 0
    while i < len(pattern):
        char = pattern[i]
        if char == "[":
            i = _class_end(pattern, i)
            continue
        if _RECURSION.match(pattern, i):
            return i
        i += 2 if char == "\\" else 1
    return None


def check_regex(pattern: str, budget: int = MAX_REGEX_SIZE) -> tuple[RegexProblem | None, int]:
    """The first problem with ``pattern`` (or None), and its unrolled size.

    ``budget`` is what is left of the query's ``MAX_REGEX_SIZE``; a regex unrolling to more is
    refused before it is compiled.
    """
    recursion = recursion_at(pattern)
    if recursion is not None:
        message = "recursion and subroutine calls ((?R), (?1), (?&name), \\g<name>) are not supported in a regex"
        return RegexProblem(message, recursion), 0
    product, size, index = unrolled_size(pattern)
    if product > MAX_REGEX_REPEAT:
        message = (
            f"counted repetitions in a regular expression may multiply to at most "
            f"{MAX_REGEX_REPEAT:,} (this one reaches {product:,})"
        )
        return RegexProblem(message, index), size
    if size > budget:
        message = (
            f"the regular expressions of this query are too large once their repetitions are "
            f"unrolled (at most {MAX_REGEX_SIZE:,} characters in all)"
        )
        return RegexProblem(message, index), size
    error = _compile_error(pattern)
    if error is not None:
        return RegexProblem(f"invalid regular expression: {error[0]}", error[1]), size
    return None, size


_PLAIN = re.compile(r"[^\\\[\](){}.*+|?^$]*")
"""Text without any regex syntax: always a valid regex."""


@lru_cache(maxsize=1024)
def _compile_error(pattern: str) -> tuple[str, int] | None:
    """Why ``pattern`` does not compile, and where; compiled once per distinct pattern (a query is
    parsed on the front end and again on every node), not kept in ``regex``'s own cache."""
    if _PLAIN.fullmatch(pattern):
        return None
    error = compile_error(pattern)
    return None if error is None else (error.message, error.index)
