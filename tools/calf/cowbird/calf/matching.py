"""Finding a corpus line in a web page's text, and the context around it.

The corpus line is tokenized text (``do n't go !``), the page running text (``don't go!``), often
with other quotes, dashes, soft hyphens, hyphenated line breaks and markup. Both sides are compared
by their letters and digits alone — Unicode NFKC, case-folded, everything else left out — so that
whatever the tokenizer split or joined and however the page punctuates, the words agree. Each
compared character remembers the stretch of the page it came from, exactly: "ß" folds to "ss",
"ﬁ" to "fi", a decomposed "é" to one letter, and each keeps its place on the page.

The best-matching stretch of the page is found (exactly, else through rapidfuzz's alignment near
the places that share 8-letter pieces with the line), then judged word by word: a word of the line
is intact when every letter of it was matched, and words the page inserted count as changes too.
The line is found when at most ``allowed_changes`` words differ — one in ten at ``min_score`` 90, and
always one word, so that a one-word edit is still found — and that many words are intact; a
different sentence in the same frame ("Ich rufe … auf") has most of its words changed. A line is
found only with the words of its hit (the match) on the page, letter for letter: the sentence with
other words where the hit was is ``changed`` (``Found.changed_hit``), never found — its context is
not the context of the word searched for. The score is the letter-level similarity, 100 only for
the line exactly as it is. The place found ends at the sentence's own edges: the line's punctuation
at its ends (spaced as the page spaces it) and the full stop right after its last word go with it.
"""

from __future__ import annotations

import functools
import math
import unicodedata
from dataclasses import dataclass

import regex
from rapidfuzz import fuzz
from rapidfuzz.distance import Levenshtein

from cowbird.calf.pages import PageText, running_neighbours, visible

RUN = 6
"""Words in a row that find a line whose context reaches beyond its sentence (tokens of context from
a corpus that shuffles sentences): the match with at least this many of the line's words around it."""
EDITED_RATIO = 75.0
"""Letter-level similarity a line with words changed must still have; and it keeps ``INTACT_LETTERS``
letters in ``INTACT_WORDS`` words matched: a short line in a common frame ("Wer hatte denn die Idee"
and "… die Mehrheit") is no evidence of the line."""
INTACT_LETTERS = 12
INTACT_WORDS = 3
MATCH_CHANGED_WORDS = 8
"""Intact words (and 4 letters each) a line needs to be its sentence changed when the word changed is
its match (``Found.changed_hit``): the hit itself is not on the page, so the sentence around it must
say that this is its sentence (a short rhetorical frame "Warum reden Sie nicht von …?" repeated with
another word does not)."""
SENTENCE_END = regex.compile(r"^(?:[.!?…]+|[.!?…]+[\"'”’»)\]]+)$")
"""A token that ends a sentence."""
GRAM = 8
"""Letters in the pieces of the line looked up in the page to find where to align."""
PLACES = 3
"""Places of the page aligned with the line, best-voted first."""
MIN_RATIO = 70.0
"""A letter-level similarity under this is no match, whatever the words say."""


_RUNS = regex.compile(r"[A-Za-z0-9]+(?!\p{M})|[A-Za-z0-9]?[^\x00-\x7f]+")
"""Runs of ASCII letters and digits (folded by ``lower``) and runs of other characters (each folded
on its own, a base character with the combining marks after it); ASCII punctuation and spaces
between them count for nothing."""


def folded(text: str) -> tuple[str, list[int], list[int]]:
    """The letters and digits of ``text`` (NFKC, case-folded), and for each the start and end of the
    characters of ``text`` it came from. A base character and its combining marks are folded
    together (a decomposed "é" is one letter), and a character that folds to several ("ß", "ﬁ",
    "İ") gives each of them the same place."""
    chars: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    for run in _RUNS.finditer(text):
        first, last = run.span()
        if text[first].isascii() and text[last - 1].isascii():
            chars.append(run.group().lower())
            starts.extend(range(first, last))
            ends.extend(range(first + 1, last + 1))
            continue
        index = first
        while index < last:
            end = index + 1
            while end < last and unicodedata.combining(text[end]):
                end += 1
            for char in _fold(text[index:end]):
                chars.append(char)
                starts.append(index)
                ends.append(end)
            index = end
    return "".join(chars), starts, ends


@functools.lru_cache(maxsize=4096)
def _fold(cluster: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKC", cluster).casefold() if c.isalnum())


@dataclass(frozen=True)
class Line:
    """A corpus line as Calf compares it: its folded letters and where each word of it lies there;
    ``core``, the match's words: a line with a word changed on the page is found only when the match
    itself is there; with ``runs``, a run of the line's words around the match also finds it."""

    text: str
    letters: str
    words: list[tuple[int, int]]  # spans in ``letters``, one per word that has letters or digits
    core: tuple[int, int] | None = None  # the match's words (first, last + 1)
    runs: bool = False  # the line's context may come from elsewhere: a run around the match finds it
    ends: tuple[bool, bool] = (False, False)  # a sentence ends right before the match / the match ends one
    bare: bool = False  # the match has no letters or digits (its core is the word before it)
    hit: str = ""  # the match's tokens, as the line has them

    @classmethod
    def of(cls, text: str, core_tokens: tuple[int, int] | None = None, runs: bool = False) -> Line:
        """The line of ``text``; ``core_tokens``: the match's tokens (whitespace-separated) in it."""
        letters: list[str] = []
        words: list[tuple[int, int]] = []
        token_word: list[int] = []  # per token, the number of words before it
        length = 0
        for word in text.split():
            token_word.append(len(words))
            chars, _, _ = folded(word)
            if chars:
                letters.append(chars)
                words.append((length, length + len(chars)))
                length += len(chars)
        core = None
        bare = False
        tokens = text.split()
        ends = (False, False)
        hit = " ".join(tokens[core_tokens[0]:core_tokens[1]]) if core_tokens is not None else ""
        if core_tokens is not None and core_tokens[0] < len(tokens):
            first_token, last_token = core_tokens[0], min(core_tokens[1], len(tokens)) - 1
            ends = (first_token == 0 or bool(SENTENCE_END.match(tokens[first_token - 1])),
                    last_token + 1 >= len(tokens) or bool(SENTENCE_END.match(tokens[last_token]))
                    or bool(SENTENCE_END.match(tokens[last_token + 1])))
        if core_tokens is not None and words and core_tokens[0] < len(token_word):
            first = token_word[core_tokens[0]]
            last = token_word[core_tokens[1]] if core_tokens[1] < len(token_word) else len(words)
            bare = last == first
            if bare:  # a match without letters ("."): the word before it, whose sentence it ends
                first = max(0, first - 1)
            first = min(first, len(words) - 1)
            core = (first, max(last, first + 1))
        return cls(text, "".join(letters), words, core, runs and core is not None, ends, bare, hit)


@dataclass(frozen=True)
class Found:
    score: float  # letter-level similarity, 0-100; 100: the line exactly
    start: int  # of the match in the page text
    end: int
    words: int  # words of the line (of the run around the match, when ``partial``)
    changed: int  # words that differ: changed, dropped or added on the page
    matched: str  # the page's own text of the match
    left: str  # context before it, as on the page
    right: str
    partial: int = 0  # words of the line that are not beside the run found (its context from elsewhere)
    intact: int = 0  # letters of the line matched on the page
    core_intact: bool = True  # the match's words are on the page letter for letter
    hit: str = ""  # the match as the line has it (when its words are not on the page)
    page_hit: str = ""  # and what the page has where it was ("": nothing)

    def _near(self, min_score: float) -> bool:
        return (self.score >= MIN_RATIO and self.changed <= allowed_changes(self.words, min_score)
                and not (self.partial and self.words < RUN))

    def found(self, min_score: float) -> bool:
        """The line is on the page: its words, at most ``allowed_changes`` of them changed, and its
        hit (the match) among the words that are there, letter for letter."""
        if not self.core_intact or not self._near(min_score):
            return False
        if self.changed == 0:
            return True
        kept = self.words - self.changed
        return self.score >= EDITED_RATIO and self.intact >= INTACT_LETTERS and kept >= INTACT_WORDS

    def changed_hit(self, min_score: float) -> bool:
        """The line's sentence is on the page with other words where its hit was: the sentence's other
        words are there (``MATCH_CHANGED_WORDS`` of them intact), the match is not — never found."""
        if self.core_intact or not self._near(min_score):
            return False
        kept = self.words - self.changed
        return kept >= MATCH_CHANGED_WORDS and self.intact >= 4 * MATCH_CHANGED_WORDS

    def detail(self) -> str:
        rest = (f"; the line's other {self.partial} words (its context) are not beside it on the page"
                if self.partial else "")
        what = f"the match and {self.words - 1} words around it" if self.partial else ""
        if not self.core_intact:
            there = f'"{self.page_hit}" on the page' if self.page_hit else "not on the page"
            return f'the hit "{self.hit}" is {there}; {self.changed} of {self.words} words differ{rest}'
        if self.changed == 0 and self.score == 100:
            return f"exact: {what}{rest}" if self.partial else "exact"
        if self.changed == 0:
            return f"every word, spelt differently (letters {self.score:.1f} % alike){rest}"
        return f"{self.changed} of {self.words} words differ{rest}"


def allowed_changes(words: int, min_score: float) -> int:
    """Words that may differ for a line of ``words`` words: the share ``100 - min_score`` of them,
    and at least one (unless ``min_score`` is 100: the line exactly)."""
    share = math.floor(words * (100.0 - min_score) / 100.0 + 1e-9)
    return max(share, 1 if min_score < 100 else 0)


@dataclass
class PageLetters:
    """A page's text folded once for every line looked for on it."""

    page: PageText
    letters: str
    starts: list[int]
    ends: list[int]

    @classmethod
    def of(cls, page: PageText) -> PageLetters:
        letters, starts, ends = folded(page.text)
        return cls(page, letters, starts, ends)


def _places(needle: str, haystack: str) -> list[int]:
    """Where the line may start in the page: starts voted for by the line's 8-letter pieces found
    there (a piece found too often votes for nothing), best first."""
    votes: dict[int, int] = {}
    gram = GRAM if len(needle) >= 4 * GRAM else GRAM - 2  # a short line: shorter pieces, every one of them
    step = max(1, gram // 2) if len(needle) >= 8 * GRAM else 1
    for offset in range(0, max(1, len(needle) - gram + 1), step):
        piece = needle[offset : offset + gram]
        hits: list[int] = []
        at = haystack.find(piece)
        while at >= 0 and len(hits) <= 20:
            hits.append(at)
            at = haystack.find(piece, at + 1)
        if len(hits) > 20:
            continue
        for hit in hits:
            bucket = (hit - offset) // 16
            votes[bucket] = votes.get(bucket, 0) + 1
    ranked = sorted(votes, key=lambda bucket: -votes[bucket])
    chosen: list[int] = []
    for bucket in ranked:
        if all(abs(bucket - other) > 1 for other in chosen):
            chosen.append(bucket)
        if len(chosen) == PLACES:
            break
    return [bucket * 16 for bucket in chosen]


def _align(needle: str, haystack: str) -> tuple[int, int] | None:
    """The stretch of ``haystack`` best aligned with ``needle``: exactly where it occurs, else around
    the places its pieces point to, widened or narrowed to the best indel ratio."""
    exact = haystack.find(needle)
    if exact >= 0:
        return exact, exact + len(needle)
    best: tuple[float, int, int] | None = None
    slack = max(8, len(needle) // 2)
    candidates = _places(needle, haystack) or ([0] if len(haystack) <= 4 * len(needle) + 64 else [])
    for place in candidates:
        low, high = max(0, place - slack), min(len(haystack), place + len(needle) + slack)
        alignment = fuzz.partial_ratio_alignment(needle, haystack[low:high])
        if alignment is None:
            continue
        start, end = low + alignment.dest_start, low + alignment.dest_end
        score, start, end = _widen(needle, haystack, start, end)
        if best is None or score > best[0]:
            best = (score, start, end)
    return None if best is None else (best[1], best[2])


def _widen(needle: str, haystack: str, start: int, end: int) -> tuple[float, int, int]:
    """The window found by ``partial_ratio`` has the needle's length, which words inserted or
    dropped on the page put out of place: move its end, then its start, to the best indel ratio
    (an edit costs what it changes, not the length of what follows it)."""
    slack = max(4, len(needle) // 3)
    best = (fuzz.ratio(needle, haystack[start:end]), start, end)
    for stop in range(max(start + 1, end - slack), min(len(haystack), end + slack) + 1):
        candidate = fuzz.ratio(needle, haystack[start:stop])
        if candidate > best[0]:
            best = (candidate, start, stop)
    _, start, end = best
    for begin in range(max(0, start - slack), min(end - 1, start + slack) + 1):
        candidate = fuzz.ratio(needle, haystack[begin:end])
        if candidate > best[0]:
            best = (candidate, begin, end)
    return best


def _changes(line: Line, page: PageLetters, start: int, end: int,
             words: tuple[int, int] | None = None) -> tuple[int, int, int, int, bool]:
    """How many words differ between the line (its ``words`` first .. last, or all) and the page
    around ``start`` .. ``end``, the letters matched, and the stretch of the page that is the line:
    the least of two counts that each can only overstate (and whether the match's words are there) —

    - the letter alignment: the words of either side not matched letter for letter (on the side
      with more of them), which the tokenizer's splits ("do n't") and hyphenated line breaks do not
      touch, but an ambiguous alignment (a repeated word) can inflate;
    - the words: the edit distance of the line's words and the page's, over the page's word ranges
      near the alignment (up to four words more or less at either end), which no ambiguity inflates."""
    first, last = words if words is not None else (0, len(line.words))
    spans = line.words[first:last]
    if not spans:
        return 0, 0, start, end, True
    low, high = spans[0][0], spans[-1][1]
    window = page.letters[start:end]
    line_equal = [False] * len(line.letters)
    page_equal = [False] * len(window)
    for tag, src_start, src_end, dest_start, dest_end in _opcodes(line.letters[low:high], window, low):
        if tag == "equal":
            line_equal[src_start:src_end] = [True] * (src_end - src_start)
            page_equal[dest_start:dest_end] = [True] * (dest_end - dest_start)
    line_changed = sum(1 for a, b in spans if not all(line_equal[a:b]))
    page_changed = sum(1 for a, b in _page_words(page, start, end) if not all(page_equal[a - start:b - start]))
    by_letters = max(line_changed, page_changed)
    near = _page_words(page, max(0, start - 48), min(len(page.letters), end + 48))
    if not near:
        return by_letters, sum(line_equal), start, end, _core_intact(line, line_equal)
    line_words = [line.letters[a:b] for a, b in spans]
    page_words = [page.letters[a:b] for a, b in near]
    i0 = next((k for k, (a, b) in enumerate(near) if b > start), 0)
    j0 = next((k + 1 for k, (a, b) in enumerate(near) if b >= end), len(near))
    best = (Levenshtein.distance(line_words, page_words[i0:j0]), 0, i0, j0)
    for i in range(max(0, i0 - 4), min(len(near), i0 + 5)):
        for j in range(max(i + 1, j0 - 4), min(len(near), j0 + 4) + 1):
            distance = Levenshtein.distance(line_words, page_words[i:j])
            best = min(best, (distance, abs(i - i0) + abs(j - j0), i, j))
    by_words, _, i, j = best
    if by_words < by_letters:  # the words' stretch is the line on the page
        start, end = near[i][0], near[j - 1][1]
        line_equal = [False] * len(line.letters)
        for op in Levenshtein.opcodes(line_words, page_words[i:j]):  # word by word: which words are there
            if op.tag == "equal":
                for k in range(op.src_start, op.src_end):
                    a, b = spans[k]
                    line_equal[a:b] = [True] * (b - a)
        return by_words, sum(line_equal), start, end, _core_intact(line, line_equal)
    return by_letters, sum(line_equal), start, end, _core_intact(line, line_equal)


def _core_intact(line: Line, equal: list[bool]) -> bool:
    """Whether every letter of the match's words is matched on the page (no match given, or a match
    without letters — "." — that cannot be told apart: yes)."""
    if line.core is None or line.bare:
        return True
    first, last = line.core
    return all(equal[line.words[first][0]:line.words[last - 1][1]])


def _opcodes(line: str, window: str, offset: int) -> list[tuple[str, int, int, int, int]]:
    """The letter alignment of a stretch of the line (starting at ``offset`` in it) and the page."""
    return [(op.tag, op.src_start + offset, op.src_end + offset, op.dest_start, op.dest_end)
            for op in Levenshtein.opcodes(line, window)]


def _page_words(page: PageLetters, start: int, end: int) -> list[tuple[int, int]]:
    """The page's words in its letters ``start`` .. ``end``, as spans of letters: what lies between
    spaces on the page, a word hyphenated at a line break ("entgegen- kommen") one word."""
    text = page.page.text
    words: list[tuple[int, int]] = []
    first = start
    for k in range(start + 1, end + 1):
        if k == end:
            words.append((first, k))
            break
        between = text[page.ends[k - 1]:page.starts[k]]
        if any(c.isspace() for c in between) and not _hyphenated(between, text, page.starts[k]):
            words.append((first, k))
            first = k
    return words


_COORDINATING = frozenset({"und", "oder", "bis", "sowie", "bzw", "and", "or", "to", "nor"})


def _hyphenated(between: str, text: str, next_start: int) -> bool:
    """Whether a hyphen and a space before a lower-case word are a line break inside a word (a converted
    PDF's "Wirt- schaft"), not a word left open for the next ("Wirtschafts- und Sozialpolitik")."""
    if not between.rstrip().endswith(("-", "\u00ad")) or not text[next_start:next_start + 1].islower():
        return False
    following = text[next_start:next_start + 6].split(" ", 1)[0].rstrip(".,;:")
    return following.lower() not in _COORDINATING


def locate(line: Line, page: PageLetters, context_chars: int = 500) -> Found | None:
    """Where the line best matches on the page, how well, and the running text around it; None
    when the page has no text or the line no letters. A line with ``runs`` whose whole text is not
    on the page is also looked for as the longest run of its words around the match that is."""
    if not line.letters or not page.letters:
        return None
    span = _align(line.letters, page.letters)
    if span is None:
        return None
    changed, intact, start, end, core_intact = _changes(line, page, *span)
    score = fuzz.ratio(line.letters, page.letters[start:end])
    partial = 0
    if line.runs and changed > allowed_changes(len(line.words), 90.0):
        run = _run(line, page)
        if run is not None:
            (first, last), (start, end) = run
            changed, intact, start, end, core_intact = _changes(line, page, start, end, (first, last))
            score = fuzz.ratio(line.letters[line.words[first][0]:line.words[last - 1][1]], page.letters[start:end])
            partial = len(line.words) - (last - first)
    text = page.page.text
    # whole words of the page; the line's own punctuation at its ends goes with it (a run inside the
    # line has none of its own)
    page_start, page_end = _whole_words(text, page.starts[start], page.ends[end - 1])
    page_start, page_end = _with_punctuation("" if partial else line.text, text, page_start, page_end)
    left, right = context(page.page, page_start, page_end, context_chars)
    page_hit = "" if core_intact else _page_hit(line, page, start, end)
    return Found(round(score, 1), page_start, page_end, len(line.words) - partial, changed,
                 visible(text[page_start:page_end]), left, right, partial, intact, core_intact,
                 line.hit if not core_intact else "", page_hit)


def _page_hit(line: Line, page: PageLetters, start: int, end: int) -> str:
    """The page's words where the line's hit (its match) was, in the place ``start`` .. ``end`` found
    for the line: the words the word-by-word alignment puts against the match's words ("" when the
    page has none there)."""
    assert line.core is not None
    first, last = line.core
    near = _page_words(page, start, end)
    line_words = [line.letters[a:b] for a, b in line.words]
    page_words = [page.letters[a:b] for a, b in near]
    taken: list[int] = []
    for op in Levenshtein.opcodes(line_words, page_words):
        if op.tag == "insert":
            if first < op.src_start < last:  # words the page has inside the match
                taken += range(op.dest_start, op.dest_end)
        elif op.src_start < last and op.src_end > first:  # an equal or replaced stretch over the match
            if op.tag == "equal":
                taken += [op.dest_start + k - op.src_start for k in range(max(first, op.src_start),
                                                                           min(last, op.src_end))]
            elif op.tag == "replace":
                taken += range(op.dest_start, op.dest_end)
    if not taken:
        return ""
    low, high = near[min(taken)][0], near[max(taken)][1] - 1
    return visible(page.page.text[page.starts[low]:page.ends[high]])


def _run(line: Line, page: PageLetters) -> tuple[tuple[int, int], tuple[int, int]] | None:
    """The longest run of the line's words around its match that the page has as it is, letter for
    letter: (its first and last + 1 word, its letters on the page); at least ``RUN`` words, and two
    words on each side of the match where the match's own sentence goes on (a run of the context
    before the match with the first word of some other sentence is not the match's sentence)."""
    assert line.core is not None
    core_first, core_last = line.core
    words = line.words
    need_left = 0 if line.ends[0] else min(2, core_first)
    need_right = 0 if line.ends[1] else min(2, len(words) - core_last)
    for length in range(len(words), RUN - 1, -1):
        low = max(0, core_last + need_right - length)
        high = min(core_first - need_left, len(words) - length)
        for first in range(low, high + 1):
            last = first + length
            piece = line.letters[words[first][0]:words[last - 1][1]]
            at = page.letters.find(piece)
            if at >= 0:
                return (first, last), (at, at + len(piece))
    return None


def _whole_words(text: str, start: int, end: int) -> tuple[int, int]:
    """``start`` .. ``end`` of the page text widened to the words it cuts into (letters and digits)."""
    while start > 0 and text[start - 1].isalnum():
        start -= 1
    while end < len(text) and text[end].isalnum():
        end += 1
    return start, end


def _with_punctuation(line: str, text: str, start: int, end: int) -> tuple[int, int]:
    """The match widened to its sentence's own edges: over as many punctuation marks as the line has
    at its ends ("." "!" an opening quote), where the page has punctuation there too — right beside
    the words or a space apart, as a tokenized page has it ("nicht ." "„ Wir") —, then over the
    sentence's end that follows its last word on the page ("." "?!" "…") and the quotes or brackets
    right around it. Letters are compared, but the sentence ends with its full stop, and the context
    beside it starts with the next one."""
    if not line:
        return start, end
    line = line.strip()
    lead = sum(1 for c in line[:len(line) - len(line.lstrip(_PUNCTUATION + " "))] if c in _PUNCTUATION)
    trail = sum(1 for c in line[len(line.rstrip(_PUNCTUATION + " ")):] if c in _PUNCTUATION)
    while lead and (before := _spaced(text, start, -1)) is not None and text[before] in _PUNCTUATION:
        start, lead = before, lead - 1
    while trail and (after := _spaced(text, end, 1)) is not None and text[after] in _PUNCTUATION:
        end, trail = after + 1, trail - 1
    while True:
        while (after := _spaced(text, end, 1)) is not None and text[after] in _SENTENCE_ENDS:
            end = after + 1
        # quotes or brackets right around the sentence ("„Wir … getan.“", "(Wir … getan.)"): its own
        if start > 0 and end < len(text) and text[end] in _PAIRS.get(text[start - 1], ""):
            start, end = start - 1, end + 1
            continue
        return start, end


def _spaced(text: str, at: int, step: int) -> int | None:
    """The place of the character beside ``at`` (before it: ``step`` -1, the one at ``at - 1``), past
    spaces on the same line; None at the text's ends or past a line break."""
    k = at - 1 if step < 0 else at
    while 0 <= k < len(text) and text[k] in " \t\u00a0":
        k += step
    return k if 0 <= k < len(text) and text[k] != "\n" else None


_PUNCTUATION = ".,;:!?…\"'“”„‟‘’‚‛«»‹›()[]{}-–—/"
_SENTENCE_ENDS = ".!?…"
_PAIRS = {"„": "“”", "“": "”", "\"": "\"", "‚": "‘’", "‘": "’", "'": "'", "«": "»", "»": "«", "‹": "›", "›": "‹",
          "(": ")", "[": "]"}
"""Opening quotes and brackets, and the marks that close each."""


def context(page: PageText, start: int, end: int, chars: int) -> tuple[str, str]:
    """Up to ``chars`` characters of running text each side of ``start`` .. ``end`` of the page text,
    cut at word boundaries: the rest of the blocks holding the match, then the running text beside
    them (``pages.running_neighbours``), as the page has it."""
    if chars <= 0:
        return "", ""
    first, last = page.block_at(start), page.block_at(max(start, end - 1))
    before = page.text[page.starts[first]:start]
    after = page.text[end:page.starts[last] + len(page.blocks[last].text)]
    left = [page.blocks[k].text for k in reversed(running_neighbours(page, first, -1, chars))] + [before]
    right = [after] + [page.blocks[k].text for k in running_neighbours(page, last, 1, chars)]
    return _cut_left(" ".join(p for p in left if p.strip()), chars), _cut_right(" ".join(p for p in right if p.strip()),
                                                                                 chars)


def _cut_left(text: str, chars: int) -> str:
    text = visible(text)
    if len(text) <= chars:
        return text
    cut = text[len(text) - chars:]
    space = cut.find(" ")
    return cut[space + 1:] if space >= 0 and not text[len(text) - chars - 1].isspace() else cut


def _cut_right(text: str, chars: int) -> str:
    text = visible(text)
    if len(text) <= chars:
        return text
    cut = text[:chars]
    space = cut.rfind(" ")
    return cut[:space] if space >= 0 and not text[chars].isspace() else cut
