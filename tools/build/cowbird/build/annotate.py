"""Tokens, sentences, part of speech and lemma for the blocks of a cleaned document.

Tokens and sentences come from SoMaJo (made for German and English web and social-media text: URLs,
e-mail addresses, emoticons, hashtags and mentions stay one token; ``de_CMC`` and ``en_PTB``). Each
block is tokenised on its own, so no sentence crosses a block. Part of speech and lemma come from
HanTa (the Hanover Tagger, whose models ship in its wheel, so a build needs no download): German in
STTS, English in the Penn Treebank tagset, which is what the corpus uses for English (EWT and the
demo corpus are Penn). HanTa's English model tags in CLAWS C5; :data:`C5_TO_PENN` and
:func:`c5_to_penn` map it, using the word and its neighbours where C5 does not make Penn's
distinction (``VVB`` is ``VBP`` or ``VB`` by what precedes it, ``VVN`` after no auxiliary is
``VBD``, ``DT0`` before an article is ``PDT``, quotes open and close, punctuation by the character).

A site with spaCy or TreeTagger can plug them in instead of HanTa: ``tagger="spacy:MODEL"`` (the
installed spaCy pipeline ``MODEL``: its ``tag_`` and ``lemma_`` for the SoMaJo tokens) and
``tagger="treetagger:/path/to/treetagger"`` (through treetaggerwrapper, tags only mode on SoMaJo's
tokens). Neither is a dependency; asking for one that is not installed stops the build at its start
with what to install.

Languages: SoMaJo and HanTa cover English and German only. For any other language the build stops
at its start (:func:`check_tagger`) with a message that says so, rather than write a corpus whose
tokens carry no tags; the spaCy plug-in lifts this for a language whose pipeline is installed (spaCy
then tokenises too).
"""

from __future__ import annotations

import importlib
import importlib.util
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from cowbird.build.records import Token

#: the longest token HanTa analyses whole (German compounds reach ~60 characters); see _HanTa.tag
MAX_ANALYSED = 64

#: the languages the default tokeniser and tagger (SoMaJo + HanTa) have models for
HANTA_LANGUAGES = {"en": "morphmodel_en.pgz", "de": "morphmodel_ger.pgz"}
SOMAJO_LANGUAGES = {"en": "en_PTB", "de": "de_CMC"}

#: CLAWS C5 (HanTa's English model) to Penn Treebank where the tag alone decides; the tags missing
#: here (VVB, VVI, VVD, VVN, NP0, DT0, DTQ, PNQ, PUN, PUQ, UNC, ZZ0, CJT, NN0) are decided by
#: :func:`c5_to_penn` from the word and its context.
C5_TO_PENN: dict[str, str] = {
    "AJ0": "JJ",
    "AJC": "JJR",
    "AJS": "JJS",
    "AT0": "DT",
    "AV0": "RB",
    "AVP": "RP",
    "AVQ": "WRB",
    "CJC": "CC",
    "CJS": "IN",
    "CRD": "CD",
    "DPS": "PRP$",
    "EX0": "EX",
    "ITJ": "UH",
    "NN1": "NN",
    "NN2": "NNS",
    "NN": "NN",
    "ORD": "JJ",
    "PNI": "NN",
    "PNP": "PRP",
    "POS": "POS",
    "PRF": "IN",
    "PRP": "IN",
    "PUL": "-LRB-",
    "PUR": "-RRB-",
    "TO0": "TO",
    "VM0": "MD",
    "XX0": "RB",
    "IN": "IN",
    "!!!": "UH",
    "UNKNOWN": "NN",
    # be, do, have: C5 keeps their forms apart like Penn does
    "VBB": "VBP",
    "VBD": "VBD",
    "VBG": "VBG",
    "VBI": "VB",
    "VBN": "VBN",
    "VBZ": "VBZ",
    "VDB": "VBP",
    "VDD": "VBD",
    "VDG": "VBG",
    "VDI": "VB",
    "VDN": "VBN",
    "VDZ": "VBZ",
    "VHB": "VBP",
    "VHD": "VBD",
    "VHG": "VBG",
    "VHI": "VB",
    "VHN": "VBN",
    "VHZ": "VBZ",
    "VVG": "VBG",
    "VVZ": "VBZ",
}

#: punctuation and symbols by their text, as the English Web Treebank tags them (its gold, checked
#: against ../shared/reference/ewt.vrt: a dash or ellipsis between clauses is ``,``, ``-`` inside a
#: compound ``HYPH``, decorations and emoticons ``NFP``)
PUNCT_TO_PENN: dict[str, str] = {
    ".": ".",
    "!": ".",
    "?": ".",
    "..": ".",
    "...": ",",
    "…": ",",
    ",": ",",
    ";": ",",
    "--": ",",
    "—": ",",
    "–": ",",
    "/": ",",
    "=": ",",
    ":": ":",
    "-": "HYPH",
    "*": "NFP",
    "~": "NFP",
    "|": "NFP",
    "$": "$",
    "£": "$",
    "€": "$",
    "#": "NN",
    "%": "NN",
    "&": "CC",
    "+": "SYM",
    "@": "IN",
    "(": "-LRB-",
    "[": "-LRB-",
    "{": "-LRB-",
    ")": "-RRB-",
    "]": "-RRB-",
    "}": "-RRB-",
}
OPENING_QUOTES = {"``", "“", "‘", "„", "‚", "«", "`"}
CLOSING_QUOTES = {"''", "”", "’", "»"}
AMBIGUOUS_QUOTES = {'"', "'"}

#: words whose Penn tag C5 does not tell from its tag: the wh-words and "that"
WH_WORDS = {"what": "WP", "who": "WP", "whom": "WP", "whoever": "WP", "whatever": "WDT", "which": "WDT",
            "whichever": "WDT", "whose": "WP$"}
INTERJECTIONS = {"please", "lol", "thanks!", "hi", "hello", "hey", "wow", "yeah", "yep", "oh", "ah", "ugh", "haha"}
OPENING_INTERJECTIONS = {"well", "okay", "ok", "yes", "no", "anyway", "sure", "alright"}
ADJECTIVE_QUANTIFIERS = {"many", "several", "other", "few", "same", "much", "such", "little"}
NUMBER_WORDS = {"hundred", "thousand", "million", "billion", "trillion", "dozen"}
NEGATIONS = {"n't", "nt", "n’t", "not"}
PLURAL_NOUNS = {"people", "police", "lots", "cattle", "folks"}
PREDETERMINERS = {"all", "both", "half", "such", "quite", "rather"}
MODAL_OR_TO = {"MD", "TO"}
DO_FORMS = {"VDB", "VDD", "VDZ"}
SUBJECT_PRONOUNS = {"i", "you", "we", "they"}
AUXILIARY_TAGS = {"VHB", "VHD", "VHZ", "VHI", "VHG", "VHN", "VBB", "VBD", "VBZ", "VBI", "VBG", "VBN"}
SUBJECTS = {"i", "you", "we", "they", "he", "she", "it", "who"}
NOUN_PHRASE_END = {"NN1", "NN2", "NN0", "NP0", "PNI", "PNP"}
NOUN_PHRASE = {"AT0", "DPS", "DT0", "AJ0", "AJC", "AJS", "CRD", "ORD", "NN1", "NN2", "NN0", "NP0", "POS", "AV0"}
CLAUSE_OPENERS = {"PUN", "PUQ", "PUL", "PUR", "CJC", "CJS", "CJT", "PNQ", "AVQ", "DTQ", "ITJ"}
#: a lemma per contracted form (HanTa keeps the clitic itself as the lemma)
CLITIC_LEMMAS = {
    "n't": "not", "nt": "not", "n’t": "not", "'m": "be", "'re": "be", "'ve": "have", "'ll": "will", "ca": "can",
    "wo": "will", "'s/VBZ": "be", "'d/MD": "would", "'d/VBD": "have", "na/TO": "to", "gon/VBG": "go",
}


#: the tag for a token SoMaJo classes as one of these, per language: Penn as EWT has it (``ADD`` for
#: addresses, ``NFP`` for emoticons, ``,`` for a ``-`` or ``/`` with spaces on both sides, where a
#: ``-`` between letters is ``HYPH``); STTS's ``XY`` (non-word) for German, which has no closer tag
CLASS_TAGS: dict[str, dict[str, str]] = {
    "en": {"URL": "ADD", "email_address": "ADD", "emoticon": "NFP", "mention": "NNP", "hashtag": "NN",
           "spaced_dash": ","},
    "de": {"URL": "XY", "email_address": "XY", "emoticon": "XY", "mention": "XY", "hashtag": "XY",
           "spaced_dash": "$("},
}


class UnsupportedTagger(ValueError):
    """The build cannot tag this language with this tagger; the message says what would."""


def _symbolic(word: str) -> bool:
    """True for a token without a letter or digit: punctuation, symbols, emoticons such as ``:-)``."""
    return not any(ch.isalnum() for ch in word)


def _is_address(word: str) -> bool:
    """A URL or an e-mail address (EWT tags them ``ADD``)."""
    lower = word.lower()
    return (
        lower.startswith(("http://", "https://", "www.", "ftp://"))
        or ("@" in word and "." in word.rsplit("@", 1)[-1] and len(word) > 4)
        or (lower.endswith((".com", ".org", ".net", ".edu", ".gov")) and len(word) > 5)
    )


def _quote_tag(word: str, opened: bool) -> str:
    """Penn's `` or '' for a quotation mark: by its shape, or for ``"`` by whether a quote is open."""
    if word in OPENING_QUOTES:
        return "``"
    if word in CLOSING_QUOTES:
        return "''"
    return "''" if opened else "``"


def c5_to_penn(words: Sequence[str], c5: Sequence[str]) -> list[str]:
    """Map one sentence's CLAWS C5 tags to Penn Treebank tags, using the words where C5 cannot tell.

    The rules (each kept because it raised the accuracy on EWT in bench/tagging.py; the tag-for-tag
    table alone gives 89.3 %, with them 91.7 %): a base form (VVB/VVI) is ``VB`` after a modal,
    ``to`` or a form of *do* (adverbs and ``not`` between), at the start of a sentence (imperative)
    or after the subject of a fronted auxiliary, else ``VBP`` after a subject (:func:`_base_form`);
    a past form (VVD/VVN) is ``VBN`` after an auxiliary and ``VBD`` after a clause's subject
    (:func:`_past_form`); ``NP0`` is ``NNP``, and a capitalised common noun inside a sentence not in
    title case ``NNP``/``NNPS``; ``all``/``both``/``such`` before an article is ``PDT``; wh-words
    by the word; quotes open and close; punctuation by its character (:data:`PUNCT_TO_PENN`).
    """
    out: list[str] = []
    quote_open = False
    penn: str | None
    n = len(words)
    for i, (word, tag) in enumerate(zip(words, c5, strict=True)):
        lower = word.lower()
        penn = C5_TO_PENN.get(tag)
        if word in AMBIGUOUS_QUOTES or word in OPENING_QUOTES or word in CLOSING_QUOTES:
            if tag != "POS" or word not in AMBIGUOUS_QUOTES:
                penn = _quote_tag(word, quote_open)
                quote_open = penn == "``"
        elif _is_address(word):
            penn = "ADD"
        elif word in PUNCT_TO_PENN and (tag in ("PUN", "UNC", "PUL", "PUR", "PUQ", "NN0", "ZZ0") or _symbolic(word)):
            penn = PUNCT_TO_PENN[word]
        elif _symbolic(word) and set(word) <= set(".!?") and ("!" in word or "?" in word or len(word) > 3):
            penn = "."  # "!!", "?!", "....": a sentence end, however many marks
        elif _symbolic(word):
            penn = "NFP"  # emoticons, decorations (EWT's convention)
        elif lower in NEGATIONS:
            penn = "RB"
        elif lower == "one" and tag in ("PNI", "CRD"):
            penn = "NN" if i > 0 and c5[i - 1] in ("AT0", "DT0", "AJ0", "ORD") else "CD"  # "the one" vs "one dog"
        elif lower in NUMBER_WORDS:
            penn = "CD"
        elif lower in PLURAL_NOUNS and tag in ("NN0", "PNI", "NN1"):
            penn = "NNS"
        elif tag == "DT0" and lower in ADJECTIVE_QUANTIFIERS and not (i + 1 < n and c5[i + 1] in ("AT0", "DPS")):
            penn = "JJ"
        elif tag in ("VVB", "VVI"):
            penn = _base_form(words, c5, out, i)
        elif tag in ("VVD", "VVN"):
            penn = _past_form(words, c5, out, i, tag)
        elif tag == "NP0":
            penn = "NNP"
        elif tag in ("DT0", "AT0") and lower in PREDETERMINERS and i + 1 < n and c5[i + 1] in ("AT0", "DPS"):
            penn = "PDT"
        elif lower == "such" and i + 1 < n and c5[i + 1] == "AT0":
            penn = "PDT"
        elif tag == "DT0":
            penn = "DT"
        elif tag in ("DTQ", "PNQ"):
            penn = WH_WORDS.get(lower, "WDT" if lower == "that" else "WP")
        elif tag == "CJT":
            # "articles that discuss": a relative pronoun after a noun, else the complementiser
            penn = "WDT" if i > 0 and c5[i - 1] in ("NN1", "NN2", "NP0", "PNI") else "IN"
        elif lower in INTERJECTIONS or (i == 0 and lower in OPENING_INTERJECTIONS and tag in ("AV0", "ITJ", "AJ0")):
            penn = "UH"
        elif tag == "AV0" and (lower in ADJECTIVE_QUANTIFIERS or (i > 0 and c5[i - 1] == "AT0" and i + 1 < n
                                                                   and c5[i + 1] in ("NN1", "NN2", "NP0"))):
            penn = "JJ"
        elif tag == "AVP":
            # "spread out over", "up to": an adverb before a preposition, else a verb's particle
            penn = "RB" if i + 1 < n and c5[i + 1] in ("PRP", "PRF", "TO0", "AVP") else "RP"
        elif lower == "so" and tag == "CJS":
            penn = "RB"
        elif tag in ("PRP", "AV0") and lower in ("about", "around") and i + 1 < n and c5[i + 1] == "CRD":
            penn = "RB"
        elif tag in ("NN1", "NN2") and i > 0 and _proper_looking(word, words, c5, i):
            penn = "NNP" if tag == "NN1" else "NNPS"
        elif tag == "NN0":
            penn = "CD" if any(ch.isdigit() for ch in word) else "NN"
        elif tag in ("UNC", "ZZ0"):
            penn = "CD" if word.isdigit() else ("NNP" if word[:1].isupper() else "NN")
        elif tag == "PUN":
            penn = "."
        if penn is None:
            penn = "NN"
        if lower == "to" and tag == "PRP" and i + 1 < n and c5[i + 1] in ("VVI", "VBI", "VHI", "VDI"):
            penn = "TO"
        out.append(penn)
    return out


def _proper_looking(word: str, words: Sequence[str], c5: Sequence[str], i: int) -> bool:
    """A capitalised common-noun tag inside a sentence that is not written in capitals or title case
    throughout: a name HanTa does not know (``this Miramar``, ``Burger King``)."""
    if not word[:1].isupper() or word.isupper() or c5[i - 1] in ("PUN", "PUQ", "PUL"):
        return False
    letters = [w for w in words if w[:1].isalpha()]
    capitalised = sum(1 for w in letters if w[:1].isupper())
    return capitalised * 2 <= len(letters) + 1


def _before(c5: Sequence[str], words: Sequence[str], i: int) -> int:
    """The index of the nearest word before ``i`` that is not an adverb or negation, or -1."""
    j = i - 1
    while j >= 0 and (c5[j] in ("AV0", "XX0") or words[j].lower() in ("not", "n't", "never", "just", "also")):
        j -= 1
    return j


def _base_form(words: Sequence[str], c5: Sequence[str], penn: list[str], i: int) -> str:
    """Penn's ``VB`` (infinitive, imperative) or ``VBP`` (present, not 3rd person) for C5's VVB/VVI at ``i``,
    which HanTa confuses with each other: decided by the nearest word before it that is not an adverb."""
    j = _before(c5, words, i)
    if j < 0:
        return "VB"  # imperative at the start of a sentence
    prev_tag, prev_word = c5[j], words[j].lower()
    if penn[j] in MODAL_OR_TO or prev_tag in DO_FORMS or prev_tag == "TO0" or prev_word in ("to", "please"):
        return "VB"
    if prev_tag in ("PUN", "PUQ", "PUL", "CJC", "ITJ") and c5[i] == "VVI":
        return "VB"
    if prev_tag in ("PNP", "NN1", "NN2", "NP0") and j >= 1:
        # "do you know", "can I get": the subject after a fronted auxiliary; "make you wonder",
        # "let's call": an object after a verb
        k = _before(c5, words, j)
        if k >= 0 and (penn[k] == "MD" or c5[k] in DO_FORMS or c5[k] in ("VVB", "VVI", "VVD")):
            return "VB"
    if prev_tag in ("VVB", "VVI") and i >= 1 and words[i - 1].lower() in ("come", "go", "help"):
        return "VB"
    if prev_tag in ("PNP", "NN2", "NP0", "CJT", "PNQ", "DTQ", "EX0") or prev_word in SUBJECT_PRONOUNS:
        return "VBP"
    return "VBP" if c5[i] == "VVB" else "VB"


def _past_form(words: Sequence[str], c5: Sequence[str], penn: list[str], i: int, tag: str) -> str:
    """Penn's ``VBD`` (past tense) or ``VBN`` (participle) for C5's VVD/VVN at ``i``: HanTa often gives
    VVN for a past tense (*the children played*), so the context decides and the tag only breaks ties."""
    n = len(words)
    j = _before(c5, words, i)
    if j >= 0 and (c5[j] in AUXILIARY_TAGS or words[j].lower() in ("get", "got", "gets", "getting", "been")):
        return "VBN"
    if any(c5[k] in ("VBB", "VBD", "VBZ", "VHB", "VHD", "VHZ") for k in range(max(0, j - 2), max(0, j))):
        # "was Miramar founded", "have you decided": the auxiliary before its subject
        return "VBN"
    if j >= 0 and words[j].lower() in SUBJECTS:
        return "VBD"
    if j >= 0 and c5[j] in NOUN_PHRASE_END:
        # walk back to the start of the noun phrase: one that opens a clause is the verb's subject
        # ("the children played"), one after a preposition or verb is followed by a reduced relative
        # clause ("lots of towns called Miramar")
        start = j
        while start > 0 and c5[start - 1] in NOUN_PHRASE:
            start -= 1
        if start == 0 or c5[start - 1] in CLAUSE_OPENERS:
            return "VBD"
        if tag == "VVD" and i + 1 < n and c5[i + 1] in ("NP0", "PUQ", "PRP", "AV0"):
            return "VBN"
    return "VBD" if tag == "VVD" else "VBN"


def english_lemma(word: str, penn: str, lemma: str) -> str:
    """EWT-style English lemma: lower case except for proper nouns and ``I``; clitics spelled out."""
    lower = word.lower()
    spelled = CLITIC_LEMMAS.get(f"{lower}/{penn}") or CLITIC_LEMMAS.get(lower)
    if spelled is not None:
        return spelled
    if penn in ("NNP", "NNPS"):
        return word
    if penn == "PRP" and (lower == "i" or lemma.lower() == "i"):
        return "I"
    if penn in ("``", "''"):
        return '"' if word in ('"', "``", "''", "“", "”", "„") else "'"
    if penn in (".", ",", ":", "HYPH", "NFP", "-LRB-", "-RRB-", "$", "SYM", "ADD", "CD"):
        return word
    return lemma.lower() if lemma else lower


def german_lemma(word: str, lemma: str) -> str:
    """HanTa's German lemma, except that an acronym is its own lemma (HanTa writes ``Cdu`` for *CDU*) and
    a hyphenated compound keeps the spelling of its first parts (HanTa: ``Herz-kreislauf-problem``)."""
    if len(word) > 1 and word.isupper() and lemma.lower() == word.lower():
        return word
    cut = word.rfind("-") + 1
    if 1 < cut < len(word) and lemma[:cut].lower() == word[:cut].lower():
        tail = lemma[cut:]
        if word[cut].isupper():
            tail = tail[:1].upper() + tail[1:]
        return word[:cut] + tail
    return lemma


def stts(tag: str, word: str = "") -> str:
    """HanTa's German tag in STTS: ``VV(FIN)`` is STTS ``VVFIN``, ``ADJ(A)`` is ``ADJA``; its own
    classes for nominalised adjectives and infinitives (``NNA``, ``NNI``) are STTS ``NN``. A token of
    punctuation marks only is STTS punctuation by its character whatever HanTa guessed (it tags some
    dashes and quotes ``FM`` or ``XY``): ``$.`` ends a sentence, ``$,`` is the comma, ``$(`` the rest."""
    if word and _symbolic(word):
        if set(word) <= set(".!?;:"):
            return "$."
        if word == ",":
            return "$,"
        if all(unicodedata.category(ch).startswith("P") for ch in word):
            return "$("
    if tag.startswith("$"):
        return tag
    plain = tag.replace("(", "").replace(")", "")
    if plain in ("NNA", "NNI", "UNKNOWN"):
        return "NN"
    return plain


class _PosTagger(Protocol):
    def tag(self, sentences: list[list[str]]) -> list[list[tuple[str, str]]]:
        """(pos, lemma) per token of each sentence."""
        ...


class _HanTa:
    """HanTa with memoised word analyses: the same word form is analysed once per worker.

    HanTa's model holds a cache of the words it was trained on; every other word form is analysed
    morpheme by morpheme (its slowest part) for each occurrence, and so is every lemma. Web text
    repeats its forms (Zipf), so memoising ``(form, case) -> tag probabilities`` and
    ``(form, tag) -> lemma`` makes tagging several times faster; the memo is cleared when it holds
    ``memo_limit`` forms so a worker's memory stays bounded. Results are the same with or without it.
    """

    def __init__(self, language: str, memo_limit: int = 200_000) -> None:
        from HanTa import HanoverTagger as ht  # noqa: N813 - HanTa's module name

        self.language = language
        self.model = ht.HanoverTagger(HANTA_LANGUAGES[language])
        self.memo_limit = memo_limit
        self._word_memo: dict[tuple[str, bool, bool], Any] = {}
        self._lemma_memo: dict[tuple[str, int], str] = {}
        original: Callable[..., Any] = self.model._tag_word
        memo = self._word_memo

        def tag_word(word: str, cutoff: int = 5, casesensitive: bool = True, conditional: bool = False) -> Any:
            if cutoff != 5:
                return original(word, cutoff, casesensitive, conditional)
            key = (word, casesensitive, conditional)
            found = memo.get(key)
            if found is None:
                if len(memo) >= self.memo_limit:
                    memo.clear()
                found = memo[key] = original(word, cutoff, casesensitive, conditional)
            return found

        self.model._tag_word = tag_word

    def _lemma(self, word: str, tag: int) -> str:
        key = (word.lower(), tag)
        found = self._lemma_memo.get(key)
        if found is None:
            if len(self._lemma_memo) >= self.memo_limit:
                self._lemma_memo.clear()
            found = self._lemma_memo[key] = str(self.model._analyze(word, tag, taglevel=1)[0])
        return found

    def tag(self, sentences: list[list[str]]) -> list[list[tuple[str, str]]]:
        out: list[list[tuple[str, str]]] = []
        int2tag = self.model.int2tag
        for words in sentences:
            if not words:
                out.append([])
                continue
            # HanTa's analysis of a word takes time growing with the square of its length (800
            # characters: 9 s): a longer token (a hash, a run of letters) is tagged by its first
            # MAX_ANALYSED characters and is its own lemma. A token is never empty, but HanTa reads
            # the first character, so be safe.
            shown = [(w[:MAX_ANALYSED] if len(w) > MAX_ANALYSED else w) or "_" for w in words]
            tags: list[int] = self.model.tag_sent_viterbi(shown)
            names = [str(int2tag[t]) for t in tags]
            lemmas = [w if len(w) > MAX_ANALYSED else self._lemma(s, t)
                      for w, s, t in zip(words, shown, tags, strict=True)]
            if self.language == "en":
                penn = c5_to_penn(words, names)
                out.append([(p, english_lemma(w, p, lem)) for w, p, lem in zip(words, penn, lemmas, strict=True)])
            else:
                out.append([(stts(n, w), german_lemma(w, lem)) for w, n, lem in zip(words, names, lemmas, strict=True)])
        return out


class _SpaCy:
    """An installed spaCy pipeline tagging SoMaJo's tokens (the tokens are kept: a Doc is built from them)."""

    def __init__(self, model: str, sentences: bool = False) -> None:
        spacy = importlib.import_module("spacy")
        # the parser only where spaCy also splits sentences (a language SoMaJo lacks): it sets doc.sents
        self.nlp = spacy.load(model, exclude=["ner"] if sentences else ["parser", "ner"])
        self.doc_class = importlib.import_module("spacy.tokens").Doc

    def tag(self, sentences: list[list[str]]) -> list[list[tuple[str, str]]]:
        docs = [self.doc_class(self.nlp.vocab, words=words) for words in sentences if words]
        tagged = iter(self.nlp.pipe(docs))
        out: list[list[tuple[str, str]]] = []
        for words in sentences:
            if not words:
                out.append([])
                continue
            doc = next(tagged)
            out.append([(tok.tag_ or "_", tok.lemma_ or tok.text) for tok in doc])
        return out


class _TreeTagger:
    """TreeTagger through treetaggerwrapper, tagging SoMaJo's tokens (``tagonly``: one token a line)."""

    def __init__(self, language: str, directory: str) -> None:
        ttw = importlib.import_module("treetaggerwrapper")
        self.wrapper = ttw.TreeTagger(TAGLANG=language, TAGDIR=directory, TAGOPT="-token -lemma -sgml -quiet")

    def tag(self, sentences: list[list[str]]) -> list[list[tuple[str, str]]]:
        out: list[list[tuple[str, str]]] = []
        for words in sentences:
            if not words:
                out.append([])
                continue
            lines = self.wrapper.tag_text("\n".join(words), tagonly=True, notagurl=True, notagemail=True,
                                          notagip=True, notagdns=True)
            fields = [line.split("\t") for line in lines]
            out.append([(f[1] if len(f) > 1 else "_", f[2] if len(f) > 2 and f[2] != "<unknown>" else f[0])
                        for f in fields][: len(words)])
        return out


def check_tagger(language: str, tagger: str = "hanta") -> None:
    """Raise :class:`UnsupportedTagger` when ``tagger`` cannot tag ``language`` here; loads no model.

    The build calls it before it reads any input, so a wrong ``--language``/``--tagger`` stops it at
    once with a message that says what to install or choose.
    """
    kind, _, arg = tagger.partition(":")
    if kind == "hanta":
        if language not in HANTA_LANGUAGES:
            raise UnsupportedTagger(
                f"no tagger model for {language!r}: the built-in tagger (SoMaJo + HanTa) has English (en) and "
                f"German (de); for {language!r} install spaCy and a pipeline for it and give "
                f"--tagger spacy:MODEL, or give --tagger treetagger:DIR with TreeTagger's parameter file"
            )
        for module in ("somajo", "HanTa"):
            if importlib.util.find_spec(module) is None:
                raise UnsupportedTagger(f"{module} is not installed: install cowbird with the build extra "
                                        f"(pip install 'cowbird[build]')")
    elif kind == "spacy":
        if not arg:
            raise UnsupportedTagger("--tagger spacy:MODEL needs the pipeline's name, e.g. spacy:en_core_web_sm")
        if importlib.util.find_spec("spacy") is None:
            raise UnsupportedTagger(f"--tagger {tagger}: spaCy is not installed (pip install spacy, then the "
                                    f"pipeline package {arg})")
        if importlib.util.find_spec(arg) is None:
            raise UnsupportedTagger(f"--tagger {tagger}: the spaCy pipeline {arg!r} is not installed "
                                    f"(install its package, e.g. python -m spacy download {arg})")
    elif kind == "treetagger":
        if not arg:
            raise UnsupportedTagger("--tagger treetagger:DIR needs TreeTagger's folder (the one holding bin/ "
                                    "and lib/)")
        if importlib.util.find_spec("treetaggerwrapper") is None:
            raise UnsupportedTagger(f"--tagger {tagger}: treetaggerwrapper is not installed "
                                    f"(pip install treetaggerwrapper; TreeTagger itself from its site)")
        if language not in SOMAJO_LANGUAGES:
            raise UnsupportedTagger(f"--tagger {tagger}: tokens come from SoMaJo, which has en and de, "
                                    f"not {language!r}; use --tagger spacy:MODEL for {language!r}")
    else:
        raise UnsupportedTagger(f"unknown tagger {tagger!r}: give hanta, spacy:MODEL or treetagger:DIR")


class Annotator:
    """Tokenise, split into sentences, tag and lemmatise blocks of one language.

    One instance per worker process (loading HanTa's model takes about 0.3 s); :meth:`annotate` is
    deterministic: the same texts give the same tokens, tags and lemmas.
    """

    def __init__(self, language: str, tagger: str = "hanta") -> None:
        check_tagger(language, tagger)
        self.language = language
        self.tagger_name = tagger
        kind, _, arg = tagger.partition(":")
        self._spacy_tokenises = kind == "spacy" and language not in SOMAJO_LANGUAGES
        self._tokenizer: Any = None
        if not self._spacy_tokenises:
            from somajo import SoMaJo

            self._tokenizer = SoMaJo(SOMAJO_LANGUAGES[language], split_camel_case=False, split_sentences=True)
        self._tagger: _PosTagger
        if kind == "hanta":
            self._tagger = _HanTa(language)
        elif kind == "spacy":
            self._tagger = _SpaCy(arg, sentences=self._spacy_tokenises)
        else:
            self._tagger = _TreeTagger(language, arg)

    def tokens(self, text: str) -> list[list[tuple[str, str]]]:
        """One block's sentences as (token text, SoMaJo token class) pairs, the text exactly as SoMaJo gives it."""
        if not text.strip():
            return []
        if self._spacy_tokenises:
            assert isinstance(self._tagger, _SpaCy)
            doc = self._tagger.nlp(text)
            return [[(_clean(t.text), "regular") for t in sent if not t.is_space] for sent in doc.sents]
        out: list[list[tuple[str, str]]] = []
        spaced_before = True
        for sentence in self._tokenizer.tokenize_text([text]):
            pairs: list[tuple[str, str]] = []
            for tok in sentence:
                token_class = tok.token_class
                if tok.text in ("-", "/") and spaced_before and tok.space_after:
                    token_class = "spaced_dash"  # "a - b": a dash between words or clauses, not a hyphen
                pairs.append((_clean(tok.text), token_class))
                spaced_before = tok.space_after
            out.append(pairs)
        return out

    def sentences(self, text: str) -> list[list[str]]:
        """One block's sentences as lists of token texts."""
        return [[word for word, _ in sentence] for sentence in self.tokens(text)]

    def annotate(self, texts: Iterable[str]) -> list[list[list[Token]]]:
        """Per text (block): its sentences, each a list of ``Token(word, pos, lemma)``; an empty text gives [].

        Tokens SoMaJo recognises as a URL, e-mail address, emoticon, hashtag or mention get the
        tagset's tag for them (:data:`CLASS_TAGS`) and themselves as lemma, whatever the tagger says:
        a tagger trained on edited text guesses wildly on them (HanTa made a German URL an ADJA).
        """
        per_text = [self.tokens(text) for text in texts]
        flat = [[word for word, _ in sentence] for sentences in per_text for sentence in sentences if sentence]
        tagged = iter(self._tagger.tag(flat))
        classes = CLASS_TAGS.get(self.language, {}) if self.tagger_name == "hanta" else {}
        out: list[list[list[Token]]] = []
        for sentences in per_text:
            block: list[list[Token]] = []
            for sentence in sentences:
                if not sentence:
                    continue
                pairs = next(tagged)
                tokens: list[Token] = []
                for (word, token_class), (pos, lemma) in zip(sentence, pairs, strict=True):
                    fixed = classes.get(token_class)
                    if fixed is not None:
                        tokens.append(Token(word, fixed, word))
                    else:
                        tokens.append(Token(word, _clean(pos) or "_", _clean(lemma) or word))
                block.append(tokens)
            out.append(block)
        return out


def _clean(value: str) -> str:
    """A token field as VRT holds it: no tab or line break inside (SoMaJo never makes one; spaCy can)."""
    if "\t" in value or "\n" in value or "\r" in value:
        return " ".join(value.split())
    return value
