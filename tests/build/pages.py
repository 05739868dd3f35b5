"""Realistic generated web pages for the tests and benches of ``cowbird build`` (deterministic, seeded).

Everything here is driven by a ``random.Random`` the caller seeds, so the same seed gives the same bytes.

Text
    ``sentence(rng, language)``, ``paragraph(rng, language)``: connected English or German text from a
    small grammar (subject, verb, object, prepositional phrases, subordinate clauses; German with case,
    gender and verb-final subordinate clauses) over a few hundred real words per language, chosen with
    Zipfian weights, sentences of 5-30 words. Function words occur about as often as in real text, so
    language identification, texrex's badness and the taggers behave as on real pages.
    ``near_duplicate(text, rng, share)`` changes ``share`` of the words (substitute, insert, delete).

Pages (``-> (html, main_paragraphs)``; ``main_paragraphs`` are the main text's paragraphs exactly as
they appear in the page, whitespace-collapsed, the gold standard a cleaned document must contain)
    ``article``: header with navigation menu, breadcrumbs, cookie banner, headline and byline, the
    paragraphs, sidebar of related articles, newsletter box, comment section, footer with copyright and
    links, ``<script>`` and ``<style>``. ``forum_thread``: posts (the main text) with user names, dates and
    signatures. ``product_listing``: a shop grid (mostly boilerplate, one short intro paragraph at most).
    ``tag_cloud``: links only (no main text).

Bytes
    ``page_bytes(html, charset, declare)`` encodes a page and says its charset in the HTTP header, a
    ``<meta charset>``, a ``<meta http-equiv>``, nowhere, wrongly (``"misdeclared"``: says UTF-8, is
    windows-1252) or by a UTF-8 BOM; returns ``(body, content_type)``.
    ``GenPage`` is one page or payload to archive (status, headers, content encoding, record type);
    ``make_pages(seed, n)`` a standard mix of them; ``pdf_bytes``/``jpeg_bytes``/``garbage_bytes`` and
    ``big_article`` make bad input.

Archives
    ``write_warc(path, pages, gzip=True)``: warcio ``WARCWriter``, a warcinfo record, then per page a
    request and a response (or revisit) record with WARC-Date and HTTP headers Content-Type,
    Last-Modified, Content-Encoding (the payload gzipped when the page says so), Content-Length.
    ``write_arc(path, pages, gzip=False)``: ARC v1 (warcio reads ARC but does not write it; the format is a
    header line per record and the HTTP response, so it is written here). ``html_folder(path, pages)``:
    one ``.html``/``.htm``/``.html.gz`` file per page.
"""

from __future__ import annotations

import gzip as gzip_module
import hashlib
import html as html_module
import io
import random
import struct
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from pathlib import Path
from typing import Any

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

# ---------------------------------------------------------------------------------------------------
# vocabulary

_EN_NOUNS = (  # (singular, plural)
    "person/people time/times year/years way/ways day/days man/men woman/women child/children "
    "world/worlds life/lives hand/hands part/parts place/places case/cases week/weeks company/companies "
    "system/systems program/programs question/questions government/governments number/numbers "
    "night/nights point/points home/homes water/waters room/rooms mother/mothers area/areas money/money "
    "story/stories fact/facts month/months right/rights study/studies book/books job/jobs "
    "word/words business/businesses issue/issues side/sides kind/kinds head/heads house/houses "
    "service/services friend/friends father/fathers power/powers hour/hours game/games line/lines "
    "end/ends member/members law/laws car/cars city/cities community/communities name/names "
    "president/presidents team/teams minute/minutes idea/ideas kid/kids body/bodies information/information "
    "school/schools face/faces level/levels office/offices door/doors health/health "
    "person/persons art/arts war/wars history/histories party/parties result/results change/changes "
    "morning/mornings reason/reasons research/research girl/girls guy/guys moment/moments air/air "
    "teacher/teachers force/forces education/education village/villages river/rivers garden/gardens "
    "road/roads bridge/bridges council/councils report/reports plan/plans project/projects "
    "market/markets price/prices student/students doctor/doctors church/churches music/music "
    "film/films picture/pictures letter/letters street/streets island/islands farmer/farmers "
    "train/trains station/stations museum/museums library/libraries café/cafés winter/winters "
    "summer/summers season/seasons bank/banks visitor/visitors neighbour/neighbours problem/problems"
).split()
_EN_ADJ = (
    "new good old great high small large long young important different local social national "
    "political public early few hard major best better real free strong whole clear late simple "
    "recent open short private special easy difficult common main happy serious popular ready "
    "quiet busy cold warm dark bright green beautiful famous modern ancient narrow wide friendly "
    "careful heavy cheap expensive safe useful natural final full fair"
).split()
_EN_VERBS_T = (  # transitive, past tense
    "found made took gave saw knew told built opened bought visited changed wrote read "
    "followed described showed discussed needed wanted helped started reached lost left kept "
    "brought met watched carried studied supported planned received explained improved closed"
).split()
_EN_VERBS_I = (  # intransitive, past tense
    "arrived stayed worked waited lived grew returned happened moved agreed failed laughed "
    "continued began remained improved"
).split()
_EN_SAY = "said believed thought explained noted argued wrote claimed suggested felt".split()
_EN_PREP = "in to for on with at from by about after before during near under behind without across into".split()
_EN_ADV = (
    "also still often never always already usually finally really perhaps quickly slowly "
    "recently almost nearly simply certainly"
).split()
_EN_TIME = (
    "last week/last year/on Monday/in the morning/after the war/in the summer/at that time/"
    "two years ago/in the end/for a long time/at the weekend/in March/every day"
).split("/")

_DE_NOUNS = (  # gender:singular:dative singular
    "m:Mann m:Tag m:Weg m:Freund m:Vater m:Markt m:Garten m:Platz m:Bericht m:Plan m:Lehrer m:Nachbar "
    "m:Bahnhof m:Fluss m:Winter m:Sommer m:Preis m:Arzt m:Schüler m:Besucher m:Rat m:Verein m:Bürgermeister "
    "m:Abend m:Morgen m:Brief m:Film m:Wald m:Berg m:Zug m:Wagen m:Hund m:Kollege m:Termin m:Vortrag "
    "f:Frau f:Stadt f:Zeit f:Welt f:Arbeit f:Schule f:Familie f:Frage f:Straße f:Kirche f:Regierung "
    "f:Firma f:Woche f:Geschichte f:Brücke f:Mutter f:Lösung f:Idee f:Gemeinde f:Bank f:Insel f:Reise "
    "f:Wohnung f:Nachricht f:Gruppe f:Musik f:Polizei f:Küche f:Ausstellung f:Zeitung f:Bibliothek "
    "f:Entscheidung f:Meinung f:Tür f:Landschaft f:Universität f:Grenze f:Wirtschaft "
    "n:Kind n:Haus n:Jahr n:Land n:Dorf n:Buch n:Problem n:Ergebnis n:Projekt n:Museum n:Wasser "
    "n:Geld n:Leben n:Gespräch n:Fest n:Konzert n:Rathaus n:Gebäude n:Zimmer n:Fenster n:Auto "
    "n:Unternehmen n:Programm n:Wetter n:Theater n:Gesetz n:Jahrhundert n:Spiel n:Wort n:Bild"
).split()
_DE_ADJ = (  # stems; endings added by case
    "neu gut alt groß klein lang jung wichtig ander lokal sozial öffentlich früh schwer stark klar "
    "spät einfach offen kurz privat leicht gemeinsam beliebt ruhig kalt warm dunkel hell grün schön "
    "bekannt modern eng breit freundlich vorsichtig teuer billig sicher nützlich natürlich fair "
    "deutsch erst letzt ganz hoch"
).split()
_DE_VERBS_T = (  # (singular, plural) past tense, transitive with accusative
    "fand/fanden machte/machten nahm/nahmen sah/sahen kannte/kannten baute/bauten öffnete/öffneten "
    "kaufte/kauften besuchte/besuchten änderte/änderten schrieb/schrieben las/lasen brauchte/brauchten "
    "suchte/suchten verlor/verloren hielt/hielten brachte/brachten traf/trafen plante/planten "
    "erhielt/erhielten erklärte/erklärten zeigte/zeigten verließ/verließen unterstützte/unterstützten "
    "beschrieb/beschrieben erreichte/erreichten"
).split()
_DE_VERBS_I = (
    "kam/kamen blieb/blieben arbeitete/arbeiteten wartete/warteten lebte/lebten wuchs/wuchsen "
    "wohnte/wohnten lachte/lachten schlief/schliefen"
).split()
_DE_SAY = "sagte/sagten meinte/meinten glaubte/glaubten erklärte/erklärten schrieb/schrieben fand/fanden".split()
_DE_PREP_DAT = "in mit zu von bei nach aus seit".split()
_DE_PREP_ACC = "für durch ohne gegen um".split()
_DE_ADV = (
    "auch noch oft nie immer schon wieder jetzt dann heute sehr gern vielleicht wirklich kaum "
    "bereits endlich natürlich eigentlich"
).split()
_DE_TIME = (
    "Am Montag/Im Sommer/Letzte Woche/Vor zwei Jahren/Am Abend/Im Winter/Damals/Danach/Am Ende/"
    "Im März/Jeden Tag/Am Wochenende/Zuerst/Später"
).split("/")

_NAMES = {  # first names and places, per language
    "en": "Sarah Tom Emma James Anna David Laura Peter Helen Mark Alice Robert Claire Daniel".split(),
    "de": "Anna Thomas Julia Peter Sabine Michael Laura Stefan Katrin Jürgen Monika Lukas Maria Frank".split(),
}
_PLACES = {
    "en": "London Bristol York Leeds Oxford Cambridge Dublin Manchester Glasgow Cardiff".split(),
    "de": "Berlin Hamburg München Köln Leipzig Dresden Bremen Kassel Bonn Erfurt Münster Würzburg".split(),
}

_DE_ART = {  # definite article by case, gender
    "nom": {"m": "der", "f": "die", "n": "das"},
    "acc": {"m": "den", "f": "die", "n": "das"},
    "dat": {"m": "dem", "f": "der", "n": "dem"},
}
_DE_INDEF = {"nom": {"m": "ein", "f": "eine", "n": "ein"}, "acc": {"m": "einen", "f": "eine", "n": "ein"}}
_DE_INDEF_ADJ = {"nom": {"m": "er", "f": "e", "n": "es"}, "acc": {"m": "en", "f": "e", "n": "es"}}

LANGUAGES = ("en", "de")


def _zipf(rng: random.Random, words: Sequence[str]) -> str:
    """A word of ``words`` with Zipfian weight 1/rank (the list's order is its frequency order)."""
    weights = _ZIPF_CACHE.get(len(words))
    if weights is None:
        weights = [1.0 / (rank + 1) for rank in range(len(words))]
        total = 0.0
        cumulative = []
        for w in weights:
            total += w
            cumulative.append(total)
        weights = cumulative
        _ZIPF_CACHE[len(words)] = weights
    return rng.choices(words, cum_weights=weights, k=1)[0]


_ZIPF_CACHE: dict[int, list[float]] = {}


def _one_of(rng: random.Random, kinds: Sequence[tuple[float, Callable[[], str]]], otherwise: Callable[[], str]) -> str:
    """One roll of ``rng`` picks the first kind whose bound lies above it (bounds ascending), else ``otherwise``;
    the picked one makes the text (drawing from ``rng`` only then)."""
    roll = rng.random()
    return next((make for bound, make in kinds if roll < bound), otherwise)()


def _finished(rng: random.Random, body: str, questions: float) -> str:
    """``body`` as a sentence: capitalised, ending in a question mark (share ``questions``) or a full stop."""
    end = "?" if rng.random() < questions else "."
    return body[0].upper() + body[1:] + end


# ---------------------------------------------------------------------------------------------------
# English grammar


_EN_OBJECT = {"I": "me", "he": "him", "she": "her", "they": "them", "we": "us", "it": "it", "you": "you"}


def _en_np(rng: random.Random, allow_pronoun: bool = True, subject: bool = True) -> tuple[str, bool]:
    """An English noun phrase (a subject's or an object's form) and whether it takes a plural verb."""
    roll = rng.random()
    if allow_pronoun and roll < 0.2:
        pronoun = rng.choice(("I", "I", "he", "she", "they", "we", "it", "you"))
        return (pronoun if subject else _EN_OBJECT[pronoun]), pronoun in ("they", "we", "you")
    if roll < 0.27:
        return rng.choice(_NAMES["en"] + _PLACES["en"]), False
    singular, plural = _zipf(rng, _EN_NOUNS).split("/")
    is_plural = rng.random() < 0.35 and singular != plural
    noun = plural if is_plural else singular
    det_roll = rng.random()
    if is_plural:
        det = rng.choice(("the", "the", "the", "these", "some", "many", "their", "our", "all the", "")).strip()
    elif det_roll < 0.55:
        det = "the"
    elif det_roll < 0.8:
        det = "a"
    else:
        det = rng.choice(("this", "that", "his", "her", "their", "our", "every", "one"))
    words = [det] if det else []
    if rng.random() < 0.35:
        words.append(_zipf(rng, _EN_ADJ))
    words.append(noun)
    if det == "a" and words[1][0] in "aeiou":
        words[0] = "an"
    roll = rng.random()
    if roll < 0.2:
        of_singular, of_plural = _zipf(rng, _EN_NOUNS).split("/")
        words += ["of", "the", of_plural if rng.random() < 0.4 else of_singular]
    elif roll < 0.3:
        other_singular, _ = _zipf(rng, _EN_NOUNS).split("/")
        words += ["and", "the", other_singular]
        is_plural = True
    return " ".join(words), is_plural


def _en_pp(rng: random.Random) -> str:
    return f"{_zipf(rng, _EN_PREP)} {_en_np(rng, allow_pronoun=False)[0]}"


_EN_BASE = ("see", "find", "make", "take", "help", "visit", "change", "build", "keep", "open", "buy", "read")


def _en_clause(rng: random.Random, depth: int = 0) -> str:
    subject, plural = _en_np(rng)
    roll = rng.random()
    parts = [subject]
    if rng.random() < 0.15:
        parts.append(_zipf(rng, _EN_ADV))
    if roll < 0.35:
        parts += [_zipf(rng, _EN_VERBS_T), _en_np(rng, subject=False)[0]]
    elif roll < 0.45:
        parts.append(_zipf(rng, _EN_VERBS_I))
    elif roll < 0.65:
        if subject == "I":
            be = rng.choice(("am", "was"))
        elif plural:
            be = rng.choice(("are", "were"))
        else:
            be = rng.choice(("is", "is", "was"))
        parts += [be, rng.choice(("very", "quite", "not", "rather", "", "")), _zipf(rng, _EN_ADJ)]
    elif roll < 0.75:
        want = rng.choice(("wanted to", "tried to", "had to", "needed to", "decided to", "hoped to"))
        parts += [want, rng.choice(_EN_BASE), _en_np(rng, subject=False)[0]]
    elif roll < 0.87 and depth < 2:
        parts += [_zipf(rng, _EN_SAY), "that", _en_clause(rng, depth + 1)]
    else:
        aux = rng.choice(("would", "could", "will", "can", "might", "did not", "would not"))
        parts += [aux, rng.choice(_EN_BASE), _en_np(rng, subject=False)[0]]
    if rng.random() < 0.5:
        parts.append(_en_pp(rng))
    if rng.random() < 0.15:
        parts.append(_en_pp(rng))
    return " ".join(p for p in parts if p)


def _en_sentence(rng: random.Random) -> str:
    body = _one_of(rng, (
        (0.12, lambda: f"{rng.choice(_EN_TIME)}, {_en_clause(rng)}"),
        (0.22, lambda: f"{rng.choice(('when', 'because', 'although', 'after', 'before', 'if'))} "
               f"{_en_clause(rng, 1)}, {_en_clause(rng, 1)}"),
        (0.38, lambda: f"{_en_clause(rng, 1)} {rng.choice(('and', 'but', 'so', 'while'))} {_en_clause(rng, 1)}"),
        (0.43, lambda: f"it was {_zipf(rng, _EN_ADJ)} that {_en_clause(rng, 1)}"),
        (0.47, lambda: f"there {rng.choice(('was', 'is'))} {_en_np(rng, allow_pronoun=False)[0]} {_en_pp(rng)}"),
        (0.52, lambda: f"{_en_clause(rng, 1)} in order to {rng.choice(_EN_BASE)} {_en_np(rng, subject=False)[0]}"),
    ), lambda: _en_clause(rng))
    return _finished(rng, body, questions=0.03)


# ---------------------------------------------------------------------------------------------------
# German grammar


def _de_adj(stem: str, case: str, gender: str, definite: bool) -> str:
    if definite:
        ending = "e" if case == "nom" or (case == "acc" and gender != "m") else "en"
    else:
        ending = _DE_INDEF_ADJ[case][gender]
    if stem.endswith("el") and ending:
        stem = stem[:-2] + "l"  # dunkel -> dunkle
    if stem == "hoch":
        stem = "hoh"
    return stem + ending


def _de_np(rng: random.Random, case: str, allow_pronoun: bool = True) -> tuple[str, bool]:
    """A German noun phrase in ``case`` (nom, acc, dat) and whether it is plural (pronoun subjects)."""
    roll = rng.random()
    if allow_pronoun and case == "nom" and roll < 0.15:
        pronoun = rng.choice(("ich", "ich", "er", "sie", "wir", "es", "man"))
        return pronoun, pronoun in ("wir",)
    if roll < 0.22:
        return rng.choice(_NAMES["de"] + _PLACES["de"]), False
    gender, noun = _zipf(rng, _DE_NOUNS).split(":")
    if case == "dat" and gender != "f" and noun.endswith(("Kollege",)):
        noun += "n"
    if case == "acc" and noun == "Kollege":
        noun += "n"
    words: list[str] = []
    definite = rng.random() < 0.7 or case == "dat"
    if definite:
        words.append(_DE_ART[case][gender])
    else:
        words.append(_DE_INDEF[case][gender])
    if rng.random() < 0.35:
        words.append(_de_adj(_zipf(rng, _DE_ADJ), case, gender, definite))
    words.append(noun)
    if rng.random() < 0.12:
        g2, n2 = _zipf(rng, _DE_NOUNS).split(":")
        genitive = n2 + ("" if g2 == "f" else ("es" if n2[-1] in "sßzt" else "s"))
        if n2 != noun:
            words += [{"m": "des", "f": "der", "n": "des"}[g2], genitive]
    elif case != "dat" and rng.random() < 0.12:
        g2, n2 = _zipf(rng, _DE_NOUNS).split(":")
        if n2 != noun:
            words += ["und", _DE_ART[case][g2], n2]
            return " ".join(words), True
    return " ".join(words), False


def _de_pp(rng: random.Random) -> str:
    if rng.random() < 0.7:
        prep = _zipf(rng, _DE_PREP_DAT)
        np = _de_np(rng, "dat", allow_pronoun=False)[0]
        if prep == "von" and np.startswith("dem "):
            return "vom " + np[4:]
        if prep == "zu" and np.startswith("dem "):
            return "zum " + np[4:]
        if prep == "zu" and np.startswith("der "):
            return "zur " + np[4:]
        if prep == "in" and np.startswith("dem "):
            return "im " + np[4:]
        return f"{prep} {np}"
    return f"{_zipf(rng, _DE_PREP_ACC)} {_de_np(rng, 'acc', allow_pronoun=False)[0]}"


def _de_verb(entry: str, plural: bool) -> str:
    singular, plural_form = entry.split("/")
    return plural_form if plural else singular


def _de_main(rng: random.Random, depth: int = 0) -> str:
    """A main clause, verb second (subject first, or a fronted time adverbial with inversion)."""
    subject, plural = _de_np(rng, "nom")
    roll = rng.random()
    fronted = rng.choice(_DE_TIME) if rng.random() < 0.2 else ""
    adverb = _zipf(rng, _DE_ADV) if rng.random() < 0.3 else ""
    pp = _de_pp(rng) if rng.random() < 0.45 else ""
    if roll < 0.5:
        verb = _de_verb(_zipf(rng, _DE_VERBS_T), plural)
        negation = "nicht" if rng.random() < 0.15 else ""
        rest = " ".join(p for p in (adverb, _de_np(rng, "acc")[0], negation, pp) if p)
    elif roll < 0.6:
        verb = _de_verb(_zipf(rng, _DE_VERBS_I), plural)
        rest = " ".join(p for p in (adverb, pp) if p)
    elif roll < 0.8:
        if subject == "ich":
            verb = rng.choice(("bin", "war"))
        else:
            verb = rng.choice(("sind", "waren")) if plural else rng.choice(("ist", "ist", "war"))
        rest = " ".join(p for p in (adverb, rng.choice(("sehr", "ziemlich", "nicht", "recht", ""))) if p)
        rest = (rest + " " + _zipf(rng, _DE_ADJ)).strip()
    elif depth < 2:
        verb = _de_verb(_zipf(rng, _DE_SAY), plural)
        rest = f"{adverb}, dass {_de_sub(rng, depth + 1)}".strip(" ")
        if rest.startswith(","):
            rest = rest[1:].strip()
            verb += ","
            rest = rest
    else:
        verb = _de_verb(_zipf(rng, _DE_VERBS_I), plural)
        rest = pp
    if fronted:
        return f"{fronted} {verb} {subject} {rest}".strip()
    return f"{subject} {verb} {rest}".strip()


def _de_sub(rng: random.Random, depth: int) -> str:
    """A subordinate clause, verb final."""
    subject, plural = _de_np(rng, "nom")
    parts = [subject]
    if rng.random() < 0.3:
        parts.append(_zipf(rng, _DE_ADV))
    if rng.random() < 0.6:
        parts.append(_de_np(rng, "acc")[0])
        if rng.random() < 0.3:
            parts.append(_de_pp(rng))
        parts.append(_de_verb(_zipf(rng, _DE_VERBS_T), plural))
    else:
        if rng.random() < 0.5:
            parts.append(_de_pp(rng))
        parts.append(_de_verb(_zipf(rng, _DE_VERBS_I), plural))
    return " ".join(parts)


def _de_sentence(rng: random.Random) -> str:
    body = _one_of(rng, (
        (0.15, lambda: f"{_de_main(rng, 1)}, {rng.choice(('weil', 'als', 'obwohl', 'nachdem', 'bevor', 'wenn'))} "
               f"{_de_sub(rng, 1)}"),
        (0.3, lambda: f"{_de_main(rng, 1)}, {rng.choice(('und', 'aber', 'denn', 'doch'))} {_de_main(rng, 2)}"),
        (0.35, lambda: f"Es gab {_de_np(rng, 'acc', allow_pronoun=False)[0]} {_de_pp(rng)}"),
    ), lambda: _de_main(rng))
    return _finished(rng, body.replace(",,", ",").replace(" ,", ","), questions=0.02)


# ---------------------------------------------------------------------------------------------------
# text


def sentence(rng: random.Random, language: str) -> str:
    """One sentence of connected text in ``language`` ("en" or "de"), 5 to 30 words."""
    make = _en_sentence if language == "en" else _de_sentence
    if language not in LANGUAGES:
        raise ValueError(f"pages.sentence: no grammar for language {language!r} (have {', '.join(LANGUAGES)})")
    for _ in range(50):
        text = make(rng)
        if 5 <= len(text.split()) <= 30:
            return text
    return text


def paragraph(rng: random.Random, language: str, sentences: tuple[int, int] = (3, 7)) -> str:
    """A paragraph of ``sentences`` (inclusive range) sentences."""
    return " ".join(sentence(rng, language) for _ in range(rng.randint(*sentences)))


def title(rng: random.Random, language: str) -> str:
    """A headline: a short noun phrase with a place or a time."""
    if language == "en":
        np = _en_np(rng, allow_pronoun=False)[0]
        text = f"{np} {rng.choice(_EN_PREP)} {rng.choice(_PLACES['en'])}"
    else:
        text = f"{_de_np(rng, 'nom', allow_pronoun=False)[0]} {_de_pp(rng)}"
    return text[0].upper() + text[1:]


def near_duplicate(text: str, rng: random.Random, share: float) -> str:
    """``text`` with ``share`` (0..1) of its words changed: substituted, inserted or deleted at random.

    Replacement words are drawn from the text itself, so the language stays the same.
    """
    words = text.split()
    if not words:
        return text
    changes = max(1, round(share * len(words)))
    pool = list(words)
    for _ in range(changes):
        op = rng.random()
        if op < 0.5 or len(words) < 3:
            position = rng.randrange(len(words))
            options = [w for w in pool if w != words[position]] or pool
            words[position] = rng.choice(options)
        elif op < 0.75:
            words.insert(rng.randrange(len(words) + 1), rng.choice(pool))
        else:
            del words[rng.randrange(len(words))]
    return " ".join(words)


# ---------------------------------------------------------------------------------------------------
# HTML pages

_UI: dict[str, dict[str, Any]] = {  # the page furniture's words per language
    "en": {
        "menu": ["Home", "News", "Politics", "Business", "Culture", "Sport", "Travel", "About us", "Contact"],
        "crumbs": ["Home", "News", "Local"],
        "cookie": "We use cookies to give you the best experience on our website. By continuing to browse "
        "the site you agree to our use of cookies.",
        "accept": "Accept all",
        "settings": "Cookie settings",
        "related": "Related articles",
        "newsletter": "Sign up for our newsletter and never miss a story.",
        "subscribe": "Subscribe",
        "comments": "Comments",
        "reply": "Reply",
        "report": "Report",
        "by": "By",
        "posted": "Posted on",
        "footer": ["Privacy policy", "Terms of use", "Imprint", "Advertise", "Jobs", "Contact"],
        "rights": "All rights reserved.",
        "share": ["Share on Facebook", "Share on Twitter", "Email"],
        "tags": "Tags",
        "forum": "Forum",
        "joined": "Joined",
        "posts": "Posts",
        "quote": "Quote",
        "shop": ["Add to cart", "In stock", "Free delivery", "Compare"],
        "intro": "Our best offers this week",
        "login": "Log in",
        "search": "Search",
        "read_more": "Read more",
    },
    "de": {
        "menu": ["Startseite", "Nachrichten", "Politik", "Wirtschaft", "Kultur", "Sport", "Reisen", "Über uns",
                 "Kontakt"],
        "crumbs": ["Startseite", "Nachrichten", "Lokales"],
        "cookie": "Wir verwenden Cookies, um Ihnen das beste Erlebnis auf unserer Website zu bieten. Wenn Sie "
        "weiter surfen, stimmen Sie der Verwendung von Cookies zu.",
        "accept": "Alle akzeptieren",
        "settings": "Einstellungen",
        "related": "Das könnte Sie auch interessieren",
        "newsletter": "Melden Sie sich für unseren Newsletter an und verpassen Sie keine Nachricht.",
        "subscribe": "Anmelden",
        "comments": "Kommentare",
        "reply": "Antworten",
        "report": "Melden",
        "by": "Von",
        "posted": "Veröffentlicht am",
        "footer": ["Datenschutz", "Nutzungsbedingungen", "Impressum", "Werbung", "Karriere", "Kontakt"],
        "rights": "Alle Rechte vorbehalten.",
        "share": ["Auf Facebook teilen", "Auf Twitter teilen", "E-Mail"],
        "tags": "Schlagwörter",
        "forum": "Forum",
        "joined": "Dabei seit",
        "posts": "Beiträge",
        "quote": "Zitieren",
        "shop": ["In den Warenkorb", "Auf Lager", "Kostenloser Versand", "Vergleichen"],
        "intro": "Unsere besten Angebote dieser Woche",
        "login": "Anmelden",
        "search": "Suche",
        "read_more": "Weiterlesen",
    },
}

_STYLE = (
    "body{font-family:Georgia,serif;margin:0;color:#222}header nav ul{list-style:none;display:flex}"
    ".cookie-banner{position:fixed;bottom:0;background:#333;color:#fff;padding:1em}"
    "aside{float:right;width:30%}footer{font-size:small;border-top:1px solid #ccc}"
)
_SCRIPT = (
    "window.dataLayer = window.dataLayer || [];\n"
    "function gtag(){dataLayer.push(arguments);}\n"
    "gtag('js', new Date()); gtag('config', 'UA-12345-1');\n"
    "document.addEventListener('DOMContentLoaded', function () { var b = document.querySelector('.cookie-banner');"
    " if (b && localStorage.getItem('consent')) { b.remove(); } });"
)


def _e(text: str) -> str:
    return html_module.escape(text, quote=True)


_ASCII = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss", "é": "e", "è": "e", "à": "a"})


def _slug(text: str) -> str:
    """An ASCII URL slug of the first words of ``text``."""
    words = text.lower().translate(_ASCII).split()[:6]
    return "-".join("".join(c for c in w if c.isascii() and c.isalnum()) for w in words)


def _date_text(rng: random.Random, language: str) -> str:
    day = datetime(2015, 1, 1) + timedelta(days=rng.randrange(3000))
    return day.strftime("%d %B %Y") if language == "en" else day.strftime("%d.%m.%Y")


def _head(page_title: str, language: str) -> str:
    return (
        f'<!DOCTYPE html>\n<html lang="{language}">\n<head>\n<title>{_e(page_title)}</title>\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<style>{_STYLE}</style>\n<script>{_SCRIPT}</script>\n</head>\n"
    )


def _header(rng: random.Random, language: str, site: str) -> str:
    ui = _UI[language]
    menu = "".join(f'<li><a href="/{_slug(item)}/">{_e(item)}</a></li>' for item in ui["menu"])
    crumbs = " &raquo; ".join(f'<a href="/{_slug(c)}/">{_e(c)}</a>' for c in ui["crumbs"])
    return (
        f'<header><div class="logo"><a href="/">{_e(site)}</a></div>\n<nav class="main-menu"><ul>{menu}</ul></nav>\n'
        f'<form class="search" action="/search"><input name="q" placeholder="{_e(ui["search"])}">'
        f'<button>{_e(ui["search"])}</button></form> <a class="login" href="/login">{_e(ui["login"])}</a></header>\n'
        f'<div class="breadcrumbs">{crumbs}</div>\n'
        f'<div class="cookie-banner" id="cookie-consent"><p>{_e(ui["cookie"])}</p>'
        f'<button>{_e(ui["accept"])}</button> <a href="/cookies">{_e(ui["settings"])}</a></div>\n'
    )


def _footer(rng: random.Random, language: str, site: str) -> str:
    ui = _UI[language]
    links = " | ".join(f'<a href="/{_slug(x)}">{_e(x)}</a>' for x in ui["footer"])
    year = rng.randint(2015, 2024)
    return (
        f'<footer><div class="links">{links}</div>\n'
        f'<p class="copyright">&copy; {year} {_e(site)}. {_e(ui["rights"])}</p>'
        f'\n<script>(function(){{var s=document.createElement("script");s.src="https://ads.example/t.js";'
        f"document.body.appendChild(s);}})();</script></footer>\n"
    )


def _sidebar(rng: random.Random, language: str) -> str:
    ui = _UI[language]
    related = "".join(
        f'<li><a href="/news/{_slug(t)}.html">{_e(t)}</a></li>' for t in (title(rng, language) for _ in range(5))
    )
    return (
        f'<aside class="sidebar"><h3>{_e(ui["related"])}</h3><ul>{related}</ul>\n'
        f'<div class="newsletter"><p>{_e(ui["newsletter"])}</p><input type="email">'
        f'<button>{_e(ui["subscribe"])}</button></div></aside>\n'
    )


def _comments(rng: random.Random, language: str) -> str:
    ui = _UI[language]
    names = _NAMES[language]
    items = []
    for _ in range(rng.randint(0, 4)):
        text = " ".join(sentence(rng, language) for _ in range(rng.randint(1, 2)))
        items.append(
            f'<li class="comment"><span class="author">{_e(rng.choice(names))}{rng.randint(1, 99)}</span> '
            f'<span class="date">{_e(_date_text(rng, language))}</span><div class="comment-body">{_e(text)}</div>'
            f'<a href="#reply">{_e(ui["reply"])}</a> <a href="#report">{_e(ui["report"])}</a></li>'
        )
    heading = f'<h3>{_e(ui["comments"])} ({len(items)})</h3>'
    return f'<section class="comments">{heading}<ol>{"".join(items)}</ol></section>\n'


def _page(rng: random.Random, language: str, site: str, page_title: str, content: str, sidebar: bool) -> str:
    """A whole page around ``content`` (its ``<main>``): head, header, then (``sidebar``) related articles
    and a newsletter box, footer. Only the sidebar and the footer draw from ``rng``, in that order."""
    aside = _sidebar(rng, language) if sidebar else ""
    return (
        _head(page_title, language) + "<body>\n" + _header(rng, language, site) + content + aside
        + _footer(rng, language, site) + "</body>\n</html>\n"
    )


def article(rng: random.Random, language: str, paragraphs: tuple[int, int] = (4, 9),
            site: str = "The Daily Example") -> tuple[str, list[str]]:
    """A news article page: boilerplate around 4-9 (``paragraphs``) main paragraphs; ``(html, main_paragraphs)``."""
    ui = _UI[language]
    headline = title(rng, language)
    main = [paragraph(rng, language) for _ in range(rng.randint(*paragraphs))]
    names = _NAMES[language]
    body_parts = []
    for i, text in enumerate(main):
        if i == 2 and len(main) > 4:
            body_parts.append(f"<h2>{_e(title(rng, language))}</h2>")
        body_parts.append(f"<p>{_e(text)}</p>")
    share = " ".join(f'<a href="#share">{_e(s)}</a>' for s in ui["share"])
    tags = ", ".join(f'<a href="/tag/{w}">{w}</a>' for w in rng.sample(_EN_ADJ if language == "en" else _DE_ADJ, 4))
    content = (
        f'<main><article><h1>{_e(headline)}</h1>\n<p class="byline">{_e(ui["by"])} {_e(rng.choice(names))} '
        f'{_e(rng.choice(names))}, {_e(ui["posted"])} {_e(_date_text(rng, language))}</p>\n'
        + "\n".join(body_parts)
        + f'\n<div class="share">{share}</div><div class="tags">{_e(ui["tags"])}: {tags}</div></article>\n'
        + _comments(rng, language)
        + "</main>\n"
    )
    return _page(rng, language, site, f"{headline} | {site}", content, sidebar=True), main


def forum_thread(rng: random.Random, language: str, site: str = "Example Forum") -> tuple[str, list[str]]:
    """A forum thread: 2-6 posts (the main text, one or two paragraphs each) with user boxes and signatures."""
    ui = _UI[language]
    names = _NAMES[language]
    topic = title(rng, language)
    main: list[str] = []
    posts = []
    for number in range(rng.randint(2, 6)):
        texts = [paragraph(rng, language, (2, 5)) for _ in range(rng.randint(1, 2))]
        main.extend(texts)
        user = f"{rng.choice(names).lower()}_{rng.randint(10, 999)}"
        posts.append(
            f'<div class="post" id="post{number}"><div class="userbox"><b>{_e(user)}</b><br>'
            f'{_e(ui["joined"])}: {_e(_date_text(rng, language))}<br>{_e(ui["posts"])}: {rng.randint(1, 5000)}</div>'
            f'<div class="postbody">{"".join(f"<p>{_e(t)}</p>" for t in texts)}</div>'
            f'<div class="signature">-- {_e(user)} | {_e(rng.choice(_PLACES[language]))}'
            f'</div><a href="#quote">{_e(ui["quote"])}</a> <a href="#reply">{_e(ui["reply"])}</a></div>\n'
        )
    content = f'<main><h1>{_e(topic)}</h1>\n<div class="thread">\n{"".join(posts)}</div></main>\n'
    return _page(rng, language, site, f"{topic} - {ui['forum']} - {site}", content, sidebar=True), main


def product_listing(rng: random.Random, language: str, site: str = "Example Shop") -> tuple[str, list[str]]:
    """A shop's product grid: nearly all boilerplate; main text is one short intro paragraph or nothing."""
    ui = _UI[language]
    products = []
    for _ in range(rng.randint(8, 20)):
        name = title(rng, language)
        price = f"{rng.randint(3, 400)},{rng.randint(0, 99):02d} €" if language == "de" else \
            f"£{rng.randint(3, 400)}.{rng.randint(0, 99):02d}"
        buttons = " ".join(f"<button>{_e(b)}</button>" for b in ui["shop"][:2])
        products.append(
            f'<li class="product"><img src="/img/{_slug(name)}.jpg" alt="{_e(name)}"><h4>{_e(name)}</h4>'
            f'<span class="price">{_e(price)}</span> <span class="stock">{_e(ui["shop"][2])}</span> {buttons}</li>'
        )
    main: list[str] = []
    intro = ""
    if rng.random() < 0.5:
        text = sentence(rng, language) + " " + sentence(rng, language)
        main.append(text)
        intro = f"<p>{_e(text)}</p>"
    content = f'<main><h1>{_e(ui["intro"])}</h1>{intro}<ul class="grid">{"".join(products)}</ul></main>\n'
    return _page(rng, language, site, f"{ui['intro']} | {site}", content, sidebar=False), main


def tag_cloud(rng: random.Random, language: str, site: str = "Example Blog") -> tuple[str, list[str]]:
    """A tag cloud page: links of varying size, no main text."""
    ui = _UI[language]
    words = _EN_ADJ + [n.split("/")[0] for n in _EN_NOUNS] if language == "en" else \
        _DE_ADJ + [n.split(":")[1] for n in _DE_NOUNS]
    tags = " ".join(
        f'<a href="/tag/{_slug(w)}" style="font-size:{rng.randint(8, 30)}px">{_e(w)}</a>'
        for w in rng.sample(words, 80)
    )
    content = f'<main><h1>{_e(ui["tags"])}</h1><div class="tagcloud">{tags}</div></main>\n'
    return _page(rng, language, site, f"{ui['tags']} | {site}", content, sidebar=False), []


def big_article(rng: random.Random, language: str, size: int) -> tuple[str, list[str]]:
    """An article page of at least ``size`` characters (for the page-size limit): paragraphs until it is."""
    html, main = article(rng, language)
    extra: list[str] = []
    total = len(html)
    while total < size:
        text = paragraph(rng, language, (5, 10))
        extra.append(f"<p>{_e(text)}</p>\n")
        main.append(text)
        total += len(text) + 8
    cut = html.index("<div class=\"share\">")
    return html[:cut] + "".join(extra) + html[cut:], main


# ---------------------------------------------------------------------------------------------------
# bytes


CHARSET_DECLARATIONS = ("header", "meta", "http-equiv", "none", "misdeclared", "bom")


def page_bytes(html: str, charset: str = "utf-8", declare: str = "header") -> tuple[bytes, str | None]:
    """Encode ``html`` in ``charset`` and declare it as ``declare`` says; returns ``(body, content_type)``.

    ``declare``: "header" (Content-Type: text/html; charset=X), "meta" (``<meta charset=X>``),
    "http-equiv" (``<meta http-equiv="Content-Type" ...>``), "none" (declared nowhere: browsers detect),
    "misdeclared" (the header says UTF-8, the bytes are ``charset``, e.g. windows-1252), "bom" (UTF-8 with
    a byte order mark, header without charset). ISO-8859-1 is written as windows-1252, as browsers read it.
    """
    codec = "cp1252" if charset.lower() in ("iso-8859-1", "latin-1", "latin1", "windows-1252", "cp1252") else charset
    content_type: str | None = "text/html"
    if declare == "header":
        content_type = f"text/html; charset={charset}"
    elif declare == "meta":
        html = html.replace("<head>\n", f'<head>\n<meta charset="{charset}">\n', 1)
    elif declare == "http-equiv":
        html = html.replace(
            "<head>\n", f'<head>\n<meta http-equiv="Content-Type" content="text/html; charset={charset}">\n', 1
        )
    elif declare == "misdeclared":
        content_type = "text/html; charset=utf-8"
        if codec.lower().replace("-", "") in ("utf8",):
            codec = "cp1252"
    elif declare == "bom":
        return b"\xef\xbb\xbf" + html.encode("utf-8"), content_type
    elif declare != "none":
        raise ValueError(f"page_bytes: declare must be one of {', '.join(CHARSET_DECLARATIONS)}, not {declare!r}")
    return html.encode(codec), content_type


def pdf_bytes(rng: random.Random) -> bytes:
    """A small but well-formed PDF with one page of text."""
    text = f"Report {rng.randint(1, 9999)}"
    stream = f"BT /F1 24 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length " + str(len(stream)).encode() + b" >>\nstream\n" + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(f"{number} 0 obj\n".encode() + body + b"\nendobj\n")
    xref = out.tell()
    out.write(f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode())
    for offset in offsets:
        out.write(f"{offset:010d} 00000 n \n".encode())
    out.write(f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode())
    return out.getvalue()


def jpeg_bytes(rng: random.Random, size: int = 4000) -> bytes:
    """JPEG-like bytes: SOI, a JFIF APP0 segment, random entropy-coded data, EOI (what a crawler stores)."""
    app0 = b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    return (b"\xff\xd8\xff\xe0" + struct.pack(">H", len(app0) + 2) + app0
            + bytes(rng.getrandbits(8) for _ in range(size)) + b"\xff\xd9")


def garbage_bytes(rng: random.Random, size: int = 20000) -> bytes:
    """Random bytes (binary garbage, e.g. a served archive labelled text/html)."""
    return bytes(rng.getrandbits(8) for _ in range(size))


# ---------------------------------------------------------------------------------------------------
# pages to archive


@dataclass
class GenPage:
    """One record to archive: a generated page (``main_paragraphs`` its gold text) or any other payload.

    ``body`` None: the body is ``html`` encoded by ``page_bytes(html, charset, declare)``; otherwise the raw
    payload as given (``content_type`` as given, too). ``content_encoding`` "gzip" gzips the payload in the
    archive and sends ``Content-Encoding: gzip``. ``record_type`` "response" or "revisit" (a revisit has
    no payload). ``record_id`` fixes the WARC-Record-ID (for duplicate-id tests).
    """

    url: str
    html: str = ""
    main_paragraphs: list[str] = field(default_factory=list)
    language: str = "en"
    kind: str = "article"
    charset: str = "utf-8"
    declare: str = "header"
    status: int = 200
    content_type: str | None = "text/html"
    content_encoding: str | None = None
    last_modified: str | None = None  # HTTP-date, e.g. "Sun, 24 Dec 2023 10:00:00 GMT"
    date: str = "2024-03-01T12:00:00Z"  # WARC-Date
    body: bytes | None = None
    record_type: str = "response"
    record_id: str | None = None
    extra_headers: list[tuple[str, str]] = field(default_factory=list)

    def payload(self) -> tuple[bytes, str | None]:
        """The HTTP body (before any content encoding) and the Content-Type header."""
        if self.body is not None:
            return self.body, self.content_type
        body, content_type = page_bytes(self.html, self.charset, self.declare)
        return body, content_type


_HOSTS = (
    "www.example.org", "news.example.com", "blog.beispiel.de", "www.zeitung-beispiel.de", "forum.example.net",
    "www.example.co.uk", "shop.beispiel.at", "www.musterstadt.de", "www.localnews.example.uk",
    "magazin.beispiel.ch",
)
_KINDS = (("article", 0.7), ("forum", 0.15), ("listing", 0.1), ("tags", 0.05))
_MAKERS: dict[str, Callable[[random.Random, str], tuple[str, list[str]]]] = {
    "article": article, "forum": forum_thread, "listing": product_listing, "tags": tag_cloud}


def _http_date(moment: datetime) -> str:
    return format_datetime(moment.replace(tzinfo=UTC), usegmt=True)


def make_page(rng: random.Random, number: int, language: str | None = None, kind: str | None = None,
              charset_mix: bool = True) -> GenPage:
    """One generated page: language en/de at random (or as given), kind by the standard weights, a charset
    and declaration (mostly UTF-8 in the header, some windows-1252, meta, none, BOM), some gzip-encoded."""
    language = language or rng.choice(LANGUAGES)
    kind = kind or rng.choices([k for k, _ in _KINDS], weights=[w for _, w in _KINDS], k=1)[0]
    html, main = _MAKERS[kind](rng, language)
    host = rng.choice(_HOSTS)
    url = f"https://{host}/{kind}/{number:07d}/{_slug(main[0] if main else kind)}.html"
    charset, declare = "utf-8", "header"
    if charset_mix:
        roll = rng.random()
        if roll < 0.12:
            charset, declare = "windows-1252", rng.choice(("header", "meta", "http-equiv"))
        elif roll < 0.17:
            charset, declare = "iso-8859-1", "header"
        elif roll < 0.27:
            declare = "meta"
        elif roll < 0.32:
            declare = "bom"
        elif roll < 0.37:
            declare = "none"
    crawl = datetime(2024, 3, 1, 12) + timedelta(seconds=number * 37)
    modified = crawl - timedelta(days=rng.randrange(1, 2000), seconds=rng.randrange(86400))
    return GenPage(
        url=url, html=html, main_paragraphs=main, language=language, kind=kind, charset=charset, declare=declare,
        content_encoding="gzip" if rng.random() < 0.25 else None,
        last_modified=_http_date(modified) if rng.random() < 0.7 else None,
        date=crawl.strftime("%Y-%m-%dT%H:%M:%SZ"),
    )


def make_pages(seed: int, n: int, languages: Sequence[str] = LANGUAGES, start: int = 0,
               charset_mix: bool = True) -> list[GenPage]:
    """``n`` pages from ``seed`` (numbers ``start``.. in their URLs, so several files' URLs do not clash)."""
    rng = random.Random(seed)
    return [make_page(rng, start + i, rng.choice(list(languages)), charset_mix=charset_mix) for i in range(n)]


_REASONS = {200: "OK", 301: "Moved Permanently", 302: "Found", 404: "Not Found", 500: "Internal Server Error"}


def _http_headers(page: GenPage, body: bytes, content_type: str | None) -> StatusAndHeaders:
    headers: list[tuple[str, str]] = [("Date", _http_date(datetime.strptime(page.date, "%Y-%m-%dT%H:%M:%SZ"))),
                                      ("Server", "nginx")]
    if content_type is not None:
        headers.append(("Content-Type", content_type))
    if page.last_modified:
        headers.append(("Last-Modified", page.last_modified))
    if page.content_encoding:
        headers.append(("Content-Encoding", page.content_encoding))
    if page.status in (301, 302):
        headers.append(("Location", page.url.rsplit("/", 1)[0] + "/moved.html"))
    headers.extend(page.extra_headers)
    headers.append(("Content-Length", str(len(body))))
    status = f"{page.status} {_REASONS.get(page.status, 'Status')}"
    return StatusAndHeaders(status, headers, protocol="HTTP/1.1")


def _encoded_payload(page: GenPage) -> tuple[bytes, str | None]:
    body, content_type = page.payload()
    if page.content_encoding == "gzip":
        body = gzip_module.compress(body, compresslevel=6, mtime=0)
    elif page.content_encoding == "deflate":
        body = zlib.compress(body)
    return body, content_type


def write_warc(path: Path, pages: Iterable[GenPage], gzip: bool = True, warcinfo: bool = True) -> Path:
    """Write ``pages`` as a WARC/1.0 file (gzip per record if ``gzip``): warcinfo, then request+response each.

    Deterministic: record ids are derived from the URL and position unless a page fixes its own.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as out:
        writer = WARCWriter(out, gzip=gzip)
        if warcinfo:
            fields = {"software": "cowbird tests pages.py", "format": "WARC/1.0"}
            info = writer.create_warcinfo_record(path.name, fields)
            info.rec_headers.replace_header("WARC-Date", "2024-03-01T00:00:00Z")
            info.rec_headers.replace_header("WARC-Record-ID", _record_id(path.name, -1, "info"))
            writer.write_record(info)
        for number, page in enumerate(pages):
            request = (f"GET /{page.url.split('/', 3)[-1]} HTTP/1.1\r\nHost: {page.url.split('/')[2]}\r\n"
                       "User-Agent: cowbird-test-crawler/1.0\r\nAccept: text/html\r\n\r\n").encode()
            req = writer.create_warc_record(
                page.url, "request", payload=io.BytesIO(request), length=len(request),
                warc_content_type="application/http; msgtype=request",
                warc_headers_dict={"WARC-Date": page.date, "WARC-Record-ID": _record_id(page.url, number, "req")},
            )
            body, content_type = _encoded_payload(page)
            headers = {"WARC-Date": page.date,
                       "WARC-Record-ID": page.record_id or _record_id(page.url, number, "resp")}
            if page.record_type == "revisit":
                digest = "sha1:" + _base32_sha1(body)
                record = writer.create_revisit_record(
                    page.url, digest, page.url, page.date,
                    http_headers=_http_headers(page, b"", content_type), warc_headers_dict=headers,
                )
            else:
                record = writer.create_warc_record(
                    page.url, "response", payload=io.BytesIO(body), length=len(body),
                    http_headers=_http_headers(page, body, content_type), warc_headers_dict=headers,
                )
            writer.write_record(req)
            writer.write_record(record)
    return path


def _record_id(url: str, number: int, kind: str) -> str:
    digest = hashlib.sha1(f"{url}|{number}|{kind}".encode()).hexdigest()
    return f"<urn:uuid:{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}>"


def _base32_sha1(data: bytes) -> str:
    import base64

    return base64.b32encode(hashlib.sha1(data).digest()).decode()


def write_arc(path: Path, pages: Iterable[GenPage], gzip: bool = False) -> Path:
    """Write ``pages`` as an ARC v1 file (``gzip``: each record its own gzip member, as ``.arc.gz``).

    A record is the line ``URL IP-address Archive-date Content-type Archive-length`` then that many bytes
    of the HTTP response; the file starts with the ``filedesc://`` version block.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)

    def member(data: bytes) -> bytes:
        return gzip_module.compress(data, mtime=0) if gzip else data

    version = b"1 0 cowbird-tests\nURL IP-address Archive-date Content-type Archive-length\n"
    with path.open("wb") as out:
        out.write(member(f"filedesc://{path.name} 0.0.0.0 20240301000000 text/plain {len(version)}\n".encode()
                         + version + b"\n"))
        for page in pages:
            body, content_type = _encoded_payload(page)
            http = _http_headers(page, body, content_type).to_bytes() + body
            stamp = page.date.replace("-", "").replace(":", "").replace("T", "").replace("Z", "")[:14]
            mime = (content_type or "unknown").split(";")[0].strip() or "unknown"
            out.write(member(f"{page.url} 192.0.2.1 {stamp} {mime} {len(http)}\n".encode() + http + b"\n"))
    return path


def html_folder(path: Path, pages: Iterable[GenPage], gzip_every: int = 5) -> list[Path]:
    """Write each page's bytes to ``path`` as ``NNNNN.html`` (every 3rd ``.htm``, every ``gzip_every``-th
    ``.html.gz``); a charset the page declared in the HTTP header goes into a ``<meta charset>`` instead
    (a file has no header). Returns the files written, in page order."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    written = []
    for number, page in enumerate(pages):
        if page.body is not None:
            body = page.body
        else:
            declare = "meta" if page.declare in ("header", "misdeclared") else page.declare
            body, _ = page_bytes(page.html, page.charset, declare)
        if gzip_every and number % gzip_every == gzip_every - 1:
            target = path / f"{number:05d}.html.gz"
            target.write_bytes(gzip_module.compress(body, mtime=0))
        else:
            target = path / f"{number:05d}.{'htm' if number % 3 == 2 else 'html'}"
            target.write_bytes(body)
        written.append(target)
    return written
