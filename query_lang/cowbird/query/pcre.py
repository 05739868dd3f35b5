"""CQP's regular expressions (PCRE 8, UTF-8 and UCP) rewritten for Python's ``regex`` module.

CQP compiles every value as ``^(?:value)$`` with ``PCRE_UCP | PCRE_UTF8`` and, for ``%c``,
``PCRE_CASELESS`` (cl/regopt.c). ``regex`` reads most of that syntax alike, but not all of it, and
where it differs the native engine would find other hits than real CQP (tests/engine/
test_differential.py found each of these):

- escapes ``regex`` refuses or reads otherwise: ``\\x{e9}``, ``\\o{101}``, ``\\Q...\\E``, a lone
  ``\\E``, ``\\8``, ``\\N``, unknown letters (``\\y`` is ``y``), ``\\Z`` in a class;
- classes whose UCP meaning differs: ``\\w`` and ``[[:alnum:]]`` take every ``\\p{N}``,
  ``[[:punct:]]`` is ``\\p{P}`` plus the ASCII symbols, ``\\b`` follows that ``\\w``, PCRE's own
  properties ``\\p{Xan}``, ``\\p{Xwd}``, ``\\p{Xsp}``, ``\\p{Xps}``, ``\\p{Xuc}``;
- ``%c``: PCRE never folds the case of a property (``\\p{Lu}`` stays upper case), but turns
  ``[[:upper:]]`` and ``[[:lower:]]`` into ``[[:alpha:]]``; its case folding is the simple one
  (``ß`` never matches ``ss``);
- ``{,2}`` is literal text in PCRE 8; ``[[:<:]]`` and ``[[:>:]]`` are word boundaries;
- references to groups that do not exist (``\\g1``) and two groups of one name are errors.

``translate`` walks the pattern once, as PCRE's compiler does, and writes the same expression in
``regex``'s version 1 syntax (scoped inline flags, nested classes), so that whatever the two read
alike passes through unchanged.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field, replace
from functools import lru_cache

import regex

FLAGS = regex.V1
"""Compile the translation with these (plus ``regex.IGNORECASE`` for ``%c``); the translation
itself turns full case folding off."""

# What PCRE's UCP classes contain, as items of a ``regex`` character class.
_WORD = r"\p{L}\p{N}_"
_SPACE = r"\t\n\x0b\f\r\p{Z}"
_HSPACE = r"\t\x20\xa0\u1680\u180e\u2000-\u200a\u202f\u205f\u3000"
_VSPACE = r"\n\x0b\f\r\x85\u2028\u2029"
_GRAPH = r"[\p{L}\p{M}\p{N}\p{P}\p{S}\p{Cf}--[\u061c\u180e\u2066-\u2069]]"

_POSIX = {
    "alnum": r"\p{L}\p{N}",
    "alpha": r"\p{L}",
    "ascii": r"\x00-\x7f",
    "blank": _HSPACE,
    "cntrl": r"\p{Cc}",
    "digit": r"\p{Nd}",
    "graph": _GRAPH,
    "lower": r"\p{Ll}",
    "print": rf"{_GRAPH}[\p{{Zs}}--[\u061c\u180e\u2066-\u2069]]",
    "punct": r"\p{P}\$\+<=>\^`\|\~",
    "space": _SPACE,
    "upper": r"\p{Lu}",
    "word": _WORD,
    "xdigit": r"0-9A-Fa-f",
}
_PCRE_PROPERTIES = {
    "Any": r"\x00-\U0010ffff",
    "L&": r"\p{Lu}\p{Ll}\p{Lt}",
    "Xan": r"\p{L}\p{N}",
    "Xps": _SPACE,
    "Xsp": _SPACE,
    "Xwd": _WORD,
    "Xuc": r"$@`\xa0-\ud7ff\ue000-\U0010ffff",
}
_CATEGORIES = frozenset(
    "C Cc Cf Cn Co Cs L Ll Lm Lo Lt Lu M Mc Me Mn N Nd Nl No P Pc Pd Pe Pf Pi Po Ps S Sc Sk Sm So Z Zl Zp Zs".split()
)
_CLASS_ESCAPES = {
    "d": (r"\p{Nd}", False),
    "D": (r"\p{Nd}", True),
    "s": (_SPACE, False),
    "S": (_SPACE, True),
    "w": (_WORD, False),
    "W": (_WORD, True),
    "h": (_HSPACE, False),
    "H": (_HSPACE, True),
    "v": (_VSPACE, False),
    "V": (_VSPACE, True),
}
_CHARACTER_ESCAPES = {"a": "\a", "e": "\x1b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
_UNSUPPORTED = frozenset("LlUu")  # PCRE 8 refuses \L, \l, \U, \u
_QUANTIFIER = re.compile(r"\{(\d+)(?:,(\d*))?\}")
_WORD_CHAR = rf"[{_WORD}]"
_BOUNDARY = rf"(?:(?<={_WORD_CHAR})(?!{_WORD_CHAR})|(?<!{_WORD_CHAR})(?={_WORD_CHAR}))"
_NOT_BOUNDARY = rf"(?:(?<={_WORD_CHAR})(?={_WORD_CHAR})|(?<!{_WORD_CHAR})(?!{_WORD_CHAR}))"
_OPEN, _CLOSE = "^(?:", ")$"
_SPECIAL_OUTSIDE = frozenset("\\^$.|?*+()[]{}")
_SPECIAL_INSIDE = frozenset("\\]^-[&|~")


PCRE_SCRIPTS = frozenset({
    "Arabic", "Armenian", "Avestan", "Balinese", "Bamum", "Bassa_Vah", "Batak", "Bengali", "Bopomofo", "Brahmi",
    "Braille", "Buginese", "Buhid", "Canadian_Aboriginal", "Carian", "Caucasian_Albanian", "Chakma", "Cham",
    "Cherokee", "Common", "Coptic", "Cuneiform", "Cypriot", "Cyrillic", "Deseret", "Devanagari", "Duployan",
    "Egyptian_Hieroglyphs", "Elbasan", "Ethiopic", "Georgian", "Glagolitic", "Gothic", "Grantha", "Greek",
    "Gujarati", "Gurmukhi", "Han", "Hangul", "Hanunoo", "Hebrew", "Hiragana", "Imperial_Aramaic", "Inherited",
    "Inscriptional_Pahlavi", "Inscriptional_Parthian", "Javanese", "Kaithi", "Kannada", "Katakana", "Kayah_Li",
    "Kharoshthi", "Khmer", "Khojki", "Khudawadi", "Lao", "Latin", "Lepcha", "Limbu", "Linear_A", "Linear_B",
    "Lisu", "Lycian", "Lydian", "Mahajani", "Malayalam", "Mandaic", "Manichaean", "Meetei_Mayek", "Mende_Kikakui",
    "Meroitic_Cursive", "Meroitic_Hieroglyphs", "Miao", "Modi", "Mongolian", "Mro", "Myanmar", "Nabataean",
    "New_Tai_Lue", "Nko", "Ogham", "Ol_Chiki", "Old_Italic", "Old_North_Arabian", "Old_Permic", "Old_Persian",
    "Old_South_Arabian", "Old_Turkic", "Oriya", "Osmanya", "Pahawh_Hmong", "Palmyrene", "Pau_Cin_Hau", "Phags_Pa",
    "Phoenician", "Psalter_Pahlavi", "Rejang", "Runic", "Samaritan", "Saurashtra", "Sharada", "Shavian", "Siddham",
    "Sinhala", "Sora_Sompeng", "Sundanese", "Syloti_Nagri", "Syriac", "Tagalog", "Tagbanwa", "Tai_Le", "Tai_Tham",
    "Tai_Viet", "Takri", "Tamil", "Telugu", "Thaana", "Thai", "Tibetan", "Tifinagh", "Tirhuta", "Ugaritic", "Vai",
    "Warang_Citi", "Yi",
})
"""The script names CQP's PCRE (8.39, Unicode 7) takes after \\p: full names, as written — not ISO codes
(``Latn``, ``Zzzz``), not scripts of later Unicode versions, not ``Unknown``; checked against real CQP."""


class PcreError(ValueError):
    """A pattern PCRE refuses; ``index`` is where in the pattern."""

    def __init__(self, message: str, index: int) -> None:
        super().__init__(message)
        self.message = message
        self.index = index


@dataclass
class _Flags:
    caseless: bool
    extended: bool = False
    duplicate_names: bool = False


@dataclass
class _ClassItems:
    """A character class being read: items whose case PCRE folds under ``%c`` (characters and
    ranges) and items it never folds (properties and the classes made of them)."""

    chars: list[str] = field(default_factory=list)
    properties: list[str] = field(default_factory=list)


def _char(ch: str, inside: bool) -> str:
    """One character as a literal in a ``regex`` pattern (inside a class or outside)."""
    if not ch.isprintable() or ch.isspace():
        code = ord(ch)
        return f"\\x{code:02x}" if code < 0x100 else (f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "\\" + ch if ch in (_SPECIAL_INSIDE if inside else _SPECIAL_OUTSIDE) or ch == "#" else ch


def _set(items: str, negated: bool) -> str:
    return f"[{'^' if negated else ''}{items}]"


class _Translator:
    def __init__(self, pattern: str, ignore_case: bool) -> None:
        self.pattern = f"{_OPEN}{pattern}{_CLOSE}"  # as CQP hands it to PCRE
        self.inner_end = len(_OPEN) + len(pattern)
        self.self_contained = True  # the value does not reach out of CQP's (?:...)
        self.i = 0
        self.out: list[str] = []
        self.stack: list[_Flags] = [_Flags(caseless=ignore_case)]
        self.groups = 0
        self.names: set[str] = set()
        self.total_groups = _count_groups(self.pattern)
        self.origins: list[tuple[int, int]] = []  # (offset in the translation, index in the pattern)
        self.length = self.counted = 0
        self.last = "none"  # what a quantifier would repeat: "atom", "quantifier" or "none"

    # ---------------------------------------------------------------- helpers

    @property
    def flags(self) -> _Flags:
        return self.stack[-1]

    def error(self, message: str, index: int | None = None) -> PcreError:
        return PcreError(message, self.i if index is None else index)

    def peek(self, offset: int = 0) -> str:
        at = self.i + offset
        return self.pattern[at] if at < len(self.pattern) else ""

    def immune(self, text: str) -> str:
        """``text`` (a property or class) as PCRE reads it under %c: its case is never folded."""
        return f"(?-i:{text})" if self.flags.caseless else text

    # ---------------------------------------------------------------- the walk

    def run(self) -> str:
        pattern = self.pattern
        while self.i < len(pattern):
            ch = pattern[self.i]
            while self.counted < len(self.out):
                self.length += len(self.out[self.counted])
                self.counted += 1
            self.origins.append((self.length, self.i))
            if self.flags.extended and ch in " \t\n\x0b\f\r":
                self.i += 1
            elif self.flags.extended and ch == "#":
                end = pattern.find("\n", self.i)
                self.i = len(pattern) if end < 0 else end + 1
            elif ch == "\\":
                self.out.append(self.escape_outside())
            elif ch == "[":
                self.out.append(self.character_class())
                self.last = "atom"
            elif ch == "(":
                self.out.append(self.open_group())
                self.last = "none"
            elif ch == ")":
                if len(self.stack) > 1:
                    self.stack.pop()
                if len(self.stack) == 1 and self.i < self.inner_end:
                    self.self_contained = False
                self.out.append(")")
                self.i += 1
                self.last = "atom"
            elif ch in "*+?" or ch == "{" and _QUANTIFIER.match(pattern, self.i):
                self.quantifier(ch)
            elif ch == "{":
                self.out.append("\\{")
                self.i += 1
                self.last = "atom"
            elif ch == "}":
                self.out.append("\\}")
                self.i += 1
                self.last = "atom"
            else:
                self.out.append(ch if ch.isprintable() and not ch.isspace() else _char(ch, inside=False))
                self.i += 1
                self.last = "none" if ch in "^$|" else "atom"
        return "".join(self.out)

    def quantifier(self, ch: str) -> None:
        """``*``, ``+``, ``?`` or ``{n,m}``: PCRE repeats only an atom, and takes one ``+`` (possessive)
        or ``?`` (lazy) right after a quantifier; anything else is "nothing to repeat"."""
        if self.last == "quantifier" and ch in "+?":
            self.last = "none"
        elif self.last == "atom":
            self.last = "quantifier"
        else:
            raise self.error("nothing to repeat")
        found = _QUANTIFIER.match(self.pattern, self.i) if ch == "{" else None
        text = found.group() if found else ch
        self.out.append(text)
        self.i += len(text)

    def open_group(self) -> str:
        pattern, start = self.pattern, self.i
        if pattern.startswith("(?(", start):  # a condition: (?(1)...), (?(<name>)...), (?(?=...)...)
            self.stack.append(replace(self.flags))
            close = pattern.find(")", start + 3)
            if pattern.startswith("(?(?", start) or close < 0:
                self.i = start + 2
                return "(?"
            self.i = close + 1
            return pattern[start : close + 1]
        if not pattern.startswith("(?", start):
            self.groups += not pattern.startswith("(*", start)
            self.stack.append(replace(self.flags))
            self.i += 1
            return "("
        rest = pattern[start + 2 :]
        if rest.startswith("#"):
            end = pattern.find(")", start)
            if end < 0:
                raise self.error("missing ) after comment", start)
            self.i = end + 1
            return ""
        named = re.match(r"(?:P?<(?![=!])|')(\w+)[>']", rest)
        if named:
            name = named.group(1)
            if name in self.names and not self.flags.duplicate_names:
                raise self.error("two named subpatterns have the same name", start)
            self.names.add(name)
            self.groups += 1
            self.stack.append(replace(self.flags))
            self.i = start + 2 + named.end()
            return f"(?P<{name}>"
        setting = re.match(r"([imsxJUX]*)(?:-([imsxJUX]*))?([:)])", rest)
        if setting:
            on, off, closer = setting.group(1), setting.group(2) or "", setting.group(3)
            flags = replace(self.flags)
            for letter, value in [*((c, True) for c in on), *((c, False) for c in off)]:
                if letter == "i":
                    flags.caseless = value
                elif letter == "x":
                    flags.extended = value
                elif letter == "J":
                    flags.duplicate_names = value
            # i, m and s mean the same to regex; x is done here; J, U and X change no whole-value match
            keep_on = "".join(c for c in on if c in "ims")
            keep_off = "".join(c for c in off if c in "ims")
            text = keep_on + (f"-{keep_off}" if keep_off else "")
            self.i = start + 2 + setting.end()
            if closer == ")":
                self.stack[-1] = flags
                return f"(?{text})" if text else ""
            self.stack.append(flags)
            return f"(?{text}:"
        self.stack.append(replace(self.flags))
        for opening in ("(?:", "(?|", "(?>", "(?=", "(?!", "(?<=", "(?<!"):
            if pattern.startswith(opening, start):
                self.i = start + len(opening)
                return opening
        # (?P=name), conditions and the rest: regex reads them as PCRE does, or refuses them
        self.i = start + 2
        return "(?"

    # ---------------------------------------------------------------- escapes

    def number_escape(self) -> str:
        """``\\`` and digits outside a class: a back reference, an octal character, or 8 or 9."""
        digits = re.match(r"\d+", self.pattern[self.i :])
        assert digits is not None
        number = int(digits.group())
        if digits.group()[0] != "0" and (number < 8 or number <= self.groups):
            self.i += len(digits.group())
            return f"\\g<{number}>"
        return _char(self.octal_character(), inside=False)

    def octal_character(self) -> str:
        """The character of up to three octal digits at ``self.i``; a leading 8 or 9 is itself."""
        octal = re.match(r"[0-7]{1,3}", self.pattern[self.i :])
        if octal is None:  # \8, \9: the digit itself
            self.i += 1
            return self.pattern[self.i - 1]
        self.i += len(octal.group())
        return chr(int(octal.group(), 8))

    def braced_code(self, base: int, letter: str) -> str:
        """The character of ``\\x{...}`` or ``\\o{...}`` (``self.i`` at the brace)."""
        close = self.pattern.find("}", self.i)
        digits = self.pattern[self.i + 1 : close] if close > 0 else ""
        allowed = "0123456789abcdefABCDEF"[: 22 if base == 16 else 8]
        if close < 0 or not digits or any(c not in allowed for c in digits):
            raise self.error(f"\\{letter}{{...}} needs {'hexadecimal' if base == 16 else 'octal'} digits")
        code = int(digits, base)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            raise self.error(f"character value in \\{letter}{{...}} is too large or a surrogate")
        self.i = close + 1
        return chr(code)

    def literal_escape(self, letter: str) -> str | None:
        """The character a character escape stands for (``self.i`` after the letter), or None."""
        if letter in _CHARACTER_ESCAPES:
            return _CHARACTER_ESCAPES[letter]
        if letter == "x":
            if self.peek() == "{":
                return self.braced_code(16, "x")
            hexdigits = re.match(r"[0-9a-fA-F]{0,2}", self.pattern[self.i :])
            assert hexdigits is not None
            self.i += len(hexdigits.group())
            return chr(int(hexdigits.group() or "0", 16))
        if letter == "o":
            if self.peek() != "{":
                raise self.error("\\o must be followed by {octal digits}")
            return self.braced_code(8, "o")
        if letter == "c":
            control = self.peek()
            if not control or not control.isascii():
                raise self.error("\\c at end of pattern or followed by a non-ASCII character")
            self.i += 1
            return chr(ord(control.upper()) ^ 0x40)
        return None

    def property_escape(self, negated: bool) -> tuple[str, bool]:
        """``\\p{..}``/``\\P{..}``/``\\pL`` as class items and whether they are negated."""
        start = self.i - 2
        if self.peek() == "{":
            close = self.pattern.find("}", self.i)
            if close < 0:
                raise self.error("malformed \\p or \\P sequence", start)
            name = self.pattern[self.i + 1 : close]
            self.i = close + 1
        else:
            name = self.peek()
            self.i += 1
        if name.startswith("^"):
            name, negated = name[1:], not negated
        if name in _PCRE_PROPERTIES:
            return _PCRE_PROPERTIES[name], negated
        if name in _CATEGORIES:
            return f"\\p{{{name}}}", negated
        if name in PCRE_SCRIPTS:
            return f"\\p{{Script={name}}}", negated
        raise self.error(f"unknown property name after \\P or \\p: {name!r}", start)

    def quoted(self, inside: bool) -> str:
        """``\\Q...\\E``: literal text (``self.i`` after the Q)."""
        end = self.pattern.find("\\E", self.i)
        if end < 0 or end >= self.inner_end:
            self.self_contained = False
        text = self.pattern[self.i : len(self.pattern) if end < 0 else end]
        self.i = len(self.pattern) if end < 0 else end + 2
        return "".join(_char(c, inside) for c in text)

    def escape_outside(self) -> str:
        start, previous = self.i, self.last
        self.last = "atom"  # unless the escape is an assertion
        self.i += 1
        letter = self.peek()
        if not letter:
            raise self.error("\\ at end of pattern", start)
        if letter.isdigit():
            return self.number_escape()
        self.i += 1
        character = self.literal_escape(letter)
        if character is not None:
            return _char(character, inside=False)
        if letter in _CLASS_ESCAPES:
            items, negated = _CLASS_ESCAPES[letter]
            return self.immune(_set(items, negated))
        if letter in "pP":
            items, negated = self.property_escape(letter == "P")
            return self.immune(_set(items, negated))
        if letter in "bBAzZGK":
            self.last = "none"  # an assertion: nothing to repeat
        if letter == "b":
            return _BOUNDARY
        if letter == "B":
            return _NOT_BOUNDARY
        if letter == "N":
            if self.peek() == "{" and not _QUANTIFIER.match(self.pattern, self.i):
                raise self.error("PCRE does not support \\N{name}", start)
            return "[^\\n]"
        if letter == "R":
            return "(?>\\r\\n|[\\n\\x0b\\f\\r\\x85\\u2028\\u2029])"
        if letter == "z":
            return "\\Z"
        if letter == "Z":
            return "(?=\\n?\\Z)"
        if letter in "AGKX":
            return "\\" + letter
        if letter in "QE":
            self.last = previous  # \E and an empty \Q...\E change nothing
            text = self.quoted(inside=False) if letter == "Q" else ""
            if text:
                self.last = "atom"
            return text
        if letter == "C":
            raise self.error("\\C (one byte) is not supported", start)
        if letter in "gk":
            return self.reference(letter, start)
        if letter in _UNSUPPORTED:
            raise self.error(f"PCRE does not support \\{letter}", start)
        return _char(letter, inside=False)  # an unknown escape is the character itself

    def reference(self, letter: str, start: int) -> str:
        """``\\g1``, ``\\g{-1}``, ``\\g{name}``, ``\\k<name>``, ``\\k'name'``, ``\\k{name}``."""
        rest = self.pattern[self.i :]
        if letter == "g":
            found = re.match(r"\{(-?\d+)\}|(-?\d+)|\{(\w+)\}", rest)
        else:
            found = re.match(r"<(\w+)>|'(\w+)'|\{(\w+)\}", rest)
        if not found:
            raise self.error(f"\\{letter} is not followed by a group number or name in braces", start)
        self.i += found.end()
        target = next(g for g in found.groups() if g is not None)
        if re.fullmatch(r"-?\d+", target):
            number = int(target)
            if number < 0:
                number = self.groups + 1 + number
            if number <= 0:
                raise self.error("a back reference to group 0 or before the first group", start)
            if number > self.total_groups:
                raise self.error("reference to non-existent subpattern", start)
            return f"\\g<{number}>"
        return f"\\g<{target}>"

    # ---------------------------------------------------------------- classes

    def character_class(self) -> str:
        pattern, start = self.pattern, self.i
        for boundary, side in (("[[:<:]]", f"(?={_WORD_CHAR})"), ("[[:>:]]", f"(?<={_WORD_CHAR})")):
            if pattern.startswith(boundary, start):  # a word start or a word end
                self.i += len(boundary)
                return _BOUNDARY + side
        self.i += 1
        negated = self.peek() == "^"
        if negated:
            self.i += 1
        items = _ClassItems()
        first = True
        while True:
            if self.i >= len(pattern):
                raise self.error("missing terminating ] for character class", start)
            ch = pattern[self.i]
            if ch == "]" and not first:
                self.i += 1
                break
            first = False
            if ch == "[" and re.match(r"\[([:.=])", pattern[self.i :]):
                self.posix_class(items)
                continue
            low = self.class_atom(items)
            if low is None:
                continue
            # a range?
            if self.peek() == "-" and self.peek(1) not in ("]", ""):
                save = self.i
                self.i += 1
                if self.peek() == "[" and re.match(r"\[([:.=])", pattern[self.i :]):
                    self.i = save  # [a-[:digit:]]: the hyphen is literal
                    items.chars.append(_char(low, inside=True))
                    continue
                high = self.class_atom(_ClassItems(), range_end=True)
                if high is None:  # [a-\d]
                    raise self.error("invalid range in character class", save)
                if ord(high) < ord(low):
                    raise self.error("range out of order in character class", save)
                items.chars.append(f"{_char(low, inside=True)}-{_char(high, inside=True)}")
                continue
            items.chars.append(_char(low, inside=True))
        return self.emit_class(items, negated)

    def emit_class(self, items: _ClassItems, negated: bool) -> str:
        chars, properties = "".join(items.chars), "".join(items.properties)
        if not properties or not self.flags.caseless:
            return _set(chars + properties, negated) if chars + properties else ("(?s:.)" if negated else "(?!)")
        if not chars:
            return self.immune(_set(properties, negated))
        if not negated:
            return f"(?:{_set(chars, False)}|{self.immune(_set(properties, False))})"
        return f"(?:(?!{_set(chars, False)}){self.immune(f'(?!{_set(properties, False)})')}(?s:.))"

    def posix_class(self, items: _ClassItems) -> None:
        found = re.match(r"\[([:.=])(\^?)([a-z]*)\1\]", self.pattern[self.i :])
        if found is None:  # [ followed by : without a closing :]: a literal [
            items.chars.append("\\[")
            self.i += 1
            return
        if found.group(1) != ":":
            raise self.error("POSIX collating elements are not supported")
        name = found.group(3)
        if name not in _POSIX:
            raise self.error(f"unknown POSIX class name {name!r}")
        if self.flags.caseless and name in ("upper", "lower"):
            name = "alpha"
        self.i += len(found.group())
        body = _POSIX[name]
        items.properties.append(_set(body, True) if found.group(2) else f"[{body}]")

    def class_atom(self, items: _ClassItems, range_end: bool = False) -> str | None:
        """One item of a class: a character (returned) or a class escape (added to ``items``)."""
        ch = self.peek()
        if ch != "\\":
            self.i += 1
            return ch
        start = self.i
        self.i += 1
        letter = self.peek()
        if not letter:
            raise self.error("\\ at end of pattern", start)
        if letter.isdigit():  # in a class, digits are always an octal character (or 8, 9)
            return self.octal_character()
        self.i += 1
        if letter == "b":
            return "\b"
        character = self.literal_escape(letter)
        if character is not None:
            return character
        if range_end and (letter in _CLASS_ESCAPES or letter in "pPQE"):
            return None
        if letter in _CLASS_ESCAPES:
            body, negated = _CLASS_ESCAPES[letter]
            items.properties.append(_set(body, negated) if negated else f"[{body}]")
            return None
        if letter in "pP":
            body, negated = self.property_escape(letter == "P")
            items.properties.append(_set(body, negated) if negated else f"[{body}]")
            return None
        if letter == "Q":
            items.chars.append(self.quoted(inside=True))
            return None
        if letter == "E":
            return None
        if letter in "NRXB":
            raise self.error(f"\\{letter} is not allowed in a character class", start)
        if letter in _UNSUPPORTED:
            raise self.error(f"PCRE does not support \\{letter}", start)
        return letter  # an unknown escape is the character itself


def _count_groups(pattern: str) -> int:
    """How many capturing groups the pattern has (a rough scan: escapes and classes skipped)."""
    count, i = 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            if pattern.startswith("Q", i + 1):
                end = pattern.find("\\E", i + 2)
                i = len(pattern) if end < 0 else end + 2
                continue
            i += 2
            continue
        if ch == "[":
            j = i + 1 + (pattern[i + 1 : i + 2] == "^")
            j += pattern[j : j + 1] == "]"
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            i = j + 1
            continue
        if ch == "(" and (not pattern.startswith("(?", i) or re.match(r"\(\?(?:P?<\w|')", pattern[i:])):
            count += not pattern.startswith("(*", i)
        i += 1
    return count


@dataclass(frozen=True)
class Translation:
    """A value as CQP hands it to PCRE (``^(?:value)$``), in ``regex`` syntax: match it with
    ``search``. ``self_contained`` is False when the value reaches out of CQP's brackets (``a)|(b``,
    an unclosed ``\\Q``): then it is not a whole-value match of the value's own text."""

    text: str
    self_contained: bool


@lru_cache(maxsize=4096)
def translate(pattern: str, ignore_case: bool = False) -> Translation:
    """``pattern`` as CQP's PCRE reads it, in ``regex`` syntax, to compile with ``FLAGS`` (and
    ``regex.IGNORECASE`` when ``ignore_case``). Raises ``PcreError`` where PCRE would refuse it."""
    translator = _Translator(unicodedata.normalize("NFC", pattern), ignore_case)
    text = translator.run()
    return Translation(text, translator.self_contained)


def compile_error(pattern: str) -> PcreError | None:
    """Why PCRE (as far as the translation can tell) would refuse ``pattern``, with the index in
    ``pattern`` of the construct at fault; None when it compiles."""
    translator = _Translator(pattern, ignore_case=False)

    def in_pattern(index: int) -> int:
        return min(max(index - len(_OPEN), 0), len(pattern))

    try:
        text = translator.run()
        regex.compile(f"(?-f){text}", FLAGS, cache_pattern=False)
    except PcreError as error:
        return PcreError(error.message, in_pattern(error.index))
    except regex.error as error:
        offset = (error.pos or 0) - len("(?-f)")
        index = max((source for target, source in translator.origins if target <= offset), default=0)
        return PcreError(error.msg, in_pattern(index))
    return None


def compile_pcre(pattern: str, ignore_case: bool = False, multiline: bool = False) -> regex.Pattern[str]:
    """The compiled translation, to ``search`` one value, or with ``multiline`` many values joined
    by line breaks (each match then lies within one value, if the pattern cannot match a break)."""
    flags = FLAGS | (regex.IGNORECASE if ignore_case else 0) | (regex.MULTILINE if multiline else 0)
    return regex.compile(f"(?-f){translate(pattern, ignore_case).text}", flags)
