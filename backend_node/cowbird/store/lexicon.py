"""Attribute tests evaluated once per lexicon: a regex becomes a boolean table over lexicon ids.

CQP's rules (cl/regopt.c, parse_actions.c): a value without flags and without any of
``[](){}.*+|?\\`` is a literal, looked up as a whole; otherwise it is a PCRE matched against the
whole value, ``%c`` matches caselessly, ``%d`` strips combining marks from both the pattern and the
value (NFD, drop marks, NFC), ``%l`` compares the string as written. Regexes are PCRE's, rewritten
for Python's ``regex`` module by ``cowbird.query.pcre``.

Common shapes never touch the whole lexicon: literals (and their case-folded forms) go through a
dictionary, and a literal prefix (``geh.*``) narrows the candidates by binary search in the sorted
lexicon; only the candidates are matched with the regex.

A lexicon is the store's (``PositionalAttribute.strings``), so both engines use this module: the
native engine compiles its attribute tests with it (``cowbird.engines.native.compile``), and the
analyses of hits (``cowbird.engines.analyses``) group and filter an attribute's lexicon with the
tables at the end (``groups``, ``matching``), built once per opened attribute.
"""

from __future__ import annotations

import bisect
import threading
import time
import unicodedata
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import numpy.typing as npt
import regex

from cowbird.core.analysis_spec import Fold
from cowbird.core.errors import QueryTooExpensive
from cowbird.query import RegexValue
from cowbird.query.pcre import compile_pcre, translate
from cowbird.store.reader import PositionalAttribute

REGEX_META = set("[](){}.*+|?\\")

BoolTable = npt.NDArray[np.bool_]


def strip_diacritics(text: str) -> str:
    """CQP's %d: canonical decomposition, combining marks removed, recomposed."""
    decomposed = unicodedata.normalize("NFD", text)
    if decomposed.isascii():
        return decomposed
    kept = "".join(ch for ch in decomposed if unicodedata.category(ch) not in ("Mn", "Mc", "Me"))
    return unicodedata.normalize("NFC", kept)


def is_literal(value: RegexValue) -> bool:
    """Whether CQP compares this value as a plain string rather than a regex."""
    if value.literal:
        return True
    return not value.ignore_case and not value.ignore_diacritics and not (set(value.pattern) & REGEX_META)


def literal_prefix(pattern: str) -> str:
    """The literal text every match must start with (``geh.*`` -> ``geh``), or ''."""
    if _top_level_bar(pattern):
        return ""
    prefix: list[str] = []
    for ch in pattern:
        if ch in REGEX_META or ch in "^$":
            if ch in "*?{" and prefix:  # a quantifier makes the preceding character optional
                prefix.pop()
            break
        prefix.append(ch)
    return "".join(prefix)


def _top_level_bar(pattern: str) -> bool:
    depth, escaped, in_class = 0, False, False
    for ch in pattern:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return True
    return False


def literal_alternatives(pattern: str) -> list[str] | None:
    """``give|send|offer`` -> the three words; None when the pattern is not such a list."""
    parts = pattern.split("|")
    if any(not p or set(p) & REGEX_META or set(p) & set("^$") for p in parts):
        return None
    return parts


def is_risky(pattern: str) -> bool:
    """Patterns that can backtrack exponentially: nested quantifiers, quantified alternation, backrefs."""
    stack: list[bool] = [False]  # per open group: does it contain a quantifier or a bar?
    escaped = in_class = False
    previous_group: bool | None = None
    for ch in pattern:
        if escaped:
            escaped = False
            if ch.isdigit() or ch in "gk":
                return True
            previous_group = None
            continue
        if in_class:
            in_class = ch != "]"
            continue
        if ch == "\\":
            escaped = True
        elif ch == "[":
            in_class = True
            previous_group = None
        elif ch == "(":
            stack.append(False)
            previous_group = None
        elif ch == ")":
            inner = stack.pop() if len(stack) > 1 else False
            previous_group = inner
            stack[-1] = stack[-1] or inner
        elif ch in "*+?{":
            if previous_group:
                return True
            stack[-1] = True
            previous_group = None
        elif ch == "|":
            stack[-1] = True
            previous_group = None
        else:
            previous_group = None
    return "(?=" in pattern or "(?!" in pattern or "(?<" in pattern


@dataclass
class LexiconIndex:
    """Per-attribute helpers built on first use and kept: the %d-folded forms and sorted views."""

    strings: Sequence[str]
    source: PositionalAttribute | None = None  # the attribute whose lexicon this is: its string-to-id map is shared
    _stripped: list[str] | None = None
    _sorted: dict[tuple[bool, bool], tuple[list[str], list[int]]] = field(default_factory=dict)

    _buffers: dict[bool, tuple[str, npt.NDArray[np.int64]]] = field(default_factory=dict)

    @cached_property
    def ids(self) -> dict[str, int]:
        if self.source is not None:
            return self.source.string_ids  # one map, whether the engine or an analysis looks a string up
        return {s: i for i, s in enumerate(self.strings)}

    def buffer(self, ignore_diacritics: bool) -> tuple[str, npt.NDArray[np.int64]]:
        """The lexicon (%d-folded when asked) as one string, a line per id, and where each line
        starts: one regex scan over it replaces a Python call per string."""
        if ignore_diacritics not in self._buffers:
            strings = self.folded(ignore_diacritics)
            lengths = np.fromiter((len(x) + 1 for x in strings), dtype=np.int64, count=len(strings))
            self._buffers[ignore_diacritics] = ("\n".join(strings), np.cumsum(lengths) - lengths)
        return self._buffers[ignore_diacritics]

    def folded(self, ignore_diacritics: bool) -> Sequence[str]:
        """The lexicon with %d applied when asked (the regex then runs on these strings)."""
        if not ignore_diacritics:
            return self.strings
        if self._stripped is None:
            self._stripped = [strip_diacritics(s) for s in self.strings]
        return self._stripped

    def sorted_view(self, ignore_case: bool, ignore_diacritics: bool) -> tuple[list[str], list[int]]:
        """Lexicon strings (case-folded for %c) in code point order, with their ids."""
        key = (ignore_case, ignore_diacritics)
        if key not in self._sorted:
            source = self.folded(ignore_diacritics)
            keys = [s.casefold() for s in source] if ignore_case else list(source)
            order = sorted(range(len(keys)), key=keys.__getitem__)
            self._sorted[key] = ([keys[i] for i in order], order)
        return self._sorted[key]

    def prefix_candidates(self, prefix: str, ignore_case: bool, ignore_diacritics: bool) -> list[int]:
        keys, order = self.sorted_view(ignore_case, ignore_diacritics)
        needle = prefix.casefold() if ignore_case else prefix
        lo = bisect.bisect_left(keys, needle)
        hi = bisect.bisect_left(keys, needle + "\U0010ffff")
        return order[lo:hi]


def _compile(value: RegexValue) -> Callable[[str], object]:
    pattern = strip_diacritics(value.pattern) if value.ignore_diacritics else value.pattern
    matcher: Callable[[str], object] = compile_pcre(pattern, value.ignore_case).search  # anchored by CQP
    return matcher


_ESCAPED_TEXT = regex.compile(r"(?:[^\[\](){}.*+|?\\^$]|\\[^\w\s])*")
r"""A pattern that is plain text once its escapes are removed: ``\$``, ``\(``, ``e\.g\.``."""

_SCAN_UNSAFE = regex.compile(r"\[\^|\\P|\\p\{C|\\[nxuUXsSWDVHRNAZG]|\(\?[\w-]*s")
r"""Constructs of a translated pattern (``cowbird.query.pcre``) that could match a line break: a
negated class or property, a control-character escape, DOTALL, or that anchors to the text's ends
(``\\A``, ``\\Z``, ``\\G``): such patterns are matched string by string."""


def _scan(index: LexiconIndex, value: RegexValue, pattern: str, table: BoolTable) -> None:
    """Mark the ids whose whole string matches, in one scan over the lexicon buffer. The pattern
    cannot match a line break (``_SCAN_UNSAFE``), so a match between ``^`` and ``$`` is one string."""
    text, starts = index.buffer(value.ignore_diacritics)
    found = [m.start() for m in compile_pcre(pattern, value.ignore_case, multiline=True).finditer(text)]
    if found:  # the string each match lies in (a match can start within it: a)|(b)
        table[np.searchsorted(starts, np.asarray(found, dtype=np.int64), side="right") - 1] = True


def match_table(index: LexiconIndex, value: RegexValue, seconds: float) -> BoolTable:
    """Which lexicon ids the value matches (the whole string, as in CQP); a regex that could
    backtrack exponentially may run ``seconds`` before the query is refused."""
    table = np.zeros(len(index.strings), dtype=np.bool_)
    if value.literal:
        found = index.ids.get(value.pattern)
        if found is not None:
            table[found] = True
        return table
    if is_literal(value):
        found = index.ids.get(value.pattern)
        if found is not None:
            table[found] = True
        return table
    if not value.ignore_case and not value.ignore_diacritics and _ESCAPED_TEXT.fullmatch(value.pattern):
        found = index.ids.get(regex.sub(r"\\(.)", r"\1", value.pattern))  # \$ is the string $
        if found is not None:
            table[found] = True
        return table
    matcher = _compile(value)
    strings = index.folded(value.ignore_diacritics)
    pattern = strip_diacritics(value.pattern) if value.ignore_diacritics else value.pattern
    translation = translate(pattern, value.ignore_case)
    candidates: Sequence[int] | None = None
    alternatives = literal_alternatives(pattern)
    if not translation.self_contained:  # a)|(b: neither a prefix nor a list of alternatives
        pass
    elif alternatives is not None:
        candidates = sorted({i for alt in alternatives for i in index.prefix_candidates(
            alt, value.ignore_case, value.ignore_diacritics)})
    elif not value.ignore_case or pattern.isascii():
        prefix = literal_prefix(pattern)
        if prefix:
            candidates = index.prefix_candidates(prefix, value.ignore_case, value.ignore_diacritics)
    if is_risky(pattern):
        _match_with_budget(table, strings, matcher, candidates, value.pattern, seconds)
    elif candidates is None and translation.self_contained and not _SCAN_UNSAFE.search(translation.text):
        _scan(index, value, pattern, table)
    elif candidates is None:
        hits = list(map(matcher, strings))
        table[:] = [h is not None for h in hits]
    else:
        for i in candidates:
            if matcher(strings[i]) is not None:
                table[i] = True
    return table


def _match_with_budget(
    table: BoolTable,
    strings: Sequence[str],
    matcher: Callable[..., object],
    candidates: Sequence[int] | None,
    pattern: str,
    seconds: float,
) -> None:
    deadline = time.monotonic() + seconds
    ids: Sequence[int] = range(len(strings)) if candidates is None else candidates
    for i in ids:
        remaining = deadline - time.monotonic()
        try:
            if remaining <= 0:
                raise TimeoutError
            if matcher(strings[i], timeout=remaining) is not None:
                table[i] = True
        except TimeoutError as exc:
            raise QueryTooExpensive(
                f"the regular expression \"{pattern}\" takes too long to evaluate (nested repetition?): "
                "simplify it"
            ) from exc


# -- per-attribute tables, computed once per opened attribute ---------------------------------------

MATCH_SECONDS = 5.0
"""How long a regex that could backtrack exponentially may take over a lexicon (``matching``)."""

_GROUPS: weakref.WeakKeyDictionary[PositionalAttribute, dict[Fold, Groups]] = weakref.WeakKeyDictionary()
_INDEXES: weakref.WeakKeyDictionary[PositionalAttribute, LexiconIndex] = weakref.WeakKeyDictionary()
_TABLES_LOCK = threading.Lock()


def fold_text(text: str, fold: Fold) -> str:
    """A value as CQP's flags see it: ``d`` strips combining marks first, then ``c`` case-folds."""
    if "d" in fold:
        text = strip_diacritics(text)
    if "c" in fold:
        text = text.casefold()
    return text


@dataclass(frozen=True)
class Groups:
    """Lexicon ids grouped by their folded string: ``of_id[id]`` is the group, ``names[group]`` its string;
    ``rank[group]`` orders the groups by their string (code points)."""

    of_id: npt.NDArray[np.int32]
    names: list[str]
    rank: npt.NDArray[np.int32]


def groups(attribute: PositionalAttribute, fold: Fold) -> Groups:
    """The attribute's lexicon grouped by folded string (no fold: one group per id)."""
    with _TABLES_LOCK:
        tables = _GROUPS.get(attribute)
        if tables is None:
            tables = _GROUPS[attribute] = {}
    cached = tables.get(fold)
    if cached is not None:
        return cached
    strings = attribute.strings
    if fold:
        index: dict[str, int] = {}
        of_id = np.fromiter((index.setdefault(fold_text(s, fold), len(index)) for s in strings),
                            dtype=np.int32, count=len(strings))
        names = list(index)
    else:
        of_id = np.arange(len(strings), dtype=np.int32)
        names = strings
    order = sorted(range(len(names)), key=names.__getitem__)
    rank = np.empty(len(names), dtype=np.int32)
    rank[np.asarray(order, dtype=np.int64)] = np.arange(len(names), dtype=np.int32)
    result = Groups(of_id, names, rank)
    tables[fold] = result
    return result


def matching(attribute: PositionalAttribute, match: str, ignore_case: bool) -> BoolTable:
    """Which lexicon ids of the attribute match the CQP regex (the whole token)."""
    with _TABLES_LOCK:
        index = _INDEXES.get(attribute)
    if index is None:
        index = LexiconIndex(attribute.strings, attribute)
        with _TABLES_LOCK:
            _INDEXES[attribute] = index
    return np.asarray(match_table(index, RegexValue(match, ignore_case), MATCH_SECONDS), dtype=np.bool_)
