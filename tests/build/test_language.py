"""cowbird.build.language: the language of a document and texrex's badness (connected-text quality)."""

from __future__ import annotations

import pytest

from cowbird.build.language import BADNESS_LIMIT, PROFILES, UNKNOWN, badness, identify, words

ARTICLE_EN = (
    "The town council decided on Tuesday evening to postpone the renovation of the primary school by a year. "
    "The mayor said that rising construction costs would put more strain on the budget than had been planned, "
    "and parents who attended the meeting were disappointed by the decision. In a statement, the head teacher "
    "wrote that the building had been in need of repair for more than a decade and that the classrooms on the "
    "second floor were too cold to use in the winter. The council is expected to look at the plans again in "
    "the spring, when the results of a new tender for the work are known. Until then, the children of two "
    "classes will be taught in a portable building in the playground, which the parents say is too small for "
    "the number of pupils. I asked the mayor whether the school would be the first project to be built once "
    "the money is there, and he said that it is at the top of the list."
)
ARTICLE_DE = (
    "Der Gemeinderat hat am Dienstagabend beschlossen, die Sanierung der Grundschule um ein Jahr zu verschieben. "
    "Als Grund nannte der Bürgermeister die gestiegenen Baukosten, die den Haushalt der Gemeinde stärker "
    "belasten würden als ursprünglich geplant. Die Eltern, die an der Sitzung teilnahmen, reagierten "
    "enttäuscht. In einer Stellungnahme schrieb die Schulleiterin, das Gebäude sei seit mehr als zehn Jahren "
    "sanierungsbedürftig und die Klassenzimmer im zweiten Stock seien im Winter zu kalt, um darin zu "
    "unterrichten. Der Rat will die Pläne im Frühjahr erneut beraten, wenn das Ergebnis einer neuen "
    "Ausschreibung vorliegt. Bis dahin werden die Kinder von zwei Klassen in einem Container auf dem Schulhof "
    "unterrichtet, der nach Ansicht der Eltern für die Zahl der Schüler zu klein ist. Ich habe den "
    "Bürgermeister gefragt, ob die Schule das erste Projekt sein wird, wenn das Geld da ist, und er sagte, "
    "dass sie ganz oben auf der Liste steht, aber nicht vor dem Sommer begonnen werden kann."
)
NOT_CONNECTED = {
    "product names": "Samsung Galaxy S24 Ultra 256 GB Titanium Black Apple iPhone 15 Pro Max Google Pixel 8 Pro "
    "Xiaomi 14 Ultra OnePlus 12 Sony Xperia 1 V Motorola Edge 40 Nothing Phone 2 Fairphone 5 Honor Magic 6 Pro",
    "tag cloud": "Urlaub Reisen Strand Meer Sonne Hotel Flug Angebote Last Minute Pauschalreise Mallorca Kreta "
    "Türkei Ägypten Kanaren Wellness Familienurlaub Kinder Animation Städtereise Berlin Hamburg München Wien",
    "table of numbers": "2019 12.4 15.1 17.9 2020 11.8 14.2 18.3 2021 13.0 16.6 19.4 2022 12.9 15.8 18.7 "
    "Umsatz Gewinn Kosten Mio. EUR Umsatz Gewinn Kosten Mio. EUR",
    "navigation": "Home About us Products Services Contact Login Register Cart Checkout FAQ Privacy policy Terms "
    "Sitemap Careers Press Blog Newsletter Support Downloads",
    "keyword spam": "cheap flights cheap hotels best price cheap flights london cheap flights paris cheap car "
    "hire best deals cheap holidays last minute deals cheap flights cheap hotels",
}


def test_identify_names_the_language_of_an_article() -> None:
    assert identify(ARTICLE_EN)[0] == "en"
    assert identify(ARTICLE_DE)[0] == "de"
    assert identify(ARTICLE_EN)[1] > 0.99
    assert identify("Le conseil municipal a décidé mardi soir de repousser d'un an la rénovation de l'école "
                    "primaire, car les coûts de construction ont augmenté.")[0] == "fr"
    assert identify("De gemeenteraad heeft dinsdagavond besloten de renovatie van de basisschool een jaar uit "
                    "te stellen, omdat de bouwkosten zijn gestegen.")[0] == "nl"


def test_identify_says_unknown_without_letters_or_when_unsure() -> None:
    assert identify("") == (UNKNOWN, 0.0)
    assert identify("1234 5678 -- 99.5 % ### 2024-03-01") == (UNKNOWN, 0.0)
    language, confidence = identify(NOT_CONNECTED["product names"])
    assert language == UNKNOWN
    assert 0.0 < confidence < 0.5


def test_identify_reads_only_the_start_of_a_huge_page() -> None:
    assert identify(ARTICLE_DE * 5_000)[0] == "de"  # ~6 MB: cut to 20,000 characters


def test_words_are_runs_of_letters_casefolded() -> None:
    assert words("The cat's 3 toys—AND Straße, l'école") == ["the", "cat", "s", "toys", "and", "strasse", "l",
                                                            "école"]


def test_badness_of_connected_prose_is_low() -> None:
    assert badness(ARTICLE_EN, "en") == pytest.approx(1.399, abs=0.001)
    score_de = badness(ARTICLE_DE, "de")
    assert score_de is not None and score_de < 6


@pytest.mark.parametrize("kind", sorted(NOT_CONNECTED))
def test_badness_of_lists_tables_and_spam_is_above_the_limit(kind: str) -> None:
    for language in ("en", "de"):
        score = badness(NOT_CONNECTED[kind], language)
        assert score is not None and score > BADNESS_LIMIT + 3, (kind, language, score)


def test_badness_of_another_language_is_above_the_limit() -> None:
    en_as_de = badness(ARTICLE_EN, "de")
    de_as_en = badness(ARTICLE_DE, "en")
    assert en_as_de is not None and en_as_de > BADNESS_LIMIT
    assert de_as_en is not None and de_as_en > BADNESS_LIMIT


def test_badness_is_the_sum_of_standardised_shortfalls() -> None:
    # "the" twice in ten words: f = 0.2 > mu, adds nothing; every other English profile word is missing
    text = "the cat sat the mat dog ran far away home"
    expected = sum(mu / sigma for word, mu, sigma in PROFILES["en"] if word != "the")
    assert badness(text, "en") == pytest.approx(expected, abs=0.001)
    assert badness("", "en") == pytest.approx(sum(mu / sigma for _, mu, sigma in PROFILES["en"]), abs=0.001)
    assert badness("", "en") == pytest.approx(19.0)


def test_badness_has_profiles_for_six_languages_and_none_otherwise() -> None:
    assert sorted(PROFILES) == ["de", "en", "es", "fr", "it", "nl"]
    assert all(len(profile) == 10 for profile in PROFILES.values())
    assert badness(ARTICLE_EN, "fi") is None
    assert badness(ARTICLE_EN, UNKNOWN) is None
