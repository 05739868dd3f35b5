"""cowbird.build.annotate: SoMaJo tokens and sentences, HanTa part of speech and lemma (Penn for English, STTS
for German), the plug-in taggers' errors, and the languages without a model."""

from __future__ import annotations

import importlib.util
import time

import pytest

from cowbird.build.annotate import (
    C5_TO_PENN,
    Annotator,
    UnsupportedTagger,
    c5_to_penn,
    check_tagger,
    english_lemma,
    german_lemma,
    stts,
)
from cowbird.build.records import Token

PENN = {
    "CC", "CD", "DT", "EX", "FW", "IN", "JJ", "JJR", "JJS", "LS", "MD", "NN", "NNS", "NNP", "NNPS", "PDT", "POS",
    "PRP", "PRP$", "RB", "RBR", "RBS", "RP", "SYM", "TO", "UH", "VB", "VBD", "VBG", "VBN", "VBP", "VBZ", "WDT", "WP",
    "WP$", "WRB", "``", "''", ",", ".", ":", "-LRB-", "-RRB-", "$", "#", "HYPH", "NFP", "ADD", "AFX", "GW",
}
STTS = {
    "ADJA", "ADJD", "ADV", "APPR", "APPRART", "APPO", "APZR", "ART", "CARD", "FM", "ITJ", "KOUI", "KOUS", "KON",
    "KOKOM", "NN", "NE", "PDS", "PDAT", "PIS", "PIAT", "PIDAT", "PPER", "PPOSS", "PPOSAT", "PRELS", "PRELAT", "PRF",
    "PWS", "PWAT", "PWAV", "PROAV", "PTKZU", "PTKNEG", "PTKVZ", "PTKANT", "PTKA", "TRUNC", "VVFIN", "VVIMP",
    "VVINF", "VVIZU", "VVPP", "VAFIN", "VAIMP", "VAINF", "VAPP", "VMFIN", "VMINF", "VMPP", "XY", "$,", "$.", "$(",
}


@pytest.fixture(scope="module")
def english() -> Annotator:
    return Annotator("en")


@pytest.fixture(scope="module")
def german() -> Annotator:
    return Annotator("de")


def triples(sentence: list[Token]) -> list[tuple[str, str, str]]:
    return [(t.word, t.pos, t.lemma) for t in sentence]


def test_english_sentence_in_penn_with_lemmas(english: Annotator) -> None:
    [[sentence]] = english.annotate(["The children played in the garden."])
    assert triples(sentence) == [
        ("The", "DT", "the"), ("children", "NNS", "child"), ("played", "VBD", "play"), ("in", "IN", "in"),
        ("the", "DT", "the"), ("garden", "NN", "garden"), (".", ".", "."),
    ]


def test_german_sentence_in_stts_with_lemmas(german: Annotator) -> None:
    [[sentence]] = german.annotate(["Die Kinder spielten im Garten."])
    assert triples(sentence) == [
        ("Die", "ART", "der"), ("Kinder", "NN", "Kind"), ("spielten", "VVFIN", "spielen"), ("im", "APPRART", "in"),
        ("Garten", "NN", "Garten"), (".", "$.", "."),
    ]


def test_german_verb_forms_and_punctuation(german: Annotator) -> None:
    [sentences] = german.annotate(["Wir haben gestern drei Äpfel gegessen, und er versucht aufzustehen."])
    words = {t.word: t for s in sentences for t in s}
    assert (words["haben"].pos, words["haben"].lemma) == ("VAFIN", "haben")
    assert (words["gegessen"].pos, words["gegessen"].lemma) == ("VVPP", "essen")
    assert (words["Äpfel"].pos, words["Äpfel"].lemma) == ("NN", "Apfel")
    assert words["aufzustehen"].pos == "VVIZU"
    assert words[","].pos == "$,"
    assert all(t.pos in STTS for s in sentences for t in s)


def test_english_auxiliaries_clitics_and_lemmas(english: Annotator) -> None:
    [sentences] = english.annotate(["I didn't see her. She has been working since 9 and they're tired."])
    assert triples(sentences[0]) == [
        ("I", "PRP", "I"), ("did", "VBD", "do"), ("n't", "RB", "not"), ("see", "VB", "see"), ("her", "PRP", "she"),
        (".", ".", "."),
    ]
    second = {t.word: t for t in sentences[1]}
    assert (second["has"].pos, second["has"].lemma) == ("VBZ", "have")
    assert (second["been"].pos, second["been"].lemma) == ("VBN", "be")
    assert (second["working"].pos, second["working"].lemma) == ("VBG", "work")
    assert (second["'re"].pos, second["'re"].lemma) == ("VBP", "be")
    assert second["9"].pos == "CD"
    assert all(t.pos in PENN for s in sentences for t in s)


def test_english_modal_and_to_take_the_base_form(english: Annotator) -> None:
    [[sentence]] = english.annotate(["You can go to Paris if you want to stay."])
    tags = {t.word: t.pos for t in sentence}
    assert tags["can"] == "MD"
    assert tags["go"] == "VB"
    assert tags["want"] == "VBP"
    assert tags["stay"] == "VB"
    assert tags["Paris"] == "NNP"
    assert next(t for t in sentence if t.word == "Paris").lemma == "Paris"  # a proper noun keeps its case


def test_web_tokens_stay_whole_and_get_their_tags(english: Annotator, german: Annotator) -> None:
    text = "Look at https://example.org/a?b=1 or mail bob@example.com :-) #weekend @alice"
    [sentences] = english.annotate([text])
    tokens = {t.word: t for s in sentences for t in s}
    assert tokens["https://example.org/a?b=1"].pos == "ADD"
    assert tokens["https://example.org/a?b=1"].lemma == "https://example.org/a?b=1"
    assert tokens["bob@example.com"].pos == "ADD"
    assert tokens[":-)"].pos == "NFP"
    assert "#weekend" in tokens and "@alice" in tokens
    [de] = german.annotate(["Schau auf https://www.example.de/seite nach :-) #toll"])
    de_tokens = {t.word: t for s in de for t in s}
    assert de_tokens["https://www.example.de/seite"].pos == "XY"
    assert de_tokens["https://www.example.de/seite"].lemma == "https://www.example.de/seite"
    assert de_tokens[":-)"].pos == "XY"
    assert de_tokens["#toll"].pos == "XY"


def test_sentences_split_and_blocks_kept_apart(english: Annotator) -> None:
    blocks = english.annotate(["First sentence here. Second one follows! A third?", "", "   ", "Another block"])
    assert [[[t.word for t in s] for s in block] for block in blocks] == [
        [["First", "sentence", "here", "."], ["Second", "one", "follows", "!"], ["A", "third", "?"]],
        [],
        [],
        [["Another", "block"]],
    ]


def test_token_text_is_kept_as_written(english: Annotator) -> None:
    text = "Don’t use “smart quotes” — or do… (really) 3.5% of $20, ok?"
    [sentences] = english.annotate([text])
    words = [t.word for s in sentences for t in s]
    # tokenising only splits: the characters of the text, without its spaces, in order
    assert "".join(words) == text.replace(" ", "")
    tags = {t.word: t.pos for s in sentences for t in s}
    assert tags["“"] == "``" and tags["”"] == "''"
    assert tags["("] == "-LRB-" and tags[")"] == "-RRB-"
    assert tags["$"] == "$"


def test_same_input_same_output(english: Annotator) -> None:
    texts = ["The dog barked at the postman.", "Colourless green ideas sleep furiously."]
    assert english.annotate(texts) == Annotator("en").annotate(texts)


@pytest.mark.slow
def test_a_block_of_ten_thousand_words(english: Annotator) -> None:
    # one block, no sentence punctuation at all: one very long sentence must still be tagged
    words = ("the quick brown fox jumps over the lazy dog and " * 1000).split()
    start = time.perf_counter()
    [sentences] = english.annotate([" ".join(words)])
    elapsed = time.perf_counter() - start
    tokens = [t for s in sentences for t in s]
    assert [t.word for t in tokens] == words
    assert {t.pos for t in tokens if t.word == "the"} == {"DT"}
    assert elapsed < 60  # not a speed figure (bench/tagging.py has those): it must not hang or blow up


def test_c5_mapping_uses_context() -> None:
    assert c5_to_penn(["I", "want", "to", "go"], ["PNP", "VVB", "TO0", "VVI"]) == ["PRP", "VBP", "TO", "VB"]
    assert c5_to_penn(["Go", "home", "!"], ["VVB", "AV0", "PUN"]) == ["VB", "RB", "."]
    assert c5_to_penn(["all", "the", "people"], ["DT0", "AT0", "NN0"]) == ["PDT", "DT", "NNS"]
    assert c5_to_penn(["it", "was", "stolen"], ["PNP", "VBD", "VVN"]) == ["PRP", "VBD", "VBN"]
    assert c5_to_penn(["he", "walked"], ["PNP", "VVN"]) == ["PRP", "VBD"]
    assert c5_to_penn(['"', "hi", '"'], ["PUQ", "ITJ", "PUQ"]) == ["``", "UH", "''"]
    assert c5_to_penn(["which", "one"], ["DTQ", "PNI"]) == ["WDT", "CD"]
    assert c5_to_penn(["the", "one"], ["AT0", "PNI"]) == ["DT", "NN"]
    assert c5_to_penn(["whose", "car"], ["DTQ", "NN1"]) == ["WP$", "NN"]
    assert c5_to_penn(["wow", "!!!"], ["ITJ", "UNC"]) == ["UH", "."]
    assert set(C5_TO_PENN.values()) <= PENN


def test_lemma_and_stts_helpers() -> None:
    assert english_lemma("Running", "VBG", "run") == "run"
    assert english_lemma("London", "NNP", "london") == "London"
    assert english_lemma("'s", "VBZ", "'s") == "be"
    assert english_lemma("'s", "POS", "'s") == "'s"
    assert english_lemma("n't", "RB", "n't") == "not"
    assert english_lemma("“", "``", "“") == '"'
    assert stts("VV(FIN)") == "VVFIN"
    assert stts("ADJ(A)") == "ADJA"
    assert stts("VA(PP)") == "VAPP"
    assert stts("NNA") == "NN"
    assert stts("$.") == "$."
    assert german_lemma("CDU", "Cdu") == "CDU"
    assert german_lemma("Kinder", "Kind") == "Kind"
    assert german_lemma("Herz-Kreislauf-Probleme", "herz-kreislauf-problem") == "Herz-Kreislauf-Problem"
    assert german_lemma("E-Mails", "e-mail") == "E-Mail"


def test_other_languages_stop_the_build_with_a_reason() -> None:
    with pytest.raises(UnsupportedTagger, match=r"no tagger model for 'fr'.*en.*de.*spacy:MODEL"):
        check_tagger("fr")
    with pytest.raises(UnsupportedTagger, match="no tagger model for 'nl'"):
        Annotator("nl")
    with pytest.raises(UnsupportedTagger, match="unknown tagger 'brill'"):
        check_tagger("en", "brill")
    with pytest.raises(UnsupportedTagger, match="needs the pipeline's name"):
        check_tagger("en", "spacy:")
    with pytest.raises(UnsupportedTagger, match="needs TreeTagger's folder"):
        check_tagger("en", "treetagger:")
    check_tagger("en")
    check_tagger("de", "hanta")


@pytest.mark.skipif(importlib.util.find_spec("spacy") is not None, reason="spaCy is installed here")
def test_spacy_plugin_absent_says_what_to_install() -> None:
    with pytest.raises(UnsupportedTagger, match=r"spaCy is not installed \(pip install spacy"):
        Annotator("en", "spacy:en_core_web_sm")


@pytest.mark.skipif(importlib.util.find_spec("treetaggerwrapper") is not None, reason="treetaggerwrapper is here")
def test_treetagger_plugin_absent_says_what_to_install(tmp_path: object) -> None:
    with pytest.raises(UnsupportedTagger, match=r"treetaggerwrapper is not installed \(pip install treetaggerwrapper"):
        Annotator("de", f"treetagger:{tmp_path}")


def test_the_memo_changes_nothing_and_stays_bounded(english: Annotator) -> None:
    from cowbird.build.annotate import _HanTa

    sentences = [s for block in english.annotate(["Grumpy wizards make toxic brew for the evil queen and jack.",
                                                   "Bright vixens jump; dozy fowl quack. The wizards quickly left."])
                 for s in block]
    words = [[t.word for t in s] for s in sentences]
    tiny = _HanTa("en", memo_limit=3)
    assert tiny.tag(words) == [[(t.pos, t.lemma) for t in s] for s in sentences]
    assert len(tiny._word_memo) <= 3 and len(tiny._lemma_memo) <= 3


def test_a_spaced_dash_is_not_a_hyphen(english: Annotator, german: Annotator) -> None:
    [[sentence]] = english.annotate(["A well-known man - or not - came."])
    assert [(t.word, t.pos) for t in sentence if t.word == "-"] == [("-", "HYPH"), ("-", ","), ("-", ",")]
    [[satz]] = german.annotate(["Ein Herz-Kreislauf-Problem - oder nicht."])
    assert triples(satz)[:3] == [("Ein", "ART", "ein"), ("Herz-Kreislauf-Problem", "NN", "Herz-Kreislauf-Problem"),
                                 ("-", "$(", "-")]


def test_german_punctuation_by_its_character(german: Annotator) -> None:
    [[sentence]] = german.annotate(["Er sagte – wie immer – „nein“ (leider)."])
    tags = {t.word: t.pos for t in sentence}
    assert tags["–"] == "$("
    assert tags["„"] == "$(" and tags["“"] == "$("
    assert tags["("] == "$(" and tags[")"] == "$("
    assert tags["."] == "$."
    assert stts("$(") == "$(" and stts("FM", "–") == "$("


def test_treetagger_plugin_tags_somajo_tokens(monkeypatch: pytest.MonkeyPatch, tmp_path: object) -> None:
    # treetaggerwrapper's interface as it documents it (tag_text of one token a line with tagonly=True,
    # lines "word<TAB>tag<TAB>lemma"), standing in for a TreeTagger installation this machine lacks
    import importlib.machinery
    import sys
    import types

    calls: list[dict[str, object]] = []

    class FakeTreeTagger:
        def __init__(self, **options: object) -> None:
            calls.append(options)

        def tag_text(self, text: str, **options: object) -> list[str]:
            assert options["tagonly"] is True
            return [f"{w}\t{'NE' if w[:1].isupper() else 'ADV'}\t{'<unknown>' if w == 'Xy' else w.lower()}"
                    for w in text.split("\n")]

    module = types.ModuleType("treetaggerwrapper")
    module.__spec__ = importlib.machinery.ModuleSpec("treetaggerwrapper", None)
    module.TreeTagger = FakeTreeTagger  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "treetaggerwrapper", module)
    annotator = Annotator("de", f"treetagger:{tmp_path}")
    assert calls == [{"TAGLANG": "de", "TAGDIR": str(tmp_path), "TAGOPT": "-token -lemma -sgml -quiet"}]
    [[sentence]] = annotator.annotate(["Xy kommt heute"])
    assert triples(sentence) == [("Xy", "NE", "Xy"), ("kommt", "ADV", "kommt"), ("heute", "ADV", "heute")]


def test_a_very_long_token_is_tagged_quickly(english: Annotator, german: Annotator) -> None:
    # HanTa's word analysis grows with the square of the word's length; a 5,000-letter token would
    # take minutes unbounded
    blob = "q" * 5000
    start = time.perf_counter()
    [[en]] = english.annotate([f"I saw {blob} there."])
    [[de]] = german.annotate([f"Ich sah {blob} dort."])
    assert time.perf_counter() - start < 20
    assert (en[2].word, en[2].lemma) == (blob, blob)
    assert (de[2].word, de[2].lemma) == (blob, blob)
