"""A document's language and its connected-text quality ("badness", texrex's measure).

``identify`` names the language with py3langid (langid.py's model, 97 languages): on web-like
paragraphs in six languages it was as accurate as lingua and 5-13 times faster, in a tenth of the
memory of lingua's high-accuracy mode (bench/language_id.py, docs/building-corpora.md). Texts it is
not sure about are ``"unknown"``.

``badness`` is texrex's connected-text measure (Schäfer & Bildhauer 2012, section 3.3): the most
frequent short words of a language have an expected relative frequency ``mu`` and spread ``sigma`` in
normal connected text; each such word that is rarer in the document than expected adds its
standardised shortfall ``(mu - f) / sigma`` to the document's badness. Connected prose scores near 0,
a list of product names, a tag cloud, a table of numbers or a text in another language scores high
(every function word missing). A language identifier says German for a German tag cloud; badness does
not, which is why texrex has both.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from typing import Any

UNKNOWN = "unknown"
"""The language of a document the identifier is not sure about (and of one without letters)."""

MIN_CONFIDENCE = 0.5
"""Below this confidence (py3langid's probability, normalised over its 97 languages) a document's
language is ``UNKNOWN``: on the benchmark's paragraphs the right language scored >= 0.99 (their first 6
words >= 0.62, their first 15 >= 0.83); a list of product names or a table of numbers scores 0.12."""

BADNESS_LIMIT = 12.0
"""Documents whose badness is above this are left out (``--max-badness``). With these profiles a
function word entirely missing adds 2 (the first-person pronoun 1), so the maximum is 19 (20 for
French, Spanish, Italian). Measured (docs/building-corpora.md): the English Web Treebank's documents of
at least 150 words score 4.4 in the median, 10.0 at the 99th percentile and 13.5 at most; the benchmark's
whole documents in six languages 1.9-6.7; lists of product names, tag clouds, navigation, keyword spam
and tables of numbers 19, text in another language 15.8-19. COW used 10 with profiles measured on
its own crawl (Schäfer & Bildhauer 2012); 12 keeps the real prose that 10 would lose to the noise of
short documents and still lies far below everything that is not connected text."""

_COEFFICIENT = 0.5
"""sigma / mu of a function word between documents, measured as texprof measures it (the weighted
standard deviation of its relative frequency over documents, weighted by length) on the English Web
Treebank's 321 documents of at least 150 words: 0.32-0.58 for the articles, prepositions, conjunctions
and forms of *be*, median 0.5."""

_PRONOUN_COEFFICIENT = 1.0
"""sigma / mu of the first-person pronoun (EWT: *i* 0.98, *you* 0.96): frequent in forums and reviews,
rare in news, so its absence says little and it adds at most 1."""

# (word, mu) per language: the ten most frequent words made of letters in wordfreq 3.1.1's "best" list
# for the language (its frequency is mu: the relative frequency of the word among all words, over
# Wikipedia, subtitles, news, books, web text and social media; on EWT's documents the English ones
# came within 0-17 % of their measured weighted means, but for *i*, 28 % more frequent in EWT's forums
# and reviews). bench/language_id.py --profiles prints them and the EWT measurements.
_FREQUENCIES: dict[str, tuple[tuple[str, float], ...]] = {
    "de": (("die", 0.0302), ("der", 0.0288), ("und", 0.0263), ("in", 0.0174), ("das", 0.0145), ("ich", 0.012),
           ("ist", 0.012), ("nicht", 0.0102), ("zu", 0.0102), ("den", 0.01)),
    "en": (("the", 0.0537), ("to", 0.0269), ("and", 0.0257), ("of", 0.0251), ("a", 0.0229), ("in", 0.0186),
           ("i", 0.0123), ("is", 0.0117), ("for", 0.0102), ("that", 0.0102)),
    "es": (("de", 0.0646), ("la", 0.0363), ("que", 0.0331), ("el", 0.0282), ("en", 0.0282), ("y", 0.0275),
           ("a", 0.0229), ("los", 0.0151), ("no", 0.0145), ("un", 0.0117)),
    "fr": (("de", 0.0479), ("la", 0.0269), ("le", 0.0224), ("et", 0.0204), ("l", 0.0182), ("à", 0.0182),
           ("les", 0.0178), ("est", 0.0158), ("en", 0.0148), ("des", 0.0141)),
    "it": (("di", 0.0389), ("e", 0.0288), ("che", 0.0229), ("il", 0.0209), ("la", 0.02), ("a", 0.0162),
           ("in", 0.0162), ("non", 0.0145), ("un", 0.0145), ("per", 0.0141)),
    "nl": (("de", 0.0537), ("van", 0.0324), ("het", 0.0309), ("een", 0.0257), ("en", 0.0251), ("in", 0.0229),
           ("is", 0.0158), ("op", 0.0132), ("ik", 0.0129), ("dat", 0.0126)),
}
_PRONOUNS = frozenset({"i", "ich", "ik"})

PROFILES: dict[str, tuple[tuple[str, float, float], ...]] = {
    language: tuple(
        (word, mu, mu * (_PRONOUN_COEFFICIENT if word in _PRONOUNS else _COEFFICIENT)) for word, mu in words
    )
    for language, words in _FREQUENCIES.items()
}
"""Per language (ISO 639-1): its ten (word, mu, sigma), the expected relative frequency of each word in
connected text and its spread between documents."""

_WORD = re.compile(r"[^\W\d_]+")
"""texprof's minimal tokenizer: a token is a run of letters (anything between two non-letters)."""

_lock = threading.Lock()
_identifier: Any = None


def _get_identifier() -> Any:
    """py3langid's identifier with probabilities normalised, loaded once per process (0.7 s, ~100 MB)."""
    global _identifier
    with _lock:
        if _identifier is None:
            from py3langid.langid import MODEL_FILE, LanguageIdentifier

            _identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        return _identifier


def identify(text: str) -> tuple[str, float]:
    """The language of ``text`` as an ISO 639-1 code and the identifier's confidence (0..1).

    A text without letters, or one whose best language scores below ``MIN_CONFIDENCE``, is
    ``("unknown", confidence)``. The text is cut to its first 20,000 characters: more does not change the
    answer, and a 50-MB page must not cost seconds.
    """
    sample = text[:20_000]
    if not _WORD.search(sample):
        return UNKNOWN, 0.0
    language, confidence = _get_identifier().classify(sample)
    confidence = round(float(confidence), 4)
    if confidence < MIN_CONFIDENCE:
        return UNKNOWN, confidence
    return str(language), confidence


def words(text: str) -> list[str]:
    """The text's tokens as texprof counts them: runs of letters, case-folded."""
    return _WORD.findall(text.casefold())


def badness(text: str, language: str) -> float | None:
    """texrex's badness of ``text`` for ``language``: the sum over the language's profile words of
    ``max(0, (mu - f) / sigma)``, ``f`` the word's relative frequency among the text's words.

    0 for text whose function words are all at least as frequent as expected; the profile's maximum (19
    for English, German and Dutch, 20 for French, Spanish, Italian) for text without any of them, or
    without words. None for a language without a profile (``PROFILES``): the build then keeps the document and
    writes no badness.
    """
    profile = PROFILES.get(language)
    if profile is None:
        return None
    tokens = words(text)
    total = len(tokens)
    counts = Counter(tokens)
    score = 0.0
    for word, mu, sigma in profile:
        frequency = counts[word] / total if total else 0.0
        if frequency < mu:
            score += (mu - frequency) / sigma
    return round(score, 3)
